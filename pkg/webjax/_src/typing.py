"""`jax.typing`: annotations for array-like arguments and dtype-like values."""

from __future__ import annotations

from typing import Any, Union

from .dispatch.basearray import Array
from .dtypes import DType

try:  # NumPy values are array-likes too where NumPy is installed
    import numpy as _np

    _NUMPY: tuple[Any, ...] = (_np.ndarray, _np.bool_, _np.number, _np.dtype)
except ImportError:  # pragma: no cover (Pyodide without numpy)
    _NUMPY = ()

ArrayLike: Any = Union[(Array, bool, int, float, complex, *_NUMPY[:3])]
DTypeLike: Any = Union[(str, type, DType, *_NUMPY[3:])]

__all__ = ["Array", "ArrayLike", "DTypeLike"]
