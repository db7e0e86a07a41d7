"""Tensor bytes to arrays and back, on the host, without NumPy.

A file's element bytes become a webjax array of the matching dtype, except where webjax has no
such dtype: the 64-bit types narrow to 32 bits unless x64 is enabled (as `jnp.asarray` does with
NumPy arrays: floats rounded, integers wrapped). The float8 types load as webjax's float8 arrays
(F8_E4M3 as float8_e4m3fn, as the reference does), whose buffers hold float32 values: each byte
widens exactly through a table, in pure Python; saving one narrows it back (NaNs as the
format's first NaN byte of their sign).
`framework="numpy"` gives NumPy arrays of the file's own dtype instead (bfloat16 and float8 from
ml_dtypes). Narrowing and widening map bytes through `bytes.translate` and strided slices, so a
tensor costs a few passes in C, not a Python loop per element.
"""

from __future__ import annotations

import array
import math
import struct
import sys
from typing import Any

from .. import config, core, dtypes
from ..dispatch import devices as _devices
from ..dispatch import lazy
from ..dispatch.array import Array, from_host_bytes
from ..numpy.creation import asarray
from ..runtime import backend as rt
from ..runtime.backend import Device
from .format import BY_NUMPY_NAME, FILE_DTYPES, FileDType, TensorInfo

FRAMEWORKS = ("webjax", "numpy")

_DIRECT = {  # file dtype -> webjax dtype holding the same bytes
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "U16": "uint16",
    "I16": "int16",
    "F16": "float16",
    "BF16": "bfloat16",
    "U32": "uint32",
    "I32": "int32",
    "F32": "float32",
    "C64": "complex64",
    "U64": "uint64",
    "I64": "int64",
    "F64": "float64",
}
_FILE_NAME_OF = {v: k for k, v in _DIRECT.items()}
_F8_FILE_NAME_OF = {  # webjax float8 dtype -> file dtype
    "float8_e4m3fn": "F8_E4M3",
    "float8_e5m2": "F8_E5M2",
    "float8_e4m3fnuz": "F8_E4M3FNUZ",
    "float8_e5m2fnuz": "F8_E5M2FNUZ",
    "float8_e8m0fnu": "F8_E8M0",
}


# ---- float8 ---------------------------------------------------------------------------------
def _f8_value(byte: int, exp_bits: int, bias: int, kind: str) -> float:
    """The value of one float8 byte. kind: "fn" (no infinities; all-ones is NaN), "ieee" (E5M2:
    IEEE-style infinities and NaNs), "fnuz" (0x80 is the only NaN; no negative zero), "e8m0"
    (an unsigned power of two; 0xff is NaN)."""
    if kind == "e8m0":
        return math.nan if byte == 0xFF else 2.0 ** (byte - 127)
    man_bits = 7 - exp_bits
    sign = -1.0 if byte & 0x80 else 1.0
    nan = math.copysign(math.nan, sign)  # NaNs keep their sign bit, as ml_dtypes converts them
    e, m = (byte >> man_bits) & ((1 << exp_bits) - 1), byte & ((1 << man_bits) - 1)
    if kind == "fnuz" and byte == 0x80:
        return nan
    if kind == "fn" and e == (1 << exp_bits) - 1 and m == (1 << man_bits) - 1:
        return nan
    if kind == "ieee" and e == (1 << exp_bits) - 1:
        return sign * math.inf if m == 0 else nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - man_bits)
    return sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)


_F8 = {  # file dtype -> (exponent bits, bias, kind, webjax dtype)
    "F8_E4M3": (4, 7, "fn", "float8_e4m3fn"),
    "F8_E5M2": (5, 15, "ieee", "float8_e5m2"),
    "F8_E4M3FNUZ": (4, 8, "fnuz", "float8_e4m3fnuz"),
    "F8_E5M2FNUZ": (5, 16, "fnuz", "float8_e5m2fnuz"),
    "F8_E8M0": (8, 127, "e8m0", "float8_e8m0fnu"),
}
_f8_tables: dict[str, list[bytes]] = {}


def _f8_byte_tables(name: str) -> list[bytes]:
    """Per output byte k, the 256-byte table from a float8 byte to byte k of its widened value."""
    if name not in _f8_tables:
        exp_bits, bias, kind, _ = _F8[name]
        packed = [struct.pack("<f", _f8_value(b, exp_bits, bias, kind)) for b in range(256)]
        _f8_tables[name] = [bytes(p[k] for p in packed) for k in range(len(packed[0]))]
    return _f8_tables[name]


_f8_encoders: dict[str, dict[int, int]] = {}


def _narrow_f8(data: bytes, name: str) -> bytes:
    """float32 elements holding float8 values (a webjax float8 buffer) as the file's bytes."""
    if name not in _f8_encoders:
        exp_bits, bias, kind, _ = _F8[name]
        table: dict[int, int] = {}
        for b in reversed(range(256)):  # the first byte of a value (or NaN of a sign) wins
            v = _f8_value(b, exp_bits, bias, kind)
            (bits,) = struct.unpack("<I", struct.pack("<f", v))
            table[(bits & 0x80000000) | 0x7FC00000 if v != v else bits] = b
        for key, other in ((0x7FC00000, 0xFFC00000), (0xFFC00000, 0x7FC00000), (1 << 31, 0)):
            if other in table:  # one NaN for both signs; no -0 in fnuz
                table.setdefault(key, table[other])
        _f8_encoders[name] = table
    table = _f8_encoders[name]
    words = _little(array.array("I", data))
    nan = 0x7F800000
    return bytes(
        table[(w & 0x80000000) | 0x7FC00000 if (w & nan) == nan and w & 0x7FFFFF else w]
        for w in words
    )


def _widen_f8(data: bytes, name: str) -> bytes:
    tables = _f8_byte_tables(name)
    out = bytearray(len(data) * len(tables))
    for k, table in enumerate(tables):
        out[k :: len(tables)] = data.translate(table)
    return bytes(out)


# ---- bytes -> arrays ------------------------------------------------------------------------
_BOOL_TABLE = bytes([0] + [1] * 255)  # any nonzero byte is True, stored as 1


def _little(values: array.array) -> array.array:
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _narrow_64(data: bytes, name: str) -> tuple[bytes, str]:
    """64-bit elements as the 32-bit ones JAX makes of them without x64."""
    if name == "F64":
        wide = _little(array.array("d", data))
        return _little(array.array("f", wide)).tobytes(), "float32"
    # integers wrap: keep the low (first, little-endian) 4 bytes of every 8
    return memoryview(data).cast("B").cast("I")[0::2].tobytes(), _DIRECT[name].replace("64", "32")


def host_bytes(data: bytes, dtype: FileDType) -> tuple[bytes, str]:
    """A tensor's element bytes as webjax holds them, and the webjax dtype name."""
    name = dtype.name
    if name in _F8:
        return _widen_f8(data, name), _F8[name][3]
    if name not in _DIRECT:
        raise TypeError(
            f"webjax cannot load safetensors tensors of dtype {name} (sub-byte floats): "
            "open the file with framework='numpy' where ml_dtypes has the type, or convert it"
        )
    if name == "BOOL":
        return data.translate(_BOOL_TABLE), "bool"
    if dtype.bits == 64 and name != "C64" and not config.x64_enabled():
        return _narrow_64(data, name)
    return data, _DIRECT[name]


def resolve_device(device: Any) -> Device | None:
    if device is None or isinstance(device, Device):
        return device
    if isinstance(device, str):
        return rt.device(device)
    raise TypeError(
        f"device must be None, a webjax Device or a platform name, got {type(device).__name__}"
    )


def to_array(data: bytes, info_dtype: FileDType, shape: tuple[int, ...], device: Any) -> Array:
    """An array on `device` (committed to it), or uncommitted on the default device."""
    raw, name = host_bytes(data, info_dtype)
    target = resolve_device(device)
    out = from_host_bytes(raw, shape, dtypes.dtype(name), target or _devices.default_device())
    return out if target is None else _devices.put(out, target, commit=True)


def to_numpy(data: bytes, info_dtype: FileDType, shape: tuple[int, ...]) -> Any:
    try:
        import numpy as np
    except ImportError:
        raise ModuleNotFoundError("framework='numpy' needs NumPy, which is not installed") from None
    np_name = info_dtype.numpy_name
    if np_name in _FILE_NAME_OF and np_name != "bfloat16":  # NumPy's own types
        np_dtype = np.dtype(np_name)
    else:
        try:
            import ml_dtypes
        except ImportError:
            raise ModuleNotFoundError(
                f"safetensors dtype {info_dtype.name} as a NumPy array needs ml_dtypes "
                f"({np_name}), which is not installed"
            ) from None
        if not hasattr(ml_dtypes, np_name) or info_dtype.bits < 8:
            raise TypeError(f"no NumPy dtype for safetensors dtype {info_dtype.name} here")
        np_dtype = np.dtype(getattr(ml_dtypes, np_name))
    return np.frombuffer(data, np_dtype.newbyteorder("<")).reshape(shape).astype(np_dtype)


def convert(data: bytes, info: TensorInfo, framework: str, device: Any) -> Any:
    if framework == "numpy":
        return to_numpy(data, info.dtype, info.shape)
    return to_array(data, info.dtype, info.shape, device)


# ---- arrays -> bytes ------------------------------------------------------------------------
def _numpy_like(x: Any) -> bool:
    return type(x).__module__ == "numpy" or hasattr(x, "__array_interface__")


def tensor_bytes(name: str, x: Any) -> tuple[FileDType, tuple[int, ...], bytes]:
    """The file dtype, shape and little-endian element bytes of one leaf to save."""
    if isinstance(x, core.Tracer):
        raise TypeError(
            f"safetensors cannot save the traced value {name!r} (inside jit, grad or vmap): "
            "save concrete arrays"
        )
    if _numpy_like(x):
        import numpy as np

        a = np.asarray(x)
        dtype = BY_NUMPY_NAME.get(a.dtype.name)
        if dtype is None or dtype.bits < 8:
            raise TypeError(f"safetensors cannot save {name!r}: no file dtype for {a.dtype}")
        if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
            a = a.byteswap().view(a.dtype.newbyteorder("<"))
        return dtype, tuple(a.shape), np.ascontiguousarray(a).tobytes()
    if not isinstance(x, Array):
        x = asarray(x)
    file_name = _FILE_NAME_OF.get(x.dtype.name) or _F8_FILE_NAME_OF.get(x.dtype.name)
    if file_name is None:
        raise TypeError(f"safetensors cannot save {name!r}: no file dtype for {x.dtype.name}")
    dtype = FILE_DTYPES[file_name]
    lb = x._buffer()
    data = b"" if lb is None else lazy.read_bytes(lb)
    if file_name in _F8:  # float32 elements in the buffer
        return dtype, tuple(x.shape), _narrow_f8(data[: 4 * x.size], file_name)
    if len(data) != x.nbytes:  # a backend may read back padding
        data = data[: x.nbytes]
    return dtype, tuple(x.shape), data
