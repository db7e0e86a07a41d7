"""Firefox ESR: webjax in Pyodide on the site's test page, driven over WebDriver BiDi.

Debian's firefox-esr runs on an Xvfb display (headless Firefox makes no WebGL context at all),
driven by tests/browser/firefox_driver.mjs through puppeteer-core (`protocol: "webDriverBiDi"`),
which build.py npm-installs into .cache/firefox-driver/ (`fetch_firefox_driver`). The page is
web/test.html served with COOP/COEP by the server the Chromium tier uses. One Firefox boot runs
one JAX program (linspace printed, a reduction, jit, grad, vmap, random, two jitted SGD steps of
a small MLP) on wasm, webgl (Mesa llvmpipe) and webgpu; the numbers are compared with the same
program under real JAX on CPU and with NumPy. Firefox ESR on Linux hides `navigator.gpu` unless
the `dom.webgpu.enabled` preference is set: the driver sets it and the tier checks that webgpu
computes too. A missing Firefox, Xvfb or driver fails; WEBJAX_SKIP_BROWSER=1 skips, loudly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.browser

HERE = Path(__file__).resolve().parent
FIREFOX = os.environ.get("WEBJAX_FIREFOX", "/usr/bin/firefox-esr")
DEVICES = ("wasm", "webgl", "webgpu")

# `jax` and `jnp` are given: webjax in Firefox, real JAX natively. The last expression is JSON.
_PROGRAM = r"""
import json

def program(device):
    r = {}
    with jax.default_device(device):
        x = jnp.linspace(0, 1, 5)
        r["printed"] = str(x)
        r["linspace"] = x.tolist()
        m = jnp.arange(12.0).reshape(3, 4) / 7.0
        r["reduce"] = [float(jnp.sum(m)), jnp.max(m, axis=0).tolist(), float(jnp.mean(m))]
        w = jnp.cos(jnp.arange(8.0)).reshape(4, 2)
        loss = lambda w, m: jnp.sum(jnp.tanh(m @ w) ** 2)
        r["jit"] = float(jax.jit(loss)(w, m))
        r["grad"] = jax.grad(loss)(w, m).tolist()
        r["vmap"] = jax.vmap(lambda row: jnp.dot(row, row) + jnp.sin(row[0]))(m).tolist()
        key = jax.random.key(42)
        r["normal"] = jax.random.normal(key, (6,)).tolist()
        r["uniform"] = jax.random.uniform(jax.random.split(key)[1], (4,)).tolist()

        # A small MLP: two jitted SGD steps on fixed data.
        xs = jnp.sin(jnp.arange(24.0)).reshape(6, 4)
        ys = jnp.cos(jnp.arange(6.0)).reshape(6, 1)
        params = {
            "w1": jnp.cos(jnp.arange(32.0) * 0.37).reshape(4, 8) * 0.5,
            "b1": jnp.zeros(8),
            "w2": jnp.sin(jnp.arange(8.0) * 0.91).reshape(8, 1) * 0.5,
            "b2": jnp.zeros(1),
        }

        def mlp_loss(p, xs, ys):
            h = jax.nn.relu(xs @ p["w1"] + p["b1"])
            return jnp.mean((h @ p["w2"] + p["b2"] - ys) ** 2)

        @jax.jit
        def step(p, xs, ys):
            value, g = jax.value_and_grad(mlp_loss)(p, xs, ys)
            return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), value

        losses = []
        for _ in range(2):
            params, value = step(params, xs, ys)
            losses.append(float(value))
        r["mlp_losses"] = losses
        r["mlp_w2"] = params["w2"].reshape(-1).tolist()
    return r
"""

# In Firefox only: webjax's imports, every device, the wasm worker pool and the host line.
_FIREFOX = (
    "import webjax as jax\nimport webjax.numpy as jnp\n"
    + _PROGRAM
    + r"""
out = {"default": jax.devices()[0].platform, "unavailable": {}}
for platform in DEVICES:
    try:
        device = jax.devices(platform)[0]
    except RuntimeError as e:
        out["unavailable"][platform] = str(e)
        continue
    out[platform] = program(device)
from webjax._src.api.environment import environment_info
host = jax.devices("wasm")[0].backend.host
out["threads"] = host.threads
out["env"] = environment_info()
if host.threads > 1:
    out["workers_ready"] = await host.wait_ready(60)
    big = jnp.linspace(-3.0, 3.0, 1 << 20)
    f = jax.jit(lambda v: jnp.cos(v) * jnp.exp(-v * v))
    before = host.worker_chunks()
    for _ in range(40):  # a worker the OS left asleep may miss a call; one of them shows it
        y = f(big).block_until_ready()
        if host.worker_chunks() > before:
            break
    out["worker_chunks"] = host.worker_chunks() - before
    out["threaded_sum"] = float(jnp.sum(y))
json.dumps(out)
"""
).replace("DEVICES", repr(DEVICES))


def _reference() -> dict[str, Any]:
    """The program under real JAX on CPU (float32, as webjax's default)."""
    import jax
    import jax.numpy as jnp

    scope: dict[str, Any] = {"jax": jax, "jnp": jnp}
    exec(_PROGRAM, scope)
    with jax.default_device(jax.devices("cpu")[0]):
        return scope["program"](jax.devices("cpu")[0])  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def display(tmp_path_factory: Any) -> Iterator[str]:
    """An Xvfb display of our own (its number chosen by Xvfb), stopped after the module."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.fail("Xvfb is missing: `apt-get install xvfb` (build.py test does it as root)")
    read, write = os.pipe()
    proc = subprocess.Popen(
        [xvfb, "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as f:
        number = f.readline().strip()
    if not number:
        proc.kill()
        pytest.fail(f"Xvfb exited {proc.wait()} without giving a display")
    try:
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def run(display: str, server_url: str, build_module: Any, tmp_path_factory: Any) -> dict[str, Any]:
    """One Firefox boot: what the page says of itself and the program's results."""
    if os.environ.get("WEBJAX_SKIP_BROWSER") == "1":
        pytest.skip("WEBJAX_SKIP_BROWSER=1: the Firefox tier is SKIPPED")
    if not Path(FIREFOX).exists():
        pytest.fail(f"{FIREFOX} not found: `apt-get install firefox-esr` (build.py test does it)")
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node.js is missing: `apt-get install nodejs` (it runs the Firefox driver)")
    try:
        driver = build_module.fetch_firefox_driver()
    except Exception as e:  # no npm or no registry: say so, never skip
        pytest.fail(f"{build_module.FIREFOX_DRIVER_PACKAGE} could not be installed with npm: {e}")
    tmp = tmp_path_factory.mktemp("firefox")
    program = tmp / "program.py"
    program.write_text(_FIREFOX)
    env = {**os.environ, "DISPLAY": display, "HOME": str(tmp), "MOZ_CRASHREPORTER_DISABLE": "1"}
    cmd = [node, str(HERE / "firefox_driver.mjs"), str(driver), FIREFOX]
    proc = subprocess.run(
        [*cmd, server_url + "test.html", str(program)],
        capture_output=True,
        text=True,
        timeout=480,
        env=env,
        cwd=tmp,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stdout[-3000:] + "\n" + proc.stderr[-5000:]).strip()
        pytest.fail(f"the Firefox driver exited {proc.returncode} without a result:\n{tail}")
    result = json.loads(lines[-1].removeprefix("RESULT "))
    return {"page": result["page"], **result["program"]}


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return _reference()


def _close(got: dict[str, Any], want: dict[str, Any], tol: float) -> None:
    assert got["printed"] == want["printed"]
    for key in ("linspace", "jit", "grad", "vmap", "normal", "uniform", "mlp_losses", "mlp_w2"):
        np.testing.assert_allclose(got[key], want[key], rtol=tol, atol=tol / 10, err_msg=key)
    for a, b in zip(got["reduce"], want["reduce"], strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, err_msg="reduce")


def test_page_is_firefox_and_isolated(run: dict[str, Any]) -> None:
    page = run["page"]
    assert "Firefox/" in page["userAgent"], page
    assert page["crossOriginIsolated"] is True, page  # COOP/COEP from the test server
    assert page["sharedArrayBuffer"] is True, page
    assert page["webgl2"] is True, page.get("webgl2Error")
    assert page["gpu"] is True and page["gpuAdapter"] is True, page
    assert run["default"] == "wasm"
    assert "in a browser" in run["env"] and "cross-origin isolated: yes" in run["env"], run["env"]


@pytest.mark.parametrize("platform", DEVICES)
def test_program_matches_jax(run: dict[str, Any], reference: dict[str, Any], platform: str) -> None:
    assert platform not in run["unavailable"], run["unavailable"]
    # wasm follows XLA's CPU evaluation closely; the GPU devices' transcendentals are looser.
    _close(run[platform], reference, 2e-5 if platform == "wasm" else 2e-4)


def test_program_matches_numpy(run: dict[str, Any]) -> None:
    got = run["wasm"]
    assert got["printed"] == str(np.linspace(0, 1, 5, dtype=np.float32))
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4) / np.float32(7.0)
    w = np.cos(np.arange(8.0, dtype=np.float32)).reshape(4, 2)
    np.testing.assert_allclose(got["reduce"][0], m.sum(), rtol=1e-6)
    np.testing.assert_allclose(got["reduce"][1], m.max(axis=0), rtol=1e-6)
    t = np.tanh(m @ w)
    np.testing.assert_allclose(got["jit"], np.sum(t**2), rtol=2e-5)
    np.testing.assert_allclose(got["grad"], m.T @ (2 * t * (1 - t**2)), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got["vmap"], (m * m).sum(1) + np.sin(m[:, 0]), rtol=2e-5)
    # the MLP's first loss, by hand
    xs = np.sin(np.arange(24.0)).reshape(6, 4)
    ys = np.cos(np.arange(6.0)).reshape(6, 1)
    w1 = np.cos(np.arange(32.0) * 0.37).reshape(4, 8) * 0.5
    w2 = np.sin(np.arange(8.0) * 0.91).reshape(8, 1) * 0.5
    first = np.mean((np.maximum(xs @ w1, 0) @ w2 - ys) ** 2)
    np.testing.assert_allclose(got["mlp_losses"][0], first, rtol=2e-5)
    assert got["mlp_losses"][1] < got["mlp_losses"][0]  # a step of descent lowers the loss


def test_wasm_threads(run: dict[str, Any]) -> None:
    """Cross-origin isolated Firefox gives the wasm device its worker pool."""
    assert run["threads"] > 1, run["env"]
    assert run["workers_ready"] is True
    assert run["worker_chunks"] > 0
    v = np.linspace(-3.0, 3.0, 1 << 20, dtype=np.float32)
    want = np.sum(np.cos(v) * np.exp(-v * v), dtype=np.float64)
    np.testing.assert_allclose(run["threaded_sum"], want, rtol=1e-4)
