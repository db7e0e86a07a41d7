"""webjax.lax.linalg: JAX's `lax.linalg` (factorization primitives and their wrappers)."""

from webjax._src.lax.linalg import *  # noqa: F403
from webjax._src.lax.linalg import __all__ as __all__
