"""webjax.scipy.stats.geom: `jax.scipy.stats.geom`."""

from webjax._src.scipy import stats as _impl

logpmf = _impl.geom_logpmf
pmf = _impl.geom_pmf

__all__ = ["logpmf", "pmf"]
