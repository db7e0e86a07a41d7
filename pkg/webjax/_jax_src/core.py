"""`jax._src.core`: the tracing core (`jax.core` and `jax.extend.core` together)."""

from webjax.core import *  # noqa: F403
from webjax.core import __all__ as _core
from webjax.extend.core import *  # noqa: F403
from webjax.extend.core import __all__ as _extend

__all__ = sorted({*_core, *_extend})
