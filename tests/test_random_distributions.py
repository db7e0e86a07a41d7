"""`webjax.random`'s distributions beyond test_random's basic samplers (lognormal, cauchy,
pareto, t, chisquare, f, maxwell, weibull_min, rayleigh, wald, generalized_normal, ball,
orthogonal, rademacher, geometric, triangular, binomial, multinomial, multivariate_normal)
against real JAX, key for key.

Samplers that only transform integer draws or apply exact float operations (rademacher,
geometric, triangular, binomial, multinomial) must match JAX exactly; the others pass the same
uniform/normal/gamma draws through transcendental ops (log, exp, tan, pow, sqrt, the gamma
rejection loop), where webjax's float32 ops may differ from XLA's by an ulp, so they get a
tolerance of a few ulps (more for wald, whose formula cancels).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax import random as wr

jax = pytest.importorskip("jax")
jr = jax.random
jjnp = jax.numpy
SEEDS = [0, 42]


def _np(x: Any) -> np.ndarray:
    a = np.asarray(x)
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def check(got: Any, want: Any, rtol: float = 0.0, atol: float = 0.0) -> None:
    assert str(got.dtype) == str(want.dtype), (got.dtype, want.dtype)
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(_np(g), _np(w))
    else:
        np.testing.assert_allclose(_np(g), _np(w), rtol=rtol, atol=atol)


# name -> (webjax call, jax call, rtol): both take (random module, key, array module)
CASES: dict[str, tuple[Any, float]] = {
    "normal_complex64": (lambda r, k, n: r.normal(k, (50,), n.complex64), 4e-6),
    "lognormal": (lambda r, k, n: r.lognormal(k, 0.5, (50,)), 4e-6),
    "lognormal_array": (lambda r, k, n: r.lognormal(k, n.array([0.5, 2.0])), 4e-6),
    "cauchy": (lambda r, k, n: r.cauchy(k, (50,)), 4e-6),
    "pareto": (lambda r, k, n: r.pareto(k, 3.0, (50,)), 4e-6),
    "t": (lambda r, k, n: r.t(k, 5.0, (50,)), 4e-6),
    "t_array": (lambda r, k, n: r.t(k, n.array([0.5, 3.0, 30.0])), 4e-6),
    "chisquare": (lambda r, k, n: r.chisquare(k, 3.0, (50,)), 4e-6),
    "f": (lambda r, k, n: r.f(k, 3.0, 7.0, (50,)), 4e-6),
    "maxwell": (lambda r, k, n: r.maxwell(k, (50,)), 4e-6),
    "double_sided_maxwell": (lambda r, k, n: r.double_sided_maxwell(k, 1.0, 2.0, (50,)), 2e-5),
    "double_sided_maxwell_params": (
        lambda r, k, n: r.double_sided_maxwell(k, n.zeros(2), 2.0, (3,)),
        2e-5,
    ),
    "weibull_min": (lambda r, k, n: r.weibull_min(k, 2.0, 1.5, (50,)), 4e-6),
    "weibull_min_array": (
        lambda r, k, n: r.weibull_min(k, n.ones(3), n.array([0.5, 1.0, 3.0])),
        4e-6,
    ),
    "rayleigh": (lambda r, k, n: r.rayleigh(k, 2.0, (50,)), 4e-6),
    "wald": (lambda r, k, n: r.wald(k, 1.5, (50,)), 5e-5),
    "generalized_normal": (lambda r, k, n: r.generalized_normal(k, 1.5, (50,)), 4e-6),
    "ball": (lambda r, k, n: r.ball(k, 3, 2, (10,)), 4e-6),
    "ball_p1": (lambda r, k, n: r.ball(k, 4, 1.0, (10,)), 4e-6),
    "orthogonal": (lambda r, k, n: r.orthogonal(k, 4), 1e-5),
    "orthogonal_rect": (lambda r, k, n: r.orthogonal(k, 3, (2,), m=5), 1e-5),
    "cauchy_f16": (lambda r, k, n: r.cauchy(k, (20,), n.float16), 4e-3),
    "lognormal_bf16": (lambda r, k, n: r.lognormal(k, 1.0, (20,), n.bfloat16), 3e-2),
    # exact
    "rademacher": (lambda r, k, n: r.rademacher(k, (50,)), 0.0),
    "rademacher_f32": (lambda r, k, n: r.rademacher(k, (10,), n.float32), 0.0),
    "geometric": (lambda r, k, n: r.geometric(k, 0.3, (50,)), 0.0),
    "geometric_array": (lambda r, k, n: r.geometric(k, n.array([0.1, 0.5, 0.9])), 0.0),
    "triangular": (lambda r, k, n: r.triangular(k, -1.0, 0.5, 2.0, (50,)), 0.0),
    "binomial_inversion": (lambda r, k, n: r.binomial(k, 5.0, 0.3, (100,)), 0.0),
    "binomial_btrs": (lambda r, k, n: r.binomial(k, 100.0, 0.4, (100,)), 0.0),
    "binomial_p_large": (lambda r, k, n: r.binomial(k, 50.0, 0.8, (100,)), 0.0),
    "binomial_edges": (
        lambda r, k, n: r.binomial(
            k, n.array([3.0, 1000.0, -1.0, np.inf, 20.0]), n.array([0.5, 0.2, 0.5, 0.5, np.nan])
        ),
        0.0,
    ),
    "multinomial": (lambda r, k, n: r.multinomial(k, 20.0, n.array([0.2, 0.3, 0.5])), 0.0),
    "multinomial_batch": (
        lambda r, k, n: r.multinomial(
            k, n.array([10.0, 100.0]), n.array([0.1, 0.6, 0.3]), shape=(2, 3)
        ),
        0.0,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("seed", SEEDS)
def test_sampler_matches_jax(device: Any, name: str, seed: int) -> None:
    fn, rtol = CASES[name]
    got = fn(wr, wr.PRNGKey(seed), jnp)
    want = fn(jr, jr.PRNGKey(seed), jjnp)
    check(got, want, rtol, rtol)


def test_typed_keys_and_clone(device: Any) -> None:
    k, jk = wr.key(3), jr.key(3)
    check(wr.cauchy(k, (5,)), jr.cauchy(jk, (5,)), 4e-6, 4e-6)
    check(wr.rademacher(wr.clone(k), (5,)), jr.rademacher(jr.clone(jk), (5,)))
    assert wr.key_dtype() == "key<fry>" == str(jr.key_dtype())
    assert wr.key(0).dtype == wr.key_dtype()


def test_jit_and_vmap_equal_eager(device: Any) -> None:
    k = wr.PRNGKey(7)
    for fn in (
        lambda key: wr.t(key, 4.0, (6,)),
        lambda key: wr.binomial(key, 30.0, 0.5, (6,)),
        lambda key: wr.triangular(key, 0.0, 0.2, 1.0, (6,)),
    ):
        np.testing.assert_array_equal(np.asarray(webjax.jit(fn)(k)), np.asarray(fn(k)))
    keys = wr.split(k, 3)
    got = webjax.vmap(lambda key: wr.pareto(key, 2.0, (4,)))(keys)
    want = jax.vmap(lambda key: jr.pareto(key, 2.0, (4,)))(jr.split(jr.PRNGKey(7), 3))
    check(got, want, 4e-6, 4e-6)


def test_multivariate_normal(device: Any) -> None:
    rs = np.random.RandomState(0)
    mean = rs.standard_normal(3).astype(np.float32)
    a = rs.standard_normal((3, 3)).astype(np.float32)
    cov = a @ a.T + np.eye(3, dtype=np.float32)
    got = wr.multivariate_normal(wr.PRNGKey(0), jnp.asarray(mean), jnp.asarray(cov), (4,))
    check(got, jr.multivariate_normal(jr.PRNGKey(0), mean, cov, (4,)), 1e-5, 1e-5)
    batch = np.zeros((2, 3), np.float32)
    got = wr.multivariate_normal(wr.PRNGKey(1), jnp.asarray(batch), jnp.asarray(cov))
    check(got, jr.multivariate_normal(jr.PRNGKey(1), batch, cov), 1e-5, 1e-5)
    # eigh/svd factors are unique up to column signs (which may differ from LAPACK's): the
    # samples still have the requested covariance
    for method in ("eigh", "svd"):
        x = np.asarray(
            wr.multivariate_normal(
                wr.PRNGKey(2), jnp.asarray(mean), jnp.asarray(cov), (4000,), method=method
            )
        )
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.1 * np.abs(cov).max())
        np.testing.assert_allclose(x.mean(0), mean, atol=0.2)
    with pytest.raises(ValueError, match="method"):
        wr.multivariate_normal(wr.PRNGKey(0), jnp.asarray(mean), jnp.asarray(cov), method="qr")
    with pytest.raises(ValueError, match=r"cov\.shape"):
        wr.multivariate_normal(wr.PRNGKey(0), jnp.asarray(mean), jnp.eye(2))


def test_statistics() -> None:
    """Large samples have the distributions' moments (guards the algorithms themselves)."""
    k = wr.PRNGKey(1)
    x = np.asarray(wr.chisquare(k, 4.0, (4000,)))
    assert abs(x.mean() - 4.0) < 0.25
    b = np.asarray(wr.binomial(k, 40.0, 0.3, (4000,)))
    assert abs(b.mean() - 12.0) < 0.3 and abs(b.var() - 8.4) < 1.0
    o = np.asarray(wr.orthogonal(k, 5, (3,)))
    np.testing.assert_allclose(
        o @ np.swapaxes(o, -1, -2), np.broadcast_to(np.eye(5), (3, 5, 5)), atol=2e-6
    )
    g = np.asarray(wr.ball(k, 3, 2, (2000,)))
    assert np.all(np.linalg.norm(g, axis=-1) <= 1.0)
    m = np.asarray(wr.multinomial(k, 50.0, jnp.array([0.25, 0.25, 0.5]), shape=(500, 3)))
    assert np.all(m.sum(-1) == 50)


def test_errors() -> None:
    k = wr.PRNGKey(0)
    for fn in (
        lambda: wr.pareto(k, 1.0, dtype=jnp.int32),
        lambda: wr.cauchy(k, dtype=jnp.int32),
        lambda: wr.geometric(k, 0.5, dtype=jnp.float32),
        lambda: wr.orthogonal(k, 3, dtype=jnp.int32),
        lambda: wr.t(k, jnp.ones(3), (2,)),
        lambda: wr.rayleigh(k, jnp.ones(3), (4,)),
    ):
        with pytest.raises(ValueError):
            fn()
    with pytest.raises(TypeError):
        wr.cauchy(wr.split(k, 2), (2,))
