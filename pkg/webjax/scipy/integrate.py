"""webjax.scipy.integrate: `jax.scipy.integrate`."""

from webjax._src.scipy.integrate import trapezoid

__all__ = ["trapezoid"]
