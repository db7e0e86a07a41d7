"""webjax.api_util: flattening helpers for wrapped functions (`jax.api_util`)."""

from webjax._src.core_compat import shaped_abstractify
from webjax._src.linear_util import (
    argnums_partial,
    debug_info,
    flatten_axes,
    flatten_fun,
    flatten_fun_nokwargs,
    safe_map,
)

__all__ = [
    "argnums_partial", "debug_info", "flatten_axes", "flatten_fun", "flatten_fun_nokwargs",
    "safe_map", "shaped_abstractify",
]  # fmt: skip
