"""webjax.scipy.stats.uniform: `jax.scipy.stats.uniform`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.uniform_cdf
logpdf = _impl.uniform_logpdf
pdf = _impl.uniform_pdf
ppf = _impl.uniform_ppf

__all__ = ["cdf", "logpdf", "pdf", "ppf"]
