"""webjax.scipy.stats.logistic: `jax.scipy.stats.logistic`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.logistic_cdf
isf = _impl.logistic_isf
logpdf = _impl.logistic_logpdf
pdf = _impl.logistic_pdf
ppf = _impl.logistic_ppf
sf = _impl.logistic_sf

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]
