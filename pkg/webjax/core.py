"""webjax.core: the names of `jax.core` that JAX programs still use (`jax.core.ShapedArray`,
`jax.core.Tracer`, `jax.core.concrete_or_error`, ...), mapped to webjax's own classes."""

from webjax._src.api import ensure_compile_time_eval
from webjax._src.core import Atom, ShapedArray, Trace, Tracer, concrete_or_error
from webjax._src.core import is_valid_jaxtype as valid_jaxtype
from webjax._src.core_compat import (
    AbstractValue,
    ParamDict,
    Value,
    eval_context,
    eval_jaxpr,
    is_constant_dim,
    is_constant_shape,
    max_dim,
    min_dim,
)

__all__ = [
    "AbstractValue",
    "Atom",
    "ParamDict",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Value",
    "concrete_or_error",
    "ensure_compile_time_eval",
    "eval_context",
    "eval_jaxpr",
    "is_constant_dim",
    "is_constant_shape",
    "max_dim",
    "min_dim",
    "valid_jaxtype",
]
