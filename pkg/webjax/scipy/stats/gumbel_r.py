"""webjax.scipy.stats.gumbel_r: `jax.scipy.stats.gumbel_r`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.gumbel_r_cdf
logcdf = _impl.gumbel_r_logcdf
logpdf = _impl.gumbel_r_logpdf
logsf = _impl.gumbel_r_logsf
pdf = _impl.gumbel_r_pdf
ppf = _impl.gumbel_r_ppf
sf = _impl.gumbel_r_sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
