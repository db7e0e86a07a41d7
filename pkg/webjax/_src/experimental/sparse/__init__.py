"""jax.experimental.sparse: sparse arrays as pytrees of dense arrays (BCOO)."""

from . import bcoo_layout as bcoo_layout  # installs BCOO's layout methods
from . import bcoo_spdot as bcoo_spdot  # registers sparse @ sparse with bcoo_dot_general
from . import transform as transform  # installs BCOO's arithmetic methods (sparsified jnp)
