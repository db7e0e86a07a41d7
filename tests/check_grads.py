"""`check_grads`, like `jax.test_util.check_grads`, for webjax in float32.

* fwd: `jvp(f, args, v)` against the central finite difference `(f(x + eps v) - f(x - eps v)) /
  2 eps` in a random direction `v`.
* rev: `<vjp(u), v>` against `<u, jvp(v)>` (autodiff jvp when "fwd" is also checked, so that the
  two modes must agree tightly; the finite difference otherwise, e.g. for custom_vjp functions).
* order 2 recurses on `partial(jvp, f)` and on `x -> vjp(f, x)[1](f(x))`, as JAX does.

Everything is computed in float32 or complex64: the finite differences use a large
step, and the tolerances are loose enough for float32 rounding but tight enough to catch a wrong
derivative rule (which is typically off by O(1)).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import webjax
import webjax.numpy as jnp
from webjax import tree_util

EPS = 1e-2  # central differences: truncation O(eps^2 f'''), rounding O(1e-7 |f| / eps)
FD_TOL = 3e-2  # finite difference vs autodiff
AD_TOL = 2e-3  # autodiff vs autodiff (jvp vs vjp): only float32 rounding apart


def _np(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def _to_jnp(x: Any) -> Any:
    x = np.asarray(x)
    dt = "complex64" if np.iscomplexobj(x) else "float32"
    x = x.astype(dt)
    if x.ndim == 0:  # jnp.asarray of a 0-d NumPy value is unreliable (reported elsewhere)
        return webjax.lax.full((), x.item(), dt)
    return jnp.asarray(x)


def _leaves(tree: Any) -> list[Any]:
    return tree_util.tree_leaves(tree)


def _rand_like(rng: np.random.RandomState, tree: Any) -> Any:
    def one(x: Any) -> Any:
        shape = np.shape(x)
        v = rng.standard_normal(shape)
        if np.iscomplexobj(np.asarray(x)):
            v = v + 1j * rng.standard_normal(shape)
        return _to_jnp(v)

    return tree_util.tree_map(one, tree)


def _conj(tree: Any) -> Any:
    return tree_util.tree_map(lambda x: _to_jnp(np.conj(_np(x))), tree)


def _axpy(a: float, x: Any, y: Any) -> Any:
    """a * x + y, leafwise, computed in float64 on the host and returned as float32 arrays."""
    return tree_util.tree_map(lambda u, v: _to_jnp(a * _np(u) + _np(v)), x, y)


def _inner(x: Any, y: Any) -> float:
    """The real inner product (complex numbers as pairs of reals)."""
    xs, ys = _leaves(x), _leaves(y)
    assert len(xs) == len(ys), (len(xs), len(ys))
    return float(sum(np.sum(np.real(_np(a) * np.conj(_np(b)))) for a, b in zip(xs, ys)))


def _assert_close(got: Any, want: Any, tol: float, what: str) -> None:
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w), f"{what}: {len(g)} leaves vs {len(w)}"
    for a, b in zip(g, w):
        a, b = _np(a), _np(b)
        assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale, err_msg=what)


def numerical_jvp(f: Callable, args: Sequence[Any], tangents: Sequence[Any], eps: float) -> Any:
    plus = f(*_axpy(eps, tangents, args))
    minus = f(*_axpy(-eps, tangents, args))
    return tree_util.tree_map(lambda p, m: (_np(p) - _np(m)) / (2 * eps), plus, minus)


def check_jvp(f: Callable, args: tuple, *, eps: float, rtol: float, rng: Any, msg: str) -> None:
    tangents = _rand_like(rng, args)
    out, t_out = webjax.jvp(f, args, tangents)
    _assert_close(out, f(*args), AD_TOL, f"{msg}: jvp primal output")
    t_num = numerical_jvp(f, args, tangents, eps)
    _assert_close(t_out, t_num, rtol, f"{msg}: jvp vs finite differences")


def check_vjp(
    f: Callable, args: tuple, *, eps: float, rtol: float, rng: Any, msg: str, use_jvp: bool
) -> None:
    out, pullback = webjax.vjp(f, *args)
    _assert_close(out, f(*args), AD_TOL, f"{msg}: vjp primal output")
    v = _rand_like(rng, args)
    u = _rand_like(rng, out)
    # JAX's cotangents of complex values are conjugated: the real adjoint is conj(vjp(conj(u)))
    ct = pullback(_conj(u))
    assert isinstance(ct, tuple) and len(ct) == len(args), f"{msg}: vjp returned {ct!r}"
    got = _inner(_conj(ct), v)
    if use_jvp:
        _, t_out = webjax.jvp(f, args, v)
        want, tol = _inner(u, t_out), AD_TOL
    else:
        want, tol = _inner(u, numerical_jvp(f, args, v, eps)), rtol
    scale = max(1.0, abs(want))
    assert abs(got - want) <= tol * scale, f"{msg}: <vjp(u), v> = {got} but <u, jvp(v)> = {want}"


def check_grads(
    f: Callable,
    args: Sequence[Any],
    order: int = 1,
    modes: Sequence[str] = ("fwd", "rev"),
    eps: float = EPS,
    rtol: float = FD_TOL,
    seed: int = 0,
) -> None:
    """Check `f`'s derivatives at `args` (a sequence of float32 arrays or pytrees of them)."""
    rng = np.random.RandomState(seed)
    args = tuple(tree_util.tree_map(_to_jnp, a) for a in args)
    _check(f, args, order, tuple(modes), eps, rtol, rng, "")


def _check(
    f: Callable, args: tuple, order: int, modes: tuple, eps: float, rtol: float, rng: Any, msg: str
) -> None:
    if "fwd" in modes:
        m = msg + "fwd"
        check_jvp(f, args, eps=eps, rtol=rtol, rng=rng, msg=m)
        if order > 1:
            f_jvp = functools.partial(webjax.jvp, f)
            tangents = _rand_like(rng, args)
            _check(f_jvp, (args, tangents), order - 1, modes, eps, rtol * 2, rng, m + ">")
    if "rev" in modes:
        m = msg + "rev"
        check_vjp(f, args, eps=eps, rtol=rtol, rng=rng, msg=m, use_jvp="fwd" in modes)
        if order > 1:

            def f_vjp(*a: Any) -> Any:
                out, pullback = webjax.vjp(f, *a)
                return pullback(out)

            _check(f_vjp, args, order - 1, modes, eps, rtol * 2, rng, m + ">")
