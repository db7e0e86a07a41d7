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
