"""webjax.core: the names of `jax.core` that JAX programs still use (`jax.core.ShapedArray`,
`jax.core.Tracer`, `jax.core.concrete_or_error`, ...), mapped to webjax's own classes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from webjax._src.api_extra import ensure_compile_time_eval
from webjax._src.core import Atom, ShapedArray, Trace, Tracer, concrete_or_error
from webjax._src.core import Jaxpr as _Jaxpr
from webjax._src.core import eval_jaxpr as _eval_jaxpr
from webjax._src.core import eval_trace as _eval_trace
from webjax._src.core import is_valid_jaxtype as valid_jaxtype
from webjax._src.core import set_current_trace as _set_current_trace

# webjax has one kind of abstract value: the base class JAX programs test against is it.
AbstractValue = ShapedArray
ParamDict = dict[str, Any]
Value = Any


def eval_jaxpr(jaxpr: _Jaxpr, consts: Any, *args: Any, propagate_source_info: bool = True) -> Any:
    """Evaluate `jaxpr` on `args` (its constants given as `consts`): the list of outputs."""
    del propagate_source_info
    return _eval_jaxpr(jaxpr, consts, *args)


@contextlib.contextmanager
def eval_context() -> Iterator[None]:
    """Operations inside run eagerly (on concrete values), even while tracing."""
    with _set_current_trace(_eval_trace):
        yield


def is_constant_dim(d: Any) -> bool:
    """webjax shapes are static: every dimension is a constant."""
    return isinstance(d, int)


def is_constant_shape(s: Any) -> bool:
    return all(is_constant_dim(d) for d in s)


def max_dim(d1: Any, d2: Any) -> Any:
    return max(d1, d2)


def min_dim(d1: Any, d2: Any) -> Any:
    return min(d1, d2)


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
