"""webjax.image: `jax.image` (resize, scale_and_translate)."""

from webjax._src.image import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
