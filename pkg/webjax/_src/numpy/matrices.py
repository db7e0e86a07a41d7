"""Triangles and diagonals: tri, tril, triu, diag, diagonal, diagflat, trace.

Masks come from two broadcasted iotas compared (no data), diagonals from a masked sum over one
axis, so every function here is a fused elementwise kernel plus at most one reduction.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..lax import lax
from . import util
from .reductions import sum as _sum


def _tri_mask(n: int, m: int, k: int) -> Any:
    rows = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    return lax.ge(lax.add(rows, lax.full((), k, dtypes.int32)), cols)  # col <= row + k


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    dt = dtypes.canonicalize_user(dtype, "tri") if dtype is not None else dtypes.default_float()
    return lax.convert_element_type(_tri_mask(N, N if M is None else M, k), dt)


def _masked(m: Any, k: int, lower: bool, name: str) -> Any:
    m = util.ensure_array(m)
    av = util.aval(m)
    if av.ndim < 2:
        raise ValueError(f"{name} requires an array of at least two dimensions")
    n, cols = av.shape[-2:]
    mask = _tri_mask(n, cols, k if lower else k - 1)
    if not lower:
        mask = lax.bitwise_not(mask)
    mask = lax.broadcast_in_dim(mask, av.shape, (av.ndim - 2, av.ndim - 1))
    return util.with_weak_type_of(lax.select(mask, m, lax.full(av.shape, 0, av.dtype)), m)


def tril(m: Any, k: int = 0) -> Any:
    util.check_arraylike("tril", m)
    return _masked(m, k, True, "tril")


def triu(m: Any, k: int = 0) -> Any:
    util.check_arraylike("triu", m)
    return _masked(m, k, False, "triu")


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    util.check_arraylike("diagonal", a)
    a = util.ensure_array(a)
    av = util.aval(a)
    ax1, ax2 = util.canonical_axis(axis1, av.ndim), util.canonical_axis(axis2, av.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 must not be equal")
    # move the two axes last, cut the square block holding the diagonal, then mask and sum
    rest = [i for i in range(av.ndim) if i not in (ax1, ax2)]
    x = lax.transpose(a, (*rest, ax1, ax2))
    n, m = av.shape[ax1], av.shape[ax2]
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    size = max(0, min(n - r0, m - c0))
    lead = tuple(av.shape[i] for i in rest)
    if size == 0:
        return lax.full((*lead, 0), 0, av.dtype)
    x = lax.slice(x, (0,) * len(rest) + (r0, c0), lead + (r0 + size, c0 + size))
    eye = lax.eq(
        lax.broadcasted_iota(dtypes.int32, (size, size), 0),
        lax.broadcasted_iota(dtypes.int32, (size, size), 1),
    )
    full_shape = (*lead, size, size)
    eye = lax.broadcast_in_dim(eye, full_shape, (len(lead), len(lead) + 1))
    zero = lax.full(full_shape, False if av.dtype.kind == "b" else 0, av.dtype)
    picked = lax.select(eye, x, zero)
    if av.dtype.kind == "b":
        return lax.reduce_or(picked, (len(lead) + 1,))
    return util.with_weak_type_of(lax.reduce_sum(picked, (len(lead) + 1,)), a)


def diag(v: Any, k: int = 0) -> Any:
    util.check_arraylike("diag", v)
    v = util.ensure_array(v)
    av = util.aval(v)
    if av.ndim == 2:
        return diagonal(v, k)
    if av.ndim != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = av.shape[0] + abs(k)
    row = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    col = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    on = lax.eq(lax.add(row, lax.full((), k, dtypes.int32)), col)
    # pad v to length n so that position j (the column, or the row for k < 0) holds v[j - |k|]
    vp = lax.pad(v, lax.full((), 0, av.dtype), [(abs(k), 0, 0)])
    src = lax.broadcast_in_dim(vp, (n, n), (1,) if k >= 0 else (0,))
    return util.with_weak_type_of(lax.select(on, src, lax.full((n, n), 0, av.dtype)), v)


def diagflat(v: Any, k: int = 0) -> Any:
    util.check_arraylike("diagflat", v)
    v = util.ensure_array(v)
    return diag(lax.reshape(v, (util.aval(v).size,)), k)


def trace(
    a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: None = None
) -> Any:
    util.check_arraylike("trace", a)
    d = diagonal(a, offset, axis1, axis2)
    return _sum(d, axis=-1, dtype=dtype)
