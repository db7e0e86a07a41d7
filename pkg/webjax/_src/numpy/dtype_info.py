"""Dtype queries of jax.numpy: finfo/iinfo as pure-Python values, promotion and the abstract
scalar hierarchy (`jnp.floating`, `jnp.integer`, ...) for `issubdtype`.

finfo/iinfo attributes follow NumPy's names; values are Python floats/ints rather than NumPy
scalars (there is no NumPy in Pyodide's base install).
"""

from __future__ import annotations

import builtins
from typing import Any

from .. import dtypes
from ..dtypes import DType
from ..ir import scalar
from . import util


# ---- the abstract scalar hierarchy ---------------------------------------------------------------
class _Abstract:
    """`jnp.floating` and friends: abstract dtype categories, matched by dtype kind."""

    def __init__(self, name: str, kinds: str) -> None:
        self.__name__ = name
        self.kinds = kinds

    def __repr__(self) -> str:
        return f"<class 'webjax.numpy.{self.__name__}'>"


generic = _Abstract("generic", "biufc")
number = _Abstract("number", "iufc")
integer = _Abstract("integer", "iu")
signedinteger = _Abstract("signedinteger", "i")
unsignedinteger = _Abstract("unsignedinteger", "u")
inexact = _Abstract("inexact", "fc")
floating = _Abstract("floating", "f")
complexfloating = _Abstract("complexfloating", "c")
_ABSTRACTS = (generic, number, integer, signedinteger, unsignedinteger, inexact, floating,
              complexfloating)  # fmt: skip
_ABSTRACT_BY_NAME = {a.__name__: a for a in _ABSTRACTS}


complex64 = csingle = dtypes._SCALAR_TYPES["complex64"]
complex128 = cdouble = complex_ = dtypes._SCALAR_TYPES["complex128"]

# NumPy's spellings of the scalar types (64-bit ones canonicalize to 32 bits without x64)
float_ = double = dtypes._SCALAR_TYPES["float64"]
single = dtypes._SCALAR_TYPES["float32"]
int_ = dtypes._SCALAR_TYPES["int64"]
uint = dtypes._SCALAR_TYPES["uint64"]
bool_ = dtypes._SCALAR_TYPES["bool"]


def _to_dtype(x: Any) -> DType:
    if isinstance(x, (DType, dtypes.ScalarType, str, type)) or x is None:
        return dtypes.dtype(x)
    if hasattr(x, "dtype"):
        return dtypes.dtype(x.dtype)
    try:  # NumPy dtypes
        return dtypes.dtype(x)
    except TypeError:
        return util.aval(x).dtype


def issubdtype(arg1: Any, arg2: Any) -> bool:
    a = _abstract(arg1)
    if a is not None:  # abstract <= abstract: compare the kinds they cover
        b = _abstract(arg2)
        return b is not None and set(a.kinds) <= set(b.kinds)
    dt = _to_dtype(arg1)
    b = _abstract(arg2)
    if b is not None:
        return dt.kind in b.kinds
    return dt is _to_dtype(arg2)


def _abstract(x: Any) -> _Abstract | None:
    if isinstance(x, _Abstract):
        return x
    if isinstance(x, type) and getattr(x, "__module__", "") == "numpy":
        return _ABSTRACT_BY_NAME.get(x.__name__)
    return None


def isdtype(dtype: Any, kind: Any) -> bool:
    """The array-API spelling: kind is a dtype, a category name, or a tuple of those."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    dt = _to_dtype(dtype)
    names = {
        "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
        "real floating": "f", "complex floating": "c", "numeric": "iufc",
    }  # fmt: skip
    for k in kinds:
        if isinstance(k, str) and k in names:
            if dt.kind in names[k]:
                return True
        elif _to_dtype(k) is dt:
            return True
    return False


# ---- promotion ---------------------------------------------------------------------------------
def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    if not args:
        raise ValueError("at least one array or dtype is required")
    dt, weak = util.result_type(*args)
    return (dt, weak) if return_weak_type_flag else dt


def promote_types(a: Any, b: Any) -> DType:
    # dtypes, never weak: promote_types(int32, float16) is float16 as in JAX's lattice
    da, db = dtypes.dtype(a), dtypes.dtype(b)
    return dtypes.result_type((da, False), (db, False))[0]


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    src, dst = _to_dtype(from_), _to_dtype(to)
    if casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return src is dst
    if src is dst or src.kind == "b":
        return True
    order = "buifc"
    if casting == "same_kind":
        return order.index(src.kind) <= order.index(dst.kind) or (
            src.kind == "u" and dst.kind == "i"
        )
    # safe: every value of src is representable in dst (NumPy's table)
    if src.kind == dst.kind:
        return src.itemsize <= dst.itemsize and {src.name, dst.name} != {"float16", "bfloat16"}
    if src.kind == "u" and dst.kind == "i":
        return src.itemsize < dst.itemsize
    if src.kind in "iu" and dst.kind == "f":  # bfloat16 holds 8-bit integers only
        if src.itemsize == dst.itemsize == 8:  # NumPy's one exception: 64-bit ints to float64
            return True
        return src.itemsize < dst.itemsize and (dst.name != "bfloat16" or src.itemsize == 1)
    if dst.kind == "c" and src.kind in "iuf":  # as casting to the parts' float type
        return can_cast(src, dtypes.component(dst), "safe")
    return False


# ---- finfo / iinfo -----------------------------------------------------------------------------
_FLOAT_FORMATS = {  # name -> (mantissa bits without the implicit one, exponent bits)
    "float16": (10, 5),
    "bfloat16": (7, 8),
    "float32": (23, 8),
    "float64": (52, 11),
}


_FLOAT_FIELDS = (
    "eps", "epsneg", "max", "min", "tiny", "smallest_normal", "smallest_subnormal", "resolution",
)  # fmt: skip


def _numpy_dtype(dt: DType) -> Any:
    """dt as a NumPy dtype (bfloat16 through ml_dtypes), None where NumPy is absent."""
    try:
        import numpy as np
    except ImportError:
        return None
    if dt.name == "bfloat16" or dt in dtypes.NARROW:
        try:
            import ml_dtypes
        except ImportError:
            return None
        return np.dtype(getattr(ml_dtypes, dt.name))
    return np.dtype(dt.name)


def _as_numpy_scalars(info: Any, dt: DType) -> None:
    """JAX's field types where NumPy is present: the limits as NumPy scalars of the type,
    `dtype` a NumPy dtype (without NumPy: Python floats and webjax's DType)."""
    npdt = _numpy_dtype(dt)
    if npdt is None:
        return
    info.dtype = npdt
    for name in _FLOAT_FIELDS:
        setattr(info, name, npdt.type(getattr(info, name)))


class finfo:
    """Machine limits of a float type (NumPy's attribute names, Python float values)."""

    def __init__(self, dtype: Any) -> None:
        dt = _to_dtype(dtype)
        if dt.kind == "c":  # the limits of the parts' float type, as JAX's
            dt = dtypes.component(dt)
        if dt.kind != "f":
            raise ValueError(f"data type {dt} not inexact")
        if dt in dtypes.NARROW:
            self._narrow(dt, dtypes.NARROW_FLOATS[dt.name])
            return
        nmant, nexp = _FLOAT_FORMATS[dt.name]
        self.dtype = dt
        self.bits = dt.bits
        self.nmant, self.nexp = nmant, nexp
        self.maxexp = 1 << (nexp - 1)
        self.minexp = 3 - self.maxexp - 1
        self.machep, self.negep = -nmant, -nmant - 1
        self.eps = 2.0**-nmant
        self.epsneg = 2.0 ** (-nmant - 1)
        self.max = (2.0 - 2.0**-nmant) * 2.0 ** (self.maxexp - 1)
        self.min = -self.max
        self.tiny = self.smallest_normal = 2.0**self.minexp
        self.smallest_subnormal = 2.0 ** (self.minexp - nmant)
        self.precision = int(nmant * 0.30102999566398120)  # floor(nmant * log10(2))
        self.resolution = 10.0**-self.precision
        self.iexp = nexp
        _as_numpy_scalars(self, dt)

    def _narrow(self, dt: DType, f: dtypes.NarrowFloat) -> None:
        """ml_dtypes' fields of a narrow float (as JAX's finfo gives)."""
        self.dtype = dt
        self.bits = dt.bits
        self.nmant, self.nexp, self.iexp = f.nmant, f.nexp, f.nexp
        self.maxexp, self.minexp = f.maxexp, f.minexp
        self.machep, self.negep = -f.nmant, f.negep
        self.eps, self.epsneg = 2.0**-f.nmant, 2.0**f.negep
        self.max = f.max
        self.tiny = self.smallest_normal = 2.0**f.minexp
        self.min = self.tiny if f.unsigned else -f.max
        self.smallest_subnormal = 2.0 ** (f.minexp - f.nmant)
        self.precision = f.precision
        self.resolution = scalar.narrow_float(10.0**-f.precision, f)
        _as_numpy_scalars(self, dt)
        if f.name == "float4_e2m1fn":  # ml_dtypes gives these two as Python floats
            self.eps, self.epsneg = float(self.eps), float(self.epsneg)

    def __repr__(self) -> str:
        if dtypes.dtype(self.dtype) in dtypes.NARROW:  # ml_dtypes' finfo: %g
            return (
                f"finfo(resolution={float(self.resolution):g}, min={float(self.min):g}, "
                f"max={float(self.max):g}, dtype={dtypes.dtype(self.dtype).name})"
            )
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:e}, max={self.max:e}, "
            f"dtype={dtypes.dtype(self.dtype).name})"
        )


class iinfo:
    """Machine limits of an integer type."""

    def __init__(self, int_type: Any) -> None:
        dt = _to_dtype(int_type)
        if dt.kind not in "iu":
            raise ValueError(f"Invalid integer data type {dt.name!r}.")
        self.dtype = dt
        self.kind = dt.kind
        self.bits = dt.bits
        self.min, self.max = dtypes.iinfo_bounds(dt)
        npdt = _numpy_dtype(dt)
        if npdt is not None:
            self.dtype = npdt

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={dtypes.dtype(self.dtype).name})"


del builtins
