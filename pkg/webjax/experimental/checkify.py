"""webjax.experimental.checkify: functionalised runtime checks
(`jax.experimental.checkify`)."""

from webjax._src.experimental.checkify import (
    DivisionByZeroError,
    Error,
    ErrorCategory,
    FailedCheckError,
    JaxRuntimeError,
    NaNError,
    OOBError,
    all_checks,
    automatic_checks,
    check,
    check_error,
    checkify,
    debug_check,
    div_checks,
    float_checks,
    index_checks,
    init_error,
    nan_checks,
    user_checks,
)

__all__ = [
    "DivisionByZeroError", "Error", "ErrorCategory", "FailedCheckError", "JaxRuntimeError",
    "NaNError", "OOBError", "all_checks", "automatic_checks", "check", "check_error",
    "checkify", "debug_check", "div_checks", "float_checks", "index_checks", "init_error",
    "nan_checks", "user_checks",
]  # fmt: skip
