"""How the webgpu codegen schedules kernels, natively on wgpu-py (lavapipe here): lanes (four
consecutive indices per invocation, vec4 loads), items per invocation and split reductions on
CPU and GPU adapters, and the start-up probe that lets kernels use exact sqrt/division builtins.

Every schedule is checked against the IR reference (bit for bit where the order of operations is
the reference's); the device class and the probe's verdict are switched per test through the
backend's `limits`, so both forms of each kernel run here whatever the adapter is.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Iterator

import pytest

from test_gpu_backends import (
    GPU,
    SKIP,
    Buf,
    _usable,
    check,
    ref_eval,
    run_on,
    ulp_diff,
    values,
)
from webjax._src import dtypes as dt
from webjax._src.codegen.wgsl import kernel as wgsl
from webjax._src.ir import exp as E
from webjax._src.ir.kernel import make_kernel
from webjax._src.ir.ops import Op

pytestmark = pytest.mark.skipif(GPU is None, reason=SKIP)


def _set_limits(value: int, **kw: int) -> Iterator[int]:
    saved = dict(GPU.limits)
    GPU.limits.update(kw)
    GPU._cache.clear()
    yield value
    GPU.limits.clear()
    GPU.limits.update(saved)
    GPU._cache.clear()


@pytest.fixture(params=[1, 0], ids=["cpu", "gpu"])
def device_class(request: pytest.FixtureRequest) -> Iterator[int]:
    """The schedules of a CPU implementation (SwiftShader, lavapipe) or of a GPU."""
    yield from _set_limits(request.param, cpu=request.param)


@pytest.fixture(params=[1, 0], ids=["builtins", "corrected"])
def exact(request: pytest.FixtureRequest) -> Iterator[int]:
    """Division and sqrt through the device's builtins (as when the probe passes) or corrected."""
    if request.param and not all(
        (GPU.host.exact or {}).get(k) for k in ("exact_sqrt", "exact_div")
    ):
        pytest.skip("this device's sqrt or division builtin does not round correctly (probe)")
    yield from _set_limits(request.param, exact_sqrt=request.param, exact_div=request.param)


def _source(exp: E.Exp, size: int) -> str:
    kernel, _ = make_kernel(exp, size)
    return GPU.prepare(kernel).source


# ---- lanes: elementwise -------------------------------------------------------------------------
N = 4 * 67  # four elements per invocation, an odd number of quads


def _ramp(n: int, d: dt.DType = dt.float32, scale: float = 0.5) -> Buf:
    return Buf(
        d, [(k * 37 % 101 - 50) * scale if d.kind == "f" else k * 37 % 101 - 50 for k in range(n)]
    )


def _index_patterns(i: E.Exp, n: int) -> dict[str, E.Exp]:
    return {
        "contiguous": i,
        "aligned offset": E.add(i, 8),
        "unaligned offset": E.add(i, 3),
        "broadcast rows": E.mod(i, 12),  # x[None, :] over (n // 12, 12)
        "broadcast cols": E.idiv(i, 4),  # x[:, None]: one value per quad
        "odd period": E.mod(i, 6),  # not a multiple of 4: per lane
        "flip": E.binary(Op.SUB, E.i32(n - 1), i),
        "transpose": E.add(E.mul(E.mod(i, 4), n // 4), E.idiv(i, 4)),
        "constant": E.i32(5),
    }


@pytest.mark.parametrize("pattern", list(_index_patterns(E.idx(N), N)))
@pytest.mark.parametrize("d", [dt.float32, dt.int32, dt.uint16], ids=str)
def test_lanes_index_patterns(device_class: int, pattern: str, d: dt.DType) -> None:
    i = E.idx(N)
    x = _ramp(N + 8, d)
    load = E.load(x, _index_patterns(i, N)[pattern], d)
    exp = E.binary(Op.ADD, load, E.load(_ramp(N, d, 0.25), i, d))
    if d is dt.uint16:  # a 16-bit output is packed, not lanes; a cast makes it 32-bit again
        check(exp, N)
        exp = E.cast(exp, dt.int32)
    check(exp, N)
    src = _source(exp, N)
    assert "fn value4" in src and "array<vec4<u32>>;" in src


def test_lanes_use_vec4_loads_where_contiguous() -> None:
    i = E.idx(N)
    x, y = _ramp(N), _ramp(N)
    contiguous = E.binary(Op.MUL, E.load(x, i, dt.float32), E.load(y, E.add(i, 4), dt.float32))
    src = _source(contiguous, N)
    assert src.count("var<storage, read> in") == 2
    assert "in0: array<vec4<u32>>" in src and "in1: array<vec4<u32>>" in src
    gather = E.load(x, E.add(i, 1), dt.float32)  # unaligned: four scalar loads
    assert "in0: array<u32>" in _source(gather, N)


def test_lanes_one_slot_read_both_ways() -> None:
    # x[i] (a vec4 load) and x[(7 i) % n] (a gather through the same vec4 binding)
    i = E.idx(N)
    x = _ramp(N)
    a = E.load(x, i, dt.float32)
    b = E.load(x, E.mod(E.mul(i, 7), N), dt.float32)
    check(E.binary(Op.SUB, a, b), N)


@pytest.mark.parametrize("n", [6, 7, 13])
def test_lanes_masked_reads_past_a_short_buffer(n: int) -> None:
    # concatenate([x, y]): the vec4 load of x's last quad reaches past x's values (the
    # allocation rounds to 16 bytes and writes zero-fill it, so no lane reads a wrong value)
    out = 4 * (-(-(n + 5) // 4))
    i = E.idx(out)
    x, y = _ramp(n), Buf(dt.float32, [100.0 + k for k in range(out - n)])
    exp = E.where(
        E.binary(Op.CMPLT, i, E.i32(n)),
        E.load(x, i, dt.float32),
        E.load(y, E.add(i, -n), dt.float32),
    )
    check(exp, out)


@pytest.mark.parametrize("quads", [1024 * 16 + 5, 1024 * 3 + 1])
def test_items_per_invocation(device_class: int, quads: int) -> None:
    # on CPU adapters each invocation writes several consecutive quads (or words)
    n = 4 * quads
    i = E.idx(n)
    exp = E.add(E.mul(i, 3), E.load(_ramp(n, dt.int32), i, dt.int32))
    got = check(exp, n)
    assert got[-1] == 3 * (n - 1) + ((n - 1) * 37 % 101 - 50)
    j = E.idx(n - 3)
    check(E.binary(Op.CMPLT, E.mod(j, 7), E.i32(3)), n - 3)  # bool: packed words, a tail


# ---- reductions ---------------------------------------------------------------------------------
@pytest.mark.parametrize("rsize", [12, 300, 301])
def test_reduce_lanes_body_patterns(device_class: int, rsize: int) -> None:
    rows = 10
    i, r = E.idx(rows), E.ridx(rsize)
    x = Buf(dt.int32, [(k * 7919) % 201 - 100 for k in range(rows * rsize)])
    s = Buf(dt.int32, [k - 4 for k in range(rows)])
    row_major = E.load(x, E.add(E.mul(i, rsize), r), dt.int32)  # vec4 along r (4 | rsize)
    col_major = E.load(x, E.add(E.mul(r, rows), i), dt.int32)  # strided: per lane
    hoisted = E.load(s, i, dt.int32)  # loop-invariant
    body = E.binary(Op.ADD, E.binary(Op.MUL, row_major, hoisted), col_major)
    red = E.reduce(Op.ADD, body, rsize)
    check(E.binary(Op.SUB, red, E.load(x, i, dt.int32)), rows)  # epilogue reads the body's slot
    check(E.reduce(Op.MAX, E.binary(Op.SUB, row_major, r), rsize), rows)
    if rsize % 4 == 0:
        assert "in0: array<vec4<u32>>" in _source(E.reduce(Op.ADD, row_major, rsize), rows)


def test_reduce_lanes_keep_the_sequential_order(device_class: int) -> None:
    # one invocation per output sums r = 0, 1, 2, ... in order: bit-identical to the reference
    rows, rsize = 33, 200
    rnd = random.Random(3)
    x = Buf(
        dt.float32, [rnd.uniform(-1, 1) * 10 ** rnd.uniform(-6, 6) for _ in range(rows * rsize)]
    )
    i, r = E.idx(rows), E.ridx(rsize)
    check(E.reduce(Op.ADD, E.load(x, E.add(E.mul(i, rsize), r), dt.float32), rsize), rows)


@pytest.mark.parametrize("rows,rsize", [(1, 1 << 16), (3, 20_000), (3, 20_001), (2, 30_003)])
def test_split_reduce_layouts(device_class: int, rows: int, rsize: int) -> None:
    # two passes: strided partials on GPUs, contiguous chunks on CPUs (some chunks empty)
    assert wgsl.split_parts(rows, rsize) > 1
    i, r = E.idx(rows), E.ridx(rsize)
    vals = [(k * 7919) % 2001 - 1000 for k in range(rows * rsize)]
    rowvals = [vals[k * rsize : (k + 1) * rsize] for k in range(rows)]
    x, f = Buf(dt.int32, vals), Buf(dt.float32, [float(v) for v in vals])
    body = E.load(x, E.add(E.mul(i, rsize), r), dt.int32)
    xor = [0] * rows
    for k, row in enumerate(rowvals):
        for v in row:
            xor[k] ^= v
    for comb, want in (
        (Op.ADD, [sum(row) for row in rowvals]),
        (Op.MAX, [max(row) for row in rowvals]),
        (Op.XOR, xor),
    ):
        kernel, bufs = make_kernel(E.reduce(comb, body, rsize), rows)
        assert len(wgsl.render(kernel, GPU.max_args + 1, GPU.limits).passes) == 2
        assert run_on(GPU, kernel, bufs) == want
    # small integers: float sums are exact in any order
    fbody = E.load(f, E.add(E.mul(i, rsize), r), dt.float32)
    kernel, bufs = make_kernel(E.reduce(Op.ADD, fbody, rsize), rows)
    assert run_on(GPU, kernel, bufs) == [float(sum(row)) for row in rowvals]


@pytest.mark.parametrize("rsize", [1 << 16, 20_001, 4 * 5003])
def test_split_partials_run_independent_chains(rsize: int) -> None:
    # CPU adapters: each partial takes CPU_CHAINS steps per iteration into separate
    # accumulators (vec4 ones for float32 sums over lanes), whole blocks, then the tail steps
    limits = _set_limits(1, cpu=1)
    next(limits)
    try:
        vals = [(k * 7919) % 2001 - 1000 for k in range(rsize)]
        f, x = Buf(dt.float32, [float(v) for v in vals]), Buf(dt.int32, vals)
        r = E.ridx(rsize)
        cases = [
            (E.reduce(Op.ADD, E.load(f, r, dt.float32), rsize), float(sum(vals))),
            (E.reduce(Op.ADD, E.load(x, r, dt.int32), rsize), sum(vals)),
            (E.reduce(Op.MAX, E.load(f, r, dt.float32), rsize), float(max(vals))),
        ]
        for exp, want in cases:
            kernel, bufs = make_kernel(exp, 1)
            prog = wgsl.render(kernel, GPU.max_args + 1, GPU.limits)
            assert len(prog.passes) == 2
            first = prog.passes[0].source
            assert f"acc_{wgsl.CPU_CHAINS - 1}" in first and "while (q + " in first
            vector = exp.dtype is dt.float32 and exp.arg[0] is Op.ADD and rsize % 4 == 0
            assert ("vec4<f32> = vec4<f32>(" in first) == vector
            assert run_on(GPU, kernel, bufs) == [want]  # small integers: exact in any order
    finally:
        next(limits, None)


def test_barriers_only_on_gpus(device_class: int) -> None:
    # CPU adapters: no workgroup barriers at all; GPUs: workgroup trees for long reductions
    for rows, rsize in ((10, 300), (7, 4004), (1, 1 << 16), (3, 20_001)):
        i, r = E.idx(rows), E.ridx(rsize)
        x = Buf(dt.float32, [0.0] * (rows * rsize))
        exp = E.reduce(Op.ADD, E.load(x, E.add(E.mul(i, rsize), r), dt.float32), rsize)
        src = wgsl.render(make_kernel(exp, rows)[0], GPU.max_args + 1, GPU.limits).source
        assert ("workgroupBarrier" in src) != bool(device_class), (rows, rsize)


def test_split_parts_policy() -> None:
    assert wgsl.split_parts(1, 1 << 24) == wgsl.SPLIT_MAX_PARTS
    assert wgsl.split_parts(1280, 512) == 1  # enough outputs: one invocation each
    assert wgsl.split_parts(4, 300) == 1  # short: not worth a second pass
    assert 1 < wgsl.split_parts(10, 10_000) <= 10_000 // wgsl.SPLIT_MIN_TERMS


# ---- exact builtins: the probe and both forms of division and sqrt ------------------------------
def test_division_both_forms(exact: int) -> None:
    vs = values(dt.float32)
    n = len(vs)
    a, b = Buf(dt.float32, vs), Buf(dt.float32, vs)
    i = E.idx(n * n)
    exp = E.binary(Op.DIV, E.load(a, E.idiv(i, n), dt.float32), E.load(b, E.mod(i, n), dt.float32))
    check(exp, n * n)
    src = _source(exp, n * n)
    assert ("f_div_hw(" in src) == bool(exact) and ("fn f_div(" in src) != bool(exact)


def test_sqrt_both_forms(exact: int) -> None:
    rnd = random.Random(5)
    vs = [10 ** rnd.uniform(-38, 38) for _ in range(2000)] + [0.0, -0.0, -1.0, math.inf, math.nan]
    vs += [float(k * k) for k in range(1, 300)] + [2.0, 3.0, 1e-40]
    x = Buf(dt.float32, _usable(dt.float32, vs))  # (no subnormals where the device flushes them)
    n = len(x.vals)
    kernel, bufs = make_kernel(E.unary(Op.SQRT, E.load(x, E.idx(n), dt.float32)), n)
    got, want = run_on(GPU, kernel, bufs), ref_eval(kernel, bufs)
    bad = [
        (x.vals[k], g, w)
        for k, (g, w) in enumerate(zip(got, want, strict=True))
        if ulp_diff(dt.float32, g, w) > (0 if exact else 1)
    ]
    assert not bad, bad[:5]
    assert ("m_sqrt_hw(" in GPU.prepare(kernel).source) == bool(exact)


def _probe_output(a: list[float], b: list[float]) -> bytearray:
    def f32(x: float) -> float:
        try:
            return float(struct.unpack("<f", struct.pack("<f", x))[0])
        except OverflowError:
            return math.copysign(math.inf, x)

    out: list[float] = []
    for x, y in zip(a, b, strict=True):
        out.append(math.nan if x != x or x < 0 else f32(math.sqrt(x)))
        if y == 0:
            q = math.nan if x == 0 or x != x else math.copysign(math.inf, x) * math.copysign(1, y)
        else:
            q = math.nan if math.isinf(x) and math.isinf(y) else f32(x / y)
        out.append(q)
    return bytearray(struct.pack(f"<{len(out)}f", *out))


def test_probe_verdict() -> None:
    _, a_bytes, b_bytes = wgsl.probe()
    n = wgsl.PROBE_COUNT
    a, b = struct.unpack(f"<{n}f", a_bytes), struct.unpack(f"<{n}f", b_bytes)
    raw = _probe_output(list(a), list(b))
    assert wgsl.probe_verdict(bytes(raw)) == {"exact_sqrt": 1, "exact_div": 1}
    for word, verdict in (
        (2 * 1000, {"exact_sqrt": 0, "exact_div": 1}),
        (2 * 1001 + 1, {"exact_sqrt": 1, "exact_div": 0}),
    ):
        bad = bytearray(raw)
        struct.pack_into("<I", bad, 4 * word, struct.unpack_from("<I", raw, 4 * word)[0] ^ 1)
        assert wgsl.probe_verdict(bytes(bad)) == verdict  # one ulp off anywhere: no shortcut
    # sqrt(-1) must be NaN, and 0/0
    bad = bytearray(raw)
    k = next(k for k, v in enumerate(a) if v < 0)
    struct.pack_into("<f", bad, 8 * k, 0.0)
    assert wgsl.probe_verdict(bytes(bad))["exact_sqrt"] == 0


def test_probe_runs_on_this_device() -> None:
    from webjax._src.runtime.webgpu import probe_exact

    verdict = probe_exact(GPU.host)
    assert set(verdict) == {"exact_sqrt", "exact_div"}
    assert {k: GPU.host.exact[k] for k in verdict} == verdict  # the backend's start-up verdict


def test_cpu_adapter_is_recognised() -> None:
    summary = GPU.description.lower()
    if any(name in summary for name in ("llvmpipe", "lavapipe", "swiftshader")):
        assert GPU.limits["cpu"] == 1


def test_many_values_any_schedule(device_class: int) -> None:
    # int16 (packed two per word) over a size with a tail, elementwise and reduced
    n = 4 * 1024 * 17 + 3
    i = E.idx(n)
    x = _ramp(n, dt.int16)
    check(E.binary(Op.MUL, E.load(x, i, dt.int16), E.cast(E.mod(i, 5), dt.int16)), n)
    rows, rsize = 7, 4 * 1001
    xi = _ramp(rows * rsize, dt.int16)
    red = E.reduce(
        Op.ADD,
        E.cast(E.load(xi, E.add(E.mul(E.idx(rows), rsize), E.ridx(rsize)), dt.int16), dt.int32),
        rsize,
    )
    check(E.cast(red, dt.int16), rows)


# ---- profiler: GPU times from timestamp queries -------------------------------------------------
def test_profiler_events_get_gpu_times() -> None:
    from webjax._src import profiler

    if not getattr(GPU.host, "timestamps", False):
        pytest.skip("this adapter has no timestamp queries: events keep host times")
    n, rows, rsize = 1 << 16, 1, 1 << 16
    x = _ramp(n)
    elementwise = E.unary(Op.SIN, E.load(x, E.idx(n), dt.float32))
    split = E.reduce(
        Op.ADD, E.load(x, E.add(E.mul(E.idx(rows), rsize), E.ridx(rsize)), dt.float32), rsize
    )  # two passes
    profiler.start_trace()
    try:
        recorded = []
        outs = []
        for exp, size in ((elementwise, n), (split, rows)):
            kernel, _ = make_kernel(exp, size)
            exe = GPU.prepare(kernel)
            h = GPU.malloc(4 * n)
            GPU.write(h, struct.pack(f"<{n}f", *x.vals))
            out = GPU.malloc(4 * size)
            with profiler.kernel_event("webgpu", kernel, exe):
                GPU.dispatch(exe, [h], out)
            recorded.append(dict(profiler._events[-1]))  # host times, as recorded
            outs += [h, out]
        GPU.read(outs[-1], 4)  # waiting for the work fills in the GPU times
    finally:
        events = profiler.stop_trace()
    assert len(events) == 2 and not GPU._timed
    for event, before in zip(events, recorded, strict=True):
        assert set(event) == set(before) and event["args"] == before["args"]
        assert (event["ts"], event["dur"]) != (before["ts"], before["dur"]) and event["dur"] > 0
    assert events[0]["ts"] + events[0]["dur"] <= events[1]["ts"] + 1  # in queue order
    for h in outs:
        GPU.free(h)
