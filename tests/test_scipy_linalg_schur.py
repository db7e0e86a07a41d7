"""jax.scipy.linalg's Schur-based functions (schur, rsf2csf, sqrtm, funm), hessenberg and
qr_multiply, and lax.linalg.schur / hessenberg / householder_product: against SciPy and real
JAX. Schur forms are not unique (the eigenvalues may sit in another order on the diagonal), so
they are checked by their defining properties; functions of matrices, the Hessenberg form and
the QR products are compared by value."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import webjax
import webjax.numpy as jnp
import webjax.scipy.linalg as wl
from webjax import lax as wlax

jax = pytest.importorskip("jax")
import jax.scipy.linalg as jl  # noqa: E402

RNG = np.random.default_rng(7)
SIZES = [1, 2, 3, 6, 9]


def _mat(n: int, cplx: bool = False, dt: type = np.float32) -> np.ndarray:
    a = RNG.standard_normal((n, n))
    if cplx:
        a = a + 1j * RNG.standard_normal((n, n))
        return a.astype(np.complex64 if dt is np.float32 else np.complex128)
    return a.astype(dt)


def _check_schur(a: np.ndarray, t: np.ndarray, z: np.ndarray, real: bool, tol: float) -> None:
    n = a.shape[-1]
    scale = 1 + np.abs(a).max()
    np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=tol * scale)
    np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=tol)
    if real:
        assert np.all(np.tril(t, -2) == 0)
        for i in range(n - 1):  # 2x2 blocks: standardized (equal diagonal, b * c < 0)
            if t[i + 1, i] != 0:
                assert t[i, i] == pytest.approx(t[i + 1, i + 1], abs=tol * scale)
                assert t[i, i + 1] * t[i + 1, i] < 0
                assert i + 2 >= n or t[i + 2, i + 1] == 0  # blocks do not overlap
    else:
        assert np.all(np.tril(t, -1) == 0)
    got = list(sl.eigvals(t.astype(np.complex128)))
    for w in sl.eigvals(a.astype(np.complex128)):  # the same multiset, matched greedily
        j = min(range(len(got)), key=lambda i: abs(got[i] - w))
        assert abs(got.pop(j) - w) <= tol * scale * n, (w, t)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_of_real_input(n: int, output: str) -> None:
    a = _mat(n)
    t, z = wl.schur(a, output=output)
    tj, zj = jl.schur(a, output=output)
    assert (t.dtype, z.dtype, t.shape) == (tj.dtype, zj.dtype, tj.shape)
    _check_schur(a, np.asarray(t), np.asarray(z), output == "real", 2e-5)


@pytest.mark.parametrize("n", [2, 5])
def test_schur_of_complex_and_float64_input(n: int) -> None:
    a = _mat(n, cplx=True)
    t, z = wl.schur(a)
    assert t.dtype == np.complex64
    _check_schur(a, np.asarray(t), np.asarray(z), False, 2e-5)
    with webjax.enable_x64(True):
        a64 = _mat(n, dt=np.float64)
        t, z = wl.schur(a64)
        assert t.dtype == np.float64
        _check_schur(a64, np.asarray(t), np.asarray(z), True, 1e-12)


def test_schur_blocks_of_a_rotation_and_jit_vmap() -> None:
    # eigenvalues +-i, +-2i and 3: three blocks, two of them 2x2
    q, _ = np.linalg.qr(RNG.standard_normal((5, 5)))
    d = np.zeros((5, 5))
    d[0, 1], d[1, 0], d[2, 3], d[3, 2], d[4, 4] = 1, -1, 2, -2, 3
    a = (q @ d @ q.T).astype(np.float32)
    t, z = wl.schur(a)
    _check_schur(a, np.asarray(t), np.asarray(z), True, 2e-5)
    assert np.count_nonzero(np.diag(np.asarray(t), -1)) == 2
    tj, _zj = webjax.jit(wl.schur)(a)
    np.testing.assert_array_equal(np.asarray(tj), np.asarray(t))
    batch = np.stack([a, _mat(5)])
    tb, zb = webjax.vmap(wl.schur)(batch)
    tb2, _zb2 = wl.schur(batch)
    np.testing.assert_array_equal(np.asarray(tb), np.asarray(tb2))
    for i in range(2):
        _check_schur(batch[i], np.asarray(tb[i]), np.asarray(zb[i]), True, 2e-5)


def test_lax_schur_signature() -> None:
    a = _mat(4)
    (t,) = wlax.linalg.schur(a, compute_schur_vectors=False)
    t2, _ = wlax.linalg.schur(a)
    np.testing.assert_array_equal(np.asarray(t), np.asarray(t2))
    with pytest.raises(NotImplementedError, match="sort feature"):
        wlax.linalg.schur(a, sort_eig_vals=True)


def test_schur_errors_as_jax() -> None:
    for bad, kw in ((np.ones((2, 3), np.float32), {}), (np.eye(3, dtype=np.int32), {})):
        with pytest.raises(Exception) as ours:
            wl.schur(bad, **kw)
        with pytest.raises(Exception) as theirs:
            jl.schur(bad, **kw)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="Expected 'output'"):
        wl.schur(_mat(2), output="x")
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        webjax.grad(lambda x: wl.schur(x)[0].sum())(_mat(3))


@pytest.mark.parametrize("n", SIZES)
def test_rsf2csf_matches_scipy(n: int) -> None:
    t, z = (np.asarray(v) for v in wl.schur(_mat(n)))
    tc, zc = (np.asarray(v) for v in wl.rsf2csf(t, z))
    ts, zs = sl.rsf2csf(t.astype(np.float64), z.astype(np.float64))
    tj, _zj = jl.rsf2csf(t, z)
    assert tc.dtype == tj.dtype == np.complex64
    np.testing.assert_allclose(tc, ts, atol=2e-5)
    np.testing.assert_allclose(zc, zs, atol=2e-5)
    np.testing.assert_allclose(tc, np.asarray(tj), atol=2e-5)
    assert np.all(np.tril(tc, -1) == 0)
    tjit, _ = webjax.jit(wl.rsf2csf)(t, z)
    np.testing.assert_allclose(np.asarray(tjit), tc, atol=1e-6)


def test_rsf2csf_batched_and_errors() -> None:
    pairs = [tuple(np.asarray(v) for v in wl.schur(_mat(4))) for _ in range(3)]
    t = np.stack([p[0] for p in pairs])
    z = np.stack([p[1] for p in pairs])
    tc, _ = wl.rsf2csf(t, z)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(tc[i]), sl.rsf2csf(t[i], z[i])[0], atol=2e-5)
    with pytest.raises(ValueError, match="Input 'T' must be square"):
        wl.rsf2csf(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="Input array shapes must match"):
        wl.rsf2csf(np.ones((2, 2)), np.ones((3, 3)))


def _spd_like(n: int) -> np.ndarray:
    """Eigenvalues off the negative real axis: the principal square root is unique."""
    b = RNG.standard_normal((n, n))
    return (b @ b.T / n + np.eye(n) + 0.3 * RNG.standard_normal((n, n))).astype(np.float32)


@pytest.mark.parametrize("n", [1, 2, 4, 7])
def test_sqrtm_matches_scipy_and_jax(n: int) -> None:
    a = _spd_like(n)
    s = wl.sqrtm(a)
    sj = jl.sqrtm(a)
    assert s.dtype == sj.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(s), sl.sqrtm(a.astype(np.float64)), atol=1e-4)
    np.testing.assert_allclose(np.asarray(s), np.asarray(sj), atol=1e-4)
    np.testing.assert_allclose(np.asarray(s @ s), a, atol=1e-4)
    c = _mat(3, cplx=True) + 3 * np.eye(3, dtype=np.complex64)
    np.testing.assert_allclose(np.asarray(wl.sqrtm(c)), sl.sqrtm(c), atol=1e-4)
    with pytest.raises(NotImplementedError, match="Blocked"):
        wl.sqrtm(a, blocksize=2)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        webjax.grad(lambda x: wl.sqrtm(x).real.sum())(a)  # as in JAX: schur has no rule


@pytest.mark.parametrize("n", [1, 3, 6])
def test_funm_matches_scipy_and_jax(n: int) -> None:
    a = _mat(n)
    f = wl.funm(a, jnp.exp)
    fj = jl.funm(a, jax.numpy.exp)
    assert f.dtype == fj.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(f), sl.expm(a.astype(np.float64)), atol=2e-4)
    np.testing.assert_allclose(np.asarray(f), np.asarray(fj), atol=2e-4)
    g, err = wl.funm(a, jnp.sin, disp=False)
    gs, _ = sl.funm(a.astype(np.float64), np.sin, disp=False)
    _, errj = jl.funm(a, jax.numpy.sin, disp=False)
    np.testing.assert_allclose(np.asarray(g), gs, atol=2e-4)
    assert err.dtype == errj.dtype
    assert 0 < float(err) <= 1
    with pytest.raises(ValueError, match="expected square array_like input"):
        wl.funm(np.ones((2, 3), np.float32), jnp.exp)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("cplx", [False, True])
def test_hessenberg_matches_jax(n: int, cplx: bool) -> None:
    a = _mat(n, cplx)
    h, q = wl.hessenberg(a, calc_q=True)
    hj, qj = jl.hessenberg(a, calc_q=True)
    assert (h.dtype, q.dtype) == (hj.dtype, qj.dtype)
    np.testing.assert_allclose(np.asarray(h), np.asarray(hj), atol=2e-5 * n)
    np.testing.assert_allclose(np.asarray(q), np.asarray(qj), atol=2e-5 * n)
    h, q = np.asarray(h), np.asarray(q)
    assert np.all(np.tril(h, -2) == 0)
    np.testing.assert_allclose(q @ h @ q.conj().T, a, atol=2e-5 * n)
    if not cplx and n > 2:  # (SciPy returns n <= 2 unreduced)
        np.testing.assert_allclose(h, sl.hessenberg(a), atol=2e-5 * n)
    np.testing.assert_array_equal(np.asarray(wl.hessenberg(a)), h)
    packed, taus = wlax.linalg.hessenberg(a)
    pj, tj = jax.lax.linalg.hessenberg(a)
    np.testing.assert_allclose(np.asarray(packed), np.asarray(pj), atol=2e-5 * n)
    np.testing.assert_allclose(np.asarray(taus), np.asarray(tj), atol=2e-5 * n)


def test_hessenberg_batched_empty_and_householder_product() -> None:
    batch = np.stack([_mat(4), _mat(4)])
    h, q = wl.hessenberg(batch, calc_q=True)
    hj, qj = jl.hessenberg(batch, calc_q=True)
    np.testing.assert_allclose(np.asarray(h), np.asarray(hj), atol=1e-4)
    np.testing.assert_allclose(np.asarray(q), np.asarray(qj), atol=1e-4)
    assert wl.hessenberg(np.ones((0, 0), np.float32)).shape == (0, 0)
    a = RNG.standard_normal((5, 3)).astype(np.float32)
    (raw, taus), _ = sl.qr(a, mode="raw")  # LAPACK's geqrf layout
    np.testing.assert_allclose(
        np.asarray(wlax.linalg.householder_product(raw.astype(np.float32), taus)),
        np.asarray(jax.lax.linalg.householder_product(raw.astype(np.float32), taus)),
        atol=1e-5,
    )
    np.testing.assert_allclose(
        np.asarray(wlax.linalg.householder_product(raw, taus)),
        sl.qr(a, mode="economic")[0],
        atol=1e-5,
    )


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("mode", ["right", "left"])
@pytest.mark.parametrize("conjugate", [False, True])
def test_qr_multiply_matches_jax(shape: tuple[int, int], mode: str, conjugate: bool) -> None:
    m, n = shape
    k = min(m, n)
    a = RNG.standard_normal(shape).astype(np.float32)  # (webjax's qr is real-only)
    for c in (
        RNG.standard_normal((2, m) if mode == "right" else (k, 2)).astype(np.float32),
        RNG.standard_normal(m if mode == "right" else k).astype(np.float32),
    ):
        got = wl.qr_multiply(a, c, mode=mode, conjugate=conjugate)
        want = jl.qr_multiply(a, c, mode=mode, conjugate=conjugate)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), atol=2e-5)
    cr = RNG.standard_normal((2, m)).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(wl.qr_multiply(a, cr)[0]), sl.qr_multiply(a, cr)[0], atol=2e-5
    )
    with pytest.raises(ValueError, match="not compatible"):
        wl.qr_multiply(a, np.ones((2, m + 1), np.float32), mode="right")
    with pytest.raises(ValueError, match="mode must be"):
        wl.qr_multiply(a, np.ones((2, m), np.float32), mode="up")


def test_on_every_device(device: object) -> None:
    a = _spd_like(4)
    t, z = wl.schur(a)
    assert t.devices() == {device}
    _check_schur(a, np.asarray(t), np.asarray(z), True, 2e-5)
    np.testing.assert_allclose(np.asarray(wl.sqrtm(a)), sl.sqrtm(a.astype(np.float64)), atol=1e-4)
    h, q = wl.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(np.asarray(q @ h @ q.T), a, atol=1e-4)
