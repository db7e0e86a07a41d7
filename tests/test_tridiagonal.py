"""`lax.linalg.tridiagonal_solve` against real JAX (LAPACK gtsv on CPU) on every backend.

Values (diagonally dominant systems, systems that need row interchanges, zero leading pivots,
batches, several right-hand sides, complex64, sizes 0-2, singular systems -> NaN), derivatives
(grad in all four operands, jvp, hessian, jit(grad)), vmap with any in_axes, jit equals eager,
float64, and JAX's argument errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as wjnp
from devices import has_float64
from webjax.lax.linalg import tridiagonal_solve as wts

rjax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed")
rjnp = rjax.numpy
from jax.lax.linalg import tridiagonal_solve as rts  # noqa: E402

R = np.random.RandomState(0)


def rand(*shape: int, dtype: Any = np.float32, rs: Any = R) -> np.ndarray:
    x = rs.randn(*shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rs.randn(*shape)
    return x.astype(dtype)


def close(got: Any, want: Any, tol: float = 2e-6) -> None:
    g = [np.asarray(x) for x in webjax.tree_util.tree_leaves(got)]
    w = [np.asarray(x) for x in rjax.tree_util.tree_leaves(want)]
    assert len(g) == len(w)
    for a, b in zip(g, w, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        scale = max(float(np.max(np.abs(b), initial=0.0)), 1.0) if np.isfinite(b).all() else 1.0
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale)


def both(*args: np.ndarray) -> tuple[Any, Any]:
    return wts(*[wjnp.asarray(a) for a in args]), rts(*[rjnp.asarray(a) for a in args])


def systems(dtype: Any = np.float32) -> dict[str, tuple[np.ndarray, ...]]:
    """The same systems on every call (a fixed seed)."""
    rs = np.random.RandomState(1)
    r = lambda *shape: rand(*shape, dtype=dtype, rs=rs)
    m = 7
    zero_first = r(m)
    zero_first[0] = 0
    return {
        "dominant": (r(m), r(m) + 6, r(m), r(m, 3)),
        "pivoting": (r(m), r(m), r(m), r(m, 2)),
        "zero_leading_pivot": (r(m), zero_first, r(m), r(m, 1)),
        "batched": (r(2, 3, 5), r(2, 3, 5), r(2, 3, 5), r(2, 3, 5, 4)),
        "m1": (r(1), r(1), r(1), r(1, 2)),
        "m2": (r(2), r(2), r(2), r(2, 2)),
        "m0": (r(0), r(0), r(0), r(0, 3)),
        "no_rhs": (r(4), r(4) + 5, r(4), r(4, 0)),
    }


@pytest.mark.parametrize("name", sorted(systems()))
def test_values_like_jax(device: Any, name: str) -> None:
    got, want = both(*systems()[name])
    close(got, want, 5e-6)


def test_ignored_corners(device: Any) -> None:
    """dl[0] and du[-1] lie outside the matrix: they change nothing (as in JAX)."""
    dl, d, du, b = systems()["pivoting"]
    dl2, du2 = dl.copy(), du.copy()
    dl2[0], du2[-1] = 100.0, -50.0
    np.testing.assert_array_equal(np.asarray(wts(dl, d, du, b)), np.asarray(wts(dl2, d, du2, b)))
    close(wts(dl2, d, du2, b), rts(dl2, d, du2, b), 5e-6)


def test_complex(device: Any) -> None:
    for name in ("dominant", "pivoting", "batched"):
        got, want = both(*systems(np.complex64)[name])
        close(got, want, 5e-6)


def test_singular_is_nan(device: Any) -> None:
    dl = np.zeros((2, 3), np.float32)
    d = np.array([[1.0, 0.0, 1.0], [2.0, 3.0, 4.0]], np.float32)
    b = np.ones((2, 3, 2), np.float32)
    got, want = both(dl, d, dl, b)
    assert np.isnan(np.asarray(got[0])).all() and np.isnan(np.asarray(want[0])).all()
    close(got[1], want[1])  # the other batch entry is solved


def test_residual_larger_system(device: Any) -> None:
    m = 40
    rs = np.random.RandomState(3)
    dl, d, du, b = (rand(*s, rs=rs) for s in ((m,), (m,), (m,), (m, 2)))
    x = np.asarray(wts(dl, d, du, b), np.float64)
    a = np.diag(d.astype(np.float64)) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    np.testing.assert_allclose(a @ x, b, atol=2e-4 * max(1.0, np.abs(x).max()))
    close(wts(dl, d, du, b), rts(dl, d, du, b), 2e-5)


def derivatives(ns: Any, ts: Any) -> Any:
    jax, jnp = ns, ns.numpy
    dl, d, du, b = (jnp.asarray(a) for a in systems()["batched"])
    w = jnp.asarray(rand(2, 3, 5, 4, rs=np.random.RandomState(2)))
    loss = lambda *a: jnp.sum(ts(*a) * w)
    single = lambda d_: ts(dl[0, 0], d_, du[0, 0], b[0, 0])
    return (
        jax.grad(loss, argnums=(0, 1, 2, 3))(dl, d, du, b),
        jax.jvp(lambda d_, b_: ts(dl, d_, du, b_), (d, b), (jnp.ones_like(d), w))[1],
        jax.jit(jax.grad(loss, argnums=(1, 3)))(dl, d, du, b),
        jax.hessian(lambda d_: jnp.sum(single(d_) ** 2))(d[0, 0]),
        jax.jacfwd(single)(d[0, 0]),
        jax.jacrev(single)(d[0, 0]),
    )


def test_derivatives_like_jax(device: Any) -> None:
    close(derivatives(webjax, wts), derivatives(rjax, rts), 2e-5)


def test_vmap_and_jit(device: Any) -> None:
    def prog(ns: Any, ts: Any) -> Any:
        jax, jnp = ns, ns.numpy
        dl, d, du, b = (jnp.asarray(a) for a in systems()["batched"])
        return (
            jax.vmap(ts)(dl, d, du, b),
            jax.vmap(ts, (None, None, None, 2), 2)(
                dl[0, 0], d[0, 0], du[0, 0], b[0].transpose(1, 2, 0)
            ),
            jax.vmap(ts, (1, 1, 1, 1), 0)(dl, d, du, b),
            jax.vmap(ts, (0, None, None, 0))(dl[0], d[0, 0], du[0, 0], b[0]),
            jax.jit(ts)(dl, d, du, b),
        )

    close(prog(webjax, wts), prog(rjax, rts), 5e-6)
    args = [wjnp.asarray(a) for a in systems()["pivoting"]]
    np.testing.assert_array_equal(np.asarray(webjax.jit(wts)(*args)), np.asarray(wts(*args)))


@pytest.mark.parametrize("platform", ["cpu", "wasm"])
def test_float64(platform: str) -> None:
    from webjax._src.runtime import backend as rt

    if rt.unavailable_reason(platform) is not None:
        pytest.skip(f"backend {platform} unavailable")
    dev = webjax.devices(platform)[0]
    with rjax.enable_x64(True), webjax.enable_x64(True), webjax.default_device(dev):
        for name in ("pivoting", "batched"):
            args = [a.astype(np.float64) for a in systems()[name]]
            got, want = both(*args)
            close(got, want, 1e-13)


def test_errors() -> None:
    z = np.zeros
    cases = [
        (z(4, np.int32), z(4), z(4), z((4, 1))),
        (z(4), z(4), z(3), z(4)),
        (z(4), z(4), z(3), z((4, 1))),
        (z(4), z(4), z(4), z((3, 1))),
        (z(4), z(4), z(4), z((2, 4, 1))),
        (z(4, np.float16), z(4), z(4), z((4, 1))),
        (z(4), z(4), z(4), z((4, 1), np.complex64)),
        ([0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [[1.0], [1.0]]),
    ]
    for args in cases:
        w = [wjnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        r = [rjnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        with pytest.raises(TypeError) as want:
            rts(*r)
        with pytest.raises(TypeError) as got:
            wts(*w)
        assert str(got.value) == str(want.value)
    f16 = [wjnp.zeros(4, wjnp.float16)] * 3 + [wjnp.zeros((4, 1), wjnp.float16)]
    with pytest.raises(NotImplementedError, match="Unsupported dtype float16"):
        wts(*f16)
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        wts(*systems()["dominant"], perturb_singular=True)


# ---- tridiagonal (sytrd / hetrd) ---------------------------------------------------------------

wtri = webjax.lax.linalg.tridiagonal
rtri = rjax.lax.linalg.tridiagonal


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_like_jax(device: Any, dtype: Any, lower: bool) -> None:
    rs = np.random.RandomState(4)
    for shape in ((1, 1), (2, 2), (5, 5), (2, 3, 4, 4)):
        a = rand(*shape, dtype=dtype, rs=rs)  # not symmetric: only one triangle is read
        got = wtri(wjnp.asarray(a), lower=lower)
        want = rtri(rjnp.asarray(a), lower=lower)
        close(got, want, 5e-6)


def test_tridiagonal_reconstructs(device: Any) -> None:
    """Q^H A Q = T with Q = H(0) ... H(n-2) built from the returned reflectors."""
    n = 6
    a = rand(n, n)
    a = (a + a.T).astype(np.float32)
    out, d, e, taus = (np.asarray(x, np.float64) for x in wtri(wjnp.asarray(a)))
    q = np.eye(n)
    for i in range(n - 1):
        v = np.zeros(n)
        v[i + 1] = 1.0
        v[i + 2 :] = out[i + 2 :, i]
        q = q @ (np.eye(n) - taus[i] * np.outer(v, v))
    t = np.diag(d) + np.diag(e, -1) + np.diag(e, 1)
    np.testing.assert_allclose(q.T @ a @ q, t, atol=2e-5 * np.abs(a).max())


def test_tridiagonal_vmap_jit_float64_errors(device: Any) -> None:
    a = rand(3, 4, 4)
    close(webjax.vmap(wtri)(wjnp.asarray(a)), rjax.vmap(rtri)(rjnp.asarray(a)), 5e-6)
    close(
        webjax.jit(wtri, static_argnames="lower")(wjnp.asarray(a), lower=False),
        rtri(rjnp.asarray(a), lower=False),
        5e-6,
    )
    if has_float64(device):
        with rjax.enable_x64(True), webjax.enable_x64(True):
            a64 = a.astype(np.float64)
            close(wtri(wjnp.asarray(a64)), rtri(rjnp.asarray(a64)), 1e-13)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'tridiagonal'"):
        webjax.grad(lambda x: wtri(x)[1].sum())(wjnp.asarray(a[0]))
    for bad, err in (
        (np.ones((2, 3), np.float32), ValueError),
        (np.ones(3, np.float32), TypeError),
        (np.ones((3, 3), np.int32), TypeError),
    ):
        with pytest.raises(err) as want:
            rtri(rjnp.asarray(bad))
        with pytest.raises(err) as got:
            wtri(wjnp.asarray(bad))
        assert str(got.value) == str(want.value)
