"""webjax.onnx: load an ONNX model (bytes or a path) and run it as a webjax function.

model = webjax.onnx.ONNXModel("model.onnx")
outputs = webjax.jit(model.run)({"input": x})
"""

from webjax._src.onnx import DecodeError, ONNXModel

__all__ = ["DecodeError", "ONNXModel"]
