"""webjax.api_util: flattening helpers for wrapped functions (`jax.api_util`)."""

from webjax._src.linear_util import debug_info, flatten_fun, flatten_fun_nokwargs

__all__ = ["debug_info", "flatten_fun", "flatten_fun_nokwargs"]
