"""webjax.scipy.stats.binom: `jax.scipy.stats.binom`."""

from webjax._src.scipy import stats as _impl

logpmf = _impl.binom_logpmf
pmf = _impl.binom_pmf

__all__ = ["logpmf", "pmf"]
