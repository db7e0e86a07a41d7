"""The demo pages' Python (web/demos/*.py) run natively: the digits MLP learns the held-out
images (with the data build.py fetches) and survives a safetensors round trip, its jitted step
equals the eager one; Mandelbrot's counts and the pendulums' RK4 scan match NumPy references on
every device; the benchmark pages' result checks hold. The pages themselves:
tests/browser/test_demos.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import webjax as jax
import webjax.numpy as jnp
from webjax import safetensors
from webjax.onnx import ONNXModel

ROOT = Path(__file__).resolve().parent.parent
DEMOS = ROOT / "web" / "demos"


def demo(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"webjax_demo_{name}", DEMOS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def digits_data() -> bytes:
    # build.py's own fetch (a pinned scikit-learn wheel, cached in .cache/); by path, as
    # `import build` would find PyPA's package
    spec = importlib.util.spec_from_file_location("webjax_build_script", ROOT / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    cached = build.CACHE / "digits.csv.gz"
    if not cached.exists():
        build.fetch_digits(build.venv_python())
    return cached.read_bytes()


def test_digits_mlp_learns_and_reloads(digits_data):
    digits = demo("digits")
    x, y = digits.parse_digits(digits_data)
    assert x.shape == (1797, 64) and y.shape == (1797,)
    assert float(x.min()) == 0.0 and float(x.max()) == 1.0
    assert sorted(set(y.tolist())) == list(range(10))
    xtr, ytr, xte, yte = digits.split(x, y)
    assert xtr.shape[0] == 1797 - digits.N_TEST and xte.shape[0] == digits.N_TEST
    with jax.default_device(jax.devices("cpu")[0]):
        losses, params = [], None
        for _, step_params, loss in digits.train_steps(xtr, ytr, 100):
            losses.append(float(loss))
            params = step_params
        assert losses[-1] < 0.3 * losses[0]
        acc = digits.accuracy(params, xte, yte)
        assert acc > 0.9
        back = safetensors.load(safetensors.save(params))
        assert sorted(back) == sorted(params)
        assert digits.accuracy(back, xte, yte) == acc


def test_digits_jitted_step_equals_eager():
    digits = demo("digits")
    key = jax.random.key(3)
    x = jax.random.uniform(key, (16, 64))
    y = jax.random.randint(jax.random.fold_in(key, 1), (16,), 0, 10)
    params = digits.init_params(key)
    state = digits.init_state(params)
    step = digits.make_step()
    with jax.disable_jit():
        p_eager, _, l_eager = step(params, state, x, y)
    p_jit, _, l_jit = step(params, state, x, y)
    np.testing.assert_allclose(float(l_jit), float(l_eager), rtol=1e-5)
    for name in params:
        np.testing.assert_allclose(p_jit[name], p_eager[name], rtol=1e-4, atol=1e-6)


def mandelbrot_reference(cr: np.ndarray, ci: np.ndarray, iterations: int) -> np.ndarray:
    """Point by point: the number of steps z <- z^2 + c takes before |z| >= 2 (at most
    `iterations`)."""
    count = np.zeros(cr.shape)
    for idx in np.ndindex(cr.shape):
        c = complex(cr[idx], ci[idx])
        z = 0j
        for step in range(iterations):
            z = z * z + c
            if abs(z) >= 2:
                break
            count[idx] = step + 1
    return count


def test_mandelbrot_counts_match_numpy(device):
    mandelbrot = demo("mandelbrot")
    cr, ci = mandelbrot.grid(40)
    got = np.asarray(mandelbrot.escape_counts(cr, ci))
    want = mandelbrot_reference(np.asarray(cr), np.asarray(ci), mandelbrot.ITERATIONS)
    assert got.shape == (32, 40)
    # float32 rounding may move a point on the set's edge by an iteration: a handful at most
    assert np.mean(got != want) < 0.02
    assert np.abs(got - want).max() <= mandelbrot.ITERATIONS


def test_pendulum_scan_matches_numpy_rk4(device):
    pendulum = demo("pendulum")
    theta0 = pendulum.start_angles()
    # few steps: a jitted scan's compile time grows with its length (about 5 s a step on
    # webgpu through lavapipe), the page runs the long ones
    steps = 4
    traj = np.asarray(pendulum.simulate(theta0, steps))
    s = np.stack([np.asarray(theta0, np.float64), np.zeros(5)])
    want = []
    for _ in range(steps):

        def f(s):
            return np.stack([s[1], -pendulum.G_OVER_L * np.sin(s[0])])

        dt = pendulum.DT
        k1 = f(s)
        k2 = f(s + dt / 2 * k1)
        k3 = f(s + dt / 2 * k2)
        k4 = f(s + dt * k3)
        s = s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        want.append(s)
    np.testing.assert_allclose(traj, np.array(want), rtol=1e-4, atol=1e-5)
    assert pendulum.energy_drift(jnp.asarray(traj), theta0) < 1e-4


def test_benchmark_checks():
    matmul = demo("matmul")
    conv2d = demo("conv2d")
    a, b = matmul.operands(32)
    assert matmul.check(a, b, a @ b) < 1e-5
    assert matmul.check(a, b, a @ b + 1.0) > 1e-3  # the check can fail
    lhs = jax.random.uniform(jax.random.key(1), (1, 4, 8, 8))
    rhs = jax.random.uniform(jax.random.key(2), (4, 4, 3, 3))
    out = conv2d.conv(lhs, rhs)
    assert out.shape == (1, 4, 8, 8)
    assert conv2d.check(lhs, rhs, out) < 1e-5
    assert conv2d.flops(1, 4, 8, 8, 4) == 2 * 4 * 64 * 4 * 9


def tool(name: str) -> Any:
    path = ROOT / "web" / "demos" / "models" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"webjax_tool_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_onnx_digits_model_matches_its_training_and_onnxruntime(digits_data, tmp_path):
    """The build's digits CNN (web/demos/models/train_digits_onnx.py, fewer steps): its file
    computes the trained network (webjax's own forward pass), in webjax.onnx and in
    onnxruntime alike, and classifies the held-out digits."""
    ort = pytest.importorskip("onnxruntime")
    digits_onnx = tool("train_digits_onnx")
    digits = demo("digits")
    onnx_demo = demo("onnx")
    x, y = digits.parse_digits(digits_data)
    xtr, ytr, xte, yte = digits.split(x, y)
    params = digits_onnx.train(xtr, ytr, steps=60)
    data = digits_onnx.to_onnx(params)
    want = np.asarray(jax.nn.softmax(digits_onnx.logits(params, xte.reshape(-1, 1, 8, 8))))
    model = ONNXModel(data)
    assert model.input_names == ["pixels"] and model.output_names == ["probabilities"]
    got = np.asarray(onnx_demo.predict(jax.jit(model.run), xte))
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    (ref,) = sess.run(["probabilities"], {"pixels": np.asarray(xte).reshape(-1, 1, 8, 8)})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-6)
    assert (got.argmax(1) == np.asarray(yte)).mean() > 0.8
    # the command line the build runs writes the same kind of file
    out = tmp_path / "digits.onnx"
    (tmp_path / "d.csv.gz").write_bytes(digits_data)
    assert digits_onnx.main([str(tmp_path / "d.csv.gz"), str(out), "--steps", "5"]) == 0
    assert ONNXModel(out.read_bytes()).output_names == ["probabilities"]


def paint_cells(pattern: np.ndarray, cell: int, at: tuple[int, int], size: int = 256) -> bytes:
    image = np.zeros((size, size), np.uint8)
    up = np.kron(pattern, np.ones((cell, cell)))
    image[at[0] : at[0] + up.shape[0], at[1] : at[1] + up.shape[1]] = np.round(up * 255)
    return image.tobytes()


def test_onnx_demo_ink_to_pixels_normalises_size_and_place():
    onnx_demo = demo("onnx")
    rng = np.random.default_rng(0)
    pattern = rng.integers(0, 17, (8, 8)) / 16
    pattern[0, 0] = pattern[7, 7] = 1.0  # the ink's box is the whole grid
    for cell, at in ((32, (0, 0)), (8, (37, 90)), (16, (100, 3))):
        got = onnx_demo.ink_to_pixels(paint_cells(pattern, cell, at), 256, 256)
        np.testing.assert_allclose(np.reshape(got, (8, 8)), pattern, atol=1 / 255)
    # a narrow drawing (8 rows, 4 columns) is centred in the square box
    narrow = np.zeros((8, 8))
    narrow[:, 2:6] = pattern[:, 2:6]
    narrow[0, 2] = narrow[7, 5] = 1.0
    got = onnx_demo.ink_to_pixels(paint_cells(narrow[:, 2:6], 16, (50, 150)), 256, 256)
    np.testing.assert_allclose(np.reshape(got, (8, 8)), narrow, atol=1 / 255)
    assert onnx_demo.ink_to_pixels(bytes(256 * 256), 256, 256) is None


def test_onnx_demo_random_inputs_follow_the_model_types():
    onnx_demo = demo("onnx")
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["f", "x"], ["y"]),
    ]
    inputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 3]),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3]),
    ]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])
    graph = helper.make_graph(nodes, "g", inputs, [output])
    model = ONNXModel(helper.make_model(graph).SerializeToString())
    inputs = onnx_demo.random_inputs(model, jax.random.key(0))
    assert inputs["ids"].shape == (1, 3) and inputs["ids"].dtype == jnp.zeros(0, jnp.int64).dtype
    assert inputs["x"].shape == (1, 3) and inputs["x"].dtype == jnp.float32
    assert model.run(inputs)["y"].shape == (1, 3)
    assert onnx_demo.describe(model)[1:] == [
        "input  ids: int64 [batch, 3]",
        "input  x: float32 [None, 3]",
        "output y: float32 [batch, 3]",
    ]
