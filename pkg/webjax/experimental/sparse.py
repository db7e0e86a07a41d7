"""webjax.experimental.sparse: `jax.experimental.sparse` (BCOO)."""

from webjax._src.experimental.sparse.ad import grad, jacfwd, jacobian, jacrev, value_and_grad
from webjax._src.experimental.sparse.bcoo import (
    BCOO,
    bcoo_dot_general,
    bcoo_extract,
    bcoo_fromdense,
    bcoo_reduce_sum,
    bcoo_todense,
    bcoo_transpose,
)
from webjax._src.experimental.sparse.bcoo_layout import (
    SparseEfficiencyError,
    SparseEfficiencyWarning,
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_sort_indices,
    bcoo_squeeze,
    bcoo_sum_duplicates,
    bcoo_update_layout,
    empty,
    eye,
)
from webjax._src.experimental.sparse.transform import (
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
    sparsify,
    todense,
)

__all__ = [
    "BCOO",
    "SparseEfficiencyError",
    "SparseEfficiencyWarning",
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_dot_general",
    "bcoo_extract",
    "bcoo_fromdense",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
    "bcoo_sort_indices",
    "bcoo_squeeze",
    "bcoo_sum_duplicates",
    "bcoo_todense",
    "bcoo_transpose",
    "bcoo_update_layout",
    "empty",
    "eye",
    "grad",
    "jacfwd",
    "jacobian",
    "jacrev",
    "sparsify",
    "todense",
    "value_and_grad",
]
