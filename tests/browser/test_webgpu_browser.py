"""The webgpu backend inside Pyodide in Chromium (WebGPU on SwiftShader).

The same WGSL that the native tests check on lavapipe runs through `navigator.gpu` here. Under
`runPythonAsync` reads block through JSPI; under plain `runPython` they cannot, and the backend
must say which async call to use instead.
"""

from __future__ import annotations

import pytest
from browser_harness import PyodideError, PyodidePage
from kernel_checks import SETUP, SWEEP, TRANSCENDENTALS

pytestmark = pytest.mark.browser

USE_WEBGPU = "\nfrom webjax._src.runtime.webgpu import WebGPUBackend\ngpu = WebGPUBackend()\n"


def test_kernels_match_cpu_under_run_python_async(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP + USE_WEBGPU)
    got = webjax_page.run_py(
        """
got = {name: gpu.read(*run(gpu, name)).hex() for name in KERNELS}
[got == expect, got, expect, gpu.description, gpu.max_args]
"""
    )
    assert got[0], got
    assert got[4] >= 7


def test_sync_read_under_plain_run_python_names_the_async_call(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP + USE_WEBGPU)
    with pytest.raises(PyodideError) as info:
        webjax_page.run_py_sync("gpu.read(*run(gpu, 'f32'))")
    assert info.value.type_name == "SyncReadError"
    assert "block_until_ready_async" in info.value.message
    assert "read_async" in info.value.message
    # the async read works from the same (plain) entry point's queued work
    got = webjax_page.run_py("h, n = run(gpu, 'f32')\n(await gpu.read_async(h, n)).hex()")
    assert got == webjax_page.run_py("expect['f32']")


def test_device_init_under_plain_run_python(fresh_page: PyodidePage) -> None:
    fresh_page.run_py_sync(SETUP + "from webjax._src.runtime.webgpu import WebGPUBackend\n")
    with pytest.raises(PyodideError) as info:
        fresh_page.run_py_sync("WebGPUBackend()")
    assert info.value.type_name == "SyncReadError"
    assert "init_webgpu_async" in info.value.message
    fresh_page.run_py(
        "from webjax._src.runtime.webgpu import init_webgpu_async\nawait init_webgpu_async()\n"
    )
    # with the device open, the factory and dispatches work from plain runPython too
    fresh_page.run_py_sync("gpu = WebGPUBackend()\nh, n = run(gpu, 'bool')")
    got = fresh_page.run_py("(await gpu.read_async(h, n)).hex()")
    assert got == fresh_page.run_py("expect['bool']")


def test_exact_op_sweep_matches_cpu_on_swiftshader(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP + USE_WEBGPU)
    assert webjax_page.run_py(SWEEP) == []


def test_transcendentals_close_on_swiftshader(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP + USE_WEBGPU)
    worst = webjax_page.run_py(TRANSCENDENTALS)
    assert max(worst.values()) <= 3, worst


FAST_PATHS = """
import math
import struct
import webjax
import webjax.numpy as jnp
from webjax._src import profiler

await webjax.init_webgpu_async()
dev = webjax.devices("webgpu")[0]
be = dev.backend
be._cache.clear()
with webjax.default_device(dev):
    n = 96
    a = (jnp.arange(n * n, dtype=jnp.float32).reshape(n, n) % 7) - 3.0
    b = (jnp.arange(n * n, dtype=jnp.float32).reshape(n, n) % 5) * 0.5
    await webjax.block_until_ready_async((a, b))  # buffers (the tiled matmul reads buffers)
    profiler.start_trace()
    m = a @ b  # register-tiled on SwiftShader
    s = jnp.sum(jnp.arange(1 << 18, dtype=jnp.float32) % 3.0)  # a two-pass reduction
    x = jnp.arange(1 << 12, dtype=jnp.float32)
    c = jnp.sqrt(x * x + 9.0) * 0.5 + 1  # four elements per invocation, correctly rounded
    await webjax.block_until_ready_async((m, s, c))
    events = profiler.stop_trace()
    av, bv = a.tolist(), b.tolist()
    want_m = [sum(av[i][k] * bv[k][j] for k in range(n)) for i, j in ((0, 0), (95, 95), (17, 40))]
    got_m = [float(m[i, j]) for i, j in ((0, 0), (95, 95), (17, 40))]
    f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]  # float32 rounding
    want_c = [f32(f32(f32(math.sqrt(f32(f32(v * v) + 9.0))) * 0.5) + 1)
              for v in (0.0, 5.0, 4095.0)]
    got_c = [float(c[k]) for k in (0, 5, 4095)]
notes = [e.program.note for e in be._cache.values()]
[be.limits.get("cpu"), {k: be.limits.get(k) for k in ("exact_sqrt", "exact_div")},
 got_m == want_m, float(s), got_c == want_c, [len(e.program.passes) for e in be._cache.values()],
 any("no shared memory" in t for t in notes), be.host.timestamps,
 [(e["args"]["kind"], e["dur"]) for e in events]]
"""


def test_fast_paths_and_gpu_times_on_swiftshader(fresh_page: PyodidePage) -> None:
    cpu, exact, matmul_ok, total, chain_ok, passes, regs, stamps, events = fresh_page.run_py(
        FAST_PATHS
    )
    assert cpu == 1  # SwiftShader is a CPU implementation: barrier-free kernels
    assert set(exact.values()) <= {0, 1}  # the start-up probe ran
    assert matmul_ok and chain_ok and regs
    assert total == sum(k % 3 for k in range(1 << 18))
    assert 2 in passes  # the sum's partials, then the finish
    assert len(events) >= 3
    if stamps:  # GPU durations from timestamp queries
        assert all(dur > 0 for _, dur in events)


def test_device_loss_is_a_clear_error_and_clear_backends_gives_a_fresh_device(
    fresh_page: PyodidePage,
) -> None:
    # as on webgl (test_webgl_browser): the loss named on the next use, a fresh device on request
    fresh_page.run_py(
        "import webjax, webjax.numpy as jnp\n"
        "dev = webjax.devices('webgpu')[0]\n"
        "x = webjax.device_put(jnp.arange(4.0), dev)\n"
        "y = x + 1\n"
        "y.block_until_ready()\n"
        "assert dev.backend.host.lose_device()\n"
    )
    for use in ("(x * 2).tolist()", "y.tolist()"):
        with pytest.raises(PyodideError) as info:
            fresh_page.run_py(use)
        assert "device was lost" in info.value.message
        assert "webjax.clear_backends()" in info.value.message
    got = fresh_page.run_py(
        "webjax.clear_backends()\n"
        "new = webjax.devices('webgpu')[0]\n"
        "z = webjax.device_put(jnp.arange(4.0), new)\n"
        "[(z * 2 + 1).tolist(), new == dev, new.backend.host is dev.backend.host,\n"
        " new.backend.host.lost]"
    )
    assert got == [[1.0, 3.0, 5.0, 7.0], False, False, None]
    with pytest.raises(PyodideError) as info:
        fresh_page.run_py("y.tolist()")  # the lost device's arrays keep raising
    assert "device was lost" in info.value.message
