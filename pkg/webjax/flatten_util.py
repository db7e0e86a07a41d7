"""webjax.flatten_util: JAX's `ravel_pytree`."""

from webjax._src.flatten_util import ravel_pytree

__all__ = ["ravel_pytree"]
