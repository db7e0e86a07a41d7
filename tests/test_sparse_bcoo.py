"""jax.experimental.sparse.BCOO (unbatched, all-sparse): fromdense/todense, matmul with dense
operands on both sides, transpose, sum, and grad (data and the dense operand), jit, vmap:
against real JAX."""

from __future__ import annotations

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from jax_compare import close
from webjax.experimental import sparse as ws

jax = pytest.importorskip("jax")
from jax.experimental import sparse as js  # noqa: E402

M = np.array([[0.0, 1.0, 0.0, 4.0], [2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, -1.0]], np.float32)
X = np.arange(12.0, dtype=np.float32).reshape(4, 3) / 7


def test_fromdense_todense_like_jax(device):
    for nse in (None, 7):
        s, j = ws.BCOO.fromdense(jnp.asarray(M), nse=nse), js.BCOO.fromdense(M, nse=nse)
        assert (s.shape, s.nse, repr(s)) == (j.shape, j.nse, repr(j))
        close(s.data, j.data)
        np.testing.assert_array_equal(np.asarray(s.indices), np.asarray(j.indices))
        close(s.todense(), j.todense())
    close(ws.bcoo_todense(ws.bcoo_fromdense(jnp.asarray(M))), M)


def test_products_transpose_sum(device):
    s, j = ws.BCOO.fromdense(jnp.asarray(M), nse=6), js.BCOO.fromdense(M, nse=6)
    close(s @ jnp.asarray(X), j @ X, rtol=1e-6)
    close(s @ jnp.asarray(X[:, 0]), j @ X[:, 0], rtol=1e-6)
    jj = jax.numpy
    close(jnp.asarray(X.T) @ s.T, jj.asarray(X.T) @ j.T, rtol=1e-6)
    close(jnp.asarray(M[:, 0]) @ s, jj.asarray(M[:, 0]) @ j, rtol=1e-6)
    assert s.T.shape == j.T.shape and s.transpose((1, 0)).shape == (4, 3)
    close(s.T.todense(), j.T.todense())
    close(s.sum(), j.sum())
    for ax in (0, 1):
        close(s.sum(ax).todense(), j.sum(ax).todense())


def test_grad_jit_vmap():
    s = ws.BCOO.fromdense(jnp.asarray(M))
    j = js.BCOO.fromdense(M)

    def loss(mod, np_, idx, shape):
        return lambda d, x: np_.sum(np_.sin(mod.BCOO((d, idx), shape=shape) @ x))

    wl, jl = loss(ws, jnp, s.indices, s.shape), loss(js, jax.numpy, j.indices, j.shape)
    got = webjax.grad(wl, (0, 1))(s.data, jnp.asarray(X))
    want = jax.grad(jl, (0, 1))(j.data, X)
    for g, w in zip(got, want, strict=True):
        close(g, w, rtol=1e-5, atol=1e-6)
    check_grads(wl, [np.asarray(s.data), X])
    close(webjax.jit(lambda a, x: a @ x)(s, jnp.asarray(X)), j @ X, rtol=1e-6)
    xs = np.stack([X, 2 * X])
    close(webjax.vmap(lambda x: s @ x)(jnp.asarray(xs)), jax.vmap(lambda x: j @ x)(xs), rtol=1e-6)
    close(webjax.jit(lambda m: ws.BCOO.fromdense(m, nse=5).todense())(jnp.asarray(M)), M)
