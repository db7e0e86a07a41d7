"""webjax.interpreters.ad: differentiation rules (`jax.interpreters.ad`)."""

from webjax._src.interpreters.ad import (
    JVPTrace,
    JVPTracer,
    UndefinedPrimal,
    Zero,
    add_jaxvals,
    add_tangents,
    defbilinear,
    defjvp,
    defjvp2,
    deflinear,
    deflinear2,
    get_primitive_transpose,
    instantiate_zeros,
    is_undefined_primal,
    primitive_jvps,
    primitive_transposes,
    zeros_like_aval,
)

__all__ = [
    "JVPTrace", "JVPTracer", "UndefinedPrimal", "Zero", "add_jaxvals", "add_tangents",
    "defbilinear", "defjvp", "defjvp2", "deflinear", "deflinear2", "get_primitive_transpose",
    "instantiate_zeros", "is_undefined_primal", "primitive_jvps", "primitive_transposes",
    "zeros_like_aval",
]  # fmt: skip
