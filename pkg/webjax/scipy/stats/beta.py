"""webjax.scipy.stats.beta: `jax.scipy.stats.beta`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.beta_cdf
logcdf = _impl.beta_logcdf
logpdf = _impl.beta_logpdf
logsf = _impl.beta_logsf
pdf = _impl.beta_pdf
sf = _impl.beta_sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
