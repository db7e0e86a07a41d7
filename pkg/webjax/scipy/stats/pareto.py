"""webjax.scipy.stats.pareto: `jax.scipy.stats.pareto`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.pareto_cdf
logcdf = _impl.pareto_logcdf
logpdf = _impl.pareto_logpdf
logsf = _impl.pareto_logsf
pdf = _impl.pareto_pdf
ppf = _impl.pareto_ppf
sf = _impl.pareto_sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
