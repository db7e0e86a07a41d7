"""reduce_window (sum/max/min: pooling patterns, dilations, padding) and the cumulative
reductions against real JAX: values, gradients, vmap, jit, and every backend."""

from __future__ import annotations

import gc

import pytest

import webjax
import webjax.numpy as jnp
from webjax._src.lax import windowed as W

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
jlax = jax.lax

RNG = np.random.default_rng(1)
INITS = {"add": 0.0, "max": -np.inf, "min": np.inf}


def _rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _close(got, want, tol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max()) if finite.size else 1.0)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def _ours(op):
    return {"add": webjax.lax.add, "max": webjax.lax.max, "min": webjax.lax.min}[op]


def _theirs(op):
    return {"add": jlax.add, "max": jlax.max, "min": jlax.min}[op]


WINDOWS = [  # shape, window, strides, padding, base dilation, window dilation
    ((7,), (3,), (1,), "SAME", None, None),
    ((8,), (2,), (2,), "VALID", None, None),
    ((9,), (3,), (2,), ((1, 2),), (2,), None),
    ((9,), (2,), (1,), ((-1, 3),), None, (3,)),
    ((5, 6), (2, 3), (1, 2), "SAME", None, None),
    ((5, 6), (3, 2), (2, 1), ((0, 1), (2, 0)), (1, 2), (2, 1)),
    ((5, 6), (3, 3), (1, 1), "SAME", (2, 1), (1, 2)),
    ((2, 5, 4), (1, 3, 2), (1, 2, 2), "VALID", None, None),
    ((2, 5, 4), (2, 2, 2), (1, 1, 3), ((1, 0), (0, 0), (1, 1)), (1, 1, 2), (1, 2, 1)),
]


@pytest.mark.parametrize("op", ["add", "max", "min"])
@pytest.mark.parametrize("shape,window,strides,padding,bdil,wdil", WINDOWS)
def test_reduce_window_values(op, shape, window, strides, padding, bdil, wdil):
    x = _rand(*shape)
    got = W.reduce_window(
        jnp.asarray(x), INITS[op], _ours(op), window, strides, padding, bdil, wdil
    )
    want = jlax.reduce_window(x, INITS[op], _theirs(op), window, strides, padding, bdil, wdil)
    _close(got, want)


@pytest.mark.parametrize("op", ["add", "max", "min"])
@pytest.mark.parametrize("shape,window,strides,padding,bdil,wdil", WINDOWS)
def test_reduce_window_grads(op, shape, window, strides, padding, bdil, wdil):
    x = _rand(*shape)
    out_shape = jlax.reduce_window(
        x, INITS[op], _theirs(op), window, strides, padding, bdil, wdil
    ).shape
    ct = _rand(*out_shape)

    def ours(v):
        r = W.reduce_window(v, INITS[op], _ours(op), window, strides, padding, bdil, wdil)
        return (r * jnp.asarray(ct)).sum()

    def theirs(v):
        r = jlax.reduce_window(v, INITS[op], _theirs(op), window, strides, padding, bdil, wdil)
        return (r * ct).sum()

    dilated = any(d != 1 for d in (bdil or ()) + (wdil or ()))
    # JAX has no max/min VJP with dilations; its forward mode (jvp) covers them
    oracle = jax.jacfwd(theirs) if op != "add" and dilated else jax.grad(theirs)
    _close(webjax.grad(ours)(jnp.asarray(x)), oracle(x))


def _avg_pool(lax_mod, x, window, strides, padding):
    """NHWC average pooling that divides by the number of real elements (as flax does)."""
    dims, st = (1, *window, 1), (1, *strides, 1)
    sums = lax_mod.reduce_window(x, 0.0, lax_mod.add, dims, st, padding)
    ones = (jax.numpy if lax_mod is jlax else jnp).ones(x.shape[1:3] + (1,), x.dtype)
    counts = lax_mod.reduce_window(ones[None], 0.0, lax_mod.add, dims, st, padding)
    return sums / counts


def _max_pool(lax_mod, x, window, strides, padding):
    return lax_mod.reduce_window(
        x, -np.inf, lax_mod.max, (1, *window, 1), (1, *strides, 1), padding
    )


@pytest.mark.parametrize("pool", [_avg_pool, _max_pool])
@pytest.mark.parametrize("window,strides", [((2, 2), (2, 2)), ((3, 3), (1, 1)), ((3, 2), (2, 1))])
def test_pooling_patterns(pool, window, strides):
    x = _rand(2, 5, 6, 3)
    got = pool(_Ours, jnp.asarray(x), window, strides, "SAME")
    want = pool(jlax, x, window, strides, "SAME")
    _close(got, want)
    g1 = webjax.grad(lambda v: (pool(_Ours, v, window, strides, "SAME") ** 2).sum())(jnp.asarray(x))
    g2 = jax.grad(lambda v: (pool(jlax, v, window, strides, "SAME") ** 2).sum())(x)
    _close(g1, g2)


class _Ours:
    """webjax.lax with this module's reduce_window (until webjax.lax re-exports it)."""

    add, max = webjax.lax.add, webjax.lax.max
    reduce_window = staticmethod(W.reduce_window)


def test_max_pool_ties_pick_the_first_maximum():
    x = np.array([[1.0, 1.0, 2.0, 2.0, 0.0, 3.0, 3.0, 3.0]], np.float32)

    def f(v, lax_mod, rw):
        return rw(v, -np.inf, lax_mod.max, (1, 3), (1, 2), "SAME").sum()

    got = webjax.grad(lambda v: f(v, webjax.lax, W.reduce_window))(jnp.asarray(x))
    want = jax.grad(lambda v: f(v, jlax, jlax.reduce_window))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_reduce_window_jvp_vs_jax():
    x, t = _rand(4, 7), _rand(4, 7)
    for op in ("max", "min", "add"):
        args = ((2, 3), (2, 2), "SAME")

        def f(v, op=op, args=args):
            return W.reduce_window(v, INITS[op], _ours(op), *args)

        def g(v, op=op, args=args):
            return jlax.reduce_window(v, INITS[op], _theirs(op), *args)

        o1, t1 = webjax.jvp(f, (jnp.asarray(x),), (jnp.asarray(t),))
        o2, t2 = jax.jvp(g, (x,), (t,))
        _close(o1, o2)
        _close(t1, t2)


@pytest.mark.parametrize("op,init", [("add", 1.5), ("max", 0.0), ("min", 0.25)])
def test_non_identity_init(op, init):
    x = _rand(3, 8)
    args = ((2, 3), (1, 2), ((1, 1), (2, 0)))
    got = W.reduce_window(jnp.asarray(x), init, _ours(op), *args)
    _close(got, jlax.reduce_window(x, init, _theirs(op), *args))


def test_computation_recognition():
    x = _rand(6)
    want = jlax.reduce_window(x, 0.0, jlax.add, (3,), (1,), "VALID")
    for comp in (jnp.add, lambda a, b: a + b, lambda a, b: b + a):
        _close(W.reduce_window(jnp.asarray(x), 0.0, comp, (3,), (1,), "VALID"), want)
    want = jlax.reduce_window(x, -np.inf, jlax.max, (3,), (1,), "VALID")
    _close(W.reduce_window(jnp.asarray(x), -np.inf, jnp.maximum, (3,), (1,), "VALID"), want)
    # any other computation folds the window's views (tests/test_user_programs_numpy.py)
    want = jlax.reduce_window(x, 1.0, jlax.mul, (3,), (1,), "VALID")
    _close(W.reduce_window(jnp.asarray(x), 1.0, webjax.lax.mul, (3,), (1,), "VALID"), want)


def test_integer_reduce_window():
    x = RNG.integers(-50, 50, (4, 6)).astype("int32")
    for op in ("add", "max", "min"):
        init = {"add": 0, "max": np.iinfo(np.int32).min, "min": np.iinfo(np.int32).max}[op]
        got = W.reduce_window(jnp.asarray(x), init, _ours(op), (2, 2), (1, 1), "SAME")
        want = jlax.reduce_window(x, init, _theirs(op), (2, 2), (1, 1), "SAME")
        assert got.dtype == jnp.int32
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("op", ["add", "max"])
def test_reduce_window_vmap_and_jit(op):
    x = _rand(3, 5, 6)

    def f(v):
        return W.reduce_window(v, INITS[op], _ours(op), (2, 3), (1, 2), "SAME")

    def g(v):
        return jlax.reduce_window(v, INITS[op], _theirs(op), (2, 3), (1, 2), "SAME")

    got = webjax.vmap(f, in_axes=1)(jnp.asarray(x))
    for k in range(5):
        _close(got[k], g(x[:, k]))
    x0 = x[:, 0]
    _close(webjax.jit(f)(jnp.asarray(x0)), g(x0))
    loss = lambda v: (f(v) ** 2).sum()
    jloss = lambda v: (g(v) ** 2).sum()
    _close(webjax.jit(webjax.grad(loss))(jnp.asarray(x0)), jax.grad(jloss)(x0))
    got = webjax.vmap(webjax.grad(loss), in_axes=1)(jnp.asarray(x))
    _close(got, jax.vmap(jax.grad(jloss), in_axes=1)(x))


def test_max_pool_second_derivative_is_zero_safe():
    # grad of grad goes through select_and_scatter_add's jvp and transpose
    x = _rand(6)

    def f(v, rw, lax_mod):
        y = rw(v, -np.inf, lax_mod.max, (2,), (1,), "SAME")
        return (y**3).sum()

    g1 = webjax.grad(lambda v: webjax.grad(lambda u: f(u, W.reduce_window, webjax.lax))(v).sum())
    g2 = jax.grad(lambda v: jax.grad(lambda u: f(u, jlax.reduce_window, jlax))(v).sum())
    _close(g1(jnp.asarray(x)), g2(x))


# ---- cumulative reductions ----------------------------------------------------------------------
CUMS = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]


@pytest.mark.parametrize("name", CUMS)
@pytest.mark.parametrize("axis,reverse", [(0, False), (1, True), (1, False), (0, True)])
def test_cumulative_values_and_grads(name, axis, reverse):
    x = _rand(4, 6)
    ours, theirs = getattr(W, name), getattr(jlax, name)
    _close(ours(jnp.asarray(x), axis=axis, reverse=reverse), theirs(x, axis=axis, reverse=reverse))
    ct = _rand(4, 6)
    g1 = webjax.grad(lambda v: (ours(v, axis=axis, reverse=reverse) * jnp.asarray(ct)).sum())
    g2 = jax.grad(lambda v: (theirs(v, axis=axis, reverse=reverse) * ct).sum())
    _close(g1(jnp.asarray(x)), g2(x), tol=1e-4)


def test_cumprod_grad_exact_with_zeros():
    x = np.array([[2.0, 0.0, 3.0, 0.0, 5.0, -1.5, 0.5]], np.float32)
    g1 = webjax.grad(lambda v: W.cumprod(v, axis=1).sum())(jnp.asarray(x))
    g2 = jax.grad(lambda v: jlax.cumprod(v, axis=1).sum())(x)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-6)
    g1 = webjax.grad(lambda v: W.cumprod(v, axis=1, reverse=True).sum())(jnp.asarray(x))
    g2 = jax.grad(lambda v: jlax.cumprod(v, axis=1, reverse=True).sum())(x)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-6)


def test_cumlogsumexp_is_stable():
    x = np.array([1000.0, -1000.0, 999.0, -np.inf, 1001.0], np.float32)
    _close(W.cumlogsumexp(jnp.asarray(x)), jlax.cumlogsumexp(x))
    _close(W.cumlogsumexp(jnp.asarray(x), reverse=True), jlax.cumlogsumexp(x, reverse=True))
    y = np.full(3, -np.inf, np.float32)
    np.testing.assert_array_equal(np.asarray(W.cumlogsumexp(jnp.asarray(y))), y)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
def test_cumulative_integers(name):
    x = RNG.integers(-3, 4, (3, 7)).astype("int32")
    got = getattr(W, name)(jnp.asarray(x), axis=1)
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(got), np.asarray(getattr(jlax, name)(x, axis=1)))


@pytest.mark.parametrize("name", CUMS)
def test_cumulative_vmap_jit(name):
    x = _rand(3, 5, 4)
    ours, theirs = getattr(W, name), getattr(jlax, name)
    f = lambda v: ours(v, axis=1, reverse=True)
    got = webjax.vmap(f, in_axes=2)(jnp.asarray(x))
    for k in range(4):
        _close(got[k], theirs(x[:, :, k], axis=1, reverse=True))
    _close(webjax.jit(lambda v: ours(v, axis=2))(jnp.asarray(x)), theirs(x, axis=2))
    g1 = webjax.vmap(webjax.grad(lambda v: (ours(v, axis=0) ** 2).sum()))(jnp.asarray(x))
    g2 = jax.vmap(jax.grad(lambda v: (theirs(v, axis=0) ** 2).sum()))(x)
    _close(g1, g2, tol=1e-4)


def test_cumulative_errors_and_jaxpr():
    with pytest.raises(ValueError):
        W.cumsum(jnp.zeros((2, 3)), axis=2)
    with pytest.raises(OverflowError):  # as JAX: no integer -inf to start from
        W.cumlogsumexp(jnp.zeros(3, jnp.int32))
    text = str(webjax.make_jaxpr(lambda v: W.cumsum(v, reverse=True))(jnp.zeros(3)))
    assert "cumsum[axis=0 reverse=True]" in text


@pytest.fixture
def gpu_safe(device):
    """Work around a webgpu host bug: a GPUBuffer finalized by the cycle collector together
    with its LazyBuffer gets returned to the buffer pool dead, and a later bind group built on
    it aborts the process. No cyclic GC during the test; afterwards collect, then drop the pool."""
    gc.disable()
    try:
        yield device
    finally:
        gc.enable()
        gc.collect()
        backend = device.backend
        for name in ("flush", "trim"):
            if hasattr(backend, name):
                getattr(backend, name)()


# ---- every backend ------------------------------------------------------------------------------
def test_windowed_on_every_backend(gpu_safe):
    device = gpu_safe
    x = _rand(2, 5, 6, 3)
    v = jnp.asarray(x)
    assert v.device == device
    _close(_max_pool(_Ours, v, (3, 3), (2, 2), "SAME"), _max_pool(jlax, x, (3, 3), (2, 2), "SAME"))
    _close(_avg_pool(_Ours, v, (2, 2), (1, 1), "SAME"), _avg_pool(jlax, x, (2, 2), (1, 1), "SAME"))
    g1 = webjax.grad(lambda u: (_max_pool(_Ours, u, (3, 2), (2, 1), "SAME") ** 2).sum())(v)
    g2 = jax.grad(lambda u: (_max_pool(jlax, u, (3, 2), (2, 1), "SAME") ** 2).sum())(x)
    _close(g1, g2)
    y = _rand(3, 6)
    for name in CUMS:
        ours, theirs = getattr(W, name), getattr(jlax, name)
        _close(
            ours(jnp.asarray(y), axis=1, reverse=True), theirs(y, axis=1, reverse=True), tol=1e-4
        )
        g1 = webjax.grad(lambda u: (ours(u, axis=1) ** 2).sum())(jnp.asarray(y))  # noqa: B023
        g2 = jax.grad(lambda u: (theirs(u, axis=1) ** 2).sum())(y)  # noqa: B023
        _close(g1, g2, tol=1e-4)
