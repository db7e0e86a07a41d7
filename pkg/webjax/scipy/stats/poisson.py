"""webjax.scipy.stats.poisson: `jax.scipy.stats.poisson`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.poisson_cdf
logpmf = _impl.poisson_logpmf
pmf = _impl.poisson_pmf

__all__ = ["cdf", "logpmf", "pmf"]
