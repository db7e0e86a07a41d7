"""The safetensors file format: the dtype table, reading and checking a header, writing one.

A file is an 8-byte little-endian header length N, N bytes of UTF-8 JSON (an object: an
optional "__metadata__" of str -> str, and per tensor {"dtype", "shape", "data_offsets"}),
then the data. Offsets count from the end of the header; the tensors must tile the data exactly
(each starts where the previous one ends, in offset order, and the last ends at the file's end).
Writers order tensors by dtype (widest first, in the reference implementation's order) and then
by name, and pad the header with spaces to a multiple of 8 bytes, so that the output is the
same bytes as the reference's for the same tensors and metadata.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

HEADER_LIMIT = 100_000_000  # bytes of JSON, as the reference implementation allows
METADATA_KEY = "__metadata__"


class SafetensorError(ValueError):
    """A malformed safetensors file or header (the message says what is wrong)."""


@dataclass(frozen=True)
class FileDType:
    """One of the format's element types: its bit width and NumPy's (or ml_dtypes') name."""

    name: str
    bits: int
    numpy_name: str


# Top first: the order in which writers lay out tensors of these types.
FILE_DTYPES: dict[str, FileDType] = {
    d.name: d
    for d in (
        FileDType("U64", 64, "uint64"),
        FileDType("I64", 64, "int64"),
        FileDType("F64", 64, "float64"),
        FileDType("C64", 64, "complex64"),
        FileDType("F32", 32, "float32"),
        FileDType("U32", 32, "uint32"),
        FileDType("I32", 32, "int32"),
        FileDType("BF16", 16, "bfloat16"),
        FileDType("F16", 16, "float16"),
        FileDType("U16", 16, "uint16"),
        FileDType("I16", 16, "int16"),
        FileDType("F8_E5M2FNUZ", 8, "float8_e5m2fnuz"),
        FileDType("F8_E4M3FNUZ", 8, "float8_e4m3fnuz"),
        FileDType("F8_E8M0", 8, "float8_e8m0fnu"),
        FileDType("F8_E4M3", 8, "float8_e4m3fn"),
        FileDType("F8_E5M2", 8, "float8_e5m2"),
        FileDType("I8", 8, "int8"),
        FileDType("U8", 8, "uint8"),
        FileDType("F6_E3M2", 6, "float6_e3m2fn"),
        FileDType("F6_E2M3", 6, "float6_e2m3fn"),
        FileDType("F4", 4, "float4_e2m1fn"),
        FileDType("BOOL", 8, "bool"),
    )
}
_RANK = {name: i for i, name in enumerate(FILE_DTYPES)}
BY_NUMPY_NAME = {d.numpy_name: d for d in FILE_DTYPES.values()}


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor's bytes lie: [start, end) counted from the start of the file."""

    name: str
    dtype: FileDType
    shape: tuple[int, ...]
    start: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Header:
    tensors: dict[str, TensorInfo]  # in the file's order
    metadata: dict[str, str] | None
    data_start: int  # 8 + N
    file_size: int


def _fail(what: str) -> SafetensorError:
    return SafetensorError(f"Error while deserializing header: {what}")


def header_length(prefix: bytes, file_size: int) -> int:
    """N from the first 8 bytes, checked against the limit and the file's size."""
    if file_size < 8 or len(prefix) < 8:
        raise _fail(f"header too small: the file has {file_size} bytes, fewer than the 8 of N")
    n = int.from_bytes(prefix[:8], "little")
    if n > HEADER_LIMIT:
        raise _fail(f"header too large: N = {n} bytes, over the limit of {HEADER_LIMIT}")
    if 8 + n > file_size:
        raise _fail(
            f"invalid header length: N = {n} bytes, but the file has only {file_size - 8} after it"
        )
    return n


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _fail(f"duplicate key {key!r} in the header")
        out[key] = value
    return out


def _is_count(x: Any) -> bool:
    return type(x) is int and x >= 0


def parse_header(header: bytes, file_size: int) -> Header:
    """The checked header of a file of `file_size` bytes whose JSON is `header`."""
    try:
        text = header.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _fail(f"invalid UTF-8 in header: {e}") from None
    try:
        obj = json.loads(text, object_pairs_hook=_pairs_without_duplicates)
    except json.JSONDecodeError as e:
        raise _fail(f"invalid JSON in header: {e}") from None
    if not isinstance(obj, dict):
        raise _fail(f"the header is a JSON {type(obj).__name__}, not an object")
    metadata = obj.pop(METADATA_KEY, None)
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())
    ):
        raise _fail(f"{METADATA_KEY} must be an object of strings, got {metadata!r}")
    data_start = 8 + len(header)
    tensors = {name: _tensor_info(name, entry, data_start) for name, entry in obj.items()}
    _check_tiling(tensors, data_start, file_size)
    return Header(tensors, metadata, data_start, file_size)


def _tensor_info(name: str, entry: Any, data_start: int) -> TensorInfo:
    if not isinstance(entry, dict):
        raise _fail(f"tensor {name!r}: expected an object, got {entry!r}")
    missing = [k for k in ("dtype", "shape", "data_offsets") if k not in entry]
    if missing:
        raise _fail(f"tensor {name!r}: missing field {missing[0]!r}")
    dtype = FILE_DTYPES.get(entry["dtype"]) if isinstance(entry["dtype"], str) else None
    if dtype is None:
        raise _fail(
            f"tensor {name!r}: unknown dtype {entry['dtype']!r} (the format's dtypes: "
            + ", ".join(sorted(FILE_DTYPES))
            + ")"
        )
    shape, offsets = entry["shape"], entry["data_offsets"]
    if not (isinstance(shape, list) and all(_is_count(d) for d in shape)):
        raise _fail(f"tensor {name!r}: shape must be a list of non-negative ints, got {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets))):
        raise _fail(
            f"tensor {name!r}: data_offsets must be [begin, end] (non-negative ints), got "
            f"{offsets!r}"
        )
    begin, end = offsets
    if end < begin:
        raise _fail(f"invalid offset for tensor {name!r}: it ends ({end}) before it begins")
    bits = math.prod(shape) * dtype.bits
    if bits % 8:
        raise _fail(
            f"tensor {name!r}: {math.prod(shape)} elements of {dtype.name} do not end at a byte "
            "boundary"
        )
    if bits // 8 != end - begin:
        raise _fail(
            f"invalid shape, data type, or offset for tensor {name!r}: {shape} of {dtype.name} "
            f"is {bits // 8} bytes, but data_offsets [{begin}, {end}] span {end - begin}"
        )
    return TensorInfo(name, dtype, tuple(shape), data_start + begin, data_start + end)


def _check_tiling(tensors: dict[str, TensorInfo], data_start: int, file_size: int) -> None:
    position, previous = data_start, None
    for info in sorted(tensors.values(), key=lambda t: (t.start, t.end)):
        if info.start != position:
            where = "the data's start" if previous is None else f"the end of {previous!r}"
            kind = "overlaps" if info.start < position else "leaves a gap after"
            raise _fail(
                f"invalid offset for tensor {info.name!r}: it begins at {info.start - data_start}"
                f", which {kind} {where} ({position - data_start}); tensors must tile the data"
            )
        position, previous = info.end, info.name
    if position != file_size:
        raise _fail(
            f"incomplete metadata, file not fully covered: the tensors end at byte "
            f"{position - data_start} of the data, but the data has {file_size - data_start} "
            "bytes"
        )


def write_header(
    entries: list[tuple[str, FileDType, tuple[int, ...]]], metadata: dict[str, str] | None
) -> tuple[bytes, list[int]]:
    """The first 8 + N bytes of a file holding `entries` (name, dtype, shape), and the order in
    which their data follows (indices into `entries`)."""
    order = sorted(range(len(entries)), key=lambda i: (_RANK[entries[i][1].name], entries[i][0]))
    obj: dict[str, Any] = {}
    if metadata is not None:
        obj[METADATA_KEY] = metadata
    offset = 0
    for i in order:
        name, dtype, shape = entries[i]
        nbytes = math.prod(shape) * dtype.bits // 8
        obj[name] = {
            "dtype": dtype.name,
            "shape": list(shape),
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text, order


def check_metadata(metadata: Any) -> dict[str, str] | None:
    if metadata is None:
        return None
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise TypeError(f"safetensors metadata must be a dict of str to str, got {metadata!r}")
    return dict(metadata)
