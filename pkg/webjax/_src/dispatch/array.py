"""The concrete `Array`: an abstract value, a device, and a lazy kernel expression.

Python owns arrays: when an Array is garbage collected its buffers go with it (no `.ref`).
Operators and methods are attached by the numpy layer (webjax._src.numpy.array_methods), as in
JAX, so this module stays about values and devices.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from typing import Any

from .. import core, dtypes, printing
from .. import sharding as sharding_mod
from ..core import ShapedArray
from ..dtypes import DType
from ..ir import exp as E
from ..ir import scalar, view
from ..ir.exp import Exp
from ..ir.ops import Op
from ..runtime.backend import Device
from . import lazy


class Array:
    __slots__ = ("aval", "_device", "_exp", "_deleted", "_committed", "_sharding", "__weakref__")
    __array_priority__ = 100

    aval: ShapedArray
    _device: Device
    _exp: Exp | None  # value of flat element IDX(size); None for empty arrays

    def __init__(self, aval: ShapedArray, device: Device, exp: Exp | None) -> None:
        self.aval = aval
        self._device = device
        self._exp = exp
        self._deleted = False
        self._committed = False  # placed explicitly (device_put with a device)
        self._sharding: sharding_mod.Sharding | None = None  # as placed (None: its device)

    # ---- metadata ------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> DType:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return math.prod(self.aval.shape)

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> Device:
        return self._device

    def devices(self) -> set[Device]:
        return {self._device}

    @property
    def committed(self) -> bool:
        return self._committed

    @property
    def sharding(self) -> sharding_mod.Sharding:
        """The sharding the array was placed with (device_put, jit's out_shardings, shard_map),
        else the whole array on its device."""
        if self._sharding is not None:
            return self._sharding
        return sharding_mod.SingleDeviceSharding(self._device)

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    @property
    def addressable_shards(self) -> list[sharding_mod.Shard]:
        """Every device's piece: one device here, holding the whole array."""
        self._check_alive()
        return [sharding_mod.Shard(self._device, self.sharding, self.shape, self)]

    @property
    def global_shards(self) -> list[sharding_mod.Shard]:
        return self.addressable_shards

    def addressable_data(self, index: int) -> Array:
        return self.addressable_shards[index].data

    # ---- buffers and reads ---------------------------------------------------------------
    def _literal_value(self) -> Any:
        """The Python scalar of a 0-d constant (jaxprs inline it as a literal), else None."""
        e = self._exp
        if self.aval.shape == () and e is not None and e.op is Op.CONST:
            return e.arg
        return None

    def _check_alive(self) -> None:
        if self._deleted:
            raise RuntimeError("Array has been deleted.")

    def _buffer(self) -> lazy.LazyBuffer | None:
        """The (possibly pending) buffer holding this array's elements in row-major order."""
        self._check_alive()
        e = self._exp
        if e is None:
            return None
        if e.op is Op.LOAD:  # already a whole buffer, read in order (the common case)
            lb = e.arg
            if type(lb) is lazy.LazyBuffer and e.src[0].op is Op.IDX and e.src[0].arg == lb.size:
                return lb
        lb = lazy.as_buffer(e, storage(self.aval)[1], self._device)
        self._exp = lazy.load_all(lb)
        return lb

    def _flat_values(self) -> list[Any]:
        lb = self._buffer()
        if lb is None:
            return []
        return lazy.unpack(lazy.read_bytes(lb), self.dtype, self.size)

    async def _flat_values_async(self) -> list[Any]:
        lb = self._buffer()
        if lb is None:
            return []
        return lazy.unpack(await lazy.read_bytes_async(lb), self.dtype, self.size)

    def block_until_ready(self) -> Array:
        lb = self._buffer()
        if lb is not None:
            lazy.execute(lb)
            lb.device.backend.synchronize()
        return self

    async def block_until_ready_async(self) -> Array:
        lb = self._buffer()
        if lb is not None:
            lazy.execute(lb)
            await lb.device.backend.synchronize_async()
        return self

    def delete(self) -> None:
        """Release this array's device memory now (later use raises)."""
        self._deleted = True
        self._exp = None

    def is_deleted(self) -> bool:
        return self._deleted

    # ---- Python conversions --------------------------------------------------------------
    def tolist(self) -> Any:
        return _nest(self._flat_values(), self.shape)

    async def tolist_async(self) -> Any:
        return _nest(await self._flat_values_async(), self.shape)

    def item(self, *args: Any) -> Any:
        """The element as a Python scalar: of a size-1 array, at a flat index, or at a
        multi-index (one int per axis, or one tuple of them), with NumPy's errors."""
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        if not args:
            if self.size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            return self._flat_values()[0]
        index = [operator.index(a) for a in args]
        if len(index) == 1:
            (flat,) = index
            if not -self.size <= flat < self.size:
                raise IndexError(f"index {flat} is out of bounds for size {self.size}")
            return self._flat_values()[flat % self.size]
        if len(index) != self.ndim:
            raise ValueError("incorrect number of indices for array")
        flat = 0
        for axis, (i, d) in enumerate(zip(index, self.shape, strict=True)):
            if not -d <= i < d:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {d}")
            flat = flat * d + i % d
        return self._flat_values()[flat]

    def _scalar(self, kind: str) -> Any:
        if self.size != 1:
            raise TypeError(f"only length-1 arrays can be converted to Python scalars ({kind})")
        return self._flat_values()[0]

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self._flat_values()[0])

    def __index__(self) -> int:
        if self.shape != () or self.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._flat_values()[0])

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))  # type: ignore[index]

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'Array'")

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np  # optional interop: only reached when a caller has NumPy

        np_dtype = self._numpy_dtype(np)
        lb = self._buffer()
        if lb is None:
            out = np.zeros(self.shape, np_dtype)
        elif np_dtype is np.float32 and self.dtype.name == "bfloat16":  # no ml_dtypes
            out = np.array(self._flat_values(), np.float32).reshape(self.shape)
        elif self.dtype in dtypes.NARROW:  # the carrier's values, exactly of the narrow type
            held = np.dtype(dtypes.carrier(self.dtype).name)
            data = lazy.read_bytes(lb)
            out = np.frombuffer(data, held, count=self.size).astype(np_dtype).reshape(self.shape)
        else:
            data = lazy.read_bytes(lb)
            out = np.frombuffer(data, np_dtype, count=self.size).reshape(self.shape).copy()
        return out if dtype is None else out.astype(dtype)

    def _numpy_dtype(self, np: Any) -> Any:
        """NumPy's dtype for this array: bfloat16 is ml_dtypes' (as JAX gives) where that is
        installed, else float32."""
        if self.dtype in dtypes.NARROW:
            return self.dtype.dtype  # ml_dtypes' (AttributeError without it)
        if self.dtype.name != "bfloat16":
            return np.dtype(self.dtype.name)
        try:
            import ml_dtypes
        except ImportError:
            return np.float32
        return np.dtype(ml_dtypes.bfloat16)

    def __repr__(self) -> str:
        if self._deleted:
            return "Array(<deleted>)"
        return printing.array_repr(self._flat_values(), self.shape, self.dtype, self.weak_type)

    def _repr_html_(self) -> str:
        """The array as HTML (Jupyter, JupyterLite, the REPL): type, device and values."""
        if self._deleted:
            return "<pre>Array(&lt;deleted&gt;)</pre>"
        flat = self._flat_values()
        return printing.array_html(flat, self.shape, self.dtype, self.weak_type, str(self.device))

    def __str__(self) -> str:
        if not self.shape:
            return printing.scalar_str(self._flat_values()[0], self.dtype)
        return printing.array_str(self._flat_values(), self.shape, self.dtype)

    def __format__(self, spec: str) -> str:
        if not self.shape:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __reduce__(self) -> Any:
        return (_rebuild, (self.tolist(), self.dtype.name))


def _rebuild(values: Any, dtype: str) -> Array:
    return asarray(values, dtype=dtype)


def _nest(flat: list[Any], shape: tuple[int, ...]) -> Any:
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    stride = math.prod(shape[1:])
    return [_nest(flat[i * stride : (i + 1) * stride], shape[1:]) for i in range(shape[0])]


core.pytype_aval_mappings[Array] = lambda x: x.aval


# ---- arrays from host values --------------------------------------------------------------------
# Making an array from a Python scalar, a nested sequence or a NumPy value is `jnp.asarray`'s job
# (dtype inference, weak types, NumPy interop). The numpy layer installs it here, so that lower
# layers (lax, jit, vmap, callbacks, unpickling) convert host values without importing upward.
_asarray: Any = None


def install_asarray(fn: Any) -> None:
    global _asarray
    _asarray = fn


def asarray(x: Any, dtype: Any = None) -> Array:
    """`jnp.asarray(x, dtype=dtype)` (installed by webjax._src.numpy.creation)."""
    if _asarray is None:
        raise RuntimeError("webjax.numpy is not imported: import webjax first")
    return _asarray(x, dtype=dtype)


def to_array(x: Any) -> Any:
    """Arrays and tracers pass through; Python scalars, NumPy values and lists become arrays."""
    if isinstance(x, core.Tracer) or hasattr(x, "_exp"):
        return x
    return asarray(x)


core.lift_host_value = to_array


def full(
    shape: tuple[int, ...], value: Any, dtype: DType, weak_type: bool, device: Device
) -> Array:
    """A constant array (an inline expression, no buffer) of `value` normalized to `dtype`."""
    return from_flat([scalar.normalize(dtype, value)], shape, dtype, device, weak_type)


# ---- storage ------------------------------------------------------------------------------------
# Kernels and buffers only know real types. A complex array is stored as interleaved (real,
# imaginary) pairs of its component type, and its expression is the *storage* expression over
# 2 * size elements: element 2i is the real part of element i, element 2i + 1 its imaginary part.
def storage(aval: ShapedArray) -> tuple[DType, int]:
    """The element type and count of the buffer holding an array of `aval`."""
    if aval.dtype.kind == "c":
        return dtypes.component(aval.dtype), 2 * aval.size
    return dtypes.carrier(aval.dtype), aval.size


def part(e: Exp, n: int, k: int) -> Exp:
    """Part k (0 real, 1 imaginary) of the storage expression of n complex elements, as an
    expression over the element index."""
    return view.reindex(e, 2 * n, E.add(E.mul(E.idx(n), 2), k))


def interleave(re: Exp, im: Exp, n: int) -> Exp:
    """The storage expression of n complex elements from expressions of their parts."""
    j = E.idx(2 * n)
    i = E.idiv(j, 2)
    even = E.binary(Op.CMPEQ, E.mod(j, 2), E.i32(0))
    return E.where(even, view.reindex(re, n, i), view.reindex(im, n, i))


def const_exp(value: Any, dtype: DType, n: int) -> Exp:
    """The expression of n elements equal to `value` (complex values as a storage pattern)."""
    if dtype in dtypes.NARROW:  # held in its carrier type
        return E.const(scalar.normalize(dtype, value), dtypes.carrier(dtype))
    if dtype.kind != "c":
        return E.const(value, dtype)
    comp = dtypes.component(dtype)
    z = complex(value)
    return interleave(E.const(z.real, comp), E.const(z.imag, comp), n)


def from_exp(exp: Exp | None, aval: ShapedArray, device: Device) -> Array:
    """Wrap a lowering result, applying the eager fusion policy."""
    if exp is not None and lazy.needs_schedule(exp):
        exp = lazy.load_all(lazy.schedule(exp, storage(aval)[1], device))
    return Array(aval, device, exp)


def from_flat(
    values: list[Any], shape: tuple[int, ...], dtype: DType, device: Device, weak_type: bool = False
) -> Array:
    """Upload host values (already normalized to `dtype`) to `device`."""
    size = math.prod(shape)
    aval = ShapedArray(shape, dtype, weak_type)
    if size == 0:
        return Array(aval, device, None)
    if len(values) == 1:  # scalars and splats stay lazy constants, inlined into consumers
        return Array(aval, device, const_exp(values[0], dtype, size))
    sdt, ssize = storage(aval)
    lb = lazy.from_bytes(device, sdt, ssize, lazy.pack(values, dtype))
    return Array(aval, device, lazy.load_all(lb))


def from_host_bytes(
    data: bytes | memoryview, shape: tuple[int, ...], dtype: DType, device: Device
) -> Array:
    size = math.prod(shape)
    aval = ShapedArray(shape, dtype, False)
    if size == 0:
        return Array(aval, device, None)
    lb = lazy.from_bytes(device, *storage(aval), data)
    return Array(aval, device, lazy.load_all(lb))


def exp_of(x: Array) -> Exp | None:
    x._check_alive()
    return x._exp


__all__ = ["Array", "from_exp", "from_flat", "dtypes", "storage", "part", "interleave"]
