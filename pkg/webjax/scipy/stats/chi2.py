"""webjax.scipy.stats.chi2: `jax.scipy.stats.chi2`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.chi2_cdf
logcdf = _impl.chi2_logcdf
logpdf = _impl.chi2_logpdf
logsf = _impl.chi2_logsf
pdf = _impl.chi2_pdf
sf = _impl.chi2_sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
