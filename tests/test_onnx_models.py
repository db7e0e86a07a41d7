"""Whole ONNX models (built with the onnx package's helpers) through webjax.onnx, against
onnxruntime; jit, grad and vmap through `ONNXModel.run`; the loader's inputs and errors."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the oracle extra's onnx package builds the models")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import webjax  # noqa: E402
import webjax.numpy as jnp  # noqa: E402
from webjax.onnx import ONNXModel  # noqa: E402

RNG = np.random.default_rng(0)


def _init(name: str, arr: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.asarray(arr), name)


def _model(nodes, inputs, outputs, inits, opset: int = 17) -> bytes:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m.SerializeToString()


def _ort(model: bytes, feed: dict) -> list:
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def small_cnn() -> bytes:
    f32 = TensorProto.FLOAT
    w1 = RNG.normal(size=(8, 3, 3, 3)).astype(np.float32) * 0.3
    b1 = RNG.normal(size=8).astype(np.float32) * 0.1
    scale, bias = RNG.uniform(0.5, 1.5, 8), RNG.normal(size=8) * 0.1
    mean, var = RNG.normal(size=8) * 0.1, RNG.uniform(0.5, 1.5, 8)
    w2 = RNG.normal(size=(10, 8 * 4 * 4)).astype(np.float32) * 0.1
    b2 = RNG.normal(size=10).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "s", "b", "m", "v"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Shape", ["p"], ["shp"]),
        helper.make_node("Gather", ["shp", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
        helper.make_node("Concat", ["batch1", "minus1"], ["flat_shape"], axis=0),
        helper.make_node("Reshape", ["p", "flat_shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w2", "b2"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
    ]
    inits = [
        _init("w1", w1),
        _init("b1", b1),
        _init("s", scale.astype(np.float32)),
        _init("b", bias.astype(np.float32)),
        _init("m", mean.astype(np.float32)),
        _init("v", var.astype(np.float32)),
        _init("w2", w2),
        _init("b2", b2),
        _init("zero", np.array(0, np.int64)),
        _init("axes0", np.array([0], np.int64)),
        _init("minus1", np.array([-1], np.int64)),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", f32, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", f32, ["N", 10])],
        inits,
    )


def encoder_layer(d: int = 16, heads: int = 2, seq: int = 5) -> bytes:
    """Self-attention + MLP with LayerNormalization, heads split by Reshape/Transpose from
    computed shapes."""
    f32 = TensorProto.FLOAT
    hd = d // heads

    def w(*shape: int) -> np.ndarray:
        return (RNG.normal(size=shape) / np.sqrt(shape[0])).astype(np.float32)

    inits = [
        _init("wq", w(d, d)),
        _init("wk", w(d, d)),
        _init("wv", w(d, d)),
        _init("wo", w(d, d)),
        _init("w1", w(d, 4 * d)),
        _init("w2", w(4 * d, d)),
        _init("g1", np.ones(d, np.float32)),
        _init("be1", np.zeros(d, np.float32)),
        _init("g2", RNG.uniform(0.5, 1.5, d).astype(np.float32)),
        _init("be2", (RNG.normal(size=d) * 0.1).astype(np.float32)),
        _init("heads", np.array([0, 0, heads, hd], np.int64)),
        _init("merge", np.array([0, 0, d], np.int64)),
        _init("scale", np.array(1 / np.sqrt(hd), np.float32)),
    ]
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "wq"], ["q0"]),
        n("MatMul", ["x", "wk"], ["k0"]),
        n("MatMul", ["x", "wv"], ["v0"]),
        n("Reshape", ["q0", "heads"], ["q1"]),
        n("Reshape", ["k0", "heads"], ["k1"]),
        n("Reshape", ["v0", "heads"], ["v1"]),
        n("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        n("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
        n("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
        n("MatMul", ["q", "kt"], ["s0"]),
        n("Mul", ["s0", "scale"], ["s"]),
        n("Softmax", ["s"], ["p"], axis=-1),
        n("MatMul", ["p", "v"], ["a0"]),
        n("Transpose", ["a0"], ["a1"], perm=[0, 2, 1, 3]),
        n("Reshape", ["a1", "merge"], ["a2"]),
        n("MatMul", ["a2", "wo"], ["a"]),
        n("Add", ["x", "a"], ["h0"]),
        n("LayerNormalization", ["h0", "g1", "be1"], ["h"], axis=-1, epsilon=1e-5),
        n("MatMul", ["h", "w1"], ["f0"]),
        n("Erf", ["f0"], ["erf"]),  # GELU's decomposition
        n("Add", ["erf", "one"], ["erf1"]),
        n("Mul", ["f0", "erf1"], ["f1"]),
        n("Mul", ["f1", "half"], ["f2"]),
        n("MatMul", ["f2", "w2"], ["f"]),
        n("Add", ["h", "f"], ["o0"]),
        n("LayerNormalization", ["o0", "g2", "be2"], ["y"], axis=-1, epsilon=1e-5),
    ]
    inits += [_init("one", np.array(1, np.float32)), _init("half", np.array(0.5, np.float32))]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", f32, ["batch", "seq", d])],
        [helper.make_tensor_value_info("y", f32, ["batch", "seq", d])],
        inits,
    )


_CNN = small_cnn()
_ENC = encoder_layer()


def test_cnn_against_onnxruntime(device) -> None:
    model = small_cnn()
    x = RNG.normal(size=(2, 3, 8, 8)).astype(np.float32)
    (want,) = _ort(model, {"x": x})
    m = ONNXModel(model)
    assert m.input_names == ["x"] and m.output_names == ["y"]
    got = m.run({"x": x})["y"]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)
    jitted = webjax.jit(m.run)({"x": x})["y"]
    np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-4, atol=1e-5)


def test_encoder_layer_against_onnxruntime(device) -> None:
    model = _ENC
    x = RNG.normal(size=(2, 5, 16)).astype(np.float32)
    (want,) = _ort(model, {"x": x})
    m = ONNXModel(model)
    np.testing.assert_allclose(np.asarray(m(x=x)["y"]), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        np.asarray(webjax.jit(m.run)({"x": x})["y"]), want, rtol=1e-4, atol=1e-4
    )


def test_jit_traces_once_per_input_shape() -> None:
    m = ONNXModel(_CNN)
    traces = []

    def f(x):
        traces.append(x.shape)
        return m.run({"x": x})["y"]

    g = webjax.jit(f)
    for batch in (1, 1, 3, 3):
        x = RNG.normal(size=(batch, 3, 8, 8)).astype(np.float32)
        (want,) = _ort(_CNN, {"x": x})
        np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-4, atol=1e-5)
    assert traces == [(1, 3, 8, 8), (3, 3, 8, 8)]


def test_grad_through_run_matches_finite_differences() -> None:
    m = ONNXModel(_ENC)
    x = RNG.normal(size=(1, 5, 16)).astype(np.float32)
    t = RNG.normal(size=(1, 5, 16)).astype(np.float32)

    def loss(v):
        return jnp.sum(m.run({"x": v})["y"] * t)

    g = np.asarray(webjax.grad(loss)(x))
    np.testing.assert_allclose(
        g, np.asarray(webjax.jit(webjax.grad(loss))(x)), rtol=1e-4, atol=1e-5
    )
    direction = RNG.normal(size=x.shape).astype(np.float64)
    eps = 1e-3
    x64 = x.astype(np.float64)
    plus = float(loss((x64 + eps * direction).astype(np.float32)))
    minus = float(loss((x64 - eps * direction).astype(np.float32)))
    np.testing.assert_allclose((plus - minus) / (2 * eps), np.sum(g * direction), rtol=2e-2)


def test_vmap_through_run() -> None:
    m = ONNXModel(_CNN)
    xs = RNG.normal(size=(3, 2, 3, 8, 8)).astype(np.float32)
    got = webjax.vmap(lambda x: m.run({"x": x})["y"])(xs)
    for i in range(3):
        (want,) = _ort(_CNN, {"x": xs[i]})
        np.testing.assert_allclose(np.asarray(got[i]), want, rtol=1e-4, atol=1e-5)


def test_load_from_path_with_external_data(tmp_path) -> None:
    model = onnx.load_from_string(_ENC)
    path = tmp_path / "enc.onnx"
    onnx.save_model(
        model,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="enc.data",
        size_threshold=0,
    )
    assert (tmp_path / "enc.data").exists()
    x = RNG.normal(size=(1, 5, 16)).astype(np.float32)
    (want,) = _ort(_ENC, {"x": x})
    got = ONNXModel(path).run({"x": x})["y"]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="external file"):
        ONNXModel(path.read_bytes())


@pytest.mark.parametrize(
    "dtype",
    [
        np.float32,
        np.float16,
        np.float64,
        np.int8,
        np.uint8,
        np.int16,
        np.uint16,
        np.int32,
        np.int64,
        np.uint32,
        np.uint64,
        np.bool_,
        np.complex64,
    ],
)
def test_initializers_in_every_type(dtype) -> None:
    """Each type both as raw_data and as the typed repeated field."""
    from webjax._src.onnx import protobuf

    arr = (RNG.normal(size=(2, 3)) * 5).astype(dtype)
    raw = numpy_helper.from_array(arr, "t")
    typed = helper.make_tensor("t", raw.data_type, arr.shape, arr.ravel())
    assert not typed.raw_data
    for t in (raw, typed):
        got = np.asarray(protobuf.TensorProto.parse(t.SerializeToString()).value())
        assert got.dtype == arr.dtype and got.shape == arr.shape
        np.testing.assert_array_equal(got, arr)


def test_unsupported_operator_is_named() -> None:
    node = helper.make_node("NoSuchOp", ["x"], ["y"], domain="example.domain")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    m = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("example.domain", 1)]
    )
    with pytest.raises(NotImplementedError, match=r"NoSuchOp of domain 'example\.domain'"):
        ONNXModel(m.SerializeToString()).run({"x": np.ones(2, np.float32)})


def test_bad_inputs() -> None:
    m = ONNXModel(_CNN)
    with pytest.raises(ValueError, match="missing inputs"):
        m.run({})
    with pytest.raises(ValueError, match="unknown inputs"):
        m.run({"x": np.ones((1, 3, 8, 8), np.float32), "z": 1})
    with pytest.raises(TypeError, match="bytes or a path"):
        ONNXModel(3)
    from webjax.onnx import DecodeError

    with pytest.raises(DecodeError):
        ONNXModel(b"\x0a\xff")
