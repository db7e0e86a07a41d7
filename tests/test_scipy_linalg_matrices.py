"""jax.scipy.linalg's special matrices (toeplitz, hankel, circulant, companion, fiedler,
leslie, convolution_matrix, hilbert, pascal, hadamard, helmert, dft and inverses), expm_frechet,
polar, solve_sylvester and eigh_tridiagonal: against real JAX and SciPy, with gradients."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import webjax
import webjax.numpy as jnp
import webjax.scipy.linalg as wl
from check_grads import check_grads
from jax_compare import close

jax = pytest.importorskip("jax")
import jax.scipy.linalg as jl  # noqa: E402

F = np.float32
C3 = np.array([1.0, 2, 3], F)
R4 = np.array([9.0, 5, 6, 7], F)
CASES = [
    ("toeplitz", (C3,), {}),
    ("toeplitz", (C3, R4), {}),
    ("toeplitz", (np.arange(6.0, dtype=F).reshape(2, 3),), {}),
    ("toeplitz", (np.array([1 + 1j, 2, 3], np.complex64),), {}),
    ("toeplitz", (np.array([1, 2, 3]),), {}),
    ("hankel", (C3,), {}),
    ("hankel", (C3, R4), {}),
    ("circulant", (np.ones((2, 3), F),), {}),
    ("companion", (C3,), {}),
    ("fiedler", (np.array([1, 4, 12]),), {}),
    ("fiedler_companion", (np.array([1.0, 2, 3, 4, 5, 6], F),), {}),
    ("leslie", (np.array([0.1, 2, 1], F), np.array([0.2, 0.8], F)), {}),
    ("convolution_matrix", (C3, 4, "full"), {}),
    ("convolution_matrix", (C3, 4, "same"), {}),
    ("convolution_matrix", (np.arange(5.0, dtype=F), 3, "valid"), {}),
    ("hilbert", (4,), {}),
    ("invhilbert", (4,), {}),
    ("pascal", (5,), {}),
    ("pascal", (4, "upper"), {}),
    ("invpascal", (4,), {}),
    ("invpascal", (4, "lower"), {}),
    ("hadamard", (8,), {}),
    ("hadamard", (4, "float32"), {}),
    ("helmert", (4,), {}),
    ("helmert", (4, True), {}),
    ("dft", (4,), {}),
    ("dft", (3, "sqrtn"), {}),
]


def _arg(a):
    return jnp.asarray(a) if isinstance(a, np.ndarray) else a


@pytest.mark.parametrize("name, args, kw", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_special_matrices_match_jax(name, args, kw):
    got = getattr(wl, name)(*map(_arg, args), **kw)
    want = getattr(jl, name)(*args, **kw)
    # JAX builds pascal/invhilbert through floating point: compare against SciPy's exact too
    close(got, want, rtol=1e-5, atol=1e-5)
    if name in ("pascal", "invpascal", "invhilbert", "hilbert", "helmert"):
        ref = getattr(sl, name)(*args, **kw)
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6)


def test_special_matrices_on_device_and_jit(device):
    close(webjax.jit(wl.toeplitz)(jnp.asarray(C3), jnp.asarray(R4)), jl.toeplitz(C3, R4))
    close(wl.circulant(jnp.asarray(C3)), jl.circulant(C3))


A = np.array([[1.0, 2], [0.5, -1]], F)
E = np.array([[0.0, 1], [1, 0.3]], F)


def test_expm_frechet():
    expm, frechet = wl.expm_frechet(jnp.asarray(A), jnp.asarray(E))
    s_expm, s_frechet = sl.expm_frechet(A, E)
    close(expm, s_expm.astype(F), rtol=1e-5, atol=1e-5)
    close(frechet, s_frechet.astype(F), rtol=1e-5, atol=1e-5)
    close(wl.expm_frechet(jnp.asarray(A), jnp.asarray(E), compute_expm=False), frechet)
    check_grads(lambda a, e: wl.expm_frechet(a, e, compute_expm=False), [A * 0.5, E])
    with pytest.raises(ValueError, match="same shape"):
        wl.expm_frechet(jnp.ones((2, 2)), jnp.ones((3, 3)))


@pytest.mark.parametrize("side", ["right", "left"])
def test_polar(side):
    a = np.array([[1.0, 2], [3, 4], [5, 7]], F)
    a = a if side == "right" else a.T
    u, p = wl.polar(jnp.asarray(a), side=side)
    su, sp = sl.polar(a, side=side)
    close(u, su.astype(F), rtol=1e-5, atol=1e-5)
    close(p, sp.astype(F), rtol=1e-5, atol=1e-5)


def test_solve_sylvester(device):
    a = np.array([[1.0, 2], [0, 3]], F)
    b = np.array([[4.0, 0], [1, 5]], F)
    c = np.array([[1.0, 0], [0, 1]], F)
    got = wl.solve_sylvester(jnp.asarray(a), jnp.asarray(b), jnp.asarray(c))
    close(got, jl.solve_sylvester(a, b, c), rtol=1e-5, atol=1e-6)
    if device.platform == "cpu":
        check_grads(lambda x, y, z: wl.solve_sylvester(x, y, z), [a, b, c])


def test_eigh_tridiagonal():
    d, e = np.array([1.0, 2, 3, 4], F), np.array([0.5, 0.5, 0.5], F)
    close(
        wl.eigh_tridiagonal(jnp.asarray(d), jnp.asarray(e), eigvals_only=True),
        jl.eigh_tridiagonal(d, e, eigvals_only=True),
        rtol=1e-5,
    )
    kw = {"eigvals_only": True, "select": "i", "select_range": (1, 2)}
    close(wl.eigh_tridiagonal(d, e, **kw), jl.eigh_tridiagonal(d, e, **kw), rtol=1e-5)
    w, v = wl.eigh_tridiagonal(jnp.asarray(d), jnp.asarray(e))
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(t @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-5)
    with pytest.raises(NotImplementedError, match="select='v'"):
        wl.eigh_tridiagonal(d, e, select="v", select_range=(0.0, 1.0))
