"""webjax.experimental: the parts of `jax.experimental` webjax has (x64 context managers)."""

from webjax._src.config import experimental_disable_x64 as disable_x64
from webjax._src.config import experimental_enable_x64 as enable_x64

__all__ = ["disable_x64", "enable_x64"]
