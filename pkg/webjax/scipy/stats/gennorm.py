"""webjax.scipy.stats.gennorm: `jax.scipy.stats.gennorm`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.gennorm_cdf
logpdf = _impl.gennorm_logpdf
pdf = _impl.gennorm_pdf

__all__ = ["cdf", "logpdf", "pdf"]
