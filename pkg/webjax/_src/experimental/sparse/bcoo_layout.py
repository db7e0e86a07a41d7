"""BCOO layout operations, as jax.experimental.sparse's: update_layout (batch, sparse and dense
axes into one another), sum_duplicates / eliminate_zeros, sort_indices, squeeze, concatenate,
and the eye / empty constructors. Written on jnp and vmap over batch axes like bcoo.py.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import core
from ... import numpy as jnp
from ...lax import lax
from ...lax.sorting import sort as lax_sort
from ...numpy import util
from ...transformations import ShapeDtypeStruct, eval_shape
from .bcoo import (
    BCOO,
    _batch_to_sparse,
    _broadcast_batch,
    _first_occurrence,
    _in_range,
    _nfold_vmap,
    bcoo_fromdense,
)


class SparseEfficiencyError(ValueError):
    pass


class SparseEfficiencyWarning(UserWarning):
    pass


def bcoo_update_layout(
    mat: BCOO,
    *,
    n_batch: int | None = None,
    n_dense: int | None = None,
    on_inefficient: str | None = "error",
) -> BCOO:
    """The same array with n_batch and n_dense changed: batch or dense dimensions leaving
    become sparse (nse grows by their size), sparse dimensions joining them are scattered into
    zero-filled blocks (nse stays)."""
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    n_sparse = mat.ndim - n_batch - n_dense
    if on_inefficient not in ["error", "warn", None]:
        raise ValueError(
            "on_inefficent={on_inefficient!r}; expected one of ['error', 'warn', None]."
        )
    if n_batch < 0:
        raise ValueError(f"n_batch must be non-negative; got {n_batch}")
    if n_dense < 0:
        raise ValueError(f"n_dense must be non-negative; got {n_dense}")
    if n_sparse < 0:
        raise ValueError(
            f"sum of {n_batch=} and {n_dense=} cannot be larger than mat.ndim={mat.ndim}."
        )

    def inefficient(msg: str) -> None:
        if on_inefficient == "error":
            raise SparseEfficiencyError(
                msg + " To disable this error, set the on_inefficient argument of "
                "bcoo_update_layout to 'warn' or None."
            )
        if on_inefficient == "warn":
            warnings.warn(
                msg + " To disable this warning, set the on_inefficient argument of "
                "bcoo_update_layout to None.",
                category=SparseEfficiencyWarning,
                stacklevel=3,
            )

    shape = mat.shape
    if n_dense > mat.n_dense and any(d > 1 for d in shape[-n_dense : mat.ndim - mat.n_dense]):
        inefficient(
            f"For matrix of shape {shape}, increasing n_dense from {mat.n_dense} to {n_dense} "
            "results in inefficient storage."
        )
    if n_batch > mat.n_batch and any(d > 1 for d in shape[mat.n_batch : n_batch]):
        inefficient(
            f"For matrix of shape {shape}, increasing n_batch from {mat.n_batch} to {n_batch} "
            "results in inefficient storage."
        )
    data, indices = _broadcast_batch(mat)
    nb, nd = mat.n_batch, mat.n_dense
    if n_dense < nd:
        data, indices = _dense_to_sparse(data, indices, nb, nd - n_dense)
        nd = n_dense
    if n_batch < nb:
        data, indices = _batch_to_sparse(data, indices, nb - n_batch)
        nb = n_batch
    if n_dense > nd:
        data, indices = _sparse_to_dense(data, indices, nb, shape[mat.ndim - n_dense :])
        nd = n_dense
    if n_batch > nb:
        data, indices = _sparse_to_batch(data, indices, nb, shape[nb:n_batch])
    return BCOO((data, indices), shape=shape)


def _dense_to_sparse(data: Any, indices: Any, nb: int, n: int) -> tuple[Any, Any]:
    """The first n dense dimensions become trailing sparse ones: each block splits into
    prod(their sizes) entries (entry-major)."""
    batch, nse = data.shape[:nb], data.shape[nb]
    lead = data.shape[nb + 1 : nb + 1 + n]
    count = math.prod(lead)
    new_data = data.reshape(*batch, nse * count, *data.shape[nb + 1 + n :])
    grid = np.stack(np.meshgrid(*(np.arange(s) for s in lead), indexing="ij"), -1)
    grid = jnp.asarray(grid.reshape(count, n).astype(np.dtype(indices.dtype)))
    old = jnp.broadcast_to(indices[..., :, None, :], (*batch, nse, count, indices.shape[-1]))
    new = jnp.broadcast_to(grid, (*batch, nse, count, n))
    new_indices = jnp.concatenate([old, new], axis=-1).reshape(*batch, nse * count, -1)
    return new_data, new_indices


def _sparse_to_dense(
    data: Any, indices: Any, nb: int, dense_shape: Sequence[int]
) -> tuple[Any, Any]:
    """The last sparse dimensions join the dense block: each entry's block is scattered into
    a zero block of `dense_shape` at those indices."""
    n = len(dense_shape) - (data.ndim - nb - 1)

    def one(d: Any, i: Any) -> tuple[Any, Any]:
        idx = tuple(i[len(i) - n + j] for j in range(n))
        return jnp.zeros(tuple(dense_shape), d.dtype).at[idx].set(d, mode="drop"), i[: len(i) - n]

    return _nfold_vmap(one, nb + 1)(data, indices)


def _sparse_to_batch(data: Any, indices: Any, nb: int, new_batch: Sequence[int]) -> tuple[Any, Any]:
    """The first sparse dimensions become trailing batch ones: every new batch element holds
    all nse entries, zero where the entry is elsewhere."""
    n = len(new_batch)

    def one(d: Any, i: Any) -> tuple[Any, Any]:
        nse = i.shape[0]
        idx = tuple(i[:, j] for j in range(n)) + (jnp.arange(nse),)
        new_d = jnp.zeros((*new_batch, nse, *d.shape[1:]), d.dtype).at[idx].set(d, mode="drop")
        return new_d, jnp.broadcast_to(i[:, n:], (*new_batch, nse, i.shape[1] - n))

    return _nfold_vmap(one, nb)(data, indices)


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None) -> BCOO:
    """Repeated indices summed into one entry, indices sorted, padded (or cut) to `nse`
    (default: the largest count of distinct in-range indices over the batch)."""
    if nse is not None:
        nse = core.concrete_or_error(operator.index, nse, "nse argument of bcoo_sum_duplicates.")
    nb, ns = mat.n_batch, mat.n_sparse
    sparse_shape = mat.shape[nb : nb + ns]
    data, indices = _broadcast_batch(mat)
    nse_in = mat.nse
    fill = jnp.asarray(np.asarray(sparse_shape, np.int64).astype(np.dtype(indices.dtype)))

    def unique(ind: Any) -> tuple[Any, Any, Any]:
        if not ns:
            return jnp.zeros((1, 0), ind.dtype), jnp.zeros(ind.shape[0], np.int32), 1
        ind = jnp.where(_in_range(ind, sparse_shape)[:, None], ind, fill)
        uniq, inverse = jnp.unique(ind, axis=0, size=nse_in, fill_value=fill, return_inverse=True)
        distinct = jnp.sum(_first_occurrence(ind, sparse_shape))
        return uniq, inverse.reshape(-1), distinct - jnp.any(jnp.all(ind == fill, axis=-1))

    uniq, inverse, true_nse = _nfold_vmap(unique, nb)(indices)
    if nse is None:
        nse = 1 if not ns else util.concrete_array(jnp.max(true_nse), "nse of bcoo_sum_duplicates")
        nse = int(nse)
    n_uniq = uniq.shape[-2]
    if nse <= n_uniq:
        uniq = uniq[..., :nse, :]
    else:
        pad = jnp.broadcast_to(fill, (*uniq.shape[:-2], nse - n_uniq, ns)).astype(uniq.dtype)
        uniq = jnp.concatenate([uniq, pad], axis=-2)

    def scatter(d: Any, m: Any) -> Any:
        return jnp.zeros((nse, *d.shape[1:]), d.dtype).at[m].add(d, mode="drop")

    new_data = _nfold_vmap(scatter, nb)(data, inverse)
    return BCOO((new_data, uniq), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_eliminate_zeros(mat: BCOO, nse: int | None = None) -> BCOO:
    """Entries whose whole block is zero moved out of range, then duplicates summed."""
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = _broadcast_batch(mat)
    zero = jnp.all(data == 0, axis=tuple(range(nb + 1, data.ndim)))
    fill = np.asarray(mat.shape[nb : nb + ns], np.int64).astype(np.dtype(indices.dtype))
    indices = jnp.where(zero[..., None], jnp.asarray(fill), indices)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=mat.shape), nse=nse)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """Entries reordered so their indices are lexicographically sorted per batch element
    (duplicates kept; out-of-range padding, at the sparse shape, sorts last)."""
    if not mat.n_sparse:
        return BCOO(
            (mat.data, mat.indices),
            shape=mat.shape,
            indices_sorted=True,
            unique_indices=mat.unique_indices,
        )
    data, indices = _broadcast_batch(mat)

    def one(d: Any, ind: Any) -> tuple[Any, Any]:
        cols = [ind[:, i] for i in range(ind.shape[1])]
        *cols, perm = lax_sort((*cols, jnp.arange(ind.shape[0])), num_keys=len(cols))
        return d[perm], jnp.stack(cols, axis=-1)

    data, indices = _nfold_vmap(one, mat.n_batch)(data, indices)
    return BCOO(
        (data, indices), shape=mat.shape, indices_sorted=True, unique_indices=mat.unique_indices
    )


def _empty(
    shape: Sequence[int],
    *,
    dtype: Any = None,
    index_dtype: Any = "int32",
    n_dense: int = 0,
    n_batch: int = 0,
    nse: int = 0,
) -> BCOO:
    shape = tuple(shape)
    n_sparse = len(shape) - n_dense - n_batch
    if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
        raise ValueError(f"Invalid inputs: {shape=}, {n_dense=}, {n_batch=}, {nse=}")
    batch, sparse = shape[:n_batch], shape[n_batch : n_batch + n_sparse]
    data = jnp.zeros((*batch, nse, *shape[n_batch + n_sparse :]), dtype)
    fill = np.asarray(sparse, np.int64).astype(np.dtype(index_dtype))
    indices = jnp.broadcast_to(jnp.asarray(fill), (*batch, nse, n_sparse))
    return BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


def _eye(
    n: int,
    m: int,
    k: int,
    *,
    dtype: Any = None,
    index_dtype: Any = "int32",
    n_batch: int = 0,
    n_dense: int = 0,
) -> BCOO:
    """The (n, m) identity on diagonal k: nse = the diagonal's length when all-sparse, one
    entry per row with n_batch=1."""
    if 2 - n_batch - n_dense < 0 or n_dense < 0 or n_batch < 0:
        raise ValueError(f"Invalid inputs: shape={(n, m)}, {n_dense=}, {n_batch=}")
    diag = min(n, m - k) if k > 0 else min(n + k, m)
    if diag <= 0:
        return _empty(
            (n, m), dtype=dtype, index_dtype=index_dtype, n_batch=n_batch, n_dense=n_dense
        )
    if n_dense > 0 or n_batch > 1:
        return bcoo_fromdense(
            jnp.eye(n, m, k, dtype=dtype), n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
        )
    idt = np.dtype(index_dtype)
    if n_batch == 0:
        i = np.arange(diag)
        rows, cols = i - min(k, 0), i + max(k, 0)
        indices = jnp.asarray(np.stack([rows, cols], -1).astype(idt))
        data = jnp.ones(diag, dtype)
    else:  # row r holds column r + k, or padding at m where that is off the matrix
        cols = np.arange(n) + k
        real = (cols >= 0) & (cols < m)
        indices = jnp.asarray(np.where(real, cols, m).astype(idt)[:, None, None])
        data = jnp.asarray(real[:, None]).astype(jnp.ones((), dtype).dtype)
    return BCOO((data, indices), shape=(n, m), indices_sorted=True, unique_indices=True)


_FORMATS = ("bcsr", "bcoo", "coo", "csr", "csc")


def _check_format(sparse_format: str, formats: Sequence[str]) -> None:
    if sparse_format not in formats:
        raise ValueError(
            f"sparse_format={sparse_format!r} not recognized; must be one of {list(formats)}"
        )
    if sparse_format != "bcoo":
        raise NotImplementedError(f"sparse format {sparse_format!r}: webjax has only BCOO")


def empty(
    shape: Sequence[int],
    dtype: Any = None,
    index_dtype: Any = "int32",
    sparse_format: str = "bcoo",
    **kwds: Any,
) -> BCOO:
    """An all-zero sparse array (nse=0 unless `nse=` is given)."""
    _check_format(sparse_format, _FORMATS)
    return _empty(tuple(shape), dtype=dtype, index_dtype=index_dtype, **kwds)


def eye(
    N: int,  # JAX's argument names
    M: int | None = None,
    k: int = 0,
    dtype: Any = None,
    index_dtype: Any = "int32",
    sparse_format: str = "bcoo",
    **kwds: Any,
) -> BCOO:
    """The sparse identity matrix, ones on diagonal k."""
    _check_format(sparse_format, ("bcoo", "coo", "csr", "csc"))
    m = N if M is None else M
    n = core.concrete_or_error(operator.index, N)
    m = core.concrete_or_error(operator.index, m)
    k = core.concrete_or_error(operator.index, k)
    return _eye(n, m, k, dtype=dtype, index_dtype=index_dtype, **kwds)


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """lax.squeeze of size-1 axes: batch and dense ones leave the buffers, sparse ones leave
    the index columns."""
    dims = tuple(int(util.canonical_axes(d, arr.ndim)[0]) for d in dimensions)
    if any(arr.shape[d] != 1 for d in dims):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={arr.shape} and dimensions={dims}"
        )
    nb, ns = arr.n_batch, arr.n_sparse
    batch = tuple(d for d in dims if d < nb)
    dense = tuple(d - ns + 1 for d in dims if d >= nb + ns)
    kept = np.asarray([i for i in range(ns) if i + nb not in dims], np.int32)
    data, indices = _broadcast_batch(arr)
    return BCOO(
        (jnp.squeeze(data, batch + dense), jnp.squeeze(indices[..., kept], batch)),
        shape=tuple(n for i, n in enumerate(arr.shape) if i not in dims),
        indices_sorted=arr.indices_sorted,
        unique_indices=arr.unique_indices,
    )


def _pad_nse(mat: BCOO, nse: int) -> tuple[Any, Any]:
    """data and indices (batch broadcast) grown to `nse` entries with zero-data padding."""
    data, indices = _broadcast_batch(mat)
    extra = nse - mat.nse
    if extra <= 0:
        return data, indices
    nb = mat.n_batch
    fill = np.asarray(mat.shape[nb : nb + mat.n_sparse], np.int64).astype(np.dtype(indices.dtype))
    pad_i = jnp.broadcast_to(jnp.asarray(fill), (*indices.shape[:nb], extra, mat.n_sparse))
    pad_d = jnp.zeros((*data.shape[:nb], extra, *data.shape[nb + 1 :]), data.dtype)
    return jnp.concatenate([data, pad_d], axis=nb), jnp.concatenate([indices, pad_i], axis=nb)


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """lax.concatenate of BCOOs of one layout: along a batch axis (nse padded to the largest)
    or a sparse axis (entries appended, indices shifted); dense axes are not supported."""
    dimension = operator.index(dimension)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError(
            f"bcoo_concatenate: expected operands to be a sequence of BCOO arrays. Got {operands}"
        )
    out = eval_shape(
        lambda *xs: lax.concatenate(xs, dimension),
        *(ShapeDtypeStruct(op.shape, op.dtype) for op in operands),
    )
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1 and max(n_batches) == 1:  # x[None] next to batched arrays
        if all(op.shape[0] == 1 for op in operands if op.n_batch == 0):
            operands = [op if op.n_batch else bcoo_update_layout(op, n_batch=1) for op in operands]
        elif all(op.shape[0] == 1 for op in operands if op.n_batch == 1):
            operands = [bcoo_update_layout(op, n_batch=0) if op.n_batch else op for op in operands]
        n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch dimensions.")
    nb, ns = operands[0].n_batch, operands[0].n_sparse
    if dimension < nb:
        nse = max(op.nse for op in operands)
        bufs = [_pad_nse(op, nse) for op in operands]
        data = jnp.concatenate([d for d, _ in bufs], axis=dimension)
        indices = jnp.concatenate([i for _, i in bufs], axis=dimension)
    elif dimension < nb + ns:
        col = dimension - nb
        offsets = np.cumsum([0] + [op.shape[dimension] for op in operands[:-1]])
        bufs = [_broadcast_batch(op) for op in operands]
        data = jnp.concatenate([d for d, _ in bufs], axis=nb)
        shifted = [
            i.at[..., col].add(np.asarray(off).astype(np.dtype(i.dtype)))
            for (_, i), off in zip(bufs, offsets, strict=True)
        ]
        indices = jnp.concatenate(shifted, axis=nb)
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((data, indices), shape=out.shape)


def bcoo_broadcast_in_dim(
    mat: BCOO, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding: Any = None
) -> BCOO:
    """lax.broadcast_in_dim: new axes before the first sparse axis become batch axes, after the
    last dense one dense axes, between sparse ones size-1 sparse axes (index 0); batch and
    dense axes may grow from size 1, sparse ones may not."""
    del sharding
    shape = tuple(int(d) for d in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    if len(mat.shape) != len(dims):
        raise ValueError(
            f"spinfo.shape={mat.shape} and broadcast_dimensions={dims} must have the same length"
        )
    nb, ns, nd, nse = mat.n_batch, mat.n_sparse, mat.n_dense, mat.nse
    batch_dims, sparse_dims, dense_dims = dims[:nb], dims[nb : nb + ns], dims[nb + ns :]
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_nb = min(dims[nb:], default=len(shape))
    new_nd = nd and len(shape) - min(dims[-nd:])
    new_ns = len(shape) - new_nb - new_nd
    old_sparse = math.prod(mat.shape[nb : nb + ns])
    if old_sparse != math.prod(shape[new_nb : new_nb + new_ns]):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    data, indices = mat.data, mat.indices
    if (new_nb, new_nd) != (nb, nd):
        data = lax.broadcast_in_dim(
            data,
            (*shape[:new_nb], nse, *shape[new_nb + new_ns :]),
            (*batch_dims, new_nb, *(b + 1 - new_ns for b in dense_dims)),
        )
        indices = lax.broadcast_in_dim(
            indices, (*shape[:new_nb], nse, ns), (*batch_dims, new_nb, new_nb + 1)
        )
    if new_ns != ns:  # the new sparse axes have size 1: index 0 there
        cols = np.asarray(sparse_dims, np.int32) - new_nb
        wide = jnp.zeros((*indices.shape[:-1], new_ns), indices.dtype)
        indices = wide.at[..., cols].set(indices)
    return BCOO((data, indices), shape=shape)


# ---- BCOO's layout methods
def _update_layout(
    self: BCOO,
    *,
    n_batch: int | None = None,
    n_dense: int | None = None,
    on_inefficient: str | None = "error",
) -> BCOO:
    return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense, on_inefficient=on_inefficient)


def _sum_duplicates(self: BCOO, nse: int | None = None, remove_zeros: bool = True) -> BCOO:
    if remove_zeros:
        return bcoo_eliminate_zeros(self, nse=nse)
    return bcoo_sum_duplicates(self, nse=nse)


BCOO.update_layout = _update_layout  # type: ignore[attr-defined]
BCOO.sum_duplicates = _sum_duplicates  # type: ignore[attr-defined]
BCOO.sort_indices = bcoo_sort_indices  # type: ignore[attr-defined]
