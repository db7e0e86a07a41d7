"""webjax.errors: JAX's error types (`jax.errors`)."""

from webjax._src.core import (
    ConcretizationTypeError,
    JAXIndexError,
    JaxRuntimeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError",
    "JAXIndexError",
    "JaxRuntimeError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
