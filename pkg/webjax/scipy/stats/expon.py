"""webjax.scipy.stats.expon: `jax.scipy.stats.expon`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.expon_cdf
logcdf = _impl.expon_logcdf
logpdf = _impl.expon_logpdf
logsf = _impl.expon_logsf
pdf = _impl.expon_pdf
ppf = _impl.expon_ppf
sf = _impl.expon_sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
