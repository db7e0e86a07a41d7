"""webjax.dtypes: dtype utilities (jax.dtypes)."""

from webjax._src.dtype_queries import issubdtype, scalar_type_of
from webjax._src.dtypes import (
    _SCALAR_TYPES,
    DType,
    TypePromotionError,
    canonicalize,
    canonicalize_dtype,
    dtype,
    extended,
    itemsize_bits,
    prng_key,
)
from webjax._src.dtypes import float0 as _float0
from webjax._src.numpy.dtype_info import finfo, iinfo, result_type

bfloat16 = _SCALAR_TYPES["bfloat16"]  # the scalar type, as jnp.bfloat16


def __getattr__(name: str) -> object:
    if name == "float0":  # a NumPy dtype: made on first use, so importing needs no NumPy
        return _float0()
    raise AttributeError(f"module 'webjax.dtypes' has no attribute {name!r}")


__all__ = [
    "DType",
    "TypePromotionError",
    "bfloat16",
    "canonicalize",
    "canonicalize_dtype",
    "dtype",
    "extended",
    "finfo",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "result_type",
    "scalar_type_of",
]
