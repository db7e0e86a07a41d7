"""webjax.scipy.linalg: `jax.scipy.linalg`."""

from webjax._src.scipy.linalg import *  # noqa: F403
from webjax._src.scipy.linalg import __all__ as __all__
