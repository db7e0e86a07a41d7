"""`jax._src.tree_util`: pytrees, and `_registry`, the table of registered node types (key
arrays, leaves to users, left out)."""

from webjax._src.tree import registry_view as _registry
from webjax.tree_util import *  # noqa: F403
from webjax.tree_util import __all__ as _public

__all__ = ["_registry", *_public]
