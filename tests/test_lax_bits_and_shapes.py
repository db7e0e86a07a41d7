"""lax.rng_bit_generator (bits identical to real JAX's CPU generators), mulhi, approx_max_k /
approx_min_k, ragged_dot, and the shape helpers (conv_*_shape_tuple, reduce_window_shape_tuple,
conv_general_permutations), index_take, broadcast_like, platform_dependent: against real JAX."""

from __future__ import annotations

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from jax_compare import close, raises_like
from webjax import lax

jax = pytest.importorskip("jax")
jlax = jax.lax
R = np.random.RandomState(0)
KEYS = [np.array([1, 2, 3, 4], np.uint32), np.array([5, 6, 2**32 - 1, 2**32 - 1], np.uint32)]


def _same(got, want):
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    assert np.array_equal(g, w, equal_nan=True), (g, w)


# ---- rng_bit_generator ---------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"])
@pytest.mark.parametrize(
    "shape", [(), (8,), (3,), (2, 3), (3, 3), (1, 3), (3, 4, 2), (5, 3), (4, 0)]
)
def test_rng_bit_generator_bits_match_jax(device, algorithm, shape):
    if device.platform in ("webgpu", "webgl") and len(shape) != 2:
        pytest.skip("sampled: the GPU devices run the 2-D shapes")
    for key in KEYS:
        for dt in (np.uint32, np.uint8, np.uint16):
            got = lax.rng_bit_generator(
                jnp.asarray(key), shape, dt, getattr(lax.RandomAlgorithm, algorithm)
            )
            want = jlax.rng_bit_generator(key, shape, dt, getattr(jlax.RandomAlgorithm, algorithm))
            _same(got[0], want[0])
            _same(got[1], want[1])


def test_rng_bit_generator_jit_vmap_uint64_and_errors():
    f = webjax.jit(lambda k: lax.rng_bit_generator(k, (2, 5)))
    _same(f(jnp.asarray(KEYS[0]))[1], jlax.rng_bit_generator(KEYS[0], (2, 5))[1])
    keys = np.stack(KEYS)
    got = webjax.vmap(
        lambda k: lax.rng_bit_generator(k, (3,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    )(jnp.asarray(keys))
    want = jax.vmap(
        lambda k: jlax.rng_bit_generator(k, (3,), algorithm=jlax.RandomAlgorithm.RNG_THREE_FRY)
    )(keys)
    _same(got[1], want[1])
    _same(got[0], want[0])
    with webjax.enable_x64(True), jax.enable_x64(True):
        for alg in ("RNG_THREE_FRY", "RNG_PHILOX"):
            got = lax.rng_bit_generator(
                jnp.asarray(KEYS[1]), (3,), np.uint64, getattr(lax.RandomAlgorithm, alg)
            )
            want = jlax.rng_bit_generator(
                KEYS[1], (3,), np.uint64, getattr(jlax.RandomAlgorithm, alg)
            )
            _same(got[1], want[1])
    with pytest.warns(UserWarning, match="uint64 requested in rng_bit_generator"):
        assert lax.rng_bit_generator(jnp.asarray(KEYS[0]), (2,), np.uint64)[1].dtype == jnp.uint32
    raises_like(
        lambda: lax.rng_bit_generator(jnp.asarray(KEYS[0]), (2,), np.int32),
        lambda: jlax.rng_bit_generator(KEYS[0], (2,), np.int32),
    )
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        lax.rng_bit_generator(jnp.zeros(2, jnp.uint32), (2,))


# ---- mulhi -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "uint16", "int32", "uint32"])
def test_mulhi(device, dt):
    info = np.iinfo(dt)
    x = R.randint(info.min, int(info.max) + 1, size=40, dtype=np.int64).astype(dt)
    y = R.randint(info.min, int(info.max) + 1, size=40, dtype=np.int64).astype(dt)
    x[:3], y[:3] = [info.min, info.max, info.min], [info.min, info.max, info.max]
    _same(lax.mulhi(jnp.asarray(x), jnp.asarray(y)), jlax.mulhi(x, y))


# ---- approx_max_k / approx_min_k ----------------------------------------------------------------
def test_approx_k(device):
    x = R.normal(size=(4, 9)).astype(np.float32)
    x[0, 2], x[1, 4], x[1, 5] = np.nan, 3.0, 3.0
    for f, kw in [
        ("approx_max_k", {"k": 3}),
        ("approx_max_k", {"k": 2, "reduction_dimension": 0}),
        ("approx_min_k", {"k": 4, "recall_target": 0.9}),
    ]:
        # with NaNs, JAX's min_k order is unspecified (its comparator is NaN-unaware)
        v = x if f == "approx_max_k" else np.nan_to_num(x)
        got, want = getattr(lax, f)(jnp.asarray(v), **kw), getattr(jlax, f)(v, **kw)
        _same(got[0], want[0])
        _same(got[1], want[1])
    y = np.abs(x[2:])
    _same(lax.approx_min_k(jnp.asarray(y), 1, 0)[1], jlax.approx_min_k(y, 1, 0)[1])
    g = webjax.grad(lambda v: lax.approx_max_k(v, 2)[0].sum())(jnp.asarray(x[2:]))
    close(g, jax.grad(lambda v: jlax.approx_max_k(v, 2)[0].sum())(x[2:]))
    raises_like(
        lambda: lax.approx_min_k(jnp.arange(3), 2), lambda: jlax.approx_min_k(np.arange(3), 2)
    )


# ---- ragged_dot --------------------------------------------------------------------------------
@pytest.mark.parametrize("sizes", [[2, 0, 3], [5, 4, 3], [0, 0, 0], [7, 0, 0]])
def test_ragged_dot(device, sizes):
    lhs = R.normal(size=(7, 3)).astype(np.float32)
    rhs = R.normal(size=(3, 3, 2)).astype(np.float32)
    gs = np.array(sizes, np.int32)
    got = lax.ragged_dot(jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(gs))
    close(got, jlax.ragged_dot(lhs, rhs, gs), rtol=1e-5, atol=1e-6)
    if device.platform == "cpu" and sizes == [2, 0, 3]:
        check_grads(lambda a, b: lax.ragged_dot(a, b, jnp.asarray(gs)), [lhs, rhs])
        vm = webjax.vmap(lambda a: lax.ragged_dot(a, jnp.asarray(rhs), jnp.asarray(gs)))
        close(
            vm(jnp.asarray(np.stack([lhs, 2 * lhs]))),
            np.stack([got, 2 * np.asarray(got)]),
            rtol=1e-5,
        )


def test_ragged_dot_errors_like_jax():
    lhs, rhs, gs = np.ones((4, 3), np.float32), np.ones((2, 3, 2), np.float32), np.array([1, 3])
    for a, b, g in [(lhs, rhs[:, :2], gs), (lhs, rhs, gs[:1])]:
        raises_like(
            lambda a=a, b=b, g=g: lax.ragged_dot(
                jnp.asarray(a), jnp.asarray(b), jnp.asarray(g, jnp.int32)
            ),
            lambda a=a, b=b, g=g: jlax.ragged_dot(a, b, g.astype(np.int32)),
        )


# ---- shape helpers and small functions -----------------------------------------------------------
NHWC = ("NHWC", "HWIO", "NHWC")


@pytest.mark.parametrize(
    "name, args",
    [
        ("conv_general_permutations", (NHWC,)),
        ("conv_general_permutations", (("NCHW", "OIHW", "NHWC"),)),
        ("conv_general_shape_tuple", ((1, 5, 6, 3), (2, 2, 3, 4), (1, 2), [(0, 0), (1, 1)], NHWC)),
        ("conv_shape_tuple", ((2, 3, 5, 6), (4, 3, 2, 2), (1, 2), [(0, 0), (1, 1)])),
        ("conv_shape_tuple", ((2, 3, 5, 6), (4, 3, 2, 2), (1, 2), "SAME", 2)),
        ("conv_transpose_shape_tuple", ((1, 5, 6, 3), (2, 2, 3, 4), (1, 2), "SAME", NHWC)),
        ("conv_transpose_shape_tuple", ((1, 5, 6, 3), (3, 2, 3, 4), (2, 2), "VALID", NHWC)),
        ("reduce_window_shape_tuple", ((4, 6), (2, 3), (1, 2), [(0, 0), (1, 1)])),
        ("reduce_window_shape_tuple", ((4, 6), (2, 3), (1, 2), [(0, 0), (1, 1)], (2, 1), (1, 2))),
    ],
)
def test_shape_helpers(name, args):
    got, want = getattr(lax, name)(*args), getattr(jlax, name)(*args)
    assert tuple(map(tuple, got) if isinstance(got[0], tuple) else got) == tuple(
        map(tuple, want) if isinstance(want[0], tuple) else want
    )


def test_index_take_broadcast_like_platform_dependent(device):
    src = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    idx = (np.array([1, 0, 1]), np.array([2, 3, 0]))
    close(
        lax.index_take(jnp.asarray(src), tuple(map(jnp.asarray, idx)), (0, 2)),
        jlax.index_take(src, idx, (0, 2)),
    )
    close(
        lax.broadcast_like(jnp.float32(2.0), jnp.ones((2, 3))),
        jlax.broadcast_like(np.float32(2.0), np.ones((2, 3))),
    )
    out = lax.platform_dependent(
        jnp.float32(3.0), **{device.platform: lambda x: 2 * x}, default=lambda x: x
    )
    close(out, np.float32(6.0))
    assert (
        float(lax.platform_dependent(jnp.float32(3.0), tpu=lambda x: 2 * x, default=lambda x: x))
        == 3.0
    )
    with pytest.raises(ValueError, match="no branch"):
        lax.platform_dependent(1.0, tpu=lambda x: x)
