"""The eager scheduler: lazy execution, fusion counts, and the per-kernel buffer limit."""

from __future__ import annotations

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax._src import profiler


def _dispatches(platform: str) -> int:
    return profiler.dispatch_count.get(platform, 0)


def test_buffer_limit_is_respected(device, monkeypatch):
    backend = device.backend
    monkeypatch.setattr(backend, "max_args", 3)
    seen: list[int] = []
    original = backend.prepare

    def spy(kernel):
        seen.append(kernel.nargs)
        return original(kernel)

    monkeypatch.setattr(backend, "prepare", spy)
    xs = [jnp.array([float(i), 1.0]) for i in range(9)]
    s = xs[0]
    for x in xs[1:]:
        s = s * 0.5 + x
    expected = 0.0
    for i in range(9):
        expected = expected * 0.5 + i if i else 0.0
    assert s.tolist()[0] == pytest.approx(expected)
    assert jnp.stack(xs).sum(0).tolist() == [36.0, 9.0]
    assert jnp.concatenate(xs).tolist()[::2] == [float(i) for i in range(9)]
    assert seen and max(seen) <= 3


def test_fusion_counts(device):
    before = _dispatches(device.platform)
    x = jnp.arange(100.0)
    y = (jnp.sin(x) * 2.0 + x / 3.0).sum()  # elementwise chain fused into the reduction
    y.block_until_ready()
    assert _dispatches(device.platform) - before == 1
    before = _dispatches(device.platform)
    z = jnp.exp(x).reshape(10, 10).T[2:5]  # movement ops never launch kernels
    z.block_until_ready()
    assert _dispatches(device.platform) - before == 1


def test_dropped_work_never_runs(device):
    before = _dispatches(device.platform)
    for _ in range(5):
        _ = jnp.arange(1000.0) * 3.0  # never read
    assert _dispatches(device.platform) == before


def test_jit_fuses_elementwise_program(device):
    f = webjax.jit(lambda x, y: jnp.sqrt(x * x + y * y) * 0.5 + 1)
    x = jnp.arange(16.0)
    f(x, x).block_until_ready()
    before = _dispatches(device.platform)
    f(x, x).block_until_ready()
    assert _dispatches(device.platform) - before == 1


def test_jit_fuses_an_epilogue_through_a_transpose(device):
    """A gradient's dot_general is followed by a transpose (as in JAX's jaxprs) and then the
    update: the transposed product and the update are one kernel, as with no transpose, where
    the device's tiled products write any layout (webgpu, webgl). wasm's tiled product writes
    row-major rows (a transposed one fell to the scalar loop: an encoder layer's K projection
    ran 20x slower), so there the product is a kernel and the transposed update another."""
    rng = np.random.default_rng(0)
    w, x, g = (rng.standard_normal(s).astype(np.float32) for s in ((24, 16), (8, 24), (8, 16)))
    step = webjax.jit(lambda w, x, g: w - 0.5 * jnp.dot(g.T, x).T)
    flat = webjax.jit(lambda w, x, g: jnp.sum(x.reshape(8, 4, 6), 0).reshape(24) * 2.0 + 1.0)
    args = [jnp.asarray(a) for a in (w, x, g)]
    transposes = device.backend.fuses_transposed_reductions
    assert transposes == (device.platform != "wasm")
    for f, want, kernels in (
        (step, w - 0.5 * (g.T @ x).T, 1 if transposes else 2),
        (flat, x.sum(0) * 2.0 + 1.0, 1),
    ):
        f(*args).block_until_ready()  # compiled
        before = _dispatches(device.platform)
        got = f(*args)
        got.block_until_ready()
        assert _dispatches(device.platform) - before == kernels
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_jit_program_compiles_once(device, monkeypatch):
    from webjax._src.dispatch import lowering

    calls = []
    original = lowering.apply_primitive
    monkeypatch.setattr(
        lowering, "apply_primitive", lambda *a, **k: calls.append(1) or original(*a, **k)
    )
    f = webjax.jit(lambda x, w: jnp.tanh(x @ w).sum(axis=0) * 2.0)
    x, w = jnp.arange(6.0).reshape(2, 3), jnp.ones((3, 4))
    x2 = x * 2.0
    first = f(x, w).tolist()
    n = len(calls)
    assert n > 0
    again = f(x2, w).tolist()  # same shapes: the compiled program runs, nothing is lowered
    assert len(calls) == n
    assert first != again
    expected = (jnp.tanh((x * 2.0) @ w).sum(axis=0) * 2.0).tolist()
    assert again == pytest.approx(expected, rel=1e-6)


def test_jit_with_value_dependent_control_flow_runs_eagerly(device):
    f = webjax.jit(lambda x: webjax.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x))
    assert f(jnp.ones(2)).tolist() == [2.0, 2.0]
    assert f(-jnp.ones(2)).tolist() == [1.0, 1.0]


def test_training_loop_does_not_leak(device):
    import gc

    from webjax._src.dispatch import lazy

    w = jnp.ones((8, 4)) * 0.1
    x = jnp.arange(16.0).reshape(2, 8) / 16.0

    @webjax.jit
    def step(w):
        g = webjax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
        return w - 0.1 * g

    for _ in range(3):
        w = step(w)
    w.block_until_ready()
    gc.collect()
    before = lazy.live_buffers[device.platform]
    for _ in range(1000):
        w = step(w)
    w.block_until_ready()
    gc.collect()
    assert lazy.live_buffers[device.platform] <= before + 1


def test_donated_buffers_are_reused(device):
    """jit(donate_argnums=...): the donated array is deleted, as in JAX; where the backend lets
    a kernel write the buffer it reads (cpu, wasm), the update lands in the donated memory."""
    g = jnp.full((4, 4), 2.0)
    step = webjax.jit(lambda w, g: w - 0.25 * g, donate_argnums=0)
    w = jnp.ones((4, 4)) + 0.0
    w.block_until_ready()
    reused = 0
    for _ in range(5):
        handle = w._buffer().handle
        new = step(w, g)
        new.block_until_ready()
        assert w.is_deleted()
        with pytest.raises(RuntimeError, match="deleted"):
            w + 1
        reused += new._buffer().handle is handle
        w = new
    np.testing.assert_array_equal(np.asarray(w), np.full((4, 4), 1.0 - 5 * 0.5, np.float32))
    assert reused == (5 if device.backend.kernels_may_alias else 0)


def test_donation_keeps_other_readers_correct(device):
    """A donated buffer read by a later kernel (the sum) or held by a view is not overwritten."""
    f = webjax.jit(lambda x, y: (x * 2.0 + y, x.sum()), donate_argnames="x")
    x = jnp.arange(6.0) + 0.0
    out, s = f(x=x, y=jnp.ones(6))
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0) * 2 + 1)
    assert float(s) == 15.0
    x = jnp.arange(6.0) + 0.0
    view = x.reshape(2, 3)
    out = webjax.jit(lambda x: x * 3.0, donate_argnums=0)(x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0) * 3)
    np.testing.assert_array_equal(np.asarray(view), np.arange(6.0).reshape(2, 3))
    pending = jnp.arange(4.0) * 5.0  # not computed yet: donated before it ever ran
    out = webjax.jit(lambda x: x + 1.0, donate_argnums=0)(pending)
    np.testing.assert_array_equal(np.asarray(out), np.arange(4.0) * 5 + 1)


def _kernels_in_trace(tmp_path, fn, *args):
    import json

    fn(*args).block_until_ready()  # compile outside the trace
    webjax.profiler.start_trace(tmp_path)
    fn(*args).block_until_ready()
    webjax.profiler.stop_trace()
    events = json.loads((tmp_path / "webjax.trace.json").read_text())["traceEvents"]
    return len([e for e in events if e["cat"] == "kernel"])


def test_fusion_counts_from_trace_file(device, tmp_path):
    a, b = jnp.arange(12.0).reshape(3, 4), jnp.ones((4, 5))
    x = jnp.arange(20.0).reshape(4, 5)
    assert _kernels_in_trace(tmp_path, webjax.jit(lambda x, y: jnp.sqrt(x * x + y * y)), x, x) == 1
    relu_mm = webjax.jit(lambda a, b: webjax.nn.relu(a @ b + 1))
    assert _kernels_in_trace(tmp_path, relu_mm, a, b) == 1
    assert _kernels_in_trace(tmp_path, webjax.jit(webjax.nn.softmax), x) <= 4
    assert _kernels_in_trace(tmp_path, webjax.jit(lambda x: x.T.sum(0)), x) == 1


def test_jit_complex_rule_reads_a_reduction_once(device):
    # a complex rule reads its operand's real and imaginary parts separately: a reduction in
    # the operand must be its own kernel, not fused twice into the consumer's
    x = np.random.RandomState(0).standard_normal((4, 6, 10)).astype(np.float32)
    f = webjax.jit(lambda a: jnp.abs(jnp.sum(a * (1 + 2j), axis=0) * (2 - 1j)))
    g = webjax.jit(lambda a: jnp.exp(jnp.sum(a * 1j, axis=1)))
    want_f = np.abs(np.sum(x * (1 + 2j), axis=0) * (2 - 1j))
    np.testing.assert_allclose(np.asarray(f(jnp.asarray(x))), want_f, rtol=1e-5, atol=1e-5)
    want_g = np.exp(np.sum(x * 1j, axis=1))
    np.testing.assert_allclose(np.asarray(g(jnp.asarray(x))), want_g, rtol=1e-5, atol=1e-5)
