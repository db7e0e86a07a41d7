"""Helpers shared by the operator modules: host (NumPy) or device (webjax) evaluation."""

from __future__ import annotations

from typing import Any

import numpy as np

from webjax._src import numpy as jnp
from webjax._src.dtypes import canonicalize_dtype
from webjax._src.onnx import protobuf as pb
from webjax._src.onnx.registry import Node, is_host, static


def xp(*values: Any) -> Any:
    """NumPy when every value is known at trace time, else webjax.numpy."""
    return np if is_host(*values) else jnp


def dev(x: Any) -> Any:
    return jnp.asarray(x)


def onnx_dtype(node: Node, t: int) -> np.dtype:
    try:
        return pb.numpy_dtype(t)
    except NotImplementedError as e:
        raise NotImplementedError(
            f"webjax.onnx: {node.op_type} (opset {node.opset}): {e}"
        ) from None


def cast(x: Any, dtype: Any) -> Any:
    if is_host(x):
        return np.asarray(x).astype(dtype)
    return jnp.asarray(x).astype(canonicalize_dtype(dtype))


def axis_list(node: Node, value: Any, what: str = "axes") -> list[int] | None:
    if value is None:
        return None
    arr = static(node, value, what)
    return [int(a) for a in np.ravel(arr)]


def int_list(node: Node, value: Any, what: str) -> list[int]:
    """A required 1-D integer input (starts, ends, pads, axes, ...) as a list of ints."""
    return [int(a) for a in np.ravel(static(node, value, what))]


def norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def scalar_int(node: Node, value: Any, what: str) -> int:
    return int(np.ravel(static(node, value, what))[0])


__all__ = [
    "Node",
    "axis_list",
    "cast",
    "dev",
    "int_list",
    "is_host",
    "norm_axis",
    "onnx_dtype",
    "static",
    "xp",
]
