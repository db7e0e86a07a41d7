"""webjax.scipy.stats.wrapcauchy: `jax.scipy.stats.wrapcauchy`."""

from webjax._src.scipy import stats as _impl

logpdf = _impl.wrapcauchy_logpdf
pdf = _impl.wrapcauchy_pdf

__all__ = ["logpdf", "pdf"]
