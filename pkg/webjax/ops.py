"""webjax.ops: `jax.ops` (segment reductions)."""

from webjax._src.ops import segment_max, segment_min, segment_prod, segment_sum

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
