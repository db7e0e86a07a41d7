"""webjax.extend.core: primitives, jaxprs and traces, for libraries that define their own
primitives (`jax.extend.core`)."""

from webjax._src.core import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Literal,
    Primitive,
    Var,
    check_jaxpr,
    concrete_or_error,
)
from webjax._src.core import is_valid_jaxtype as valid_jaxtype
from webjax._src.core_compat import (
    AbstractToken,
    CallPrimitive,
    DropVar,
    Effect,
    Effects,
    InconclusiveDimensionOperation,
    Token,
    TraceTag,
    array_types,
    call_impl,
    find_top_trace,
    gensym,
    get_opaque_trace_state,
    jaxpr_as_fun,
    jaxprs_in_params,
    mapped_aval,
    new_jaxpr_eqn,
    no_effects,
    nonempty_axis_env_DO_NOT_USE,
    primal_dtype_to_tangent_dtype,
    set_current_trace,
    subjaxprs,
    take_current_trace,
    unmapped_aval,
    unsafe_am_i_under_a_jit_DO_NOT_USE,
    unsafe_am_i_under_a_vmap_DO_NOT_USE,
    unsafe_get_axis_names_DO_NOT_USE,
)
from webjax._src.linear_util import DebugInfo
from webjax.extend.core import primitives

__all__ = [
    "AbstractToken", "CallPrimitive", "ClosedJaxpr", "DebugInfo", "DropVar", "Effect",
    "Effects", "InconclusiveDimensionOperation", "Jaxpr", "JaxprEqn", "JaxprTypeError",
    "Literal", "Primitive", "Token", "TraceTag", "Var", "array_types", "call_impl",
    "check_jaxpr", "concrete_or_error", "find_top_trace", "gensym", "get_opaque_trace_state",
    "jaxpr_as_fun", "jaxprs_in_params", "mapped_aval", "new_jaxpr_eqn", "no_effects",
    "nonempty_axis_env_DO_NOT_USE", "primal_dtype_to_tangent_dtype", "primitives",
    "set_current_trace", "subjaxprs", "take_current_trace", "unmapped_aval",
    "unsafe_am_i_under_a_jit_DO_NOT_USE", "unsafe_am_i_under_a_vmap_DO_NOT_USE",
    "unsafe_get_axis_names_DO_NOT_USE", "valid_jaxtype",
]  # fmt: skip
