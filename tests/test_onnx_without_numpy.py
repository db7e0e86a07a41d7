"""webjax.onnx with NumPy unavailable (as in Pyodide without its numpy package): a child Python
whose `import numpy` (and ml_dtypes) raises loads ONNX models written here by the onnx package,
runs them eagerly and under jit, and reports its outputs, which must match onnxruntime's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the oracle extra's onnx package writes the models")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(3)
INT64_MAX = np.iinfo(np.int64).max

CHILD = textwrap.dedent(
    """
    import json, sys

    class NoNumPy:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("numpy", "ml_dtypes"):
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, NoNumPy())
    import webjax
    import webjax.numpy as jnp
    from webjax.onnx import ONNXModel

    spec = json.load(open(sys.argv[1]))
    model = ONNXModel(spec["model"])
    inputs = {n: jnp.asarray(v["values"], dtype=v["dtype"]) for n, v in spec["inputs"].items()}
    eager = model.run(inputs)
    jitted = webjax.jit(model.run)(inputs)
    out = {
        name: {"eager": eager[name].tolist(), "jit": jitted[name].tolist(),
               "dtype": str(eager[name].dtype), "shape": list(eager[name].shape)}
        for name in model.output_names
    }
    out["numpy_imported"] = "numpy" in sys.modules
    print(json.dumps(out))
    """
)


def _init(name: str, arr: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.asarray(arr), name)


def _shape_model() -> onnx.ModelProto:
    """Shape arithmetic on int64 host values (Shape, Gather, Slice to INT64_MAX, Concat,
    Reshape, Range, ConstantOfShape, Expand), a typed float_data initializer, weights through
    MatMul/Add/Relu, and a constant folded on the host (Transpose, Cast, Mul, ReduceSum)."""
    w = RNG.normal(size=(6, 4)).astype(np.float32)
    b = RNG.normal(size=4).astype(np.float32)
    c = RNG.normal(size=(2, 3)).astype(np.float32)
    typed = helper.make_tensor("typed", TensorProto.FLOAT, [4], [0.5, -1.25, 2.0, 3.5])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Mul", ["r", "typed"], ["h"]),
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "one", "big"], ["tail"]),  # [6]
        helper.make_node("Gather", ["s", "zero"], ["n"]),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
        helper.make_node("Concat", ["n1", "two", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["h", "target"], ["y"]),
        helper.make_node("Range", ["zero", "n", "one_scalar"], ["steps"]),
        helper.make_node("Cast", ["steps"], ["steps_f"], to=TensorProto.FLOAT),
        helper.make_node(
            "ConstantOfShape", ["tail"], ["fill"], value=_init("v", np.array([1.5], np.float32))
        ),
        helper.make_node("Transpose", ["c"], ["ct"], perm=[1, 0]),
        helper.make_node("Mul", ["ct", "c_scale"], ["cs"]),
        helper.make_node("ReduceSum", ["cs", "axes0"], ["csum"], keepdims=0),
        helper.make_node("Concat", ["steps_f", "csum", "fill"], ["z"], axis=0),
    ]
    inits = [
        _init("w", w),
        _init("b", b),
        typed,
        _init("c", c),
        _init("c_scale", np.float32(0.1)),
        _init("zero", np.array(0, np.int64)),
        _init("one", np.array([1], np.int64)),
        _init("one_scalar", np.array(1, np.int64)),
        _init("big", np.array([INT64_MAX], np.int64)),
        _init("axes0", np.array([0], np.int64)),
        _init("two", np.array([2], np.int64)),
        _init("minus1", np.array([-1], np.int64)),
    ]
    graph = helper.make_graph(
        nodes,
        "shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 6])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
        ],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run_child(tmp_path: Path, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> dict:
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    spec = {
        "model": str(path),
        "inputs": {n: {"values": v.tolist(), "dtype": v.dtype.name} for n, v in inputs.items()},
    }
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = {"PYTHONPATH": str(ROOT / "pkg"), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    env["HOME"] = os.environ.get("HOME", "/tmp")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(spec_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_model_runs_without_numpy(tmp_path: Path) -> None:
    model = _shape_model()
    x = RNG.normal(size=(3, 6)).astype(np.float32)
    got = _run_child(tmp_path, model, {"x": x})
    assert got.pop("numpy_imported") is False
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip(["y", "z"], sess.run(["y", "z"], {"x": x})))
    for name, expected in want.items():
        out = got[name]
        assert out["dtype"] == "float32" and tuple(out["shape"]) == expected.shape, (name, out)
        for mode in ("eager", "jit"):
            np.testing.assert_allclose(
                np.asarray(out[mode], np.float32), expected, rtol=1e-5, atol=1e-6
            )


def test_the_blocker_blocks(tmp_path: Path) -> None:
    """The child's hook does make `import numpy` fail (so the test above can fail)."""
    code = CHILD.split("import webjax")[0] + "import numpy\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "numpy is blocked" in proc.stderr
