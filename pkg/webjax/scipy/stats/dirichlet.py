"""webjax.scipy.stats.dirichlet: `jax.scipy.stats.dirichlet`."""

from webjax._src.scipy import stats as _impl

logpdf = _impl.dirichlet_logpdf
pdf = _impl.dirichlet_pdf

__all__ = ["logpdf", "pdf"]
