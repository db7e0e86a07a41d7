"""`jax.scipy.cluster.vq` against real JAX."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.cluster.vq as wvq
from jax_compare import close, raises_like

jax = pytest.importorskip("jax")
jjnp = jax.numpy
import jax.scipy.cluster.vq as jvq  # noqa: E402

R = np.random.RandomState(0)


def f32(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return R.uniform(lo, hi, shape).astype(np.float32)


def test_vq(device: Any) -> None:
    import scipy.cluster.vq as svq

    obs, book = f32(12, 3), f32(4, 3)
    for a, b in [(obs, book), (obs[:, 0], book[:, 0]), ((obs * 9).astype(np.int32), (book * 9))]:
        code, dist = wvq.vq(jnp.asarray(a), jnp.asarray(b))
        jcode, jdist = jvq.vq(a, b)
        close(code, jcode, 0, 0)
        close(dist, jdist, 1e-6, 1e-6)
        scode, sdist = svq.vq(np.asarray(a, np.float64), np.asarray(b, np.float64))
        np.testing.assert_array_equal(np.asarray(code), scode)
        np.testing.assert_allclose(np.asarray(dist), sdist, rtol=1e-5, atol=1e-6)
    gw = webjax.grad(lambda b: wvq.vq(jnp.asarray(obs), b)[1].sum())(jnp.asarray(book))
    close(gw, jax.grad(lambda b: jvq.vq(obs, b)[1].sum())(book), 1e-5, 1e-6)
    jitted = webjax.jit(wvq.vq)(jnp.asarray(obs), jnp.asarray(book))
    np.testing.assert_array_equal(np.asarray(jitted[0]), np.asarray(jvq.vq(obs, book)[0]))
    for wf, jf in [
        (
            lambda: wvq.vq(jnp.asarray(obs), jnp.asarray(book[:, 0])),
            lambda: jvq.vq(obs, book[:, 0]),
        ),
        (
            lambda: wvq.vq(jnp.ones((2, 2, 2)), jnp.ones((2, 2, 2))),
            lambda: jvq.vq(jjnp.ones((2, 2, 2)), jjnp.ones((2, 2, 2))),
        ),
        (lambda: wvq.vq([1.0], jnp.asarray(book)), lambda: jvq.vq([1.0], book)),
    ]:
        raises_like(wf, jf)
