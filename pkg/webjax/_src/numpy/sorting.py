"""Sorting functions on lax.sort: sort, argsort, lexsort, median, quantile, percentile."""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..lax import lax, sorting
from . import util


def _prep(a: Any, axis: Any) -> tuple[Any, int]:
    a = util.ensure_array(a)
    if axis is None:
        return lax.reshape(a, (util.aval(a).size,)), 0
    return a, util.canonical_axis(axis, util.aval(a).ndim)


def sort(a: Any, axis: Any = -1, *, kind: Any = None, order: Any = None, stable: bool = True,
         descending: bool = False) -> Any:  # fmt: skip
    if order is not None:
        raise ValueError("The 'order' argument to sort is not supported.")
    a, ax = _prep(a, axis)
    if util.aval(a).ndim == 0:
        return a
    if descending:
        return lax.rev(sorting.sort(lax.rev(a, (ax,)), ax, True), (ax,))
    return sorting.sort(a, ax, True)


def argsort(a: Any, axis: Any = -1, *, kind: Any = None, order: Any = None, stable: bool = True,
            descending: bool = False) -> Any:  # fmt: skip
    if order is not None:
        raise ValueError("The 'order' argument to argsort is not supported.")
    a, ax = _prep(a, axis)
    shape = util.aval(a).shape
    iota = lax.broadcasted_iota(dtypes.int32, shape, ax)
    if descending:  # stable descending: sort the reversed array, then map indices back
        n = shape[ax]
        _, idx = sorting.sort((lax.rev(a, (ax,)), iota), ax, True, 1)
        return lax.rev(lax.sub(lax.full((), n - 1, dtypes.int32), idx), (ax,))
    _, idx = sorting.sort((a, iota), ax, True, 1)
    return idx


def lexsort(keys: Any, axis: int = -1) -> Any:
    keys = [util.ensure_array(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = util.aval(keys[0]).shape
    ax = util.canonical_axis(axis, len(shape))
    iota = lax.broadcasted_iota(dtypes.int32, shape, ax)
    outs = sorting.sort((*keys[::-1], iota), ax, True, len(keys))
    return outs[-1]


def quantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> Any:  # fmt: skip
    if method not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise ValueError(f"method can only be 'linear', 'lower', 'higher', 'midpoint', or "
                         f"'nearest'. Got {method}")  # fmt: skip
    a = util.ensure_array(a)
    if util.aval(a).dtype.kind != "f":
        a = util.convert(a, dtypes.default_float())
    nd = util.aval(a).ndim
    axes = util.canonical_axes(axis, nd)
    keep = [i for i in range(nd) if i not in axes]
    shape = util.aval(a).shape
    moved = lax.transpose(a, (*keep, *axes))
    n = math.prod(shape[i] for i in axes)
    flat = lax.reshape(moved, (*[shape[i] for i in keep], n))
    s = sorting.sort(flat, len(keep), True)
    dt = util.aval(s).dtype
    qa = util.convert(util.ensure_array(q) if not util.is_scalar(q) else q, dt)
    pos = lax.mul(qa, lax.full((), n - 1, dt))
    lo = lax.floor(pos)
    hi = lax.ceil(pos)
    lo_i = lax.convert_element_type(lo, dtypes.int32)
    hi_i = lax.convert_element_type(hi, dtypes.int32)
    from .indexing import _one_hot_gather

    qshape = util.aval(qa).shape
    v_lo = _one_hot_gather(s, lo_i, len(keep))
    v_hi = _one_hot_gather(s, hi_i, len(keep))
    # results: keep dims, then q dims -> JAX puts q dims first
    k = len(keep)
    perm = (*range(k, k + len(qshape)), *range(k))
    v_lo, v_hi = lax.transpose(v_lo, perm), lax.transpose(v_hi, perm)
    frac = lax.sub(pos, lo)
    fb = lax.broadcast_in_dim(frac, util.aval(v_lo).shape, tuple(range(len(qshape))))
    if method == "linear":
        res = lax.add(v_lo, lax.mul(lax.sub(v_hi, v_lo), fb))
    elif method == "lower":
        res = v_lo
    elif method == "higher":
        res = v_hi
    elif method == "midpoint":
        res = lax.mul(lax.add(v_lo, v_hi), lax.full((), 0.5, dt))
    else:
        near = lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN)
        use_hi = lax.broadcast_in_dim(lax.ge(near, hi), util.aval(v_lo).shape,
                                      tuple(range(len(qshape))))  # fmt: skip
        res = lax.select(use_hi, v_hi, v_lo)
    if keepdims:
        full = [1 if i in axes else d for i, d in enumerate(shape)]
        res = lax.reshape(res, (*qshape, *full))
    return res


def percentile(a: Any, q: Any, axis: Any = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False) -> Any:  # fmt: skip
    q = util.ensure_array(q) if not util.is_scalar(q) else q
    qf = util.convert(q, dtypes.default_float()) if util.is_scalar(q) else q
    return quantile(a, lax.div(qf, lax.full((), 100.0, util.aval(qf).dtype)), axis, out,
                    overwrite_input, method, keepdims)  # fmt: skip


def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:  # fmt: skip
    return quantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)
