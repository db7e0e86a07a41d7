"""webjax.scipy.stats.norm: `jax.scipy.stats.norm`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.norm_cdf
isf = _impl.norm_isf
logcdf = _impl.norm_logcdf
logpdf = _impl.norm_logpdf
logsf = _impl.norm_logsf
pdf = _impl.norm_pdf
ppf = _impl.norm_ppf
sf = _impl.norm_sf

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
