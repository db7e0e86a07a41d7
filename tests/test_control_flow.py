"""Structured control flow: cond/switch/while_loop/fori_loop/scan/map against real JAX, under
jit, grad, jvp and vmap, nested, with JAX's error types; plus the issue's "done when" programs
(tanh chains, per-example gradients, hessians, a scan RNN, a Newton solver, an SGD step).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

import webjax
import webjax.numpy as jnp
from webjax import lax

np = pytest.importorskip("numpy")


@pytest.fixture
def rjax():
    return pytest.importorskip("jax")


def f32(*vals: Any) -> np.ndarray:
    return np.asarray(vals, dtype=np.float32)


def to_w(tree: Any) -> Any:
    """NumPy pytree -> webjax arrays (0-d values through lax.full: jnp.asarray is unreliable)."""

    def one(x: Any) -> Any:
        x = np.asarray(x)
        return lax.full((), x.item(), str(x.dtype)) if x.ndim == 0 else jnp.asarray(x)

    return webjax.tree_util.tree_map(one, tree)


def assert_close(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    g = webjax.tree_util.tree_leaves(got)
    import jax

    w = jax.tree_util.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def both(rjax: Any, build: Any, *args: Any, rtol: float = 1e-5, atol: float = 1e-6) -> Any:
    """Run `build(ns)(*args)` with ns = webjax and ns = real jax, and compare."""
    got = build(webjax)(*to_w(args))
    want = build(rjax)(*args)
    assert_close(got, want, rtol=rtol, atol=atol)
    return got


X = f32(0.3, -1.2, 0.7)


# ---- values -----------------------------------------------------------------------------------
@pytest.mark.parametrize("pred", [True, False])
def test_cond_values(rjax, pred):
    def build(ns):
        def f(p, x):
            return ns.lax.cond(p, lambda a: (a * 2.0, a.sum()), lambda a: (-a, a.max()), x)

        return f

    both(rjax, build, np.bool_(pred), X)
    both(rjax, lambda ns: ns.jit(build(ns)), np.bool_(pred), X)


def test_cond_joins_weak_types_and_returns_arrays(rjax):
    def build(ns):
        def f(p, x):
            return ns.lax.cond(p, lambda x: x * 2, lambda x: ns.numpy.ones(()), x)

        return f

    out = both(rjax, build, np.bool_(True), 1.0)
    assert not out.weak_type  # JAX joins weak types across branches: weak + strong -> strong
    out = both(rjax, build, np.bool_(False), 1.0)
    assert not out.weak_type

    def build_const(ns):
        return ns.jit(lambda p: ns.lax.cond(p, lambda: 1.0, lambda: 2.0))

    for p in (True, False):
        out = both(rjax, build_const, np.bool_(p))
        assert isinstance(out, webjax.Array) and out.weak_type


def test_cond_operand_none_is_one_operand(rjax):
    """operand=None passes None to the branches (Optax's conditionally_mask), as in JAX."""
    for ns in (webjax, rjax):
        got = ns.lax.cond(True, lambda x: x is None, lambda x: x is not None, operand=None)
        assert bool(got)
        with pytest.raises(TypeError, match="no positional operands"):
            ns.lax.cond(True, lambda x, y: 1, lambda x, y: 2, 1, operand=None)


def test_cond_int_predicate_and_operand_kwarg(rjax):
    def build(ns):
        return lambda n, x: ns.lax.cond(n, lambda a: a + 1.0, lambda a: a - 1.0, operand=x)

    for n in (0, 3, -1):
        both(rjax, build, np.int32(n), X)


def test_cond_closures_and_pytrees(rjax):
    c = f32(10.0, 20.0, 30.0)

    def build(ns):
        cc = ns.numpy.asarray(c)

        def f(p, d):
            return ns.lax.cond(
                p > 0.0,
                lambda d: {"u": d["x"] * cc, "v": (d["y"],)},
                lambda d: {"u": d["x"] - cc, "v": (d["y"] * 2,)},
                d,
            )

        return ns.jit(f)

    for p in (1.0, -1.0):
        both(rjax, build, np.float32(p), {"x": X, "y": np.int32(4)})


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 5])
def test_switch_values_and_clamping(rjax, index):
    def build(ns):
        branches = [lambda x: x + 1.0, lambda x: x * x, lambda x: ns.numpy.sin(x)]
        return ns.jit(lambda i, x: ns.lax.switch(i, branches, x))

    both(rjax, build, np.int32(index), X)


def test_while_loop_values(rjax):
    def build(ns):
        def f(x):
            def body(c):
                i, v = c
                return i + 1, v * 1.5 + 0.1

            return ns.lax.while_loop(lambda c: c[0] < 5, body, (0, x))

        return f

    both(rjax, build, X)
    both(rjax, lambda ns: ns.jit(build(ns)), X)


def test_while_loop_zero_iterations(rjax):
    def build(ns):
        return lambda x: ns.lax.while_loop(lambda v: v.sum() > 100.0, lambda v: v * 2.0, x)

    both(rjax, build, X)


@pytest.mark.parametrize("bounds", [(0, 4), (2, 5), (3, 3), (5, 2)])
def test_fori_loop_values(rjax, bounds):
    lo, hi = bounds

    def build(ns):
        return lambda x: ns.lax.fori_loop(lo, hi, lambda i, v: v * 0.5 + i, x)

    both(rjax, build, X)
    both(rjax, lambda ns: ns.jit(build(ns)), X)


@pytest.mark.parametrize("how", ["eager", "jit"])
def test_long_loop_memory_is_its_live_frontier(how):
    """1,100 iterations of a 4 MB carry (4.4 GB in all): too many to unroll into one program
    (the loop then runs its body's program per iteration), and each iteration's buffer freed
    once the next has read it; wasm, whose memory stops at 4 GiB, raised MemoryError before."""
    n, steps = 1 << 20, 1100

    def loop(x):
        return lax.fori_loop(0, steps, lambda i, v: v * 0.5 + 1.0, x)

    with webjax.default_device(webjax.devices("wasm")[0]):
        out = (webjax.jit(loop) if how == "jit" else loop)(jnp.zeros(n, jnp.float32))
        np.testing.assert_array_equal(np.asarray(out[:3]), np.full(3, 2.0, np.float32))


def test_fori_loop_traced_bounds(rjax):
    def build(ns):
        return ns.jit(lambda n, x: ns.lax.fori_loop(0, n, lambda i, v: v + i * 1.0, x))

    both(rjax, build, np.int32(4), X)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_values(rjax, reverse):
    def build(ns):
        def step(c, x):
            c = c * 0.9 + x["a"]
            return c, (c.sum(), x["b"] * 2)

        def f(c0, xs):
            return ns.lax.scan(step, c0, xs, reverse=reverse)

        return f

    xs = {
        "a": np.arange(8, dtype=np.float32).reshape(4, 2) * 0.1,
        "b": np.arange(4, dtype=np.int32),
    }
    both(rjax, build, f32(1.0, -1.0), xs)
    both(rjax, lambda ns: ns.jit(build(ns)), f32(1.0, -1.0), xs)


def test_scan_length_no_xs_and_none_ys(rjax):
    def build(ns):
        return lambda c: ns.lax.scan(lambda c, _: (c * 2.0, None), c, None, length=3)

    both(rjax, build, X)

    def build2(ns):
        return lambda c: ns.lax.scan(lambda c, _: (c + 1.0, c), c, length=4)

    both(rjax, build2, X)


def test_scan_weak_typed_carry(rjax):
    def build(ns):
        return lambda xs: ns.lax.scan(lambda c, x: (c + x, c * 2), 0.0, xs)

    both(rjax, build, X)


def test_map_values(rjax):
    def build(ns):
        return lambda xs: ns.lax.map(lambda x: (ns.numpy.sum(x * x), x[::-1]), xs)

    both(rjax, build, np.arange(6, dtype=np.float32).reshape(3, 2))


# ---- autodiff --------------------------------------------------------------------------------
def test_grad_of_cond_under_jit(rjax):
    def build(ns):
        def f(x, p):
            return ns.lax.cond(
                p, lambda x: ns.numpy.sum(ns.numpy.sin(x) * x), lambda x: ns.numpy.sum(x**3), x
            )

        return ns.jit(ns.grad(f))

    for p in (True, False):
        both(rjax, build, X, np.bool_(p))


def test_grad_of_switch_and_jvp_of_cond(rjax):
    def build(ns):
        def f(x, i):
            return ns.lax.switch(i, [ns.numpy.sin, ns.numpy.cos, lambda x: x * x], x).sum()

        return ns.grad(f)

    for i in range(3):
        both(rjax, build, X, np.int32(i))

    def build_jvp(ns):
        def f(x, t):
            return ns.jvp(
                lambda x: ns.lax.cond(x[0] > 0, ns.numpy.exp, ns.numpy.tanh, x), (x,), (t,)
            )

        return f

    both(rjax, build_jvp, X, f32(1.0, 2.0, 3.0))
    both(rjax, build_jvp, -X, f32(1.0, 2.0, 3.0))


def test_grad_of_scan_under_jit(rjax):
    def build(ns):
        def f(w, xs):
            def step(c, x):
                c = ns.numpy.tanh(c * w + x)
                return c, c * c

            c, ys = ns.lax.scan(step, ns.numpy.zeros(2), xs)
            return ns.numpy.sum(c) + ns.numpy.sum(ys)

        return ns.jit(ns.grad(f, argnums=(0, 1)))

    both(rjax, build, f32(0.5, -0.3), np.arange(8, dtype=np.float32).reshape(4, 2) * 0.2)


def test_grad_of_reverse_scan(rjax):
    def build(ns):
        def f(xs):
            c, ys = ns.lax.scan(lambda c, x: (c * x, c + x), 1.0, xs, reverse=True)
            return c + ns.numpy.sum(ys * ys)

        return ns.grad(f)

    both(rjax, build, f32(0.5, 1.5, -0.7, 1.1))


def test_grad_of_fori_loop_static_bounds(rjax):
    def build(ns):
        def f(x):
            return ns.numpy.sum(ns.lax.fori_loop(0, 3, lambda i, v: ns.numpy.sin(v) * (i + 1.0), x))

        return ns.jit(ns.grad(f))

    both(rjax, build, X)


def test_jvp_of_while_loop(rjax):
    def build(ns):
        def f(x, t):
            def loop(x):
                return ns.lax.while_loop(
                    lambda c: c[0] < 3, lambda c: (c[0] + 1, ns.numpy.sin(c[1]) + c[1]), (0, x)
                )[1]

            return ns.jvp(loop, (x,), (t,))

        return ns.jit(f)

    both(rjax, build, X, f32(1.0, 0.5, -2.0))


def test_jacfwd_of_while_loop(rjax):
    def build(ns):
        return ns.jacfwd(
            lambda x: ns.lax.while_loop(lambda v: ns.numpy.sum(v) < 10.0, lambda v: v * 1.7, x)
        )

    both(rjax, build, f32(0.5, 1.0))


def test_grad_of_while_loop_is_value_error():
    f = lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x)
    with pytest.raises(ValueError, match="Reverse-mode differentiation"):
        webjax.grad(f)(1.0)
    # concrete bounds (even jnp arrays) give a scan, as in JAX; traced bounds a while loop
    g = lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2.0, x)
    assert float(webjax.grad(g)(1.0, jnp.array(3))) == 8.0
    with pytest.raises(ValueError, match="Reverse-mode differentiation"):
        webjax.jit(webjax.grad(g))(1.0, 3)


def test_hessian_through_scan_and_cond(rjax):
    def build(ns):
        def f(x):
            def step(c, xi):
                c = ns.lax.cond(xi > 0, lambda c: c * xi, lambda c: c + xi * xi, c)
                return c, None

            c, _ = ns.lax.scan(step, 1.0, x)
            return c

        return ns.hessian(f)

    both(rjax, build, f32(0.5, -0.4, 1.5), rtol=1e-4, atol=1e-5)


# ---- vmap -------------------------------------------------------------------------------------
def test_vmap_cond_batched_predicate(rjax):
    def build(ns):
        def f(p, x):
            return ns.lax.cond(p, lambda x: x * 2.0, lambda x: ns.numpy.sin(x), x)

        return ns.vmap(f)

    both(rjax, build, np.array([True, False, True]), X)
    both(rjax, lambda ns: ns.jit(build(ns)), np.array([True, False, True]), X)


def test_vmap_cond_unbatched_predicate(rjax):
    def build(ns):
        return ns.vmap(lambda x, p: ns.lax.cond(p, lambda x: x + 1.0, lambda x: x, x), (0, None))

    both(rjax, build, X, np.bool_(True))


def test_vmap_switch_batched_index(rjax):
    def build(ns):
        br = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
        return ns.vmap(lambda i, x: ns.lax.switch(i, br, x))

    both(rjax, build, np.array([2, 0, 1], np.int32), X)


def test_vmap_while_loop_batched_carry_and_predicate(rjax):
    def build(ns, in_axes):
        def f(x, limit):
            return ns.lax.while_loop(
                lambda c: c[1] < limit, lambda c: (c[0] + 1, c[1] * 2.0), (0, x)
            )

        return ns.vmap(f, in_axes=in_axes)

    x = f32(1.0, 3.0, 0.5)
    both(rjax, lambda ns: build(ns, 0), x, f32(10.0, 10.0, 100.0))
    both(rjax, lambda ns: build(ns, (0, None)), x, np.float32(8))
    both(rjax, lambda ns: ns.jit(build(ns, (None, 0))), np.float32(1.0), f32(3.0, 20.0))


def test_vmap_scan_batched_xs_and_carry(rjax):
    def build(ns):
        def f(c0, xs):
            return ns.lax.scan(lambda c, x: (c * x + 1.0, c), c0, xs)

        return f

    c0, xs = f32(1.0, 2.0), np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5
    both(rjax, lambda ns: ns.vmap(build(ns)), c0, xs)  # both batched
    both(rjax, lambda ns: ns.vmap(build(ns), in_axes=(None, 0)), np.float32(1.0), xs)
    both(rjax, lambda ns: ns.vmap(build(ns), in_axes=(0, None)), c0, xs[0])
    both(rjax, lambda ns: ns.vmap(build(ns), in_axes=(0, 1)), c0, xs.T.copy())


def test_vmap_fori_loop(rjax):
    def build(ns):
        return ns.vmap(lambda x: ns.lax.fori_loop(0, 3, lambda i, v: v * v + 0.1, x))

    both(rjax, build, f32(0.1, 0.5, 0.9))


# ---- nesting ----------------------------------------------------------------------------------
def test_scan_inside_cond_inside_jit(rjax):
    def build(ns):
        def f(p, xs):
            def run(xs):
                return ns.lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)

            def other(xs):
                return 1.0, xs * 2.0

            return ns.lax.cond(p, run, other, xs)

        return ns.jit(f)

    for p in (True, False):
        both(rjax, build, np.bool_(p), f32(1.0, 2.0, 3.0))


def test_grad_of_scan_of_cond(rjax):
    def build(ns):
        def f(xs):
            def step(c, x):
                c = ns.lax.cond(x > 0.0, lambda a: a * ns.numpy.sin(x), lambda a: a - x, c)
                return c, c

            c, ys = ns.lax.scan(step, 1.0, xs)
            return c + ns.numpy.sum(ys)

        return ns.grad(f)

    both(rjax, build, f32(0.5, -0.7, 1.2, 0.3))
    both(rjax, lambda ns: ns.jit(build(ns)), f32(0.5, -0.7, 1.2, 0.3))


def test_while_inside_scan_inside_vmap(rjax):
    def build(ns):
        def f(xs):
            def step(c, x):
                y = ns.lax.while_loop(lambda v: v < 5.0, lambda v: v * 2.0, x)
                return c + y, y

            return ns.lax.scan(step, 0.0, xs)

        return ns.vmap(f)

    both(rjax, build, np.array([[0.5, 1.0], [3.0, 0.1]], np.float32))


# ---- errors -----------------------------------------------------------------------------------
def test_cond_mismatched_branch_outputs_is_type_error():
    with pytest.raises(TypeError):
        lax.cond(True, lambda x: x, lambda x: x.sum(), jnp.zeros(3))  # shape
    with pytest.raises(TypeError):
        lax.cond(True, lambda x: x, lambda x: (x, x), jnp.zeros(3))  # structure
    with pytest.raises(TypeError):
        lax.cond(True, lambda x: x, lambda x: lax.convert_element_type(x, "int32"), jnp.zeros(3))
    with pytest.raises(TypeError):
        lax.switch(0, [lambda x: x, lambda x: x[:2]], jnp.zeros(3))


def test_cond_bad_predicate():
    with pytest.raises(TypeError):
        lax.cond(jnp.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="Pred type must be either boolean or number"):
        lax.cond(jnp.array(1.5, jnp.complex64), lambda: 1.0, lambda: 2.0)
    # JAX accepts a floating-point predicate (nonzero is true)
    assert float(lax.cond(1.5, lambda: 1.0, lambda: 2.0)) == 1.0


def test_scan_carry_type_change_is_type_error():
    with pytest.raises(TypeError, match="carry"):
        lax.scan(lambda c, x: (c.sum(), x), jnp.zeros(2), jnp.zeros(3))  # shape
    with pytest.raises(TypeError, match="carry"):
        lax.scan(lambda c, x: (lax.convert_element_type(c, "int32"), x), jnp.zeros(2), jnp.zeros(3))
    with pytest.raises(TypeError, match="carry"):
        lax.scan(lambda c, x: ((c, c), x), jnp.zeros(2), jnp.zeros(3))  # structure


def test_while_loop_carry_type_change_is_type_error():
    with pytest.raises(
        TypeError,
        match="while_loop body function carry input and carry output must have equal types",
    ):
        lax.while_loop(lambda c: c.sum() < 3.0, lambda c: c.reshape(1, 2), jnp.zeros(2))
    with pytest.raises(
        TypeError,
        match="while_loop body function carry input and carry output must have equal types",
    ):
        lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, jnp.array(0, jnp.int32))
    # a weakly typed carry (jnp.array(0) is weak, as in JAX) is promoted instead
    assert float(lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, jnp.array(0))) == 3.0


def test_while_loop_non_boolean_cond_is_type_error():
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c - 1.0, 3.0)
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, jnp.zeros(2))


def test_scan_length_mismatch_is_value_error():
    with pytest.raises(ValueError):
        lax.scan(lambda c, x: (c, x), 0.0, (jnp.zeros(3), jnp.zeros(4)))
    with pytest.raises(ValueError):
        lax.scan(lambda c, x: (c, x), 0.0, jnp.zeros(3), length=4)
    with pytest.raises(ValueError):
        lax.scan(lambda c, x: (c, x), 0.0, None)


def test_scan_body_must_return_pair():
    with pytest.raises(TypeError):
        lax.scan(lambda c, x: c, 0.0, jnp.zeros(3))


# ---- the "done when" programs ----------------------------------------------------------
def test_done_when_grad_of_tanh_chain(rjax):
    def build(ns):
        def f(x):
            y = x
            for _ in range(5):
                y = ns.numpy.tanh(y * 1.3 + 0.1)
            return ns.numpy.sum(y)

        g1 = ns.grad(f)
        g2 = ns.grad(lambda x: ns.numpy.sum(g1(x)))
        return ns.grad(lambda x: ns.numpy.sum(g2(x) * x))

    both(rjax, build, f32(0.2, -0.4), rtol=1e-4, atol=1e-5)


def test_done_when_per_example_gradients(rjax):
    def build(ns):
        def loss(params, x, y):
            w, b = params
            pred = ns.lax.dot(x, w) + b
            return (pred - y) ** 2

        return ns.jit(ns.vmap(ns.grad(loss), in_axes=(None, 0, 0)))

    params = (f32(0.1, -0.2, 0.3), np.float32(0.5))
    xs = np.arange(12, dtype=np.float32).reshape(4, 3) * 0.25 - 1.0
    ys = f32(1.0, 0.0, -1.0, 0.5)
    gw, gb = both(rjax, build, params, xs, ys)
    assert gw.shape == (4, 3) and gb.shape == (4,)


def test_done_when_hessian(rjax):
    def build(ns):
        return ns.hessian(lambda x: ns.numpy.sum(ns.numpy.exp(x) * x[::-1]) + ns.numpy.prod(x))

    both(rjax, build, f32(0.1, 0.2, 0.3), rtol=1e-4, atol=1e-5)


def test_done_when_scan_rnn(rjax):
    def build(ns):
        def rnn(params, xs):
            def cell(h, x):
                h = ns.numpy.tanh(ns.lax.dot(params["wh"], h) + ns.lax.dot(params["wx"], x))
                return h, ns.numpy.sum(h)

            h, ys = ns.lax.scan(cell, ns.numpy.zeros(2), xs)
            return ns.numpy.sum(ys**2) + ns.numpy.sum(h)

        return ns.jit(ns.value_and_grad(rnn))

    params = {
        "wh": np.array([[0.5, -0.3], [0.2, 0.4]], np.float32),
        "wx": np.array([[0.1, 0.2, 0.3], [-0.1, 0.0, 0.5]], np.float32),
    }
    xs = np.arange(15, dtype=np.float32).reshape(5, 3) * 0.1
    both(rjax, build, params, xs, rtol=1e-4, atol=1e-5)


def test_done_when_newton_solver(rjax):
    def build(ns):
        def sqrt_newton(a):
            def cond(c):
                x, i = c
                return (ns.numpy.abs(x * x - a) > 1e-5) & (i < 50)

            def body(c):
                x, i = c
                return 0.5 * (x + a / x), i + 1

            return ns.lax.while_loop(cond, body, (a, 0))[0]

        return ns.jit(ns.vmap(sqrt_newton))

    got = both(rjax, build, f32(2.0, 9.0, 0.25))
    np.testing.assert_allclose(np.asarray(got), np.sqrt(f32(2.0, 9.0, 0.25)), rtol=1e-5)


def test_done_when_sgd_training_step(rjax):
    def build(ns):
        def loss(params, x, y):
            pred = ns.numpy.tanh(ns.lax.dot(x, params["w"]) + params["b"])
            return ns.numpy.mean((pred - y) ** 2)

        @ns.jit
        def step(params, x, y):
            l, g = ns.value_and_grad(loss)(params, x, y)
            new = ns.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, g)
            return new, l

        return step

    params = {"w": f32(0.1, -0.1, 0.2), "b": np.float32(0.0)}
    x = np.arange(12, dtype=np.float32).reshape(4, 3) * 0.2 - 1.0
    y = f32(0.5, -0.5, 0.25, 0.0)
    w_step, r_step = build(webjax), build(rjax)
    wp, rp = to_w(params), params
    losses = []
    for _ in range(4):
        wp, wl = w_step(wp, *to_w((x, y)))
        rp, rl = r_step(rp, x, y)
        assert_close(wl, rl, rtol=1e-4)
        assert_close(wp, rp, rtol=1e-4)
        losses.append(float(wl))
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0]
    assert w_step.trace_count == 1
    assert isinstance(wp, dict) and sorted(wp) == ["b", "w"]


def test_partial_application_in_bodies():
    body = functools.partial(lambda k, i, v: v + k * i, 2.0)
    assert float(lax.fori_loop(0, 4, body, 0.0)) == 12.0


# ---- on every backend -------------------------------------------------------------------------
def test_control_flow_values_on_device(device):
    x = jnp.asarray(f32(0.5, -1.0, 2.0))
    out = webjax.jit(lambda p, x: lax.cond(p, lambda v: v * 2.0, lax.sin, x))(True, x)
    np.testing.assert_allclose(np.asarray(out), [1.0, -2.0, 4.0], rtol=1e-6)
    c, ys = webjax.jit(lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x))(x)
    np.testing.assert_allclose(float(c), 1.5, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), [0.0, -0.5, -1.0], rtol=1e-6)
    n = webjax.jit(lambda v: lax.while_loop(lambda c: c < 100.0, lambda c: c * 3.0, v))(1.0)
    assert float(n) == 243.0


def test_cond_in_jit_stays_compiled_on_device(device, rjax):
    """A cond/switch whose index is known only when the program runs: the program compiles
    (every branch evaluated, the taken one's outputs selected) and gives JAX's values; the
    untaken branch's NaNs and infinities do not leak; out-of-range switch indices clamp."""
    from webjax._src.dispatch import program

    def f(lx: Any, x: Any, i: Any) -> Any:
        y = lx.switch(i, [lambda v: v * 2.0, lambda v: v - 1.0, lambda v: -v], x)
        z = lx.cond(y.sum() > 0.0, lambda v: v + 1.0, lambda v: v / 0.0, y)
        return z, lx.cond(x[0] > 0.0, lambda v: (v, 1), lambda v: (v * 0.0, 2), z)

    jf, want_f = webjax.jit(functools.partial(f, lax)), rjax.jit(functools.partial(f, rjax.lax))
    before = set(program._CACHE)
    for x0 in (0.5, -3.0):
        x = f32(x0, 1.0, 2.0)
        for i in (-1, 0, 1, 2, 7):
            got, want = jf(jnp.asarray(x), i), want_f(x, i)
            for g, w in zip(webjax.tree_util.tree_leaves(got), rjax.tree_util.tree_leaves(want)):
                np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    new = [program._CACHE[k] for k in set(program._CACHE) - before]
    assert new and all(p is not None for p in new)  # compiled, not run eagerly


def test_grad_of_scan_on_device(device):
    def loss(w):
        c, _ = lax.scan(lambda c, v: (jnp.tanh(c * w + v), None), 0.0, jnp.arange(3.0))
        return c

    g = webjax.jit(webjax.grad(loss))(0.5)
    w, eps = 0.5, 1e-2
    num = (float(loss(w + eps)) - float(loss(w - eps))) / (2 * eps)
    np.testing.assert_allclose(float(g), num, rtol=1e-3)


def _sines_per_new_kernel(device: Any, run: Any) -> list[int]:
    from webjax._src.ir.ops import Op

    cache = device.backend._cache
    before = set(cache)
    run()
    return [sum(n.op is Op.SIN for n in k.exp.toposort()) for k in cache if k not in before]


@pytest.mark.parametrize("unroll", [1, 4])
def test_scan_iterations_are_loop_bodies_not_one_fused_chain(device: Any, unroll: int) -> None:
    # Every `unroll` iterations end the body (JAX's loop boundary): a kernel of a 120-step scan
    # holds at most `unroll` iterations, not a chain fused across the loop (a 100-step
    # pendulum compiled for 77 s on webgl when it was), with the loop's values.
    scale = 0.5 + 0.001 * unroll  # a body of its own, compiled fresh

    def pendulum(th: Any, n: int, unroll: Any) -> Any:
        def body(s: Any, _: Any) -> Any:
            th, om = s
            om = om - 0.01 * jnp.sin(th) * scale
            th = th + 0.01 * om
            return (th, om), th

        return lax.scan(body, (th, jnp.zeros_like(th)), None, length=n, unroll=unroll)

    th0 = jnp.linspace(0.1, 1.0, 5)

    def compiled(n: int, unroll: int) -> Any:
        return lambda: webjax.block_until_ready(webjax.jit(lambda t: pendulum(t, n, unroll))(th0))

    sines = _sines_per_new_kernel(device, compiled(120, unroll))
    assert 0 < max(sines, default=0) <= unroll, sines  # one sin per iteration's body
    (th, _), ys = webjax.jit(lambda t: pendulum(t, 120, unroll))(th0)
    t, o, want = np.linspace(0.1, 1.0, 5, dtype=np.float32), np.zeros(5, np.float32), []
    for _ in range(120):
        o = o - np.float32(0.01) * np.sin(t) * np.float32(scale)
        t = t + np.float32(0.01) * o
        want.append(t)
    np.testing.assert_allclose(np.asarray(ys), np.stack(want), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(th), t, rtol=1e-5, atol=1e-6)


def test_scan_unroll_argument_as_jax(rjax: Any) -> None:
    def run(lib: Any, unroll: Any) -> Any:
        return lib.lax.scan(lambda c, x: (c + x, c * x), 0.0, lib.numpy.arange(5.0), unroll=unroll)

    for unroll in (True, False, 0, 2, 7):
        assert_close(run(webjax, unroll), run(rjax, unroll))
    for lib in (webjax, rjax):
        with pytest.raises(ValueError, match="non-negative"):
            run(lib, -1)
