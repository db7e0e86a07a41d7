"""webjax.scipy.stats.bernoulli: `jax.scipy.stats.bernoulli`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.bernoulli_cdf
logpmf = _impl.bernoulli_logpmf
pmf = _impl.bernoulli_pmf
ppf = _impl.bernoulli_ppf

__all__ = ["cdf", "logpmf", "pmf", "ppf"]
