"""webjax.scipy.stats.t: `jax.scipy.stats.t`."""

from webjax._src.scipy import stats as _impl

logpdf = _impl.t_logpdf
pdf = _impl.t_pdf

__all__ = ["logpdf", "pdf"]
