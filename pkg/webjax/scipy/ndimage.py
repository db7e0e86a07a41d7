"""webjax.scipy.ndimage: `jax.scipy.ndimage`."""

from webjax._src.scipy.ndimage import map_coordinates

__all__ = ["map_coordinates"]
