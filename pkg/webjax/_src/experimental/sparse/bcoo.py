"""BCOO: JAX's batched-coordinate sparse array, a pytree of two dense arrays.

A BCOO of shape batch + sparse + dense stores `data` of shape batch + (nse,) + dense and
`indices` of shape batch + (nse, n_sparse): per batch element, nse stored blocks, block k at
sparse position indices[..., k, :]. Duplicates sum; padding entries hold zero data at the
out-of-range index `sparse shape`, which todense, extract and products drop. A batch dimension
of data or indices may have size 1 (broadcast), as in JAX.

Every operation here is written on jnp (gathers, scatter-adds) and vmap over the batch
dimensions, so jit, grad (with respect to data and dense operands) and vmap go through the
primitives underneath; vmap over a BCOO argument maps one of its batch dimensions (registered
with vmap as a container, as JAX's `register_vmappable`). Layout semantics (data/indices
shapes, nse, errors) follow `jax.experimental.sparse.bcoo` (JAX 0.10). Layout changes,
duplicates, sorting and constructors live in bcoo_layout.py.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import core, dtypes
from ... import numpy as jnp
from ...lax import lax
from ...numpy import util
from ...transformations import ShapeDtypeStruct, eval_shape
from ...tree_util import register_pytree_node
from ...vmap import register_vmap_container, vmap


class BCOO:
    """A sparse array in batched-coordinate format: `BCOO((data, indices), shape=shape)`."""

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
        _validate(self.data, self.indices, self.shape)

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

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nse(self) -> int:
        return int(self.indices.shape[-2])

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 2

    @property
    def n_sparse(self) -> int:
        return int(self.indices.shape[-1])

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    def __repr__(self) -> str:
        extra = f", nse={self.nse}"
        if self.n_batch:
            extra += f", n_batch={self.n_batch}"
        if self.n_dense:
            extra += f", n_dense={self.n_dense}"
        return f"BCOO({self.dtype.name}{list(self.shape)}{extra})"

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

    # update_layout, sum_duplicates, sort_indices: installed by bcoo_layout.py

    # ---- structure
    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        perm = list(reversed(range(self.ndim))) if axes is None else list(axes)
        out = bcoo_transpose(self, permutation=perm)
        sparse_perm = [p - self.n_batch for p in perm[self.n_batch : self.n_batch + self.n_sparse]]
        is_sorted = self.indices_sorted and sparse_perm == list(range(self.n_sparse))
        return BCOO(
            (out.data, out.indices),
            shape=out.shape,
            indices_sorted=is_sorted,
            unique_indices=self.unique_indices,
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
        return _matmul(self, other if isinstance(other, BCOO) else jnp.asarray(other))

    def __rmatmul__(self, other: Any) -> Any:
        return _matmul(jnp.asarray(other), self)

    # +, -, *, /, abs and astype: sparsified jnp functions, installed by transform.py (as JAX)


def _flatten(x: BCOO) -> tuple[tuple[Any, Any], tuple[Any, ...]]:
    return (x.data, x.indices), (x.shape, x.indices_sorted, x.unique_indices)


def _unflatten(aux: tuple[Any, ...], children: Any) -> BCOO:
    out = object.__new__(BCOO)
    out.data, out.indices = children
    out.shape, out.indices_sorted, out.unique_indices = aux
    return out


register_pytree_node(BCOO, _flatten, _unflatten)


# ---- vmap: a mapped axis of a BCOO is one of its batch dimensions (JAX's vmappable BCOO)
def _bcoo_to_elt(val: BCOO, axis: int) -> tuple[list[Any], Callable[[list[Any]], BCOO]]:
    if axis >= val.n_batch:
        raise ValueError(
            f"Cannot map in_axis={axis} for BCOO array with n_batch={val.n_batch}. in_axes for "
            "batched BCOO operations must correspond to a batch dimension."
        )
    data, indices = _broadcast_batch(val)
    shape = val.shape[:axis] + val.shape[axis + 1 :]

    def rebuild(parts: list[Any]) -> BCOO:
        return BCOO(
            tuple(parts),  # type: ignore[arg-type]
            shape=shape,
            indices_sorted=val.indices_sorted,
            unique_indices=val.unique_indices,
        )

    return [data, indices], rebuild


def _bcoo_from_elt(elt: BCOO, axis: int) -> tuple[list[Any], Callable[[list[Any], int], BCOO]]:
    if axis > elt.n_batch:
        raise ValueError(
            f"BCOO: cannot add out_axis={axis} for BCOO array with n_batch={elt.n_batch}. BCOO "
            "batch axes must be a contiguous block of leading dimensions."
        )

    def rebuild(parts: list[Any], size: int) -> BCOO:
        return BCOO(
            tuple(parts),  # type: ignore[arg-type]
            shape=elt.shape[:axis] + (size,) + elt.shape[axis:],
            indices_sorted=elt.indices_sorted,
            unique_indices=elt.unique_indices,
        )

    return [elt.data, elt.indices], rebuild


register_vmap_container(BCOO, _bcoo_to_elt, _bcoo_from_elt)


# ---- layout helpers
def _validate(data: Any, indices: Any, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """(n_batch, n_sparse, n_dense, nse) of a BCOO, with JAX's errors for mismatched buffers."""
    if not jnp.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"BCOO indices must have an integer dtype, got {indices.dtype}")
    if indices.ndim < 2:
        raise ValueError(f"BCOO indices must have at least 2 dimensions, got {indices.shape=}")
    nse, n_sparse = indices.shape[-2:]
    n_batch = indices.ndim - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(
            f"BCOO indices of shape {indices.shape} imply more dimensions than shape={shape}"
        )
    if any(s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape[:n_batch])):
        raise ValueError(f"indices batch dimensions not compatible for {indices.shape=}, {shape=}")
    if any(s1 not in (1, s2) for s1, s2 in zip(data.shape[:n_batch], shape[:n_batch])):
        raise ValueError(f"data batch dimensions not compatible for {data.shape=}, {shape=}")
    if tuple(data.shape[n_batch:]) != (nse, *shape[n_batch + n_sparse :]):
        raise ValueError(f"Invalid {data.shape=} for {nse=}, {n_batch=}, {n_dense=}")
    return n_batch, n_sparse, n_dense, nse


def _broadcast_batch(mat: BCOO) -> tuple[Any, Any]:
    """data and indices with their size-1 batch dimensions broadcast to the full batch shape."""
    nb = mat.n_batch
    batch = mat.shape[:nb]
    data, indices = mat.data, mat.indices
    if tuple(data.shape[:nb]) != batch:
        data = jnp.broadcast_to(data, batch + tuple(data.shape[nb:]))
    if tuple(indices.shape[:nb]) != batch:
        indices = jnp.broadcast_to(indices, batch + tuple(indices.shape[nb:]))
    return data, indices


def _nfold_vmap(f: Callable[..., Any], n: int, in_axes: Any = 0) -> Callable[..., Any]:
    for _ in range(n):
        f = vmap(f, in_axes=in_axes)
    return f


def _in_range(indices: Any, sparse_shape: Sequence[int]) -> Any:
    """Per stored element (nse,): every index inside the sparse shape."""
    bound = jnp.asarray(np.asarray(sparse_shape, np.int64).astype(indices.dtype))
    return jnp.all((indices >= 0) & (indices < bound), axis=-1)


def _gather(arr: Any, indices: Any) -> Any:
    """arr (sparse + rest) at each row of indices (nse, n_sparse): (nse,) + rest, 0 where an
    index is out of range."""
    n_sparse = indices.shape[-1]
    if n_sparse == 0:
        return jnp.broadcast_to(arr[None], (indices.shape[0], *arr.shape))
    idx = tuple(indices[:, i] for i in range(n_sparse))
    return arr.at[idx].get(mode="fill", fill_value=0)


def _concrete_nse(nse: Any, what: str) -> int:
    return core.concrete_or_error(operator.index, nse, f"The nse argument of {what}")


# ---- fromdense / todense / extract
def bcoo_fromdense(
    mat: Any,
    *,
    nse: int | None = None,
    n_batch: int = 0,
    n_dense: int = 0,
    index_dtype: Any = dtypes.int32,
) -> BCOO:
    """The BCOO of a dense array: per batch element, the nonzero blocks in row-major order,
    padded to `nse` (default: the largest count over the batch) with zero data at index
    `sparse shape`."""
    mat = jnp.asarray(mat)
    n_sparse = mat.ndim - n_batch - n_dense
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"Invalid inputs: shape={mat.shape}, {n_dense=}, {n_batch=}")
    mask = mat != 0
    if n_dense:
        mask = jnp.any(mask, axis=tuple(range(mat.ndim - n_dense, mat.ndim)))
    counts = jnp.sum(mask, axis=tuple(range(n_batch, mask.ndim)))
    if nse is None:
        nse = util.concrete_array(jnp.max(counts, initial=0), "The nse argument of bcoo_fromdense")
    nse = _concrete_nse(nse, "bcoo_fromdense")
    sparse_shape = mat.shape[n_batch : n_batch + n_sparse]

    def one(m: Any, msk: Any, count: Any) -> tuple[Any, Any]:
        if n_sparse:
            nz = jnp.nonzero(msk, size=nse, fill_value=sparse_shape)
            indices = jnp.stack(nz, axis=-1).astype(index_dtype)
        else:
            indices = jnp.zeros((nse, 0), index_dtype)
        data = _gather(m, indices)
        real = (jnp.arange(nse) < count).reshape((nse,) + (1,) * n_dense)
        return jnp.where(real, data, jnp.zeros((), data.dtype)), indices

    data, indices = _nfold_vmap(one, n_batch)(mat, mask, counts)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_todense(mat: BCOO) -> Any:
    """The dense array: data scattered (added: duplicates sum) at the indices."""
    n_sparse = mat.n_sparse
    block = mat.shape[mat.n_batch :]

    def one(data: Any, indices: Any) -> Any:
        if not n_sparse:
            return data.sum(0)
        idx = tuple(indices[:, i] for i in range(n_sparse))
        return jnp.zeros(block, data.dtype).at[idx].add(data, mode="drop")

    return _nfold_vmap(one, mat.n_batch)(*_broadcast_batch(mat))


def bcoo_extract(sparr: BCOO, arr: Any, *, assume_unique: bool | None = None) -> BCOO:
    """A BCOO with `sparr`'s indices and the values of the dense `arr` there; with
    assume_unique False, a repeated index gets its value once, at its first position."""
    if not isinstance(sparr, BCOO):
        raise TypeError(
            f"First argument to bcoo_extract should be a BCOO array. Got type(sparr)={type(sparr)}"
        )
    a = jnp.asarray(arr)
    if a.shape != sparr.shape:
        raise ValueError(f"shape mismatch: sparr.shape={sparr.shape} a.shape={a.shape}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    nb = sparr.n_batch
    _, indices = _broadcast_batch(sparr)
    sparse_shape = sparr.shape[nb : nb + sparr.n_sparse]

    def one(ind: Any, x: Any) -> Any:
        vals = _gather(x, ind)
        if assume_unique:
            return vals
        first = _first_occurrence(ind, sparse_shape)
        return jnp.where(first.reshape(first.shape + (1,) * (vals.ndim - 1)), vals, 0)

    data = _nfold_vmap(one, nb)(indices, a)
    return BCOO(
        (data, sparr.indices),
        shape=sparr.shape,
        indices_sorted=sparr.indices_sorted,
        unique_indices=sparr.unique_indices,
    )


def _first_occurrence(indices: Any, sparse_shape: Sequence[int]) -> Any:
    """(nse,) bools: no earlier stored element has the same index (out-of-range ones count as
    one index)."""
    nse = indices.shape[0]
    if not indices.shape[-1]:
        return jnp.arange(nse) == 0
    fill = jnp.asarray(np.asarray(sparse_shape, np.int64).astype(indices.dtype))
    ind = jnp.where(_in_range(indices, sparse_shape)[:, None], indices, fill)
    same = jnp.all(ind[:, None, :] == ind[None, :, :], axis=-1)
    earlier = jnp.arange(nse)[None, :] < jnp.arange(nse)[:, None]
    return ~jnp.any(same & earlier, axis=1)


# ---- batch axes into sparse ones (for products over contracted batch axes)


def _batch_to_sparse(data: Any, indices: Any, n: int) -> tuple[Any, Any]:
    """The last n batch dimensions become leading sparse ones (batch-major entries)."""
    nb = indices.ndim - 2
    keep = nb - n
    moved = data.shape[keep:nb]
    nse = indices.shape[-2]
    count = math.prod(moved)
    new_data = data.reshape(*data.shape[:keep], count * nse, *data.shape[nb + 1 :])
    grid = np.stack(np.meshgrid(*(np.arange(s) for s in moved), indexing="ij"), -1)
    grid = np.broadcast_to(grid.reshape(count, 1, n), (count, nse, n))
    grid = jnp.asarray(grid.astype(np.dtype(indices.dtype)))
    grid = jnp.broadcast_to(grid, (*indices.shape[:keep], count, nse, n))
    old = indices.reshape(*indices.shape[:keep], count, nse, indices.shape[-1])
    new_indices = jnp.concatenate([grid, old], axis=-1)
    return new_data, new_indices.reshape(*indices.shape[:keep], count * nse, -1)


# ---- structure
def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """Permuted axes: batch axes among batch axes, sparse among sparse, dense among dense."""
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError(
            f"transpose permutation must be a tuple/list/ndarray, got {type(permutation)}."
        )
    perm = tuple(int(p) for p in permutation)
    if tuple(sorted(perm)) != tuple(range(mat.ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got permutation "
            f"{tuple(permutation) if isinstance(permutation, tuple) else permutation} for shape "
            f"{mat.shape}."
        )
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    batch_perm = perm[:nb]
    sparse_perm = [p - nb for p in perm[nb : nb + ns]]
    dense_perm = [p - nb - ns for p in perm[nb + ns :]]
    if nb and tuple(sorted(batch_perm)) != tuple(range(nb)):
        raise NotImplementedError(
            "transpose permutation cannot permute batch axes with non-batch axes; got "
            f"permutation {permutation}, with n_batch={nb}."
        )
    if nd and tuple(sorted(dense_perm)) != tuple(range(nd)):
        raise NotImplementedError(
            "transpose permutation cannot permute dense axes with non-dense axes; got "
            f"permutation {permutation}, with n_dense={nd}."
        )
    data, indices = mat.data, mat.indices
    if perm != tuple(range(mat.ndim)):
        indices = jnp.transpose(
            indices[..., np.asarray(sparse_perm, np.int32)], (*batch_perm, nb, nb + 1)
        )
        data = jnp.transpose(data, (*batch_perm, nb, *(d + nb + 1 for d in dense_perm)))
    return BCOO(
        (data, indices),
        shape=tuple(mat.shape[p] for p in perm),
        unique_indices=mat.unique_indices,
    )


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """The sum over `axes` as a BCOO of the remaining axes: dense axes summed in data, sparse
    axes dropped from the indices (entries may repeat), batch axes folded into nse."""
    shape = mat.shape
    nb, ns = mat.n_batch, mat.n_sparse
    axes = sorted({int(a) for a in axes})
    if not all(0 <= a < len(shape) for a in axes):
        raise ValueError(f"bcoo_reduce_sum: axes {tuple(axes)} out of range for shape {shape}")
    data, indices = _broadcast_batch(mat)
    dense_axes = tuple(a - ns + 1 for a in axes if a >= nb + ns)
    if dense_axes:
        data = data.sum(dense_axes)
    if ns:  # entries outside the sparse shape must not reach a kept axis or a sum
        ok = _in_range(indices, shape[nb : nb + ns])
        data = jnp.where(ok.reshape(ok.shape + (1,) * (data.ndim - ok.ndim)), data, 0)
    kept_sparse = [i for i in range(ns) if i + nb not in axes]
    indices = indices[..., np.asarray(kept_sparse, np.int32)]
    batch_axes = [a for a in axes if a < nb]
    if batch_axes:
        kept_batch = [d for d in range(nb) if d not in batch_axes]
        order = [*kept_batch, *batch_axes]
        merged = math.prod(shape[a] for a in batch_axes) * mat.nse
        new_batch = tuple(shape[d] for d in kept_batch)
        data = jnp.transpose(data, (*order, *range(nb, data.ndim)))
        data = data.reshape(*new_batch, merged, *data.shape[nb + 1 :])
        indices = jnp.transpose(indices, (*order, nb, nb + 1))
        indices = indices.reshape(*new_batch, merged, indices.shape[-1])
    return BCOO((data, indices), shape=tuple(s for i, s in enumerate(shape) if i not in axes))


# ---- products with dense operands
def _index_tuple(x: Any) -> tuple[int, ...]:
    if isinstance(x, int | np.integer):
        return (int(x),)
    return tuple(int(d) for d in x)


# sparse @ sparse: bcoo_spdot.py registers its product here (it needs bcoo_layout's
# sum_duplicates, which sits above this module)
SPARSE_DOT: list[Callable[..., BCOO]] = []


def bcoo_dot_general(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """lax.dot_general with one operand a BCOO (the other dense): a dense result."""
    del precision, out_sharding
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((_index_tuple(lc), _index_tuple(rc)), (_index_tuple(lb), _index_tuple(rb)))
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        return SPARSE_DOT[0](lhs, rhs, dn, preferred_element_type)
    if isinstance(lhs, BCOO):
        return _dot_sparse_dense(lhs, jnp.asarray(rhs), dn, preferred_element_type)
    if isinstance(rhs, BCOO):
        swapped = ((dn[0][1], dn[0][0]), (dn[1][1], dn[1][0]))
        out = _dot_sparse_dense(rhs, jnp.asarray(lhs), swapped, preferred_element_type)
        n_batch, n_contract = len(dn[1][0]), len(dn[0][0])
        n_swap = rhs.ndim - n_contract  # the BCOO's free + batch axes come first
        perm = (*range(n_batch), *range(n_swap, out.ndim), *range(n_batch, n_swap))
        return jnp.transpose(out, perm)
    return lax.dot_general(
        lhs, rhs, dimension_numbers=dn, preferred_element_type=preferred_element_type
    )


def dot_out_aval(lhs: Any, rhs: Any, dn: Any, preferred: Any) -> Any:
    """The shape and dtype of lax.dot_general of operands of these shapes and dtypes (its
    checks and errors too), for a product with a BCOO on either side."""
    return eval_shape(
        lambda a, b: lax.dot_general(a, b, dimension_numbers=dn, preferred_element_type=preferred),
        ShapeDtypeStruct(lhs.shape, lhs.dtype),
        ShapeDtypeStruct(rhs.shape, rhs.dtype),
    )


def _dot_sparse_dense(mat: BCOO, rhs: Any, dn: Any, preferred: Any) -> Any:
    (lc, rc), (lb, rb) = dn
    out_aval = dot_out_aval(mat, rhs, dn, preferred)
    nb, ns = mat.n_batch, mat.n_sparse
    if lb and max(lb) >= nb:
        raise NotImplementedError(
            "bcoo_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representation.\ngot lhs_batch={lb}, n_batch={nb}"
        )
    if any(d >= nb + ns for d in lc):
        raise NotImplementedError("bcoo_dot_general: contracting over dense dimensions.")
    dt = out_aval.dtype
    data, indices = _broadcast_batch(mat)
    # Contracted batch axes become sparse axes (their positions as index columns), so that
    # the remaining batch axes are the dot's batch axes and free ones, mapped by vmap.
    cb = [d for d in lc if d < nb]
    free_b = [d for d in range(nb) if d not in lb and d not in cb]
    order = [*lb, *free_b, *cb]
    data = jnp.transpose(data, (*order, *range(nb, data.ndim)))
    indices = jnp.transpose(indices, (*order, nb, nb + 1))
    columns = [*(nb + i for i in range(ns))]  # the lhs axis each index column stands for
    if cb:
        data, indices = _batch_to_sparse(data, indices, len(cb))
        columns = [*cb, *columns]
    nmap = len(lb) + len(free_b)
    # rhs: dot batch axes first, then contracting axes (in the order of `columns`), then free
    rc_of = dict(zip(lc, rc, strict=True))
    contract_cols = [j for j, ax in enumerate(columns) if ax in rc_of]
    free_cols = [j for j, ax in enumerate(columns) if ax not in rc_of]
    r_contract = [rc_of[columns[j]] for j in contract_cols]
    r_free = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    rhs = jnp.transpose(rhs, (*rb, *r_contract, *r_free)).astype(dt)
    n_dense = mat.n_dense
    free_shape = tuple(mat.shape[columns[j]] for j in free_cols)
    contract_shape = tuple(mat.shape[columns[j]] for j in contract_cols)
    ccols = np.asarray(contract_cols, np.int32)
    fcols = np.asarray(free_cols, np.int32)

    def one(d: Any, ind: Any, r: Any) -> Any:
        picked = _gather(r, ind[:, ccols]) if len(ccols) else r[None]
        if len(ccols):
            ok = _in_range(ind[:, ccols], contract_shape)
            picked = jnp.where(ok.reshape((-1,) + (1,) * (picked.ndim - 1)), picked, 0)
        n_rfree = picked.ndim - 1
        prod = d.astype(dt).reshape(d.shape + (1,) * n_rfree) * picked.reshape(
            (picked.shape[0],) + (1,) * n_dense + picked.shape[1:]
        )
        if not len(fcols):
            return prod.sum(0)
        idx = tuple(ind[:, j] for j in fcols)
        out = jnp.zeros((*free_shape, *prod.shape[1:]), dt)
        return out.at[idx].add(prod, mode="drop")

    f = one
    for i in reversed(range(nmap)):  # dot batch axes map rhs too; free batch axes do not
        f = vmap(f, in_axes=(0, 0, 0 if i < len(lb) else None))
    return f(data, indices, rhs)


def _matmul(a: Any, b: Any) -> Any:
    """jnp.matmul with one BCOO operand, as a bcoo_dot_general."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: inputs must be at least 1-dimensional")
    if a.ndim == 1 or b.ndim == 1:
        ca = a.ndim - 1
        cb = 0 if b.ndim == 1 else b.ndim - 2
        return bcoo_dot_general(a, b, dimension_numbers=(((ca,), (cb,)), ((), ())))
    if a.ndim == 2 and b.ndim > 2:  # (m, k) @ (B.., k, n) -> (B.., m, n)
        out = bcoo_dot_general(a, b, dimension_numbers=(((1,), (b.ndim - 2,)), ((), ())))
        return jnp.moveaxis(out, 0, -2)
    if a.ndim > 2 and b.ndim == 2:
        return bcoo_dot_general(a, b, dimension_numbers=(((a.ndim - 1,), (0,)), ((), ())))
    if a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise NotImplementedError(
            f"BCOO matmul with broadcast batch dimensions: shapes {a.shape} and {b.shape}"
        )
    batch = tuple(range(a.ndim - 2))
    return bcoo_dot_general(
        a, b, dimension_numbers=(((a.ndim - 1,), (b.ndim - 2,)), (batch, batch))
    )
