"""Helpers shared by the operator modules: host (HostArray) or device (webjax) evaluation."""

from __future__ import annotations

from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.dtypes import DType
from webjax._src.onnx import host
from webjax._src.onnx import protobuf as pb
from webjax._src.onnx.host import HostArray
from webjax._src.onnx.registry import Node, is_host, static


def xp(*values: Any) -> Any:
    """The host module when every value is known at trace time (and small enough to compute
    in Python), else webjax.numpy."""
    return host if is_host(*values) and host.is_small(*values) else jnp


def dev(x: Any) -> Any:
    return jnp.asarray(x)


def onnx_dtype(node: Node, t: int) -> DType:
    try:
        return pb.dtype_of(t)
    except NotImplementedError as e:
        raise NotImplementedError(
            f"webjax.onnx: {node.op_type} (opset {node.opset}): {e}"
        ) from None


def cast(x: Any, dtype: Any) -> Any:
    if xp(x) is host:
        return x.astype(dtype)
    return jnp.asarray(x).astype(dtypes.canonicalize_dtype(dtype))


def const(x: Any, v: Any) -> Any:
    """The scalar `v` in x's dtype, on x's side (host or device)."""
    if is_host(x):
        return host.full((), v, x.dtype)
    return jnp.asarray(v, dtype=x.dtype)


def axis_list(node: Node, value: Any, what: str = "axes") -> list[int] | None:
    if value is None:
        return None
    return [int(a) for a in static(node, value, what).data]


def int_list(node: Node, value: Any, what: str) -> list[int]:
    """A required 1-D integer input (starts, ends, pads, axes, ...) as a list of ints."""
    return [int(a) for a in static(node, value, what).data]


def norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def scalar_int(node: Node, value: Any, what: str) -> int:
    return int(static(node, value, what).data[0])


def scalar(node: Node, value: Any, what: str) -> Any:
    """The first element of a value needed at trace time, as a Python number."""
    return static(node, value, what).data[0]


def is_float(dt: Any) -> bool:
    return dtypes.dtype(dt).kind == "f"


__all__ = [
    "HostArray",
    "Node",
    "axis_list",
    "cast",
    "const",
    "dev",
    "int_list",
    "is_float",
    "is_host",
    "norm_axis",
    "onnx_dtype",
    "scalar",
    "static",
    "xp",
]
