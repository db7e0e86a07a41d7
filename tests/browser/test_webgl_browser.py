"""The webgl backend inside Pyodide in Chromium (WebGL2 on SwiftShader through ANGLE).

The same GLSL ES that the native tests check on Mesa's llvmpipe runs on the page's WebGL2
context here. WebGL reads are synchronous (`readPixels`), so unlike webgpu every path works
under plain `runPython` as well as `runPythonAsync`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from browser_harness import PyodideError, PyodidePage
from kernel_checks import SETUP, SWEEP, TRANSCENDENTALS

pytestmark = pytest.mark.browser

USE_WEBGL = "\nfrom webjax._src.runtime.webgl import WebGLBackend\ngpu = WebGLBackend()\n"


def test_kernels_match_cpu_under_plain_run_python(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP + USE_WEBGL)
    got = webjax_page.run_py_sync(
        "got = {name: gpu.read(*run(gpu, name)).hex() for name in KERNELS}\n"
        "[got == expect, got, expect, gpu.description, gpu.max_args]"
    )
    assert got[0], got
    assert "SwiftShader" in got[3] or "ANGLE" in got[3], got[3]
    assert got[4] >= 7  # texture units less the one kept for split reductions
    # the async read (pixel-pack buffer and fence) gives the same bytes
    got = webjax_page.run_py("h, n = run(gpu, 'f32')\n(await gpu.read_async(h, n)).hex()")
    assert got == webjax_page.run_py("expect['f32']")


def test_exact_op_sweep_matches_cpu_on_swiftshader(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP + USE_WEBGL)
    assert webjax_page.run_py(SWEEP) == []


def test_transcendentals_close_on_swiftshader(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP + USE_WEBGL)
    worst = webjax_page.run_py(TRANSCENDENTALS)
    assert max(worst.values()) <= 3, worst


TILED = """
import webjax
import webjax.numpy as jnp
from webjax._src.codegen.glsl import matmul as glsl_matmul
from webjax._src.runtime.backend import get_backend

gpu, cpu = webjax.devices("webgl")[0], webjax.devices("wasm")[0]  # wasm: a fast reference
limits = get_backend("webgl").limits
key = webjax.random.PRNGKey(0)

def rnd(*shape):
    global key
    key, sub = webjax.random.split(key)
    return webjax.random.normal(sub, shape)

CASES = [  # name, function, a's shape, b's shape, k
    ("plain", lambda a, b: a @ b, (65, 63), (63, 130), 63),
    ("a transposed", lambda a, b: a.T @ b, (63, 65), (63, 130), 63),
    ("b and out transposed", lambda a, b: (a @ b.T).T, (65, 63), (130, 63), 63),
    ("batched", lambda a, b: jnp.matmul(a, b), (3, 20, 24), (3, 24, 36), 24),
    ("epilogue", lambda a, b: jnp.maximum(a @ b + 1.0, 0.0), (40, 24), (24, 36), 25),
]
bad, tiles = [], []
glsl_matmul.MIN_MACS, glsl_matmul.MIN_DIM = 0, 1
try:
    for rm, rn in ((2, 2), (4, 4), (4, 8)):
        if rm * rn // 4 > limits["max_draw_buffers"]:
            continue
        glsl_matmul.FORCE_TILE = glsl_matmul.Tile(rm, rn)
        get_backend("webgl")._cache.clear()
        tiles.append(rm * rn)
        for name, fn, sa, sb, k in CASES if rm * rn == 32 else CASES[:1]:
            a, b = rnd(*sa), rnd(*sb)
            got = webjax.jit(fn)(webjax.device_put(a, gpu), webjax.device_put(b, gpu))
            a, b = webjax.device_put(a, cpu), webjax.device_put(b, cpu)
            want, ref = fn(a, b), fn(jnp.abs(a), jnp.abs(b))  # ref: the size of the sums
            err = jnp.abs(webjax.device_put(got, cpu) - want)
            if bool(jnp.any(err > 2.0 * (k + 2) * 2.0**-24 * ref + 1e-30)):
                bad.append((rm, rn, name, float(jnp.max(err))))
finally:
    glsl_matmul.FORCE_TILE = None
    glsl_matmul.MIN_MACS, glsl_matmul.MIN_DIM = 1 << 18, 4
    get_backend("webgl")._cache.clear()
[bad, tiles, limits["max_draw_buffers"]]
"""


def test_tiled_matmul_on_swiftshader(webjax_page: PyodidePage) -> None:
    """The tiled product (pack, product into a texture array's layers, unpack) for each tile,
    against the wasm device; with the 4x8 tile (8 layers) also transposed operands and outputs,
    batches and a fused epilogue."""
    bad, tiles, draw_buffers = webjax_page.run_py(TILED)
    assert bad == [], bad
    assert tiles == [4, 16, 32][: len(tiles)] and (draw_buffers < 8 or len(tiles) == 3), tiles


PROGRAM = """
import webjax
import webjax.numpy as jnp
from webjax._src import profiler

dev = webjax.devices("webgl")[0]
with webjax.default_device(dev):
    x = jnp.linspace(-2.0, 2.0, 12).reshape(3, 4)
    f = webjax.jit(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))
    w = jnp.ones((4, 2)) * 0.1
    g = webjax.grad(f)(w)
    profiler.start_trace()
    s = jnp.sum(jnp.arange(1 << 17, dtype=jnp.float32) % 3.0)  # split into two passes
    srt = jnp.sort(jnp.array([3.0, -1.0, jnp.nan, 0.5, -0.0, 2.0]))
    webjax.block_until_ready((s, srt))
    events = profiler.stop_trace()
    out = [str(g.device), g.tolist(), float(s), srt.tolist(), len(events) > 0]
out.append(webjax.default_backend())
out
"""


def test_jax_program_on_webgl(webjax_page: PyodidePage) -> None:
    device, grad, total, srt, profiled, default = webjax_page.run_py_sync(PROGRAM)
    assert device == "webgl:0"
    assert len(grad) == 4 and all(len(r) == 2 for r in grad)
    assert total == sum(k % 3 for k in range(1 << 17))
    assert srt[:5] == [-1.0, -0.0, 0.5, 2.0, 3.0] and srt[5] != srt[5]  # NaN sorts last
    assert profiled
    assert default != "webgl"  # never the default where wasm or webgpu is there


def test_context_loss_is_a_clear_error_and_clear_backends_gives_a_fresh_context(
    fresh_page: PyodidePage,
) -> None:
    fresh_page.run_py_sync(
        "import webjax, webjax.numpy as jnp\n"
        "dev = webjax.devices('webgl')[0]\n"
        "x = webjax.device_put(jnp.arange(4.0), dev)\n"
        "y = x + 1\n"
        "y.block_until_ready()\n"
        "assert dev.backend.host.lose_context()\n"
    )
    for use in ("(x * 2).tolist()", "y.tolist()"):
        with pytest.raises(PyodideError) as info:
            fresh_page.run_py_sync(use)
        assert "context was lost" in info.value.message
        assert "webjax.clear_backends()" in info.value.message  # says how to recover
    got = fresh_page.run_py_sync(
        "webjax.clear_backends()\n"
        "new = webjax.devices('webgl')[0]\n"
        "z = webjax.device_put(jnp.arange(4.0), new)\n"
        "[(z * 2 + 1).tolist(), new == dev, new.backend.host is dev.backend.host,\n"
        " new.backend.host.lost, dev.backend.host.lost]"
    )
    assert got[:4] == [[1.0, 3.0, 5.0, 7.0], False, False, None]
    assert got[4] in ("webglcontextlost", "WEBGL_lose_context")  # whichever came first
    for use in ("y.tolist()", "(z + y).tolist()"):  # the lost context's arrays keep raising
        with pytest.raises(PyodideError) as info:
            fresh_page.run_py_sync(use)
        assert "context was lost" in info.value.message


PROFILE = """
import webjax, webjax.numpy as jnp
from webjax._src import profiler

dev = webjax.devices("webgl")[0]
host = dev.backend.host
x = webjax.device_put(jnp.arange(3000, dtype=jnp.float32), dev) * 1.0  # committed to webgl
x.block_until_ready()


def clocks(work):
    profiler.start_trace()
    out = work()
    events = profiler.stop_trace()
    return [[e["args"]["clock"], e["dur"] > 0] for e in events], out


async def waited():  # an async wait lets the event loop turn: the query results arrive
    return await webjax.block_until_ready_async((jnp.sum(jnp.sin(x)), jnp.exp(x * 1e-3)))


profiler.start_trace()
await waited()
gpu = [[e["args"]["clock"], e["dur"] > 0] for e in profiler.stop_trace()]
issue, _ = clocks(lambda: webjax.block_until_ready(jnp.cos(x)))  # no turn before the stop
timer, host.timer = host.timer, None  # as a context without the extension
cpu, _ = clocks(lambda: webjax.block_until_ready(jnp.cos(x) + 2.0))
host.timer = timer
[timer is not None, gpu, issue, cpu, timer.pending]
"""


def test_profiler_events_name_their_clock(webjax_page: PyodidePage) -> None:
    # SwiftShader's WebGL2 offers EXT_disjoint_timer_query_webgl2 (probed when this test was
    # written): kernels are timed by TIME_ELAPSED queries collected without a wait
    has_timer, gpu, issue, cpu, pending = webjax_page.run_py(PROFILE)
    assert has_timer, "the context lost EXT_disjoint_timer_query_webgl2"
    assert gpu == [["gpu", True], ["gpu", True]]
    # stopped in the task that issued it: the result cannot have arrived (WebGL shows query
    # results only after the event loop turns), so the event says it holds the issue time
    assert issue == [["cpu-issue", True]]
    assert cpu == [["cpu", True]]  # no timer: host time around a wait for the GPU
    assert pending == 0


WORKER_JS = """
async ([site, code]) => {
  const source = `
    import { loadWebjax } from "${site}webjax.mjs";
    onmessage = async (e) => {
      try {
        const py = await loadWebjax();
        postMessage({ ok: true, value: py.runPython(e.data) });  // sync: readPixels waits
      } catch (err) {
        postMessage({ ok: false, value: String(err) });
      }
    };`;
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const worker = new Worker(url, { type: "module" });
  const reply = await new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error("worker failed: " + e.message));
    worker.postMessage(code);
  });
  worker.terminate();
  return [reply.ok, reply.value, typeof document];
}
"""

WORKER_PROGRAM = """
import json, webjax, webjax.numpy as jnp
from webjax._src.hosts import in_browser
dev = webjax.devices("webgl")[0]
x = webjax.device_put(jnp.arange(6.0).reshape(2, 3), dev)
y = webjax.jit(lambda a: jnp.sum(jnp.tanh(a) * a, axis=1) + a @ a.T)(x)
json.dumps([str(y.device), y.tolist(), in_browser(), dev.backend.description,
            hasattr(__import__("js"), "document")])
"""


def test_webgl_in_a_dedicated_worker(new_page: Any, server_url: str) -> None:
    # Pyodide + webjax inside a Web Worker: the webgl device through an OffscreenCanvas there
    page = new_page()
    page.goto(server_url + "test.html")
    ok, value, _ = page.evaluate(WORKER_JS, [server_url, WORKER_PROGRAM])
    assert ok, value
    device, got, browser, description, has_document = json.loads(value)
    assert device == "webgl:0" and browser and not has_document  # a worker: no DOM
    assert "SwiftShader" in description or "ANGLE" in description, description
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    want = np.sum(np.tanh(x) * x, axis=1) + x @ x.T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
