"""webjax.numpy.linalg: `jax.numpy.linalg`."""

from webjax._src.numpy.linalg import *  # noqa: F403
from webjax._src.numpy.linalg import __all__ as __all__
