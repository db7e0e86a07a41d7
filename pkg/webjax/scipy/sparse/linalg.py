"""webjax.scipy.sparse.linalg: `jax.scipy.sparse.linalg`."""

from webjax._src.scipy.sparse.linalg import *  # noqa: F403
from webjax._src.scipy.sparse.linalg import __all__ as __all__
