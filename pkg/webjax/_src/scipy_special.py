"""Special functions (`jax.scipy.special`) written on lax, with JAX's edge-case semantics."""

from __future__ import annotations

import math
from typing import Any

from . import dtypes
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


def logit(x: Any) -> Any:
    x = _float(x)
    return lax.log(lax.div(x, lax.sub(_c(1.0, x), x)))


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), with 0 where x == 0 (JAX's convention)."""
    x, y = util.promote_args("xlogy", _float(x), _float(y))
    zero = _c(0.0, x)
    safe_y = lax.select(lax.eq(x, zero), lax.full(util.aval(y).shape, 1.0, util.aval(y).dtype), y)
    return lax.select(lax.eq(x, zero), lax.full(util.aval(x).shape, 0.0, util.aval(x).dtype),
                      lax.mul(x, lax.log(safe_y)))  # fmt: skip


def xlog1py(x: Any, y: Any) -> Any:
    x, y = util.promote_args("xlog1py", _float(x), _float(y))
    zero = _c(0.0, x)
    safe_y = lax.select(lax.eq(x, zero), lax.full(util.aval(y).shape, 0.0, util.aval(y).dtype), y)
    return lax.select(lax.eq(x, zero), lax.full(util.aval(x).shape, 0.0, util.aval(x).dtype),
                      lax.mul(x, lax.log1p(safe_y)))  # fmt: skip


def entr(x: Any) -> Any:
    x = _float(x)
    zero = _c(0.0, x)
    shape, dt = util.aval(x).shape, util.aval(x).dtype
    safe = lax.select(lax.gt(x, zero), x, lax.full(shape, 1.0, dt))
    val = lax.neg(lax.mul(x, lax.log(safe)))
    val = lax.select(lax.eq(x, zero), lax.full(shape, 0.0, dt), val)
    return lax.select(lax.lt(x, zero), lax.full(shape, -math.inf, dt), val)


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
    if where is not None:
        raise NotImplementedError("logsumexp with where= is not supported yet")
    a = _float(a)
    av = util.aval(a)
    axes = util.canonical_axes(axis, av.ndim)
    kept = tuple(i for i in range(av.ndim) if i not in axes)
    amax = lax.reduce_max(a, axes) if axes else a
    finite = lax.is_finite(amax)
    amax = lax.stop_gradient(lax.select(finite, amax, lax.full(util.aval(amax).shape, 0.0,
                                                                 av.dtype)))  # fmt: skip
    shifted = lax.sub(a, lax.broadcast_in_dim(amax, av.shape, kept))
    e = lax.exp(shifted)
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
