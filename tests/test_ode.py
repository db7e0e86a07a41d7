"""`jax.experimental.ode.odeint` against real JAX running the same programs.

float32 on every backend: values to ~1e-5 relative (the same Dormand-Prince steps; in float32
the step-size controller sees rounding-level differences, so an occasional step may differ);
gradients by the adjoint method (w.r.t. y0, args, closed-over values and the times); pytree
states; vmap; jit equals eager. float64 (cpu, wasm): agreement to ~1e-12, which only the same
sequence of accepted steps gives.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as wjnp
from webjax.experimental.ode import odeint as wodeint

rjax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed")
from jax.experimental.ode import odeint as rodeint  # noqa: E402

W = SimpleNamespace(jax=webjax, jnp=wjnp, odeint=wodeint)
J = SimpleNamespace(jax=rjax, jnp=rjax.numpy, odeint=rodeint)


def close(got: Any, want: Any, tol: float = 2e-5) -> None:
    g = [np.asarray(x, dtype=np.float64) for x in webjax.tree_util.tree_leaves(got)]
    w = [np.asarray(x, dtype=np.float64) for x in rjax.tree_util.tree_leaves(want)]
    assert webjax.tree_util.tree_structure(got).num_leaves == len(w)
    for a, b in zip(g, w, strict=True):
        assert a.shape == b.shape, (a.shape, b.shape)
        scale = max(float(np.max(np.abs(b), initial=0.0)), 1e-3)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale)


def decay(ns: SimpleNamespace) -> Any:
    t = ns.jnp.linspace(0.0, 3.0, 7)
    return ns.odeint(lambda y, t: -0.7 * y, ns.jnp.array([1.0, 2.0]), t, rtol=1e-6, atol=1e-6)


def decay_default_tolerances(ns: SimpleNamespace) -> Any:
    t = ns.jnp.linspace(0.0, 1.0, 4)
    return ns.odeint(lambda y, t: -0.7 * y, ns.jnp.array([1.0, 2.0]), t)


def pendulum_args(ns: SimpleNamespace) -> Any:
    jnp = ns.jnp

    def f(s: Any, t: Any, g: Any, length: Any) -> Any:
        return jnp.stack([s[1], -g / length * jnp.sin(s[0])])

    t = jnp.linspace(0.0, 2.5, 6)
    return ns.odeint(f, jnp.array([1.2, 0.0]), t, 9.81, 1.5, rtol=1e-5, atol=1e-6)


def pytree_state(ns: SimpleNamespace) -> Any:
    jnp = ns.jnp

    def f(s: Any, t: Any, k: Any) -> Any:
        return {"a": -k * s["a"], "b": (s["a"] * s["b"][0], jnp.cos(t) * s["b"][1])}

    y0 = {"a": jnp.array(1.0), "b": (jnp.array([0.5, 1.0]), jnp.array([[0.3], [0.1]]))}
    return ns.odeint(f, y0, jnp.linspace(0.0, 2.0, 5), 0.5, rtol=1e-5, atol=1e-6)


def time_dependent_hmax(ns: SimpleNamespace) -> Any:
    jnp = ns.jnp
    f = lambda y, t: jnp.cos(3.0 * t) * y + t
    return ns.odeint(f, jnp.array([0.5]), jnp.linspace(0.0, 2.0, 5), rtol=1e-5, hmax=0.1)


def mxstep(ns: SimpleNamespace) -> Any:
    jnp = ns.jnp
    f = lambda y, t: -2.0 * y + jnp.sin(t)
    # (loose tolerances: with mxstep reached the interpolant extrapolates, which amplifies
    # rounding-level differences in the step sizes)
    return ns.odeint(f, jnp.array([1.0]), jnp.linspace(0.0, 3.0, 4), rtol=1e-2, atol=1e-2, mxstep=2)


PROGRAMS = {
    f.__name__: f
    for f in (
        decay,
        decay_default_tolerances,
        pendulum_args,
        pytree_state,
        time_dependent_hmax,
        mxstep,
    )
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_odeint_like_jax(device: Any, name: str) -> None:
    close(PROGRAMS[name](W), PROGRAMS[name](J))


def test_jit_equals_eager(device: Any) -> None:
    def sol(y0: Any, k: Any) -> Any:
        return wodeint(lambda y, t, k: -k * y + wjnp.sin(t), y0, wjnp.linspace(0.0, 2.0, 4), k)

    y0 = wjnp.array([1.0, -0.5])
    eager = np.asarray(sol(y0, 0.8))
    jitted = np.asarray(webjax.jit(sol)(y0, 0.8))
    np.testing.assert_allclose(jitted, eager, rtol=1e-6, atol=1e-7)


def grads(ns: SimpleNamespace) -> Any:
    jax, jnp = ns.jax, ns.jnp
    t = jnp.linspace(0.0, 2.0, 5)

    def loss(y0: Any, k: Any, w: Any) -> Any:
        f = lambda y, t, k: -k * y + w * jnp.sin(t) * y[::-1]
        ys = ns.odeint(f, y0, t, k, rtol=1e-6, atol=1e-6)
        return jnp.sum(ys**2 * jnp.arange(1.0, 6.0)[:, None])

    y0 = jnp.array([1.0, 2.0])
    g = jax.grad(loss, argnums=(0, 1, 2))(y0, 0.7, 0.3)  # w: a closed-over traced value
    gt = jax.grad(
        lambda tt: jnp.sum(ns.odeint(lambda y, t: -0.5 * y * t, y0, tt, rtol=1e-6, atol=1e-6))
    )(t)

    def pend(p: Any) -> Any:
        f = lambda s, t, p: {"q": s["v"], "v": -p["g"] * jnp.sin(s["q"]) - p["c"] * s["v"]}
        ys = ns.odeint(f, {"q": jnp.array(1.0), "v": jnp.array(0.0)}, t, p, rtol=1e-6, atol=1e-6)
        return ys["q"][-1] + 0.5 * ys["v"][-2]

    gp = jax.value_and_grad(pend)({"g": 4.0, "c": 0.1})
    return g, gt, gp


def test_gradients_like_jax(device: Any) -> None:
    close(grads(W), grads(J), 5e-5)


def test_grad_under_jit_and_vmap(device: Any) -> None:
    def prog(ns: SimpleNamespace) -> Any:
        jax, jnp = ns.jax, ns.jnp
        t = jnp.linspace(0.0, 1.5, 4)
        sol = lambda y0, k: ns.odeint(
            lambda y, t, k: -k * y + jnp.cos(t), y0, t, k, rtol=1e-5, atol=1e-6
        )
        loss = lambda k: jnp.sum(sol(jnp.array([1.0, 0.5]), k))
        return (
            jax.vmap(sol, (0, None))(jnp.array([[1.0], [2.0], [-0.5]]), 0.8),
            jax.vmap(sol, (None, 0))(jnp.array([1.0]), jnp.array([0.1, 1.0, 3.0])),
            jax.jit(jax.grad(loss))(0.8),
            jax.vmap(jax.grad(loss))(jnp.array([0.3, 0.8])),
        )

    close(prog(W), prog(J), 5e-5)


@pytest.mark.parametrize("platform", ["cpu", "wasm"])
def test_float64_same_steps(platform: str) -> None:
    """With rounding out of the way, the values agree to ~1e-12: the same accepted steps."""
    from webjax._src.runtime import backend as rt

    if rt.unavailable_reason(platform) is not None:
        pytest.skip(f"backend {platform} unavailable")
    dev = webjax.devices(platform)[0]
    with rjax.enable_x64(True), webjax.enable_x64(True), webjax.default_device(dev):
        for name in ("pendulum_args", "pytree_state", "decay_default_tolerances", "mxstep"):
            close(PROGRAMS[name](W), PROGRAMS[name](J), 1e-11)
        close(grads(W)[0], grads(J)[0], 1e-10)


def test_errors() -> None:
    t = wjnp.linspace(0.0, 1.0, 3)
    f = lambda y, t, *a: -y
    with pytest.raises(TypeError, match="The contents of odeint \\*args must be arrays"):
        wodeint(f, wjnp.ones(2), t, "a")
    with pytest.raises(TypeError, match="t must be an array of floats"):
        wodeint(f, wjnp.ones(2), wjnp.arange(3))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        webjax.jvp(lambda y0: wodeint(f, y0, t), (wjnp.ones(2),), (wjnp.ones(2),))
