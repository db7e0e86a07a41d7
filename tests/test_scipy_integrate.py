"""`jax.scipy.integrate.trapezoid` against real JAX."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.integrate as wi
from check_grads import check_grads
from jax_compare import close

jax = pytest.importorskip("jax")
jjnp = jax.numpy
import jax.scipy.integrate as ji  # noqa: E402

R = np.random.RandomState(0)


def f32(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return R.uniform(lo, hi, shape).astype(np.float32)


def test_trapezoid(device: Any) -> None:
    import scipy.integrate as si

    y = f32(3, 7)
    x = np.sort(f32(7, hi=4.0))
    x2 = np.sort(f32(3, 7, hi=4.0), axis=1)
    for args, kw in [
        ((), {}),
        ((x,), {}),
        ((x2,), {}),
        ((), {"dx": 0.3}),
        ((), {"dx": 0.5, "axis": 0}),
        ((np.sort(f32(3)),), {"axis": 0}),
    ]:
        got = wi.trapezoid(jnp.asarray(y), *map(jnp.asarray, args), **kw)
        close(got, ji.trapezoid(y, *args, **kw), 1e-5, 1e-6)
        np.testing.assert_allclose(np.asarray(got), si.trapezoid(y, *args, **kw), 1e-5, 1e-6)
    close(wi.trapezoid(jnp.arange(5)), ji.trapezoid(jjnp.arange(5)))
    check_grads(lambda a, b: wi.trapezoid(a, b), (y, x))
    gw = webjax.grad(lambda a, b: wi.trapezoid(a * a, b), (0, 1))(jnp.asarray(y[0]), jnp.asarray(x))
    gj = jax.grad(lambda a, b: ji.trapezoid(a * a, b), (0, 1))(y[0], x)
    close(gw[0], gj[0], 1e-5, 1e-6)
    close(gw[1], gj[1], 1e-5, 1e-6)
    f = webjax.jit(lambda a: wi.trapezoid(a, dx=0.5, axis=0))
    close(f(jnp.asarray(y)), wi.trapezoid(jnp.asarray(y), dx=0.5, axis=0), 1e-6, 1e-7)
    batched = webjax.vmap(lambda a: wi.trapezoid(a, jnp.asarray(x)))(jnp.asarray(y))
    close(batched, wi.trapezoid(jnp.asarray(y), jnp.asarray(x)), 1e-6, 1e-7)
