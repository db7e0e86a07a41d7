"""jax.scipy.special.dawsn, spence, fresnel, sici, owens_t, wofz, hyp1f1, hyp2f1 and bessel_jn
against SciPy (float32 tolerances) and real JAX, on the devices (sampled for the slow loops);
derivatives by finite differences; vmap and jit."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import webjax
import webjax.numpy as jnp
import webjax.scipy.special as ws
from check_grads import check_grads
from jax_compare import close

jax = pytest.importorskip("jax")
import jax.scipy.special as js  # noqa: E402

X_DAWSN = np.concatenate([np.linspace(-9, 9, 73), [0.0, 1e-3, 3.99, 4.01, 30.0, -100.0]])
X_SPENCE = np.concatenate([np.linspace(0, 9, 37), [1e-4, 0.5, 1.5, 2.0, 50.0, 1e3]])


@pytest.mark.parametrize("name, xs", [("dawsn", X_DAWSN), ("spence", X_SPENCE)])
def test_matches_scipy_and_jax(device, name, xs):
    x = xs.astype(np.float32)
    got = np.asarray(getattr(ws, name)(jnp.asarray(x)))
    ref = getattr(ss, name)(x.astype(np.float64))
    # float32: a few ulps (transcendentals of the GPU devices are looser)
    rtol = 2e-6 if device.platform in ("cpu", "wasm") else 2e-5
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-7)
    close(got, getattr(js, name)(x), rtol=10 * rtol, atol=1e-6)


X_OSC = np.concatenate([np.linspace(-30, 30, 61), [0.0, 1e-3, 3.99, 4.01, 19.99, 20.01, 1e3]])


@pytest.mark.parametrize("name", ["fresnel", "sici"])
def test_pairs_match_scipy_and_jax(device, name):
    x = X_OSC.astype(np.float32)
    got = getattr(ws, name)(jnp.asarray(x))
    atol = 1e-6 if device.platform in ("cpu", "wasm") else 1e-5
    for g, ref, j in zip(got, getattr(ss, name)(x.astype(np.float64)), getattr(js, name)(x)):
        g = np.asarray(g)
        np.testing.assert_allclose(g, ref, rtol=1e-6, atol=atol)
        np.testing.assert_allclose(g, np.asarray(j), rtol=1e-5, atol=10 * atol)


def test_nan_below_zero_and_derivatives():
    assert np.isnan(float(ws.spence(-1.0))) and float(ws.spence(1.0)) == 0.0
    check_grads(ws.dawsn, [np.array([0.3, -1.2, 2.5, 5.0], np.float32)])
    check_grads(ws.spence, [np.array([0.3, 0.7, 1.5, 2.0, 3.0], np.float32)])
    check_grads(lambda v: ws.fresnel(v)[1], [np.array([0.3, 1.2, 2.5], np.float32)])
    check_grads(lambda v: ws.sici(v)[0], [np.array([0.3, 1.2, 2.5, 9.0], np.float32)])
    g = webjax.vmap(webjax.grad(ws.spence))(jnp.asarray([0.3, 2.0, 7.0]))
    close(g, np.log([0.3, 2.0, 7.0]).astype(np.float32) / (1 - np.float32([0.3, 2.0, 7.0])), 1e-5)
    close(
        webjax.jit(ws.dawsn)(jnp.asarray(X_DAWSN, jnp.float32)),
        ws.dawsn(X_DAWSN.astype(np.float32)),
    )


def test_bessel_jn(device):
    z = np.concatenate([np.linspace(-25, 25, 51), [0.0, 1e-3, 1e-6]]).astype(np.float32)
    got = np.asarray(ws.bessel_jn(jnp.asarray(z), v=4))
    ref = np.array([ss.jv(k, z.astype(np.float64)) for k in range(5)])
    atol = 5e-7 if device.platform in ("cpu", "wasm") else 5e-6
    np.testing.assert_allclose(got, ref, atol=atol)
    want = np.asarray(js.bessel_jn(z, v=4))
    finite = np.isfinite(want)  # JAX's recurrence gives NaN for small |z|; this one does not
    np.testing.assert_allclose(got[finite], want[finite], atol=10 * atol)
    if device.platform == "cpu":
        check_grads(lambda x: ws.bessel_jn(x, v=2), [np.array([0.5, 1.5, 7.0], np.float32)])
        vm = webjax.vmap(lambda x: ws.bessel_jn(x, v=2))(jnp.asarray(z[:4]))
        close(vm, np.asarray(ws.bessel_jn(jnp.asarray(z[:4]), v=2)).T)


def test_owens_t(device):
    rng = np.random.RandomState(0)
    h = np.concatenate([rng.uniform(-6, 6, 60), [0, 0, 10, -3]]).astype(np.float32)
    a = np.concatenate([rng.uniform(-8, 8, 60), [0, 1, 2, -1]]).astype(np.float32)
    got = np.asarray(ws.owens_t(jnp.asarray(h), jnp.asarray(a)))
    ref = ss.owens_t(h.astype(np.float64), a.astype(np.float64))
    atol = 1e-7 if device.platform in ("cpu", "wasm") else 1e-6
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=atol)
    np.testing.assert_allclose(got, np.asarray(js.owens_t(h, a)), rtol=1e-4, atol=10 * atol)
    if device.platform == "cpu":
        check_grads(
            ws.owens_t,
            [np.array([0.5, -1.2, 2.0], np.float32), np.array([0.5, 2.0, -3.0], np.float32)],
        )


def test_wofz(device):
    rng = np.random.RandomState(1)
    z = (rng.uniform(-8, 8, 80) + 1j * rng.uniform(-3, 8, 80)).astype(np.complex64)
    z = np.concatenate([z, np.array([0, 1e-4j, 5, -5, 3 + 0.1j, 30 + 30j], np.complex64)])
    got = np.asarray(ws.wofz(jnp.asarray(z)))
    ref = ss.wofz(z.astype(np.complex128))
    assert got.dtype == np.complex64
    rtol = 5e-6 if device.platform in ("cpu", "wasm") else 5e-5
    np.testing.assert_allclose(got, ref, rtol=rtol)
    np.testing.assert_allclose(got, np.asarray(js.wofz(z)), rtol=2 * rtol)
    close(webjax.jit(ws.wofz)(jnp.asarray(z)), got, rtol=1e-6)
    # the derivative: w'(z) = 2i/sqrt(pi) - 2 z w(z), along the real axis
    d = webjax.grad(lambda x: jnp.real(ws.wofz(x)))(jnp.float32(0.7))
    want = np.real(2j / np.sqrt(np.pi) - 2 * 0.7 * ss.wofz(0.7))
    np.testing.assert_allclose(float(d), want, rtol=1e-5)


def test_hyp1f1(device):
    rng = np.random.RandomState(2)
    a = rng.uniform(0.1, 5, 60).astype(np.float32)
    b = rng.uniform(0.1, 5, 60).astype(np.float32)
    x = rng.uniform(-30, 30, 60).astype(np.float32)
    got = np.asarray(ws.hyp1f1(jnp.asarray(a), jnp.asarray(b), jnp.asarray(x)))
    ref = ss.hyp1f1(a.astype(np.float64), b.astype(np.float64), x.astype(np.float64))
    rtol = 2e-5 if device.platform in ("cpu", "wasm") else 2e-4
    np.testing.assert_allclose(got, ref, rtol=rtol)
    pos = x > 0  # JAX's plain series loses everything to cancellation for x < 0
    np.testing.assert_allclose(got[pos], np.asarray(js.hyp1f1(a, b, x))[pos], rtol=10 * rtol)
    for args in [(0.0, 1.0, 3.0), (2.0, 2.0, 1.0), (-2.0, 1.0, 3.0)]:
        np.testing.assert_allclose(float(ws.hyp1f1(*args)), ss.hyp1f1(*args), rtol=1e-6)
    if device.platform == "cpu":
        d = webjax.grad(ws.hyp1f1, 2)(1.5, 2.5, 1.0)  # d/dx 1F1 = a/b 1F1(a + 1; b + 1; x)
        np.testing.assert_allclose(float(d), 1.5 / 2.5 * ss.hyp1f1(2.5, 3.5, 1.0), rtol=1e-5)


def test_hyp2f1(device):
    if device.platform in ("webgpu", "webgl"):
        pytest.skip("sampled: hyp1f1 runs the same series loop on the GPU devices")
    rng = np.random.RandomState(3)
    n = 60
    a, b = (rng.uniform(-2.3, 3, n).astype(np.float32) for _ in range(2))
    c = rng.uniform(0.3, 5, n).astype(np.float32)
    x = np.concatenate([rng.uniform(-5, 1, n - 4), [0.95, 0.99, 1.0, -0.5]]).astype(np.float32)
    got = np.asarray(ws.hyp2f1(*map(jnp.asarray, (a, b, c, x))))
    ref = ss.hyp2f1(*(v.astype(np.float64) for v in (a, b, c, x)))
    rtol = 5e-5 if device.platform in ("cpu", "wasm") else 5e-4
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-6)
    assert np.isnan(float(ws.hyp2f1(1.0, 1.0, 2.0, 1.5)))
    if device.platform == "cpu":  # d/dx 2F1 = ab/c 2F1(a+1, b+1; c+1; x)
        d = webjax.grad(ws.hyp2f1, 3)(1.0, 2.0, 3.0, 0.4)
        np.testing.assert_allclose(float(d), 2 / 3 * ss.hyp2f1(2.0, 3.0, 4.0, 0.4), rtol=1e-5)
