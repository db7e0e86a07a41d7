"""DLPack: webjax arrays to and from other array libraries (NumPy, or anything with
`__dlpack__`), through the DLPack C structures built with ctypes.

An exported array is a host copy of its values (webjax's buffers live in wasm memory or on a
GPU, not in a CPU address another library can read), so `__dlpack_device__` is the CPU's, as
JAX's CPU arrays say. The capsule is the legacy "dltensor" one (JAX gives it too, even when a
consumer offers version 1). Imports copy the consumer's bytes into a new webjax array, following
strides, so any strided view can be read.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from .. import dtypes
from ..dtypes import DType
from ..ir import scalar
from ..runtime.backend import Device
from . import lazy
from .array import Array, from_flat, from_host_bytes
from .devices import default_device, placed


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (the ones webjax names; it exports and imports CPU memory)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLROCM = 10
    kDLWebGPU = 15


# DLDataType codes: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLComplex 5, kDLBool 6
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_KINDS = {0: "int", 1: "uint", 2: "float", 5: "complex"}


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` travel through DLPack (every dtype webjax makes arrays of)."""
    try:
        dt = dtypes.dtype(dtype)
    except TypeError:
        return False
    if dt.name == "bfloat16" or dt.name in ("complex64", "complex128"):
        return True
    return dt.kind in _CODES and dt.name in dtypes.STRUCT_FORMATS


def _dl_dtype(dt: DType) -> tuple[int, int]:
    if dt.name == "bfloat16":
        return 4, 16
    if not is_supported_dtype(dt):
        raise TypeError(f"DLPack does not support dtype {dt.name}")
    return _CODES[dt.kind], 8 * dt.itemsize


def _from_dl_dtype(code: int, bits: int, lanes: int) -> DType:
    if lanes != 1:
        raise TypeError(f"DLPack tensors with {lanes} lanes per element are not supported")
    if code == 4 and bits == 16:
        return dtypes.bfloat16
    if code == 6 and bits == 8:
        return dtypes.bool_
    name = f"{_KINDS.get(code, '?')}{bits}"
    try:
        return dtypes.dtype(name)
    except TypeError:
        raise TypeError(f"DLPack dtype (code {code}, {bits} bits) has no webjax dtype") from None


class _C:
    """The ctypes structures and C API functions, made on first use (ctypes is stdlib, but a
    build without it still imports webjax)."""

    def __init__(self) -> None:
        import ctypes

        self.ctypes = c = ctypes

        class DLDevice(c.Structure):
            _fields_ = [("device_type", c.c_int32), ("device_id", c.c_int32)]

        class DLDataType(c.Structure):
            _fields_ = [("code", c.c_uint8), ("bits", c.c_uint8), ("lanes", c.c_uint16)]

        class DLTensor(c.Structure):
            _fields_ = [
                ("data", c.c_void_p),
                ("device", DLDevice),
                ("ndim", c.c_int32),
                ("dtype", DLDataType),
                ("shape", c.POINTER(c.c_int64)),
                ("strides", c.POINTER(c.c_int64)),
                ("byte_offset", c.c_uint64),
            ]

        class DLManagedTensor(c.Structure):
            pass

        deleter = c.CFUNCTYPE(None, c.POINTER(DLManagedTensor))
        DLManagedTensor._fields_ = [
            ("dl_tensor", DLTensor),
            ("manager_ctx", c.c_void_p),
            ("deleter", deleter),
        ]

        class DLPackVersion(c.Structure):
            _fields_ = [("major", c.c_uint32), ("minor", c.c_uint32)]

        class DLManagedTensorVersioned(c.Structure):
            pass

        versioned_deleter = c.CFUNCTYPE(None, c.POINTER(DLManagedTensorVersioned))
        DLManagedTensorVersioned._fields_ = [
            ("version", DLPackVersion),
            ("manager_ctx", c.c_void_p),
            ("deleter", versioned_deleter),
            ("flags", c.c_uint64),
            ("dl_tensor", DLTensor),
        ]
        self.DLManagedTensor = DLManagedTensor
        self.DLManagedTensorVersioned = DLManagedTensorVersioned
        api = c.pythonapi
        api.PyCapsule_New.restype = c.py_object
        api.PyCapsule_New.argtypes = [c.c_void_p, c.c_char_p, c.c_void_p]
        api.PyCapsule_GetPointer.restype = c.c_void_p
        api.PyCapsule_GetPointer.argtypes = [c.py_object, c.c_char_p]
        api.PyCapsule_SetName.restype = c.c_int
        api.PyCapsule_SetName.argtypes = [c.py_object, c.c_char_p]
        api.PyCapsule_IsValid.restype = c.c_int
        api.PyCapsule_IsValid.argtypes = [c.py_object, c.c_char_p]
        # for the capsule's destructor, which gets a bare pointer to a capsule being freed
        self.is_valid = c.PYFUNCTYPE(c.c_int, c.c_void_p, c.c_char_p)(("PyCapsule_IsValid", api))
        self.get_pointer = c.PYFUNCTYPE(c.c_void_p, c.c_void_p, c.c_char_p)(
            ("PyCapsule_GetPointer", api)
        )
        self.api = api
        # the exports alive: the managed tensor's address -> what its memory belongs to
        self.live: dict[int, tuple[Any, ...]] = {}
        self.deleter = deleter(self._delete)
        self.destructor = c.CFUNCTYPE(None, c.c_void_p)(self._destroy_capsule)

    def _delete(self, managed: Any) -> None:
        self.live.pop(self.ctypes.addressof(managed.contents), None)

    def _destroy_capsule(self, capsule: int) -> None:
        # a capsule nobody consumed still owns its tensor (a consumer renames it)
        if self.is_valid(capsule, b"dltensor"):
            address = self.get_pointer(capsule, b"dltensor")
            self.live.pop(address, None)


_c: list[_C] = []


def _ctypes() -> _C:
    if not _c:
        try:
            _c.append(_C())
        except (ImportError, AttributeError) as e:
            msg = f"DLPack needs ctypes with the Python C API, unavailable here: {e}"
            raise RuntimeError(msg) from None
    return _c[0]


def dlpack_device(x: Array) -> tuple[DLDeviceType, int]:
    """`Array.__dlpack_device__`: the CPU (an export is a host copy)."""
    del x
    return DLDeviceType.kDLCPU, 0


def to_dlpack(
    x: Array,
    *,
    stream: Any = None,
    max_version: tuple[int, int] | None = None,
    dl_device: tuple[Any, int] | None = None,
    copy: bool | None = None,
) -> Any:
    """`Array.__dlpack__`: a "dltensor" capsule over a host copy of the values."""
    del max_version  # a legacy capsule is what every version of a consumer accepts
    if stream is not None:
        raise ValueError(f"stream={stream!r}: webjax arrays export host memory (stream None)")
    if dl_device is not None and tuple(dl_device) != (DLDeviceType.kDLCPU, 0):
        raise ValueError(f"dl_device={dl_device!r}: webjax exports to the CPU (kDLCPU, 0) only")
    if copy is False:
        raise BufferError("copy=False: a webjax export is always a copy of the device's buffer")
    c = _ctypes()
    ct = c.ctypes
    code, bits = _dl_dtype(x.dtype)
    lb = x._buffer()
    data = lazy.read_bytes(lb) if lb is not None else b""
    buf = (ct.c_char * max(len(data), 1)).from_buffer_copy(bytes(data) or b"\0")
    shape = (ct.c_int64 * max(x.ndim, 1))(*x.shape)
    managed = c.DLManagedTensor()
    t = managed.dl_tensor
    t.data = ct.addressof(buf)
    t.device.device_type, t.device.device_id = int(DLDeviceType.kDLCPU), 0
    t.ndim = x.ndim
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    t.shape = ct.cast(shape, ct.POINTER(ct.c_int64))
    t.strides = ct.POINTER(ct.c_int64)()  # NULL: compact, row-major
    t.byte_offset = 0
    managed.deleter = c.deleter
    address = ct.addressof(managed)
    c.live[address] = (managed, buf, shape)
    return c.api.PyCapsule_New(address, b"dltensor", ct.cast(c.destructor, ct.c_void_p))


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Array:
    """`jax.dlpack.from_dlpack`: a webjax array with the values of `external_array` (an object
    with `__dlpack__` and `__dlpack_device__`), copied onto `device` (a Device or a one-device
    Sharding: committed there) or the default device."""
    return placed(_import(external_array, default_device(), copy), device)


def _import(external: Any, device: Device, copy: bool | None) -> Array:
    if not (hasattr(external, "__dlpack__") and hasattr(external, "__dlpack_device__")):
        raise TypeError(
            "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods."
        )
    if copy is False:
        raise BufferError("copy=False: webjax cannot share another library's memory; it copies")
    kind, _ = external.__dlpack_device__()
    if int(kind) not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        raise ValueError(
            f"from_dlpack: the array is on DLPack device {kind!r}; webjax reads CPU memory only"
        )
    try:  # version 1 where the producer has it (NumPy exports read-only arrays only so)
        capsule = external.__dlpack__(max_version=(1, 0))
    except TypeError:
        capsule = external.__dlpack__()
    c = _ctypes()
    ct = c.ctypes
    if c.api.PyCapsule_IsValid(capsule, b"dltensor"):
        managed: Any = c.DLManagedTensor.from_address(
            c.api.PyCapsule_GetPointer(capsule, b"dltensor")
        )
        used = b"used_dltensor"
    elif c.api.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        managed = c.DLManagedTensorVersioned.from_address(
            c.api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        )
        used = b"used_dltensor_versioned"
    else:
        raise TypeError(f"__dlpack__ returned {capsule!r}, not a live DLPack capsule")
    t = managed.dl_tensor
    try:
        dt = _from_dl_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
        shape = tuple(t.shape[i] for i in range(t.ndim))
        size = math.prod(shape)
        item = max(t.dtype.bits // 8, 1)
        base = (t.data or 0) + t.byte_offset
        compact = not t.strides
        if not compact:
            strides = [t.strides[i] for i in range(t.ndim)]
            expected, step = [], 1
            for n in reversed(shape):
                expected.append(step)
                step *= n
            compact = all(s == e or n == 1 for s, e, n in zip(strides, expected[::-1], shape))
        if size == 0:
            data = b""
        elif compact:
            data = ct.string_at(base, size * item)
        else:  # element by element, in row-major order
            parts, index = [], [0] * len(shape)
            for _ in range(size):
                offset = sum(i * s for i, s in zip(index, strides)) * item
                parts.append(ct.string_at(base + offset, item))
                for d in range(len(shape) - 1, -1, -1):
                    index[d] += 1
                    if index[d] < shape[d]:
                        break
                    index[d] = 0
            data = b"".join(parts)
    finally:
        c.api.PyCapsule_SetName(capsule, used)
        if managed.deleter:
            managed.deleter(ct.pointer(managed))
    target = dtypes.canonicalize(dt)
    if target is not dt:  # 64-bit values without x64: narrowed, as JAX's from_dlpack does
        values = [scalar.cast(v, dt, target) for v in lazy.unpack(data, dt, size)]
        return from_flat(values, shape, target, device)
    return from_host_bytes(data, shape, dt, device)
