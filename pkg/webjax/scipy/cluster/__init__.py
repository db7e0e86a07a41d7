"""webjax.scipy.cluster: `jax.scipy.cluster`."""

from webjax.scipy.cluster import vq

__all__ = ["vq"]
