"""webjax.scipy.interpolate: `jax.scipy.interpolate`."""

from webjax._src.scipy.interpolate import RegularGridInterpolator

__all__ = ["RegularGridInterpolator"]
