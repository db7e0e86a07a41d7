"""webjax.scipy.stats.cauchy: `jax.scipy.stats.cauchy`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.cauchy_cdf
isf = _impl.cauchy_isf
logcdf = _impl.cauchy_logcdf
logpdf = _impl.cauchy_logpdf
logsf = _impl.cauchy_logsf
pdf = _impl.cauchy_pdf
ppf = _impl.cauchy_ppf
sf = _impl.cauchy_sf

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
