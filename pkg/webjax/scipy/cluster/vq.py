"""webjax.scipy.cluster.vq: `jax.scipy.cluster.vq`."""

from webjax._src.scipy.cluster import vq

__all__ = ["vq"]
