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
        return _BITS.get(self, self.itemsize * 8)

    @property
    def type(self) -> Any:
        """The scalar type: NumPy's when NumPy is installed, as JAX's dtypes (a class, so that
        `issubclass(x.dtype.type, np.complexfloating)` and `np.iscomplexobj(x)` work), else
        webjax's `jnp.float32` and friends."""
        npdt = _numpy_dtype(self)
        return _SCALAR_TYPES[self.name] if npdt is None else npdt.type

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
        if self in NARROW:  # ml_dtypes' dtypes print unquoted
            return f"dtype({self.name})"
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
    """NumPy's dtype for `dt`, or None without NumPy (or ml_dtypes, for bfloat16 and the
    narrow types)."""
    if dt.name not in _NUMPY_DTYPES:
        try:
            import numpy as np

            if dt.name == "bfloat16" or dt.name in NARROW_ML_DTYPES:
                import ml_dtypes

                _NUMPY_DTYPES[dt.name] = np.dtype(getattr(ml_dtypes, dt.name))
            else:
                _NUMPY_DTYPES[dt.name] = np.dtype(dt.name)
        except ImportError:
            _NUMPY_DTYPES[dt.name] = None
    return _NUMPY_DTYPES[dt.name]


# ml_dtypes' narrow types, as JAX has them (`jnp.float8_e4m3fn`, `jnp.int4`, ...): real array
# element types, one byte each (`itemsize` 1, as ml_dtypes'), `bits` their own width. Kernels
# never see them: an array of one is stored in a carrier (`carrier`: float32 for the floats,
# int8/uint8 for the ints), and every op computes in float16/int32 (`compute_type`) and rounds
# (floats) or wraps (ints) back to the narrow type (webjax._src.dispatch.lowering).
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


class NarrowFloat:
    """The format of a narrow float: `nmant` stored mantissa bits, `nexp` exponent bits, `minexp`
    the exponent of the smallest normal, `maxexp` the first power of two past the largest finite
    value `max`, `negep` log2 of finfo's epsneg, `precision` finfo's decimal digits; past `max`
    a value becomes inf, NaN or `max` (`overflow` "inf", "nan", "sat"); `signed_zero` False for
    the fnuz formats (no -0); e8m0fnu is powers of two only (`unsigned`)."""

    __slots__ = ("name", "nmant", "nexp", "minexp", "maxexp", "negep", "max", "precision",
                 "overflow", "signed_zero", "unsigned")  # fmt: skip

    def __init__(self, name: str, *fields: Any) -> None:
        nmant, nexp, minexp, maxexp, negep, mx, precision, overflow, signed_zero, *rest = fields
        self.name, self.nmant, self.nexp, self.minexp = name, nmant, nexp, minexp
        self.maxexp, self.negep, self.max, self.precision = maxexp, negep, mx, precision
        self.overflow, self.signed_zero, self.unsigned = overflow, signed_zero, bool(rest)


# name: nmant, nexp, minexp, maxexp, negep, max, precision, overflow, signed_zero[, unsigned]
_NARROW_FLOAT_TABLE = (
    NarrowFloat("float4_e2m1fn", 1, 2, 0, 3, -1, 6.0, 0, "sat", True),
    NarrowFloat("float8_e3m4", 4, 3, -2, 4, -5, 15.5, 1, "inf", True),
    NarrowFloat("float8_e4m3", 3, 4, -6, 8, -4, 240.0, 1, "inf", True),
    NarrowFloat("float8_e4m3b11fnuz", 3, 4, -10, 5, -4, 30.0, 1, "nan", False),
    NarrowFloat("float8_e4m3fn", 3, 4, -6, 9, -4, 448.0, 1, "nan", True),
    NarrowFloat("float8_e4m3fnuz", 3, 4, -7, 8, -4, 240.0, 1, "nan", False),
    NarrowFloat("float8_e5m2", 2, 5, -14, 16, -3, 57344.0, 1, "inf", True),
    NarrowFloat("float8_e5m2fnuz", 2, 5, -15, 16, -3, 57344.0, 1, "nan", False),
    NarrowFloat("float8_e8m0fnu", 0, 8, -127, 128, -1, 2.0**127, 1, "nan", False, True),
)  # fmt: skip
NARROW_FLOATS = {f.name: f for f in _NARROW_FLOAT_TABLE}
NARROW_INT_BITS = {"int2": 2, "int4": 4, "uint2": 2, "uint4": 4}

for _name in NARROW_FLOATS:
    DType(_name, "f", 1)
for _name in NARROW_INT_BITS:
    DType(_name, "u" if _name.startswith("u") else "i", 1)
NARROW = frozenset(DType._by_name[n] for n in NARROW_ML_DTYPES)
_BITS = {DType._by_name[n]: b for n, b in NARROW_INT_BITS.items()}
_BITS[DType._by_name["float4_e2m1fn"]] = 4


def is_narrow(dt: Any) -> bool:
    return dt in NARROW


def carrier(dt: DType) -> DType:
    """The type a buffer holds `dt`'s values in: float32 for the narrow floats, int8/uint8 for
    the narrow ints, `dt` itself for every other type."""
    if dt not in NARROW:
        return dt
    if dt.kind == "f":
        return float32
    return int8 if dt.kind == "i" else uint8


def compute_type(dt: DType) -> DType:
    """The type ops on a narrow type compute in, as XLA's do: float16 for the narrow floats
    (each result rounded to float16, then to the narrow type), float32 for e8m0fnu (whose range
    float16 lacks), int32 for the narrow ints; other types map to themselves."""
    if dt not in NARROW:
        return dt
    if dt.kind == "f":
        return float32 if dt.name == "float8_e8m0fnu" else float16
    return int32


# Set by the numpy layer: `jnp.float32(3)` builds an array (dtypes sits below that layer).
_array_constructor: Any = None

_SCALAR_TYPES = {d.name: ScalarType(d) for d in list(DType._by_name.values())}
NARROW_SCALAR_TYPES = {name: _SCALAR_TYPES[name] for name in NARROW_ML_DTYPES}


def dtype(x: Any) -> DType:
    """Resolve anything dtype-like (DType, scalar type, name, Python type, NumPy dtype)."""
    if isinstance(x, DType):
        return x
    if isinstance(x, ScalarType):
        return x._dt
    if isinstance(x, str):
        name = _ALIASES.get(x, x)
        if name in DType._by_name:
            return DType._by_name[name]
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
    # the narrow types: reached from the weak types (and bool) only, and leading nowhere, so they
    # combine with no other type (JAX's lattice)
    _I_WEAK: [uint8, int8, *(DType._by_name[n] for n in NARROW_INT_BITS)],
    **{DType._by_name[n]: [] for n in NARROW_INT_BITS},
    uint8: [uint16, int16],
    uint16: [uint32, int32],
    uint32: [uint64, int64],
    uint64: [_F_WEAK],
    int8: [int16],
    int16: [int32],
    int32: [int64],
    int64: [_F_WEAK],
    _F_WEAK: [*(DType._by_name[n] for n in NARROW_FLOATS), float16, bfloat16, _C_WEAK],
    **{DType._by_name[n]: [] for n in NARROW_FLOATS},
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
    """The least upper bound of two nodes, None where they have none."""
    if a is b:
        return a
    key = (a, b)
    if key not in _LUB:
        _LUB[key] = _compute_lub(a, b)
    return _LUB[key]


_LUB: dict[tuple[Any, Any], Any] = {}


def _compute_lub(a: Any, b: Any) -> Any | None:
    common = _UB[a] & _UB[b]
    # The least upper bound is the common bound that every other common bound lies above.
    for n in _ORDER:
        if n in common and common <= _UB[n]:
            return n
    return None


def _no_path(nodes: tuple[Any, ...]) -> TypePromotionError:
    """JAX's error for operands no type holds (a narrow type with any other)."""
    names = tuple(f"<class '{n[:-1]}'>" if isinstance(n, str) else n.name for n in nodes)
    if any(isinstance(n, DType) and n.name.startswith("float8") for n in nodes):
        why, to = "8-bit floats", "float32"
    elif any(isinstance(n, DType) and n.name.startswith("float4") for n in nodes):
        why, to = "4-bit floats", "float32"
    else:
        why, to = "1-bit, 2-bit and 4-bit integers", "int32"
    return TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path. To avoid "
        f"unintended promotion, {why} do not support implicit promotion. If you'd like your "
        f"inputs to be promoted to another type, you can do so explicitly using e.g. "
        f"x.astype('{to}')"
    )


def _node(dt: DType, weak: bool) -> Any:
    if dt in NARROW:
        return dt
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
        nxt = _lub(node, _node(*a))
        if nxt is None:
            raise _no_path(tuple(_node(*b) for b in args))
        node = nxt
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
