"""The per-call fast paths: jit calls keyed by avals alone, the expression intern table, the
default-platform memo, and reused wasm blocks zeroed only within their size."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from devices import has_float64
from webjax._src import config as config_mod
from webjax._src import dtypes as dt
from webjax._src.ir import exp as E
from webjax._src.runtime import backend as rt


def test_jit_fast_path_reuses_the_trace(device):
    f = webjax.jit(lambda x, y: jnp.sqrt(x * x + y * y) * 0.5 + 1)
    x = jnp.arange(8, dtype=jnp.float32)
    y = jnp.ones(8, jnp.float32)
    want = np.sqrt(np.arange(8.0) ** 2 + 1) * 0.5 + 1
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x, y)), want, rtol=1e-6)
    assert f.trace_count == 1
    # a keyword argument is another pytree (as in JAX): one more trace, in the general cache
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(f(x, y=y)), want, rtol=1e-6)
    assert f.trace_count == 2
    # another shape, dtype or weak type is another trace
    f(x[:4], y[:4])
    assert f.trace_count == 3
    f(x.astype(jnp.int32), y)
    assert f.trace_count == 4
    f(x, jnp.asarray(1.0))  # weakly typed scalar: broadcasts, keeps float32
    assert f.trace_count == 5
    f(x, y)
    assert f.trace_count == 5
    # Python scalars and NumPy arrays take the general path and give the same values
    np.testing.assert_allclose(np.asarray(f(np.arange(8, dtype=np.float32), 1.0)), want, rtol=1e-6)


def test_jit_fast_path_follows_the_default_device(device):
    f = webjax.jit(lambda x: x * 2)
    x = jnp.arange(4.0)
    assert f(x).device == device
    with webjax.default_device(webjax.devices("cpu")[0]):
        out = f(jnp.arange(4.0))
        assert out.device.platform == "cpu"
        np.testing.assert_array_equal(np.asarray(out), [0, 2, 4, 6])
    assert f(x).device == device


def test_jit_fast_path_rejects_deleted_arrays(device):
    f = webjax.jit(lambda x: x + 1)
    x = jnp.arange(4.0)
    f(x)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)


def test_jit_fast_path_inside_transformations(device):
    f = webjax.jit(lambda x: jnp.sin(x) * x)
    x = jnp.arange(5.0)
    f(x)  # cached for concrete arrays; tracers take the general path
    g = webjax.grad(lambda x: f(x).sum())(x)
    np.testing.assert_allclose(
        np.asarray(g), np.cos(np.arange(5.0)) * np.arange(5.0) + np.sin(np.arange(5.0)), rtol=1e-5
    )
    v = webjax.vmap(f)(jnp.ones((3, 5)))
    np.testing.assert_allclose(np.asarray(v), np.full((3, 5), np.sin(1.0)), rtol=1e-6)
    # a jit traced inside another jit, called on a concrete array, is staged into the outer
    outer = webjax.jit(lambda y: f(x) + y)
    np.testing.assert_allclose(
        np.asarray(outer(jnp.ones(5))), np.sin(np.arange(5.0)) * np.arange(5.0) + 1, rtol=1e-6
    )


def test_interned_expressions_die_with_their_users():
    gc.collect()
    before = E.interned()

    class Buf:
        pass

    bufs = [Buf() for _ in range(50)]
    nodes = [E.add(E.load(b, E.idx(8), dt.float32), E.const(1.0, dt.float32)) for b in bufs]
    assert E.interned() >= before + 100
    again = E.add(E.load(bufs[3], E.idx(8), dt.float32), E.const(1.0, dt.float32))
    assert again is nodes[3]  # structurally equal: the same object
    del nodes, again, bufs
    gc.collect()
    assert E.interned() <= before + 2  # the shared idx / const nodes may stay


def test_default_platform_follows_the_setting():
    first = rt.default_platform()
    other = "cpu" if first != "cpu" else "wasm"
    if rt.unavailable_reason(other) is not None:
        pytest.skip(f"{other} unavailable")
    saved = config_mod.config.jax_platforms
    try:
        webjax.config.update("jax_platforms", other)
        assert rt.default_platform() == other
        assert jnp.ones(3).device.platform == other
    finally:
        webjax.config.update("jax_platforms", saved)
    assert rt.default_platform() == first


def test_reused_wasm_block_is_zeroed_only_within_its_size():
    from webjax._src.runtime.wasm import WasmBackend

    be = WasmBackend()
    filled: list[int] = []
    fill = be.host.fill
    be.host.fill = lambda offset, byte, n: (filled.append(n), fill(offset, byte, n))
    n = 1000 * 4 + 4  # a size class with slack past the buffer
    h = be.malloc(n)
    assert h.cap > n
    be.write(h, b"\xff" * n)
    be.free(h)
    again = be.malloc(n)
    assert again.ptr == h.ptr and again.dirty
    be.write(again, b"\x01" * 10)
    assert filled == [n - 10]  # the rest of the buffer, not the slack
    assert be.read(again, n) == b"\x01" * 10 + bytes(n - 10)
    with pytest.raises(ValueError, match="read of"):
        be.read(again, n + 4)
    with pytest.raises(ValueError, match="write of"):
        be.write(again, bytes(n + 4))


def test_jit_retraces_when_x64_changes(device):
    # a trace under enable_x64 makes 64-bit defaults (JAX keys its caches on the flag too)
    if not has_float64(device):
        pytest.skip(f"no 64-bit types on {device.platform}")
    f = webjax.jit(lambda x: x + jnp.arange(3))
    x = jnp.ones(3, jnp.int32)
    assert f(x).dtype == jnp.int32
    with webjax.enable_x64(True):
        assert f(x).dtype == jnp.int64
        assert (
            f(
                x,
            ).dtype
            == jnp.int64
        )
    assert f(x).dtype == jnp.int32
    assert f.trace_count == 2


def _kernel_exprs(fn):
    webjax.profiler.start_trace("/tmp/webjax-test-trace")
    try:
        out = fn()
        out.block_until_ready()
    finally:
        events = webjax.profiler.stop_trace()
    rows = events["traceEvents"] if isinstance(events, dict) else events
    return out, [
        e["args"]["expr"] for e in rows if e.get("ph") == "X" and "expr" in e.get("args", {})
    ]


def test_matmul_of_a_reshaped_transpose_is_copied_first(device):
    # heads (B, H, T, D) back to (B, T, H*D): the contracted index would read at
    # (c // D) * T*D + t*D + c % D, not affine in c, which no tiled product takes; the view is
    # copied into a buffer first, and the product reads it at affine indices
    rng = np.random.RandomState(0)
    a = rng.standard_normal((1, 4, 16, 8)).astype(np.float32)
    w = rng.standard_normal((32, 24)).astype(np.float32)
    x, y = jnp.asarray(a) + 0, jnp.asarray(w) + 0
    x.block_until_ready(), y.block_until_ready()
    merged = jnp.reshape(jnp.transpose(x, (0, 2, 1, 3)), (1, 16, 32))
    out, exprs = _kernel_exprs(lambda: merged @ y)
    want = np.transpose(a, (0, 2, 1, 3)).reshape(1, 16, 32) @ w
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)
    products = [e for e in exprs if "add_r<32>" in e]
    assert len(exprs) == 2 and len(products) == 1, exprs  # the copy, then the product
    assert "(r / 8)" not in products[0] and "(r % 8)" not in products[0], products[0]
    # a plain transposed operand is affine: read in place, no copy
    _, exprs = _kernel_exprs(lambda: jnp.transpose(y) @ jnp.transpose(y)[0])
    assert len(exprs) == 1, exprs
