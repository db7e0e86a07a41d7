"""webjax.debug: `jax.debug.print` and `jax.debug.callback`."""

from webjax._src.debugging import callback
from webjax._src.debugging import debug_print as print

__all__ = ["callback", "print"]
