"""webjax.onnx: ONNX models run as webjax functions (a protobuf reader of our own, no onnx)."""

from webjax._src.onnx.model import ONNXModel
from webjax._src.onnx.protobuf import DecodeError

__all__ = ["DecodeError", "ONNXModel"]
