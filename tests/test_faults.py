"""Faults on every device: an allocation the device cannot hold, wasm memory at its maximum, a
kernel that fails to compile, and KeyboardInterrupt (the REPL's Stop) in the middle of a jitted
program. Each is a clear Python exception naming the device; nothing leaks (the live-buffer
count returns to where it was), nothing is cached half-built, and later work is right.

The browser tier checks the same faults inside Pyodide (tests/browser/test_faults_browser.py),
plus device and context loss (test_webgpu_browser.py, test_webgl_browser.py) and a worker of the
wasm thread pool failing mid-job (test_wasm_threads.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax._src.dispatch import lazy


def _program(x: Any) -> Any:
    # three reductions: three kernels, each scheduled on its own
    return (jnp.sum(x * 2.0) + jnp.max(jnp.sin(x))) * jnp.mean(x)


def _expected(x: np.ndarray) -> float:
    return float((np.sum(x * 2.0) + np.max(np.sin(x))) * np.mean(x))


def _live(device: Any) -> int:
    gc.collect()  # a caught exception's traceback holds frames (and their arrays) in a cycle
    return lazy.live_buffers[device.platform]


def test_an_array_too_large_for_the_device_is_a_memory_error(device: Any) -> None:
    before = _live(device)
    with pytest.raises(MemoryError, match=device.platform):
        (jnp.ones((2**33,), jnp.float32) + 1.0).block_until_ready()
    assert _live(device) == before
    x = np.linspace(0.5, 2, 1000, dtype=np.float32)
    np.testing.assert_allclose(float(_program(jnp.asarray(x))), _expected(x), rtol=1e-5)


def test_wasm_memory_at_its_maximum_then_freed() -> None:
    backend = webjax.devices("wasm")[0].backend
    held = []
    with pytest.raises(MemoryError, match="wasm memory limit"):
        for _ in range(8):  # 1 GiB blocks (reserved, never touched) until the 4 GiB limit
            held.append(backend.malloc(1 << 30))
    assert 1 <= len(held) <= 4
    for h in held:
        backend.free(h)
    with webjax.default_device(webjax.devices("wasm")[0]):
        x = np.arange(4096, dtype=np.float32) / 4096
        np.testing.assert_allclose(float(_program(jnp.asarray(x))), _expected(x), rtol=1e-5)


def _corrupt_compiler(monkeypatch: pytest.MonkeyPatch, device: Any) -> None:
    """Make the device's real compiler see a broken kernel: the source (or module) it gets is
    damaged on the way in, so the error comes from the shader compiler or the wasm engine."""
    if device.platform == "cpu":
        pytest.skip("the cpu backend compiles no shaders or modules")
    host = device.backend.host
    if device.platform == "wasm":
        real = host.instantiate
        monkeypatch.setattr(host, "instantiate", lambda wasm, export: real(wasm[:-7], export))
        if hasattr(host, "instantiate_parallel"):  # a host with a thread pool
            real_parallel = host.instantiate_parallel
            monkeypatch.setattr(
                host,
                "instantiate_parallel",
                lambda wasm, export, *a: real_parallel(wasm[:-7], export, *a),
            )
    elif device.platform == "webgpu":
        real = host.create_pipeline
        monkeypatch.setattr(host, "create_pipeline", lambda src, n: real(src + "\n}}}", n))
    elif device.platform == "webgl":
        real = host.create_program
        monkeypatch.setattr(host, "create_program", lambda vs, fs: real(vs, fs + "\n}}}"))


def test_a_kernel_that_fails_to_compile_is_a_clear_error(device: Any) -> None:
    x = np.linspace(0.5, 2.0, 777, dtype=np.float32)
    before = _live(device)
    with pytest.MonkeyPatch.context() as mp:
        _corrupt_compiler(mp, device)
        with pytest.raises(RuntimeError, match=rf"{device.platform}: .*compilation failed"):
            # a kernel of its own (a constant only this test uses), so none is cached yet
            float(jnp.sum(jnp.asarray(x) * 3.25 + 0.125))
    assert _live(device) == before
    # nothing half-built was cached: the same kernel compiles and runs now
    np.testing.assert_allclose(
        float(jnp.sum(jnp.asarray(x) * 3.25 + 0.125)), np.sum(x * 3.25 + 0.125), rtol=1e-5
    )


@pytest.fixture
def interrupt_at() -> Iterator[Any]:
    """interrupt_at(device, k): the k-th kernel launch on `device` raises KeyboardInterrupt,
    as Pyodide does when the REPL's Stop is pressed between two launches."""
    restore: list[Any] = []

    def arm(device: Any, k: int) -> None:
        backend = device.backend
        real = backend.dispatch
        calls = [0]

        def dispatch(*args: Any) -> Any:
            calls[0] += 1
            if calls[0] == k:
                raise KeyboardInterrupt
            return real(*args)

        backend.dispatch = dispatch
        restore.append(backend)

    yield arm
    for backend in restore:
        vars(backend).pop("dispatch", None)  # the class's method again


def test_keyboard_interrupt_inside_a_jitted_program(device: Any, interrupt_at: Any) -> None:
    x = np.linspace(-1, 3, 5000, dtype=np.float32)
    xs = jnp.asarray(x)
    xs.block_until_ready()
    f = webjax.jit(_program)
    before = _live(device)
    out = f(xs)
    interrupt_at(device, 2)
    with pytest.raises(KeyboardInterrupt):
        out.block_until_ready()
    vars(device.backend).pop("dispatch")
    # the interrupted program's arrays are still usable: what did not run, runs now
    np.testing.assert_allclose(float(out), _expected(x), rtol=1e-5)
    np.testing.assert_allclose(float(f(xs)), _expected(x), rtol=1e-5)
    del out
    assert _live(device) == before


def test_a_buffer_interrupted_while_being_made_frees_quietly(
    device: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The REPL's Stop can land inside LazyBuffer.__init__, before `handle` is set: collecting
    the half-made buffer raises nothing (it printed "Exception ignored ... no attribute
    'handle'" in Chromium's REPL) and frees nothing."""
    unraisable: list[Any] = []
    monkeypatch.setattr("sys.unraisablehook", unraisable.append)
    before = _live(device)
    half = lazy.LazyBuffer.__new__(lazy.LazyBuffer)
    half.device = device  # __init__ interrupted after its first statement
    del half
    gc.collect()
    assert unraisable == []
    assert _live(device) == before
