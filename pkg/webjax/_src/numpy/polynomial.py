"""Polynomials as coefficient arrays, highest degree first (NumPy's `poly*` functions):
polyval, polyadd, polysub, polymul, polydiv, polyder, polyint, polyfit, poly, roots, vander.

polyval is Horner's rule unrolled (elementwise, so it fuses into one kernel); polymul is a
`convolve`; polyfit solves the column-scaled Vandermonde system with `jnp.linalg.lstsq` (SVD).
"""

from __future__ import annotations

import math
from typing import Any

from ..lax import lax
from . import util
from .contractions import dot, outer
from .creation import asarray
from .dtype_info import finfo
from .editing import trim_zeros
from .eig import eigvals
from .eig import roots as _roots
from .linalg import inv, lstsq
from .shape import atleast_1d, concatenate
from .statistics import convolve
from .ufuncs import multiply


def _1d(name: str, p: Any) -> Any:
    p = util.ensure_array(p)
    if util.aval(p).ndim == 0:
        p = lax.reshape(p, (1,))
    if util.aval(p).ndim != 1:
        raise ValueError(f"jnp.{name}: input must be a rank-1 array.")
    return p


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    util.check_arraylike("polyval", p, x)
    p = util.ensure_array(p)
    x = util.ensure_array(x) if not util.is_scalar(x) else x
    p, x = util.promote_dtypes(p, x)
    pshape = util.aval(p).shape
    if not pshape:
        raise ValueError("jnp.polyval: p must be at least 1-dimensional")
    dt = util.aval(x).dtype
    shape = util.broadcast_shapes(pshape[1:], util.aval(x).shape)
    xb = util.broadcast_to(util.convert(x, dt), shape)
    y = lax.full(shape, 0, dt)
    for i in range(pshape[0]):
        c = lax.reshape(
            lax.slice(p, (i, *(0,) * (len(pshape) - 1)), (i + 1, *pshape[1:])), pshape[1:]
        )
        y = lax.add(lax.mul(y, xb), util.broadcast_to(util.convert(c, dt), shape))
    return y


def polyadd(a1: Any, a2: Any) -> Any:
    util.check_arraylike("polyadd", a1, a2)
    a1, a2 = util.promote_dtypes(util.ensure_array(a1), util.ensure_array(a2))
    n1, n2 = util.aval(a1).shape[0], util.aval(a2).shape[0]
    if n1 < n2:
        a1, a2, n1, n2 = a2, a1, n2, n1
    dt = util.aval(a1).dtype
    a2 = lax.pad(
        a2, lax.full((), 0, dt), [(n1 - n2, 0, 0), *[(0, 0, 0)] * (util.aval(a2).ndim - 1)]
    )
    return lax.add(a1, a2)


def polysub(a1: Any, a2: Any) -> Any:
    util.check_arraylike("polysub", a1, a2)
    a1, a2 = util.promote_dtypes(util.ensure_array(a1), util.ensure_array(a2))
    return polyadd(a1, lax.neg(a2))


def _trim_front(a: Any) -> Any:
    return trim_zeros(a, trim="f")


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    util.check_arraylike("polymul", a1, a2)
    a1, a2 = util.promote_dtypes_inexact(util.ensure_array(a1), util.ensure_array(a2))
    if trim_leading_zeros and (util.aval(a1).shape[0] > 1 or util.aval(a2).shape[0] > 1):
        a1, a2 = _trim_front(a1), _trim_front(a2)
    if util.aval(a1).shape[0] == 0:
        a1 = lax.full((1,), 0, util.aval(a2).dtype)
    if util.aval(a2).shape[0] == 0:
        a2 = lax.full((1,), 0, util.aval(a1).dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    util.check_arraylike("polydiv", u, v)
    u, v = util.promote_dtypes_inexact(util.ensure_array(u), util.ensure_array(v))
    dt = util.aval(u).dtype
    m, n = util.aval(u).shape[0] - 1, util.aval(v).shape[0] - 1
    scale = lax.div(lax.full((), 1, dt), lax.reshape(lax.slice(v, (0,), (1,)), ()))
    qs = []
    for k in range(m - n + 1):
        d = lax.mul(scale, lax.reshape(lax.slice(u, (k,), (k + 1,)), ()))
        qs.append(d)
        upd = lax.pad(lax.mul(lax.neg(d), v), lax.full((), 0, dt), [(k, m - k - n, 0)])
        u = lax.add(u, upd)
    q = lax.concatenate([lax.reshape(d, (1,)) for d in qs], 0) if qs else lax.full((1,), 0, dt)
    if trim_leading_zeros:
        tol = math.sqrt(finfo(dt).eps)
        vals = util.concrete_array(
            u, "jnp.polydiv(..., trim_leading_zeros=True) needs concrete inputs."
        ).tolist()
        start = next((i for i, c in enumerate(vals) if abs(c) > tol), len(vals))
        u = util.slice_axis(u, 0, start, len(vals))
    return q, u


def polyder(p: Any, m: int = 1) -> Any:
    util.check_arraylike("polyder", p)
    m = util.concrete_int(m, "'m' argument of jnp.polyder")
    (p,) = util.promote_dtypes_inexact(_1d("polyder", p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = util.aval(p).shape[0]
    dt = util.aval(p).dtype
    # d^m/dx^m x^e = e (e-1) ... (e-m+1) x^(e-m); coefficient i has exponent n-1-i
    coeff = [math.prod(n - 1 - i - j for j in range(m)) for i in range(max(n - m, 0))]
    head = util.slice_axis(p, 0, 0, max(n - m, 0))
    if not coeff:
        return head
    return lax.mul(head, util.convert(asarray(coeff), dt))


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    util.check_arraylike("polyint", p)
    if k is not None:
        util.check_arraylike("polyint", k)
    m = util.concrete_int(m, "'m' argument of jnp.polyint")
    k = 0 if k is None else k
    p = _1d("polyint", p)
    k = util.ensure_array(k) if not util.is_scalar(k) else k
    p, k = util.promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    dt = util.aval(p).dtype
    k = lax.reshape(k, (1,)) if util.aval(k).ndim == 0 else k
    if util.aval(k).shape == (1,):
        k = lax.broadcast_in_dim(lax.reshape(k, ()), (m,), ())
    if util.aval(k).shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    n = util.aval(p).shape[0] + m
    # integrating m times divides the coefficient of x^e by (e+1)...(e+m); the integration
    # constants k (highest order first) sit at exponents m-1 ... 0
    coeff = [math.prod(max(1, t - j) for j in range(m)) for t in range(n)][::-1]
    return lax.div(lax.concatenate([p, k], 0), util.convert(asarray(coeff), dt))


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    util.check_arraylike("vander", x)
    x = util.ensure_array(x)
    if util.aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = util.aval(x).shape[0]
    N = n if N is None else util.concrete_int(N, "'N' argument of jnp.vander()")
    if N < 0:
        raise ValueError("N must be nonnegative")
    dt = util.aval(x).dtype
    cols = []
    col = lax.full((n,), 1, dt)
    for _ in range(N):
        cols.append(lax.reshape(col, (n, 1)))
        col = lax.mul(col, x)
    if not cols:
        return lax.full((n, 0), 0, dt)
    out = lax.concatenate(cols, 1)
    return out if increasing else lax.rev(out, (1,))


def polyfit(
    x: Any,
    y: Any,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: Any = None,
    cov: bool = False,
) -> Any:
    x, y = util.ensure_array(x), util.ensure_array(y)
    deg = util.concrete_int(deg, "deg must be int")
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if util.aval(x).ndim != 1:
        raise TypeError("expected 1D vector for x")
    if util.aval(x).size == 0:
        raise TypeError("expected non-empty vector for x")
    if util.aval(y).ndim < 1 or util.aval(y).ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if util.aval(x).shape[0] != util.aval(y).shape[0]:
        raise TypeError("expected x and y to have same length")
    n = util.aval(x).shape[0]
    if rcond is None:
        rcond = n * float(finfo(util.aval(util.promote_dtypes_inexact(x)[0]).dtype).eps)
    lhs = vander(x, order)
    rhs = y
    lhs, rhs = util.promote_dtypes_inexact(lhs, rhs)
    dt = util.aval(lhs).dtype
    if w is not None:
        (wa,) = util.promote_dtypes_inexact(util.ensure_array(w))
        if util.aval(wa).ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if util.aval(wa).shape[0] != n:
            raise TypeError("expected w and y to have the same length")
        wa = util.convert(wa, dt)
        lhs = lax.mul(lhs, lax.broadcast_in_dim(wa, util.aval(lhs).shape, (0,)))
        rhs = lax.mul(rhs, lax.broadcast_in_dim(wa, util.aval(rhs).shape, (0,)))
    # scale the columns to unit norm: the Vandermonde matrix is badly conditioned
    scale = lax.sqrt(lax.reduce_sum(lax.mul(lhs, lhs), (0,)))
    lhs = lax.div(lhs, lax.broadcast_in_dim(scale, util.aval(lhs).shape, (1,)))
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = lax.div(c, lax.broadcast_in_dim(scale, util.aval(c).shape, (0,)))
    if full:
        return c, resids, rank, s, lax.full((), rcond, dt, weak_type=True)
    if cov:
        if dt.kind == "c" and util.aval(x).dtype.kind != "c":  # complex y: x's real design
            lhs, scale = lax.real(lhs), lax.real(scale)
        vdt = util.aval(lhs).dtype
        vbase = inv(dot(lax.transpose(lhs, (1, 0)), lhs))
        vbase = lax.div(vbase, outer(scale, scale))
        if cov == "unscaled":
            fac = lax.full((), 1, vdt)
        else:
            if n <= order:
                raise ValueError(
                    "the number of data points must exceed order to scale the covariance matrix"
                )
            fac = lax.div(resids, lax.full((), n - order, util.aval(resids).dtype))
        fac = atleast_1d(fac)
        if util.aval(y).ndim == 1:
            return c, multiply(vbase, lax.expand_dims(fac, (0,)))
        return c, multiply(lax.expand_dims(vbase, (2,)), lax.expand_dims(fac, (0, 1)))
    return c


def poly(seq_of_zeros: Any) -> Any:
    util.check_arraylike("poly", seq_of_zeros)
    z = util.ensure_array(seq_of_zeros)
    (z,) = util.promote_dtypes_inexact(z)
    if util.aval(z).ndim == 0:
        z = lax.reshape(z, (1,))
    sh = util.aval(z).shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:  # a square matrix: its eigenvalues
        z = eigvals(z)
        sh = util.aval(z).shape
    if len(sh) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = util.aval(z).dtype
    a = lax.full((1,), 1, dt)
    for i in range(sh[0]):
        root = lax.reshape(lax.slice(z, (i,), (i + 1,)), (1,))
        a = convolve(a, concatenate([lax.full((1,), 1, dt), lax.neg(root)]), mode="full")
    return lax.reshape(a, ()) if sh[0] == 0 else a


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    util.check_arraylike("roots", p)
    return _roots(p, strip_zeros=strip_zeros)
