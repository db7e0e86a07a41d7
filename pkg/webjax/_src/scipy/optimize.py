"""`jax.scipy.optimize`: `minimize` with JAX's BFGS (Nocedal & Wright, Algorithm 6.1) and its
strong-Wolfe line search (Algorithms 3.5 and 3.6: bracketing by doubling, then zoom by
safeguarded cubic / quadratic interpolation or bisection).

Everything runs under `lax.while_loop`s with branch-free state updates (selects), so `minimize`
works under `jit` and `vmap`. The decisions (initial step, interpolation safeguards, failure
thresholds, iteration caps, the counts of function and gradient evaluations, status codes)
follow JAX's, so the iterates, `nit`, `nfev` and `njev` agree with JAX's up to floating-point
rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from .. import dtypes
from .. import numpy as jnp
from ..lax import control_flow, lax
from ..numpy import util
from ..transformations import value_and_grad


class OptimizeResults(NamedTuple):
    """Object holding optimization results.

    x: final solution; success: True if optimization succeeded; status: 0 converged,
    1 max BFGS iterations reached, 3 zoom failed, 4 saddle point reached, 5 max line search
    iterations reached, -1 undefined; fun, jac: value and gradient at x; hess_inv: the inverse
    Hessian estimate; nfev, njev: function and gradient evaluations; nit: iterations.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(
    fun: Callable,
    x0: Any,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimize a scalar function of one or more variables (method "BFGS"; `tol` is accepted
    and, as in JAX, unused: pass `options={"gtol": ...}`)."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def fun_with_args(x: Any) -> Any:
        return fun(x, *args)

    if method.lower() == "bfgs":
        r = minimize_bfgs(fun_with_args, x0, **options)
        return OptimizeResults(
            x=r.x_k,
            success=lax.bitwise_and(r.converged, lax.bitwise_not(r.failed)),
            status=r.status,
            fun=r.f_k,
            jac=r.g_k,
            hess_inv=r.H_k,
            nfev=r.nfev,
            njev=r.ngev,
            nit=r.k,
        )
    raise ValueError(f"Method {method} not recognized")


# ---- helpers ------------------------------------------------------------------------------------
def _c(v: float, dt: Any) -> Any:
    return lax.full((), v, dt)


def _int(v: int) -> Any:
    return lax.full((), v, dtypes.default_int())


def _bool(v: bool) -> Any:
    return lax.full((), v, dtypes.bool_)


def _where(pred: Any, x: Any, y: Any) -> Any:
    return jnp.where(pred, x, y)


def _dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b)


def _not(x: Any) -> Any:
    return lax.bitwise_not(x)


def _and(*xs: Any) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = lax.bitwise_and(out, x)
    return out


def _or(*xs: Any) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = lax.bitwise_or(out, x)
    return out


def _is_64(dt: Any) -> bool:
    return dtypes.component(dt).itemsize == 8


# ---- line search --------------------------------------------------------------------------------
class _LineSearchResults(NamedTuple):
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any  # the previous a_hi or a_lo: the third point of the cubic
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


class _Bracket(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_prev: Any
    phi_prev: Any
    dphi_prev: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


def _cubic_minimizer(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimizer of the cubic through (a, fa) with slope fpa there, (b, fb) and (c, fc):
    with p(t) = A t^3 + B t^2 + fpa t + fa (t = x - a), A and B solve a 2x2 system."""
    db, dc = b - a, c - a
    rb = fb - fa - fpa * db
    rc = fc - fa - fpa * dc
    denom = (db * dc) ** 2 * (db - dc)
    big_a = (dc**2 * rb - db**2 * rc) / denom
    big_b = (-(dc**3) * rb + db**3 * rc) / denom
    return a + (-big_b + jnp.sqrt(big_b * big_b - 3.0 * big_a * fpa)) / (3.0 * big_a)


def _quadratic_minimizer(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """The minimizer of the parabola through (a, fa) with slope fpa there and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2.0 * curvature)


def _zoom(
    phi_and_grad: Callable,
    sufficient_decrease_fails: Callable,
    curvature_holds: Callable,
    a_lo: Any,
    phi_lo: Any,
    dphi_lo: Any,
    a_hi: Any,
    phi_hi: Any,
    dphi_hi: Any,
    g_0: Any,
    skip: Any,
) -> _Zoom:
    """Shrink the bracket [a_lo, a_hi] until a point satisfies the strong Wolfe conditions
    (Nocedal & Wright, Algorithm 3.6); `skip` runs no iteration."""
    dt = util.aval(a_lo).dtype
    threshold = 1e-10 if _is_64(dt) else 1e-5
    init = _Zoom(
        done=_bool(False),
        failed=_bool(False),
        j=_int(0),
        a_lo=a_lo,
        phi_lo=phi_lo,
        dphi_lo=dphi_lo,
        a_hi=a_hi,
        phi_hi=phi_hi,
        dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=_c(1.0, dt),
        phi_star=phi_lo,
        dphi_star=dphi_lo,
        g_star=g_0,
        nfev=_int(0),
        ngev=_int(0),
    )

    def cond(s: _Zoom) -> Any:
        return _and(_not(s.done), _not(skip), _not(s.failed))

    def body(s: _Zoom) -> _Zoom:
        width = s.a_hi - s.a_lo  # signed: negative when the bracket is [a_hi, a_lo]
        left, right = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
        failed = _or(s.failed, width <= threshold)
        # a NaN cubic minimizer fails the bounds test and falls through to the parabola
        cubic = _cubic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        cubic_margin = 0.2 * width
        use_cubic = _and(s.j > 0, cubic > left + cubic_margin, cubic < right - cubic_margin)
        quad = _quadratic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        quad_margin = 0.1 * width
        use_quad = _and(_not(use_cubic), quad > left + quad_margin, quad < right - quad_margin)
        a_j = _where(use_cubic, cubic, _where(use_quad, quad, (s.a_lo + s.a_hi) / 2.0))
        phi_j, dphi_j, g_j = phi_and_grad(a_j)

        to_hi = _or(sufficient_decrease_fails(a_j, phi_j), phi_j >= s.phi_lo)
        found = _and(curvature_holds(dphi_j), _not(to_hi))
        to_lo = _and(_not(to_hi), _not(found))
        swap = _and(dphi_j * (s.a_hi - s.a_lo) >= 0.0, to_lo)  # a_hi becomes the old a_lo
        new_hi = _or(to_hi, swap)
        a_hi_new = _where(to_hi, a_j, s.a_lo)
        phi_hi_new = _where(to_hi, phi_j, s.phi_lo)
        dphi_hi_new = _where(to_hi, dphi_j, s.dphi_lo)
        rec_from_hi = new_hi
        rec_from_lo = _and(to_lo, _not(swap))
        j = s.j + 1
        return _Zoom(
            done=_or(s.done, found),
            failed=_or(failed, j >= 30),
            j=j,
            a_lo=_where(to_lo, a_j, s.a_lo),
            phi_lo=_where(to_lo, phi_j, s.phi_lo),
            dphi_lo=_where(to_lo, dphi_j, s.dphi_lo),
            a_hi=_where(new_hi, a_hi_new, s.a_hi),
            phi_hi=_where(new_hi, phi_hi_new, s.phi_hi),
            dphi_hi=_where(new_hi, dphi_hi_new, s.dphi_hi),
            a_rec=_where(rec_from_hi, s.a_hi, _where(rec_from_lo, s.a_lo, s.a_rec)),
            phi_rec=_where(rec_from_hi, s.phi_hi, _where(rec_from_lo, s.phi_lo, s.phi_rec)),
            a_star=_where(found, a_j, s.a_star),
            phi_star=_where(found, phi_j, s.phi_star),
            dphi_star=_where(found, dphi_j, s.dphi_star),
            g_star=_where(found, g_j, s.g_star),
            nfev=s.nfev + 1,
            ngev=s.ngev + 1,
        )

    return control_flow.while_loop(cond, body, init)


def line_search(
    f: Callable,
    xk: Any,
    pk: Any,
    old_fval: Any = None,
    old_old_fval: Any = None,
    gfk: Any = None,
    c1: float = 1e-4,
    c2: float = 0.9,
    maxiter: int = 20,
) -> _LineSearchResults:
    """A step along the descent direction `pk` from `xk` satisfying the strong Wolfe conditions
    (Nocedal & Wright, Algorithm 3.5): steps double from the initial guess until a point is
    acceptable or a bracket is found, which `_zoom` shrinks."""
    xk, pk = util.promote_dtypes_inexact(xk, pk)
    dt = util.aval(pk).dtype

    def phi_and_grad(t: Any) -> tuple[Any, Any, Any]:
        t = lax.convert_element_type(t, dt)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, jnp.real(_dot(g, pk)), g

    evaluated = old_fval is None or gfk is None
    if evaluated:
        phi_0, dphi_0, gfk = phi_and_grad(0.0)
    else:
        phi_0 = old_fval
        dphi_0 = jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        guess = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = _where(guess > 1, 1.0, guess)
    else:
        start = 1.0
    ft = util.aval(phi_0).dtype
    phi_0 = util.ensure_array(phi_0)
    dphi_0 = util.ensure_array(dphi_0)

    def sufficient_decrease_fails(a: Any, phi: Any) -> Any:  # the negation of Wolfe's first
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_holds(dphi: Any) -> Any:  # Wolfe's strong second condition
        return jnp.abs(dphi) <= -c2 * dphi_0

    n0 = 1 if evaluated else 0
    init = _Bracket(
        done=_bool(False),
        failed=_bool(False),
        i=_int(1),
        a_prev=_c(0.0, dt),
        phi_prev=phi_0,
        dphi_prev=dphi_0,
        nfev=_int(n0),
        ngev=_int(n0),
        a_star=_c(0.0, dt),
        phi_star=phi_0,
        dphi_star=dphi_0,
        g_star=gfk,
    )
    start_a = lax.convert_element_type(util.ensure_array(start), dt)

    def cond(s: _Bracket) -> Any:
        return _and(_not(s.done), s.i <= maxiter, _not(s.failed))

    def body(s: _Bracket) -> _Bracket:
        a_i = _where(s.i == 1, start_a, s.a_prev * 2.0)
        phi_i, dphi_i, g_i = phi_and_grad(a_i)
        phi_i = lax.convert_element_type(phi_i, ft)
        # the bracket is [a_prev, a_i] when a_i is too long, [a_i, a_prev] when it overshot
        # a minimum (the slope turned positive); a_i itself may satisfy both conditions
        long_step = _or(sufficient_decrease_fails(a_i, phi_i), _and(phi_i >= s.phi_prev, s.i > 1))
        accept = _and(curvature_holds(dphi_i), _not(long_step))
        overshot = _and(dphi_i >= 0.0, _not(long_step), _not(accept))
        zoom = _or(long_step, overshot)
        z = _zoom(
            phi_and_grad,
            sufficient_decrease_fails,
            curvature_holds,
            _where(long_step, s.a_prev, a_i),
            _where(long_step, s.phi_prev, phi_i),
            _where(long_step, s.dphi_prev, dphi_i),
            _where(long_step, a_i, s.a_prev),
            _where(long_step, phi_i, s.phi_prev),
            _where(long_step, dphi_i, s.dphi_prev),
            gfk,
            _not(zoom),
        )
        return _Bracket(
            done=_or(s.done, zoom, accept),
            failed=_or(s.failed, _and(zoom, z.failed)),
            i=s.i + 1,
            a_prev=a_i,
            phi_prev=phi_i,
            dphi_prev=dphi_i,
            nfev=s.nfev + 1 + z.nfev,
            ngev=s.ngev + 1 + z.ngev,
            a_star=_where(zoom, z.a_star, _where(accept, a_i, s.a_star)),
            phi_star=_where(zoom, z.phi_star, _where(accept, phi_i, s.phi_star)),
            dphi_star=_where(zoom, z.dphi_star, _where(accept, dphi_i, s.dphi_star)),
            g_star=_where(zoom, z.g_star, _where(accept, g_i, s.g_star)),
        )

    s = control_flow.while_loop(cond, body, init)
    status = _where(s.failed, _int(1), _where(s.i > maxiter, _int(3), _int(0)))
    a_k = s.a_star
    if not _is_64(dt):  # a vanishing step would stall BFGS in float32: floor it at 1e-8
        a_k = _where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
    return _LineSearchResults(
        failed=_or(s.failed, _not(s.done)),
        nit=s.i - 1,
        nfev=s.nfev,
        ngev=s.ngev,
        k=s.i,
        a_k=a_k,
        f_k=s.phi_star,
        g_k=s.g_star,
        status=status,
    )


# ---- BFGS ---------------------------------------------------------------------------------------
class _BFGSResults(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def minimize_bfgs(
    fun: Callable,
    x0: Any,
    maxiter: int | None = None,
    norm: Any = math.inf,
    gtol: float = 1e-5,
    line_search_maxiter: int = 10,
) -> _BFGSResults:
    """BFGS (Nocedal & Wright, Algorithm 6.1) from the identity as inverse Hessian; stops when
    the `norm`-norm of the gradient is below `gtol`, the line search fails or after `maxiter`
    iterations (200 per variable by default)."""
    x0 = util.ensure_array(x0)
    if maxiter is None:
        maxiter = math.prod(util.aval(x0).shape) * 200
    d = util.aval(x0).shape[0]
    dt = util.aval(x0).dtype
    eye = jnp.eye(d, dtype=dt)
    f_0, g_0 = value_and_grad(fun)(x0)
    f_0 = util.ensure_array(f_0)

    def gnorm(g: Any) -> Any:
        return jnp.linalg.norm(g, ord=norm)

    init = _BFGSResults(
        converged=gnorm(g_0) < gtol,
        failed=_bool(False),
        k=_int(0),
        nfev=_int(1),
        ngev=_int(1),
        nhev=_int(0),
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        H_k=eye,
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2,
        status=_int(0),
        line_search_status=_int(0),
    )

    def cond(s: _BFGSResults) -> Any:
        return _and(_not(s.converged), _not(s.failed), s.k < maxiter)

    def body(s: _BFGSResults) -> _BFGSResults:
        p = -_dot(s.H_k, s.g_k)
        ls = line_search(
            fun,
            s.x_k,
            p,
            old_fval=s.f_k,
            old_old_fval=s.old_old_fval,
            gfk=s.g_k,
            maxiter=line_search_maxiter,
        )
        step = ls.a_k * p
        g_new = ls.g_k
        y = g_new - s.g_k
        rho = 1.0 / _dot(y, step)
        # H+ = (I - rho s y^T) H (I - rho y s^T) + rho s s^T; kept when y.s = 0 (rho not finite)
        w = eye - rho * (step[:, None] * y[None, :])
        h_new = _dot(_dot(w, s.H_k), w.T) + rho * (step[:, None] * step[None, :])
        h_new = _where(jnp.isfinite(rho), h_new, s.H_k)
        return _BFGSResults(
            converged=gnorm(g_new) < gtol,
            failed=ls.failed,
            k=s.k + 1,
            nfev=s.nfev + ls.nfev,
            ngev=s.ngev + ls.ngev,
            nhev=s.nhev,
            x_k=s.x_k + step,
            f_k=lax.convert_element_type(ls.f_k, util.aval(s.f_k).dtype),
            g_k=g_new,
            H_k=h_new,
            old_old_fval=s.f_k,
            status=s.status,
            line_search_status=ls.status,
        )

    s = control_flow.while_loop(cond, body, init)
    status = _where(
        s.converged,
        _int(0),
        _where(
            s.k == maxiter,
            _int(1),
            _where(s.failed, 2 + s.line_search_status, _int(-1)),
        ),
    )
    return s._replace(status=status)
