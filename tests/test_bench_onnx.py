"""The ONNX benchmark's pieces (bench/onnx_models.py, bench/onnx_vs_ort.py) natively: its
models run in webjax.onnx and agree with onnxruntime (the full ResNet-50-shaped CNN at 224x224,
the encoder layer at a small width), the forms jax-js's loader accepts compute the same as the
originals, the comparison flags outputs that differ and the table reports what failed, and
jax-js's import map is resolved from the packages. The browser run itself is
`bench/run.py --onnx`."""

from __future__ import annotations

import base64
import json
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


def _ort(data: bytes, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def test_jaxjs_forms_compute_the_originals():
    """resnet50-folded and encoder-static: what @jax-js/onnx 0.1.2 lacks is gone (no
    BatchNormalization or GlobalAveragePool, no 0 in a Reshape's shape), and onnxruntime gives
    the same outputs as for the originals."""
    from onnx import ModelProto, numpy_helper

    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    original, folded = onnx_models.resnet50(), onnx_models.MODELS["resnet50-folded"][0]()
    ops = {n.op_type for n in ModelProto.FromString(folded).graph.node}
    assert not ops & {"BatchNormalization", "GlobalAveragePool"} and "Conv" in ops
    want = _ort(original, x)
    assert np.abs(_ort(folded, x) - want).max() <= 1e-5 * np.abs(want).max()

    x = np.random.default_rng(1).standard_normal((1, 16, 64)).astype(np.float32)
    original = onnx_models.encoder_layer(d=64, heads=4, seq=16)
    static = onnx_models.encoder_layer(d=64, heads=4, seq=16, static=True)
    graph = ModelProto.FromString(static).graph
    shapes = {t.name: numpy_helper.to_array(t) for t in graph.initializer if t.name[:5] == "shape"}
    reshapes = [n.input[1] for n in graph.node if n.op_type == "Reshape"]
    assert reshapes and all(shapes[name].all() for name in reshapes)
    np.testing.assert_array_equal(_ort(static, x), _ort(original, x))


def _res(values: np.ndarray, ms: float) -> dict:
    return {
        "output_b64": base64.b64encode(values.tobytes()).decode(),
        "median_ms": ms,
        "first_ms": 2 * ms,
        "times_ms": [ms],
    }


def test_compare_and_table_flag_a_mismatch():
    y = np.linspace(-2, 2, 50, dtype=np.float32)
    assert onnx_vs_ort.compare(_res(y, 1), _res(y, 1)) == 0
    off = y.copy()
    off[7] += 0.01
    err = onnx_vs_ort.compare(_res(off, 1), _res(y, 1))
    assert err == pytest.approx(0.01 / 2, rel=1e-3)
    assert onnx_vs_ort.max_abs_diff(_res(off, 1), _res(y, 1)) == pytest.approx(0.01, rel=1e-3)
    assert onnx_vs_ort.compare(_res(y[:10], 1), _res(y, 1)) == float("inf")
    row = {"model": "m", "device": "wasm", "webjax": _res(off, 10.0), "ort": _res(y, 5.0)}
    row["jaxjs"] = _res(y + np.float32(1e-6), 40.0)
    row["checks"] = {
        lib: onnx_vs_ort.check(row, lib, row["ort"], "ORT") for lib in ("webjax", "jaxjs")
    }
    assert not row["checks"]["webjax"]["agree"] and row["checks"]["jaxjs"]["agree"]
    text = onnx_vs_ort.table([row])
    assert "MISMATCH" in text and " 0.50 " in text and " 4.00 " in text, text
    assert not onnx_vs_ort.all_agree([row])


def test_table_and_failures_report_what_did_not_run():
    y = np.ones(4, np.float32)
    error = "Error: Unsupported ONNX operation: BatchNormalization"
    rows = []
    for device in ("wasm", "webgpu"):
        row = {"model": "resnet50", "device": device, "webjax": _res(y, 10.0)}
        row |= {"ort": _res(y, 20.0), "jaxjs": {"error": error}, "checks": {}}
        row["checks"]["webjax"] = onnx_vs_ort.check(row, "webjax", row["ort"], "ORT")
        rows.append(row)
    rows[1]["ort"] = {"error": "timeout"}
    rows[1]["checks"]["webjax"] = onnx_vs_ort.check(rows[1], "webjax", rows[0]["ort"], "ORT wasm")
    text = onnx_vs_ort.table(rows)
    assert text.splitlines()[1].split()[4] == "failed" and "0.0e+00*" in text, text
    assert onnx_vs_ort.failures(rows) == [
        f"jax-js failed on resnet50 wasm, resnet50 webgpu: {error}",
        "ORT failed on resnet50 webgpu: timeout",
    ]
    assert onnx_vs_ort.all_agree(rows)  # jax-js and ORT failing is reported, not an error
    rows[0]["webjax"] = {"error": "boom"}
    assert not onnx_vs_ort.all_agree(rows)


def test_jaxjs_import_map_resolves_every_bare_import(tmp_path):
    """fetch_jaxjs_onnx maps each bare specifier the packages' ES modules import (subpaths
    through package.json exports) and stops at one no package provides."""
    files = {
        "@jax-js/onnx": {
            "package.json": {"name": "@jax-js/onnx", "exports": {".": {"import": "./dist/i.js"}}},
            "dist/i.js": 'import { a } from "onnx-buf";\nimport { f } from "@bufbuild/protobuf";'
            '\nimport { jit } from "@jax-js/jax";',
        },
        "onnx-buf": {
            "package.json": {"name": "onnx-buf", "module": "dist/pb.js"},
            "dist/pb.js": 'import { e } from "@bufbuild/protobuf/codegenv2";',
        },
        "@bufbuild/protobuf": {
            "package.json": {
                "name": "@bufbuild/protobuf",
                "exports": {
                    ".": {"import": "./dist/esm/index.js", "require": "./dist/cjs/index.js"},
                    "./codegenv2": {"import": "./dist/esm/codegenv2/index.js"},
                },
            },
            "dist/esm/index.js": 'export * from "./x.js";',
            "dist/esm/codegenv2/index.js": 'import { b } from "../index.js";',
        },
    }

    def npm_pack(name: str, version: str) -> str:
        return name

    def unpack(name: str, target: Path, keep) -> None:
        for path, content in files[name].items():
            assert keep(path), path
            (target / path).parent.mkdir(parents=True, exist_ok=True)
            text = content if isinstance(content, str) else json.dumps(content)
            (target / path).write_text(text)

    imports = onnx_vs_ort.fetch_jaxjs_onnx(tmp_path, npm_pack, unpack, "0", "jax-js/dist/j.js")
    assert imports == {
        "@jax-js/jax": "./jax-js/dist/j.js",
        "@jax-js/onnx": "./npm/@jax-js/onnx/dist/i.js",
        "onnx-buf": "./npm/onnx-buf/dist/pb.js",
        "@bufbuild/protobuf/codegenv2": "./npm/@bufbuild/protobuf/dist/esm/codegenv2/index.js",
        "@bufbuild/protobuf": "./npm/@bufbuild/protobuf/dist/esm/index.js",
    }
    files["onnx-buf"]["dist/pb.js"] += '\nimport "long";'
    with pytest.raises(SystemExit, match="'long'"):
        onnx_vs_ort.fetch_jaxjs_onnx(tmp_path / "2", npm_pack, unpack, "0", "jax-js/dist/j.js")
