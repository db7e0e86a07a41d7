"""Node.js and Deno: webjax inside Pyodide under a server-side JS runtime, as a user runs it.

Each runtime boots Pyodide once from the built site (dist/site/pyodide/), installs the site's
wheel with micropip from Pyodide's file system and runs one small JAX program (linspace printed,
a reduction, jit, grad, vmap, random) whose numbers are compared with the same program run by
native webjax and with NumPy. The subprocess also reports the devices: the wasm device is the
default; its worker pool (node:worker_threads) splits a large kernel; webgl is unavailable with
an error naming the runtime and what it lacks; webgpu likewise under Node.js, while Deno's
WebGPU (on lavapipe here) runs the jit program too. Node.js is Debian's `node`; Deno is the npm
package that build.py fetches into .cache/ (`fetch_deno`). A runtime that is missing fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.browser

# The runner a user writes (see README): boot Pyodide from the site, install the wheel, run.
_RUNNER = r"""
import { readFileSync } from "node:fs";
const [site, wheel, program] = (globalThis.Deno ? Deno.args : process.argv.slice(2));
const { loadPyodide } = await import(new URL(`file://${site}/pyodide/pyodide.mjs`).href);
const pyodide = await loadPyodide({ indexURL: `${site}/pyodide/` });
await pyodide.loadPackage("micropip");
const name = wheel.split("/").pop();
pyodide.FS.writeFile(`/tmp/${name}`, readFileSync(wheel));
await pyodide.pyimport("micropip").install(`emfs:/tmp/${name}`);
await pyodide.runPythonAsync(readFileSync(program, "utf8"));
"""

# Runs natively and in Pyodide alike; prints one line "RESULT <json>".
_PROGRAM = r"""
import json
import webjax as jax
import webjax.numpy as jnp

out = {}
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
    return r

out["default"] = jax.devices()[0].platform
out["wasm"] = program(jax.devices()[0])
"""

# Appended in Pyodide only: the GPU devices, the wasm device's worker pool and the host line.
_HOST_CHECKS = r"""
out["unavailable"] = {}
for platform in ("webgpu", "webgl"):
    try:
        out[platform] = program(jax.devices(platform)[0])
    except RuntimeError as e:
        out["unavailable"][platform] = str(e)
from webjax._src.api.environment import environment_info
host = jax.devices("wasm")[0].backend.host
out["threads"] = host.threads
out["env"] = environment_info()
if host.threads > 1:
    out["workers_ready"] = await host.wait_ready(60)
    big = jnp.linspace(-3.0, 3.0, 1 << 20)
    f = jax.jit(lambda v: jnp.cos(v) * jnp.exp(-v * v))  # elementwise: split into chunks
    before = host.worker_chunks()
    for _ in range(40):  # a worker the OS left asleep may miss a call; one of them shows it
        y = f(big).block_until_ready()
        if host.worker_chunks() > before:
            break
    out["worker_chunks"] = host.worker_chunks() - before
    out["threaded_sum"] = float(jnp.sum(y))
print("RESULT " + json.dumps(out))
"""

_NATIVE: dict[str, Any] = {}


def _native() -> dict[str, Any]:
    """The program under native webjax (the default device), once."""
    if not _NATIVE:
        scope: dict[str, Any] = {}
        exec(_PROGRAM, scope)
        _NATIVE.update(scope["out"])
    return _NATIVE


def _runtime_command(runtime: str, build_module: Any) -> list[str]:
    if runtime == "node":
        node = shutil.which("node")
        if node is None:
            pytest.fail("Node.js is missing: `apt-get install nodejs` (Debian's node >= 20)")
        return [node]
    try:
        deno = build_module.fetch_deno()
    except Exception as e:  # no npm or no network: say so, never skip
        pytest.fail(f"Deno could not be fetched with npm ({build_module.DENO_PACKAGE}): {e}")
    return [str(deno), "run", "--allow-read", "--allow-env", "--allow-sys"]


@pytest.fixture(scope="module", params=["node", "deno"])
def run(request: Any, site: Path, build_module: Any, tmp_path_factory: Any) -> dict[str, Any]:
    """One Pyodide boot per runtime: the program's results (parsed) and the runtime's name."""
    runtime = request.param
    tmp = tmp_path_factory.mktemp(runtime)
    runner = tmp / "run.mjs"
    runner.write_text(_RUNNER)
    program = tmp / "program.py"
    program.write_text(_PROGRAM + _HOST_CHECKS)
    (wheel,) = (site / "wheels").glob("webjax-*.whl")
    env = {**os.environ, "DENO_DIR": str(tmp / "deno-dir"), "DENO_NO_UPDATE_CHECK": "1"}
    cmd = [*_runtime_command(runtime, build_module), str(runner), str(site), str(wheel)]
    proc = subprocess.run(
        [*cmd, str(program)], capture_output=True, text=True, timeout=420, env=env, cwd=tmp
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stdout[-3000:] + "\n" + proc.stderr[-3000:]).strip()
        pytest.fail(f"{runtime} exited {proc.returncode} without a result:\n{tail}")
    return {"runtime": runtime, **json.loads(lines[-1].removeprefix("RESULT "))}


def _close(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got["printed"] == want["printed"]
    for key in ("linspace", "jit", "grad", "vmap", "normal", "uniform"):
        np.testing.assert_allclose(got[key], want[key], rtol=2e-5, atol=1e-6, err_msg=key)
    for a, b in zip(got["reduce"], want["reduce"], strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, err_msg="reduce")


def test_program_matches_native_and_numpy(run: dict[str, Any]) -> None:
    got = run["wasm"]
    assert run["default"] == "wasm"
    _close(got, _native()["wasm"])
    # and NumPy, for what NumPy can say on its own
    assert got["printed"] == str(np.linspace(0, 1, 5, dtype=np.float32))
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4) / np.float32(7.0)
    w = np.cos(np.arange(8.0, dtype=np.float32)).reshape(4, 2)
    np.testing.assert_allclose(got["reduce"][0], m.sum(), rtol=1e-6)
    np.testing.assert_allclose(got["reduce"][1], m.max(axis=0), rtol=1e-6)
    t = np.tanh(m @ w)
    np.testing.assert_allclose(got["jit"], np.sum(t**2), rtol=2e-5)
    np.testing.assert_allclose(got["grad"], m.T @ (2 * t * (1 - t**2)), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got["vmap"], (m * m).sum(1) + np.sin(m[:, 0]), rtol=2e-5)
    assert min(got["uniform"]) >= 0.0 and max(got["uniform"]) < 1.0


def test_host_names_runtime(run: dict[str, Any]) -> None:
    name = {"node": "Node.js", "deno": "Deno"}[run["runtime"]]
    assert f"in {name} " in run["env"], run["env"]


def test_wasm_threads(run: dict[str, Any]) -> None:
    """node:worker_threads under both runtimes (Debian's node is >= 20.16)."""
    assert run["threads"] > 1, run["env"]
    assert run["workers_ready"] is True
    assert run["worker_chunks"] > 0
    v = np.linspace(-3.0, 3.0, 1 << 20, dtype=np.float32)
    want = np.sum(np.cos(v) * np.exp(-v * v), dtype=np.float64)
    np.testing.assert_allclose(run["threaded_sum"], want, rtol=1e-4)


def test_gpu_devices(run: dict[str, Any]) -> None:
    """webgl is unavailable with the reason; webgpu too under Node.js; Deno's WebGPU computes."""
    unavailable = run["unavailable"]
    name = {"node": "Node.js", "deno": "Deno"}[run["runtime"]]
    assert "webgl" in unavailable and name in unavailable["webgl"], unavailable
    assert "needs a browser" in unavailable["webgl"]
    if run["runtime"] == "node":
        assert "navigator.gpu is missing" in unavailable["webgpu"], unavailable
        assert "Node.js" in unavailable["webgpu"]
    else:
        assert "webgpu" not in unavailable, unavailable
        _close(run["webgpu"], run["wasm"])
