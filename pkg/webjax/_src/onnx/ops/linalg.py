"""Linear algebra: Det."""

from __future__ import annotations

from typing import Any

from webjax._src.numpy import linalg as jla
from webjax._src.onnx.ops.common import Node, dev
from webjax._src.onnx.registry import op


@op("Det")
def det(node: Node, x: Any) -> Any:
    return jla.det(dev(x))
