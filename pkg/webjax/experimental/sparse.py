"""webjax.experimental.sparse: `jax.experimental.sparse` (BCOO)."""

from webjax._src.experimental.sparse.bcoo import (
    BCOO,
    bcoo_dot_dense,
    bcoo_fromdense,
    bcoo_reduce_sum,
    bcoo_todense,
    bcoo_transpose,
)

__all__ = [
    "BCOO",
    "bcoo_dot_dense",
    "bcoo_fromdense",
    "bcoo_reduce_sum",
    "bcoo_todense",
    "bcoo_transpose",
]
