"""Dtypes without NumPy, and JAX's type-promotion lattice with weak types.

A `DType` is a small immutable value (name, kind, itemsize). It compares equal to its name and,
when NumPy is installed, to the equivalent NumPy dtype, so `x.dtype == np.float32` works as in
JAX. Promotion follows JAX's lattice (jax/_src/dtypes.py): Python scalars are *weak* and take
the other operand's type (`int32_array + 2.5 -> float32`, `uint8_array * 2 -> uint8`).
"""

from __future__ import annotations

import builtins
from typing import Any

from . import config


class DType:
    """An array element type. Interned: one object per name."""

    __slots__ = ("name", "kind", "itemsize")
    _by_name: dict[str, DType] = {}

    name: str
    kind: str  # 'b' bool, 'i' signed int, 'u' unsigned int, 'f' float, 'c' complex
    itemsize: int

    def __new__(cls, name: str, kind: str, itemsize: int) -> DType:
        self = object.__new__(cls)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "itemsize", itemsize)
        cls._by_name[name] = self
        return self

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("DType is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (dtype, (self.name,))

    @property
    def bits(self) -> int:
        return self.itemsize * 8

    @property
    def type(self) -> ScalarType:
        return _SCALAR_TYPES[self.name]

    @property
    def dtype(self) -> Any:
        """The equivalent NumPy dtype, so that NumPy accepts a DType wherever it takes a dtype
        (`np.zeros(n, x.dtype)`, `np.finfo(x.dtype)`, ...): NumPy reads an object's `.dtype`.
        AttributeError when NumPy (or, for bfloat16, ml_dtypes) is not installed."""
        npdt = _numpy_dtype(self)
        if npdt is None:
            raise AttributeError(f"no NumPy dtype for {self.name} (NumPy is not installed)")
        return npdt

    def __repr__(self) -> str:
        return f"dtype('{self.name}')"

    def __str__(self) -> str:
        return self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self is other
        try:
            return dtype(other) is self
        except (TypeError, ValueError):
            return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)


bool_ = DType("bool", "b", 1)
int8 = DType("int8", "i", 1)
int16 = DType("int16", "i", 2)
int32 = DType("int32", "i", 4)
int64 = DType("int64", "i", 8)
uint8 = DType("uint8", "u", 1)
uint16 = DType("uint16", "u", 2)
uint32 = DType("uint32", "u", 4)
uint64 = DType("uint64", "u", 8)
float16 = DType("float16", "f", 2)
bfloat16 = DType("bfloat16", "f", 2)
float32 = DType("float32", "f", 4)
float64 = DType("float64", "f", 8)
complex64 = DType("complex64", "c", 8)
complex128 = DType("complex128", "c", 16)

_ALIASES = {
    "bool_": "bool",
    "?": "bool",
    "b1": "bool",
    "i1": "int8",
    "i2": "int16",
    "i4": "int32",
    "i8": "int64",
    "u1": "uint8",
    "u2": "uint16",
    "u4": "uint32",
    "u8": "uint64",
    "f2": "float16",
    "f4": "float32",
    "f8": "float64",
    "float": "float64",
    "int": "int64",
    "half": "float16",
    "single": "float32",
    "double": "float64",
    "c8": "complex64",
    "c16": "complex128",
    "complex": "complex128",
    "csingle": "complex64",
    "cdouble": "complex128",
}


class ScalarType:
    """`jnp.float32` and friends: usable as a dtype and callable like JAX's scalar types."""

    def __init__(self, dt: DType) -> None:
        self._dt = dt
        self.__name__ = dt.name if dt.name != "bool" else "bool_"

    @property
    def dtype(self) -> Any:
        """NumPy's dtype when NumPy is installed, as JAX's `jnp.float32.dtype` (so that
        `np.dtype(jnp.float32)` and `np.zeros(n, jnp.float32)` work), else the DType."""
        npdt = _numpy_dtype(self._dt)
        return self._dt if npdt is None else npdt

    def __repr__(self) -> str:
        return f"<class 'webjax.numpy.{self.__name__}'>"

    def __call__(self, x: Any = 0) -> Any:
        if _array_constructor is None:
            raise RuntimeError("webjax.numpy is not loaded")
        return _array_constructor(x, dtype=self._dt)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScalarType):
            return other._dt is self._dt
        return self._dt == other

    def __hash__(self) -> int:
        return hash(self._dt)


_NUMPY_DTYPES: dict[str, Any] = {}


def _numpy_dtype(dt: DType) -> Any:
    """NumPy's dtype for `dt`, or None without NumPy (or ml_dtypes, for bfloat16)."""
    if dt.name not in _NUMPY_DTYPES:
        try:
            import numpy as np

            if dt.name == "bfloat16":
                import ml_dtypes

                _NUMPY_DTYPES[dt.name] = np.dtype(ml_dtypes.bfloat16)
            else:
                _NUMPY_DTYPES[dt.name] = np.dtype(dt.name)
        except ImportError:
            _NUMPY_DTYPES[dt.name] = None
    return _NUMPY_DTYPES[dt.name]


# ml_dtypes' narrow types, which JAX has as `jnp.float8_e4m3fn` etc. webjax has no arrays of
# them yet: the names exist (libraries mention them at import, e.g. as defaults of fp8 layers)
# and resolve to NumPy's dtype where ml_dtypes is installed; any array of one raises.
NARROW_ML_DTYPES = (
    "float4_e2m1fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "int2",
    "int4",
    "uint2",
    "uint4",
)


def unsupported_narrow(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"webjax has no {name} arrays: ml_dtypes' narrow float and int types are not supported "
        "yet (use float16, bfloat16 or int8/uint8)"
    )


class NarrowScalarType:
    """`jnp.float8_e4m3fn` and the other narrow types: a name, comparable and hashable, with
    NumPy's dtype where ml_dtypes is installed; calling it (making an array) raises."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    @property
    def dtype(self) -> Any:
        try:
            import ml_dtypes
            import numpy as np
        except ImportError:
            missing = f"no NumPy dtype for {self.__name__} (ml_dtypes is not installed)"
            raise AttributeError(missing) from None
        return np.dtype(getattr(ml_dtypes, self.__name__))

    def __repr__(self) -> str:
        return f"<class 'webjax.numpy.{self.__name__}'>"

    def __call__(self, x: Any = 0) -> Any:
        raise unsupported_narrow(self.__name__)


NARROW_SCALAR_TYPES = {name: NarrowScalarType(name) for name in NARROW_ML_DTYPES}

# Set by the numpy layer: `jnp.float32(3)` builds an array (dtypes sits below that layer).
_array_constructor: Any = None

_SCALAR_TYPES = {d.name: ScalarType(d) for d in list(DType._by_name.values())}


def dtype(x: Any) -> DType:
    """Resolve anything dtype-like (DType, scalar type, name, Python type, NumPy dtype)."""
    if isinstance(x, DType):
        return x
    if isinstance(x, ScalarType):
        return x._dt
    if isinstance(x, NarrowScalarType):
        raise unsupported_narrow(x.__name__)
    if isinstance(x, str):
        name = _ALIASES.get(x, x)
        if name in DType._by_name:
            return DType._by_name[name]
        if name in NARROW_SCALAR_TYPES:
            raise unsupported_narrow(name)
        raise TypeError(f"data type {x!r} not understood")
    if x is builtins.bool:
        return bool_
    if x is builtins.int:
        return int64 if config.x64_enabled() else int32
    if x is builtins.float:
        return float64 if config.x64_enabled() else float32
    if x is builtins.complex:
        return complex128 if config.x64_enabled() else complex64
    if x is None:
        return default_float()
    if isinstance(x, type):  # NumPy scalar types (np.float32) and the like
        try:
            import numpy as np

            return dtype(np.dtype(x).name)
        except (ImportError, TypeError):
            raise TypeError(f"data type {x!r} not understood") from None
    # NumPy dtypes, or objects with a .dtype (arrays).
    np_name = getattr(x, "name", None)
    if isinstance(np_name, str) and np_name in DType._by_name:
        return DType._by_name[np_name]
    if isinstance(np_name, str) and np_name in NARROW_SCALAR_TYPES:
        raise unsupported_narrow(np_name)
    inner = getattr(x, "dtype", None)
    if inner is not None and inner is not x:
        return dtype(inner)
    if isinstance(x, type) and getattr(x, "__module__", "") == "numpy":
        import numpy as np

        return dtype(np.dtype(x))
    raise TypeError(f"data type {x!r} not understood")


def default_int() -> DType:
    return int64 if config.x64_enabled() else int32


def default_float() -> DType:
    return float64 if config.x64_enabled() else float32


def default_complex() -> DType:
    return complex128 if config.x64_enabled() else complex64


def canonicalize(dt: DType) -> DType:
    """Map 64-bit types to 32-bit ones unless x64 is enabled (JAX's canonicalize_dtype)."""
    if config.x64_enabled():
        return dt
    return _NARROW.get(dt, dt)


_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def canonicalize_user(x: Any, fun_name: str | None = None) -> DType:
    """A dtype a user asked for, canonicalized; asking explicitly for a 64-bit type without x64
    gives JAX's UserWarning (Python's float/int/complex mean the default types, silently)."""
    dt = dtype(x)
    out = canonicalize(dt)
    if out is not dt:
        import warnings

        where = f" requested in {fun_name}" if fun_name else ""
        warnings.warn(
            f"Explicitly requested dtype {dt.name}{where} is not available, and will be "
            f"truncated to dtype {out.name}. To enable more dtypes, set the jax_enable_x64 "
            "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
            "https://github.com/jax-ml/jax#current-gotchas for more.",
            UserWarning,
            stacklevel=3,
        )
    return out


def is_complex(dt: DType) -> bool:
    return dt.kind == "c"


def component(dt: DType) -> DType:
    """The real type of a complex type's parts (complex64 -> float32); other types map to
    themselves."""
    if dt.kind == "c":
        return float64 if dt is complex128 else float32
    return dt


def to_complex(dt: DType) -> DType:
    """The complex type whose parts are `dt` (float64 -> complex128, else complex64)."""
    if dt.kind == "c":
        return dt
    return complex128 if dt is float64 else complex64


def to_inexact(dt: DType) -> DType:
    """The float type integers and bools compute in (JAX's to_inexact_dtype): float32 for bool
    and integers of up to 32 bits, float64 for 64-bit ones (float32 without x64)."""
    if dt.kind in "fc":
        return dt
    return canonicalize(float64) if dt.itemsize == 8 else float32


def is_float(dt: DType) -> bool:
    return dt.kind == "f"


def is_int(dt: DType) -> bool:
    return dt.kind in "iu"


def is_unsigned(dt: DType) -> bool:
    return dt.kind == "u"


# ---- promotion lattice ------------------------------------------------------------------------
# Nodes are DTypes plus the two weak pseudo-types. An edge a -> b means b can hold a.
_I_WEAK = "int*"
_F_WEAK = "float*"
_C_WEAK = "complex*"
_LATTICE: dict[Any, list[Any]] = {
    bool_: [_I_WEAK],
    _I_WEAK: [uint8, int8],
    uint8: [uint16, int16],
    uint16: [uint32, int32],
    uint32: [uint64, int64],
    uint64: [_F_WEAK],
    int8: [int16],
    int16: [int32],
    int32: [int64],
    int64: [_F_WEAK],
    _F_WEAK: [float16, bfloat16, _C_WEAK],
    float16: [float32],
    bfloat16: [float32],
    float32: [float64, complex64],
    float64: [complex128],
    _C_WEAK: [complex64],
    complex64: [complex128],
    complex128: [],
}


def _upper_bounds(node: Any) -> set[Any]:
    seen = {node}
    todo = [node]
    while todo:
        for nxt in _LATTICE[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


_UB = {n: _upper_bounds(n) for n in _LATTICE}
_ORDER = list(_LATTICE)


def _lub(a: Any, b: Any) -> Any:
    if a is b:
        return a
    key = (a, b)
    out = _LUB.get(key)
    if out is None:
        out = _LUB[key] = _compute_lub(a, b)
    return out


_LUB: dict[tuple[Any, Any], Any] = {}


def _compute_lub(a: Any, b: Any) -> Any:
    common = _UB[a] & _UB[b]
    # The least upper bound is the common bound that every other common bound lies above.
    for n in _ORDER:
        if n in common and common <= _UB[n]:
            return n
    raise TypeError(f"no common type for {a} and {b}")


def _node(dt: DType, weak: bool) -> Any:
    if weak and dt.kind in "iu":
        return _I_WEAK
    if weak and dt.kind == "f":
        return _F_WEAK
    if weak and dt.kind == "c":
        return _C_WEAK
    return dt


def result_type(*args: tuple[DType, bool]) -> tuple[DType, bool]:
    """Promote (dtype, weak_type) pairs; returns the canonical result dtype and its weakness."""
    node = _node(*args[0])
    for a in args[1:]:
        node = _lub(node, _node(*a))
    weak_default = {_I_WEAK: default_int, _F_WEAK: default_float, _C_WEAK: default_complex}
    if node in weak_default:
        out, weak = weak_default[node](), True
    else:
        out, weak = canonicalize(node), all(w for _, w in args) and node is not bool_
    if len(args) > 1 and config.numpy_dtype_promotion.value is config.NumpyDtypePromotion.STRICT:
        _check_strict(args, out)
    return out, weak


def _check_strict(args: tuple[tuple[DType, bool], ...], out: DType) -> None:
    """jax_numpy_dtype_promotion='strict': operands of different dtypes do not combine, nor do
    weak values (Python scalars) of a higher kind; weak values that fit the dtype do."""
    strong = [d for d, w in args if not w]
    if not strong or all(d == out for d in strong):
        return
    kinds = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}
    names: list[str] = []
    for d, w in args:
        nm = f"<class '{kinds.get(d.kind, d.name)}'>" if w else d.name
        if nm not in names:
            names.append(nm)
    raise TypePromotionError(
        f"Input dtypes {tuple(names)} have no available implicit dtype promotion path when "
        "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output "
        "type, or set jax_numpy_dtype_promotion=standard."
    )


def python_scalar_dtype(x: Any) -> DType:
    if isinstance(x, builtins.bool):
        return bool_
    if isinstance(x, builtins.int):
        return default_int()
    if isinstance(x, builtins.float):
        return default_float()
    if isinstance(x, complex):
        return default_complex()
    raise TypeError(f"{type(x).__name__} is not a valid JAX scalar type")


def iinfo_bounds(dt: DType) -> tuple[int, int]:
    if dt.kind == "u":
        return 0, (1 << dt.bits) - 1
    if dt.kind == "i":
        return -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
    raise TypeError(f"{dt} is not an integer type")


# ---- struct formats ---------------------------------------------------------------------------
# Python `struct` letter of one element's value, by dtype name (use little-endian, "<"). float16
# is IEEE binary16 ('e'). bfloat16 has no letter: it is the upper half of a float32 (pack as
# "f", keep bytes 2..3); complex dtypes are (real, imaginary) pairs of "f" or "d".
STRUCT_FORMATS = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "int32": "i",
    "int64": "q",
    "uint8": "B",
    "uint16": "H",
    "uint32": "I",
    "uint64": "Q",
    "float16": "e",
    "float32": "f",
    "float64": "d",
}


def float0() -> Any:
    """JAX's tangent type of integer values: NumPy's zero-size void dtype named float0."""
    import numpy as np

    return np.dtype([("float0", np.void, 0)])


# ---- jax.dtypes: extended dtypes (typed PRNG keys) ---------------------------------------------
class ExtendedDType:
    """The base class of dtypes that are not array element types of NumPy's (JAX's extended
    dtypes): a library derives its own from it (a dataclass with `type`, `_rules`, `name`).
    webjax computes on one kind of them, PRNG key dtypes."""

    type: Any
    name: str


class TypePromotionError(ValueError):
    """Raised when dtype promotion is not allowed (strict promotion mode)."""


class extended:
    """The abstract category of extended dtypes (typed PRNG keys belong to it)."""


class prng_key(extended):
    """The abstract category of PRNG key dtypes (`key<fry>`)."""


class KeyDType:
    """The dtype of typed keys: `key<fry>` (threefry2x32), an extended dtype as in JAX."""

    name = "key<fry>"
    kind = "V"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDType) or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = KeyDType()


def is_key_dtype(x: Any) -> bool:
    return isinstance(x, KeyDType) or x == "key<fry>"


def canonicalize_dtype(x: Any, allow_extended_dtype: bool = False) -> Any:
    if allow_extended_dtype and is_key_dtype(x):
        return x
    return canonicalize(dtype(x))


def itemsize_bits(x: Any) -> int:
    return dtype(x).itemsize * 8
