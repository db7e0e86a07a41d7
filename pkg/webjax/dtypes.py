"""webjax.dtypes: dtype utilities (jax.dtypes)."""

from webjax._src.dtypes import DType, canonicalize, dtype, result_type

__all__ = ["DType", "canonicalize", "dtype", "result_type"]
