"""webjax.scipy.stats.multivariate_normal: `jax.scipy.stats.multivariate_normal`."""

from webjax._src.scipy import stats as _impl

logpdf = _impl.multivariate_normal_logpdf
pdf = _impl.multivariate_normal_pdf

__all__ = ["logpdf", "pdf"]
