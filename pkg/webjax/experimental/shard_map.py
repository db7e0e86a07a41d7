"""webjax.experimental.shard_map: the older spelling of `jax.shard_map`."""

from webjax._src.shard_map import experimental_shard_map as shard_map

__all__ = ["shard_map"]
