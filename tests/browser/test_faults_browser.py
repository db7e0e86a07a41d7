"""Faults inside Pyodide in Chromium, on every browser device (tests/test_faults.py does the same
natively): an array too large for the device, a kernel that fails to compile, and the REPL's
Stop (Pyodide's interrupt buffer) in the middle of a jitted program. Each is a Python exception
naming the device, never a hang, stale data or zeros; nothing leaks; later work is right.
(Device and context loss: test_webgpu_browser.py and test_webgl_browser.py.)"""

from __future__ import annotations

import pytest
from browser_harness import PyodidePage

pytestmark = pytest.mark.browser

PLATFORMS = ["wasm", "webgpu", "webgl"]

SETUP = """
import gc, math
import webjax, webjax.numpy as jnp
from webjax._src.dispatch import lazy

def linspace(a, b, n):
    return [a + (b - a) * i / (n - 1) for i in range(n)]

def program(x):
    return (jnp.sum(x * 2.0) + jnp.max(jnp.sin(x))) * jnp.mean(x)

def expected(x):
    return (sum(v * 2.0 for v in x) + max(math.sin(v) for v in x)) * sum(x) / len(x)

def live(dev):
    gc.collect()
    return lazy.live_buffers[dev.platform]

def outcome(fn):
    try:
        fn()
    except BaseException as e:
        return [type(e).__name__, str(e)[:300]]
    return ["no error", ""]
"""


@pytest.fixture(scope="module")
def page(webjax_page: PyodidePage) -> PyodidePage:
    webjax_page.run_py(SETUP)
    return webjax_page


@pytest.mark.parametrize("platform", PLATFORMS)
def test_an_array_too_large_for_the_device(page: PyodidePage, platform: str) -> None:
    got = page.run_py(
        f"dev = webjax.devices({platform!r})[0]\n"
        "before = live(dev)\n"
        "with webjax.default_device(dev):\n"
        "    err = outcome(lambda: (jnp.ones((2**33,), jnp.float32) + 1).block_until_ready())\n"
        "    x = linspace(0.5, 2, 1000)\n"
        "    ok = abs(float(program(jnp.asarray(x))) - expected(x)) <= 1e-5 * abs(expected(x))\n"
        "[err, live(dev) - before, ok]"
    )
    (kind, message), leaked, ok = got
    assert kind == "MemoryError", got
    assert platform in message, got
    assert leaked == 0 and ok, got


CORRUPT = {
    "wasm": (
        "real = host.instantiate\n"
        "host.instantiate = lambda wasm, export: real(wasm[:-7], export)\n"
        "real_p = host.instantiate_parallel\n"
        "host.instantiate_parallel = lambda wasm, export, *a: real_p(wasm[:-7], export, *a)\n"
    ),
    "webgpu": (
        "real = host.create_pipeline\n"
        "host.create_pipeline = lambda src, n: real(src + '\\n}}}', n)\n"
    ),
    "webgl": (
        "real = host.create_program\nhost.create_program = lambda vs, fs: real(vs, fs + '\\n}}}')\n"
    ),
}
RESTORE = {
    "wasm": "del host.instantiate, host.instantiate_parallel\n",
    "webgpu": "del host.create_pipeline\n",
    "webgl": "del host.create_program\n",
}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_kernel_that_fails_to_compile(page: PyodidePage, platform: str) -> None:
    got = page.run_py(
        f"dev = webjax.devices({platform!r})[0]\n"
        "host = dev.backend.host\n"
        "before = live(dev)\n"
        "x = linspace(0.5, 2.0, 777)\n" + CORRUPT[platform] + "with webjax.default_device(dev):\n"
        "    err = outcome(lambda: float(jnp.sum(jnp.asarray(x) * 3.75 + 0.625)))\n"
        + RESTORE[platform]
        + "with webjax.default_device(dev):\n"
        "    again = float(jnp.sum(jnp.asarray(x) * 3.75 + 0.625))\n"
        "[err, live(dev) - before, abs(again - sum(v * 3.75 + 0.625 for v in x)) < 1e-2]"
    )
    (kind, message), leaked, ok = got
    assert kind == "RuntimeError", got
    assert f"{platform}: " in message and "compil" in message, got
    assert leaked == 0 and ok, got


@pytest.mark.parametrize("platform", PLATFORMS)
def test_stop_in_the_middle_of_a_jitted_program(page: PyodidePage, platform: str) -> None:
    # The REPL's Stop writes SIGINT into Pyodide's interrupt buffer; Python raises
    # KeyboardInterrupt at its next check. Here the second kernel launch presses it.
    got = page.run_py(
        "import js, pyodide_js\n"
        "from pyodide.code import run_js\n"
        "buf = run_js('new Int32Array(new SharedArrayBuffer(4))')\n"
        "pyodide_js.setInterruptBuffer(buf)\n"
        f"dev = webjax.devices({platform!r})[0]\n"
        "backend = dev.backend\n"
        "x = linspace(-1, 3, 5000)\n"
        "with webjax.default_device(dev):\n"
        "    xs = jnp.asarray(x)\n"
        "    f = webjax.jit(program)\n"
        "    before = live(dev)\n"
        "    out = f(xs)\n"
        "    calls = [0]\n"
        "    real = backend.dispatch\n"
        "    def dispatch(*args):\n"
        "        calls[0] += 1\n"
        "        if calls[0] == 2:\n"
        "            buf[0] = 2  # SIGINT\n"
        "        return real(*args)\n"
        "    backend.dispatch = dispatch\n"
        "    err = outcome(lambda: out.block_until_ready())\n"
        "    del backend.dispatch\n"
        "    buf[0] = 0\n"
        "    pyodide_js.setInterruptBuffer(js.undefined)\n"
        "    first = float(out)\n"
        "    second = float(f(xs))\n"
        "    del out\n"
        "[err[0], calls[0], first, second, expected(x), live(dev) - before]"
    )
    kind, calls, first, second, want, leaked = got
    assert kind == "KeyboardInterrupt", got
    assert calls >= 2, got
    assert abs(first - want) <= 1e-4 * abs(want) and abs(second - want) <= 1e-4 * abs(want), got
    assert leaked == 0, got
