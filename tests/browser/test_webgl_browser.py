"""The webgl backend inside Pyodide in Chromium (WebGL2 on SwiftShader through ANGLE).

The same GLSL ES that the native tests check on Mesa's llvmpipe runs on the page's WebGL2
context here. WebGL reads are synchronous (`readPixels`), so unlike webgpu every path works
under plain `runPython` as well as `runPythonAsync`.
"""

from __future__ import annotations

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


def test_context_loss_is_a_clear_error(fresh_page: PyodidePage) -> None:
    fresh_page.run_py_sync(
        "import webjax, webjax.numpy as jnp\n"
        "dev = webjax.devices('webgl')[0]\n"
        "x = webjax.device_put(jnp.arange(4.0), dev)\n"
        "(x + 1).block_until_ready()\n"
        "dev.backend.host.lose_context()\n"
    )
    with pytest.raises(PyodideError) as info:
        fresh_page.run_py_sync("(x * 2).tolist()")
    assert "context was lost" in info.value.message
