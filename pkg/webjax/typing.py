"""webjax.typing: `jax.typing` (ArrayLike, DTypeLike; Array for convenience)."""

from webjax._src.typing import Array, ArrayLike, DTypeLike

__all__ = ["Array", "ArrayLike", "DTypeLike"]
