"""Reductions: sum, prod, max, min, mean, var, std, all, any, arg{max,min}, nan-variants and
cumulative ones (with axis, dtype, keepdims, where=, initial=).

As in JAX, reductions return strongly typed results (`jnp.sum(2.0)` is not weak).
"""

from __future__ import annotations

import builtins
import math
from typing import Any

from .. import dtypes
from ..dtypes import DType
from ..lax import lax
from . import ufuncs, util


def _strong(x: Any) -> Any:
    x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
    av = util.aval(x)
    return util.convert(x, av.dtype) if av.weak_type else x


def _upcast_small_int(dt: DType) -> DType:
    """sum/prod accumulate bools and small ints in the default int (as NumPy and JAX)."""
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < dtypes.default_int().itemsize):
        return dtypes.default_int()
    if dt.kind == "u" and dt.itemsize < dtypes.default_int().itemsize:
        return dtypes.canonicalize(
            dtypes.uint64 if dtypes.default_int().itemsize == 8 else dtypes.uint32
        )
    return dt


def _keep(out: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return out
    return lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _identity(name: str, dt: DType) -> Any:
    if name == "sum":
        return 0
    if name == "prod":
        return 1
    if dt.kind == "c":  # lexicographic order: the real part decides first
        return complex(-math.inf, -math.inf) if name == "max" else complex(math.inf, math.inf)
    if dt.kind == "f":
        return -math.inf if name == "max" else math.inf
    if dt.kind == "b":
        return name != "max"
    lo, hi = dtypes.iinfo_bounds(dt)
    return lo if name == "max" else hi


_LAX = {"sum": lax.reduce_sum, "prod": lax.reduce_prod, "max": lax.reduce_max,
        "min": lax.reduce_min}  # fmt: skip
_COMBINE = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}


def _reduce(
    name: str,
    a: Any,
    axis: Any,
    dtype: Any,
    out: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
    upcast: bool,
) -> Any:
    util.check_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = _strong(a)
    av = util.aval(a)
    axes = util.canonical_axes(axis, av.ndim)
    if dtype is not None:
        dt = dtypes.canonicalize_user(dtype, name)
    else:
        dt = _upcast_small_int(av.dtype) if upcast else av.dtype
    if dt.kind == "b" and name in ("sum", "prod"):
        dt = dtypes.default_int()
    a = util.convert(a, dt)
    has_identity = name in ("sum", "prod")
    if where is not None:
        if not has_identity and initial is None:
            raise ValueError(
                f"reduction operation {name} does not have an identity, so to use "
                "a where mask one has to specify 'initial'"
            )
        mask = util.broadcast_to(util.convert(where, dtypes.bool_), av.shape)
        a = lax.select(mask, a, lax.full(av.shape, _identity(name, dt), dt))
    elif not has_identity and initial is None and 0 in [av.shape[i] for i in axes]:
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    res = _LAX[name](a, axes)
    if initial is not None:
        res = _COMBINE[name](res, lax.full((), _host(initial), dt))
    return _keep(res, av.shape, axes, keepdims)


def _host(v: Any) -> Any:
    if util.is_scalar(v):
        return v
    return v.item() if hasattr(v, "item") else v


def sum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
    promote_integers: bool = True,
) -> Any:
    return _reduce("sum", a, axis, dtype, out, keepdims, initial, where, promote_integers)


def prod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
    promote_integers: bool = True,
) -> Any:
    return _reduce("prod", a, axis, dtype, out, keepdims, initial, where, promote_integers)


def max(
    a: Any,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    return _reduce("max", a, axis, None, out, keepdims, initial, where, False)


def min(
    a: Any,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    return _reduce("min", a, axis, None, out, keepdims, initial, where, False)


amax, amin = max, min


def ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    util.check_arraylike("ptp", a)
    return lax.sub(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


def _boolean(name: str, fn: Any, empty: bool) -> Any:
    def op(
        a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = None
    ) -> Any:
        util.check_arraylike(name, a)
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        # JAX converts with lax (a complex number's real part decides), unlike logical_*
        a = lax.convert_element_type(_strong(a), dtypes.bool_)
        av = util.aval(a)
        axes = util.canonical_axes(axis, av.ndim)
        if where is not None:
            mask = util.broadcast_to(util.convert(where, dtypes.bool_), av.shape)
            a = lax.select(mask, a, lax.full(av.shape, empty, dtypes.bool_))
        return _keep(fn(a, axes), av.shape, axes, keepdims)

    op.__name__ = name
    return op


all = _boolean("all", lax.reduce_and, True)
any = _boolean("any", lax.reduce_or, False)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    util.check_arraylike("count_nonzero", a)
    nz = lax.ne(util.convert(_strong(a), dtypes.bool_), lax.full((), False, dtypes.bool_))
    return sum(nz, axis=axis, keepdims=keepdims, dtype=dtypes.default_int())


def _count(
    shape: tuple[int, ...], axes: tuple[int, ...], where: Any, keepdims: bool, dt: DType
) -> Any:
    if where is None:
        n = math.prod(shape[i] for i in axes)
        return lax.full((), n, dt)
    mask = util.broadcast_to(util.convert(where, dtypes.bool_), shape)
    return _keep(lax.reduce_sum(util.convert(mask, dt), axes), shape, axes, keepdims)


def _inexact_dtype(av_dtype: DType, dtype: Any, name: str | None = None) -> DType:
    if dtype is not None:
        return dtypes.canonicalize_user(dtype, name)
    return dtypes.to_inexact(av_dtype)


def mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: Any = None,
) -> Any:
    util.check_arraylike("mean", a)
    a = _strong(a)
    av = util.aval(a)
    axes = util.canonical_axes(axis, av.ndim)
    dt = _inexact_dtype(av.dtype, dtype, "mean")
    s = sum(util.convert(a, dt), axis=axes, out=out, keepdims=keepdims, where=where)
    if where is None and math.prod(av.shape[i] for i in axes) == 1:
        return s  # XLA folds x / 1 to x (a complex division by 1 + 0i would make -1 + inf i NaN)
    return lax.div(s, _count(av.shape, axes, where, keepdims, dt))


def var(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: Any = None,
    mean: Any = None,
    correction: Any = None,
) -> Any:
    util.check_arraylike("var", a)
    if correction is not None:
        ddof = correction
    a = _strong(a)
    av = util.aval(a)
    axes = util.canonical_axes(axis, av.ndim)
    # computed in the inexact type; complex inputs give a real variance (of |x - mean|^2),
    # complex again only when `dtype` asks for it
    dt = _inexact_dtype(av.dtype, dtype, "var")
    out_dt = dt if dtype is not None else dtypes.component(dt)
    a = util.convert(a, dt)
    mu = _mean_fn(a, axes, None, None, True, where=where) if mean is None else mean
    centered = lax.sub(a, util.broadcast_to(util.convert(mu, dt), av.shape))
    rt = dtypes.component(dt)
    sq = _abs2(centered)
    sq = sum(sq, axis=axes, out=out, keepdims=keepdims, where=where)
    n = _count(av.shape, axes, where, keepdims, rt)
    res = _over_dof(sq, lax.sub(n, lax.full((), ddof, rt)))
    return util.convert(res, out_dt)


def _over_dof(sq: Any, dof: Any) -> Any:
    """sq / dof, NaN where there are no degrees of freedom left (ddof >= n), as JAX."""
    dof = util.broadcast_to(dof, util.aval(sq).shape)
    nan = lax.full(util.aval(sq).shape, math.nan, util.aval(sq).dtype)
    return lax.select(lax.gt(dof, util.lax_const(0, dof)), lax.div(sq, dof), nan)


def _abs2(x: Any) -> Any:
    """|x|^2 (real for complex x)."""
    if util.aval(x).dtype.kind == "c":
        re, im = lax.real(x), lax.imag(x)
        return lax.add(lax.mul(re, re), lax.mul(im, im))
    return lax.integer_pow(x, 2)


_mean_fn = mean


def std(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: Any = None,
    mean: Any = None,
    correction: Any = None,
) -> Any:
    util.check_arraylike("std", a)
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    return lax.sqrt(v)


def average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, keepdims: bool = False
) -> Any:
    a = _strong(a)
    av = util.aval(a)
    if weights is None:
        avg = _mean_fn(a, axis, keepdims=keepdims)
        axes = util.canonical_axes(axis, av.ndim)
        wsum = lax.full(
            util.aval(avg).shape, math.prod(av.shape[i] for i in axes), util.aval(avg).dtype
        )
        return (avg, wsum) if returned else avg
    w = _strong(weights)
    wav = util.aval(w)
    dt = _inexact_dtype(util.result_type(a, w)[0], None)
    a, w = util.convert(a, dt), util.convert(w, dt)
    if wav.shape != av.shape:
        if axis is None:
            raise ValueError("Axis must be specified when shapes of a and weights differ.")
        if wav.ndim != 1:
            raise ValueError("1D weights expected when shapes of a and weights differ.")
        ax = util.canonical_axis(axis, av.ndim)
        if wav.shape[0] != av.shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        w = lax.broadcast_in_dim(w, av.shape, (ax,))
    wsum = sum(w, axis=axis, keepdims=keepdims)
    avg = lax.div(sum(lax.mul(a, w), axis=axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg


# ---- nan-ignoring variants ---------------------------------------------------------------------
def _nan_replaced(a: Any, value: Any) -> Any:
    a = _strong(a)
    if util.aval(a).dtype.kind not in "fc":
        return a
    return lax.select(ufuncs.isnan(a), lax.full(util.aval(a).shape, value, util.aval(a).dtype), a)


def nansum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    util.check_arraylike("nansum", a)
    return sum(_nan_replaced(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    util.check_arraylike("nanprod", a)
    return prod(_nan_replaced(a, 1), axis, dtype, out, keepdims, initial, where)


def _nan_extremum(name: str, fn: Any) -> Any:
    def op(
        a: Any,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        util.check_arraylike(name, a)
        a = _strong(a)
        dt = util.aval(a).dtype
        if dt.kind not in "fc":
            return fn(a, axis, out, keepdims, initial, where)
        res = fn(_nan_replaced(a, _identity(name[3:], dt)), axis, out, keepdims, initial, where)
        all_nan = all(ufuncs.isnan(a), axis=axis, keepdims=keepdims)
        return lax.select(all_nan, lax.full(util.aval(res).shape, math.nan, dt), res)

    op.__name__ = name
    return op


nanmax = _nan_extremum("nanmax", max)
nanmin = _nan_extremum("nanmin", min)


def nanmean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    where: Any = None,
) -> Any:
    util.check_arraylike("nanmean", a)
    a = _strong(a)
    av = util.aval(a)
    if av.dtype.kind not in "fc":
        return mean(a, axis, dtype, out, keepdims, where=where)
    dt = _inexact_dtype(av.dtype, dtype, "nanmean")
    valid = ufuncs.logical_not(ufuncs.isnan(a))
    if where is not None:
        valid = lax.bitwise_and(
            valid, util.broadcast_to(util.convert(where, dtypes.bool_), av.shape)
        )
    s = sum(util.convert(_nan_replaced(a, 0), dt), axis=axis, keepdims=keepdims, where=where)
    return lax.div(s, sum(valid, axis=axis, keepdims=keepdims, dtype=dt))


def nanvar(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    where: Any = None,
) -> Any:
    util.check_arraylike("nanvar", a)
    a = _strong(a)
    av = util.aval(a)
    dt = _inexact_dtype(av.dtype, dtype, "nanvar")
    a = util.convert(a, dt)
    axes = util.canonical_axes(axis, av.ndim)
    valid = ufuncs.logical_not(ufuncs.isnan(a))
    if where is not None:
        valid = lax.bitwise_and(
            valid, util.broadcast_to(util.convert(where, dtypes.bool_), av.shape)
        )
    mu = nanmean(a, axes, keepdims=True, where=where)
    centered = lax.sub(a, util.broadcast_to(mu, av.shape))
    rt = dtypes.component(dt)
    sq = sum(_nan_replaced(_abs2(centered), 0), axes, keepdims=keepdims, where=valid)
    n = sum(valid, axes, keepdims=keepdims, dtype=rt)
    return _over_dof(sq, lax.sub(n, lax.full((), ddof, rt)))


def nanstd(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    where: Any = None,
) -> Any:
    util.check_arraylike("nanstd", a)
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where))


# ---- argmax / argmin ---------------------------------------------------------------------------
def _arg_extremum(name: str, reduce_fn: Any) -> Any:
    def op(a: Any, axis: Any = None, out: None = None, keepdims: Any = None) -> Any:
        util.check_arraylike(name, a)
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        a = _strong(a)
        av = util.aval(a)
        if av.dtype.kind == "c":
            raise TypeError(
                f"{'gt' if name.endswith('max') else 'lt'} does not accept dtype "
                f"{av.dtype.name} at position 0. Accepted dtypes at position 0 are "
                "subtypes of integer, floating, bool."
            )
        if axis is None:
            a, ax = lax.reshape(a, (av.size,)), 0
        else:
            ax = util.canonical_axis(axis, av.ndim)
        shape = util.aval(a).shape
        n = shape[ax] if shape else 1
        if n == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        if not shape:
            a, shape = lax.reshape(a, (1,)), (1,)
        ext = lax.broadcast_in_dim(
            reduce_fn(a, (ax,)), shape, tuple(i for i in range(len(shape)) if i != ax)
        )
        hit = lax.eq(a, ext)
        if util.aval(a).dtype.kind == "f":  # the first nan wins, as in NumPy and JAX
            hit = lax.bitwise_or(hit, ufuncs.isnan(a))
        idx = lax.broadcasted_iota(dtypes.default_int(), shape, ax)
        res = lax.reduce_min(lax.select(hit, idx, lax.full(shape, n, dtypes.default_int())), (ax,))
        if keepdims:
            out_shape = (
                (1,) * av.ndim
                if axis is None
                else tuple(1 if i == ax else d for i, d in enumerate(av.shape))
            )
            res = lax.reshape(res, out_shape)
        return res

    op.__name__ = name
    return op


argmax = _arg_extremum("argmax", lax.reduce_max)
argmin = _arg_extremum("argmin", lax.reduce_min)


def _nanarg(name: str, fn: Any, fill: float) -> Any:
    def op(a: Any, axis: Any = None, out: None = None, keepdims: Any = None) -> Any:
        util.check_arraylike(name, a)
        a = _strong(a)
        if util.aval(a).dtype.kind != "f":  # complex: argmax raises JAX's TypeError
            return fn(a, axis, out, keepdims)
        nan = ufuncs.isnan(a)
        res = fn(
            lax.select(nan, lax.full(util.aval(a).shape, fill, util.aval(a).dtype), a),
            axis,
            out,
            keepdims,
        )
        all_nan = all(nan, axis=axis, keepdims=bool(keepdims))
        return lax.select(all_nan, lax.full(util.aval(res).shape, -1, util.aval(res).dtype), res)

    op.__name__ = name
    return op


nanargmax = _nanarg("nanargmax", argmax, -math.inf)
nanargmin = _nanarg("nanargmin", argmin, math.inf)


# ---- cumulative reductions ---------------------------------------------------------------------
def _shift(x: Any, axis: int, k: int, fill: Any) -> Any:
    """x moved k places along axis toward higher indices, `fill` flowing in."""
    shape = util.aval(x).shape
    hi = list(shape)
    hi[axis] -= k
    head = list(shape)
    head[axis] = k
    body = lax.slice(x, (0,) * len(shape), hi)
    return lax.concatenate([lax.full(head, fill, util.aval(x).dtype), body], axis)


def _associative_scan(combine: Any, x: Any, axis: int, identity: Any) -> Any:
    """Inclusive scan by recursive doubling (Hillis-Steele): log2(n) shifted combines.

    Built only of pad and elementwise ops, so it is differentiable, vmappable and jittable.
    """
    n = util.aval(x).shape[axis]
    k = 1
    while k < n:
        x = combine(x, _shift(x, axis, k, identity))
        k *= 2
    return x


def _cumulative(name: str, combine: Any, reduce_name: str, nan_value: Any = None) -> Any:
    def op(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
        util.check_arraylike(name, a)
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        a = _strong(a)
        if nan_value is not None:
            a = _nan_replaced(a, nan_value)
        if axis is None:  # (an axis of a 0-d array is out of bounds, as in JAX)
            a, axis = lax.reshape(a, (util.aval(a).size,)), 0
        ax = util.canonical_axis(axis, util.aval(a).ndim)
        dt = dtypes.canonicalize_user(dtype, name) if dtype is not None else util.aval(a).dtype
        if dt.kind == "b":
            dt = dtypes.default_int()
        if dt in dtypes.NARROW and dt.kind == "f":  # a scan rounds in another order
            raise NotImplementedError(
                f"webjax does not implement jnp.{name} for {dt.name}: XLA accumulates narrow "
                "floats one element at a time, rounding each partial result"
            )
        a = util.convert(a, dt)
        return _associative_scan(combine, a, ax, _identity(reduce_name, dt))

    op.__name__ = name
    return op


cumsum = _cumulative("cumsum", lax.add, "sum")
cumprod = _cumulative("cumprod", lax.mul, "prod")
nancumsum = _cumulative("nancumsum", lax.add, "sum", 0)
nancumprod = _cumulative("nancumprod", lax.mul, "prod", 1)
cumulative_sum_ = cumsum


def _cumulative_api(fn: Any, name: str) -> Any:
    def op(x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False) -> Any:
        util.check_arraylike(name, x)
        x = _strong(x)
        nd = util.aval(x).ndim
        if axis is None:
            if nd > 1:
                raise ValueError(
                    f"The input array has rank {nd}, however axis was not set "
                    "to an explicit value. The axis argument is only optional "
                    "for one-dimensional arrays."
                )
            axis = 0
        if name == "cumulative_sum" and dtype is None:
            # small integers accumulate as in `sum` (JAX's cumulative_prod keeps the dtype)
            dtype = _upcast_small_int(util.aval(x).dtype)
        res = fn(x, axis, dtype)
        if include_initial:
            ax = util.canonical_axis(axis, util.aval(res).ndim)
            cfg = [(0, 0, 0)] * util.aval(res).ndim
            cfg[ax] = (1, 0, 0)
            ident = 0 if name == "cumulative_sum" else 1
            res = lax.pad(res, lax.full((), ident, util.aval(res).dtype), cfg)
        return res

    op.__name__ = name
    return op


cumulative_sum = _cumulative_api(cumsum, "cumulative_sum")
cumulative_prod = _cumulative_api(cumprod, "cumulative_prod")
del cumulative_sum_, builtins
