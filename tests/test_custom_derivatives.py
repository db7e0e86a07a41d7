"""custom_jvp and custom_vjp: the JAX documentation's examples, under jit/vmap/grad, against
real JAX where installed, and JAX's errors."""

from __future__ import annotations

import functools
from typing import Any

import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from webjax import lax

np = pytest.importorskip("numpy")


@pytest.fixture
def rjax():
    return pytest.importorskip("jax")


def f32(*vals: Any) -> np.ndarray:
    return np.asarray(vals, dtype=np.float32)


def to_w(tree: Any) -> Any:
    def one(x: Any) -> Any:
        x = np.asarray(x)
        return lax.full((), x.item(), str(x.dtype)) if x.ndim == 0 else jnp.asarray(x)

    return webjax.tree_util.tree_map(one, tree)


def assert_close(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    import jax

    g, w = webjax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def both(rjax: Any, build: Any, *args: Any, rtol: float = 1e-5, atol: float = 1e-6) -> Any:
    got = build(webjax)(*to_w(args))
    assert_close(got, build(rjax)(*args), rtol=rtol, atol=atol)
    return got


X = f32(0.3, -1.2, 0.7)


# ---- custom_jvp --------------------------------------------------------------------------------
def make_log1pexp(ns):
    """JAX docs: log(1 + exp(x)) with a numerically stable derivative."""

    @ns.custom_jvp
    def log1pexp(x):
        return ns.numpy.log(1.0 + ns.numpy.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + ns.numpy.exp(x)))

    return log1pexp


def test_custom_jvp_softplus_stable_gradient(rjax):
    f = make_log1pexp(webjax)
    assert float(webjax.grad(f)(100.0)) == 1.0  # the naive derivative would be nan
    both(rjax, lambda ns: ns.grad(make_log1pexp(ns)), np.float32(3.0))
    both(rjax, lambda ns: ns.jit(ns.grad(make_log1pexp(ns))), np.float32(-2.0))
    both(rjax, lambda ns: ns.vmap(ns.grad(make_log1pexp(ns))), f32(0.0, 10.0, 100.0))
    both(rjax, lambda ns: ns.jit(ns.vmap(make_log1pexp(ns))), X)


def test_custom_jvp_rule_is_used_not_the_function():
    @webjax.custom_jvp
    def f(x):
        return lax.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 3.0 * t[0]))
    assert float(webjax.grad(f)(0.5)) == 3.0
    assert float(webjax.jit(webjax.grad(f))(0.5)) == 3.0
    _, t = webjax.jvp(f, (to_w(X),), (to_w(f32(1.0, 2.0, 3.0)),))
    np.testing.assert_allclose(np.asarray(t), [3.0, 6.0, 9.0])
    np.testing.assert_allclose(np.asarray(f(to_w(X))), np.sin(X), rtol=1e-6)


def test_custom_jvp_defjvps(rjax):
    def build(ns):
        @ns.custom_jvp
        def f(x, y):
            return ns.numpy.sin(x) * y

        f.defjvps(
            lambda x_dot, primal_out, x, y: ns.numpy.cos(x) * x_dot * y,
            lambda y_dot, primal_out, x, y: ns.numpy.sin(x) * y_dot,
        )
        return ns.grad(f, argnums=(0, 1))

    both(rjax, build, np.float32(0.4), np.float32(2.0))


def test_custom_jvp_defjvps_none_means_zero(rjax):
    def build(ns):
        @ns.custom_jvp
        def f(x, y):
            return x * y

        f.defjvps(lambda xd, out, x, y: xd * y, None)
        return ns.grad(f, argnums=(0, 1))

    both(rjax, build, np.float32(3.0), np.float32(2.0))


def test_custom_jvp_nondiff_argnums(rjax):
    def build(ns):
        @functools.partial(ns.custom_jvp, nondiff_argnums=(0,))
        def app(f, x):
            return f(x)

        @app.defjvp
        def app_jvp(f, primals, tangents):
            (x,), (t,) = primals, tangents
            return app(f, x), 2.0 * t

        g = ns.numpy.sin
        return lambda x: (
            app(g, x),
            ns.grad(lambda x: app(g, x))(x),
            ns.jit(ns.grad(lambda x: app(g, x)))(x),
        )

    both(rjax, build, np.float32(0.7))


def test_custom_jvp_pytree_inputs_and_outputs(rjax):
    def build(ns):
        @ns.custom_jvp
        def f(d):
            return {"s": d["a"] * d["b"], "t": (d["a"] + 1.0,)}

        @f.defjvp
        def f_jvp(primals, tangents):
            (d,), (td,) = primals, tangents
            out = f(d)
            return out, {"s": td["a"] * d["b"] + d["a"] * td["b"], "t": (td["a"] * 10.0,)}

        return lambda d: ns.jacfwd(f)(d), lambda d: ns.jacrev(f)(d)

    d = {"a": f32(1.0, 2.0), "b": f32(3.0, -1.0)}
    gw, gr = build(webjax), build(rjax)
    for w, r in zip(gw, gr):
        assert_close(w(to_w(d)), r(d))


def test_custom_jvp_second_order(rjax):
    def build(ns):
        @ns.custom_jvp
        def f(x):
            return ns.numpy.sin(x)

        @f.defjvp
        def f_jvp(p, t):
            return f(p[0]), ns.numpy.cos(p[0]) * t[0]

        return ns.grad(ns.grad(f))

    both(rjax, build, np.float32(0.3))
    check_grads(make_log1pexp(webjax), (X,), order=2)


def test_custom_jvp_under_vmap_batched_and_unbatched(rjax):
    def build(ns):
        @ns.custom_jvp
        def f(x, y):
            return x * ns.numpy.exp(y)

        @f.defjvp
        def f_jvp(p, t):
            x, y = p
            xd, yd = t
            return f(x, y), xd * ns.numpy.exp(y) + x * ns.numpy.exp(y) * yd

        return ns.vmap(ns.grad(f, argnums=(0, 1)), in_axes=(0, None))

    both(rjax, build, X, np.float32(0.5))


def test_custom_jvp_wrong_output_type_raises():
    @webjax.custom_jvp
    def f(x):
        return x * 2.0

    f.defjvp(lambda p, t: (f(p[0]), jnp.zeros(2)))
    with pytest.raises((TypeError, ValueError)):
        webjax.jvp(f, (to_w(X),), (to_w(X),))


def test_custom_jvp_without_rule_raises():
    @webjax.custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError):
        f(1.0)


# ---- custom_vjp --------------------------------------------------------------------------------
def make_clip_gradient(ns):
    """JAX docs: identity whose gradient is clipped to [lo, hi]."""

    @functools.partial(ns.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, None

    def bwd(lo, hi, _, g):
        return (ns.numpy.clip(g, lo, hi) if hasattr(ns.numpy, "clip") else ns.lax.clamp(lo, g, hi),)

    clip_gradient.defvjp(fwd, bwd)
    return clip_gradient


def test_custom_vjp_gradient_clipping(rjax):
    def build(ns):
        clip = make_clip_gradient(ns)

        def f(x):
            return ns.numpy.sum(clip(-0.75, 0.75, ns.numpy.sin(x) * 3.0))

        return ns.grad(f)

    both(rjax, build, X)
    both(rjax, lambda ns: ns.jit(build(ns)), X)
    both(rjax, lambda ns: ns.vmap(build(ns)), np.stack([X, -X]))


def make_pytree_res(ns):
    @ns.custom_vjp
    def f(x, y):
        return ns.numpy.sin(x) * y

    def fwd(x, y):
        return f(x, y), {"c": ns.numpy.cos(x), "sy": (ns.numpy.sin(x), y)}

    def bwd(res, g):
        sx, y = res["sy"]
        return (res["c"] * y * g, sx * g)

    f.defvjp(fwd, bwd)
    return f


def test_custom_vjp_pytree_residuals(rjax):
    both(
        rjax,
        lambda ns: ns.grad(lambda x, y: ns.numpy.sum(make_pytree_res(ns)(x, y)), (0, 1)),
        X,
        X + 1.0,
    )
    both(
        rjax, lambda ns: ns.jit(ns.grad(lambda x, y: ns.numpy.sum(make_pytree_res(ns)(x, y)))), X, X
    )
    check_grads(make_pytree_res(webjax), (X, X * 2.0), order=1, modes=("rev",))


def test_custom_vjp_none_cotangent(rjax):
    def build(ns):
        @ns.custom_vjp
        def f(x, y):
            return x * y

        f.defvjp(lambda x, y: (x * y, y), lambda y, g: (g * y, None))
        return ns.grad(lambda x, y: ns.numpy.sum(f(x, y)), argnums=(0, 1))

    _, gy = both(rjax, build, X, f32(2.0, 3.0, 4.0))
    assert np.all(np.asarray(gy) == 0) and gy.shape == (3,)


def test_custom_vjp_pytree_input_and_output(rjax):
    def build(ns):
        @ns.custom_vjp
        def f(d):
            return (d["a"] * 2.0, d["b"])

        f.defvjp(lambda d: (f(d), None), lambda _, g: ({"a": g[0] * 100.0, "b": g[1] * -1.0},))
        return ns.grad(lambda d: ns.numpy.sum(f(d)[0]) + ns.numpy.sum(f(d)[1]))

    both(rjax, build, {"a": X, "b": f32(1.0, 2.0)})


def test_custom_vjp_values_under_jit_and_vmap(rjax):
    def build(ns):
        f = make_pytree_res(ns)
        return ns.jit(ns.vmap(f, in_axes=(0, None)))

    both(rjax, build, np.stack([X, X * 0.5]), X)


def test_custom_vjp_vmap_of_grad(rjax):
    def build(ns):
        f = make_pytree_res(ns)
        return ns.vmap(ns.grad(lambda x, y: ns.numpy.sum(f(x, y))), in_axes=(0, None))

    both(rjax, build, np.stack([X, X * 0.5]), X)


def test_custom_vjp_forward_mode_is_type_error(rjax):
    msg = "can't apply forward-mode autodiff \\(jvp\\) to a custom_vjp function."
    with pytest.raises(TypeError, match=msg):
        rjax.jvp(make_pytree_res(rjax), (X, X), (X, X))
    with pytest.raises(TypeError, match=msg):
        webjax.jvp(make_pytree_res(webjax), (to_w(X), to_w(X)), (to_w(X), to_w(X)))
    with pytest.raises(TypeError, match=msg):
        webjax.jacfwd(make_pytree_res(webjax))(to_w(X), to_w(X))


def test_custom_vjp_bwd_wrong_structure_raises():
    @webjax.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, None), lambda _, g: (g,))  # one cotangent for two inputs
    with pytest.raises((TypeError, ValueError)):
        webjax.grad(f)(1.0, 2.0)


def test_custom_vjp_without_rule_raises():
    @webjax.custom_vjp
    def f(x):
        return x

    with pytest.raises(AttributeError):
        f(1.0)


def test_custom_vjp_fwd_called_once_per_grad():
    calls = []

    @webjax.custom_vjp
    def f(x):
        return lax.exp(x)

    def fwd(x):
        calls.append("fwd")
        y = lax.exp(x)
        return y, y

    f.defvjp(fwd, lambda y, g: (g * y,))
    assert float(webjax.grad(f)(0.0)) == 1.0
    assert calls == ["fwd"]


# ---- custom_gradient, closure_convert ----------------------------------------------------------
R = np.random.RandomState(0)


def randn32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


def test_custom_gradient(rjax: Any) -> None:
    def make(ns: Any) -> Any:
        @ns.custom_gradient
        def f(x: Any, y: Any) -> Any:
            out = ns.numpy.sin(x) * y

            def vjp(g: Any) -> Any:
                return (g * 10.0 * y, g * x)

            return out, vjp

        return f

    x, y = randn32(4), randn32(4)
    for argnums in (0, 1, (0, 1)):
        got = webjax.grad(lambda a, b: make(webjax)(a, b).sum(), argnums)(
            jnp.asarray(x), jnp.asarray(y)
        )
        want = rjax.grad(lambda a, b: make(rjax)(a, b).sum(), argnums)(x, y)
        for g, w in zip(
            np.atleast_1d(got) if argnums != (0, 1) else got,
            np.atleast_1d(want) if argnums != (0, 1) else want,
        ):
            assert_close(g, w, 1e-6, 0.0)
    jitted = webjax.jit(webjax.grad(lambda a: make(webjax)(a, jnp.asarray(y)).sum()))
    assert_close(jitted(jnp.asarray(x)), 10.0 * y, 1e-6, 0.0)
    assert_close(make(webjax)(jnp.asarray(x), jnp.asarray(y)), np.sin(x) * y, 1e-6, 0.0)


def test_closure_convert() -> None:
    x = jnp.asarray(randn32(3))

    def outer(v: Any) -> Any:
        fn, consts = webjax.closure_convert(lambda z: z * v + 1.0, v)
        assert len(consts) == 1  # the traced v is hoisted
        return fn(v, *consts)

    assert_close(webjax.jit(outer)(x), np.asarray(x) ** 2 + 1, 1e-6, 0.0)
    fn, consts = webjax.closure_convert(lambda z: z * x, x)
    assert consts == []  # concrete values stay closed over, as in JAX
    assert_close(fn(jnp.ones(3)), np.asarray(x), 0, 0.0)
