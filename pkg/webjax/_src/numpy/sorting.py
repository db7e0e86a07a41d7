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
    _no_complex(a)
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


def _no_complex(a: Any) -> None:
    if util.aval(a).dtype.kind == "c":
        raise ValueError("quantile does not support complex input, as the operation is poorly "
                         "defined.")  # fmt: skip


def sort_complex(a: Any) -> Any:
    """Sort along the last axis (real parts, then imaginary parts) and return a complex
    array, as JAX's sort_complex."""
    a = util.ensure_array(a)
    out = sorting.sort(a, util.aval(a).ndim - 1, True) if util.aval(a).ndim else a
    dt = util.aval(a).dtype
    return util.convert(out, dtypes.to_complex(dt if dt.kind in "fc" else dtypes.default_float()))


# ---- searching ---------------------------------------------------------------------------------
def _total_lt(a: Any, b: Any) -> Any:
    """a < b in JAX's sort order: -0.0 equals 0.0, NaN is above everything (and equal to NaN);
    complex numbers order by their real parts, then their imaginary parts."""
    kind = util.aval(a).dtype.kind
    if kind == "c":
        ra, rb = lax.real(a), lax.real(b)
        same = lax.bitwise_not(lax.bitwise_or(_total_lt(ra, rb), _total_lt(rb, ra)))
        return lax.select(same, _total_lt(lax.imag(a), lax.imag(b)), _total_lt(ra, rb))
    if kind != "f":
        return lax.lt(a, b)
    return lax.bitwise_or(lax.lt(a, b), lax.bitwise_and(lax.eq(a, a), lax.ne(b, b)))


def _total_le(a: Any, b: Any) -> Any:
    kind = util.aval(a).dtype.kind
    if kind == "c":
        return lax.bitwise_not(_total_lt(b, a))
    if kind != "f":
        return lax.le(a, b)
    return lax.bitwise_or(lax.le(a, b), lax.ne(b, b))


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:  # fmt: skip
    """The insertion point of each query in sorted `a`: a vectorised binary search (log2 len(a)
    gathers), or a compare-and-count reduction with method='compare_all'."""
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. "
                         "Expected one of ['left', 'right'].")  # fmt: skip
    if method not in _SEARCH_METHODS:
        raise ValueError(f"Invalid method={method!r}; expected one of {list(_SEARCH_METHODS)}")
    a = util.ensure_array(a)
    if util.aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = util.promote_dtypes(a, v if util.is_scalar(v) else util.ensure_array(v))
    if sorter is not None:
        from .indexing import take

        a = take(a, sorter)
    if util.aval(a).dtype.kind == "b":
        a, v = (lax.convert_element_type(x, dtypes.int32) for x in (a, v))
    n = util.aval(a).shape[0]
    vshape = util.aval(v).shape
    if n == 0:
        return lax.full(vshape, 0, dtypes.int32)
    if method == "compare_all":  # one fused reduction of len(a) per query
        big = (*vshape, n)
        nd = len(vshape)
        ab = lax.broadcast_in_dim(a, big, (nd,))
        vb = lax.broadcast_in_dim(v, big, tuple(range(nd)))
        before = _total_lt(ab, vb) if side == "left" else _total_le(ab, vb)
        return lax.reduce_sum(lax.convert_element_type(before, dtypes.int32), (nd,))
    # binary search, unrolled: ceil(log2(n + 1)) halvings of [lo, hi], one gather each
    from .indexing import _one_hot_gather

    lo = lax.full(vshape, 0, dtypes.int32)
    hi = lax.full(vshape, n, dtypes.int32)
    two = lax.full((), 2, dtypes.int32)
    for _ in range(math.ceil(math.log2(n + 1))):
        mid = lax.add(lo, lax.div(lax.sub(hi, lo), two))
        pivot = _one_hot_gather(a, mid, 0)
        left = _total_le(v, pivot) if side == "left" else _total_lt(v, pivot)
        lo, hi = lax.select(left, lo, mid), lax.select(left, mid, hi)
    return hi


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    x, b = util.ensure_array(x), util.ensure_array(bins)
    if util.aval(b).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins!r}")
    n = util.aval(b).shape[0]
    if n == 0:
        return lax.full(util.aval(x).shape, 0, dtypes.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    up = searchsorted(b, x, side, **kw)
    down = lax.sub(lax.full((), n, dtypes.int32), searchsorted(lax.rev(b, (0,)), x, side, **kw))
    first, last = (lax.reshape(lax.slice(b, (i,), (i + 1,)), ()) for i in (0, n - 1))
    increasing = _total_le(first, last) if util.aval(b).dtype.kind == "c" else lax.ge(last, first)
    return lax.select(lax.broadcast_in_dim(increasing, util.aval(up).shape, ()), up, down)


# ---- partial sorts -----------------------------------------------------------------------------
def _kth(a: Any, kth: Any, axis: int) -> tuple[Any, int, int]:
    a = util.ensure_array(a)
    nd = util.aval(a).ndim
    ax = util.canonical_axis(axis, nd)
    n = util.aval(a).shape[ax]
    k = util.concrete_int(kth, "The kth argument of jnp.partition must be static.")
    if not -n <= k < n:
        raise ValueError(f"kth={k} is out of bounds for axis {ax} with size {n}")
    return a, ax, k % n


def _partition_real(a: Any, name: str) -> None:
    if util.aval(util.ensure_array(a)).dtype.kind == "c":
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """JAX's layout: the kth+1 smallest in ascending order, then the rest in descending order."""
    _partition_real(a, "partition")
    a, ax, k = _kth(a, kth, axis)
    s = sorting.sort(a, ax, True)
    n = util.aval(a).shape[ax]
    lo = util.slice_axis(s, ax, 0, k + 1)
    hi = lax.rev(util.slice_axis(s, ax, k + 1, n), (ax,))
    return lax.concatenate([lo, hi], ax)


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """JAX's layout: indices of the kth+1 smallest (ascending, stable), then the other indices
    in increasing order."""
    _partition_real(a, "argpartition")
    a, ax, k = _kth(a, kth, axis)
    a = lax.transpose(a, (*(i for i in range(util.aval(a).ndim) if i != ax), ax))
    shape = util.aval(a).shape
    last = len(shape) - 1
    n = shape[last]
    order = argsort(a, axis=last)
    bottom = util.slice_axis(order, last, 0, k + 1)
    # which positions are in the bottom part: compare every position with every bottom index
    big = (*shape, k + 1)
    pos = lax.broadcasted_iota(dtypes.int32, big, last)
    in_bottom = lax.reduce_or(
        lax.eq(pos, lax.broadcast_in_dim(bottom, big, (*range(last), last + 1))), (last + 1,)
    )
    rest = argsort(lax.convert_element_type(in_bottom, dtypes.int32), axis=last)
    top = util.slice_axis(rest, last, 0, n - k - 1)
    out = lax.concatenate([bottom, top], last)
    perm = list(range(last))
    perm.insert(ax, last)
    return lax.transpose(out, perm)


# ---- NaN-ignoring quantiles --------------------------------------------------------------------
_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def nanquantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *,
                weights: Any = None) -> Any:  # fmt: skip
    if overwrite_input or out is not None:
        raise ValueError("jax.numpy.nanquantile does not support overwrite_input=True or "
                         "out != None")  # fmt: skip
    if method not in _QUANTILE_METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', or "
                         f"'nearest'; got {method!r}")  # fmt: skip
    if weights is not None:
        raise NotImplementedError("jnp.nanquantile with weights (method='inverted_cdf') is not "
                                  "supported by webjax")  # fmt: skip
    _no_complex(util.ensure_array(a))
    (a,) = util.promote_dtypes_inexact(util.ensure_array(a))
    qa = util.ensure_array(q) if not util.is_scalar(q) else util.convert(q, *util.result_type(q))
    if util.aval(qa).ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {util.aval(qa).shape}")
    shape = util.aval(a).shape
    axes = util.canonical_axes(axis, len(shape))
    keep = [i for i in range(len(shape)) if i not in axes]
    n = math.prod(shape[i] for i in axes)
    kshape = tuple(shape[i] for i in keep)
    flat = lax.reshape(lax.transpose(a, (*keep, *axes)), (*kshape, n))
    s = sorting.sort(flat, len(keep), True)  # NaNs last
    dt = util.aval(s).dtype
    qa = util.convert(qa, dt if util.aval(qa).dtype.kind != "f" else util.aval(qa).dtype)
    qdt = util.aval(qa).dtype
    counts = lax.reduce_sum(lax.convert_element_type(lax.eq(s, s), qdt), (len(keep),))
    qshape = util.aval(qa).shape
    oshape = (*qshape, *kshape)
    nq = len(qshape)
    qb = lax.broadcast_in_dim(qa, oshape, tuple(range(nq)))
    cb = lax.broadcast_in_dim(counts, oshape, tuple(range(nq, len(oshape))))
    pos = lax.mul(qb, lax.sub(cb, lax.full((), 1, qdt)))
    low, high = lax.floor(pos), lax.ceil(pos)
    high_w = lax.sub(pos, low)
    low_w = lax.sub(lax.full((), 1, qdt), high_w)
    top = lax.sub(cb, lax.full((), 1, qdt))
    zero = lax.full((), 0, qdt)
    low_i = lax.convert_element_type(lax.max(zero, lax.min(low, top)), dtypes.int32)
    high_i = lax.convert_element_type(lax.max(zero, lax.min(high, top)), dtypes.int32)
    from .indexing import take_along_axis

    sb = lax.broadcast_in_dim(s, (*oshape, n), tuple(range(nq, len(oshape) + 1)))
    last = len(oshape)

    def pick(i: Any) -> Any:
        return lax.squeeze(take_along_axis(sb, lax.expand_dims(i, (last,)), last), (last,))

    lo_v, hi_v = pick(low_i), pick(high_i)
    if method == "linear":
        res = lax.add(lax.mul(util.convert(lo_v, qdt), low_w), lax.mul(util.convert(hi_v, qdt),
                                                                       high_w))  # fmt: skip
    elif method == "lower":
        res = lo_v
    elif method == "higher":
        res = hi_v
    elif method == "nearest":
        res = lax.select(lax.le(high_w, lax.full((), 0.5, qdt)), lo_v, hi_v)
    else:
        res = lax.mul(lax.add(lo_v, hi_v), lax.full((), 0.5, dt))
    if keepdims:
        res = lax.reshape(res, (*qshape, *(1 if i in axes else d for i, d in enumerate(shape))))
    return res


def nanpercentile(a: Any, q: Any, axis: Any = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                  *, weights: Any = None) -> Any:  # fmt: skip
    q = util.ensure_array(q) if not util.is_scalar(q) else util.convert(q, *util.result_type(q))
    (qf,) = util.promote_dtypes_inexact(q)
    qf = lax.div(qf, lax.full((), 100, util.aval(qf).dtype))
    return nanquantile(a, qf, axis, out, overwrite_input, method, keepdims, weights=weights)


def nanmedian(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:  # fmt: skip
    return nanquantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)
