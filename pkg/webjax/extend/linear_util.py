"""webjax.extend.linear_util: wrapped functions and their transformations
(`jax.extend.linear_util`)."""

from collections.abc import Callable

from webjax._src.linear_util import (
    StoreException,
    WrappedFun,
    cache,
    merge_linear_aux,
    transformation,
    transformation2,
    transformation_with_aux,
    transformation_with_aux2,
    wrap_init,
)

__all__ = [
    "Callable", "StoreException", "WrappedFun", "cache", "merge_linear_aux", "transformation",
    "transformation2", "transformation_with_aux", "transformation_with_aux2", "wrap_init",
]  # fmt: skip
