"""webjax.custom_derivatives: user-defined derivative rules (jax.custom_derivatives)."""

from webjax._src.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)

__all__ = [
    "CustomVJPPrimal", "SymbolicZero", "custom_vjp_primal_tree_values", "zero_from_primal",
    "closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p", "custom_vjp",
    "custom_vjp_call_p",
]  # fmt: skip
