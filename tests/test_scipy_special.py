"""`jax.scipy.special` against real JAX: unary and binary functions with edge values,
exponential integrals, JAX's derivative conventions, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.special as ws
from check_grads import check_grads

jax = pytest.importorskip("jax")
js = jax.scipy.special
R = np.random.RandomState(0)


def close(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-7) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


X = np.concatenate(
    [R.uniform(-5, 5, 40), [0, -0.0, 1, 2, -1, -2, 0.5, np.inf, -np.inf, np.nan, 30, 170]]
).astype(np.float32)
A = R.uniform(0.1, 30, 40).astype(np.float32)
B = R.uniform(0.1, 30, 40).astype(np.float32)


@pytest.mark.parametrize(
    "name,rtol",
    [
        ("gammasgn", 0),
        ("gamma", 5e-5),
        ("loggamma", 5e-6),
        ("factorial", 5e-5),
        ("i0", 2e-6),
        ("i0e", 2e-6),
        ("i1", 2e-6),
        ("i1e", 2e-6),
        ("erfcx", 2e-6),
        ("expit", 2e-6),
        ("logit", 2e-6),
        ("entr", 2e-6),
    ],
)
def test_unary(device: Any, name: str, rtol: float) -> None:
    close(getattr(ws, name)(jnp.asarray(X)), getattr(js, name)(X), rtol, 1e-6)


@pytest.mark.parametrize(
    "name,rtol",
    [
        ("betaln", 5e-6),
        ("beta", 5e-5),
        ("poch", 5e-5),
        ("rel_entr", 2e-6),
        ("kl_div", 2e-6),
        ("xlogy", 2e-6),
        ("xlog1py", 2e-6),
        ("gammainc", 5e-5),
        ("gammaincc", 5e-5),
        ("zeta", 5e-6),
    ],
)
def test_binary(device: Any, name: str, rtol: float) -> None:
    a = A + 1.1 if name == "zeta" else A
    close(getattr(ws, name)(jnp.asarray(a), jnp.asarray(B)), getattr(js, name)(a, B), rtol, 1e-6)


def test_edge_values(device: Any) -> None:
    p = np.array([0.0, 0.0, 1.0, -1.0, 2.0, np.nan, 0.5], np.float32)
    q = np.array([0.0, 1.0, 0.0, 1.0, -1.0, 1.0, np.nan], np.float32)
    for name in ("rel_entr", "kl_div", "xlogy", "xlog1py"):
        close(getattr(ws, name)(jnp.asarray(p), jnp.asarray(q)), getattr(js, name)(p, q))
    big = R.uniform(1e3, 1e7, 20).astype(np.float32)
    close(ws.betaln(jnp.asarray(big), jnp.asarray(A[:20])), js.betaln(big, A[:20]), 1e-5)
    n = np.array([5.0, 10, 3, 0, 7, -1], np.float32)
    k = np.array([2.0, 3, 4, 0, 7, 1], np.float32)
    close(ws.comb(jnp.asarray(n), jnp.asarray(k)), js.comb(n, k), 5e-6)
    close(
        ws.comb(jnp.asarray(n), jnp.asarray(k), repetition=True),
        js.comb(n, k, repetition=True),
        5e-6,
    )
    m = np.array([0, 1, 2, 3, 1, 4], np.int32)
    xs = np.array([0.5, 1.5, 3.0, 7.0, -2.5, 10.0], np.float32)
    close(ws.polygamma(jnp.asarray(m), jnp.asarray(xs)), js.polygamma(m, xs), 5e-6)
    close(ws.multigammaln(jnp.asarray(A + 3), 3), js.multigammaln(A + 3, 3), 5e-6)
    mm = R.standard_normal((3, 4)).astype(np.float32)
    close(ws.softmax(jnp.asarray(mm)), js.softmax(mm))
    close(ws.log_softmax(jnp.asarray(mm), axis=1), js.log_softmax(mm, axis=1))
    close(ws.bernoulli(12), js.bernoulli(12), 1e-6, 1e-7)
    lm = np.array([0.0, 0.5] * 20, np.float32)
    close(ws.boxcox(jnp.asarray(A), jnp.asarray(lm)), js.boxcox(A, lm), 5e-6)
    close(ws.boxcox1p(jnp.asarray(A), jnp.asarray(lm)), js.boxcox1p(A, lm), 5e-6)
    xx = R.uniform(0, 1, 40).astype(np.float32)
    close(
        ws.betainc(jnp.asarray(A), jnp.asarray(B), jnp.asarray(xx)),
        js.betainc(A, B, xx),
        2e-4,
        2e-6,
    )


def test_exponential_integrals(device: Any) -> None:
    import scipy.special as ss

    n = np.array([0, 1, 2, 5, 1, 2, -1, 1, 1, 3, 10, 30, 4], np.int32)
    x = np.array(
        [0.5, 0.5, 2.0, 3.0, 0.0, -1.0, 1.0, 1.0001, 0.999, 20.0, 1.5, 0.7, 1e-3], np.float32
    )
    close(ws.expn(jnp.asarray(n), jnp.asarray(x)), js.expn(n, x), 5e-6, 1e-30)
    # E_n(0) = 1/(n - 1) for n > 1 (scipy); JAX 0.10 returns 1/n there
    np.testing.assert_allclose(
        np.asarray(ws.expn(jnp.array([2, 3, 5]), jnp.zeros(3))), ss.expn([2, 3, 5], 0.0), rtol=1e-6
    )
    x1 = np.concatenate([R.uniform(1e-4, 60, 40), [0.0, -1.0, 1.0, np.inf]]).astype(np.float32)
    close(ws.exp1(jnp.asarray(x1)), js.exp1(x1), 5e-6, 1e-30)
    xi = np.concatenate([R.uniform(-60, 85, 60), [0.0, 1e-4, -1e-4, 39.99, 40.01, 100.0]])
    xi = xi.astype(np.float32)
    close(ws.expi(jnp.asarray(xi)), js.expi(xi), 5e-6, 1e-30)
    for wf, jf, v in (
        (ws.expi, js.expi, 2.5),
        (ws.exp1, js.exp1, 0.7),
        (lambda t: ws.expn(3, t), lambda t: js.expn(3, t), 1.7),
    ):
        np.testing.assert_allclose(float(webjax.grad(wf)(v)), float(jax.grad(jf)(v)), rtol=1e-5)


def test_grads_match_jax() -> None:
    """JAX's derivative conventions: xlogy/xlog1py at x == 0, logit, entr, erfcx, poch."""
    pts = [
        (lambda x: ws.xlogy(x, 2.0), lambda x: js.xlogy(x, 2.0), 0.0),
        (lambda y: ws.xlogy(0.0, y), lambda y: js.xlogy(0.0, y), 2.0),
        (lambda x: ws.xlog1py(x, 1.5), lambda x: js.xlog1py(x, 1.5), 0.0),
        (ws.logit, js.logit, 0.3),
        (ws.entr, js.entr, 0.4),
        (ws.erfcx, js.erfcx, 1.3),
        (ws.erfcx, js.erfcx, 12.0),
        (lambda z: ws.poch(z, 2.5), lambda z: js.poch(z, 2.5), 1.5),
        (lambda m: ws.poch(1.5, m), lambda m: js.poch(1.5, m), 2.5),
        (lambda q: ws.zeta(3.0, q), lambda q: js.zeta(3.0, q), 1.5),
        (lambda x: ws.zeta(x, 2.0), lambda x: js.zeta(x, 2.0), 3.0),
        (lambda x: ws.gammainc(2.0, x), lambda x: js.gammainc(2.0, x), 1.5),
        (ws.i1e, js.i1e, 0.7),
    ]
    for wf, jf, x in pts:
        np.testing.assert_allclose(float(webjax.grad(wf)(x)), float(jax.grad(jf)(x)), rtol=2e-4)
    check_grads(lambda v: ws.betaln(v, v * 2), (A[:4],))
    check_grads(lambda v: ws.rel_entr(v, v + 1), (A[:4],), order=2)


def test_errors() -> None:
    with pytest.raises(ValueError, match="integer type"):
        ws.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="Riemann"):
        ws.zeta(2.0)
    with pytest.raises(NotImplementedError, match="exact"):
        ws.factorial(3, exact=True)
