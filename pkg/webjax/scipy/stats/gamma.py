"""webjax.scipy.stats.gamma: `jax.scipy.stats.gamma`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.gamma_cdf
logcdf = _impl.gamma_logcdf
logpdf = _impl.gamma_logpdf
logsf = _impl.gamma_logsf
pdf = _impl.gamma_pdf
sf = _impl.gamma_sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
