"""jax.experimental.sparse: sparse arrays as pytrees of dense arrays (BCOO)."""

from . import transform as transform  # installs BCOO's arithmetic methods (sparsified jnp)
