"""The names of `jax.core` that JAX programs still use (`jax.core.AbstractValue`, `eval_jaxpr`,
`eval_context`, the shape-polymorphism predicates, ...), over webjax's tracing core. webjax
shapes are static, so every dimension is a constant.
"""

from __future__ import annotations

from typing import Any

from . import core
from .core import eval_context

# webjax has one kind of abstract value: the base class JAX programs test against is it.
AbstractValue = core.ShapedArray
ParamDict = dict[str, Any]
Value = Any


def eval_jaxpr(
    jaxpr: core.Jaxpr, consts: Any, *args: Any, propagate_source_info: bool = True
) -> Any:
    """Evaluate `jaxpr` on `args` (its constants given as `consts`): the list of outputs."""
    del propagate_source_info
    return core.eval_jaxpr(jaxpr, consts, *args)


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
    "AbstractValue", "ParamDict", "Value", "eval_context", "eval_jaxpr", "is_constant_dim",
    "is_constant_shape", "max_dim", "min_dim",
]  # fmt: skip
