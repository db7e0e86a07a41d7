"""BCOO: a sparse array as (data, indices), data[k] stored at position indices[k], a pytree of
two dense arrays so jit, grad (with respect to data) and vmap (of functions closing over it)
work through it, as JAX's BCOO. Products with dense arrays are gathers of the dense operand and
scatter-adds of the products (`.at[].add`), so their derivatives are the ones jnp gives.

Only unbatched, all-sparse layouts (n_batch = n_dense = 0): the other layouts raise
NotImplementedError. Padding entries (past the true nonzeros, from `nse=`) hold zero data at
out-of-range indices (the shape itself), which todense and products drop.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from ... import core, dtypes
from ... import numpy as jnp
from ...numpy import util
from ...tree_util import register_pytree_node


class BCOO:
    """A sparse array in batched-coordinate format (unbatched: data (nse,), indices
    (nse, ndim))."""

    __array_priority__ = 1000

    def __init__(
        self,
        args: tuple[Any, Any],
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        data, indices = args
        self.data = jnp.asarray(data)
        self.indices = jnp.asarray(indices)
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        if self.indices.ndim != 2 or self.indices.shape[-1] != len(self.shape):
            raise NotImplementedError(
                "BCOO: only unbatched, all-sparse layouts (indices of shape (nse, ndim))"
            )

    # ---- attributes
    @property
    def dtype(self) -> Any:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nse(self) -> int:
        return int(self.indices.shape[0])

    @property
    def n_batch(self) -> int:
        return 0

    @property
    def n_dense(self) -> int:
        return 0

    @property
    def n_sparse(self) -> int:
        return self.ndim

    def __repr__(self) -> str:
        dims = ", ".join(map(str, self.shape))
        return f"BCOO({self.dtype.name}[{dims}], nse={self.nse})"

    # ---- conversions
    @classmethod
    def fromdense(
        cls,
        mat: Any,
        *,
        nse: int | None = None,
        index_dtype: Any = dtypes.int32,
        n_dense: int = 0,
        n_batch: int = 0,
    ) -> BCOO:
        return bcoo_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    def todense(self) -> Any:
        return bcoo_todense(self)

    # ---- structure
    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        return bcoo_transpose(
            self, permutation=tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        )

    @property
    def T(self) -> BCOO:
        return self.transpose()

    def sum(self, axis: Any = None) -> Any:
        axes = tuple(range(self.ndim)) if axis is None else util.canonical_axes(axis, self.ndim)
        out = bcoo_reduce_sum(self, axes=axes)
        return out.todense() if out.ndim == 0 else out  # a full sum is a dense scalar, as JAX

    # ---- arithmetic
    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            return NotImplemented
        return bcoo_dot_dense(self, jnp.asarray(other))

    def __rmatmul__(self, other: Any) -> Any:
        other = jnp.asarray(other)
        # x @ S = (S^T @ x^T)^T
        if other.ndim == 1:
            return bcoo_dot_dense(self.T, other)
        return jnp.swapaxes(bcoo_dot_dense(self.T, jnp.swapaxes(other, -1, -2)), -1, -2)

    def __neg__(self) -> BCOO:
        return BCOO((-self.data, self.indices), shape=self.shape)

    def __mul__(self, other: Any) -> BCOO:
        if jnp.ndim(other) != 0:
            raise NotImplementedError("BCOO * array: only scalar multiples")
        return BCOO((self.data * other, self.indices), shape=self.shape)

    __rmul__ = __mul__


def _flatten(x: BCOO) -> tuple[tuple[Any, Any], tuple[Any, ...]]:
    return (x.data, x.indices), (x.shape, x.indices_sorted, x.unique_indices)


def _unflatten(aux: tuple[Any, ...], children: Any) -> BCOO:
    out = object.__new__(BCOO)
    out.data, out.indices = children
    out.shape, out.indices_sorted, out.unique_indices = aux
    return out


register_pytree_node(BCOO, _flatten, _unflatten)


def bcoo_fromdense(
    mat: Any,
    *,
    nse: int | None = None,
    n_batch: int = 0,
    n_dense: int = 0,
    index_dtype: Any = dtypes.int32,
) -> BCOO:
    """The BCOO of a dense array: its nonzeros in row-major order; with `nse` larger than the
    count, padding entries of zero data at index `shape`."""
    if n_batch or n_dense:
        raise NotImplementedError("bcoo_fromdense: n_batch and n_dense other than 0")
    mat = jnp.asarray(mat)
    if nse is None:
        nz = util.concrete_array(jnp.count_nonzero(mat), "The nse argument of bcoo_fromdense")
        nse = int(nz)
    nse = core.concrete_or_error(operator.index, nse, "The nse argument of bcoo_fromdense")
    shape = mat.shape
    if not shape:
        raise NotImplementedError("bcoo_fromdense of a 0-d array")
    idx = jnp.nonzero(mat, size=nse, fill_value=0)
    real = jnp.arange(nse) < jnp.count_nonzero(mat)
    data = jnp.where(real, mat[idx], 0)
    indices = jnp.stack(
        [jnp.where(real, i, d).astype(index_dtype) for i, d in zip(idx, shape, strict=True)],
        axis=-1,
    )
    return BCOO(
        (data.astype(mat.dtype), indices), shape=shape, indices_sorted=True, unique_indices=True
    )


def bcoo_todense(mat: BCOO) -> Any:
    """The dense array: data scattered (added: duplicates sum) at the indices."""
    out = jnp.zeros(mat.shape, mat.dtype)
    if mat.ndim == 0:  # every entry lands on the one element (padding holds zero data)
        return out + mat.data.sum()
    return out.at[tuple(mat.indices[:, i] for i in range(mat.ndim))].add(mat.data, mode="drop")


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    perm = tuple(int(p) for p in permutation)
    if sorted(perm) != list(range(mat.ndim)):
        raise ValueError(f"permutation {perm} is not a permutation of the {mat.ndim} axes")
    return BCOO(
        (mat.data, mat.indices[:, list(perm)] if perm else mat.indices),
        shape=tuple(mat.shape[p] for p in perm),
    )


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """The sum over `axes`, as a BCOO of the remaining axes (entries may repeat)."""
    keep = [d for d in range(mat.ndim) if d not in tuple(axes)]
    # padding entries (index == size along a dim) stay out of range on a kept dim, or are 0
    return BCOO((mat.data, mat.indices[:, keep]), shape=tuple(mat.shape[d] for d in keep))


def bcoo_dot_dense(mat: BCOO, other: Any) -> Any:
    """A 2-D BCOO (m, k) times a dense (k,) or (k, n): per entry, data * other[col] added into
    row `row`."""
    if mat.ndim != 2:
        raise NotImplementedError("BCOO @ dense: only 2-D sparse matrices")
    if other.ndim not in (1, 2) or other.shape[0] != mat.shape[1]:
        raise TypeError(
            f"dot_general requires contracting dimensions to have the same shape, got "
            f"{(mat.shape[1],)} and {(other.shape[0],) if other.ndim else ()}."
        )
    rows, cols = mat.indices[:, 0], mat.indices[:, 1]
    dt = jnp.result_type(mat.data, other)
    picked = other.astype(dt)[jnp.minimum(cols, mat.shape[1] - 1)]
    vals = mat.data.astype(dt).reshape((-1,) + (1,) * (other.ndim - 1)) * picked
    out = jnp.zeros((mat.shape[0], *other.shape[1:]), dt)
    return out.at[rows].add(vals, mode="drop")
