"""The nonsymmetric eigensolver (lax.linalg.eig, jnp.linalg.eig/eigvals, jnp.roots, jnp.poly)
against real JAX and NumPy, on every backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from webjax.lax import linalg as la

jax = pytest.importorskip("jax")
rjnp = jax.numpy

MATS = [
    np.array([[1.0, 2.0, 0.0], [-3.0, 1.0, 1.0], [0.5, 0.0, 2.0]], np.float32),
    np.array([[0.0, 1.0], [-1.0, 0.0]], np.float32),  # +-i
    np.array([[2.0, 0.0], [0.0, 3.0]], np.float32),
    np.random.RandomState(0).standard_normal((6, 6)).astype(np.float32),
]


def _pairs_ok(a: np.ndarray, w: np.ndarray, v: np.ndarray, tol: float) -> None:
    a = a.astype(np.complex128)
    np.testing.assert_allclose(a @ v, v * w[None, :], atol=tol * max(1.0, np.abs(a).max()))
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, rtol=1e-5)


@pytest.mark.parametrize("k", range(len(MATS)))
def test_eig_matches_jax(device: Any, k: int) -> None:
    a = MATS[k]
    w, v = webjax.numpy.linalg.eig(jnp.asarray(a))
    assert str(w.dtype) == "complex64" and str(v.dtype) == "complex64"
    rw, rv = rjnp.linalg.eig(rjnp.asarray(a))
    np.testing.assert_allclose(np.asarray(w), np.asarray(rw), rtol=1e-5, atol=1e-5)
    _pairs_ok(a, np.asarray(w), np.asarray(v), 1e-5)
    # LAPACK's normalization (unit norm, largest component real); the sign of each vector is
    # the LAPACK build's choice, so compare up to a unit factor per column
    v, rv = np.asarray(v), np.asarray(rv)
    for j in range(v.shape[1]):
        phase = np.vdot(v[:, j], rv[:, j])
        assert abs(abs(phase) - 1) < 1e-4
        np.testing.assert_allclose(v[:, j] * phase, rv[:, j], atol=2e-5)
    np.testing.assert_allclose(
        np.asarray(jnp.linalg.eigvals(jnp.asarray(a))), np.asarray(rw), rtol=1e-5, atol=1e-5
    )


def test_eig_left_eigenvectors(device: Any) -> None:
    a = MATS[0]
    w, vl, _vr = la.eig(jnp.asarray(a))
    w, vl = np.asarray(w), np.asarray(vl)
    # vl[:, j]^H a = w[j] vl[:, j]^H
    np.testing.assert_allclose(vl.conj().T @ a, w[:, None] * vl.conj().T, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1.0, rtol=1e-5)


def test_eig_batched_jit_vmap(device: Any) -> None:
    a = np.stack([MATS[0], MATS[0].T * 0.5])
    want = np.asarray(rjnp.linalg.eigvals(rjnp.asarray(a)))
    got = jnp.linalg.eigvals(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    got_jit = webjax.jit(jnp.linalg.eigvals)(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(got_jit), want, rtol=1e-5, atol=1e-5)
    got_vmap = webjax.vmap(jnp.linalg.eigvals)(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(got_vmap), want, rtol=1e-5, atol=1e-5)


def test_eigvals_grad_matches_jax() -> None:
    a = MATS[0]

    def f(ns: Any, m: Any) -> Any:
        return ns.numpy.sum(ns.numpy.abs(ns.numpy.linalg.eigvals(m)) ** 2)

    got = webjax.grad(lambda m: f(webjax, m))(jnp.asarray(a))
    want = jax.grad(lambda m: f(jax, m))(rjnp.asarray(a))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    check_grads(jnp.linalg.eigvals, (a,), order=1)
    with pytest.raises(NotImplementedError, match="derivatives of eigenvectors"):
        webjax.jvp(lambda m: jnp.linalg.eig(m)[1], (jnp.asarray(a),), (jnp.asarray(a),))


def test_eig_errors() -> None:
    with pytest.raises(ValueError, match=r"must have shape \[..., n, n\]"):
        la.eig(jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="eig does not accept dtype int32"):
        la.eig(jnp.ones((2, 2), jnp.int32))


def test_pure_python_fallback_agrees_with_lapack() -> None:
    from webjax._src.lax import eig as host

    for a in MATS:
        w, vr = host._eig_python([[complex(x) for x in row] for row in a.tolist()], 2.0**-52)
        v = np.array(vr)
        np.testing.assert_allclose(a @ v, v * np.array(w)[None, :], atol=1e-9)
        want = np.linalg.eigvals(a.astype(np.float64))
        np.testing.assert_allclose(np.sort_complex(np.array(w)), np.sort_complex(want), atol=1e-9)


@pytest.mark.parametrize(
    "p", [[1, -3, 2], [0, 0, 1, -3, 2], [1, 0, 0], [2.0], [1, 2, 3, 4, 5], [3, 0, -1]]
)
def test_roots_matches_jax(device: Any, p: list[float]) -> None:
    p32 = np.array(p, np.float32)
    got = np.asarray(jnp.roots(jnp.asarray(p32)))
    want = np.asarray(rjnp.roots(rjnp.asarray(p32)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_roots_without_stripping_zeros() -> None:
    for p in ([0, 0, 1, -3, 2], [0, 1, -3, 2], [0.0, 0.0, 0.0]):
        p32 = np.array(p, np.float32)
        got = webjax.jit(lambda q: jnp.roots(q, strip_zeros=False))(jnp.asarray(p32))
        want = rjnp.roots(rjnp.asarray(p32), strip_zeros=False)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_poly_of_a_matrix_matches_jax() -> None:
    a = MATS[0]
    got = np.asarray(jnp.poly(jnp.asarray(a)))
    want = np.asarray(rjnp.poly(rjnp.asarray(a)))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
