"""webjax.scipy.stats.betabinom: `jax.scipy.stats.betabinom`."""

from webjax._src.scipy import stats as _impl

logpmf = _impl.betabinom_logpmf
pmf = _impl.betabinom_pmf

__all__ = ["logpmf", "pmf"]
