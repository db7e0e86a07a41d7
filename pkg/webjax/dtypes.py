"""webjax.dtypes: dtype utilities (jax.dtypes)."""

from __future__ import annotations

from typing import Any

from webjax._src import dtypes as _dt
from webjax._src.dtypes import DType, canonicalize, dtype
from webjax._src.numpy import dtype_info as _info
from webjax._src.numpy import util as _util
from webjax._src.numpy.dtype_info import finfo, iinfo

bfloat16 = _dt._SCALAR_TYPES["bfloat16"]


class TypePromotionError(ValueError):
    """Raised when dtype promotion is not allowed (strict promotion mode)."""


class extended:
    """The abstract category of extended dtypes (typed PRNG keys belong to it)."""


class prng_key(extended):
    """The abstract category of PRNG key dtypes (`key<fry>`)."""


def _is_key_dtype(x: Any) -> bool:
    from webjax._src.random.samplers import KeyDType

    return isinstance(x, KeyDType) or x == "key<fry>"


def issubdtype(a: Any, b: Any) -> bool:
    """jnp.issubdtype, plus the extended categories: key dtypes are `prng_key`s."""
    a_key = _is_key_dtype(a) if not isinstance(a, type) else a in (extended, prng_key)
    if isinstance(b, type) and issubclass(b, extended):
        if isinstance(a, type) and issubclass(a, extended):
            return issubclass(a, b)
        return a_key
    if _is_key_dtype(b):
        return a_key
    if a_key:
        return False
    return _info.issubdtype(a, b)


def canonicalize_dtype(x: Any, allow_extended_dtype: bool = False) -> Any:
    if allow_extended_dtype and _is_key_dtype(x):
        return x
    return canonicalize(dtype(x))


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The promoted dtype of arrays, scalars and dtypes (weak Python scalars defer)."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    dt, weak = _util.result_type(*args)
    return (dt, weak) if return_weak_type_flag else dt


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) matching a value's dtype."""
    kind = _info._to_dtype(x).kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def itemsize_bits(x: Any) -> int:
    return dtype(x).itemsize * 8


def __getattr__(name: str) -> object:
    if name == "float0":  # a NumPy dtype: made on first use, so importing needs no NumPy
        return _dt.float0()
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
