"""webjax.scipy.stats.gumbel_l: `jax.scipy.stats.gumbel_l`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.gumbel_l_cdf
logcdf = _impl.gumbel_l_logcdf
logpdf = _impl.gumbel_l_logpdf
logsf = _impl.gumbel_l_logsf
pdf = _impl.gumbel_l_pdf
ppf = _impl.gumbel_l_ppf
sf = _impl.gumbel_l_sf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
