"""webjax.scipy.spatial.transform: `jax.scipy.spatial.transform`."""

from webjax._src.scipy.spatial import Rotation, Slerp

__all__ = ["Rotation", "Slerp"]
