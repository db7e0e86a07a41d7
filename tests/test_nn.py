"""webjax.nn and webjax.nn.initializers against real JAX: values, gradients, jit and vmap.

Activation values and gradients are compared with rtol 2e-6 (values) / 3e-5 (gradients) and a
small atol: both sides evaluate the same expression in the same order, but webjax's float32
exp/log/tanh/erf differ from XLA's by an ulp on some inputs, and a gradient like 1 - tanh(x)**2
turns that ulp into a larger relative error where it nearly cancels. Piecewise-linear functions,
their kinks and uniform-based initializers are compared exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax import nn, random
from webjax.nn import initializers

jax = pytest.importorskip("jax")
R = np.random.RandomState(0)

X = np.array([-30.0, -7.0, -2.5, -1.0, -0.3, 0.0, 0.2, 1.0, 3.0, 6.0, 8.5, 30.0], np.float32)
M = (np.random.RandomState(0).randn(4, 8) * 3).astype(np.float32)
W = np.random.RandomState(1).randn(4, 8).astype(np.float32)

ELEMENTWISE = [
    "relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "gelu", "elu",
    "selu", "celu", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_swish", "soft_sign", "tanh",
]  # fmt: skip
EXACT = {"relu", "relu6", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_swish"}


def close(got: object, want: object, rtol: float = 2e-6, atol: float = 1e-7) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def same(got: object, want: object) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    np.testing.assert_array_equal(g, w)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


# ---- elementwise activations --------------------------------------------------------------------
@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activation_values(name: str) -> None:
    got, want = getattr(nn, name)(jnp.array(X)), getattr(jax.nn, name)(X)
    (same if name in EXACT else close)(got, want)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activation_grads_vmap_jit(name: str) -> None:
    f, jf = getattr(nn, name), getattr(jax.nn, name)
    want = jax.vmap(jax.grad(jf))(X)
    got = webjax.vmap(webjax.grad(f))(jnp.array(X))
    if name in EXACT - {"hard_swish"}:  # d(x * hard_sigmoid(x)) rounds in two products
        same(got, want)
    else:
        close(got, want, rtol=3e-5, atol=1e-6)
    same(webjax.jit(f)(jnp.array(X)), f(jnp.array(X)))


def test_relu_family_gradient_at_kinks() -> None:
    for x in (0.0, 6.0):
        assert float(webjax.grad(nn.relu)(x)) == float(jax.grad(jax.nn.relu)(x))
        assert float(webjax.grad(nn.relu6)(x)) == float(jax.grad(jax.nn.relu6)(x)) == 0.0
    assert float(webjax.grad(nn.relu)(0.0)) == 0.0


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu(approximate: bool) -> None:
    close(nn.gelu(jnp.array(X), approximate=approximate), jax.nn.gelu(X, approximate=approximate))
    g = webjax.vmap(webjax.grad(lambda v: nn.gelu(v, approximate)))(jnp.array(X))
    close(g, jax.vmap(jax.grad(lambda v: jax.nn.gelu(v, approximate)))(X), rtol=3e-5, atol=1e-6)


def test_parameters_and_int_inputs() -> None:
    close(nn.elu(jnp.array(X), 0.5), jax.nn.elu(X, 0.5))
    close(nn.celu(jnp.array(X), 2.0), jax.nn.celu(X, 2.0))
    same(nn.leaky_relu(jnp.array(X), 0.2), jax.nn.leaky_relu(X, 0.2))
    ints = np.array([-2, 0, 3], np.int32)
    same(nn.relu(jnp.array(ints)), jax.nn.relu(ints))
    close(nn.soft_sign(jnp.array(ints)), jax.nn.soft_sign(ints.astype(np.float32)))
    with pytest.raises(TypeError):
        nn.sigmoid(jnp.array(ints))


def test_softplus_is_stable() -> None:
    big = np.array([-1000.0, -100.0, 100.0, 1000.0, np.inf, -np.inf], np.float32)
    close(nn.softplus(jnp.array(big)), jax.nn.softplus(big))
    close(nn.log_sigmoid(jnp.array(big)), jax.nn.log_sigmoid(big))
    g = webjax.vmap(webjax.grad(nn.softplus))(jnp.array(big))
    close(g, jax.vmap(jax.grad(jax.nn.softplus))(big))


# ---- softmax family -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
@pytest.mark.parametrize("axis", [-1, 0, None, (0, 1)])
def test_softmax_family(name: str, axis: object) -> None:
    f, jf = getattr(nn, name), getattr(jax.nn, name)
    close(f(jnp.array(M), axis=axis), jf(M, axis=axis))
    close(webjax.jit(lambda v: f(v, axis=axis))(jnp.array(M)), jf(M, axis=axis))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
def test_softmax_family_grads(name: str) -> None:
    f, jf = getattr(nn, name), getattr(jax.nn, name)
    w = W[:, 0] if name == "logsumexp" else W
    got = webjax.grad(lambda v: (f(v, axis=-1) * jnp.array(w)).sum())(jnp.array(M))
    want = jax.grad(lambda v: (jf(v, axis=-1) * w).sum())(M)
    close(got, want, rtol=3e-5, atol=1e-6)


def test_softmax_vmap_where_and_large_inputs() -> None:
    close(webjax.vmap(nn.softmax)(jnp.array(M)), jax.nn.softmax(M))
    mask = M > 0
    close(nn.softmax(jnp.array(M), where=jnp.array(mask)), jax.nn.softmax(M, where=mask))
    close(nn.log_softmax(jnp.array(M), where=jnp.array(mask)), jax.nn.log_softmax(M, where=mask))
    big = np.array([[1000.0, 1001.0, -1000.0]], np.float32)
    for name in ("softmax", "log_softmax", "logsumexp"):
        out = np.asarray(getattr(nn, name)(jnp.array(big)))
        assert np.all(np.isfinite(out) | (out == -np.inf)), name
        close(out, getattr(jax.nn, name)(big))


# ---- other functions ---------------------------------------------------------------------------
def test_one_hot() -> None:
    idx = np.array([0, 2, 5, -1], np.int32)
    same(nn.one_hot(jnp.array(idx), 4), jax.nn.one_hot(idx, 4))
    idx2 = np.array([[0, 2], [1, 1]], np.int32)
    got = nn.one_hot(jnp.array(idx2), 3, axis=0, dtype=jnp.int32)
    same(got, jax.nn.one_hot(idx2, 3, axis=0, dtype=np.int32))


def test_standardize_and_glu() -> None:
    close(nn.standardize(jnp.array(M)), jax.nn.standardize(M), rtol=1e-5, atol=1e-6)
    close(nn.standardize(jnp.array(M), axis=0), jax.nn.standardize(M, axis=0), rtol=1e-5, atol=1e-6)
    close(nn.glu(jnp.array(M)), jax.nn.glu(M))
    close(nn.glu(jnp.array(M), axis=0), jax.nn.glu(M, axis=0))


# ---- initializers -------------------------------------------------------------------------------
UNIFORM_INITS = ["glorot_uniform", "he_uniform", "lecun_uniform", "xavier_uniform"]
NORMAL_INITS = ["glorot_normal", "he_normal", "lecun_normal", "kaiming_normal"]


@pytest.mark.parametrize("name", UNIFORM_INITS + NORMAL_INITS)
def test_variance_scaling_presets(name: str) -> None:
    k, jk = random.PRNGKey(3), jax.random.PRNGKey(3)
    got = getattr(initializers, name)()(k, (5, 7))
    want = getattr(jax.nn.initializers, name)()(jk, (5, 7))
    (same if name in UNIFORM_INITS else close)(got, want)


def test_initializers() -> None:
    k, jk = random.PRNGKey(4), jax.random.PRNGKey(4)
    ji = jax.nn.initializers
    same(initializers.uniform(0.5)(k, (4,)), ji.uniform(0.5)(jk, (4,)))
    close(initializers.normal(0.5)(k, (4,)), ji.normal(0.5)(jk, (4,)))
    close(initializers.truncated_normal(0.5)(k, (4,)), ji.truncated_normal(0.5)(jk, (4,)))
    same(initializers.zeros(k, (2, 3)), ji.zeros(jk, (2, 3)))
    same(initializers.ones(k, (2, 3), jnp.int32), ji.ones(jk, (2, 3), np.int32))
    same(initializers.constant(2.5)(k, (2,)), ji.constant(2.5)(jk, (2,)))
    for mode in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        got = initializers.variance_scaling(0.3, mode, "uniform")(k, (3, 4, 5))
        same(got, ji.variance_scaling(0.3, mode, "uniform")(jk, (3, 4, 5)))
    got = initializers.variance_scaling(1.0, "fan_in", "normal", in_axis=0, out_axis=1)(k, (3, 4))
    close(got, ji.variance_scaling(1.0, "fan_in", "normal", in_axis=0, out_axis=1)(jk, (3, 4)))
    with pytest.raises(ValueError, match="in_axis"):
        initializers.glorot_uniform()(k, (4,))
    with pytest.raises(ValueError, match="mode"):
        initializers.variance_scaling(1.0, "fan", "uniform")


@pytest.mark.parametrize("distribution", ["uniform", "truncated_normal", "normal"])
def test_complex_variance_scaling(distribution: str) -> None:
    # Complex initializers draw through the key split of JAX's complex branch (a regression:
    # the layout redesign once left it calling a moved `split`).
    k, jk = random.PRNGKey(5), jax.random.PRNGKey(5)
    init = initializers.variance_scaling(1.0, "fan_in", distribution, dtype=jnp.complex64)
    want = jax.nn.initializers.variance_scaling(1.0, "fan_in", distribution, dtype=np.complex64)
    close(init(k, (4, 3)), want(jk, (4, 3)), rtol=1e-5, atol=1e-6)


def test_library_composites_compile_eagerly_and_inline_when_traced() -> None:
    """softmax/log_softmax/logsumexp/gelu called eagerly run as one cached program; traced,
    their primitives appear inline, as in JAX's jaxprs."""
    from webjax._src.dispatch import program

    x = jnp.arange(12.0).reshape(3, 4)
    fresh = jnp.arange(39.0).reshape(3, 13) / 7  # a shape no other test compiles these for
    for fn in (nn.softmax, nn.log_softmax, nn.logsumexp, nn.gelu, nn.standardize):
        before = len(program._CACHE)
        fn(fresh).block_until_ready()
        compiled = len(program._CACHE) - before
        fn(fresh).block_until_ready()
        assert compiled == 1 and len(program._CACHE) - before == 1, fn.__name__
        assert "jit" not in str(webjax.make_jaxpr(fn)(x)), fn.__name__
    np.testing.assert_allclose(
        np.asarray(nn.softmax(x, axis=[0, 1])),  # unhashable static axis: runs uncompiled
        np.exp(np.arange(12.0)).reshape(3, 4) / np.exp(np.arange(12.0)).sum(),
        rtol=1e-5,
    )
    g = webjax.grad(lambda v: nn.logsumexp(v) * 2.0)(x)
    np.testing.assert_allclose(
        np.asarray(g), 2 * np.asarray(nn.softmax(x.ravel())).reshape(3, 4), rtol=1e-5
    )


# ---- mish, squareplus, sparse_*, log1mexp; logmeanexp; dot_product_attention; orthogonal --
@pytest.mark.parametrize(
    "name", ["mish", "squareplus", "sparse_plus", "sparse_sigmoid", "identity", "log1mexp"]
)
def test_activations(device: Any, name: str) -> None:
    x = np.concatenate([f32(40) * 4, [0.0, -1.0, 1.0, 30.0, -30.0]]).astype(np.float32)
    if name == "log1mexp":
        x = np.abs(x) + 1e-3
    close(getattr(nn, name)(jnp.asarray(x)), getattr(jax.nn, name)(x), 1e-6, 1e-7)
    if name != "identity":
        close(
            webjax.grad(lambda v: getattr(nn, name)(v).sum())(jnp.asarray(x)),
            jax.grad(lambda v: getattr(jax.nn, name)(v).sum())(x),
            1e-5,
            1e-6,
        )


def test_logmeanexp(device: Any) -> None:
    m = f32(3, 4)
    close(nn.logmeanexp(jnp.asarray(m)), jax.nn.logmeanexp(m), 1e-6, 0.0)
    close(
        nn.logmeanexp(jnp.asarray(m), axis=1, keepdims=True),
        jax.nn.logmeanexp(m, axis=1, keepdims=True),
        1e-6,
        0.0,
    )
    w = m > 0
    close(
        nn.logmeanexp(jnp.asarray(m), axis=0, where=jnp.asarray(w)),
        jax.nn.logmeanexp(m, axis=0, where=w),
        1e-6,
        0.0,
    )


ATTN_CASES = {
    "mha": {},
    "bias_mask": {"bias": True, "mask": True},
    "causal_scale": {"is_causal": True, "scale": 0.3},
    "seq_lengths": {"query_seq_lengths": [3, 5], "key_value_seq_lengths": [6, 2]},
    "window": {"local_window_size": (1, 2)},
    "window_int": {"local_window_size": 1, "is_causal": True},
}


@pytest.mark.parametrize("case", list(ATTN_CASES))
@pytest.mark.parametrize("heads", [(4, 4), (4, 2), (4, 1)])
def test_dot_product_attention(device: Any, case: str, heads: tuple[int, int]) -> None:
    b, t, s, h = 2, 5, 6, 8
    n, k = heads
    q, kk, v = f32(b, t, n, h), f32(b, s, k, h), f32(b, s, k, h)
    opts = dict(ATTN_CASES[case])
    wopts, jopts = dict(opts), dict(opts)
    if opts.pop("bias", False):
        bias = f32(1, n, t, s)
        wopts["bias"], jopts["bias"] = jnp.asarray(bias), bias
    if opts.pop("mask", False):
        mask = R.uniform(size=(b, 1, t, s)) > 0.3
        wopts["mask"], jopts["mask"] = jnp.asarray(mask), mask
    for key in ("query_seq_lengths", "key_value_seq_lengths"):
        if key in opts:
            arr = np.array(opts[key], np.int32)
            wopts[key], jopts[key] = jnp.asarray(arr), arr
    got = nn.dot_product_attention(jnp.asarray(q), jnp.asarray(kk), jnp.asarray(v), **wopts)
    want = jax.nn.dot_product_attention(q, kk, v, **jopts)
    close(got, want, 1e-5, 1e-5)


def test_dot_product_attention_residual_grads_and_errors(device: Any) -> None:
    q, k, v = f32(2, 5, 4, 8), f32(2, 6, 2, 8), f32(2, 6, 2, 8)
    Q, K, V = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
    got = nn.dot_product_attention(Q, K, V, return_residual=True)
    want = jax.nn.dot_product_attention(q, k, v, return_residual=True)
    close(got[0], want[0], 1e-5, 1e-5)
    close(got[1], want[1], 1e-5, 1e-5)
    close(
        nn.dot_product_attention(Q[0], K[0], V[0]),
        jax.nn.dot_product_attention(q[0], k[0], v[0]),
        1e-5,
        1e-5,
    )
    fn = lambda a, b, c: nn.dot_product_attention(a, b, c, is_causal=True)
    close(
        webjax.jit(fn)(Q, K, V), jax.nn.dot_product_attention(q, k, v, is_causal=True), 1e-5, 1e-5
    )
    got_g = webjax.grad(lambda a, b, c: fn(a, b, c).sum(), argnums=(0, 1, 2))(Q, K, V)
    want_g = jax.grad(
        lambda a, b, c: jax.nn.dot_product_attention(a, b, c, is_causal=True).sum(),
        argnums=(0, 1, 2),
    )(q, k, v)
    for g, w in zip(got_g, want_g):
        close(g, w, 1e-4, 1e-5)
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        nn.dot_product_attention(
            jnp.ones((1, 2, 3, 4)), jnp.ones((1, 2, 2, 4)), jnp.ones((1, 2, 2, 4))
        )
    with pytest.raises(ValueError, match="Unsupported implementation"):
        nn.dot_product_attention(Q, K, V, implementation="foo")
    with pytest.raises(ValueError, match="mask dtype"):
        nn.dot_product_attention(Q, K, V, mask=jnp.ones((1, 1, 5, 6)))


def test_orthogonal_initializers(device: Any) -> None:
    ji = jax.nn.initializers
    assert sorted(n for n in dir(ji) if not n.startswith("_")) == sorted(
        n for n in dir(nn.initializers) if not n.startswith("_")
    )
    k, jk = webjax.random.PRNGKey(0), jax.random.PRNGKey(0)
    close(nn.initializers.orthogonal()(k, (3, 5)), ji.orthogonal()(jk, (3, 5)), 1e-5, 1e-6)
    close(
        nn.initializers.orthogonal(2.0, column_axis=0)(k, (4, 2, 3)),
        ji.orthogonal(2.0, column_axis=0)(jk, (4, 2, 3)),
        1e-5,
        1e-6,
    )
    close(
        nn.initializers.delta_orthogonal()(k, (3, 3, 2, 4)),
        ji.delta_orthogonal()(jk, (3, 3, 2, 4)),
        1e-5,
        1e-6,
    )
    with pytest.raises(ValueError):
        nn.initializers.orthogonal()(k, (3,))
    with pytest.raises(ValueError):
        nn.initializers.delta_orthogonal()(k, (3, 4, 2))
