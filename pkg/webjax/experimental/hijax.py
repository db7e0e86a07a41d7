"""webjax.experimental.hijax: `jax.experimental.hijax` (definitions accepted; no high-level
types at run time)."""

from webjax._src.experimental.hijax import *  # noqa: F403
from webjax._src.experimental.hijax import __all__  # noqa: F401
