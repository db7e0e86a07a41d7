"""The ONNX demo's build step, not part of its page: build.py runs it natively with the tools
venv's Python. It trains a small CNN on the digits demo's data (digits.py's parsing and
held-out split) with webjax and writes it as an ONNX model for the ONNX page (onnx.html).

    PYTHONPATH=pkg .venv/bin/python web/demos/models/train_digits_onnx.py DIGITS OUT [--steps N]

The network: Conv 1->8 (3x3, pad 1), Relu, MaxPool 2x2, Conv 8->16 (3x3, pad 1), Relu,
MaxPool 2x2, Flatten, Gemm 64->10, Softmax. Input `pixels` float32 [N, 1, 8, 8] in [0, 1]
(pixel / 16), output `probabilities` [N, 10]. The ONNX protobuf is written with the onnx
package (in the tools venv, the `oracle` extra), never needed by webjax itself."""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import sys
from pathlib import Path
from typing import Any

import webjax as jax
import webjax.numpy as jnp
from webjax import lax

DEMOS = Path(__file__).resolve().parent.parent  # web/demos
CHANNELS = (1, 8, 16)
CLASSES = 10
OPSET = 17
NCHW = ("NCHW", "OIHW", "NCHW")  # ONNX's Conv layouts


def digits_module() -> Any:
    """web/demos/digits.py (its parse_digits and split), by path."""
    path = DEMOS / "digits.py"
    spec = importlib.util.spec_from_file_location("webjax_demo_digits", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def init_params(key: Any) -> dict[str, Any]:
    keys = jax.random.split(key, len(CHANNELS))
    params = {}
    for i, (cin, cout) in enumerate(itertools.pairwise(CHANNELS)):
        scale = jnp.sqrt(2.0 / (cin * 9))
        params[f"conv{i}_w"] = jax.random.normal(keys[i], (cout, cin, 3, 3)) * scale
        params[f"conv{i}_b"] = jnp.zeros(cout)
    features = CHANNELS[-1] * 2 * 2
    params["dense_w"] = jax.random.normal(keys[-1], (features, CLASSES)) * jnp.sqrt(1 / features)
    params["dense_b"] = jnp.zeros(CLASSES)
    return params


def logits(params: dict[str, Any], x: Any) -> Any:
    """x [N, 1, 8, 8] -> logits [N, 10], the ONNX graph's computation (NCHW, OIHW)."""
    for i in range(len(CHANNELS) - 1):
        x = lax.conv_general_dilated(
            x, params[f"conv{i}_w"], (1, 1), ((1, 1), (1, 1)), dimension_numbers=NCHW
        )
        x = jax.nn.relu(x + params[f"conv{i}_b"][None, :, None, None])
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    return x.reshape(x.shape[0], -1) @ params["dense_w"] + params["dense_b"]


def loss_fn(params: dict[str, Any], x: Any, y: Any) -> Any:
    logp = jax.nn.log_softmax(logits(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def train(x: Any, y: Any, steps: int, batch: int = 128, lr: float = 0.01, seed: int = 0) -> Any:
    """Adam on minibatches of (x [N, 64], y): the trained parameters."""
    b1, b2, eps = 0.9, 0.999, 1e-8
    images = x.reshape(-1, 1, 8, 8)

    @jax.jit
    def step(params: Any, m: Any, v: Any, t: Any, idx: Any) -> Any:
        grads = jax.grad(loss_fn)(params, images[idx], y[idx])
        t = t + 1
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        scale = lr * jnp.sqrt(1 - b2**t) / (1 - b1**t)
        params = jax.tree.map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + eps), params, m, v)
        return params, m, v, t

    key = jax.random.key(seed)
    params = init_params(key)
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    t = jnp.zeros((), jnp.float32)
    order = digits_module().batches(jax.random.fold_in(key, 1), x.shape[0], batch)
    for _, idx in zip(range(steps), order):
        params, m, v, t = step(params, m, v, t, idx)
    return params


def accuracy(params: dict[str, Any], x: Any, y: Any) -> float:
    predicted = jnp.argmax(logits(params, x.reshape(-1, 1, 8, 8)), axis=1)
    return float(jnp.mean(predicted == y))


def to_onnx(params: dict[str, Any]) -> bytes:
    """The trained CNN as ONNX ModelProto bytes (onnx.helper; float32 initializers)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    nodes = []
    inits = []
    x = "pixels"
    for i in range(len(CHANNELS) - 1):
        w, b = f"conv{i}_w", f"conv{i}_b"
        nodes += [
            helper.make_node("Conv", [x, w, b], [f"conv{i}"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", [f"conv{i}"], [f"relu{i}"]),
            helper.make_node(
                "MaxPool", [f"relu{i}"], [f"pool{i}"], kernel_shape=[2, 2], strides=[2, 2]
            ),
        ]
        x = f"pool{i}"
    nodes += [
        helper.make_node("Flatten", [x], ["features"], axis=1),
        helper.make_node("Gemm", ["features", "dense_w", "dense_b"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probabilities"], axis=-1),
    ]
    for name in sorted(params):
        inits.append(numpy_helper.from_array(np.asarray(params[name], np.float32), name))
    graph = helper.make_graph(
        nodes,
        "digits_cnn",
        [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", CLASSES])],
        initializer=inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="webjax web/demos/models/train_digits_onnx.py",
        doc_string="A CNN for scikit-learn's 8x8 digits: pixels [N,1,8,8] in [0,1] (pixel/16).",
    )
    return model.SerializeToString()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("digits", type=Path, help="digits.csv.gz (build.py's fetch_digits)")
    parser.add_argument("out", type=Path, help="the .onnx file to write")
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args(argv)
    digits = digits_module()
    with jax.default_device(jax.devices("wasm")[0]):  # wasmtime: the fastest native device here
        x, y = digits.parse_digits(args.digits.read_bytes())
        xtr, ytr, xte, yte = digits.split(x, y)
        params = train(xtr, ytr, args.steps)
        acc = accuracy(params, xte, yte)
    data = to_onnx(params)
    args.out.write_bytes(data)
    print(f"[digits_onnx] {args.out}: {len(data)} bytes, held-out accuracy {acc:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
