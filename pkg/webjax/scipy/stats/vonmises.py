"""webjax.scipy.stats.vonmises: `jax.scipy.stats.vonmises`."""

from webjax._src.scipy import stats as _impl

logpdf = _impl.vonmises_logpdf
pdf = _impl.vonmises_pdf

__all__ = ["logpdf", "pdf"]
