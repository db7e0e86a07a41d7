"""A protobuf wire-format reader and the ONNX messages webjax.onnx reads.

The wire format (varints, 64-bit, length-delimited and 32-bit fields; packed repeated scalars)
is decoded into `Fields`, a map from field number to the list of raw values seen; the ONNX
messages (`ModelProto`, `GraphProto`, `NodeProto`, `AttributeProto`, `TensorProto`,
`ValueInfoProto`/`TypeProto`, `FunctionProto`, ...) are small classes read from those by field
number, as onnx.proto3 numbers them. No protobuf or onnx package is needed (so this runs in
Pyodide).
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass, field
from typing import Any

from webjax._src import dtypes
from webjax._src.dtypes import DType
from webjax._src.onnx import host
from webjax._src.onnx.host import HostArray

Fields = dict[int, list[Any]]


class DecodeError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    n = len(buf)
    while True:
        if pos >= n:
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise DecodeError("varint longer than 10 bytes")


def parse(buf: bytes | memoryview) -> Fields:
    """The fields of one message: number -> raw values (int for varint and fixed fields, read
    unsigned; memoryview for length-delimited ones), in wire order."""
    buf = memoryview(buf)
    out: Fields = {}
    pos = 0
    n = len(buf)
    while pos < n:
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 1:
            if pos + 8 > n:
                raise DecodeError("truncated fixed64 field")
            value = int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            if pos + length > n:
                raise DecodeError(f"field {number}: length {length} runs past the message")
            value = buf[pos : pos + length]
            pos += length
        elif wire == 5:
            if pos + 4 > n:
                raise DecodeError("truncated fixed32 field")
            value = int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise DecodeError(f"field {number}: unsupported wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def varints(values: list[Any], signed: bool = True) -> list[int]:
    """A repeated integer field, packed (length-delimited) or not."""
    out: list[int] = []
    for v in values:
        if isinstance(v, int):
            out.append(v)
        else:
            pos = 0
            while pos < len(v):
                x, pos = read_varint(v, pos)
                out.append(x)
    return [_signed64(x) for x in out] if signed else out


def fixed_bytes(values: list[Any], size: int) -> bytes:
    """A repeated fixed32/fixed64 field (float, double), packed or not, as little-endian
    element bytes."""
    chunks = []
    for v in values:
        if isinstance(v, int):
            chunks.append(v.to_bytes(size, "little"))
        else:
            chunks.append(bytes(v))
    return b"".join(chunks)


def floats(values: list[Any]) -> list[float]:
    """A repeated float field as Python floats."""
    return host.decode(fixed_bytes(values, 4), dtypes.float32)


def string(values: list[Any], default: str = "") -> str:
    return bytes(values[-1]).decode("utf-8") if values else default


def strings(values: list[Any]) -> list[str]:
    return [bytes(v).decode("utf-8") for v in values]


def scalar_float(values: list[Any], default: float = 0.0) -> float:
    return struct.unpack("<f", values[-1].to_bytes(4, "little"))[0] if values else default


def scalar_int(values: list[Any], default: int = 0) -> int:
    return _signed64(values[-1]) if values else default


# --- TensorProto data types -------------------------------------------------------------------

UNDEFINED, FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL = range(10)
FLOAT16, DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = range(10, 17)
FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, UINT4, INT4, FLOAT4E2M1 = range(17, 24)
FLOAT8E8M0, UINT2, INT2 = range(24, 27)

DATA_TYPE_NAMES = {
    0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32",
    7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64",
    14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ",
    19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1",
    24: "FLOAT8E8M0", 25: "UINT2", 26: "INT2",
}  # fmt: skip

# the webjax dtype of each TensorProto data type that has one
_DTYPES = {
    FLOAT: dtypes.float32, UINT8: dtypes.uint8, INT8: dtypes.int8, UINT16: dtypes.uint16,
    INT16: dtypes.int16, INT32: dtypes.int32, INT64: dtypes.int64, BOOL: dtypes.bool_,
    FLOAT16: dtypes.float16, DOUBLE: dtypes.float64, UINT32: dtypes.uint32,
    UINT64: dtypes.uint64, COMPLEX64: dtypes.complex64, COMPLEX128: dtypes.complex128,
    BFLOAT16: dtypes.bfloat16,
}  # fmt: skip


def data_type_name(t: int) -> str:
    return DATA_TYPE_NAMES.get(t, f"data type {t}")


def dtype_of(t: int) -> DType:
    """The webjax dtype of an ONNX TensorProto data type; NotImplementedError for one with no
    JAX array dtype here (STRING, the float8, 4-bit and 2-bit types, FLOAT4E2M1, FLOAT8E8M0)."""
    if t in _DTYPES:
        return _DTYPES[t]
    raise NotImplementedError(f"ONNX tensor data type {data_type_name(t)} has no JAX dtype")


def onnx_data_type(dtype: Any) -> int:
    """The TensorProto data type of a dtype (Cast/EyeLike targets go the other way)."""
    d = dtypes.dtype(dtype)
    for t, dt in _DTYPES.items():
        if dt is d:
            return t
    raise NotImplementedError(f"dtype {d} has no ONNX data type")


# --- messages ---------------------------------------------------------------------------------


@dataclass
class TensorProto:
    name: str
    dims: tuple[int, ...]
    data_type: int
    fields: Fields
    external_data: dict[str, str]

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> TensorProto:
        f = parse(buf)
        external = {}
        for entry in f.get(13, []):
            e = parse(entry)
            external[string(e.get(1, []))] = string(e.get(2, []))
        if scalar_int(f.get(14, [])) != 1:  # data_location DEFAULT
            external = {}
        return cls(
            name=string(f.get(8, [])),
            dims=tuple(varints(f.get(1, []))),
            data_type=scalar_int(f.get(2, [])),
            fields=f,
            external_data=external,
        )

    def value(self, base_dir: str | os.PathLike[str] | None = None) -> HostArray:
        """The tensor as a HostArray (raw_data, the typed repeated fields, or an external data
        file relative to `base_dir`); raw bytes are kept and decoded only when needed."""
        t = self.data_type
        f = self.fields
        if t == STRING:
            raise NotImplementedError(
                f"ONNX tensor {self.name!r}: STRING tensors have no JAX dtype"
            )
        dt = dtype_of(t)
        count = math.prod(self.dims)
        raw: bytes | None = None
        exact = False  # a typed field holds exactly the elements; raw data at least them
        if self.external_data:
            raw = self._read_external(base_dir)
        elif 9 in f:
            raw = bytes(f[9][-1])
        elif t in (FLOAT, COMPLEX64):  # float_data: the elements' little-endian bytes
            raw, exact = fixed_bytes(f.get(4, []), 4), True
        elif t in (DOUBLE, COMPLEX128):
            raw, exact = fixed_bytes(f.get(10, []), 8), True
        if raw is not None:
            n = len(raw) // dt.itemsize
            if n < count or (exact and n != count):
                raise DecodeError(
                    f"ONNX tensor {self.name!r}: {n} values for dims {list(self.dims)}"
                )
            return HostArray.from_bytes(raw, self.dims, dt)
        values: list[Any]
        if t == INT64:
            values = varints(f.get(7, []))
        elif t in (UINT32, UINT64):
            values = varints(f.get(11, []), signed=False)
        elif t in (FLOAT16, BFLOAT16):  # stored as their bit patterns in int32_data
            bits = [b & 0xFFFF for b in varints(f.get(5, []))]
            values = host.decode(host.encode(bits, dtypes.uint16), dt)
        else:  # BOOL, INT32, INT16, INT8, UINT16, UINT8
            values = varints(f.get(5, []))
        if len(values) != count:
            raise DecodeError(
                f"ONNX tensor {self.name!r}: {len(values)} values for dims {list(self.dims)}"
            )
        return HostArray(host.normalize(values, dt), self.dims, dt)

    def _read_external(self, base_dir: str | os.PathLike[str] | None) -> bytes:
        location = self.external_data.get("location")
        if not location:
            raise DecodeError(f"ONNX tensor {self.name!r}: external data without a location")
        if base_dir is None:
            raise ValueError(
                f"ONNX tensor {self.name!r} is stored in the external file {location!r}: "
                "load the model from a path (or pass base_dir=) so the file can be found"
            )
        offset = int(self.external_data.get("offset", 0))
        length = self.external_data.get("length")
        with open(os.path.join(base_dir, location), "rb") as fh:
            fh.seek(offset)
            return fh.read(int(length)) if length is not None else fh.read()


@dataclass
class SparseTensorProto:
    values: TensorProto
    indices: TensorProto
    dims: tuple[int, ...]

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> SparseTensorProto:
        f = parse(buf)
        return cls(
            values=TensorProto.parse(f[1][-1]),
            indices=TensorProto.parse(f[2][-1]),
            dims=tuple(varints(f.get(3, []))),
        )

    def value(self, base_dir: str | os.PathLike[str] | None = None) -> HostArray:
        """The dense tensor, zero where no value is given."""
        values = self.values.value(base_dir)
        indices = self.indices.value(base_dir)
        (zero,) = host.normalize([0], values.dtype)
        dense = [zero] * math.prod(self.dims)
        if indices.ndim == 1:  # linearized indices
            flat = [int(i) for i in indices.data]
        else:  # [count, rank] coordinates
            rank = indices.shape[1]
            strides = [math.prod(self.dims[d + 1 :]) for d in range(rank)]
            coords = indices.data
            flat = [
                sum(int(coords[r * rank + d]) * strides[d] for d in range(rank))
                for r in range(indices.shape[0])
            ]
        for i, v in zip(flat, values.data):
            dense[i] = v
        return HostArray(dense, self.dims, values.dtype)


@dataclass
class TypeProto:
    """A value's type: kind is 'tensor', 'sequence', 'map', 'optional' or 'sparse_tensor'."""

    kind: str
    elem_type: int = UNDEFINED  # tensor element type
    shape: tuple[int | str | None, ...] | None = None  # dim_value, dim_param or unknown
    element: TypeProto | None = None  # of a sequence or optional

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> TypeProto:
        f = parse(buf)
        for number, kind in ((1, "tensor"), (8, "sparse_tensor")):
            if number in f:
                t = parse(f[number][-1])
                shape = None
                if 2 in t:
                    dims: list[int | str | None] = []
                    for d in parse(t[2][-1]).get(1, []):
                        df = parse(d)
                        if 1 in df:
                            dims.append(scalar_int(df[1]))
                        elif 2 in df:
                            dims.append(string(df[2]))
                        else:
                            dims.append(None)
                    shape = tuple(dims)
                return cls(kind, elem_type=scalar_int(t.get(1, [])), shape=shape)
        for number, kind in ((4, "sequence"), (9, "optional")):
            if number in f:
                t = parse(f[number][-1])
                element = TypeProto.parse(t[1][-1]) if 1 in t else None
                return cls(kind, element=element)
        if 5 in f:
            return cls("map")
        return cls("unknown")


@dataclass
class ValueInfoProto:
    name: str
    type: TypeProto | None

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> ValueInfoProto:
        f = parse(buf)
        return cls(string(f.get(1, [])), TypeProto.parse(f[2][-1]) if 2 in f else None)


# AttributeProto.AttributeType
ATTR_FLOAT, ATTR_INT, ATTR_STRING, ATTR_TENSOR, ATTR_GRAPH = 1, 2, 3, 4, 5
ATTR_FLOATS, ATTR_INTS, ATTR_STRINGS, ATTR_TENSORS, ATTR_GRAPHS = 6, 7, 8, 9, 10
ATTR_SPARSE_TENSOR, ATTR_SPARSE_TENSORS, ATTR_TYPE_PROTO, ATTR_TYPE_PROTOS = 11, 12, 13, 14
# the field that holds each attribute type's value
_ATTR_FIELDS = (
    (2, ATTR_FLOAT), (3, ATTR_INT), (4, ATTR_STRING), (5, ATTR_TENSOR), (6, ATTR_GRAPH),
    (7, ATTR_FLOATS), (8, ATTR_INTS), (9, ATTR_STRINGS), (10, ATTR_TENSORS), (11, ATTR_GRAPHS),
)  # fmt: skip


@dataclass
class AttributeProto:
    name: str
    type: int
    value: Any
    ref_attr_name: str = ""

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> AttributeProto:
        f = parse(buf)
        name = string(f.get(1, []))
        t = scalar_int(f.get(20, []))
        if t == 0:  # old writers leave the type out: infer it from the field present
            for number, guess in _ATTR_FIELDS:
                if number in f:
                    t = guess
                    break
        value: Any
        if t == ATTR_FLOAT:
            value = scalar_float(f.get(2, []))
        elif t == ATTR_INT:
            value = scalar_int(f.get(3, []))
        elif t == ATTR_STRING:
            value = bytes(f[4][-1]).decode("utf-8", "replace") if 4 in f else ""
        elif t == ATTR_TENSOR:
            value = TensorProto.parse(f[5][-1])
        elif t == ATTR_GRAPH:
            value = GraphProto.parse(f[6][-1])
        elif t == ATTR_FLOATS:
            value = floats(f.get(7, []))
        elif t == ATTR_INTS:
            value = varints(f.get(8, []))
        elif t == ATTR_STRINGS:
            value = strings(f.get(9, []))
        elif t == ATTR_TENSORS:
            value = [TensorProto.parse(b) for b in f.get(10, [])]
        elif t == ATTR_GRAPHS:
            value = [GraphProto.parse(b) for b in f.get(11, [])]
        elif t == ATTR_SPARSE_TENSOR:
            value = SparseTensorProto.parse(f[22][-1])
        elif t == ATTR_SPARSE_TENSORS:
            value = [SparseTensorProto.parse(b) for b in f.get(23, [])]
        elif t == ATTR_TYPE_PROTO:
            value = TypeProto.parse(f[14][-1])
        elif t == ATTR_TYPE_PROTOS:
            value = [TypeProto.parse(b) for b in f.get(15, [])]
        else:
            value = None
        return cls(name, t, value, ref_attr_name=string(f.get(21, [])))


@dataclass
class NodeProto:
    op_type: str
    inputs: list[str]
    outputs: list[str]
    name: str
    domain: str
    attributes: dict[str, AttributeProto]

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> NodeProto:
        f = parse(buf)
        attrs = [AttributeProto.parse(b) for b in f.get(5, [])]
        return cls(
            op_type=string(f.get(4, [])),
            inputs=strings(f.get(1, [])),
            outputs=strings(f.get(2, [])),
            name=string(f.get(3, [])),
            domain=string(f.get(7, [])),
            attributes={a.name: a for a in attrs},
        )


@dataclass
class GraphProto:
    name: str
    nodes: list[NodeProto]
    initializers: list[TensorProto]
    sparse_initializers: list[SparseTensorProto]
    inputs: list[ValueInfoProto]
    outputs: list[ValueInfoProto]
    value_info: list[ValueInfoProto]

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> GraphProto:
        f = parse(buf)
        return cls(
            name=string(f.get(2, [])),
            nodes=[NodeProto.parse(b) for b in f.get(1, [])],
            initializers=[TensorProto.parse(b) for b in f.get(5, [])],
            sparse_initializers=[SparseTensorProto.parse(b) for b in f.get(15, [])],
            inputs=[ValueInfoProto.parse(b) for b in f.get(11, [])],
            outputs=[ValueInfoProto.parse(b) for b in f.get(12, [])],
            value_info=[ValueInfoProto.parse(b) for b in f.get(13, [])],
        )


def _opsets(values: list[Any]) -> dict[str, int]:
    out = {}
    for b in values:
        f = parse(b)
        out[string(f.get(1, []))] = scalar_int(f.get(2, []))
    return out


@dataclass
class FunctionProto:
    """A model-local function: called by nodes whose (domain, op_type) name it."""

    name: str
    domain: str
    inputs: list[str]
    outputs: list[str]
    attributes: list[str]
    attribute_defaults: dict[str, AttributeProto]
    nodes: list[NodeProto]
    opset_import: dict[str, int]

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> FunctionProto:
        f = parse(buf)
        defaults = [AttributeProto.parse(b) for b in f.get(11, [])]
        return cls(
            name=string(f.get(1, [])),
            domain=string(f.get(10, [])),
            inputs=strings(f.get(4, [])),
            outputs=strings(f.get(5, [])),
            attributes=strings(f.get(6, [])) + [a.name for a in defaults],
            attribute_defaults={a.name: a for a in defaults},
            nodes=[NodeProto.parse(b) for b in f.get(7, [])],
            opset_import=_opsets(f.get(9, [])),
        )


@dataclass
class ModelProto:
    ir_version: int
    opset_import: dict[str, int]
    graph: GraphProto
    functions: list[FunctionProto] = field(default_factory=list)
    producer_name: str = ""

    @classmethod
    def parse(cls, buf: bytes | memoryview) -> ModelProto:
        f = parse(buf)
        if 7 not in f:
            raise DecodeError("not an ONNX model: no graph (ModelProto field 7)")
        return cls(
            ir_version=scalar_int(f.get(1, [])),
            opset_import=_opsets(f.get(8, [])),
            graph=GraphProto.parse(f[7][-1]),
            functions=[FunctionProto.parse(b) for b in f.get(25, [])],
            producer_name=string(f.get(2, [])),
        )
