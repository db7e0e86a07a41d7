"""webjax.custom_derivatives: user-defined derivative rules (jax.custom_derivatives)."""

from webjax._src.custom_derivatives import (
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
)

__all__ = [
    "closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p", "custom_vjp",
    "custom_vjp_call_p",
]  # fmt: skip
