"""webjax.scipy.stats.truncnorm: `jax.scipy.stats.truncnorm`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.truncnorm_cdf
logcdf = _impl.truncnorm_logcdf
logpdf = _impl.truncnorm_logpdf
logsf = _impl.truncnorm_logsf
pdf = _impl.truncnorm_pdf
sf = _impl.truncnorm_sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
