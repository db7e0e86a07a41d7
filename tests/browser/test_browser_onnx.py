"""webjax.onnx in Pyodide (which has no NumPy here): a small model written natively by the onnx
package (a convolution, Resize, int64 shape arithmetic with an INT64_MAX slice end, a dense layer
and Softmax) is handed to the page as bytes, run there eagerly and under jit, and compared with
onnxruntime's outputs computed natively."""

from __future__ import annotations

import base64
from typing import Any

import pytest

np = pytest.importorskip("numpy")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

R = np.random.RandomState(5)
INT64_MAX = np.iinfo(np.int64).max


def _init(name: str, arr: Any) -> TensorProto:
    return numpy_helper.from_array(np.asarray(arr), name)


def _model() -> bytes:
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Resize", ["r", "", "scales"], ["up"], mode="linear"),
        helper.make_node("Shape", ["up"], ["s"]),
        helper.make_node("Slice", ["s", "zero1", "one1"], ["batch"]),
        helper.make_node("Slice", ["s", "one1", "big"], ["rest"]),  # [C, H, W]
        helper.make_node("ReduceProd", ["rest"], ["features"], keepdims=1),
        helper.make_node("Concat", ["batch", "features"], ["flat_shape"], axis=0),
        helper.make_node("Reshape", ["up", "flat_shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "dense", "dense_b"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
    ]
    inits = [
        _init("w", (R.standard_normal((4, 2, 3, 3)) * 0.3).astype(np.float32)),
        _init("b", (R.standard_normal(4) * 0.1).astype(np.float32)),
        _init("scales", np.array([1, 1, 2, 2], np.float32)),
        _init("zero1", np.array([0], np.int64)),
        _init("one1", np.array([1], np.int64)),
        _init("big", np.array([INT64_MAX], np.int64)),
        _init("dense", (R.standard_normal((4 * 8 * 8, 5)) * 0.1).astype(np.float32)),
        _init("dense_b", (R.standard_normal(5) * 0.1).astype(np.float32)),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


RUN = """
import base64, sys
import webjax
import webjax.numpy as jnp
from webjax.onnx import ONNXModel

model = ONNXModel(base64.b64decode(MODEL))
x = jnp.asarray(X, dtype="float32")
eager = model.run({"x": x})["y"]
jitted = webjax.jit(model.run)({"x": x})["y"]
{
    "eager": eager.tolist(),
    "jit": jitted.tolist(),
    "dtype": str(eager.dtype),
    "numpy_loaded": "numpy" in sys.modules,
}
"""


@pytest.mark.browser
def test_an_onnx_model_in_pyodide(webjax_page: Any) -> None:
    data = _model()
    x = R.standard_normal((3, 2, 4, 4)).astype(np.float32)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    (want,) = sess.run(["y"], {"x": x})
    code = f"MODEL = {base64.b64encode(data).decode()!r}\nX = {x.tolist()!r}\n" + RUN
    got = webjax_page.run_py(code)
    assert got["numpy_loaded"] is False
    assert got["dtype"] == "float32"
    for mode in ("eager", "jit"):
        np.testing.assert_allclose(np.asarray(got[mode]), want, rtol=1e-4, atol=1e-6)
