"""webjax.scipy.spatial: `jax.scipy.spatial`."""

from webjax.scipy.spatial import transform

__all__ = ["transform"]
