"""webjax.scipy.spatial.transform: `jax.scipy.spatial.transform`."""

from webjax._src.scipy_spatial import Rotation, Slerp

__all__ = ["Rotation", "Slerp"]
