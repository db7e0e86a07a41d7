"""Values webjax.onnx knows at trace time, without NumPy: `HostArray` and the operations (named
as NumPy names them) that the operators apply to such values.

Initializers, Constant nodes, shapes and what is computed from them only are `HostArray`s, so
shape arithmetic stays concrete under jit and int64 stays exact (ONNX writes Slice's open end as
INT64_MAX, which 32-bit device integers would truncate). A HostArray is immutable: a webjax
`DType`, a shape and its elements as a flat row-major list of Python values (bool, int, float,
complex), each rounded to its dtype as NumPy would store it (integers wrap, float32/float16/
bfloat16 round to nearest even). A tensor read from raw bytes keeps the bytes and decodes them
only when its elements are asked for, so a weight that only device operators consume goes from
bytes to a device array directly (`__jax_array__`, which webjax's asarray honours).
"""

from __future__ import annotations

import array as _array
import builtins
import cmath
import itertools
import math
import struct
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import reduce
from typing import Any

from webjax._src import core, dtypes
from webjax._src.dispatch import devices as _devices
from webjax._src.dispatch.array import Array, from_host_bytes
from webjax._src.dtypes import DType
from webjax._src.numpy.util import broadcast_shapes

bool_ = dtypes.bool_
int8, int16, int32, int64 = dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64
uint8, uint16, uint32, uint64 = dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64
float16, bfloat16, float32, float64 = (
    dtypes.float16,
    dtypes.bfloat16,
    dtypes.float32,
    dtypes.float64,
)
complex64, complex128 = dtypes.complex64, dtypes.complex128

# host operations run in Python; a value with more elements than this goes to the device instead
# (a weight passing through Transpose or Cast), where it is no shape arithmetic anyway
SMALL = 1 << 16

# array.array letters of each dtype's element bytes (float16/bfloat16: their bit patterns;
# complex: the (real, imaginary) float pairs)
_TYPECODES = {
    "bool": "B", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i",
    "uint32": "I", "int64": "q", "uint64": "Q", "float16": "H", "bfloat16": "H",
    "float32": "f", "float64": "d", "complex64": "f", "complex128": "d",
}  # fmt: skip

_INF = math.inf
_NAN = math.nan
_PAD = -(1 << 62)  # a gather offset that stays negative: the element is the pad value


# ---- element conversions -----------------------------------------------------------------------


def _typed(code: str, data: bytes | memoryview) -> _array.array:
    a = _array.array(code)
    a.frombytes(data)
    if sys.byteorder == "big":
        a.byteswap()
    return a


def _f32(values: Iterable[float]) -> list[float]:
    return _array.array("f", values).tolist()


def _f16(values: list[float]) -> list[float]:
    n = len(values)
    try:
        return list(struct.unpack(f"<{n}e", struct.pack(f"<{n}e", *values)))
    except OverflowError:  # beyond float16's range: infinity, as NumPy rounds it
        return [_f16_one(v) for v in values]


def _f16_one(v: float) -> float:
    try:
        return struct.unpack("<e", struct.pack("<e", v))[0]
    except OverflowError:
        return math.copysign(_INF, v)


def _bf16_bits(values: Iterable[float]) -> list[int]:
    """bfloat16 bit patterns, rounded to nearest even from float32 (NaN stays a quiet NaN)."""
    out = []
    for u in _array.array("I", _array.array("f", values).tobytes()):
        if (u & 0x7FFFFFFF) > 0x7F800000:
            out.append(0x7FC0 | ((u >> 16) & 0x8000))
        else:
            out.append(((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF)
    return out


def _bf16_values(bits: Iterable[int]) -> list[float]:
    return _array.array("f", _array.array("I", [b << 16 for b in bits]).tobytes()).tolist()


def _to_int(v: Any) -> int:
    if isinstance(v, complex):
        v = v.real
    if isinstance(v, float):
        return int(v) if math.isfinite(v) else -(1 << 63)
    return int(v)


def _wrap(values: list[int], dt: DType) -> list[int]:
    lo, hi = dtypes.iinfo_bounds(dt)
    if all(lo <= v <= hi for v in values):
        return values
    span = 1 << dt.bits
    return [((v - lo) % span) + lo for v in values]


def normalize(values: Iterable[Any], dt: DType) -> list[Any]:
    """`values` as elements of `dt` (Python values, rounded or wrapped as NumPy stores them)."""
    kind = dt.kind
    if kind == "b":
        return [bool(v) for v in values]
    if kind in "iu":
        return _wrap([_to_int(v) for v in values], dt)
    if kind == "f":
        vals = [v.real if isinstance(v, complex) else float(v) for v in values]
        if dt is float32:
            return _f32(vals)
        if dt is float16:
            return _f16(vals)
        if dt is bfloat16:
            return _bf16_values(_bf16_bits(vals))
        return vals
    cvals = [complex(v) for v in values]
    if dt is complex64:
        parts = _f32(itertools.chain.from_iterable((c.real, c.imag) for c in cvals))
        return [complex(r, i) for r, i in zip(parts[0::2], parts[1::2])]
    return cvals


def decode(raw: bytes | memoryview, dt: DType) -> list[Any]:
    """Little-endian element bytes of `dt` as Python values."""
    code = _TYPECODES[dt.name]
    if dt is bool_:
        return [b != 0 for b in bytes(raw)]
    if dt is float16:
        n = len(raw) // 2
        return list(struct.unpack(f"<{n}e", raw))
    if dt is bfloat16:
        return _bf16_values(_typed("H", raw))
    values = _typed(code, raw).tolist()
    if dt.kind == "c":
        return [complex(r, i) for r, i in zip(values[0::2], values[1::2])]
    return values


def encode(values: list[Any], dt: DType) -> bytes:
    """Elements of `dt` (already normalized) as little-endian bytes."""
    if dt is float16:
        return struct.pack(f"<{len(values)}e", *values)
    if dt is bfloat16:
        a = _array.array("H", _bf16_bits(values))
    elif dt.kind == "c":
        a = _array.array(
            _TYPECODES[dt.name], itertools.chain.from_iterable((c.real, c.imag) for c in values)
        )
    else:
        a = _array.array(_TYPECODES[dt.name], values)
    if sys.byteorder == "big":
        a.byteswap()
    return a.tobytes()


def _narrow_bytes(raw: bytes, dt: DType) -> tuple[bytes, DType]:
    """Element bytes of `dt` as the 32-bit type webjax makes of a 64-bit one without x64."""
    target = dtypes.canonicalize(dt)
    if target is dt:
        return raw, dt
    if dt.kind in "iu":  # integers wrap: the low (first, little-endian) 4 bytes of every 8
        return memoryview(raw).cast("B").cast("I")[0::2].tobytes(), target
    narrow = _array.array("f", _typed("d", raw))  # float64 and complex128 parts to float32
    if sys.byteorder == "big":
        narrow.byteswap()
    return narrow.tobytes(), target


# ---- HostArray ---------------------------------------------------------------------------------


def _prod(shape: Iterable[int]) -> int:
    return math.prod(shape)


def _strides(shape: Sequence[int]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def _gather(data: list[Any], offsets: list[list[int]], fill: Any = None) -> list[Any]:
    """The elements at every combination of per-axis offsets (row-major over the axes); a
    negative total offset (a `_PAD` among them) picks `fill`."""
    flat = [0]
    for axis in offsets:
        flat = [o + k for o in flat for k in axis]
    if fill is None:
        return [data[o] for o in flat]
    return [data[o] if o >= 0 else fill for o in flat]


class HostArray:
    """An immutable array on the host: `dtype` (a webjax DType), `shape`, flat `data`."""

    __slots__ = ("_data", "_raw", "dtype", "shape")

    dtype: DType
    shape: tuple[int, ...]

    def __init__(
        self,
        data: list[Any] | None,
        shape: tuple[int, ...],
        dtype: DType,
        raw: bytes | memoryview | None = None,
    ):
        self._data = data
        self._raw = raw
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        if data is not None and len(data) != _prod(self.shape):
            raise ValueError(f"{len(data)} elements for shape {self.shape}")

    @classmethod
    def from_bytes(cls, raw: bytes | memoryview, shape: tuple[int, ...], dt: DType) -> HostArray:
        """A tensor of little-endian element bytes, decoded when its elements are needed."""
        want = _prod(shape) * dt.itemsize
        if len(raw) < want:
            raise ValueError(f"{len(raw)} bytes for {shape} elements of {dt}")
        return cls(None, shape, dt, raw=bytes(raw[:want]))

    @property
    def data(self) -> list[Any]:
        """The elements, flat and row-major."""
        if self._data is None:
            data = decode(self._raw, self.dtype)  # type: ignore[arg-type]
            self._data = data
        return self._data

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return _prod(self.shape)

    @property
    def T(self) -> HostArray:
        return transpose(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError(f"item() of an array of {self.size} elements")
        return self.data[0]

    def tolist(self) -> Any:
        """The elements as nested lists (a Python scalar for a 0-d array)."""
        if not self.shape:
            return self.data[0]
        return _nest(self.data, self.shape)

    def reshape(self, *shape: Any) -> HostArray:
        return reshape(self, shape[0] if len(shape) == 1 else shape)

    def astype(self, dt: Any) -> HostArray:
        return astype(self, dt)

    def ravel(self) -> HostArray:
        return reshape(self, (-1,))

    def __getitem__(self, key: Any) -> HostArray:
        return _getitem(self, key)

    def __bool__(self) -> bool:
        return bool(self.item())

    def __int__(self) -> int:
        return _to_int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer arrays are indices, not {self.dtype}")
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __repr__(self) -> str:
        return f"HostArray({self.tolist()!r}, dtype={self.dtype.name})"

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        """A NumPy array (for callers that have NumPy: tests, users' code)."""
        import numpy as np

        if self.dtype is bfloat16:
            import ml_dtypes

            np_dtype = np.dtype(ml_dtypes.bfloat16)
        else:
            np_dtype = np.dtype(self.dtype.name)
        out = np.array(self.data, dtype=np_dtype).reshape(self.shape)
        return out if dtype is None else out.astype(dtype)

    def __jax_array__(self) -> Array:
        """A webjax array on the default device (from the element bytes, with no list)."""
        dt = self.dtype
        raw = self._raw if self._raw is not None else encode(self.data, dt)
        if dt is bool_ and self._raw is not None:
            raw = bytes(raw).translate(bytes([0] + [1] * 255))
        raw, target = _narrow_bytes(bytes(raw), dt)
        return from_host_bytes(raw, self.shape, target, _devices.default_device())

    # arithmetic: Python scalars and HostArrays only; anything else (a webjax array, a tracer)
    # answers NotImplemented so that its own reflected operator runs
    def _bin(self, other: Any, fn: Callable[[Any, Any], Any], swap: bool = False) -> Any:
        if not isinstance(other, (HostArray, bool, int, float, complex)):
            return NotImplemented
        return fn(other, self) if swap else fn(self, other)

    def __add__(self, o: Any) -> Any:
        return self._bin(o, add)

    def __radd__(self, o: Any) -> Any:
        return self._bin(o, add, True)

    def __sub__(self, o: Any) -> Any:
        return self._bin(o, subtract)

    def __rsub__(self, o: Any) -> Any:
        return self._bin(o, subtract, True)

    def __mul__(self, o: Any) -> Any:
        return self._bin(o, multiply)

    def __rmul__(self, o: Any) -> Any:
        return self._bin(o, multiply, True)

    def __truediv__(self, o: Any) -> Any:
        return self._bin(o, divide)

    def __rtruediv__(self, o: Any) -> Any:
        return self._bin(o, divide, True)

    def __floordiv__(self, o: Any) -> Any:
        return self._bin(o, floor_divide)

    def __rfloordiv__(self, o: Any) -> Any:
        return self._bin(o, floor_divide, True)

    def __mod__(self, o: Any) -> Any:
        return self._bin(o, mod)

    def __rmod__(self, o: Any) -> Any:
        return self._bin(o, mod, True)

    def __pow__(self, o: Any) -> Any:
        return self._bin(o, power)

    def __rpow__(self, o: Any) -> Any:
        return self._bin(o, power, True)

    def __and__(self, o: Any) -> Any:
        return self._bin(o, bitwise_and)

    def __rand__(self, o: Any) -> Any:
        return self._bin(o, bitwise_and, True)

    def __or__(self, o: Any) -> Any:
        return self._bin(o, bitwise_or)

    def __ror__(self, o: Any) -> Any:
        return self._bin(o, bitwise_or, True)

    def __xor__(self, o: Any) -> Any:
        return self._bin(o, bitwise_xor)

    def __rxor__(self, o: Any) -> Any:
        return self._bin(o, bitwise_xor, True)

    def __lt__(self, o: Any) -> Any:
        return self._bin(o, less)

    def __le__(self, o: Any) -> Any:
        return self._bin(o, less_equal)

    def __gt__(self, o: Any) -> Any:
        return self._bin(o, greater)

    def __ge__(self, o: Any) -> Any:
        return self._bin(o, greater_equal)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return self._bin(o, equal)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return self._bin(o, not_equal)

    __hash__ = None  # type: ignore[assignment]

    def __neg__(self) -> HostArray:
        return negative(self)

    def __pos__(self) -> HostArray:
        return self

    def __abs__(self) -> HostArray:
        return absolute(self)

    def __invert__(self) -> HostArray:
        return invert(self)


def _nest(flat: list[Any], shape: tuple[int, ...]) -> list[Any]:
    if len(shape) == 1:
        return list(flat)
    step = _prod(shape[1:])
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def is_small(*values: Any) -> bool:
    return all(v is None or (isinstance(v, HostArray) and v.size <= SMALL) for v in values)


# ---- construction --------------------------------------------------------------------------


def _nested(values: Any) -> tuple[tuple[int, ...], list[Any]]:
    if isinstance(values, HostArray):
        return values.shape, values.data
    if isinstance(values, (list, tuple)):
        if not values:
            return (0,), []
        parts = [_nested(v) for v in values]
        inner = parts[0][0]
        if any(p[0] != inner for p in parts):
            raise ValueError("ragged nested sequence")
        return (len(values), *inner), [x for p in parts for x in p[1]]
    return (), [values]


def _scalar_dtype(v: Any) -> DType:
    if isinstance(v, bool):
        return bool_
    if isinstance(v, int):
        return int64
    if isinstance(v, float):
        return float64
    if isinstance(v, complex):
        return complex128
    raise TypeError(f"{type(v).__name__} is not a number")


def _dtype_of_values(values: list[Any]) -> DType:
    if not values:
        return float64
    return reduce(promote_types, (_scalar_dtype(v) for v in values))


def asarray(x: Any, dtype: Any = None) -> HostArray:
    """`x` (a HostArray, Python scalars or nested lists, a concrete webjax array, or anything
    with `tolist()` and `dtype`, such as a NumPy array) as a HostArray."""
    dt = None if dtype is None else dtypes.dtype(dtype)
    if isinstance(x, HostArray):
        return x if dt is None else astype(x, dt)
    if isinstance(x, core.Tracer):
        raise TypeError("a traced value is not known at trace time")
    if hasattr(x, "tolist") and hasattr(x, "dtype"):  # a webjax or NumPy array
        src = dtypes.dtype(x.dtype.name)
        shape = tuple(x.shape)
        data = x.tolist()
        flat = _nested(data)[1] if shape else [data]
        out = HostArray(normalize(flat, src), shape, src)
        return out if dt is None else astype(out, dt)
    shape, flat = _nested(x)
    dt = dt or _dtype_of_values(flat)
    return HostArray(normalize(flat, dt), shape, dt)


def array(x: Any, dtype: Any = None) -> HostArray:
    return asarray(x, dtype)


def full(shape: Sequence[int], value: Any, dtype: Any = None) -> HostArray:
    if isinstance(value, HostArray):
        dt = value.dtype if dtype is None else dtypes.dtype(dtype)
        value = value.item()
    else:
        dt = _scalar_dtype(value) if dtype is None else dtypes.dtype(dtype)
    shape = tuple(int(d) for d in shape)
    (v,) = normalize([value], dt)
    return HostArray([v] * _prod(shape), shape, dt)


def zeros(shape: Sequence[int], dtype: Any = float64) -> HostArray:
    return full(shape, 0, dtype)


def ones(shape: Sequence[int], dtype: Any = float64) -> HostArray:
    return full(shape, 1, dtype)


def ones_like(x: HostArray, dtype: Any = None) -> HostArray:
    return full(x.shape, 1, x.dtype if dtype is None else dtype)


def zeros_like(x: HostArray, dtype: Any = None) -> HostArray:
    return full(x.shape, 0, x.dtype if dtype is None else dtype)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> HostArray:
    if stop is None:
        start, stop = 0, start
    values = [start, stop, step]
    if dtype is None:
        dt = _dtype_of_values([v.item() if isinstance(v, HostArray) else v for v in values])
    else:
        dt = dtypes.dtype(dtype)
    s, e, d = (v.item() if isinstance(v, HostArray) else v for v in values)
    n = builtins.max(math.ceil((e - s) / d), 0)
    return HostArray(normalize([s + i * d for i in range(n)], dt), (n,), dt)


def astype(x: HostArray, dt: Any) -> HostArray:
    dt = dtypes.dtype(dt)
    if dt is x.dtype:
        return x
    if dt is bool_ and x.dtype.kind in "fc":
        return HostArray([v != 0 for v in x.data], x.shape, dt)
    return HostArray(normalize(x.data, dt), x.shape, dt)


def view(x: HostArray, dt: Any) -> HostArray:
    """The same bytes read as `dt` (its last axis rescaled where the item sizes differ)."""
    dt = dtypes.dtype(dt)
    raw = encode(x.data, x.dtype) if x.dtype is not bool_ else bytes(x.data)
    shape = list(x.shape)
    if shape:
        shape[-1] = shape[-1] * x.dtype.itemsize // dt.itemsize
    return HostArray(decode(raw, dt), tuple(shape), dt)


# ---- promotion and elementwise -------------------------------------------------------------

_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote_types(a: DType, b: DType) -> DType:
    """NumPy's result type of two array dtypes (for the pairs ONNX graphs combine)."""
    if a is b:
        return a
    ka, kb = _KIND_ORDER[a.kind], _KIND_ORDER[b.kind]
    if ka != kb:
        hi, lo = (a, b) if ka > kb else (b, a)
        if hi.kind == "f" and lo.kind in "iu" and lo.itemsize >= hi.itemsize:
            return float64
        return hi
    if a.kind == b.kind:
        if a.kind == "f" and {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    if unsigned.itemsize >= 8:
        return float64
    return dtypes.dtype(f"int{unsigned.bits * 2}")


def _weak_dtype(v: Any, other: DType) -> DType:
    """A Python scalar's dtype beside an array of `other` (NumPy 2's weak scalars)."""
    k = _scalar_dtype(v)
    if _KIND_ORDER[k.kind] <= _KIND_ORDER[other.kind]:
        return other
    return k


def _operands(*xs: Any) -> tuple[list[HostArray], DType]:
    arrays = [x for x in xs if isinstance(x, HostArray)]
    if arrays:
        dt = reduce(promote_types, (a.dtype for a in arrays))
        for x in xs:
            if not isinstance(x, HostArray):
                dt = _weak_dtype(x, dt)
    else:
        dt = _dtype_of_values(list(xs))
    out = []
    for x in xs:
        if isinstance(x, HostArray):
            out.append(x)
        else:
            out.append(HostArray(normalize([x], dt), (), dt))
    return out, dt


def _spread(x: HostArray, shape: tuple[int, ...]) -> list[Any]:
    """x's elements broadcast to `shape`, flat."""
    if x.shape == shape:
        return x.data
    n = _prod(shape)
    if x.size == 1:
        return x.data * n
    pad = len(shape) - x.ndim
    src = (1,) * pad + x.shape
    strides = _strides(src)
    offsets = [
        [0] * d if s == 1 else [i * st for i in range(d)] for s, d, st in zip(src, shape, strides)
    ]
    return _gather(x.data, offsets)


def _map(fn: Callable[..., Any], xs: list[HostArray], out_dt: DType) -> HostArray:
    shape = broadcast_shapes(*(x.shape for x in xs))
    cols = [_spread(x, shape) for x in xs]
    if len(cols) == 1:
        values = [fn(v) for v in cols[0]]
    else:
        values = [fn(*vs) for vs in zip(*cols)]
    return HostArray(normalize(values, out_dt), shape, out_dt)


def _arith(fn: Callable[..., Any], *xs: Any, out: Callable[[DType], DType] | None = None) -> Any:
    arrays, dt = _operands(*xs)
    return _map(fn, arrays, out(dt) if out else dt)


def _compare(fn: Callable[[Any, Any], bool], a: Any, b: Any) -> HostArray:
    arrays, _ = _operands(a, b)
    return _map(fn, arrays, bool_)


def _fdiv(a: Any, b: Any) -> Any:
    try:
        return a / b
    except ZeroDivisionError:
        if isinstance(a, complex) or isinstance(b, complex):
            return complex(_NAN, _NAN)
        if a == 0 or a != a:
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def _is_int(dt: DType) -> bool:
    return dt.kind in "iub"


def add(a: Any, b: Any) -> HostArray:
    return _arith(lambda x, y: x + y, a, b)


def subtract(a: Any, b: Any) -> HostArray:
    return _arith(lambda x, y: x - y, a, b)


def multiply(a: Any, b: Any) -> HostArray:
    arrays, dt = _operands(a, b)
    if dt is bool_:
        return _map(lambda x, y: x and y, arrays, dt)
    return _map(lambda x, y: x * y, arrays, dt)


def divide(a: Any, b: Any) -> HostArray:
    return _arith(_fdiv, a, b, out=lambda dt: float64 if _is_int(dt) else dt)


true_divide = divide


def _floordiv(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a // b if b else 0
    if b == 0:
        return _fdiv(a, b)
    q = math.floor(a / b) if math.isfinite(a / b) else a / b
    return float(q)


def floor_divide(a: Any, b: Any) -> HostArray:
    return _arith(_floordiv, a, b)


def _mod(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a % b if b else 0
    try:
        r = math.fmod(a, b)
    except ValueError:
        return _NAN
    if r and (r < 0) != (b < 0):
        r += b
    return r


def mod(a: Any, b: Any) -> HostArray:
    return _arith(_mod, a, b)


remainder = mod


def _fmod(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        if not b:
            return 0
        r = builtins.abs(a) % builtins.abs(b)
        return -r if a < 0 else r
    try:
        return math.fmod(a, b)
    except ValueError:
        return _NAN


def fmod(a: Any, b: Any) -> HostArray:
    return _arith(_fmod, a, b)


def _pow(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        if b < 0:
            return 0 if builtins.abs(a) != 1 else a**b
        return a**b
    if isinstance(a, complex) or isinstance(b, complex):
        return complex(a) ** complex(b)
    try:
        return math.pow(a, b)
    except ValueError:
        return _INF if a == 0 else _NAN
    except OverflowError:
        return _INF if a > 0 or float(b) % 2 == 0 else -_INF


def power(a: Any, b: Any) -> HostArray:
    return _arith(_pow, a, b)


def _maximum(a: Any, b: Any) -> Any:
    return a if (a >= b or a != a) else b


def _minimum(a: Any, b: Any) -> Any:
    return a if (a <= b or a != a) else b


def maximum(a: Any, b: Any) -> HostArray:
    return _arith(_maximum, a, b)


def minimum(a: Any, b: Any) -> HostArray:
    return _arith(_minimum, a, b)


def equal(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: x == y, a, b)


def not_equal(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: x != y, a, b)


def less(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: x < y, a, b)


def less_equal(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: x <= y, a, b)


def greater(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: x > y, a, b)


def greater_equal(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: x >= y, a, b)


def logical_and(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: bool(x) and bool(y), a, b)


def logical_or(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: bool(x) or bool(y), a, b)


def logical_xor(a: Any, b: Any) -> HostArray:
    return _compare(lambda x, y: bool(x) != bool(y), a, b)


def bitwise_and(a: Any, b: Any) -> HostArray:
    return _arith(lambda x, y: x & y, a, b)


def bitwise_or(a: Any, b: Any) -> HostArray:
    return _arith(lambda x, y: x | y, a, b)


def bitwise_xor(a: Any, b: Any) -> HostArray:
    return _arith(lambda x, y: x ^ y, a, b)


def left_shift(a: Any, b: Any) -> HostArray:
    arrays, dt = _operands(a, b)
    bits = dt.bits
    return _map(lambda x, y: x << y if 0 <= y < bits else 0, arrays, dt)


def right_shift(a: Any, b: Any) -> HostArray:
    arrays, dt = _operands(a, b)
    bits = dt.bits
    return _map(lambda x, y: x >> y if 0 <= y < bits else (-1 if x < 0 else 0), arrays, dt)


def where(c: Any, a: Any, b: Any) -> HostArray:
    (ca,), _ = _operands(c)
    (aa, ba), dt = _operands(a, b)
    shape = broadcast_shapes(ca.shape, aa.shape, ba.shape)
    cs, xs, ys = (_spread(v, shape) for v in (ca, astype(aa, dt), astype(ba, dt)))
    return HostArray([x if k else y for k, x, y in zip(cs, xs, ys)], shape, dt)


def clip(x: HostArray, lo: Any, hi: Any) -> HostArray:
    out = x
    if lo is not None:
        out = maximum(out, lo)
    if hi is not None:
        out = minimum(out, hi)
    return out


# -- unary


def _unary(fn: Callable[[Any], Any], x: Any, out_dt: DType | None = None) -> HostArray:
    (a,), dt = _operands(x)
    return HostArray(normalize([fn(v) for v in a.data], out_dt or dt), a.shape, out_dt or dt)


def _float_fn(
    real: Callable[[float], float],
    complex_fn: Callable[[complex], complex] | None,
    domain: Callable[[float], float] = lambda v: _NAN,
    overflow: Callable[[float], float] = lambda v: _INF,
) -> Callable[[Any], HostArray]:
    def safe(v: float) -> float:
        try:
            return real(v)
        except ValueError:
            return domain(v)
        except OverflowError:
            return overflow(v)

    def apply(x: Any) -> HostArray:
        (a,), dt = _operands(x)
        if dt.kind == "c":
            if complex_fn is None:
                raise NotImplementedError(f"{real.__name__} of complex values on the host")
            return _unary(complex_fn, a)
        out = dt if dt.kind == "f" else float64
        return _unary(safe, a, out)

    return apply


sqrt = _float_fn(math.sqrt, cmath.sqrt)
exp = _float_fn(math.exp, cmath.exp)
log = _float_fn(math.log, cmath.log, domain=lambda v: -_INF if v == 0 else _NAN)
sin = _float_fn(math.sin, cmath.sin)
cos = _float_fn(math.cos, cmath.cos)
tan = _float_fn(math.tan, cmath.tan)
arcsin = _float_fn(math.asin, cmath.asin)
arccos = _float_fn(math.acos, cmath.acos)
arctan = _float_fn(math.atan, cmath.atan)
sinh = _float_fn(math.sinh, cmath.sinh, overflow=lambda v: math.copysign(_INF, v))
cosh = _float_fn(math.cosh, cmath.cosh)
tanh = _float_fn(math.tanh, cmath.tanh)
arcsinh = _float_fn(math.asinh, cmath.asinh)
arccosh = _float_fn(math.acosh, cmath.acosh)


def _atanh_domain(v: float) -> float:
    return math.copysign(_INF, v) if builtins.abs(v) == 1 else _NAN


arctanh = _float_fn(math.atanh, cmath.atanh, domain=_atanh_domain)
erf = _float_fn(math.erf, None)


def _round_value(fn: Callable[[float], int]) -> Callable[[Any], Any]:
    def r(v: Any) -> Any:
        if isinstance(v, float):
            return float(fn(v)) if math.isfinite(v) else v
        return v

    return r


def floor(x: Any) -> HostArray:
    return _unary(_round_value(math.floor), x)


def ceil(x: Any) -> HostArray:
    return _unary(_round_value(math.ceil), x)


def round(x: Any) -> HostArray:
    return _unary(_round_value(lambda v: builtins.round(v)), x)


def absolute(x: Any) -> HostArray:
    return _unary(builtins.abs, x)


abs = absolute


def negative(x: Any) -> HostArray:
    return _unary(lambda v: -v, x)


def _sign(v: Any) -> Any:
    if isinstance(v, complex):
        return v / builtins.abs(v) if v else 0j
    if v != v:
        return v
    return (v > 0) - (v < 0)


def sign(x: Any) -> HostArray:
    return _unary(_sign, x)


def reciprocal(x: Any) -> HostArray:
    (a,), dt = _operands(x)
    if _is_int(dt):
        return _unary(lambda v: int(1 / v) if v else 0, a)
    return _unary(lambda v: _fdiv(1.0, v), a)


def logical_not(x: Any) -> HostArray:
    return _unary(lambda v: not v, x, bool_)


def invert(x: Any) -> HostArray:
    (a,), dt = _operands(x)
    if dt is bool_:
        return _unary(lambda v: not v, a)
    return _unary(lambda v: ~v, a)


def isnan(x: Any) -> HostArray:
    return _unary(lambda v: v != v, x, bool_)


def isinf(x: Any) -> HostArray:
    return _unary(
        lambda v: (
            cmath.isinf(v) if isinstance(v, complex) else isinstance(v, float) and math.isinf(v)
        ),
        x,
        bool_,
    )


def isfinite(x: Any) -> HostArray:
    return _unary(lambda v: cmath.isfinite(v) if isinstance(v, complex) else math.isfinite(v), x)


# ---- shapes and data movement --------------------------------------------------------------


def shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape)


def ndim(x: Any) -> int:
    return len(x.shape)


def reshape(x: HostArray, shape: Any) -> HostArray:
    if isinstance(shape, int):
        shape = (shape,)
    dims = [int(d) for d in shape]
    if dims.count(-1) > 1:
        raise ValueError("reshape: more than one -1")
    if -1 in dims:
        known = _prod(d for d in dims if d != -1)
        dims[dims.index(-1)] = x.size // known if known else 0
    if _prod(dims) != x.size:
        raise ValueError(f"cannot reshape an array of {x.size} elements into shape {tuple(dims)}")
    return HostArray(x._data, tuple(dims), x.dtype, raw=x._raw)


def ravel(x: HostArray) -> HostArray:
    return reshape(x, (-1,))


def _axes(axis: Any, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a + rank if a < 0 else a for a in axis)


def squeeze(x: HostArray, axis: Any = None) -> HostArray:
    if axis is None:
        drop = {i for i, d in enumerate(x.shape) if d == 1}
    else:
        drop = set(_axes(axis, x.ndim))
        if any(x.shape[a] != 1 for a in drop):
            raise ValueError("squeeze: an axis of size other than 1")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in drop))


def expand_dims(x: HostArray, axis: Any) -> HostArray:
    rank = x.ndim + (1 if isinstance(axis, int) else len(axis))
    new = set(_axes(axis, rank))
    dims = iter(x.shape)
    return reshape(x, tuple(1 if i in new else next(dims) for i in range(rank)))


def _offsets(x: HostArray) -> list[list[int]]:
    return [[i * s for i in range(d)] for d, s in zip(x.shape, _strides(x.shape))]


def transpose(x: HostArray, axes: Any = None) -> HostArray:
    perm = tuple(range(x.ndim))[::-1] if axes is None else _axes(tuple(axes), x.ndim)
    if perm == tuple(range(x.ndim)):
        return x
    offs = _offsets(x)
    shape = tuple(x.shape[p] for p in perm)
    return HostArray(_gather(x.data, [offs[p] for p in perm]), shape, x.dtype)


def moveaxis(x: HostArray, source: int, destination: int) -> HostArray:
    order = [i for i in range(x.ndim) if i != _axes(source, x.ndim)[0]]
    order.insert(_axes(destination, x.ndim)[0], _axes(source, x.ndim)[0])
    return transpose(x, order)


def broadcast_to(x: HostArray, shape: Sequence[int]) -> HostArray:
    shape = tuple(int(d) for d in shape)
    if broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast {x.shape} to {shape}")
    return HostArray(_spread(x, shape), shape, x.dtype)


def _getitem(x: HostArray, key: Any) -> HostArray:
    if isinstance(key, (HostArray, list)):
        idx = asarray(key)
        if idx.dtype is bool_:
            return take(ravel(x) if idx.ndim > 1 else x, nonzero(idx)[0], axis=0)
        return take(x, idx, axis=0)
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        at = key.index(Ellipsis)
        named = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
        key = key[:at] + (slice(None),) * (x.ndim - named) + key[at + 1 :]
    offs = _offsets(x)
    out_offsets: list[list[int]] = []
    shape: list[int] = []
    axis = 0
    for k in key:
        if k is None:
            out_offsets.append([0])
            shape.append(1)
            continue
        if axis >= x.ndim:
            raise IndexError(f"too many indices for an array of rank {x.ndim}")
        dim = x.shape[axis]
        if isinstance(k, slice):
            picked = range(*k.indices(dim))
            out_offsets.append([offs[axis][i] for i in picked])
            shape.append(len(picked))
        else:
            i = int(k)
            if not -dim <= i < dim:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {dim}")
            out_offsets.append([offs[axis][i % dim]])
        axis += 1
    for a in range(axis, x.ndim):
        out_offsets.append(offs[a])
        shape.append(x.shape[a])
    return HostArray(_gather(x.data, out_offsets), tuple(shape), x.dtype)


def take(x: HostArray, indices: Any, axis: int | None = None) -> HostArray:
    if axis is None:
        x, axis = ravel(x), 0
    idx = asarray(indices)
    axis = _axes(axis, x.ndim)[0]
    dim = x.shape[axis]
    offs = _offsets(x)
    picked = []
    for i in idx.data:
        i = int(i)
        if not -dim <= i < dim:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {dim}")
        picked.append(offs[axis][i % dim])
    out_offsets = offs[:axis] + [picked] + offs[axis + 1 :]
    shape = x.shape[:axis] + idx.shape + x.shape[axis + 1 :]
    return HostArray(_gather(x.data, out_offsets), shape, x.dtype)


def concatenate(xs: Sequence[HostArray], axis: int = 0) -> HostArray:
    arrays, dt = _operands(*xs)
    arrays = [astype(a, dt) for a in arrays]
    first = arrays[0]
    axis = _axes(axis, first.ndim)[0]
    for a in arrays:
        if a.ndim != first.ndim or any(
            a.shape[i] != first.shape[i] for i in range(a.ndim) if i != axis
        ):
            raise ValueError(f"concatenate: shapes {[b.shape for b in arrays]} differ")
    outer = _prod(first.shape[:axis])
    chunks = [_prod(a.shape[axis:]) for a in arrays]
    data: list[Any] = []
    for o in range(outer):
        for a, c in zip(arrays, chunks):
            data.extend(a.data[o * c : (o + 1) * c])
    shape = list(first.shape)
    shape[axis] = builtins.sum(a.shape[axis] for a in arrays)
    return HostArray(data, tuple(shape), dt)


def stack(xs: Sequence[HostArray], axis: int = 0) -> HostArray:
    rank = xs[0].ndim + 1
    return concatenate([expand_dims(asarray(x), _axes(axis, rank)[0]) for x in xs], axis)


def flip(x: HostArray, axis: Any = None) -> HostArray:
    flipped = set(_axes(axis, x.ndim))
    offs = [o[::-1] if i in flipped else o for i, o in enumerate(_offsets(x))]
    return HostArray(_gather(x.data, offs), x.shape, x.dtype)


def tile(x: HostArray, reps: Sequence[int]) -> HostArray:
    reps = tuple(int(r) for r in reps)
    if len(reps) > x.ndim:
        x = reshape(x, (1,) * (len(reps) - x.ndim) + x.shape)
    reps = (1,) * (x.ndim - len(reps)) + reps
    offs = [o * r for o, r in zip(_offsets(x), reps)]
    return HostArray(_gather(x.data, offs), tuple(d * r for d, r in zip(x.shape, reps)), x.dtype)


def _pad_source(p: int, n: int, mode: str) -> int | None:
    if 0 <= p < n:
        return p
    if mode == "constant":
        return None
    if mode == "edge":
        return builtins.min(builtins.max(p, 0), n - 1)
    if mode == "wrap":
        return p % n
    if mode == "reflect":
        if n == 1:
            return 0
        period = 2 * (n - 1)
        r = p % period
        return r if r < n else period - r
    raise ValueError(f"pad mode {mode!r}")


def pad(
    x: HostArray, widths: Sequence[Sequence[int]], mode: str = "constant", constant_values: Any = 0
) -> HostArray:
    offs = _offsets(x)
    out_offsets = []
    shape = []
    for d, ((lo, hi), axis_offs) in enumerate(zip(widths, offs)):
        n = x.shape[d]
        if n == 0 and mode != "constant" and lo + hi:
            raise ValueError(f"pad mode {mode!r} of an empty axis")
        row = []
        for p in range(-lo, n + hi):
            src = _pad_source(p, n, mode)
            row.append(_PAD if src is None else axis_offs[src])
        out_offsets.append(row)
        shape.append(lo + n + hi)
    (fill,) = normalize([asarray(constant_values).item()], x.dtype)
    return HostArray(_gather(x.data, out_offsets, fill), tuple(shape), x.dtype)


def nonzero(x: HostArray) -> tuple[HostArray, ...]:
    strides = _strides(x.shape)
    hits = [i for i, v in enumerate(x.data) if v]
    out = []
    for d, s in zip(x.shape, strides):
        out.append(HostArray([(i // s) % d for i in hits], (len(hits),), int64))
    return tuple(out)


# ---- reductions ----------------------------------------------------------------------------


def _reduce(
    x: HostArray, axis: Any, keepdims: bool, fn: Callable[[list[Any]], Any], out_dt: DType
) -> HostArray:
    axes = _axes(axis, x.ndim)
    keep = [i for i in range(x.ndim) if i not in axes]
    moved = transpose(x, keep + list(axes))
    group = _prod(x.shape[a] for a in axes)
    outer = _prod(x.shape[i] for i in keep)
    data = moved.data
    values = [fn(data[o * group : (o + 1) * group]) for o in range(outer)]
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(x.shape[i] for i in keep)
    return HostArray(normalize(values, out_dt), shape, out_dt)


def _sum_dtype(dt: DType) -> DType:
    return int64 if dt is bool_ else dt


def sum(x: HostArray, axis: Any = None, keepdims: bool = False) -> HostArray:
    return _reduce(x, axis, keepdims, builtins.sum, _sum_dtype(x.dtype))


def prod(x: HostArray, axis: Any = None, keepdims: bool = False) -> HostArray:
    return _reduce(x, axis, keepdims, lambda v: math.prod(v), _sum_dtype(x.dtype))


def mean(x: HostArray, axis: Any = None, keepdims: bool = False) -> HostArray:
    out = float64 if _is_int(x.dtype) else x.dtype
    return _reduce(x, axis, keepdims, lambda v: _fdiv(builtins.sum(v), len(v)), out)


def _extreme(fn: Callable[[Any, Any], Any]) -> Callable[[list[Any]], Any]:
    def pick(values: list[Any]) -> Any:
        if not values:
            raise ValueError("a maximum or minimum of no elements")
        return reduce(fn, values)

    return pick


def max(x: HostArray, axis: Any = None, keepdims: bool = False) -> HostArray:
    return _reduce(x, axis, keepdims, _extreme(_maximum), x.dtype)


def min(x: HostArray, axis: Any = None, keepdims: bool = False) -> HostArray:
    return _reduce(x, axis, keepdims, _extreme(_minimum), x.dtype)


def _arg(better: Callable[[Any, Any], bool]) -> Callable[[list[Any]], int]:
    def pick(values: list[Any]) -> int:
        best = 0
        for i, v in enumerate(values):
            if v != v:  # the first NaN wins, as NumPy's
                return i
            if better(v, values[best]):
                best = i
        return best

    return pick


def argmax(x: HostArray, axis: int, keepdims: bool = False) -> HostArray:
    return _reduce(x, (axis,), keepdims, _arg(lambda a, b: a > b), int64)


def argmin(x: HostArray, axis: int, keepdims: bool = False) -> HostArray:
    return _reduce(x, (axis,), keepdims, _arg(lambda a, b: a < b), int64)


def _scan(x: HostArray, axis: int, fn: Callable[[Any, Any], Any], dt: DType) -> HostArray:
    axis = _axes(axis, x.ndim)[0]
    order = [i for i in range(x.ndim) if i != axis] + [axis]
    moved = transpose(x, order)
    n = x.shape[axis]
    data = moved.data
    out: list[Any] = []
    for o in range(0, len(data), n or 1):
        out.extend(itertools.accumulate(data[o : o + n], fn))
    back = [order.index(i) for i in range(x.ndim)]
    return transpose(HostArray(normalize(out, dt), moved.shape, dt), back)


def cumsum(x: HostArray, axis: int) -> HostArray:
    return _scan(x, axis, lambda a, b: a + b, _sum_dtype(x.dtype))


def cumprod(x: HostArray, axis: int) -> HostArray:
    return _scan(x, axis, lambda a, b: a * b, _sum_dtype(x.dtype))


def linspace(start: float, stop: float, num: int) -> list[float]:
    """`num` evenly spaced floats from start to stop inclusive (NumPy's formula)."""
    if num == 1:
        return [float(start)]
    step = (stop - start) / (num - 1)
    out = [start + i * step for i in range(num)]
    if num > 1:
        out[-1] = float(stop)
    return out
