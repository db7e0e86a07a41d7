"""What is particular to the webgl backend (the shared sweeps are in test_gpu_backends.py).

Texture shapes and the MAX_TEXTURE_SIZE refusal, long reductions split into passes under the
loop budget, both forms of division and sqrt (the start-up probe's choice), and both forms of
`readPixels` (RED_INTEGER, or RGBA_INTEGER keeping the red words).
"""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest

import webjax
import webjax.numpy as jnp
from webjax._src import dtypes as dt
from webjax._src.codegen.glsl import kernel as glsl
from webjax._src.ir import exp as E
from webjax._src.ir.kernel import make_kernel, split_reduction
from webjax._src.ir.ops import Op
from webjax._src.runtime.backend import BackendUnavailable
from webjax._src.runtime.cpu import CpuBackend
from webjax._src.runtime.webgl import WebGLBackend, probe_exact, texture_shape

try:
    GL: Any = WebGLBackend()
    SKIP = ""
except BackendUnavailable as e:  # pragma: no cover - depends on the host
    GL, SKIP = None, f"webgl backend unavailable: {e}"

pytestmark = pytest.mark.skipif(GL is None, reason=SKIP)


class Slot:
    def __init__(self, d: dt.DType) -> None:
        self.dtype = d


def run(backend: Any, exp: E.Exp, size: int, data: dict[int, bytes]) -> bytes:
    kernel, bufs = make_kernel(exp, size)
    handles = []
    for b in bufs:
        h = backend.malloc(len(data[id(b)]))
        backend.write(h, data[id(b)])
        handles.append(h)
    out = backend.malloc(size * kernel.out_dtype.itemsize)
    backend.dispatch(backend.prepare(kernel), handles, out)
    got = backend.read(out, size * kernel.out_dtype.itemsize)
    for h in [*handles, out]:
        backend.free(h)
    return got


def test_texture_shapes_are_powers_of_two() -> None:
    assert texture_shape(1, 8192) == (1, 1)
    assert texture_shape(20, 8192) == (8, 1)  # 5 texels -> 8
    assert texture_shape(4 * 8192, 8192) == (8192, 1)
    assert texture_shape(4 * 8193, 8192) == (8192, 2)
    assert texture_shape(4 * 8192 * 5, 8192) == (8192, 8)


def test_arrays_past_max_texture_size_are_refused_by_name() -> None:
    with pytest.raises(MemoryError, match="MAX_TEXTURE_SIZE"):
        GL.malloc(GL.max_buffer_bytes + 4)


@pytest.mark.parametrize("d", [dt.float32, dt.int32, dt.int8, dt.bool_], ids=str)
def test_long_reductions_split_into_passes(d: dt.DType) -> None:
    rows, rsize = 3, 100_000
    src = Slot(d)
    i, r = E.idx(rows), E.ridx(rsize)
    vals = [(k * 7919) % 5 - 2 for k in range(rows * rsize)]
    if d is dt.bool_:
        body = E.binary(Op.CMPEQ, E.load(src, E.add(E.mul(i, rsize), r), d), E.const(True, d))
        raw = struct.pack(f"<{len(vals)}?", *[v == 2 for v in vals])
        exp = E.reduce(Op.OR, body, rsize)
    else:
        body = E.load(src, E.add(E.mul(i, rsize), r), d)
        fmt = {"float32": "f", "int32": "i", "int8": "b"}[d.name]
        raw = struct.pack(f"<{len(vals)}{fmt}", *vals)
        exp = E.cast(E.reduce(Op.ADD, body, rsize), dt.int8 if d is dt.int8 else d)
    kernel, _ = make_kernel(exp, rows)
    assert len(GL.prepare(kernel).program.passes) >= 2  # past the loop budget
    got = run(GL, exp, rows, {id(src): raw})
    assert got == run(CpuBackend(), exp, rows, {id(src): raw})  # small sums: exact


def test_split_reduction_keeps_the_epilogue_and_pads_the_last_chunk() -> None:
    rows, rsize = 2, 10
    src, bias = Slot(dt.int32), Slot(dt.int32)
    i, r = E.idx(rows), E.ridx(rsize)
    red = E.reduce(Op.MAX, E.load(src, E.add(E.mul(i, rsize), r), dt.int32), rsize)
    exp = E.binary(Op.ADD, red, E.load(bias, i, dt.int32))
    kernel, _ = make_kernel(exp, rows)
    first, second = split_reduction(kernel, 3)  # chunks of 4, the last one short
    assert first.size == rows * 3 and second.nargs == kernel.nargs + 1
    first.check()
    second.check()
    data = {id(src): struct.pack("<20i", *range(-10, 10)), id(bias): struct.pack("<2i", 100, 7)}
    assert struct.unpack("<2i", run(GL, exp, rows, data)) == (100 - 1, 7 + 9)


@pytest.mark.parametrize("exact", [0, 1])
def test_division_and_sqrt_in_both_forms(exact: int) -> None:
    limits = dict(GL.limits)
    n = 64
    a = [float(k * 3 + 1) * (-1) ** k for k in range(n - 4)] + [math.inf, 0.0, -0.0, math.nan]
    b = [float(k % 7 + 1) for k in range(n - 4)] + [2.0, 0.0, 5.0, 1.0]
    sa, sb = Slot(dt.float32), Slot(dt.float32)
    i = E.idx(n)
    la, lb = E.load(sa, i, dt.float32), E.load(sb, i, dt.float32)
    exp = E.binary(Op.ADD, E.binary(Op.DIV, la, lb), E.unary(Op.SQRT, E.unary(Op.ABS, la)))
    data = {id(sa): struct.pack(f"<{n}f", *a), id(sb): struct.pack(f"<{n}f", *b)}
    try:
        GL.limits.update(exact_div=exact, exact_sqrt=exact)
        GL._cache.clear()
        kernel, _ = make_kernel(exp, n)
        source = GL.prepare(kernel).source
        assert ("f_div_hw(" in source) == bool(exact)
        got = run(GL, exp, n, data)
    finally:
        GL.limits.clear()
        GL.limits.update(limits)
        GL._cache.clear()
    want = run(CpuBackend(), exp, n, data)
    g, w = struct.unpack(f"<{n}f", got), struct.unpack(f"<{n}f", want)
    assert all(x == y or (x != x and y != y) for x, y in zip(g, w)), (g, w)


def test_the_probe_finds_llvmpipes_division_and_sqrt_exact() -> None:
    verdict = probe_exact(GL)
    assert set(verdict) == {"exact_div", "exact_sqrt"}
    if "llvmpipe" in GL.description:
        assert verdict == {"exact_div": 1, "exact_sqrt": 1}


@pytest.mark.parametrize("red", [True, False])
def test_reads_as_red_or_rgba_integer(red: bool) -> None:
    host = GL.host
    saved = host._red_reads
    h = GL.malloc(40)
    try:
        GL.write(h, bytes(range(40)))
        host._red_reads = red
        assert GL.read(h, 40) == bytes(range(40))
    finally:
        host._red_reads = saved
        GL.free(h)


def test_shaders_are_glsl_es_300() -> None:
    kernel, _ = make_kernel(E.cast(E.idx(7), dt.float16), 7)
    program = glsl.render(kernel)
    assert program.passes[0].source.startswith("#version 300 es\n")
    assert program.passes[0].texels == 4  # two float16 per word


def test_the_context_survives_wgpu_taking_the_egl_binding() -> None:
    # wgpu-py's adapter enumeration makes its own EGL context current on this thread
    x = webjax.device_put(jnp.arange(4.0), webjax.devices("webgl")[0])
    assert (x + 1).tolist() == [1.0, 2.0, 3.0, 4.0]
    if GL.host._egl.eglGetCurrentContext() == GL.host._ctx.value:
        GL.host._egl.eglMakeCurrent(GL.host._dpy, None, None, None)  # as wgpu leaves it
    assert (x * 3).tolist() == [0.0, 3.0, 6.0, 9.0]


def _constant_program(uniforms: list[str]) -> str:
    decl = "".join(f"uniform int {n};\n" for n in uniforms)
    total = " + ".join(f"{n} * {10**i}" for i, n in enumerate(uniforms))
    return (
        "#version 300 es\nprecision highp float;\nprecision highp int;\n"
        f"{decl}layout(location = 0) out uvec4 o;\nvoid main() {{ o = uvec4(uint({total})); }}\n"
    )


def test_a_deleted_programs_uniform_locations_are_forgotten() -> None:
    # GL may hand a deleted program's name to the next program (NVIDIA's driver does at once):
    # locations cached under the old name set the new program's uniforms wrongly
    host = GL.host
    out = host.create_texture(1, 1)
    try:
        a = host.create_program(glsl.VERTEX, _constant_program(["u_a", "u_b"]))
        host.draw(a, [], out, 1, 1, {"u_a": 1, "u_b": 2})
        assert struct.unpack("I", host.read_texture(out, 1, 1)) == (21,)
        host.delete_program(a)
        assert a not in host._locations
        b = host.create_program(glsl.VERTEX, _constant_program(["u_b", "u_c", "u_a"]))
        host.draw(b, [], out, 1, 1, {"u_a": 1, "u_b": 2, "u_c": 3})
        assert struct.unpack("I", host.read_texture(out, 1, 1)) == (132,)
        host.delete_program(b)
    finally:
        host.delete_texture(out)


# ---- profiler clocks (timer queries) and context loss ----------------------------------------


def _profiled_events(dev: Any) -> list[dict[str, Any]]:
    from webjax._src import profiler

    with webjax.default_device(dev):
        x = jnp.arange(3000, dtype=jnp.float32)
        x.block_until_ready()
        profiler.start_trace()
        webjax.block_until_ready((jnp.sum(jnp.sin(x)), jnp.exp(x * 0.001)))
        return profiler.stop_trace()


def test_profiler_events_take_gpu_times_from_timer_queries() -> None:
    # Mesa's llvmpipe offers GL_EXT_disjoint_timer_query: the events' durations are GPU times
    host = webjax.devices("webgl")[0].backend.host
    assert host.timer is not None, "llvmpipe lost GL_EXT_disjoint_timer_query"
    events = _profiled_events(webjax.devices("webgl")[0])
    assert len(events) == 2
    assert [e["args"]["clock"] for e in events] == ["gpu", "gpu"]
    assert all(e["dur"] > 0 for e in events)
    assert events[1]["ts"] >= events[0]["ts"] + events[0]["dur"]  # GPU work runs in order
    assert host.timer.pending == 0  # every query collected and deleted


def test_profiler_falls_back_to_cpu_time_without_timer_queries(monkeypatch: Any) -> None:
    dev = webjax.devices("webgl")[0]
    monkeypatch.setattr(dev.backend.host, "timer", None)  # a context without the extension
    events = _profiled_events(dev)
    assert [e["args"]["clock"] for e in events] == ["cpu", "cpu"]
    assert all(e["dur"] > 0 for e in events)


def test_timer_results_voided_by_a_disjoint_operation_keep_host_times() -> None:
    from webjax._src.hosts.gl_timer import KernelTimer

    class Host:  # the query primitives, with a disjoint operation after the first query
        query_blocks = True
        disjoint = False
        deleted: list[int] = []

        def begin_time_query(self) -> int:
            return len(self.deleted) + 10

        def end_time_query(self) -> None:
            pass

        def query_ready(self, q: int) -> bool:
            return True

        def query_ns(self, q: int) -> int:
            return 5000

        def gpu_disjoint(self) -> bool:
            return self.disjoint

        def delete_query(self, q: int) -> None:
            self.deleted.append(q)

    host = Host()
    timer = KernelTimer(host)
    events: list[dict[str, Any]] = []
    for k in range(2):
        entry = timer.begin(events)
        assert entry is not None
        timer.end(entry)
        events.append({"ts": 100.0 * k, "dur": 1.0, "tid": "webgl", "args": {"clock": "cpu"}})
        if k == 0:
            timer.poll()
            host.disjoint = True
    timer.settle()
    assert events[0]["args"]["clock"] == "gpu" and events[0]["dur"] == 5.0
    assert events[1]["args"] == {"clock": "cpu-issue", "gpu_disjoint": True}
    assert events[1]["dur"] == 1.0 and len(host.deleted) == 2 and timer.pending == 0


@pytest.fixture
def private_registry(monkeypatch: Any) -> Any:
    """The backend registry as a copy, and the process's GL ES context swapped for a private
    one, so a test may lose its context and clear the backends without touching the others'."""
    from webjax._src.hosts import webgl_native
    from webjax._src.runtime import backend as rt

    for name in ("_BACKENDS", "_UNAVAILABLE", "_DEVICES", "_DEFAULT"):
        monkeypatch.setattr(rt, name, dict(getattr(rt, name)))
    monkeypatch.setattr(rt, "_GENERATION", list(rt._GENERATION))
    monkeypatch.setattr(webgl_native, "_HOST", webgl_native.NativeWebGL())
    rt.clear_backends()
    return webgl_native


def test_a_lost_context_raises_and_clear_backends_gives_a_fresh_one(private_registry: Any) -> None:
    dev = webjax.devices("webgl")[0]
    x = webjax.device_put(jnp.arange(4.0), dev)
    y = x + 1
    y.block_until_ready()
    pending = x * 3  # not computed before the loss
    assert dev.backend.host.lose_context()
    for use in (y.tolist, (x * 2).tolist, pending.tolist):
        with pytest.raises(RuntimeError, match="context was lost"):
            use()
    webjax.clear_backends()
    fresh = webjax.devices("webgl")[0]
    assert fresh != dev and fresh.backend.host is not dev.backend.host
    assert fresh.backend.host is private_registry._HOST and fresh.backend.host.lost is None
    z = webjax.device_put(jnp.arange(4.0), fresh)
    assert (z * 2 + 1).tolist() == [1.0, 3.0, 5.0, 7.0]
    with pytest.raises(RuntimeError, match="context was lost"):
        (z + y).tolist()  # an array of the lost context is moved by reading it: it raises
    with pytest.raises(RuntimeError, match="context was lost"):
        y.tolist()  # and keeps raising


# ---- tiled matrix products (codegen/glsl/matmul.py) ----------------------------------------------
@pytest.fixture
def tiled(monkeypatch: Any) -> Any:
    """Tile every product (even tiny ones) on the device webjax.numpy uses; record the plans."""
    from webjax._src.codegen.glsl import matmul as glsl_matmul
    from webjax._src.runtime.backend import get_backend

    monkeypatch.setattr(glsl_matmul, "MIN_MACS", 0)
    monkeypatch.setattr(glsl_matmul, "MIN_DIM", 1)
    used: list[Any] = []
    real = glsl_matmul.render

    def spy(kernel: Any, mp: Any, limits: Any) -> Any:
        used.append(mp)
        return real(kernel, mp, limits)

    monkeypatch.setattr(glsl_matmul, "render", spy)
    backend = get_backend("webgl")
    backend._cache.clear()
    yield used
    backend._cache.clear()


def _on(platform: str, fn: Any, *arrays: Any) -> Any:
    import numpy as np

    with webjax.default_device(webjax.devices(platform)[0]):
        return np.asarray(fn(*[jnp.asarray(a) for a in arrays]))


def _close(fn: Any, ref_abs: Any, k: int, *arrays: Any) -> None:
    """webgl against cpu, to float rounding: the products are summed in another order."""
    import numpy as np

    got, want = _on("webgl", fn, *arrays), _on("cpu", fn, *arrays)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 2.0 * (k + 2) * 2.0**-24 * ref_abs + 1e-30
    bad = np.abs(got.astype(np.float64) - want.astype(np.float64)) > tol
    assert not bad.any(), (np.argwhere(bad)[:5], got[bad][:5], want[bad][:5])


def _rnd(*shape: int, seed: int = 0) -> Any:
    import numpy as np

    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (2, 3, 4), (17, 5, 33), (65, 63, 130), (3, 300, 9)])
def test_tiled_matmul_shapes(tiled: list[Any], m: int, k: int, n: int) -> None:
    import numpy as np

    a, b = _rnd(m, k), _rnd(k, n, seed=1)
    _close(lambda x, w: x @ w, np.abs(a) @ np.abs(b), k, a, b)
    if m > 1 and n > 1:
        assert tiled, "the tiled matmul was not used"


def test_tiled_matmul_transposed_layouts(tiled: list[Any]) -> None:
    """The MLP step's backward products read their operands transposed; outputs too."""
    import numpy as np

    m, k, n = 33, 17, 65
    at, bt = _rnd(k, m), _rnd(n, k, seed=3)  # stored transposed
    a, b = at.T.copy(), bt.T.copy()
    ref = np.abs(a) @ np.abs(b)
    _close(lambda x, w: x.T @ w, ref, k, at, b)
    _close(lambda x, w: x @ w.T, ref, k, a, bt)
    _close(lambda x, w: x.T @ w.T, ref, k, at, bt)
    _close(lambda x, w: (x @ w).T, ref.T, k, a, b)
    assert len(tiled) >= 4


def test_tiled_matmul_epilogues_fuse(tiled: list[Any]) -> None:
    import numpy as np

    m, k, n = 40, 24, 36
    a, b, bias = _rnd(m, k), _rnd(k, n, seed=4), _rnd(n, seed=5)
    ref = np.abs(a) @ np.abs(b) + np.abs(bias)
    relu = webjax.jit(lambda x, w, c: jnp.maximum(x @ w + c, 0.0))
    _close(relu, ref, k + 1, a, b, bias)
    _close(webjax.jit(lambda x, w, c: jnp.tanh(x @ w + c).T), 4 * ref.T + 1e-6, k + 1, a, b, bias)
    got = _on("webgl", webjax.jit(lambda x, w: (x @ w * 8.0).astype(jnp.int32)), a, b)
    want = _on("cpu", webjax.jit(lambda x, w: (x @ w * 8.0).astype(jnp.int32)), a, b)
    assert got.dtype == np.int32 and np.abs(got - want).max() <= 1  # rounding at the cut
    assert tiled
    # the epilogue ran in the unpack pass: no separate kernel for the bias and the max
    assert all(len(mp.plan.batch) == 0 for mp in tiled)


def test_tiled_matmul_batched_and_broadcast(tiled: list[Any]) -> None:
    import numpy as np

    bsz, m, k, n = 3, 20, 24, 36
    a, b = _rnd(bsz, m, k), _rnd(bsz, k, n, seed=6)
    ref = np.einsum("bmk,bkn->bmn", np.abs(a), np.abs(b))
    _close(lambda x, w: jnp.matmul(x, w), ref, k, a, b)
    w2 = _rnd(k, n, seed=7)  # one weight for every batch: packed once
    _close(lambda x, w: jnp.matmul(x, w), np.abs(a) @ np.abs(w2), k, a, w2)
    assert any(mp.nbatch == bsz and mp.a_batched and mp.b_batched for mp in tiled)


@pytest.mark.parametrize("rm,rn", [(2, 2), (4, 2), (4, 4), (4, 8)])
def test_tiled_matmul_tiles(tiled: list[Any], monkeypatch: Any, rm: int, rn: int) -> None:
    """Each tile shape: one RGBA target (2x2) up to eight (4x8, MRT)."""
    import numpy as np

    from webjax._src.codegen.glsl import matmul as glsl_matmul
    from webjax._src.runtime.backend import get_backend

    if rm * rn // 4 > get_backend("webgl").limits["max_draw_buffers"]:
        pytest.skip(f"{rm * rn // 4} render targets: more than the context's MAX_DRAW_BUFFERS")

    monkeypatch.setattr(glsl_matmul, "FORCE_TILE", glsl_matmul.Tile(rm, rn))
    a, b = _rnd(23, 19), _rnd(19, 29, seed=2)
    _close(lambda x, w: x @ w, np.abs(a) @ np.abs(b), 19, a, b)
    assert tiled and all((mp.tile.rm, mp.tile.rn) == (rm, rn) for mp in tiled)


def test_tiled_matmul_nan_and_inf(tiled: list[Any]) -> None:
    import numpy as np

    a, b = _rnd(12, 16), _rnd(16, 10, seed=8)
    a[3, 5] = np.nan
    b[2, 7] = np.inf
    got, want = _on("webgl", lambda x, w: x @ w, a, b), _on("cpu", lambda x, w: x @ w, a, b)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))


def test_small_products_keep_the_exact_kernels() -> None:
    """Below the threshold products stay one draw with the generic loop: bit-identical."""
    import numpy as np

    from webjax._src.codegen.glsl import matmul as glsl_matmul

    a, b = _rnd(8, 8), _rnd(8, 8, seed=9)
    got, want = _on("webgl", lambda x, w: x @ w, a, b), _on("cpu", lambda x, w: x @ w, a, b)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    i, r = E.idx(64 * 64), E.ridx(64)
    x = E.load(Slot(dt.float32), E.add(E.mul(E.idiv(i, 64), 64), r), dt.float32)
    w = E.load(Slot(dt.float32), E.add(E.mul(r, 64), E.mod(i, 64)), dt.float32)
    big = make_kernel(E.reduce(Op.ADD, E.binary(Op.MUL, x, w), 64), 64 * 64)[0]
    prog = glsl.render(big, GL.limits)
    assert len(prog.passes) == 4 and "render targets" in prog.note
    assert glsl_matmul.plan_for(big, {**GL.limits, "max_texture_size": 8}) is None  # too big


def test_tiled_matmul_operands_past_the_texture_height_go_in_strips(
    tiled: list[Any], monkeypatch: Any
) -> None:
    """A packed operand with more rows than a texture has goes on in strips to the right (a
    convolution's patches: 32768 columns)."""
    import numpy as np

    from webjax._src.runtime.backend import get_backend

    monkeypatch.setitem(get_backend("webgl").limits, "max_texture_size", 16)
    a, b = _rnd(40, 20), _rnd(20, 36, seed=10)
    _close(lambda x, w: x @ w, np.abs(a) @ np.abs(b), 20, a, b)
    assert tiled and all(mp.a_h == 16 and mp.b_h == 16 for mp in tiled)


def test_match_takes_digits_outside_the_longest_run_as_batch() -> None:
    """out[b, o, s] = sum_r w[o, r] * p[r, b * S + s] (a convolution's contraction with its
    output in NCHW order): b and s are both columns of p, but not one dimension of the output;
    s is the column dimension and b a batch digit that only p moves."""
    from webjax._src.ir import matmul as ir_matmul

    nb, o, s, k = 3, 8, 20, 12
    i, r = E.idx(nb * o * s), E.ridx(k)
    bi, oi, si = E.idiv(i, o * s), E.mod(E.idiv(i, s), o), E.mod(i, s)
    w = E.load(Slot(dt.float32), E.add(E.mul(oi, k), r), dt.float32)
    p = E.load(Slot(dt.float32), E.add(E.mul(r, nb * s), E.add(E.mul(bi, s), si)), dt.float32)
    kernel = make_kernel(E.reduce(Op.ADD, E.binary(Op.MUL, w, p), k), nb * o * s)[0]
    plan = ir_matmul.match(kernel)
    assert plan is not None and (plan.m, plan.n, plan.k, plan.batch) == (o, s, k, (nb,))
    assert plan.a.s_batch == (0,) and plan.b.s_batch == (s,) and plan.so_batch == (o * s,)


def test_tile_follows_size_and_render_targets() -> None:
    from webjax._src.codegen.glsl import matmul as glsl_matmul

    assert glsl_matmul.choose_tile({"max_draw_buffers": 8}, 1024**3) == glsl_matmul.Tile(4, 8)
    assert glsl_matmul.choose_tile({"max_draw_buffers": 4}, 1024**3) == glsl_matmul.Tile(4, 4)
    assert glsl_matmul.choose_tile({"max_draw_buffers": 8}, 256**3) == glsl_matmul.Tile(4, 8)
    assert glsl_matmul.choose_tile({"max_draw_buffers": 8}, 128**3) == glsl_matmul.Tile(4, 4)
