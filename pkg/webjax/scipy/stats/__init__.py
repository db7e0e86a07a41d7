"""webjax.scipy.stats: `jax.scipy.stats` (densities, distribution functions, quantiles)."""

from webjax.scipy.stats import (
    bernoulli,
    beta,
    binom,
    cauchy,
    chi2,
    expon,
    gamma,
    geom,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    pareto,
    poisson,
    t,
    uniform,
)

__all__ = [
    "bernoulli",
    "beta",
    "binom",
    "cauchy",
    "chi2",
    "expon",
    "gamma",
    "geom",
    "laplace",
    "logistic",
    "multivariate_normal",
    "norm",
    "pareto",
    "poisson",
    "t",
    "uniform",
]
