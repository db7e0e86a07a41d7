"""The ONNX benchmark's pieces (bench/onnx_models.py, bench/onnx_vs_ort.py) natively: its
models run in webjax.onnx and agree with onnxruntime (the full ResNet-50-shaped CNN at 224x224,
the encoder layer at a small width), and the comparison flags outputs that differ. The browser
run itself is `bench/run.py --onnx`."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import webjax  # noqa: E402
from webjax.onnx import ONNXModel  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import onnx_models  # noqa: E402
import onnx_vs_ort  # noqa: E402


def _agree(data: bytes, name: str, x: np.ndarray, out: str, rtol: float) -> None:
    (want,) = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run([out], {name: x})
    got = np.asarray(webjax.jit(ONNXModel(data).run)({name: x})[out])
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= rtol * np.abs(want).max()


def test_resnet50_matches_onnxruntime():
    data = onnx_models.resnet50()
    model = ONNXModel(data)
    convs = [n for n in model.proto.graph.nodes if n.op_type == "Conv"]
    assert len(convs) == 53  # 1 + 16 blocks x 3 + 4 shortcuts
    params = sum(int(np.prod(t.dims)) for t in model.proto.graph.initializers)
    assert 25.5e6 < params < 25.7e6
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    _agree(data, "x", x, "logits", 1e-4)


def test_encoder_layer_matches_onnxruntime():
    data = onnx_models.encoder_layer(d=64, heads=4, seq=16)
    x = np.random.default_rng(1).standard_normal((1, 16, 64)).astype(np.float32)
    _agree(data, "x", x, "y", 1e-4)


def test_compare_and_table_flag_a_mismatch():
    y = np.linspace(-2, 2, 50, dtype=np.float32)

    def res(values: np.ndarray, ms: float) -> dict:
        return {
            "output_b64": base64.b64encode(values.tobytes()).decode(),
            "median_ms": ms,
            "first_ms": 2 * ms,
        }

    assert onnx_vs_ort.compare(res(y, 1), res(y, 1)) == 0
    off = y.copy()
    off[7] += 0.01
    err = onnx_vs_ort.compare(res(off, 1), res(y, 1))
    assert err == pytest.approx(0.01 / 2, rel=1e-3)
    assert onnx_vs_ort.compare(res(y[:10], 1), res(y, 1)) == float("inf")
    rows = [
        {
            "model": "m",
            "device": "wasm",
            "webjax": res(off, 10.0),
            "ort": res(y, 5.0),
            "rel_err": err,
            "agree": err <= onnx_vs_ort.TOLERANCE["wasm"],
        }
    ]
    text = onnx_vs_ort.table(rows)
    assert "MISMATCH" in text and " 0.50 " in text, text
