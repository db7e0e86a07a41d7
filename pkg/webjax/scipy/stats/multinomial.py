"""webjax.scipy.stats.multinomial: `jax.scipy.stats.multinomial`."""

from webjax._src.scipy import stats as _impl

logpmf = _impl.multinomial_logpmf
pmf = _impl.multinomial_pmf

__all__ = ["logpmf", "pmf"]
