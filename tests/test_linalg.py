"""webjax.lax.linalg, webjax.numpy.linalg and webjax.scipy.linalg on every backend.

Oracles: NumPy's np.linalg for values (eigenvectors and singular vectors compared up to the
sign of each column, which no implementation fixes), real JAX where installed (values,
pivots, error types, jaxprs), finite differences for gradients (check_grads), a Python loop
for vmap, and the eager path for jit.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.linalg as wsl
from check_grads import check_grads
from devices import has_float64
from webjax import lax

try:  # the test-only oracle
    import jax as rjax
    import jax.numpy as rjnp
    import jax.scipy.linalg as rsl
except ImportError:  # pragma: no cover
    rjax = rjnp = rsl = None

needs_jax = pytest.mark.skipif(rjax is None, reason="real JAX (the oracle) is not installed")

R = np.random.RandomState(0)


def rand(*shape: int) -> np.ndarray:
    return R.randn(*shape).astype(np.float32)


def spd(*shape: int) -> np.ndarray:
    a = rand(*shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def sym(*shape: int) -> np.ndarray:
    a = rand(*shape)
    return (a + np.swapaxes(a, -1, -2)).astype(np.float32)


def npf(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def close(got, want, tol: float = 2e-5) -> None:
    """Agreement relative to the magnitude of the reference (float32 factorizations)."""
    got, want = npf(got), npf(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def same_up_to_column_signs(got, want, tol: float = 1e-4) -> None:
    got, want = npf(got), npf(want)
    signs = np.sign(np.sum(got * want, axis=-2, keepdims=True))
    signs[signs == 0] = 1
    close(got * signs, want, tol)


def orthonormal_columns(q, tol: float = 2e-5) -> None:
    q = npf(q)
    k = q.shape[-1]
    close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), tol)


def mT(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


# ============================================================================================
# lax.linalg primitives
# ============================================================================================
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 5, 5)], ids=str)
def test_cholesky(device, shape):
    a = spd(*shape)
    L = jnp.linalg.cholesky(jnp.asarray(a))
    assert L.dtype == jnp.float32 and L.shape == shape
    close(L, np.linalg.cholesky(a))
    close(jnp.linalg.cholesky(jnp.asarray(a), upper=True), mT(np.linalg.cholesky(a)))
    # the primitive reads only the lower triangle
    garbage_upper = np.tril(a) + np.triu(rand(*shape), 1)
    close(
        lax.linalg.cholesky(jnp.asarray(garbage_upper), symmetrize_input=False),
        np.linalg.cholesky(a),
    )


def test_cholesky_not_positive_definite(device):
    a = np.array([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 2.0], [2.0, 5.0]]], np.float32)
    L = np.asarray(jnp.linalg.cholesky(jnp.asarray(a)))
    # JAX: NaN on and below the diagonal of a failed factorization, zeros above it
    assert np.isnan(L[0][np.tril_indices(2)]).all() and L[0, 0, 1] == 0
    close(L[1], np.linalg.cholesky(a[1]))


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_triangular_solve(device, left_side, lower, transpose_a, unit_diagonal):
    n, k = 4, 3
    raw = rand(2, n, n)  # garbage in the other triangle must be ignored
    tri = np.tril(raw) if lower else np.triu(raw)
    tri = tri + 3 * np.eye(n, dtype=np.float32)
    if unit_diagonal:
        tri = tri - np.eye(n) * np.diagonal(tri, axis1=-2, axis2=-1)[..., None, :] + np.eye(n)
    a = raw.copy()
    mask = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    a[:, mask] = tri[:, mask]
    if unit_diagonal:
        a[:, np.arange(n), np.arange(n)] = 7.0  # not read
    op = mT(tri) if transpose_a else tri
    b = rand(2, n, k) if left_side else rand(2, k, n)
    x = lax.linalg.triangular_solve(
        jnp.asarray(a),
        jnp.asarray(b),
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        unit_diagonal=unit_diagonal,
    )
    want = np.linalg.solve(op, b) if left_side else mT(np.linalg.solve(mT(op), mT(b)))
    close(x, want, 1e-4)


def _lu_check(a, lu, piv, perm):
    a, lu = npf(a), npf(lu)
    m, n = a.shape[-2:]
    k = min(m, n)
    L = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    U = np.triu(lu)[..., :k, :]
    perm, piv = np.asarray(perm), np.asarray(piv)
    assert perm.dtype == np.int32 and piv.dtype == np.int32
    assert np.all(np.abs(L) <= 1 + 1e-6)  # partial pivoting
    pa = np.take_along_axis(a, perm[..., :, None], axis=-2)
    close(L @ U, pa, 1e-5)
    close(lax.linalg.lu_pivots_to_permutation(jnp.asarray(piv), m), perm, 0)


@pytest.mark.parametrize("shape", [(5, 5), (6, 4), (4, 6), (2, 3, 3), (1, 1)], ids=str)
def test_lu(device, shape):
    a = rand(*shape)
    lu, piv, perm = lax.linalg.lu(jnp.asarray(a))
    k = min(shape[-2:])
    assert lu.shape == shape and piv.shape == (*shape[:-2], k) and perm.shape == shape[:-1]
    _lu_check(a, lu, piv, perm)
    if rjax is not None:
        rlu, rpiv, rperm = rjax.lax.linalg.lu(rjnp.asarray(a))
        np.testing.assert_array_equal(np.asarray(piv), np.asarray(rpiv))
        np.testing.assert_array_equal(np.asarray(perm), np.asarray(rperm))
        close(lu, rlu, 1e-5)


def test_lu_singular(device):
    lu, piv, perm = lax.linalg.lu(jnp.zeros((3, 3)))
    assert np.all(np.asarray(lu) == 0)
    np.testing.assert_array_equal(np.asarray(piv), [0, 1, 2])
    np.testing.assert_array_equal(np.asarray(perm), [0, 1, 2])
    a = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], np.float32)  # rank 2
    lu, piv, perm = lax.linalg.lu(jnp.asarray(a))
    assert np.isfinite(np.asarray(lu)).all()
    _lu_check(a, lu, piv, perm)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 4, 3)], ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(device, shape, mode):
    a = rand(*shape)
    out = jnp.linalg.qr(jnp.asarray(a), mode=mode)
    want = np.linalg.qr(a, mode=mode)
    if mode == "r":  # NumPy and LAPACK share the Householder conventions: signs agree
        close(out, want, 1e-4)
        return
    q, r = out
    close(q, want[0], 1e-4)
    close(r, want[1], 1e-4)
    orthonormal_columns(q)
    close(npf(q) @ npf(r), a, 1e-5)


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (8, 8), (3, 4, 4)], ids=str)
def test_eigh(device, shape):
    a = sym(*shape)
    w, v = jnp.linalg.eigh(jnp.asarray(a))
    assert w.shape == shape[:-1] and v.shape == shape
    wn, vn = np.linalg.eigh(a)
    close(w, wn, 1e-5)
    orthonormal_columns(v)
    close(npf(a) @ npf(v), npf(v) * npf(w)[..., None, :], 1e-5)
    same_up_to_column_signs(v, vn, 1e-3)
    close(jnp.linalg.eigvalsh(jnp.asarray(a)), wn, 1e-5)


def test_eigh_triangles_and_subset(device):
    a = sym(5, 5)
    junk = np.tril(a) + np.triu(rand(5, 5), 1)
    w, v = jnp.linalg.eigh(jnp.asarray(junk), UPLO="L", symmetrize_input=False)
    close(w, np.linalg.eigvalsh(a), 1e-5)
    junk = np.triu(a) + np.tril(rand(5, 5), -1)
    close(
        jnp.linalg.eigh(jnp.asarray(junk), UPLO="U", symmetrize_input=False)[0],
        np.linalg.eigvalsh(a),
        1e-5,
    )
    v, w = lax.linalg.eigh(jnp.asarray(a), subset_by_index=(1, 3))
    assert v.shape == (5, 2) and w.shape == (2,)
    close(w, np.linalg.eigvalsh(a)[1:3], 1e-5)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 2), (1, 1)], ids=str)
def test_svd(device, shape):
    a = rand(*shape)
    m, n = shape[-2:]
    k = min(m, n)
    un, sn, vhn = np.linalg.svd(a, full_matrices=False)
    s = jnp.linalg.svd(jnp.asarray(a), compute_uv=False)
    close(s, sn, 1e-5)
    for full in (True, False):
        u, s, vh = jnp.linalg.svd(jnp.asarray(a), full_matrices=full)
        assert u.shape == (*shape[:-2], m, m if full else k)
        assert vh.shape == (*shape[:-2], n if full else k, n)
        close(s, sn, 1e-5)
        orthonormal_columns(u)
        orthonormal_columns(mT(npf(vh)))
        uk, vhk = npf(u)[..., :, :k], npf(vh)[..., :k, :]
        close((uk * npf(s)[..., None, :]) @ vhk, a, 1e-5)
        same_up_to_column_signs(uk, un, 1e-3)
        same_up_to_column_signs(mT(vhk), mT(vhn), 1e-3)


def test_svd_hermitian(device):
    a = sym(2, 4, 4)
    u, s, vh = jnp.linalg.svd(jnp.asarray(a), hermitian=True)
    close(s, np.linalg.svd(a, compute_uv=False), 1e-5)
    close((npf(u) * npf(s)[..., None, :]) @ npf(vh), a, 1e-5)
    close(
        jnp.linalg.svd(jnp.asarray(a), hermitian=True, compute_uv=False),
        np.linalg.svd(a, compute_uv=False),
        1e-5,
    )


def test_svd_rank_deficient(device):
    u0, _ = np.linalg.qr(rand(6, 6))
    v0, _ = np.linalg.qr(rand(4, 4))
    a = (u0[:, :4] * np.array([3.0, 1.0, 0.0, 0.0])) @ v0.T
    a = a.astype(np.float32)
    u, s, vh = jnp.linalg.svd(jnp.asarray(a))
    close(s, [3, 1, 0, 0], 1e-5)
    orthonormal_columns(u)  # the completion is orthonormal too
    orthonormal_columns(mT(npf(vh)))
    close(npf(u)[:, :4] * npf(s) @ npf(vh), a, 1e-5)
    assert int(jnp.linalg.matrix_rank(jnp.asarray(a))) == 2


@pytest.mark.parametrize("kind", ["clustered", "repeated", "graded"])
def test_jacobi_hard_spectra(kind):
    """Fixed sweep counts suffice where Jacobi converges slowest."""
    n = 12
    q, _ = np.linalg.qr(R.randn(n, n))
    if kind == "clustered":
        d = 1 + 1e-4 * R.randn(n)
    elif kind == "repeated":
        d = np.arange(n) % 3
    else:
        d = np.logspace(-5, 0, n)
    a = (q * d) @ q.T
    a = ((a + a.T) / 2).astype(np.float32)
    w, v = jnp.linalg.eigh(jnp.asarray(a))
    ref = np.linalg.eigvalsh(npf(a))
    eps = np.finfo(np.float32).eps
    assert np.max(np.abs(npf(w) - ref)) <= 4 * n * eps * np.max(np.abs(ref))
    close(npf(a) @ npf(v), npf(v) * npf(w), 4 * n * eps)
    orthonormal_columns(v, 4 * n * eps)
    s = jnp.linalg.svd(jnp.asarray(a), compute_uv=False)
    sref = np.linalg.svd(npf(a), compute_uv=False)
    assert np.max(np.abs(npf(s) - sref)) <= 4 * n * eps * sref[0]


# ============================================================================================
# jnp.linalg
# ============================================================================================
def test_solve_inv(device):
    a = rand(4, 4) + 4 * np.eye(4, dtype=np.float32)
    b = rand(4)
    close(jnp.linalg.solve(jnp.asarray(a), jnp.asarray(b)), np.linalg.solve(a, b), 1e-5)
    bm = rand(4, 2)
    close(jnp.linalg.solve(jnp.asarray(a), jnp.asarray(bm)), np.linalg.solve(a, bm), 1e-5)
    ab = rand(3, 4, 4) + 4 * np.eye(4, dtype=np.float32)
    bb = rand(2, 1, 4, 2)  # broadcast batch dims
    close(jnp.linalg.solve(jnp.asarray(ab), jnp.asarray(bb)), np.linalg.solve(ab, bb), 1e-5)
    close(
        jnp.linalg.solve(jnp.asarray(ab), jnp.asarray(b)),
        np.linalg.solve(ab, np.broadcast_to(b, (3, 4))[..., None])[..., 0],
        1e-5,
    )
    close(jnp.linalg.inv(jnp.asarray(ab)), np.linalg.inv(ab), 1e-5)
    # integer inputs promote to the default float, as in JAX
    ai = np.array([[2, 1], [1, 3]], np.int32)
    out = jnp.linalg.inv(jnp.asarray(ai))
    assert out.dtype == jnp.float32
    close(out, np.linalg.inv(ai), 1e-6)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_det_slogdet(device, n):
    a = rand(2, n, n) + (n > 0) * np.eye(n, dtype=np.float32)
    close(jnp.linalg.det(jnp.asarray(a)), np.linalg.det(npf(a)), 1e-5)
    for method in (None, "qr"):
        sign, logdet = jnp.linalg.slogdet(jnp.asarray(a), method=method)
        rs, rl = np.linalg.slogdet(npf(a))
        close(sign, rs, 0)
        close(logdet, rl, 1e-5)


def test_det_singular(device):
    z = jnp.zeros((4, 4))
    assert float(jnp.linalg.det(z)) == 0.0
    sign, logdet = jnp.linalg.slogdet(z)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    sign, logdet = jnp.linalg.slogdet(-jnp.eye(3))
    assert float(sign) == -1.0 and float(logdet) == 0.0


NORM_CASES = [
    ((6,), None, None), ((6,), 1, None), ((6,), 0, None), ((6,), np.inf, None),
    ((6,), -np.inf, None), ((6,), 3, None), ((6,), -1, None), ((3, 4), None, None),
    ((3, 4), "fro", None), ((3, 4), "nuc", None), ((3, 4), 1, None), ((3, 4), -1, None),
    ((3, 4), 2, None), ((3, 4), -2, None), ((3, 4), np.inf, None), ((3, 4), -np.inf, None),
    ((2, 3, 4), None, 1), ((2, 3, 4), 2, (0, 2)), ((2, 3, 4), 1, (2, 0)),
    ((2, 3, 4), "nuc", (-1, -2)), ((2, 3, 4), None, None),
]  # fmt: skip


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape,ord,axis", NORM_CASES, ids=str)
def test_norm(device, shape, ord, axis, keepdims):
    x = rand(*shape)
    got = jnp.linalg.norm(jnp.asarray(x), ord=ord, axis=axis, keepdims=keepdims)
    want = np.linalg.norm(x.astype(np.float64), ord=ord, axis=axis, keepdims=keepdims)
    assert got.dtype == jnp.float32
    close(got, want, 1e-5)


def test_vector_matrix_norms_svdvals(device):
    x = rand(2, 3, 4)
    close(jnp.linalg.vector_norm(jnp.asarray(x)), np.linalg.norm(x.ravel()), 1e-5)
    close(
        jnp.linalg.vector_norm(jnp.asarray(x), axis=(0, 2), ord=1),
        np.sum(np.abs(x), axis=(0, 2)),
        1e-5,
    )
    close(jnp.linalg.matrix_norm(jnp.asarray(x), ord=2), np.linalg.norm(x, 2, axis=(-2, -1)), 1e-5)
    close(jnp.linalg.svdvals(jnp.asarray(x)), np.linalg.svd(x, compute_uv=False), 1e-5)


def test_pinv_rank_power_lstsq(device):
    a = rand(5, 3)
    close(jnp.linalg.pinv(jnp.asarray(a)), np.linalg.pinv(a), 1e-4)
    close(jnp.linalg.pinv(jnp.asarray(a.T)), np.linalg.pinv(a.T), 1e-4)
    d = np.diag([100.0, 0.5]).astype(np.float32)
    close(jnp.linalg.pinv(jnp.asarray(d), rtol=0.1), [[0.01, 0], [0, 0]], 1e-6)
    assert int(jnp.linalg.matrix_rank(jnp.asarray(a))) == 3
    assert int(jnp.linalg.matrix_rank(jnp.asarray(d), rtol=0.1)) == 2  # JAX: absolute
    assert jnp.linalg.matrix_rank(jnp.ones(3)).dtype == jnp.int32
    sq = rand(3, 3) + 2 * np.eye(3, dtype=np.float32)
    for k in (0, 1, 2, 3, 5, -1, -2):
        close(jnp.linalg.matrix_power(jnp.asarray(sq), k), np.linalg.matrix_power(npf(sq), k), 1e-4)
    b = rand(5)
    x, resid, rank, s = jnp.linalg.lstsq(jnp.asarray(a), jnp.asarray(b))
    xn, rn, rankn, sn = np.linalg.lstsq(a, b, rcond=None)
    close(x, xn, 1e-4)
    close(resid, rn, 1e-4)
    assert int(rank) == rankn and rank.dtype == jnp.int32
    close(s, sn, 1e-5)
    bm = rand(3, 2)
    x, resid, rank, s = jnp.linalg.lstsq(jnp.asarray(a.T), jnp.asarray(bm), numpy_resid=True)
    close(x, np.linalg.lstsq(a.T, bm, rcond=None)[0], 1e-4)
    assert resid.shape == (0,)


def test_products_and_helpers(device):
    a, b, c = rand(3, 4), rand(4, 5), rand(5)
    close(
        jnp.linalg.multi_dot([jnp.asarray(a), jnp.asarray(b), jnp.asarray(c)]),
        np.linalg.multi_dot([a, b, c]),
        1e-5,
    )
    u, v = rand(2, 3), rand(3)
    close(jnp.linalg.cross(jnp.asarray(u), jnp.asarray(v)), np.cross(u, v), 1e-6)
    close(
        jnp.cross(jnp.asarray(u[:, :2]), jnp.asarray(v[:2])), u[:, 0] * v[1] - u[:, 1] * v[0], 1e-6
    )
    close(jnp.cross(jnp.asarray(u), jnp.asarray(v), axisc=0), np.cross(u, v, axisc=0), 1e-6)
    close(jnp.cross(jnp.asarray(u.T), jnp.asarray(u.T), axisa=0, axisb=0), np.zeros((2, 3)), 0)
    close(jnp.linalg.outer(jnp.asarray(v), jnp.asarray(c)), np.outer(v, c), 1e-6)
    t = rand(2, 3, 3)
    close(jnp.linalg.trace(jnp.asarray(t), offset=1), np.trace(t, 1, -2, -1), 1e-6)
    close(jnp.linalg.diagonal(jnp.asarray(t)), np.diagonal(t, 0, -2, -1), 0)
    close(jnp.linalg.matrix_transpose(jnp.asarray(t)), mT(t), 0)
    close(jnp.linalg.vecdot(jnp.asarray(u), jnp.asarray(v)), u @ v, 1e-6)
    close(jnp.linalg.tensordot(jnp.asarray(a), jnp.asarray(b), axes=1), a @ b, 1e-5)
    ta = rand(2, 3, 6) + np.eye(6, dtype=np.float32).reshape(2, 3, 6) * 3
    tb = rand(2, 3)
    close(
        jnp.linalg.tensorsolve(jnp.asarray(ta), jnp.asarray(tb)),
        np.linalg.tensorsolve(ta, tb),
        1e-4,
    )
    ti = rand(4, 2, 2) + np.eye(4, dtype=np.float32).reshape(4, 2, 2) * 3
    close(jnp.linalg.tensorinv(jnp.asarray(ti), ind=1), np.linalg.tensorinv(ti, ind=1), 1e-4)
    sq = rand(3, 3) + 2 * np.eye(3, dtype=np.float32)
    for p in (None, 1, -1, 2, -2, np.inf, "fro"):
        close(jnp.linalg.cond(jnp.asarray(sq), p), np.linalg.cond(npf(sq), p), 1e-4)


# ============================================================================================
# jax.scipy.linalg
# ============================================================================================
def test_scipy_linalg(device):
    n = 4
    a = rand(n, n) + n * np.eye(n, dtype=np.float32)
    s = spd(n, n)
    b, bv = rand(n, 2), rand(n)
    tri = np.triu(a)
    for trans in (0, 1, "T", 2):
        op = tri.T if trans in (1, "T", 2) else tri
        close(
            wsl.solve_triangular(jnp.asarray(tri), jnp.asarray(b), trans=trans),
            np.linalg.solve(op, b),
            1e-5,
        )
    close(
        wsl.solve_triangular(jnp.asarray(np.tril(a)), jnp.asarray(bv), lower=True),
        np.linalg.solve(np.tril(a), bv),
        1e-5,
    )
    L = np.linalg.cholesky(s)
    close(wsl.cholesky(jnp.asarray(s)), L.T, 1e-5)
    close(wsl.cholesky(jnp.asarray(s), lower=True), L, 1e-5)
    for lower in (False, True):
        cf = wsl.cho_factor(jnp.asarray(s), lower=lower)
        assert cf[1] is lower
        close(wsl.cho_solve(cf, jnp.asarray(b)), np.linalg.solve(s, b), 1e-5)
        close(wsl.cho_solve(cf, jnp.asarray(bv)), np.linalg.solve(s, bv), 1e-5)
    lu, piv = wsl.lu_factor(jnp.asarray(a))
    close(wsl.lu_solve((lu, piv), jnp.asarray(b)), np.linalg.solve(a, b), 1e-5)
    close(wsl.lu_solve((lu, piv), jnp.asarray(bv), trans=1), np.linalg.solve(a.T, bv), 1e-5)
    for shape in ((4, 4), (5, 3), (3, 5)):
        m = rand(*shape)
        p, l, u = wsl.lu(jnp.asarray(m))
        close(npf(p) @ npf(l) @ npf(u), m, 1e-5)
        assert p.dtype == jnp.float32
        pl, u2 = wsl.lu(jnp.asarray(m), permute_l=True)
        close(npf(pl) @ npf(u2), m, 1e-5)
    m = rand(5, 3)
    q, r = wsl.qr(jnp.asarray(m))
    assert q.shape == (5, 5) and r.shape == (5, 3)
    close(npf(q) @ npf(r), m, 1e-5)
    q, r = wsl.qr(jnp.asarray(m), mode="economic")
    assert q.shape == (5, 3) and r.shape == (3, 3)
    (r,) = wsl.qr(jnp.asarray(m), mode="r")
    assert r.shape == (5, 3)
    sy = sym(4, 4)
    w, _ = wsl.eigh(jnp.asarray(sy))
    close(w, np.linalg.eigvalsh(sy), 1e-5)
    close(wsl.eigh(jnp.asarray(sy), eigvals_only=True), np.linalg.eigvalsh(sy), 1e-5)
    _, sv, _ = wsl.svd(jnp.asarray(m))
    close(sv, np.linalg.svd(m, compute_uv=False), 1e-5)
    close(wsl.inv(jnp.asarray(a)), np.linalg.inv(a), 1e-5)
    close(wsl.det(jnp.asarray(a)), np.linalg.det(npf(a)), 1e-5)
    for assume_a in ("gen", "sym", "pos"):
        rhs = s if assume_a != "gen" else a
        close(
            wsl.solve(jnp.asarray(rhs), jnp.asarray(b), assume_a=assume_a),
            np.linalg.solve(rhs, b),
            1e-5,
        )
    close(
        wsl.solve(jnp.asarray(s), jnp.asarray(bv), assume_a="pos", lower=True),
        np.linalg.solve(s, bv),
        1e-5,
    )
    blk = wsl.block_diag(jnp.ones((1, 2)), jnp.asarray(2.0), jnp.ones((2, 1)))
    close(blk, [[1, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 1], [0, 0, 0, 1]], 0)


def _expm_series(a: np.ndarray) -> np.ndarray:
    # eigendecomposition of a diagonalizable matrix, in float64
    w, v = np.linalg.eig(npf(a))
    return np.real(v @ np.diag(np.exp(w)) @ np.linalg.inv(v))


@pytest.mark.parametrize("scale", [0.01, 0.3, 1.5, 20.0])
def test_expm(device, scale):
    a = rand(4, 4) * scale / 2
    close(wsl.expm(jnp.asarray(a)), _expm_series(a), 1e-4)
    batch = rand(2, 3, 3) * scale / 2
    close(wsl.expm(jnp.asarray(batch)), np.stack([_expm_series(x) for x in batch]), 1e-4)


# ============================================================================================
# against real JAX
# ============================================================================================
A4 = rand(4, 4) + 2 * np.eye(4, dtype=np.float32)
S4 = spd(4, 4)
Y4 = sym(4, 4)
T53 = rand(5, 3)
B42 = rand(4, 2)
ORACLE = [
    ("cholesky", lambda m, x: m.linalg.cholesky(x), (S4,)),
    ("inv", lambda m, x: m.linalg.inv(x), (A4,)),
    ("solve", lambda m, x, y: m.linalg.solve(x, y), (A4, B42)),
    ("det", lambda m, x: m.linalg.det(x), (A4,)),
    ("slogdet", lambda m, x: tuple(m.linalg.slogdet(x)), (A4,)),
    ("eigvalsh", lambda m, x: m.linalg.eigvalsh(x), (Y4,)),
    ("svdvals", lambda m, x: m.linalg.svd(x, compute_uv=False), (T53,)),
    ("qr", lambda m, x: tuple(m.linalg.qr(x)), (T53,)),
    ("pinv", lambda m, x: m.linalg.pinv(x), (T53,)),
    ("norm2", lambda m, x: m.linalg.norm(x, 2), (T53,)),
    ("nuc", lambda m, x: m.linalg.norm(x, "nuc"), (T53,)),
    ("lstsq", lambda m, x, y: m.linalg.lstsq(x, y)[0], (T53, T53[:, 0])),
    ("matrix_power", lambda m, x: m.linalg.matrix_power(x, -3), (A4,)),
    ("cond", lambda m, x: m.linalg.cond(x), (A4,)),
    ("eigh_proj", lambda m, x: (lambda v: v[:, 1:] @ v[:, 1:].T)(m.linalg.eigh(x)[1]), (Y4,)),
    ("svd_recon", lambda m, x: (lambda u, s, vh: (u * s) @ vh)(*m.linalg.svd(x, False)), (T53,)),
]  # fmt: skip


@needs_jax
@pytest.mark.parametrize("name,fn,args", ORACLE, ids=[c[0] for c in ORACLE])
def test_matches_jax(device, name, fn, args):
    got = fn(jnp, *[jnp.asarray(a) for a in args])
    want = fn(rjnp, *[rjnp.asarray(a) for a in args])
    got_l = got if isinstance(got, tuple) else (got,)
    want_l = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got_l, want_l, strict=True):
        assert str(g.dtype) == str(w.dtype), (g.dtype, w.dtype)
        close(g, w, 2e-5)


@needs_jax
def test_scipy_matches_jax(device):
    a = A4
    close(wsl.expm(jnp.asarray(a * 0.5)), rsl.expm(rjnp.asarray(a * 0.5)), 1e-5)
    for want, got in [
        (rsl.lu(rjnp.asarray(T53)), wsl.lu(jnp.asarray(T53))),
        (rsl.lu_factor(rjnp.asarray(a)), wsl.lu_factor(jnp.asarray(a))),
        (rsl.cho_factor(rjnp.asarray(S4)), wsl.cho_factor(jnp.asarray(S4))),
        (rsl.qr(rjnp.asarray(T53)), wsl.qr(jnp.asarray(T53))),
    ]:
        for w, g in zip(want, got, strict=True):
            if isinstance(w, bool):
                assert w == g
            else:
                assert str(g.dtype) == str(w.dtype)
                close(g, w, 1e-5)


@needs_jax
def test_jaxprs_match_jax():
    x = np.eye(3, dtype=np.float32)
    for f in (
        lambda m, x: m.lax.linalg.cholesky(x),
        lambda m, x: m.lax.linalg.lu(x),
        lambda m, x: m.lax.linalg.qr(x),
        lambda m, x: m.lax.linalg.eigh(x),
        lambda m, x: m.lax.linalg.svd(x),
        lambda m, x: m.lax.linalg.triangular_solve(x, x, left_side=True),
    ):
        ours = webjax.make_jaxpr(lambda x, f=f: f(webjax, x))(jnp.asarray(x))
        theirs = rjax.make_jaxpr(lambda x, f=f: f(rjax, x))(rjnp.asarray(x))
        ours_p = [e.primitive.name for e in ours.jaxpr.eqns]
        theirs_p = [e.primitive.name for e in theirs.jaxpr.eqns]
        linalg_names = {"cholesky", "lu", "qr", "eigh", "svd", "triangular_solve"}
        assert [p for p in ours_p if p in linalg_names] == [
            p for p in theirs_p if p in linalg_names
        ]
        for e_ours, e_theirs in zip(
            [e for e in ours.jaxpr.eqns if e.primitive.name in linalg_names],
            [e for e in theirs.jaxpr.eqns if e.primitive.name in linalg_names],
            strict=True,
        ):
            assert set(e_ours.params) == set(e_theirs.params)
            assert [v.aval.shape for v in e_ours.outvars] == [
                v.aval.shape for v in e_theirs.outvars
            ]


# ============================================================================================
# derivatives, vmap, jit
# ============================================================================================
_A = rand(4, 4) + 2 * np.eye(4, dtype=np.float32)
_S = spd(4, 4)
_Y = sym(4, 4)
_T = rand(5, 3)
_W = rand(3, 5)
_B = rand(4, 2)
_TRI = np.tril(rand(4, 4)) + 4 * np.eye(4, dtype=np.float32)
GRADS = [
    ("cholesky", lambda a: jnp.linalg.cholesky(a), (_S,)),
    ("solve", lambda a, b: jnp.linalg.solve(a, b), (_A, _B)),
    ("inv", lambda a: jnp.linalg.inv(a), (_A,)),
    ("det", lambda a: jnp.linalg.det(a), (_A,)),
    ("det3", lambda a: jnp.linalg.det(a), (_A[:3, :3],)),
    ("slogdet", lambda a: jnp.linalg.slogdet(a)[1], (_A,)),
    ("eigvalsh", lambda a: jnp.linalg.eigvalsh(a), (_Y,)),
    # eigenvectors up to sign: projectors onto eigenspaces are gauge invariant
    ("eigh_vectors", lambda a: (lambda v: v[:, :2] @ v[:, :2].T)(jnp.linalg.eigh(a)[1]), (_Y,)),
    ("svdvals_tall", lambda a: jnp.linalg.svd(a, compute_uv=False), (_T,)),
    ("svdvals_wide", lambda a: jnp.linalg.svd(a, compute_uv=False), (_W,)),
    ("svd_u", lambda a: (lambda u: u[:, :1] @ u[:, :1].T)(jnp.linalg.svd(a, False)[0]), (_T,)),
    ("svd_v", lambda a: (lambda vh: vh[:1].T @ vh[:1])(jnp.linalg.svd(a, False)[2]), (_W,)),
    ("qr", lambda a: tuple(jnp.linalg.qr(a)), (_T,)),
    ("qr_square", lambda a: tuple(jnp.linalg.qr(a)), (_A,)),
    ("lu", lambda a: lax.linalg.lu(a)[0], (_A,)),
    ("lu_tall", lambda a: lax.linalg.lu(a)[0], (_T,)),
    ("lu_wide", lambda a: lax.linalg.lu(a)[0], (_W,)),
    ("triangular_solve", lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True,
                                                                  lower=True), (_TRI, _B)),
    ("triangular_solve_right", lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=False, lower=True, transpose_a=True, unit_diagonal=True), (_TRI, _B.T)),
    ("pinv", lambda a: jnp.linalg.pinv(a), (_T,)),
    ("norm2", lambda a: jnp.linalg.norm(a, 2), (_T,)),
    ("expm", lambda a: wsl.expm(a), (_A * 0.3,)),
    # a symmetric function of a: the Cholesky solve reads one triangle
    ("solve_pos", lambda a, b: wsl.solve((a + a.T) / 2, b, assume_a="pos"), (_S, _B)),
    ("lu_solve", lambda a, b: wsl.lu_solve(wsl.lu_factor(a), b), (_A, _B)),
]  # fmt: skip


@pytest.mark.parametrize("name,fn,args", GRADS, ids=[g[0] for g in GRADS])
def test_grads(name, fn, args):
    with webjax.default_device("cpu"):
        check_grads(fn, args, order=1)


@pytest.mark.parametrize("name", ["cholesky", "eigh_vectors", "svd_u", "qr", "lu"])
def test_grads_second_order(name):
    fn, args = next((f, a) for n, f, a in GRADS if n == name)
    with webjax.default_device("cpu"):
        check_grads(fn, args, order=2, modes=("rev",))


def test_grads_on_device(device):
    for name in ("solve", "eigvalsh", "svdvals_tall", "cholesky"):
        fn, args = next((f, a) for n, f, a in GRADS if n == name)
        check_grads(fn, args, order=1)


@needs_jax
@pytest.mark.parametrize(
    "name",
    [
        "cholesky",
        "inv",
        "det",
        "slogdet",
        "eigvalsh",
        "qr",
        "svdvals_tall",
        "lu",
        "triangular_solve",
        "pinv",
    ],
)
def test_grads_match_jax(name):
    fn, args = next((f, a) for n, f, a in GRADS if n == name)
    ours = webjax.grad(lambda *a: _sum_all(fn(*a)), argnums=tuple(range(len(args))))(
        *[jnp.asarray(a) for a in args]
    )
    rfn = {
        "cholesky": lambda a: rjnp.linalg.cholesky(a),
        "inv": lambda a: rjnp.linalg.inv(a),
        "det": lambda a: rjnp.linalg.det(a),
        "slogdet": lambda a: rjnp.linalg.slogdet(a)[1],
        "eigvalsh": lambda a: rjnp.linalg.eigvalsh(a),
        "qr": lambda a: tuple(rjnp.linalg.qr(a)),
        "svdvals_tall": lambda a: rjnp.linalg.svd(a, compute_uv=False),
        "lu": lambda a: rjax.lax.linalg.lu(a)[0],
        "triangular_solve": lambda a, b: rjax.lax.linalg.triangular_solve(
            a, b, left_side=True, lower=True
        ),
        "pinv": lambda a: rjnp.linalg.pinv(a),
    }[name]
    theirs = rjax.grad(lambda *a: _sum_all(rfn(*a), rjnp), argnums=tuple(range(len(args))))(
        *[rjnp.asarray(a) for a in args]
    )
    for g, w in zip(ours, theirs, strict=True):
        close(g, w, 1e-4)


def _sum_all(out, m=jnp):
    outs = out if isinstance(out, tuple) else (out,)
    total = 0.0
    for k, o in enumerate(outs):
        total = total + m.sum(o * m.sin(m.arange(o.size, dtype=o.dtype).reshape(o.shape) + k))
    return total


VMAPS = [
    ("cholesky", lambda a: jnp.linalg.cholesky(a), spd(3, 3, 3)),
    ("eigh", lambda a: jnp.linalg.eigh(a)[0], sym(3, 4, 4)),
    ("svd", lambda a: jnp.linalg.svd(a, compute_uv=False), rand(3, 4, 2)),
    ("qr", lambda a: jnp.linalg.qr(a)[1], rand(3, 4, 3)),
    ("lu", lambda a: lax.linalg.lu(a)[0], rand(3, 3, 3)),
    ("det", lambda a: jnp.linalg.det(a), rand(3, 4, 4)),
    ("inv", lambda a: jnp.linalg.inv(a), rand(3, 3, 3) + 3 * np.eye(3, dtype=np.float32)),
]


@pytest.mark.parametrize("name,fn,x", VMAPS, ids=[v[0] for v in VMAPS])
def test_vmap_matches_loop(device, name, fn, x):
    got = webjax.vmap(fn)(jnp.asarray(x))
    want = np.stack([npf(fn(jnp.asarray(xi))) for xi in x])
    close(got, want, 1e-5)
    # the batch axis elsewhere
    got1 = webjax.vmap(fn, in_axes=1, out_axes=0)(jnp.asarray(np.moveaxis(x, 0, 1)))
    close(got1, want, 1e-5)


def test_vmap_solves_with_mixed_batching(device):
    a = rand(4, 4) + 4 * np.eye(4, dtype=np.float32)
    bs = rand(3, 4, 2)
    got = webjax.vmap(jnp.linalg.solve, in_axes=(None, 0))(jnp.asarray(a), jnp.asarray(bs))
    close(got, np.linalg.solve(a, bs), 1e-5)
    tri = np.tril(a)
    got = webjax.vmap(
        lambda b: lax.linalg.triangular_solve(jnp.asarray(tri), b, left_side=True, lower=True)
    )(jnp.asarray(bs))
    close(got, np.linalg.solve(tri, bs), 1e-5)
    trib = np.stack([tri, tri * 2])
    got = webjax.vmap(
        lambda t: lax.linalg.triangular_solve(t, jnp.asarray(bs[0]), left_side=True, lower=True)
    )(jnp.asarray(trib))
    close(got, np.linalg.solve(trib, bs[0]), 1e-5)
    grads = webjax.vmap(webjax.grad(lambda m: jnp.linalg.slogdet(m)[1]))(
        jnp.asarray(bs[:, :2, :2] + 3)
    )
    close(grads, np.stack([np.linalg.inv(m + 3).T for m in bs[:, :2, :2]]), 1e-4)


def test_jit_matches_eager(device):
    a = rand(5, 5) + 3 * np.eye(5, dtype=np.float32)
    y = sym(5, 5)

    def f(a, y):
        w, v = jnp.linalg.eigh(y)
        u, s, _ = jnp.linalg.svd(a)
        _, r = jnp.linalg.qr(a)
        lu, piv, perm = lax.linalg.lu(a)
        return (
            w,
            jnp.abs(v),
            s,
            jnp.abs(u),
            r,
            lu,
            piv,
            perm,
            jnp.linalg.inv(a),
            jnp.linalg.det(a),
            jnp.linalg.cholesky(a @ a.T),
            jnp.linalg.solve(a, y),
        )

    eager = f(jnp.asarray(a), jnp.asarray(y))
    jitted = webjax.jit(f)(jnp.asarray(a), jnp.asarray(y))
    for e, j in zip(eager, jitted, strict=True):
        assert e.dtype == j.dtype and e.shape == j.shape
        close(j, e, 1e-5)
    # and grad through jit stays compiled
    g = webjax.jit(webjax.grad(lambda a: jnp.linalg.slogdet(a)[1]))(jnp.asarray(a))
    close(g, np.linalg.inv(a).T, 1e-4)


def test_sort_under_jit(device):
    """Regression: sorts inside compiled programs (the eigh/svd composites sort)."""
    x = jnp.asarray(np.array([[3.0, 1.0, 2.0], [0.5, 0.2, 0.1]], np.float32))
    close(webjax.jit(jnp.sort)(x), np.sort(np.asarray(x), axis=-1), 0)
    np.testing.assert_array_equal(np.asarray(webjax.jit(jnp.argsort)(x)), [[1, 2, 0], [2, 1, 0]])


# ============================================================================================
# float64
# ============================================================================================
@pytest.fixture
def x64():
    webjax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        webjax.config.update("jax_enable_x64", False)


def test_float64(device, x64):
    if not has_float64(device):
        with pytest.raises(TypeError, match="float64"):
            np.asarray(jnp.linalg.cholesky(jnp.asarray(np.eye(2))))
        return
    n = 6
    a = R.randn(n, n)
    s = a @ a.T + n * np.eye(n)
    y = a + a.T
    tol = 1e-12
    x = jnp.asarray(a)
    assert x.dtype == jnp.float64
    close(jnp.linalg.cholesky(jnp.asarray(s)), np.linalg.cholesky(s), tol)
    close(jnp.linalg.solve(x, jnp.asarray(y)), np.linalg.solve(a, y), tol)
    close(jnp.linalg.inv(x), np.linalg.inv(a), tol)
    close(jnp.linalg.det(x), np.linalg.det(a), tol)
    w, v = jnp.linalg.eigh(jnp.asarray(y))
    assert w.dtype == jnp.float64
    close(w, np.linalg.eigvalsh(y), tol)
    orthonormal_columns(v, tol)
    u, sv, vh = jnp.linalg.svd(x)
    close(sv, np.linalg.svd(a, compute_uv=False), tol)
    close(npf(u) * npf(sv) @ npf(vh), a, tol)
    q, r = jnp.linalg.qr(x)
    close(q, np.linalg.qr(a)[0], tol)
    close(wsl.expm(jnp.asarray(a * 0.3)), _expm_series(a * 0.3), 1e-12)
    lu, piv, perm = lax.linalg.lu(x)
    assert lu.dtype == jnp.float64 and piv.dtype == jnp.int32
    _lu_check(a, lu, piv, perm)
    close(r, np.linalg.qr(a)[1], tol)
    # a complex Hermitian matrix under jit: the Jacobi rounds run in a loop past 64 rounds,
    # whose int64 counter (x64) met int32 constants (found by the fuzzer)
    h = (R.randn(2, 9, 9) + 1j * R.randn(2, 9, 9)).astype(np.complex128)
    h = h + np.conj(np.swapaxes(h, -1, -2))
    close(webjax.jit(jnp.linalg.eigvalsh)(jnp.asarray(h)), np.linalg.eigvalsh(h), 1e-11)


# ============================================================================================
# errors
# ============================================================================================
def _raises_like_jax(exc, fn_ours, fn_jax=None):
    with pytest.raises(exc):
        fn_ours()
    if rjax is not None and fn_jax is not None:
        with pytest.raises(exc):
            fn_jax()


@pytest.mark.parametrize("name", ["cholesky", "lu", "qr", "eigh", "svd"])
def test_integer_inputs_rejected_by_lax(name):
    xi = np.eye(3, dtype=np.int32)
    kw = {"symmetrize_input": False} if name in ("cholesky", "eigh") else {}
    with pytest.raises(TypeError, match=f"{name} does not accept dtype int32"):
        getattr(lax.linalg, name)(jnp.asarray(xi), **kw)
    if rjax is not None:
        with pytest.raises(TypeError, match=f"{name} does not accept dtype int32"):
            getattr(rjax.lax.linalg, name)(rjnp.asarray(xi), **kw)


def test_bad_inputs():
    m34 = np.ones((3, 4), np.float32)
    v3 = np.ones(3, np.float32)
    J = rjnp
    cases = [
        (ValueError, lambda m: m.linalg.inv(m.asarray(m34))),
        (ValueError, lambda m: m.linalg.det(m.asarray(m34))),
        (ValueError, lambda m: m.linalg.slogdet(m.asarray(m34))),
        (ValueError, lambda m: m.linalg.inv(m.asarray(v3))),
        (TypeError, lambda m: m.linalg.cholesky(m.asarray(m34))),
        (TypeError, lambda m: m.linalg.eigh(m.asarray(m34))),
        (TypeError, lambda m: m.linalg.svd(m.asarray(v3))),
        (TypeError, lambda m: m.linalg.qr(m.asarray(v3))),
        (ValueError, lambda m: m.linalg.solve(m.ones((2, 3, 3)), m.ones((2, 3)))),
        (ValueError, lambda m: m.linalg.eigh(m.eye(3), UPLO="X")),
        (ValueError, lambda m: m.linalg.qr(m.eye(3), mode="bad")),
        (ValueError, lambda m: m.linalg.norm(m.ones((3, 2)), ord=3)),
        (ValueError, lambda m: m.linalg.norm(m.ones((3,)), ord="fro")),
        (ValueError, lambda m: m.linalg.norm(m.ones((3, 2, 2)), ord=2)),
        (ValueError, lambda m: m.linalg.cross(m.ones((3,)), m.ones((4,)))),
        (ValueError, lambda m: m.linalg.outer(m.ones((3, 2)), m.ones(3))),
        (TypeError, lambda m: m.linalg.matrix_power(m.ones((3, 4)), 2)),
        (TypeError, lambda m: m.linalg.matrix_power(m.eye(3), 1.5)),
        (TypeError, lambda m: m.linalg.lstsq(m.ones((2, 3, 3)), m.ones((2, 3)))),
        (ValueError, lambda m: m.linalg.lstsq(m.ones((3, 2)), m.ones((4,)))),
        (ValueError, lambda m: m.linalg.slogdet(m.eye(3), method="x")),
        (ValueError, lambda m: m.linalg.tensorinv(m.ones((2, 3)), ind=1)),
    ]
    for exc, fn in cases:
        with pytest.raises(exc):
            fn(jnp)
        if J is not None:
            with pytest.raises(exc):
                fn(J)


def test_bad_lax_inputs():
    L = lax.linalg
    for m, lib in ((jnp, L), (rjnp, rjax.lax.linalg if rjax else None)):
        if lib is None:
            continue
        with pytest.raises(ValueError, match="square"):
            lib.cholesky(m.ones((3, 4)), symmetrize_input=False)
        with pytest.raises(TypeError, match="rank at least 2"):
            lib.lu(m.ones(3))
        with pytest.raises(ValueError, match="square"):
            lib.triangular_solve(m.ones((3, 4)), m.ones((3, 3)))
        with pytest.raises(ValueError, match="Incompatible shapes"):
            lib.triangular_solve(m.ones((3, 3)), m.ones((4, 3)), left_side=True)
        with pytest.raises(TypeError, match="same number of batch dimensions"):
            lib.triangular_solve(m.ones((3, 3)), m.ones((2, 3, 3)))
        with pytest.raises(TypeError, match="same dtypes"):
            lib.triangular_solve(m.ones((3, 3)), m.ones((3, 3), dtype=m.float16))
        with pytest.raises(ValueError, match=r"\[\.\.\., n, n\]"):
            lib.eigh(m.ones((3, 4)), symmetrize_input=False)


def test_unsupported():
    with pytest.raises(NotImplementedError, match="float16"):
        jnp.linalg.inv(jnp.eye(3, dtype=jnp.float16))
    with pytest.raises(NotImplementedError, match="raw"):
        jnp.linalg.qr(jnp.eye(3), mode="raw")
    with pytest.raises(NotImplementedError, match="b=None"):
        wsl.eigh(jnp.eye(3), jnp.eye(3))
    with pytest.raises(ValueError, match="assume_a"):
        wsl.solve(jnp.eye(3), jnp.ones(3), assume_a="foo")
    with pytest.raises(NotImplementedError, match="full matrices"):
        webjax.jvp(lambda a: jnp.linalg.svd(a)[0], (jnp.eye(3),), (jnp.eye(3),))


# ============================================================================================
# modules
# ============================================================================================
def test_public_modules():
    import webjax.lax.linalg as ll
    import webjax.numpy.linalg as nl
    import webjax.scipy.linalg as sl

    assert webjax.numpy.linalg is nl and webjax.scipy.linalg is sl and webjax.lax.linalg is ll
    for name in (
        "cholesky",
        "qr",
        "eigh",
        "eigvalsh",
        "svd",
        "solve",
        "inv",
        "det",
        "slogdet",
        "norm",
        "pinv",
        "matrix_rank",
        "matrix_power",
        "lstsq",
        "multi_dot",
        "cross",
        "outer",
        "trace",
        "tensorsolve",
        "tensorinv",
        "cond",
        "svdvals",
    ):
        assert callable(getattr(nl, name)), name
    for name in (
        "solve_triangular",
        "cholesky",
        "cho_factor",
        "cho_solve",
        "lu_factor",
        "lu_solve",
        "lu",
        "qr",
        "eigh",
        "svd",
        "inv",
        "det",
        "solve",
        "expm",
    ):
        assert callable(getattr(sl, name)), name
    for name in (
        "cholesky",
        "triangular_solve",
        "lu",
        "qr",
        "eigh",
        "svd",
        "lu_pivots_to_permutation",
    ):
        assert callable(getattr(ll, name)), name


def test_install_as_jax_covers_linalg():
    code = (
        "import sys, webjax\n"
        "webjax.install_as_jax()\n"
        "import jax, jax.numpy as jnp, jax.numpy.linalg, jax.scipy.linalg, jax.lax.linalg\n"
        "from jax.scipy.linalg import cho_solve\n"
        "assert jax.numpy.linalg is webjax.numpy.linalg\n"
        "assert sys.modules['jax.scipy.linalg'] is webjax.scipy.linalg\n"
        "assert jax.lax.linalg is webjax.lax.linalg\n"
        "print(float(jnp.linalg.det(jnp.eye(3) * 2)))\n"
    )
    pkg = Path(__file__).resolve().parents[1] / "pkg"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(pkg), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("8.0")
