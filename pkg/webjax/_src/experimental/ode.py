"""`jax.experimental.ode`: `odeint`, adaptive Dormand-Prince (RK45) integration with dense
output, differentiable by the adjoint method.

The solver is JAX's algorithm: the Hairer-Norsett-Wanner initial step, Dormand-Prince 5(4)
steps (FSAL), the RMS error ratio against `atol + rtol * max(|y0|, |y1|)`, the step-size
controller (safety 0.9, growth at most 10x, shrink at most 5x after a rejection) and the
4th-order interpolating polynomial through the step's midpoint for outputs between steps. Each
output time runs a `lax.while_loop` of attempted steps inside a `lax.scan` over the output
times. In float64 the accepted steps, and so the values, agree with JAX's to ~1e-13. In float32
the first steps' error estimates are at rounding level (the initial step is conservative), so
JAX's and these step sizes can differ by a percent from there on: the values then agree to the
solver's accuracy (~1e-6 relative for rtol ~1e-6), with about the same number of steps. One
attempted step is a jitted function, so the loop body replays one compiled program per step.

Reverse mode is a `custom_vjp`: the backward pass integrates the adjoint system (the state,
its cotangent, and the cotangents of the time and of `*args`) backwards between consecutive
output times with the same solver (Chen et al. 2018, appendix C), as JAX does. Forward mode
(`jvp`, `jacfwd`) raises, as in JAX. The state may be any pytree (it is raveled into one
vector, as JAX's `ravel_pytree` does).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from .. import dtypes
from .. import numpy as jnp
from ..core import get_aval as typeof
from ..custom_derivatives import closure_convert, custom_vjp
from ..flatten_util import ravel_pytree
from ..jit import jit
from ..lax import control_flow
from ..transformations import vjp
from ..tree_util import tree_leaves, tree_map
from ..vmap import vmap

__all__ = ["odeint"]


def _ravel_first_arg(func: Callable[..., Any], unravel: Callable[[Any], Any]) -> Callable:
    def flat_func(y: Any, *args: Any) -> Any:
        return ravel_pytree(func(unravel(y), *args))[0]

    return flat_func


def _valid_jaxtype(x: Any) -> bool:
    try:
        typeof(x)
    except TypeError:
        return False
    return True


# ---- Dormand-Prince 5(4) -----------------------------------------------------------------------

# nodes c_2..c_7 and the rows of the Butcher tableau (row 6 = the 5th-order weights: FSAL)
_NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_TABLEAU = (
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_WEIGHTS = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
# 5th-order minus embedded 4th-order weights: the local error estimate
_ERROR_WEIGHTS = (
    35 / 384 - 1951 / 21600,
    0.0,
    500 / 1113 - 22642 / 50085,
    125 / 192 - 451 / 720,
    -2187 / 6784 - -12231 / 42400,
    11 / 84 - 649 / 6300,
    -1.0 / 60.0,
)
# weights giving y at the step's midpoint (Shampine's dense output for Dormand-Prince)
_MID_WEIGHTS = (
    6025192743 / 30085553152 / 2,
    0.0,
    51252292925 / 65400821598 / 2,
    -2691868925 / 45128329728 / 2,
    187940372067 / 1594534317056 / 2,
    -1776094331 / 19743644256 / 2,
    11237099 / 235043384 / 2,
)


def _combine(weights: tuple[float, ...], ks: list[Any]) -> Any:
    """sum_j weights[j] * ks[j], in order (zero weights contribute exact zeros: skipped)."""
    acc = None
    for w, k in zip(weights, ks):
        if w == 0.0:
            continue
        term = w * k
        acc = term if acc is None else acc + term
    return acc if acc is not None else jnp.zeros_like(ks[0])


def _rk_step(f: Callable[[Any, Any], Any], y0: Any, f0: Any, t0: Any, dt: Any) -> tuple:
    """One Dormand-Prince step: (y1, f(y1), error estimate, the 7 stage derivatives)."""
    h = dt.astype(f0.dtype)
    ks = [f0]
    for node, row in zip(_NODES, _TABLEAU):
        ks.append(f(y0 + h * _combine(row, ks), t0 + dt * jnp.asarray(node, dt.dtype)))
    y1 = h * _combine(_WEIGHTS, ks) + y0
    err = h * _combine(_ERROR_WEIGHTS, ks)
    return y1, ks[-1], err, ks


def _interp_coeffs(y0: Any, y1: Any, ks: list[Any], dt: Any) -> Any:
    """Coefficients (highest power first) of the quartic in s = (t - t0) / dt through y0, the
    midpoint estimate and y1 with the step's end slopes."""
    h = dt.astype(y0.dtype)
    y_mid = y0 + h * _combine(_MID_WEIGHTS, ks)
    dy0, dy1 = ks[0], ks[-1]
    a = -2.0 * h * dy0 + 2.0 * h * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * h * dy0 - 3.0 * h * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * h * dy0 + h * dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    d = h * dy0
    return jnp.stack([a, b, c, d, y0])


def _abs2(x: Any) -> Any:
    if jnp.iscomplexobj(x):
        return x.real**2 + x.imag**2
    return x**2


def _error_ratio(err: Any, rtol: Any, atol: Any, y0: Any, y1: Any) -> Any:
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean(_abs2(err / tol.astype(err.dtype))))


def _next_step_size(
    last: Any,
    ratio: Any,
    safety: float = 0.9,
    ifactor: float = 10.0,
    dfactor: float = 0.2,
    order: float = 5.0,
) -> Any:
    """The step-size controller: grow at most `ifactor`x; after a rejection (ratio >= 1)
    shrink at most to `dfactor`x."""
    shrink_limit = jnp.where(ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor, jnp.maximum(ratio ** (-1.0 / order) * safety, shrink_limit))
    return jnp.where(ratio == 0, last * ifactor, last * factor)


def _initial_step(
    f: Callable[[Any, Any], Any], t0: Any, y0: Any, order: int, rtol: Any, atol: Any, f0: Any
) -> Any:
    """Hairer, Norsett & Wanner, Solving ODEs I, section II.4: the starting step size."""
    dtype = jnp.result_type(y0.dtype, f0.dtype, dtypes.float32)
    y0, f0 = y0.astype(dtype), f0.astype(dtype)
    scale = (atol + jnp.abs(y0) * rtol).astype(dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0.astype(dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where(
        (d1 <= 1e-15) & (d2 <= 1e-15),
        jnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)),
    )
    return jnp.minimum(100.0 * h0, h1)


def _attempt(
    func: Callable[..., Any], rtol: Any, atol: Any, hmax: Any, state: list[Any], *args: Any
) -> list[Any]:
    """One attempted step of the while loop: the new state if the step is accepted, the old
    one with a smaller dt if not (the counter and dt advance either way)."""
    i, y, f, t, dt, last_t, coeffs = state
    y1, f1, err, ks = _rk_step(lambda y_, t_: func(y_, t_, *args), y, f, t, dt)
    t1 = t + dt
    ratio = _error_ratio(err, rtol, atol, y, y1)
    new_coeffs = _interp_coeffs(y, y1, ks, dt)
    dt = jnp.clip(_next_step_size(dt, ratio), min=0.0, max=hmax)
    accept = ratio <= 1.0
    new = [i + 1, y1, f1, t1, dt, t, new_coeffs]
    old = [i + 1, y, f, t, dt, last_t, coeffs]
    return [jnp.where(accept, a, b) for a, b in zip(new, old)]


def _solve(
    func: Callable[..., Any], rtol: Any, atol: Any, mxstep: Any, hmax: Any, y0: Any, ts: Any, *args
) -> Any:
    f = lambda y, t: func(y, t, *args)
    attempt = jit(functools.partial(_attempt, func, rtol, atol, hmax))
    f0 = f(y0, ts[0])
    dt = jnp.clip(_initial_step(f, ts[0], y0, 4, rtol, atol, f0), min=0.0, max=hmax)
    coeffs = jnp.stack([y0] * 5)

    def advance(carry: list[Any], target_t: Any) -> tuple[list[Any], Any]:
        def keep_going(state: list[Any]) -> Any:
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body(state: list[Any]) -> list[Any]:
            return attempt(state, *args)

        _, *carry = control_flow.while_loop(keep_going, body, [0, *carry])
        _, _, t, _, last_t, coeffs = carry
        s = (target_t - last_t) / (t - last_t)
        return carry, jnp.polyval(coeffs, s.astype(coeffs.dtype))

    _, ys = control_flow.scan(advance, [y0, f0, ts[0], dt, ts[0], coeffs], ts[1:])
    return jnp.concatenate((y0[None], ys))


_solve_vjp = custom_vjp(_solve, nondiff_argnums=(0, 1, 2, 3, 4))


def _solve_fwd(
    func: Callable[..., Any], rtol: Any, atol: Any, mxstep: Any, hmax: Any, y0: Any, ts: Any, *args
) -> tuple[Any, Any]:
    ys = _solve_vjp(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_bwd(
    func: Callable[..., Any], rtol: Any, atol: Any, mxstep: Any, hmax: Any, res: Any, g: Any
) -> tuple[Any, ...]:
    ys, ts, args = res

    def adjoint_dynamics(state: Any, minus_t: Any, *args: Any) -> Any:
        # integrated in reversed time: (y, a = y_bar, t_bar, args_bar)' = (-f, a^T df/dy,
        # a^T df/dt, a^T df/dargs), written as derivatives with respect to -t
        y, y_bar, *_ = state
        y_dot, pullback = vjp(func, y, -minus_t, *args)
        return (-y_dot, *pullback(y_bar))

    def back(carry: Any, i: Any) -> tuple[Any, Any]:
        y_bar, t0_bar, args_bar = carry
        # moving the output time ts[i] changes ys[i] at rate f(ys[i], ts[i])
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            adjoint_dynamics,
            (ys[i], y_bar, t0_bar, args_bar),
            jnp.stack([-ts[i], -ts[i - 1]]),
            *args,
            rtol=rtol,
            atol=atol,
            mxstep=mxstep,
            hmax=hmax,
        )
        y_bar, t0_bar, args_bar = tree_map(lambda v: v[1], (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init = (g[-1], 0.0, tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = control_flow.scan(
        back, init, jnp.arange(len(ts) - 1, 0, -1)
    )
    ts_bar = jnp.concatenate([jnp.stack([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_solve_vjp.defvjp(_solve_fwd, _solve_bwd)


def odeint(
    func: Callable[..., Any],
    y0: Any,
    t: Any,
    *args: Any,
    rtol: float = 1.4e-8,
    atol: float = 1.4e-8,
    mxstep: Any = math.inf,
    hmax: Any = math.inf,
) -> Any:
    """Integrate dy/dt = func(y, t, *args) from y(t[0]) = y0, returning y at each time of `t`
    (strictly increasing floats): a pytree like `y0` with a leading axis of len(t).

    `rtol`/`atol`: local error tolerances; `mxstep`: the most steps attempted per output time;
    `hmax`: the largest step size. `*args` must be arrays, scalars or pytrees of them; they
    (and values `func` closes over) are differentiable by reverse mode."""
    for arg in tree_leaves(args):
        if not _valid_jaxtype(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}."
            )
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    y0_flat, unravel = ravel_pytree(y0)
    flat_func = _ravel_first_arg(converted, unravel)
    ys = _solve_vjp(flat_func, rtol, atol, mxstep, hmax, y0_flat, jnp.asarray(t), *args, *consts)
    return vmap(unravel)(ys)
