"""Special functions (`jax.scipy.special`) written on lax, with JAX's edge-case semantics."""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..custom_derivatives import custom_jvp
from ..jit import eager_jit
from ..lax import lax
from ..numpy import util


def _float(x: Any) -> Any:
    x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
    a = util.aval(x)
    if a.dtype.kind != "f":
        x = util.convert(x, dtypes.default_float(), a.weak_type)
    return x


def _c(v: float, like: Any) -> Any:
    return util.lax_const(v, like)


def erf(x: Any) -> Any:
    return lax.erf(_float(x))


def erfc(x: Any) -> Any:
    return lax.erfc(_float(x))


def erfinv(x: Any) -> Any:
    return lax.erf_inv(_float(x))


def gammaln(x: Any) -> Any:
    return lax.lgamma(_float(x))


def digamma(x: Any) -> Any:
    return lax.digamma(_float(x))


def expit(x: Any) -> Any:
    return lax.logistic(_float(x))


@custom_jvp
def _logit(x: Any) -> Any:
    return lax.log(lax.div(x, lax.sub(_c(1.0, x), x)))


_logit.defjvps(lambda t, _, x: lax.div(t, lax.mul(x, lax.sub(_c(1.0, x), x))))


def logit(x: Any) -> Any:
    """log(x / (1 - x)), with JAX's derivative 1 / (x (1 - x))."""
    return _logit(_float(x))


def _x_times(name: str, log_fn: Any, x: Any, y: Any) -> Any:
    """x * log_fn(y), 0 where x == 0 unless y is NaN (JAX's and scipy's convention)."""
    av = util.aval(x)
    ok = lax.bitwise_or(lax.ne(x, _c(0.0, x)), lax.ne(y, y))
    return lax.select(ok, lax.mul(x, log_fn(y)), lax.full(av.shape, 0.0, av.dtype, av.weak_type))


@custom_jvp
def _xlogy(x: Any, y: Any) -> Any:
    return _x_times("xlogy", lax.log, x, y)


@custom_jvp
def _xlog1py(x: Any, y: Any) -> Any:
    return _x_times("xlog1py", lax.log1p, x, y)


def _xlogy_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x, y), (xd, yd) = primals, tangents
    return _xlogy(x, y), lax.add(lax.mul(xd, lax.log(y)), lax.div(lax.mul(yd, x), y))


def _xlog1py_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x, y), (xd, yd) = primals, tangents
    d = lax.div(lax.mul(yd, x), lax.add(_c(1.0, y), y))
    return _xlog1py(x, y), lax.add(lax.mul(xd, lax.log1p(y)), d)


_xlogy.defjvp(_xlogy_jvp)
_xlog1py.defjvp(_xlog1py_jvp)


def _promote_float(name: str, x: Any, y: Any) -> list[Any]:
    x, y = util.promote_args(name, _float(x), _float(y))
    shape = util.broadcast_shapes(util.aval(x).shape, util.aval(y).shape)
    return [util.broadcast_to(x, shape), util.broadcast_to(y, shape)]


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), with 0 where x == 0 (JAX's convention; NaN y still propagates)."""
    return _xlogy(*_promote_float("xlogy", x, y))


def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), with 0 where x == 0 (NaN y still propagates)."""
    return _xlog1py(*_promote_float("xlog1py", x, y))


@custom_jvp
def _xlogx(x: Any) -> Any:
    return _xlogy(x, x)


_xlogx.defjvps(lambda t, _, x: lax.mul(t, lax.add(lax.log(x), _c(1.0, x))))


def entr(x: Any) -> Any:
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0 (derivative -(log x + 1), as JAX)."""
    x = _float(x)
    av = util.aval(x)
    return lax.select(lax.lt(x, _c(0.0, x)), lax.full(av.shape, -math.inf, av.dtype, av.weak_type),
                      lax.neg(_xlogx(x)))  # fmt: skip


def _ndtr_arg(x: Any, name: str = "ndtr") -> Any:
    """JAX's ndtr family take float32/float64 only (a Python float becomes a strong array)."""
    x = util.ensure_array(x)
    dt = util.aval(x).dtype
    if dt not in (dtypes.float32, dtypes.float64):
        extra = "" if name == "log_ndtr" else ", see docstring for supported types"
        raise TypeError(f"x.dtype={dt.name} is not supported{extra}.")
    return util.convert(x, dt, False)


def ndtr(x: Any) -> Any:
    x = _ndtr_arg(x)
    return lax.mul(_c(0.5, x), lax.erfc(lax.mul(x, _c(-1.0 / math.sqrt(2.0), x))))


def _log_ndtr_value(x: Any) -> Any:
    """log Phi(x) in three pieces: log1p(-Phi(-x)) above 5 (Phi near 1), log Phi(x) between,
    and below -5 log(1/2) - x^2/2 + log erfcx(-x / sqrt 2), with Phi(x) = erfc(-x / sqrt 2) / 2
    = e^(-x^2/2) erfcx(-x / sqrt 2) / 2, which never underflows."""
    from .special_functions import _erfcx_value

    lo, hi = _c(-5.0, x), _c(5.0, x)
    mid_x = lax.clamp(lo, x, hi)
    mid = lax.log(ndtr(mid_x))
    up_x = lax.max(x, hi)
    upper = lax.log1p(lax.neg(ndtr(lax.neg(up_x))))
    low_x = lax.min(x, lo)
    scaled = _erfcx_value(lax.mul(low_x, _c(-1.0 / math.sqrt(2.0), x)))
    lower = lax.add(lax.sub(_c(math.log(0.5), x), lax.mul(_c(0.5, x), lax.mul(low_x, low_x))),
                    lax.log(scaled))  # fmt: skip
    return lax.select(lax.lt(x, lo), lower, lax.select(lax.gt(x, hi), upper, mid))


@custom_jvp
def _log_ndtr(x: Any) -> Any:
    return _log_ndtr_value(x)


def _log_ndtr_jvp(t: Any, y: Any, x: Any) -> Any:
    """d/dx log Phi(x) = phi(x) / Phi(x): exp(log phi(x) - log Phi(x)), and below -5, where that
    difference cancels, sqrt(2 / pi) / erfcx(-x / sqrt 2)."""
    from .special_functions import _erfcx_value

    log_pdf = lax.sub(lax.mul(_c(-0.5, x), lax.mul(x, x)), _c(0.5 * math.log(2 * math.pi), x))
    direct = lax.exp(lax.sub(log_pdf, y))
    lo = _c(-5.0, x)
    scaled = _erfcx_value(lax.mul(lax.min(x, lo), _c(-1.0 / math.sqrt(2.0), x)))
    tail = lax.div(_c(math.sqrt(2.0 / math.pi), x), scaled)
    return lax.mul(t, lax.select(lax.lt(x, lo), tail, direct))


_log_ndtr.defjvps(_log_ndtr_jvp)


def log_ndtr(x: Any) -> Any:
    """log of the normal CDF, accurate in both tails (x = -100 gives about -5005.5)."""
    return _log_ndtr(_ndtr_arg(x, "log_ndtr"))


def _fill(v: float, like: Any) -> Any:
    av = util.aval(like)
    return lax.full(av.shape, v, av.dtype, av.weak_type)


def _ndtri_value(p: Any) -> Any:
    """Phi^-1(p) from the lower tail q = min(p, 1 - p): sqrt(2) erfinv(2q - 1) (or, for tiny q,
    where 2q - 1 rounds to -1, the asymptotic -sqrt(t - log t - log 2 pi), t = -2 log q),
    refined by Newton steps on log Phi(x) = log q, which keep full relative accuracy in q."""
    one, half = _c(1.0, p), _c(0.5, p)
    upper = lax.gt(p, half)
    q = lax.select(upper, lax.sub(one, p), p)
    zero = _c(0.0, q)
    safe_q = lax.select(lax.gt(q, zero), q, _fill(0.25, q))  # q == 0 gives -inf below
    log_q = lax.log(safe_q)
    central = lax.mul(_c(math.sqrt(2.0), q), lax.erf_inv(lax.sub(lax.add(safe_q, safe_q), one)))
    t = lax.mul(_c(-2.0, q), log_q)
    tail = lax.neg(lax.sqrt(lax.sub(lax.sub(t, lax.log(t)), _c(math.log(2 * math.pi), q))))
    x = lax.select(lax.lt(safe_q, _c(1e-5, q)), tail, central)
    tiny = lax.lt(safe_q, _c(0.02, q))  # where 2q - 1 loses digits: refine
    for _ in range(4):
        log_cdf = lax.log(lax.mul(half, lax.erfc(lax.mul(x, _c(-1.0 / math.sqrt(2.0), x)))))
        log_pdf = lax.sub(lax.mul(_c(-0.5, x), lax.mul(x, x)), _c(0.5 * math.log(2 * math.pi), x))
        step = lax.mul(lax.sub(log_cdf, log_q), lax.exp(lax.sub(log_cdf, log_pdf)))
        x = lax.select(tiny, lax.sub(x, step), x)
    x = lax.select(lax.eq(q, zero), _fill(-math.inf, q), x)
    x = lax.select(upper, lax.neg(x), x)
    bad = lax.bitwise_or(lax.bitwise_or(lax.lt(p, zero), lax.gt(p, one)), lax.ne(p, p))
    return lax.select(bad, _fill(math.nan, p), x)


@custom_jvp
def _ndtri(p: Any) -> Any:
    return _ndtri_value(p)


def _ndtri_jvp(t: Any, x: Any, p: Any) -> Any:
    """dx/dp = 1 / phi(x) = sqrt(2 pi) exp(x^2 / 2); 0 at p = 0 and 1 (infinite x), as JAX."""
    d = lax.mul(_c(math.sqrt(2 * math.pi), x), lax.exp(lax.mul(_c(0.5, x), lax.mul(x, x))))
    return lax.mul(t, lax.select(lax.is_finite(x), d, _fill(0.0, x)))


_ndtri.defjvps(_ndtri_jvp)


def ndtri(p: Any) -> Any:
    """The inverse of the standard normal CDF (NaN outside [0, 1])."""
    return _ndtri(_ndtr_arg(p, "ndtri"))


@eager_jit(static_argnames=("axis", "keepdims", "return_sign"))
def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:  # fmt: skip
    """log(sum(b * exp(a))) computed stably (the max is shifted out and stop-gradient'ed)."""
    a = _float(a)
    av = util.aval(a)
    mask = None
    if where is not None:
        w = lax.convert_element_type(util.ensure_array(where), dtypes.bool_)
        mask = util.broadcast_to(w, av.shape)
        a = lax.select(mask, a, lax.full(av.shape, -math.inf, av.dtype))
    axes = util.canonical_axes(axis, av.ndim)
    kept = tuple(i for i in range(av.ndim) if i not in axes)
    amax = lax.reduce_max(a, axes) if axes else a
    finite = lax.is_finite(amax)
    amax = lax.stop_gradient(lax.select(finite, amax, lax.full(util.aval(amax).shape, 0.0,
                                                                 av.dtype)))  # fmt: skip
    shifted = lax.sub(a, lax.broadcast_in_dim(amax, av.shape, kept))
    e = lax.exp(shifted)
    if mask is not None:
        e = lax.select(mask, e, lax.full(av.shape, 0.0, av.dtype))
    if b is not None:
        e, bb = util.promote_args("logsumexp", e, b)
        e = lax.mul(e, bb)
    s = lax.reduce_sum(e, axes) if axes else e
    sign = lax.sign(s)
    # with b, a negative sum has no real log: NaN, unless the sign is asked for
    out = lax.add(lax.log(lax.abs(s) if return_sign else s), amax)
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
        out = lax.reshape(out, shape)
        sign = lax.reshape(sign, shape)
    if return_sign:
        return out, sign
    return out
