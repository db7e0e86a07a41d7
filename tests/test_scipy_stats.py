"""`jax.scipy.stats` against real JAX: continuous and discrete distributions (every pdf, cdf,
sf and ppf they have), multivariate_normal, jit and grad, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.stats as wst

jax = pytest.importorskip("jax")
jst = jax.scipy.stats
R = np.random.RandomState(0)


def close(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-7) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


CONTINUOUS = [
    ("norm", (0.5, 2.0)),
    ("uniform", (-1.0, 4.0)),
    ("laplace", (0.5, 2.0)),
    ("logistic", (0.5, 2.0)),
    ("cauchy", (0.5, 2.0)),
    ("expon", (0.5, 2.0)),
    ("t", (3.0, 0.5, 2.0)),
    ("gamma", (2.5, 0.0, 1.5)),
    ("chi2", (3.0,)),
    ("beta", (2.0, 3.0, -3.0, 12.0)),
    ("pareto", (2.0,)),
    ("gumbel_r", (0.5, 2.0)),
    ("gumbel_l", (0.5, 2.0)),
    ("vonmises", (2.0,)),
    ("wrapcauchy", (0.4,)),
    ("gennorm", (1.5,)),
    ("gennorm", (0.7,)),
]
QS = np.array([0.0, 0.01, 0.3, 0.5, 0.9, 1.0, 1.5, -0.1, np.nan], np.float32)


@pytest.mark.parametrize("dist,args", CONTINUOUS)
def test_continuous(device: Any, dist: str, args: tuple) -> None:
    x = np.concatenate([R.uniform(-3, 8, 30), [0.5, 1.0, np.inf, -np.inf]]).astype(np.float32)
    wmod, jmod = getattr(wst, dist), getattr(jst, dist)
    for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        if hasattr(jmod, fn):
            close(getattr(wmod, fn)(jnp.asarray(x), *args), getattr(jmod, fn)(x, *args), 2e-5, 1e-6)
    for fn in ("ppf", "isf"):
        if hasattr(jmod, fn):
            close(
                getattr(wmod, fn)(jnp.asarray(QS), *args), getattr(jmod, fn)(QS, *args), 2e-5, 1e-6
            )


@pytest.mark.parametrize(
    "dist,args",
    [
        ("poisson", (3.0,)),
        ("bernoulli", (0.3,)),
        ("geom", (0.3,)),
        ("binom", (10.0, 0.4)),
        ("nbinom", (5.0, 0.4)),
        ("nbinom", (2.5, 0.7, 1.0)),
        ("betabinom", (10.0, 2.0, 3.0)),
        ("betabinom", (0.0, 2.0, 3.0)),
    ],
)
def test_discrete(device: Any, dist: str, args: tuple) -> None:
    k = np.array([-1, 0, 1, 2, 3, 5, 10, 2.5], np.float32)
    wmod, jmod = getattr(wst, dist), getattr(jst, dist)
    for fn in ("logpmf", "pmf", "cdf"):
        if hasattr(jmod, fn):
            close(getattr(wmod, fn)(jnp.asarray(k), *args), getattr(jmod, fn)(k, *args), 2e-5, 1e-6)
    if dist == "bernoulli":
        close(wst.bernoulli.ppf(jnp.asarray(QS), 0.3), jst.bernoulli.ppf(QS, 0.3))


@pytest.mark.parametrize(
    "dist,fn,args",
    [
        ("gumbel_r", "logpdf", (0.0, -1.0)),
        ("gumbel_l", "cdf", (0.0, 0.0)),
        ("vonmises", "logpdf", (0.0,)),
        ("vonmises", "pdf", (900.0,)),
        ("wrapcauchy", "pdf", (1.0,)),
        ("nbinom", "logpmf", (0.0, 0.5)),
        ("betabinom", "logpmf", (-1.0, 2.0, 3.0)),
        ("betabinom", "pmf", (4.0, 0.0, 3.0)),
    ],
)
def test_parameters_at_and_past_their_bounds(dist: str, fn: str, args: tuple) -> None:
    """NaN for invalid parameters, and the extreme valid ones (vonmises' kappa = 900) finite."""
    x = np.array([0.0, 0.5, 1.0, 2.0, 3.0], np.float32)
    got = getattr(getattr(wst, dist), fn)(jnp.asarray(x), *args)
    close(got, getattr(getattr(jst, dist), fn)(x, *args), 2e-5, 1e-6)


def test_multivariate_normal(device: Any) -> None:
    mean = R.standard_normal(3).astype(np.float32)
    a = R.standard_normal((3, 3)).astype(np.float32)
    cov = a @ a.T + np.eye(3, dtype=np.float32)
    x = R.standard_normal((5, 3)).astype(np.float32)
    X = jnp.asarray(x)
    mvn, jmvn = wst.multivariate_normal, jst.multivariate_normal
    close(mvn.logpdf(X, jnp.asarray(mean), jnp.asarray(cov)), jmvn.logpdf(x, mean, cov), 2e-5)
    close(mvn.pdf(X, jnp.asarray(mean), jnp.asarray(cov)), jmvn.pdf(x, mean, cov), 2e-5, 1e-9)
    close(mvn.logpdf(X, jnp.asarray(mean), 2.0), jmvn.logpdf(x, mean, 2.0), 2e-5)
    close(mvn.logpdf(X[:, 0], 0.5, 2.0), jmvn.logpdf(x[:, 0], 0.5, 2.0), 2e-5)
    covs = np.stack([cov, 2 * cov])
    close(
        mvn.logpdf(X[:2], jnp.asarray(mean), jnp.asarray(covs)),
        jmvn.logpdf(x[:2], mean, covs),
        2e-5,
    )


def test_stats_jit_and_grad(device: Any) -> None:
    x = R.uniform(0.1, 5, 8).astype(np.float32)
    f = lambda v: wst.gamma.logpdf(v, 2.5, 0.0, 1.5).sum() + wst.norm.logcdf(v).sum()
    g = lambda v: jst.gamma.logpdf(v, 2.5, 0.0, 1.5).sum() + jst.norm.logcdf(v).sum()
    np.testing.assert_allclose(float(webjax.jit(f)(jnp.asarray(x))), float(g(x)), rtol=1e-5)
    close(webjax.grad(f)(jnp.asarray(x)), jax.grad(g)(x), 1e-5)


def test_errors() -> None:
    with pytest.raises(NotImplementedError, match="allow_singular"):
        wst.multivariate_normal.logpdf(jnp.ones(2), jnp.zeros(2), jnp.eye(2), allow_singular=True)
    with pytest.raises(ValueError, match="incompatible shapes"):
        wst.multivariate_normal.logpdf(jnp.ones(2), jnp.zeros(2), jnp.eye(3))


def test_multinomial(device: Any) -> None:
    p = np.array([0.2, 0.3, 0.5], np.float32)
    for x, n in [([1, 2, 3], 6), ([[0, 0, 4], [1, 1, 2]], 4), ([1, 2, 3], 5), ([0, 0, 0], 0)]:
        xs = np.array(x, np.int32)
        for fn in ("logpmf", "pmf"):
            want = getattr(jst.multinomial, fn)(xs, n, p)
            close(
                getattr(wst.multinomial, fn)(jnp.asarray(xs), n, jnp.asarray(p)), want, 2e-5, 1e-5
            )
    with pytest.raises(ValueError, match="must be of integer type"):
        wst.multinomial.logpmf(jnp.array([1.0, 2.0, 3.0]), 6, jnp.asarray(p))


def test_sem(device: Any) -> None:
    a = R.standard_normal((4, 5)).astype(np.float32)
    b = a.copy()
    b[1, 2] = b[3, 0] = np.nan
    for kw in [{}, {"axis": 1}, {"axis": None}, {"ddof": 0, "keepdims": True}, {"axis": -1}]:
        close(wst.sem(jnp.asarray(a), **kw), jst.sem(a, **kw), 2e-5, 1e-6)
        close(wst.sem(jnp.asarray(b), **kw), jst.sem(b, **kw), 2e-5, 1e-6)
        omit = {**kw, "nan_policy": "omit"}
        close(wst.sem(jnp.asarray(b), **omit), jst.sem(b, **omit), 2e-5, 1e-6)
    close(wst.sem(jnp.arange(5)), jst.sem(np.arange(5)))  # integers: the default float
    with pytest.raises(ValueError, match="not supported"):
        wst.sem(jnp.asarray(a), nan_policy="raise")


def test_mode(device: Any) -> None:
    ints = R.randint(0, 4, (6, 5)).astype(np.int32)
    floats = np.round(R.standard_normal((5, 7)), 0).astype(np.float32)
    for a in (ints, floats, np.array([[2.0, 1.0, 1.0, 2.0]], np.float32)):
        for kw in [
            {},
            {"axis": 1},
            {"axis": None},
            {"axis": -1, "keepdims": True},
            {"keepdims": True},
        ]:
            got, want = wst.mode(jnp.asarray(a), **kw), jst.mode(a, **kw)
            close(got.mode, want.mode)
            close(got.count, want.count)
    got, want = wst.mode(jnp.zeros((0, 3))), jst.mode(np.zeros((0, 3), np.float32))
    close(got.mode, want.mode)
    close(got.count, want.count)
    close(webjax.jit(lambda v: wst.mode(v).mode)(jnp.asarray(ints)), jst.mode(ints).mode)
    for policy, err in [
        ("omit", NotImplementedError),
        ("raise", NotImplementedError),
        ("x", ValueError),
    ]:
        with pytest.raises(err):
            wst.mode(jnp.asarray(ints), nan_policy=policy)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata(device: Any, method: str) -> None:
    a = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3], [5, 8, 9, 7, 9]], np.float32)
    for kw in [{}, {"axis": 0}, {"axis": 1}, {"axis": -1}]:
        close(wst.rankdata(jnp.asarray(a), method, **kw), jst.rankdata(a, method, **kw))
    nan = np.array([1.0, np.nan, 2.0], np.float32)
    close(wst.rankdata(jnp.asarray(nan), method), jst.rankdata(nan, method))
    ints = np.array([7, 7, 2, 9, 2, 2], np.int32)
    close(
        webjax.jit(lambda v: wst.rankdata(v, method))(jnp.asarray(ints)), jst.rankdata(ints, method)
    )


def test_rankdata_errors() -> None:
    for fn in (wst.mode, lambda v, axis: wst.rankdata(v, axis=axis)):
        with pytest.raises(ValueError, match="axis 1 is out of bounds for array of dimension 1"):
            fn(jnp.ones(3), axis=1)
    with pytest.raises(ValueError, match="unknown method"):
        wst.rankdata(jnp.arange(3), "first")
    with pytest.raises(NotImplementedError):
        wst.rankdata(jnp.arange(3), nan_policy="omit")
