"""Counting, binning, interpolation, covariance, numerical calculus and 1-D convolutions:
bincount, histogram(_bin_edges/2d/dd), interp, cov, corrcoef, trapezoid, gradient, ediff1d,
unwrap, convolve, correlate.

Bin counts are one-hot sums (a compare and a fused reduction, differentiable in the weights);
bin positions come from `searchsorted`; convolutions are `lax.conv_general_dilated`.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..lax import lax, slicing, sorting
from ..lax.convolution import conv_general_dilated
from . import util
from .dtype_info import finfo
from .indexing import _one_hot_gather, where
from .reductions import average, cumsum
from .reductions import sum as _sum
from .shape import concatenate, diff, moveaxis, ravel
from .sorting import searchsorted
from .ufuncs import abs as _abs
from .ufuncs import (
    add,
    divide,
    floor_divide,
    logical_and,
    multiply,
    negative,
    remainder,
    subtract,
    true_divide,
)


def _item(x: Any, i: int) -> Any:
    """x[i] of a 1-D array as a 0-d array (static i, negative allowed)."""
    n = util.aval(x).shape[0]
    i %= n
    return lax.reshape(lax.slice(x, (i,), (i + 1,)), ())


def _onehot_sum(idx: Any, weights: Any, length: int) -> Any:
    """out[j] = sum of weights[i] where idx[i] == j, for 0 <= j < length (others dropped): a
    scatter-add, differentiable in the weights."""
    n = util.aval(idx).shape[0]
    w = weights if util.aval(weights).ndim else lax.broadcast_in_dim(weights, (n,), ())
    dt = util.aval(w).dtype
    dn = slicing.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    where = lax.reshape(lax.convert_element_type(idx, dtypes.int32), (n, 1))
    return slicing.scatter_add(lax.full((length,), 0, dt), where, w, dn, mode="drop")


# ---- counting and binning ----------------------------------------------------------------------
def bincount(
    x: Any,
    weights: Any = None,
    minlength: int = 0,
    *,
    length: int | None = None,
    out_sharding: Any = None,
) -> Any:
    util.check_arraylike("bincount", x)
    x = util.ensure_array(x)
    if util.aval(x).dtype.kind == "b":
        x = lax.convert_element_type(x, dtypes.int32)
    if util.aval(x).dtype.kind not in "iu":
        raise TypeError(
            f"x argument to bincount must have an integer type; got {util.aval(x).dtype}"
        )
    if util.aval(x).ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = util.concrete_int(
        minlength, "The error occurred because of argument 'minlength' of jnp.bincount."
    )
    if length is None:
        xv = util.concrete_array(
            x,
            "The error occurred because of argument 'x' of jnp.bincount."
            " To avoid this error, pass a static `length` argument.",
        )
        vals = xv.tolist()
        length = max(minlength, (max(0, int(max(vals))) + 1) if vals else 0)
    else:
        length = util.concrete_int(
            length, "The error occurred because of argument 'length' of jnp.bincount."
        )
    if weights is None:
        w = lax.full((), 1, dtypes.default_int())
    else:
        w = util.ensure_array(weights)
        if util.aval(w).shape != util.aval(x).shape:
            raise ValueError(
                f"shape of weights must match shape of x. Got x.shape="
                f"{util.aval(x).shape} and weights.shape={util.aval(w).shape}"
            )
        w = util.convert(w, util.aval(w).dtype)  # strongly typed, as JAX's result
    xc = lax.max(x, lax.full((), 0, util.aval(x).dtype))
    return _onehot_sum(xc, w, length)


def _linspace(start: Any, stop: Any, num: int, dt: Any) -> Any:
    """num points from start to stop (0-d arrays, traceable), as JAX's linspace computes them."""
    if num == 1:
        return lax.reshape(start, (1,))
    div = num - 1
    rt = dtypes.component(dt)  # complex ends: real steps
    step = util.convert(lax.div(lax.iota(rt, div), lax.full((), div, rt)), dt)
    out = lax.add(lax.mul(start, lax.sub(lax.full((), 1, dt), step)), lax.mul(stop, step))
    return lax.concatenate([out, lax.reshape(stop, (1,))], 0)


def _inexact(dt: Any) -> Any:
    return dtypes.to_inexact(dt)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:
    util.check_arraylike("histogram_bin_edges", a, bins)
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    arr = util.ensure_array(a)
    dt = _inexact(util.aval(arr).dtype)
    if not util.is_scalar(bins) and util.aval(util.ensure_array(bins)).ndim == 1:
        return util.convert(util.ensure_array(bins), dt)
    nbins = util.concrete_int(
        bins, "The error arose for the bins argument of jnp.histogram_bin_edges()."
    )
    if nbins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    if range is None:
        flat = ravel(arr)
        if util.aval(flat).size == 0:
            lo, hi = lax.full((), 0, dt), lax.full((), 1, dt)
        else:
            lo = util.convert(lax.reduce_min(flat, (0,)), dt)
            hi = util.convert(lax.reduce_max(flat, (0,)), dt)
    else:
        if len(range) != 2:
            raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
        lo, hi = (
            util.convert(util.ensure_array(r) if not util.is_scalar(r) else r, dt) for r in range
        )
    same = lax.eq(lo, hi)
    half = lax.full((), 0.5, dt)
    lo, hi = lax.select(same, lax.sub(lo, half), lo), lax.select(same, lax.add(hi, half), hi)
    return _linspace(lo, hi, nbins + 1, dt)


def _bin_index(x: Any, edges: Any) -> Any:
    """Bin of each x in 1..len(edges)-1 (0 below, len(edges) above; the last edge is closed)."""
    idx = searchsorted(edges, x, side="right")
    n = util.aval(edges).shape[0]
    at_end = lax.eq(x, lax.broadcast_in_dim(_item(edges, -1), util.aval(x).shape, ()))
    return lax.select(at_end, lax.full(util.aval(idx).shape, n - 1, dtypes.int32), idx)


def histogram(
    a: Any,
    bins: Any = 10,
    range: Sequence[Any] | None = None,
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, Any]:
    util.check_arraylike("histogram", a, bins)
    a = util.ensure_array(a)
    if weights is None:
        (a,) = util.promote_dtypes_inexact(a)
        w = lax.full(util.aval(a).shape, 1, util.aval(a).dtype)
    else:
        w = util.ensure_array(weights)
        if util.aval(a).shape != util.aval(w).shape:
            raise ValueError("weights should have the same shape as a.")
        a, w = util.promote_dtypes_inexact(a, w)
    edges = histogram_bin_edges(a, bins, range)
    n = util.aval(edges).shape[0]
    idx = _bin_index(ravel(a), edges)
    counts = util.slice_axis(_onehot_sum(idx, ravel(w), n), 0, 1, n)
    if density:
        widths = diff(edges)
        counts = lax.div(
            lax.div(counts, util.convert(widths, util.aval(counts).dtype)),
            lax.reduce_sum(counts, (0,)),
        )
    return counts, edges


def histogramdd(
    sample: Any,
    bins: Any = 10,
    range: Sequence[Any] | None = None,
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, list[Any]]:
    util.check_arraylike("histogramdd", sample)
    sample = util.ensure_array(sample)
    n, d = util.aval(sample).shape
    if weights is not None:
        w = util.ensure_array(weights)
        if util.aval(w).shape != (n,):
            raise ValueError("should have one weight for each sample.")
        sample, w = util.promote_dtypes_inexact(sample, w)
    else:
        (sample,) = util.promote_dtypes_inexact(sample)
        w = lax.full((n,), 1, dtypes.default_int())  # integer counts, as JAX's bincount
    bins_per_dim = [bins] * d if util.is_scalar(bins) else list(bins)
    if len(bins_per_dim) != d:
        raise ValueError("should be a bin for each dimension.")
    if range is not None and len(range) != d:
        raise ValueError("should be a range for each dimension.")
    edges, flat, sizes = [], None, []
    for i in builtins.range(d):
        col = lax.reshape(lax.slice(sample, (0, i), (n, i + 1)), (n,))
        e = histogram_bin_edges(col, bins_per_dim[i], None if range is None else range[i])
        idx = _bin_index(col, e)
        m = util.aval(e).shape[0] + 1
        flat = idx if flat is None else lax.add(lax.mul(flat, lax.full((), m, dtypes.int32)), idx)
        edges.append(e)
        sizes.append(m)
    hist = lax.reshape(_onehot_sum(flat, w, math.prod(sizes)), tuple(sizes))
    hist = lax.slice(hist, (1,) * d, tuple(s - 1 for s in sizes))
    if density:
        hist = util.convert(hist, util.aval(edges[0]).dtype)
        hist = lax.div(hist, lax.reduce_sum(hist, tuple(builtins.range(d))))
        for i, e in enumerate(edges):
            widths = diff(e)
            hist = lax.div(hist, lax.broadcast_in_dim(widths, util.aval(hist).shape, (i,)))
    return hist, edges


def histogram2d(
    x: Any,
    y: Any,
    bins: Any = 10,
    range: Sequence[Any] | None = None,
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, Any, Any]:
    util.check_arraylike("histogram2d", x, y)
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):  # one array of edges, shared by both axes
        bins = [bins, bins]
    x, y = util.promote_dtypes(util.ensure_array(x), util.ensure_array(y))
    sample = lax.concatenate([lax.expand_dims(v, (1,)) for v in (x, y)], 1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


# ---- interpolation -----------------------------------------------------------------------------
def interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    util.check_arraylike("interp", x, xp, fp)
    x, xp, fp = (util.ensure_array(v) if not util.is_scalar(v) else v for v in (x, xp, fp))
    if util.aval(xp).shape != util.aval(fp).shape or util.aval(xp).ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    for name, side in (("left", left), ("right", right)):
        if isinstance(side, str) and side != "extrapolate":
            raise ValueError(
                f"the only valid string value of `{name}` is 'extrapolate', but got: {side!r}"
            )
    x, xp = util.promote_dtypes_inexact(x, xp)
    (fp,) = util.promote_dtypes_inexact(fp)
    dt = util.aval(xp).dtype
    if period is not None:
        if not util.is_scalar(period) and util.aval(period).ndim != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        per = _abs(util.convert(period, dt))
        x, xp = remainder(x, per), remainder(xp, per)
        xp, fp = sorting.sort((xp, fp), 0, True, 1)
        xp = lax.concatenate(
            [
                lax.reshape(lax.sub(_item(xp, -1), per), (1,)),
                xp,
                lax.reshape(lax.add(_item(xp, 0), per), (1,)),
            ],
            0,
        )
        fp = lax.concatenate(
            [lax.reshape(_item(fp, -1), (1,)), fp, lax.reshape(_item(fp, 0), (1,))], 0
        )
    n = util.aval(xp).shape[0]
    hi = lax.clamp(
        lax.full((), 1, dtypes.int32),
        searchsorted(xp, x, side="right"),
        lax.full((), n - 1, dtypes.int32),
    )
    lo = lax.sub(hi, lax.full((), 1, dtypes.int32))
    x_lo, x_hi = _one_hot_gather(xp, lo, 0), _one_hot_gather(xp, hi, 0)
    f_lo, f_hi = _one_hot_gather(fp, lo, 0), _one_hot_gather(fp, hi, 0)
    # steps up to one ulp of eps (eps**2, as JAX's spacing(eps)) give the left value and keep
    # gradients finite
    eps = finfo(dt).eps
    tiny = lax.le(lax.abs(lax.sub(x_hi, x_lo)), lax.full((), eps * eps, dt))
    dx = lax.select(tiny, lax.full(util.aval(x_lo).shape, 1, dt), lax.sub(x_hi, x_lo))
    slope = lax.div(lax.sub(util.convert(x, dt), x_lo), dx)
    slope = util.convert(slope, util.aval(f_lo).dtype)  # complex fp: a real slope
    f = lax.select(tiny, f_lo, lax.add(f_lo, lax.mul(slope, lax.sub(f_hi, f_lo))))
    if period is None:
        shape = util.aval(f).shape
        xa = util.broadcast_to(util.convert(x, dt), shape)
        if not isinstance(left, str):
            lv = _item(fp, 0) if left is None else util.convert(left, util.aval(f).dtype)
            f = where(lax.lt(xa, lax.broadcast_in_dim(_item(xp, 0), shape, ())), lv, f)
        if not isinstance(right, str):
            rv = _item(fp, -1) if right is None else util.convert(right, util.aval(f).dtype)
            f = where(lax.gt(xa, lax.broadcast_in_dim(_item(xp, -1), shape, ())), rv, f)
    return f


# ---- covariance ----------------------------------------------------------------------------------
def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: Any = None,
    aweights: Any = None,
    dtype: Any = None,
) -> Any:
    util.check_arraylike("cov", m)
    if y is not None:
        util.check_arraylike("cov", y)
    m = util.ensure_array(m)
    if y is not None:
        m, y = util.promote_dtypes_inexact(m, util.ensure_array(y))
        if util.aval(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = util.promote_dtypes_inexact(m)
    m = util.convert(m, util.aval(m).dtype)  # strong, as JAX's result
    if util.aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and dtypes.dtype(dtype).kind not in "fc":
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype!r}")

    def as_rows(v: Any) -> Any:
        v = lax.reshape(v, (1, *util.aval(v).shape)) if util.aval(v).ndim < 2 else v
        return v

    X = as_rows(m)
    if not rowvar and util.aval(m).ndim != 1:
        X = lax.transpose(X, (1, 0))
    if util.aval(X).shape[0] == 0:
        return lax.full((0, 0), 0, dtypes.default_float())
    if y is not None:
        Y = as_rows(util.convert(y, util.aval(X).dtype))
        if not rowvar and util.aval(Y).shape[0] != 1:
            Y = lax.transpose(Y, (1, 0))
        X = lax.concatenate([X, Y], 0)
    k, n = util.aval(X).shape
    if n == 0:
        return lax.full(() if k == 1 else (k, k), math.nan, util.aval(X).dtype)
    if ddof is None:
        ddof = 1 if not bias else 0
    w = None
    if fweights is not None:
        fw = util.ensure_array(fweights)
        if util.aval(fw).ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if util.aval(fw).shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if util.aval(fw).dtype.kind not in "iu":
            raise TypeError("fweights must be integer.")
        w = lax.abs(fw) if util.aval(fw).dtype.kind == "i" else fw
    aw = None
    if aweights is not None:
        aw = util.ensure_array(aweights)
        if util.aval(aw).ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if util.aval(aw).shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aw = lax.abs(aw) if util.aval(aw).dtype.kind != "u" else aw
        w = aw if w is None else multiply(w, aw)
    if dtype is not None:
        dt = dtypes.canonicalize(dtypes.dtype(dtype))
        X = util.convert(X, dt)
        w = None if w is None else util.convert(w, dt)
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = _item(w_sum, 0)
    dt = util.aval(avg).dtype
    if w is None:
        f = lax.full((), n - ddof, dt)
    elif ddof == 0:
        f = w_sum
    elif aw is None:
        f = lax.sub(w_sum, lax.full((), ddof, util.aval(w_sum).dtype))
    else:
        corr = lax.div(_sum(lax.mul(util.convert(w, dt), util.convert(aw, dt))), w_sum)
        f = lax.sub(w_sum, lax.mul(lax.full((), ddof, dt), corr))
    X = lax.sub(util.convert(X, dt), lax.broadcast_in_dim(avg, (k, n), (0,)))
    XW = X if w is None else lax.mul(X, lax.broadcast_in_dim(util.convert(w, dt), (k, n), (1,)))
    if dt.kind == "c":  # X (XW)^H
        XW = lax.conj(XW)
    c = lax.dot_general(X, XW, (((1,), (1,)), ((), ())))
    c = lax.div(c, util.convert(f, dt))
    return lax.reshape(c, ()) if k == 1 else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Any:
    util.check_arraylike("corrcoef", x)
    if dtype is not None and dtypes.dtype(dtype).kind not in "fc":
        raise ValueError(
            f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype!r}"
        )
    c = cov(x, y, rowvar, dtype=dtype)
    shape = util.aval(c).shape
    if len(shape) == 0:
        return lax.div(c, c)
    k = shape[0]
    diag = lax.reduce_sum(
        lax.select(
            lax.eq(
                lax.broadcasted_iota(dtypes.int32, shape, 0),
                lax.broadcasted_iota(dtypes.int32, shape, 1),
            ),
            c,
            lax.full(shape, 0, util.aval(c).dtype),
        ),
        (1,),
    )
    dt = util.aval(c).dtype
    if dt.kind == "c":  # the variances are real: sqrt of the real part, then back to complex
        d = util.convert(lax.sqrt(lax.real(diag)), dt)
    else:
        d = lax.sqrt(diag)
    c = lax.div(c, lax.broadcast_in_dim(d, (k, k), (0,)))
    c = lax.div(c, lax.broadcast_in_dim(d, (k, k), (1,)))
    if dt.kind == "c":  # each part clipped to [-1, 1]
        rt = dtypes.component(dt)
        lo, hi = lax.full((), -1, rt), lax.full((), 1, rt)
        return lax.complex(lax.clamp(lo, lax.real(c), hi), lax.clamp(lo, lax.imag(c), hi))
    return lax.clamp(lax.full((), -1, dt), c, lax.full((), 1, dt))


# ---- numerical calculus ------------------------------------------------------------------------
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    util.check_arraylike("trapezoid", y)
    y = util.ensure_array(y)
    if x is None:
        (ya,) = util.promote_dtypes_inexact(y)
        d = util.ensure_array(dx) if not util.is_scalar(dx) else dx
        if not util.is_scalar(d) and util.aval(d).ndim > 0:
            d = lax.expand_dims(d, tuple(range(util.aval(ya).ndim - util.aval(d).ndim)))
            d = moveaxis(d, axis, -1)
    else:
        ya, xa = util.promote_dtypes_inexact(y, util.ensure_array(x))
        if util.aval(xa).ndim == 1:
            d = diff(xa)
        else:
            d = moveaxis(diff(xa, axis=axis), axis, -1)
    ya = moveaxis(ya, axis, -1)
    nd = util.aval(ya).ndim
    n = util.aval(ya).shape[-1]
    dshape = () if util.is_scalar(d) else util.aval(d).shape
    first, last = util.slice_axis(ya, nd - 1, 0, 1), util.slice_axis(ya, nd - 1, n - 1, n)
    if len(dshape) == 0 or dshape[-1] == 1:
        if len(dshape):
            d = lax.squeeze(d, (len(dshape) - 1,))
        ends = (
            lax.squeeze(lax.add(first, last), (nd - 1,))
            if n
            else lax.full(util.aval(ya).shape[:-1], 0, util.aval(ya).dtype)
        )
        inner = subtract(_sum(ya, axis=-1), multiply(0.5, ends))
        return multiply(d, inner)
    pairs = add(util.slice_axis(ya, nd - 1, 1, n), util.slice_axis(ya, nd - 1, 0, n - 1))
    return multiply(0.5, _sum(multiply(d, pairs), axis=-1))


def gradient(
    f: Any, *varargs: Any, axis: int | Sequence[int] | None = None, edge_order: int | None = None
) -> Any:
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = util.promote_dtypes_inexact(
        util.ensure_array(f), *(v if util.is_scalar(v) else util.ensure_array(v) for v in varargs)
    )
    nd = util.aval(a).ndim
    axes = (
        util.canonical_axes(axis, nd)
        if not isinstance(axis, int)
        else (util.canonical_axis(axis, nd),)
    )
    if not axes:
        return []
    if min(util.aval(a).shape[i] for i in axes) < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least "
            "2 elements are required."
        )
    if not spacing:
        hs: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        hs = spacing * len(axes)
    elif len(spacing) == len(axes):
        hs = list(spacing)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis!r}")

    def along(ax: int, h: Any) -> Any:
        n = util.aval(a).shape[ax]

        def sl(v: Any, lo: int, hi: int) -> Any:
            return util.slice_axis(v, ax, lo, hi)

        upper = subtract(sl(a, 1, 2), sl(a, 0, 1))
        lower = subtract(sl(a, n - 1, n), sl(a, n - 2, n - 1))
        hnd = 0 if util.is_scalar(h) else util.aval(h).ndim
        if hnd == 0:
            inner = divide(multiply(subtract(sl(a, 2, n), sl(a, 0, n - 2)), 0.5), h)
            upper, lower = divide(upper, h), divide(lower, h)
        elif hnd == 1:
            if util.aval(h).shape[0] != n:
                raise ValueError(
                    "Spacing arrays must have the same length as the dimension "
                    "along which the gradient is calculated."
                )
            hb = lax.broadcast_in_dim(h, tuple(n if i == ax else 1 for i in range(nd)), (ax,))
            upper = divide(upper, subtract(sl(hb, 1, 2), sl(hb, 0, 1)))
            lower = divide(lower, subtract(sl(hb, n - 1, n), sl(hb, n - 2, n - 1)))
            dx1 = subtract(sl(hb, 1, n - 1), sl(hb, 0, n - 2))
            dx2 = subtract(sl(hb, 2, n), sl(hb, 1, n - 1))
            ca = divide(negative(dx2), multiply(dx1, add(dx1, dx2)))
            cb = divide(subtract(dx2, dx1), multiply(dx1, dx2))
            cc = divide(dx1, multiply(dx2, add(dx1, dx2)))
            inner = add(
                add(multiply(ca, sl(a, 0, n - 2)), multiply(cb, sl(a, 1, n - 1))),
                multiply(cc, sl(a, 2, n)),
            )
        else:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        return concatenate((upper, inner, lower), axis=ax)

    grads = [along(ax, h) for ax, h in zip(axes, hs)]
    return grads[0] if len(axes) == 1 else grads


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    util.check_arraylike("ediff1d", ary)
    arr = ravel(util.ensure_array(ary))
    n = util.aval(arr).shape[0]
    dt = util.aval(arr).dtype
    out = lax.sub(util.slice_axis(arr, 0, 1, n), util.slice_axis(arr, 0, 0, max(n - 1, 0)))
    parts = [out]
    if to_begin is not None:
        parts.insert(0, ravel(util.convert(util.ensure_array(to_begin), dt)))
    if to_end is not None:
        parts.append(ravel(util.convert(util.ensure_array(to_end), dt)))
    return lax.concatenate(parts, 0) if len(parts) > 1 else out


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * math.pi) -> Any:
    util.check_arraylike("unwrap", p)
    p = util.ensure_array(p)
    p, per = util.promote_dtypes(p, period)
    ax = util.canonical_axis(axis, util.aval(p).ndim)
    n = util.aval(p).shape[ax]
    if n == 0:
        return p
    if discont is None:
        discont = true_divide(per, 2)
    interval = floor_divide(per, 2) if util.aval(p).dtype.kind in "iu" else true_divide(per, 2)
    dd = diff(p, axis=ax)
    ddmod = subtract(remainder(add(dd, interval), per), interval)
    zero = util.convert(0, util.aval(dd).dtype)
    ddmod = where(
        logical_and(
            lax.eq(
                ddmod,
                util.broadcast_to(lax.neg(util.ensure_array(interval)), util.aval(ddmod).shape),
            ),
            lax.gt(dd, zero),
        ),
        interval,
        ddmod,
    )
    correct = where(
        lax.lt(
            _abs(dd),
            util.broadcast_to(util.convert(discont, util.aval(dd).dtype), util.aval(dd).shape),
        ),
        0,
        subtract(ddmod, dd),
    )
    head = util.slice_axis(p, ax, 0, 1)
    tail = add(util.slice_axis(p, ax, 1, n), cumsum(correct, axis=ax))
    return concatenate((head, tail), axis=ax)


# ---- 1-D convolution ---------------------------------------------------------------------------
def _conv(name: str, a: Any, v: Any, mode: str, precision: Any, preferred_element_type: Any) -> Any:
    a, v = util.ensure_array(a), util.ensure_array(v)
    if util.aval(a).ndim != 1 or util.aval(v).ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        a, v = util.promote_dtypes_inexact(a, v)
    else:
        a, v = util.promote_dtypes(a, v)
    na, nv = util.aval(a).shape[0], util.aval(v).shape[0]
    if na == 0 or nv == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {(na,)} and {(nv,)}.")
    reverse_out = False
    if name == "correlate" and util.aval(v).dtype.kind == "c":  # sum a[n + k] conj(v[n])
        v = lax.conj(v)
    if na < nv:
        a, v = v, a
        reverse_out = name == "correlate"
    if name == "convolve":
        v = lax.rev(v, (0,))
    m = util.aval(v).shape[0]
    if mode == "valid":
        pad = (0, 0)
    elif mode == "same":
        pad = (m // 2, m - m // 2 - 1)
    elif mode == "full":
        pad = (m - 1, m - 1)
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = conv_general_dilated(
        lax.reshape(a, (1, 1, util.aval(a).shape[0])),
        lax.reshape(v, (1, 1, m)),
        (1,),
        [pad],
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    out = lax.reshape(out, (util.aval(out).shape[-1],))
    return lax.rev(out, (0,)) if reverse_out else out


def convolve(
    a: Any, v: Any, mode: str = "full", *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    util.check_arraylike("convolve", a, v)
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(
    a: Any,
    v: Any,
    mode: str = "valid",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    util.check_arraylike("correlate", a, v)
    return _conv("correlate", a, v, mode, precision, preferred_element_type)
