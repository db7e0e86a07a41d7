"""`jax.dtypes.issubdtype` and `scalar_type_of`: jnp's dtype queries (`numpy.dtype_info`) that
also know the extended dtypes of `dtypes` (typed PRNG keys are `prng_key`s, which are `extended`).
"""

from __future__ import annotations

from typing import Any

from .dtypes import extended, is_key_dtype, prng_key
from .numpy import dtype_info


def issubdtype(a: Any, b: Any) -> bool:
    """jnp.issubdtype, plus the extended categories: key dtypes are `prng_key`s."""
    a_key = is_key_dtype(a) if not isinstance(a, type) else a in (extended, prng_key)
    if isinstance(b, type) and issubclass(b, extended):
        if isinstance(a, type) and issubclass(a, extended):
            return issubclass(a, b)
        return a_key
    if is_key_dtype(b):
        return a_key
    if a_key:
        return False
    return dtype_info.issubdtype(a, b)


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) matching a value's dtype."""
    kind = dtype_info._to_dtype(x).kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


__all__ = ["issubdtype", "scalar_type_of"]
