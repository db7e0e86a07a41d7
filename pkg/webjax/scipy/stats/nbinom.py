"""webjax.scipy.stats.nbinom: `jax.scipy.stats.nbinom`."""

from webjax._src.scipy import stats as _impl

logpmf = _impl.nbinom_logpmf
pmf = _impl.nbinom_pmf

__all__ = ["logpmf", "pmf"]
