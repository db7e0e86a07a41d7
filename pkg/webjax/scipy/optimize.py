"""webjax.scipy.optimize: `jax.scipy.optimize`."""

from webjax._src.scipy.optimize import OptimizeResults, minimize

__all__ = ["OptimizeResults", "minimize"]
