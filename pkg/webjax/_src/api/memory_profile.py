"""`jax.profiler.device_memory_profile`: the live arrays as a gzipped pprof profile (the format
JAX writes; `pprof --web memory.prof` reads it), one sample per (device, dtype, shape) with the
count of arrays and their bytes. The protobuf is written by hand (a few wire-format fields), so
nothing outside the standard library is needed."""

from __future__ import annotations

import gzip
import os
from collections import Counter
from typing import Any

from ..api import live_arrays


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1  # int64 values are written as their two's complement
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes | int) -> bytes:
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


class _Strings:
    def __init__(self) -> None:
        self.table: dict[str, int] = {"": 0}

    def __call__(self, s: str) -> int:
        return self.table.setdefault(s, len(self.table))


def device_memory_profile(backend: str | None = None) -> bytes:
    """The live arrays (of `backend`'s platform, or all) as a gzipped pprof Profile."""
    groups: Counter[tuple[str, str, str]] = Counter()
    sizes: Counter[tuple[str, str, str]] = Counter()
    for a in live_arrays(backend):
        key = (str(a._device), a.dtype.name, str(tuple(a.shape)))
        groups[key] += 1
        sizes[key] += a.nbytes
    s = _Strings()
    body = bytearray()
    for kind, unit in (("allocations", "count"), ("space", "bytes")):
        body += _field(1, _field(1, s(kind)) + _field(2, s(unit)))
    for key, count in sorted(groups.items()):
        values = _varint(count) + _varint(sizes[key])
        labels = b"".join(
            _field(3, _field(1, s(name)) + _field(2, s(value)))
            for name, value in zip(("device", "dtype", "shape"), key, strict=True)
        )
        body += _field(2, _field(2, values) + labels)
    for text in s.table:
        body += _field(6, text.encode())
    return gzip.compress(bytes(body))


def save_device_memory_profile(filename: str | os.PathLike[str], backend: Any = None) -> None:
    """Write `device_memory_profile(backend)` to `filename`."""
    with open(filename, "wb") as f:
        f.write(device_memory_profile(backend))


__all__ = ["device_memory_profile", "save_device_memory_profile"]
