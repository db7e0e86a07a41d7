"""Special functions (`jax.scipy.special`) written on lax, with JAX's edge-case semantics."""

from __future__ import annotations

import math
from typing import Any

from . import dtypes
from .custom_derivatives import custom_jvp
from .jit import eager_jit
from .lax import lax
from .numpy import util


def _float(x: Any) -> Any:
    x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
    a = util.aval(x)
    if a.dtype.kind != "f":
        x = util.convert(x, dtypes.default_float(), a.weak_type)
    return x


def _c(v: float, like: Any) -> Any:
    return lax.full((), v, util.aval(like).dtype)


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
    shape, dt = util.aval(x).shape, util.aval(x).dtype
    ok = lax.bitwise_or(lax.ne(x, _c(0.0, x)), lax.ne(y, y))
    return lax.select(ok, lax.mul(x, log_fn(y)), lax.full(shape, 0.0, dt))


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
    shape, dt = util.aval(x).shape, util.aval(x).dtype
    return lax.select(lax.lt(x, _c(0.0, x)), lax.full(shape, -math.inf, dt),
                      lax.neg(_xlogx(x)))  # fmt: skip


def ndtr(x: Any) -> Any:
    x = _float(x)
    return lax.mul(_c(0.5, x), lax.erfc(lax.mul(x, _c(-1.0 / math.sqrt(2.0), x))))


def log_ndtr(x: Any) -> Any:
    """log of the normal CDF; the tail uses log(erfc) directly (fine to about x = -25)."""
    x = _float(x)
    return lax.log(ndtr(x))


def ndtri(p: Any) -> Any:
    p = _float(p)
    return lax.mul(_c(math.sqrt(2.0), p), lax.erf_inv(lax.sub(lax.mul(_c(2.0, p), p), _c(1.0, p))))


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
    out = lax.add(lax.log(lax.abs(s) if b is not None else s), amax)
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
        out = lax.reshape(out, shape)
        sign = lax.reshape(sign, shape)
    if return_sign:
        return out, sign
    return out
