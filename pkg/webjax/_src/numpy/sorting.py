"""Sorting functions on lax.sort: sort, argsort, lexsort, median, quantile, percentile."""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..lax import lax, sorting, windowed
from . import util
from .indexing import _one_hot_gather, take, take_along_axis


def _prep(a: Any, axis: Any) -> tuple[Any, int]:
    a = util.ensure_array(a)
    if axis is None:
        return lax.reshape(a, (util.aval(a).size,)), 0
    return a, util.canonical_axis(axis, util.aval(a).ndim)


def sort(
    a: Any,
    axis: Any = -1,
    *,
    kind: Any = None,
    order: Any = None,
    stable: bool = True,
    descending: bool = False,
) -> Any:
    util.check_arraylike("sort", a)
    if order is not None:
        raise ValueError("The 'order' argument to sort is not supported.")
    a, ax = _prep(a, axis)
    if util.aval(a).ndim == 0:
        return a
    if descending:
        return lax.rev(sorting.sort(lax.rev(a, (ax,)), ax, True), (ax,))
    return sorting.sort(a, ax, True)


def argsort(
    a: Any,
    axis: Any = -1,
    *,
    kind: Any = None,
    order: Any = None,
    stable: bool = True,
    descending: bool = False,
) -> Any:
    util.check_arraylike("argsort", a)
    if order is not None:
        raise ValueError("The 'order' argument to argsort is not supported.")
    a, ax = _prep(a, axis)
    shape = util.aval(a).shape
    it = dtypes.default_int()  # (int64 under x64, as JAX's)
    iota = lax.broadcasted_iota(it, shape, ax)
    if descending:  # stable descending: sort the reversed array, then map indices back
        n = shape[ax]
        _, idx = sorting.sort((lax.rev(a, (ax,)), iota), ax, True, 1)
        return lax.rev(lax.sub(lax.full((), n - 1, it), idx), (ax,))
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


def quantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> Any:
    util.check_arraylike("quantile", a, q)
    if overwrite_input or out is not None:
        raise ValueError("jax.numpy.quantile does not support overwrite_input=True or out != None")
    return _quantile(a, q, axis, method, keepdims, False, weights)


def percentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> Any:
    util.check_arraylike("percentile", a, q)
    if overwrite_input or out is not None:
        raise ValueError(
            "jax.numpy.percentile does not support overwrite_input=True or out != None"
        )
    return _quantile(a, _percent_to_fraction(q), axis, method, keepdims, False, weights)


def _percent_to_fraction(q: Any) -> Any:
    q = util.ensure_array(q) if not util.is_scalar(q) else util.convert(q, *util.result_type(q))
    (qf,) = util.promote_dtypes_inexact(q)
    return lax.div(qf, lax.full((), 100, util.aval(qf).dtype))


def median(
    a: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    util.check_arraylike("median", a)
    # the midpoint of the middle pair, as JAX: a lone inf stays inf (linear gives inf * 0)
    return quantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def _no_complex(a: Any) -> None:
    if util.aval(a).dtype.kind == "c":
        raise ValueError(
            "quantile does not support complex input, as the operation is poorly defined."
        )


def sort_complex(a: Any) -> Any:
    """Sort along the last axis (real parts, then imaginary parts) and return a complex
    array, as JAX's sort_complex."""
    util.check_arraylike("sort_complex", a)
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


def searchsorted(
    a: Any, v: Any, side: str = "left", sorter: Any = None, *, method: str = "scan"
) -> Any:
    """The insertion point of each query in sorted `a`: a vectorised binary search (log2 len(a)
    gathers), or a compare-and-count reduction with method='compare_all'."""
    util.check_arraylike("searchsorted", a, v)
    if side not in ("left", "right"):
        raise ValueError(
            f"{side!r} is an invalid value for keyword 'side'. Expected one of ['left', 'right']."
        )
    if method not in _SEARCH_METHODS:
        raise ValueError(f"Invalid method={method!r}; expected one of {list(_SEARCH_METHODS)}")
    a = util.ensure_array(a)
    if util.aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = util.promote_dtypes(a, v if util.is_scalar(v) else util.ensure_array(v))
    if sorter is not None:
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
    util.check_arraylike("digitize", x, bins)
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
    util.check_arraylike("partition", a)
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
    util.check_arraylike("partition", a)
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


# ---- quantiles ---------------------------------------------------------------------------------
_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def nanquantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> Any:
    util.check_arraylike("nanquantile", a, q)
    if overwrite_input or out is not None:
        raise ValueError(
            "jax.numpy.nanquantile does not support overwrite_input=True or out != None"
        )
    return _quantile(a, q, axis, method, keepdims, True, weights)


def nanpercentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> Any:
    util.check_arraylike("nanpercentile", a, q)
    if overwrite_input or out is not None:
        raise ValueError(
            "jax.numpy.nanpercentile does not support overwrite_input=True or out != None"
        )
    return _quantile(a, _percent_to_fraction(q), axis, method, keepdims, True, weights)


def _quantile(
    a: Any, q: Any, axis: Any, method: str, keepdims: bool, skip_nans: bool, weights: Any
) -> Any:
    """Quantiles of `a` over `axis` (None: all, or a tuple): the reduced axes are moved last and
    flattened, sorted (NaNs last), and the order statistics around q * (count - 1) picked.
    Without `skip_nans` a NaN anywhere in a slice makes its result NaN, as in JAX."""
    if method not in _QUANTILE_METHODS:
        raise ValueError(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' "
            "or 'inverted_cdf'"
        )
    a = util.ensure_array(a)
    if weights is not None:
        weights = util.ensure_array(weights)
        if util.aval(weights).dtype.kind == "c":
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(
                f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights."
            )
        a, weights = util.promote_dtypes_inexact(a, weights)
    else:
        (a,) = util.promote_dtypes_inexact(a)
    _no_complex(a)
    if keepdims and not util.aval(a).shape and (axis is None or axis == ()):
        a = lax.reshape(a, (1,))  # JAX keeps a 0-d input's dimension as a 1-d one
    shape = util.aval(a).shape
    axes = util.canonical_axes(axis, len(shape))
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    if weights is not None and util.aval(weights).shape != shape:
        if axis is None:
            raise ValueError("Weights shape must match 'a' shape when axis is None.")
        wshape = tuple(shape[i] for i in axes)
        if util.aval(weights).shape != wshape:
            raise ValueError(
                f"Weights shape {util.aval(weights).shape} must match reduction axes {wshape}"
            )
        weights = lax.broadcast_in_dim(weights, shape, axes)
    qa = util.ensure_array(q) if not util.is_scalar(q) else util.convert(q, *util.result_type(q))
    (qa,) = util.promote_dtypes_inexact(qa)
    if util.aval(qa).ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {util.aval(qa).shape}")
    dt = util.aval(a).dtype
    qdt = util.aval(qa).dtype
    keep = [i for i in range(len(shape)) if i not in axes]
    n = math.prod(shape[i] for i in axes)
    kshape = tuple(shape[i] for i in keep)
    k = len(keep)

    def flatten(x: Any) -> Any:
        return lax.reshape(lax.transpose(x, (*keep, *axes)), (*kshape, n))

    flat = flatten(a)
    isnan = lax.ne(flat, flat)
    any_nan = lax.reduce_or(isnan, (k,))
    if weights is not None:
        s, w = sorting.sort((flat, flatten(weights)), k, True, 1)  # NaNs last
    else:
        s, w = sorting.sort(flat, k, True), None
    counts = (
        lax.reduce_sum(lax.convert_element_type(lax.bitwise_not(isnan), qdt), (k,))
        if skip_nans
        else lax.full(kshape, n, qdt)
    )
    qshape = util.aval(qa).shape
    nq = len(qshape)
    oshape = (*qshape, *kshape)
    qb = lax.broadcast_in_dim(qa, oshape, tuple(range(nq)))
    cb = lax.broadcast_in_dim(counts, oshape, tuple(range(nq, len(oshape))))
    sb = lax.broadcast_in_dim(s, (*oshape, n), tuple(range(nq, len(oshape) + 1)))
    last = len(oshape)

    def pick(i: Any) -> Any:
        return lax.squeeze(take_along_axis(sb, lax.expand_dims(i, (last,)), last), (last,))

    zero, one = lax.full((), 0, qdt), lax.full((), 1, qdt)
    top = lax.sub(cb, one)
    if method == "inverted_cdf":
        # the first sorted element whose cumulative weight reaches q * total weight
        ws = w if w is not None else lax.full(util.aval(s).shape, 1, dt)
        bad = lax.bitwise_or(lax.lt(ws, lax.full((), 0, dt)), lax.ne(ws, ws))
        ws = lax.select(lax.bitwise_or(bad, lax.ne(s, s)), lax.full(util.aval(ws).shape, 0, dt), ws)
        cum = windowed.cumsum(ws, k)
        total = lax.squeeze(util.slice_axis(cum, k, n - 1, n), (k,))
        target = lax.mul(
            util.convert(qb, dt), lax.broadcast_in_dim(total, oshape, tuple(range(nq, last)))
        )
        cumb = lax.broadcast_in_dim(cum, (*oshape, n), tuple(range(nq, last + 1)))
        below = lax.lt(cumb, lax.broadcast_in_dim(target, (*oshape, n), tuple(range(last))))
        idx = lax.reduce_sum(lax.convert_element_type(below, dtypes.int32), (last,))
        hi_idx = lax.convert_element_type(top, dtypes.int32)
        idx = lax.max(lax.full((), 0, dtypes.int32), lax.min(idx, hi_idx))
        res = pick(idx)
        bad_any = lax.reduce_or(bad, (k,))
        force = (
            lax.bitwise_or(bad_any, lax.eq(counts, zero))
            if skip_nans
            else lax.bitwise_or(bad_any, any_nan)
        )
    else:
        pos = lax.mul(qb, top)
        low, high = lax.floor(pos), lax.ceil(pos)
        high_w = lax.sub(pos, low)
        low_w = lax.sub(one, high_w)
        low_i = lax.convert_element_type(lax.max(zero, lax.min(low, top)), dtypes.int32)
        high_i = lax.convert_element_type(lax.max(zero, lax.min(high, top)), dtypes.int32)
        lo_v, hi_v = pick(low_i), pick(high_i)
        if method == "linear":
            res = lax.add(
                lax.mul(util.convert(lo_v, qdt), low_w), lax.mul(util.convert(hi_v, qdt), high_w)
            )
        elif method == "lower":
            res = lo_v
        elif method == "higher":
            res = hi_v
        elif method == "nearest":
            res = lax.select(lax.le(high_w, lax.full((), 0.5, qdt)), lo_v, hi_v)
        else:
            res = lax.mul(lax.add(lo_v, hi_v), lax.full((), 0.5, dt))
        force = None if skip_nans else any_nan
    res = util.convert(res, dt)
    if force is not None:
        fb = lax.broadcast_in_dim(force, oshape, tuple(range(nq, last)))
        res = lax.select(fb, lax.full(oshape, math.nan, dt), res)
    if keepdims:
        res = lax.reshape(res, (*qshape, *(1 if i in axes else d for i, d in enumerate(shape))))
    return res


def nanmedian(
    a: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    util.check_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)
