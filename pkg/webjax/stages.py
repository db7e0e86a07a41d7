"""webjax.stages: the stages of a jitted function (`jax.stages`)."""

from webjax._src.stages import ArgInfo, Compiled, Lowered, Traced, Wrapped

__all__ = ["ArgInfo", "Compiled", "Lowered", "Traced", "Wrapped"]
