"""webjax.scipy.stats.laplace: `jax.scipy.stats.laplace`."""

from webjax._src.scipy import stats as _impl

cdf = _impl.laplace_cdf
logpdf = _impl.laplace_logpdf
pdf = _impl.laplace_pdf

__all__ = ["cdf", "logpdf", "pdf"]
