"""`jax._src.api_util`: the flattening helpers of wrapped functions."""

from webjax._src.linear_util import debug_info, flatten_fun, flatten_fun_nokwargs, fun_name

__all__ = ["debug_info", "flatten_fun", "flatten_fun_nokwargs", "fun_name"]
