"""The ONNX benchmark's models (bench/onnx_vs_ort.py), written with the onnx package's helpers
and random weights (NumPy, a fixed seed): a ResNet-50-shaped CNN (bottleneck blocks 3-4-6-3,
Conv + BatchNormalization + Relu as exported from PyTorch, 224x224 batch 1, 25.6 M parameters)
and one transformer encoder layer (BERT-base-shaped: d=768, 12 heads, seq 128, biases, GELU as
Erf, LayerNormalization). Each also in the form jax-js's ONNX loader (@jax-js/onnx 0.1.2, which
has no BatchNormalization or GlobalAveragePool and rejects Reshape's 0 = "copy this dim")
accepts, the same function with the same weights: "resnet50-folded" (each BatchNormalization
folded into its Conv's weights and bias, as onnxruntime's graph optimizer does, and
GlobalAveragePool as ReduceMean) and "encoder-static" (Reshape to the full shapes). Bench-only:
webjax never needs onnx."""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Graph:
    """Nodes and initializers under construction; `const` names a new initializer."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, value: np.ndarray, prefix: str = "w") -> str:
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def model(self, name: str, inputs: list[Any], outputs: list[Any]) -> bytes:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        return model.SerializeToString()


def _conv_bn(
    g: Graph, x: str, cin: int, cout: int, k: int, stride: int, gamma: float, fold: bool
) -> str:
    """Conv + BatchNormalization; with `fold`, one Conv with the normalization folded into its
    weights and bias (the same random values drawn in the same order)."""
    w = g.rng.normal(size=(cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))
    scale = (gamma * g.rng.uniform(0.8, 1.2, cout)).astype(np.float32)
    bias = (g.rng.normal(size=cout) * 0.05).astype(np.float32)
    mean = (g.rng.normal(size=cout) * 0.05).astype(np.float32)
    var = g.rng.uniform(0.8, 1.2, cout).astype(np.float32)
    eps = 1e-5
    conv = {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [k // 2] * 4}
    if fold:
        factor = scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
        w_folded = (w.astype(np.float32).astype(np.float64) * factor[:, None, None, None]).astype(
            np.float32
        )
        b_folded = (bias - mean * factor).astype(np.float32)
        return g.op("Conv", [x, g.const(w_folded), g.const(b_folded, "b")], **conv)
    y = g.op("Conv", [x, g.const(w.astype(np.float32))], **conv)
    stats = [g.const(v, "bn") for v in (scale, bias, mean, var)]
    return g.op("BatchNormalization", [y, *stats], epsilon=eps)


def resnet50(seed: int = 0, classes: int = 1000, fold: bool = False) -> bytes:
    """Input `x` float32 [1, 3, 224, 224] -> `logits` [1, 1000]. With `fold`: no
    BatchNormalization (folded into the convolutions) and ReduceMean for GlobalAveragePool."""
    g = Graph(seed)
    h = g.op("Relu", [_conv_bn(g, "x", 3, 64, 7, 2, 1.0, fold)])
    h = g.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512), strict=True)):
        for b in range(blocks):
            stride = 2 if b == 0 and stage > 0 else 1
            y = g.op("Relu", [_conv_bn(g, h, cin, width, 1, 1, 1.0, fold)])
            y = g.op("Relu", [_conv_bn(g, y, width, width, 3, stride, 1.0, fold)])
            # a small last gamma keeps it stable
            y = _conv_bn(g, y, width, 4 * width, 1, 1, 0.2, fold)
            short = h if b > 0 else _conv_bn(g, h, cin, 4 * width, 1, stride, 1.0, fold)
            h = g.op("Relu", [g.op("Add", [y, short])])
            cin = 4 * width
    if fold:
        pooled = g.op("ReduceMean", [h], axes=[2, 3], keepdims=1)
    else:
        pooled = g.op("GlobalAveragePool", [h])
    h = g.op("Flatten", [pooled], axis=1)
    w = (g.rng.normal(size=(classes, cin)) / np.sqrt(cin)).astype(np.float32)
    b = np.zeros(classes, np.float32)
    out = g.op("Gemm", [h, g.const(w), g.const(b)], transB=1)
    g.nodes[-1].output[0] = "logits"
    del out
    f32 = TensorProto.FLOAT
    return g.model(
        "resnet50",
        [helper.make_tensor_value_info("x", f32, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("logits", f32, [1, classes])],
    )


def encoder_layer(
    seed: int = 0, d: int = 768, heads: int = 12, seq: int = 128, static: bool = False
) -> bytes:
    """Input `x` float32 [1, seq, d] -> `y` [1, seq, d]: post-norm self-attention + MLP. With
    `static`, Reshape's targets are the full shapes instead of 0s that copy the input's dims."""
    g = Graph(seed)
    hd = d // heads

    def dense(x: str, m: int, n: int) -> str:
        w = (g.rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32)
        b = (g.rng.normal(size=n) * 0.02).astype(np.float32)
        return g.op("Add", [g.op("MatMul", [x, g.const(w)]), g.const(b, "b")])

    def norm(x: str) -> str:
        gamma = g.rng.uniform(0.8, 1.2, d).astype(np.float32)
        beta = (g.rng.normal(size=d) * 0.02).astype(np.float32)
        return g.op("LayerNormalization", [x, g.const(gamma), g.const(beta)], axis=-1)

    batch, length = (1, seq) if static else (0, 0)
    split = g.const(np.array([batch, length, heads, hd], np.int64), "shape")
    merge = g.const(np.array([batch, length, d], np.int64), "shape")
    q, k, v = (g.op("Reshape", [dense("x", d, d), split]) for _ in range(3))
    q = g.op("Transpose", [q], perm=[0, 2, 1, 3])
    kt = g.op("Transpose", [k], perm=[0, 2, 3, 1])
    v = g.op("Transpose", [v], perm=[0, 2, 1, 3])
    scores = g.op("Mul", [g.op("MatMul", [q, kt]), g.const(np.float32(1 / np.sqrt(hd)), "c")])
    a = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    a = g.op("Reshape", [g.op("Transpose", [a], perm=[0, 2, 1, 3]), merge])
    h = norm(g.op("Add", ["x", dense(a, d, d)]))
    f = dense(h, d, 4 * d)
    erf = g.op("Erf", [g.op("Mul", [f, g.const(np.float32(1 / np.sqrt(2)), "c")])])
    gelu = g.op(
        "Mul",
        [
            g.op("Mul", [f, g.op("Add", [erf, g.const(np.float32(1), "c")])]),
            g.const(np.float32(0.5), "c"),
        ],
    )
    norm(g.op("Add", [h, dense(gelu, 4 * d, d)]))
    g.nodes[-1].output[0] = "y"
    f32 = TensorProto.FLOAT
    return g.model(
        "encoder_layer",
        [helper.make_tensor_value_info("x", f32, [1, seq, d])],
        [helper.make_tensor_value_info("y", f32, [1, seq, d])],
    )


# id -> (builder, input name, input shape, output name)
MODELS = {
    "resnet50": (resnet50, "x", (1, 3, 224, 224), "logits"),
    "encoder": (encoder_layer, "x", (1, 128, 768), "y"),
    "resnet50-folded": (lambda: resnet50(fold=True), "x", (1, 3, 224, 224), "logits"),
    "encoder-static": (lambda: encoder_layer(static=True), "x", (1, 128, 768), "y"),
}
