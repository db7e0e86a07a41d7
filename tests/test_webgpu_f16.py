"""float16 on the webgpu backend in both storage forms, natively on wgpu-py (lavapipe here).

Where the device has `shader-f16` and the start-up probe (wgsl.probe_f16) finds its f16 <-> f32
conversions exact, float16 buffers are bound as array<f16> (vec4<f16> where lanes load four);
otherwise they are packed two per u32 word. Either way values compute as f32 rounded to float16
after every op, so both forms must agree with the IR reference bit for bit (any NaN equals any
NaN: the f16 form may store NaNs with another payload, as JAX leaves them undefined). The form
is switched per test through the backend's `limits`, so both run here whatever the adapter is;
the f16 form is skipped where the device lacks the feature or fails the probe.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from test_gpu_backends import GPU, SKIP, Buf, check, pack, pairs, unpack, values
from webjax._src import dtypes as dt
from webjax._src.codegen.wgsl import kernel as wgsl
from webjax._src.codegen.wgsl import matmul as wgsl_matmul
from webjax._src.ir import exp as E
from webjax._src.ir.kernel import make_kernel
from webjax._src.ir.ops import Op

pytestmark = pytest.mark.skipif(GPU is None, reason=SKIP)
F16 = dt.float16
F32 = dt.float32


def _set_limits(value: int, **kw: int) -> Iterator[int]:
    saved = dict(GPU.limits)
    GPU.limits.update(kw)
    GPU._cache.clear()
    yield value
    GPU.limits.clear()
    GPU.limits.update(saved)
    GPU._cache.clear()


def _f16_usable() -> bool:
    return bool(GPU is not None and (GPU.host.f16 or {}).get("f16"))


@pytest.fixture(params=[1, 0], ids=["f16", "packed"])
def storage(request: pytest.FixtureRequest) -> Iterator[int]:
    """float16 bound as array<f16> (shader-f16, probe passed) or packed in u32 words."""
    if request.param and not _f16_usable():
        pytest.skip("this device has no shader-f16, or its f16 conversions are not exact (probe)")
    yield from _set_limits(request.param, f16=request.param)


@pytest.fixture(params=[1, 0], ids=["cpu", "gpu"])
def device_class(storage: int, request: pytest.FixtureRequest) -> Iterator[int]:
    """The schedules of a CPU implementation (SwiftShader, lavapipe) or of a GPU."""
    yield from _set_limits(request.param, cpu=request.param)


def _source(exp: E.Exp, size: int) -> str:
    kernel, _ = make_kernel(exp, size)
    return GPU.prepare(kernel).source


def _assert_form(src: str, storage: int) -> None:
    if storage:
        assert src.startswith("enable f16;")
        assert "array<f16>" in src or "array<vec4<f16>>" in src
    else:
        assert "f16>" not in src and "enable f16" not in src


def _ramp(n: int, d: dt.DType = F16, scale: float = 0.25) -> Buf:
    """Multiples of `scale` in [-50, 50] * scale: sums of many stay exact in f32, in any order."""
    return Buf(d, [(k * 37 % 101 - 50) * scale for k in range(n)])


# ---- the probe ---------------------------------------------------------------------------------
def _probe_outputs() -> tuple[bytearray, bytearray]:
    """What an exact device writes: each f16's f32 bits, and each f16 back."""
    n = wgsl.F16_PROBE_COUNT
    halves = struct.unpack(f"<{n}e", struct.pack(f"<{n}H", *range(n)))
    loaded = bytearray(struct.pack(f"<{n}f", *halves))
    for h in range(n):  # (Python's float keeps NaN payloads, but write them as f16_to_f32 does)
        if (h & 0x7FFF) > 0x7C00:
            struct.pack_into("<I", loaded, 4 * h, wgsl._f16_as_f32_bits(h))
    return loaded, bytearray(struct.pack(f"<{n}H", *range(n)))


def test_probe_f16_inputs_are_every_half_and_its_exact_value() -> None:
    load, store, halves, words = wgsl.probe_f16()
    assert "enable f16;" in load and "array<f16>" in load and "f32(in0[k])" in load
    assert "enable f16;" in store and "out: array<f16>" in store and "f16(bitcast<f32>(" in store
    n = wgsl.F16_PROBE_COUNT
    assert struct.unpack(f"<{n}H", halves) == tuple(range(n))
    as_f32 = struct.unpack(f"<{n}f", words)
    for h, x in zip(struct.unpack(f"<{n}e", halves), as_f32, strict=True):
        assert (x != x and h != h) or (x == h and math.copysign(1, x) == math.copysign(1, h))


def test_probe_f16_verdict() -> None:
    loaded, stored = _probe_outputs()
    assert wgsl.probe_f16_verdict(bytes(loaded), bytes(stored)) == {"f16": 1}

    def verdict(load_edit: dict[int, int], store_edit: dict[int, int]) -> int:
        lo, st = bytearray(loaded), bytearray(stored)
        for h, bits in load_edit.items():
            struct.pack_into("<I", lo, 4 * h, bits)
        for h, bits in store_edit.items():
            struct.pack_into("<H", st, 2 * h, bits)
        return wgsl.probe_f16_verdict(bytes(lo), bytes(st))["f16"]

    # stored NaNs may change payload (lavapipe stores every NaN as 0x7e00 / 0xfe00), not sign;
    # loaded ones may only have the quiet bit set (the packed form's f32_to_f16 sets it too)
    assert verdict({0x7C01: 0x7FC02000, 0xFC07: 0xFFC0E000}, {0x7D00: 0x7E00, 0xFC01: 0xFE00}) == 1
    assert verdict({}, {0x7E00: 0xFE00}) == 0
    assert verdict({}, {0xFE01: 0xFC00}) == 0
    assert verdict({0xFE00: 0x7FC00000}, {}) == 0
    assert verdict({0x7E01: 0x7FC00000}, {}) == 0  # a quiet NaN's payload lost on load
    assert verdict({0x7E00: 0x7FFFFFFF, 0xFE00: 0x7FFFFFFF}, {0xFE00: 0x7FFF}) == 0  # NVIDIA
    for load_edit, store_edit in (
        ({0x0001: 0}, {}),  # the smallest subnormal flushed on load
        ({}, {0x83FF: 0x8000}),  # ... or a subnormal on store
        ({}, {0x7C00: 0x7BFF}),  # infinity clamped to the largest finite value
        ({}, {0x7BFF: 0x7C00}),  # the largest finite value overflowing
        ({0x8000: 0}, {}),  # -0 losing its sign
        ({}, {0x7C00: 0x7E00}),  # infinity becoming NaN
        ({0x7E00: 0x7F800000}, {}),  # NaN becoming infinity
        ({}, {0x3C01: 0x3C00}),  # one ulp off
    ):
        assert verdict(load_edit, store_edit) == 0, (load_edit, store_edit)


def test_probe_f16_runs_on_this_device() -> None:
    from webjax._src.runtime.webgpu import probe_f16

    verdict = probe_f16(GPU.host)
    assert verdict == GPU.host.f16  # the backend's start-up verdict
    assert verdict["f16"] <= int(GPU.host.shader_f16)
    if not GPU.host.shader_f16:
        assert verdict == {"f16": 0}


def test_backend_limits_follow_the_probe() -> None:
    assert GPU.limits["f16"] == GPU.host.f16["f16"]


def test_device_without_the_feature_keeps_packed_words() -> None:
    from webjax._src.runtime.webgpu import probe_f16

    class NoF16:
        shader_f16 = False

    assert probe_f16(NoF16()) == {"f16": 0}

    class Broken:  # a device whose f16 shaders do not compile
        shader_f16 = True

        def create_buffer(self, nbytes: int) -> bytearray:
            return bytearray(nbytes)

        def write_buffer(self, buf: Any, data: bytes) -> None:
            pass

        def create_pipeline(self, source: str, nbindings: int) -> Any:
            raise RuntimeError("enable f16: extension not enabled")

        def destroy_buffer(self, buf: Any) -> None:
            pass

    assert probe_f16(Broken()) == {"f16": 0}


# ---- elementwise ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "op",
    [Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.MIN, Op.NEXTAFTER, Op.CMPLT, Op.CMPEQ],
    ids=str,
)
def test_binary(storage: int, op: Op) -> None:
    a, b, n = pairs(F16)  # subnormals, the largest finite value, 65520 (inf), inf, NaN, -0
    exp = E.binary(op, a, b)
    check(exp, n)
    _assert_form(_source(exp, n), storage)


@pytest.mark.parametrize(
    "op",
    [Op.NEG, Op.ABS, Op.SIGN, Op.FLOOR, Op.CEIL, Op.ROUND, Op.SQRT, Op.RSQRT, Op.ISFINITE],
    ids=str,
)
def test_unary(storage: int, op: Op) -> None:
    vs = values(F16) + [2.0**-24, -(2.0**-24), 6.1e-5, 65504.0, -65504.0, 1 / 3, 2049.0]
    x = Buf(F16, vs)
    n = len(x.vals)
    check(E.unary(op, E.load(x, E.idx(n), F16)), n)


def test_chain_rounds_after_every_op(storage: int) -> None:
    # (a * b + c) / d - a: rounded to float16 after each op, never fused or kept in f32
    n = 4 * 257 + 3
    a, b, c, d = (_ramp(n + j, scale=0.37 + j) for j in range(4))
    i = E.idx(n)
    la, lb, lc, ld = (E.load(x, E.add(i, j), F16) for j, x in enumerate((a, b, c, d)))
    exp = E.binary(Op.SUB, E.binary(Op.DIV, E.binary(Op.ADD, E.binary(Op.MUL, la, lb), lc), ld), la)
    check(exp, n)
    check(E.where(E.binary(Op.CMPLT, la, lb), E.unary(Op.NEG, la), E.binary(Op.MUL, lb, lc)), n)


# ---- sizes: the tail of an odd-sized output, lanes, many items per invocation --------------------
SIZES = [1, 2, 3, 5, 7, 8, 13, 4 * 67, 4 * 67 + 1, 4 * 67 + 3, 4 * 1024 * 17 + 2]


def _run_sentinel(exp: E.Exp, size: int) -> tuple[list[Any], bytes]:
    """Run with the output buffer pre-filled with 0xab: (values, the bytes past them)."""
    kernel, bufs = make_kernel(exp, size)
    handles = []
    for b in bufs:
        h = GPU.malloc(len(b.vals) * b.dtype.itemsize)
        GPU.write(h, pack(b.dtype, b.vals))
        handles.append(h)
    nbytes = size * kernel.out_dtype.itemsize
    out = GPU.malloc(nbytes)
    GPU.write(out, b"\xab" * out.size)
    GPU.dispatch(GPU.prepare(kernel), handles, out)
    raw = GPU.read(out, out.size)
    for h in [*handles, out]:
        GPU.free(h)
    return unpack(kernel.out_dtype, raw[:nbytes]), raw[nbytes:]


@pytest.mark.parametrize("size", SIZES)
def test_odd_sizes_write_only_their_elements(device_class: int, size: int) -> None:
    i = E.idx(size)
    x, y = _ramp(size + 5), _ramp(size, scale=3.5)
    for exp in (
        E.binary(Op.ADD, E.load(x, E.add(i, 5), F16), E.load(y, i, F16)),  # rounds: no lanes
        E.unary(Op.NEG, E.load(x, i, F16)),  # a copy: lanes (vec4<f16> in and out) where 4 | n
        E.load(x, E.binary(Op.SUB, E.i32(size - 1), i), F16),  # reversed
    ):
        got, past = _run_sentinel(exp, size)
        assert past == b"\xab" * len(past)
        assert got == check(exp, size)


def test_lanes_load_and_store_vec4_f16(storage: int) -> None:
    n = 4 * 67
    i = E.idx(n)
    x = _ramp(n + 8)
    copy = E.unary(Op.NEG, E.load(x, E.add(i, 4), F16))
    check(copy, n)
    src = _source(copy, n)
    assert ("fn value4" in src) == bool(storage)  # packed: two elements per output word
    if storage:
        assert "in0: array<vec4<f16>>" in src and "out: array<vec4<f16>>" in src
    widen = E.cast(E.load(x, i, F16), F32)  # f16 in, f32 out
    check(widen, n)
    src = _source(widen, n)
    assert ("in0: array<vec4<f16>>" in src) == bool(storage) and "out: array<vec4<u32>>" in src
    gather = E.load(x, E.mod(E.mul(i, 7), n), F16)  # not lane-contiguous: scalar f16 loads
    check(gather, n)
    _assert_form(_source(gather, n), storage)


# ---- casts --------------------------------------------------------------------------------------
OTHERS = [dt.bool_, dt.int8, dt.int16, dt.int32, dt.uint8, dt.uint16, dt.uint32, F32, dt.bfloat16]


@pytest.mark.parametrize("d", OTHERS, ids=str)
def test_casts_both_ways(storage: int, d: dt.DType) -> None:
    vs = values(F16) + [0.5, 1.5, 2.5, -2.5, 255.75, 32767.0, 65504.0, 2.0**-24]
    x = Buf(F16, vs)
    n = len(x.vals)
    check(E.cast(E.load(x, E.idx(n), F16), d), n)
    ys = values(d)
    if d.kind == "f":
        ys = ys + [65519.0, 65520.0, 2.0**-25, 3 * 2.0**-26, 1.0 + 2.0**-11, 1e-9, -7e-6]
    y = Buf(d, ys)
    m = len(y.vals)
    check(E.cast(E.load(y, E.idx(m), d), F16), m)


@pytest.mark.parametrize("d", [dt.int16, dt.uint16], ids=str)
def test_bitcasts(storage: int, d: dt.DType) -> None:
    pats = [
        0,
        1,
        0x3FF,
        0x400,
        0x3C00,
        0x7BFF,
        0x7C00,
        0x8000,
        0x8001,
        0xFBFF,
        0xFC00,
        0x7E00,
        0xFE00,
        0x3555,
        0xC000,
    ] + list(range(0, 0x10000, 251))
    # NaNs only as 0x7e00 / 0xfe00: the reference's bitcasts canonicalize NaN payloads
    pats = [p for p in pats if (p & 0x7FFF) <= 0x7C00 or p & 0x7FFF == 0x7E00]
    ints = [p - 0x10000 if d is dt.int16 and p >= 0x8000 else p for p in pats]
    x = Buf(d, ints)
    n = len(ints)
    back = E.bitcast(E.load(x, E.idx(n), d), F16)
    check(back, n)  # (NaNs compare equal: the f16 form may store another payload)
    check(E.bitcast(back, d), n)  # within one kernel the bits are exact in both forms
    h = Buf(F16, list(struct.unpack(f"<{n}e", struct.pack(f"<{n}H", *pats))))
    check(E.bitcast(E.load(h, E.idx(n), F16), d), n)


# ---- reductions ---------------------------------------------------------------------------------
def _rows(x: Buf, rows: int, rsize: int) -> E.Exp:
    return E.load(x, E.add(E.mul(E.idx(rows), rsize), E.ridx(rsize)), F16)


@pytest.mark.parametrize(
    "rows,rsize", [(1, 5), (3, 7), (5, 300), (2, 4 * 1001), (3, 9000), (4097, 12), (1, 1 << 16)]
)
def test_sum_accumulates_in_f32(device_class: int, rows: int, rsize: int) -> None:
    # jnp.sum of float16 (lowering): f32 accumulation, one rounding at the end. The terms are
    # multiples of 0.25 whose sums stay exact in f32, so every schedule (split, trees, lanes)
    # matches the sequential reference bit for bit; totals past 2048 round, past 65504 overflow.
    x = _ramp(rows * rsize, scale=0.25 if rsize < 9000 else 1.75)
    exp = E.cast(E.reduce(Op.ADD, E.cast(_rows(x, rows, rsize), F32), rsize), F16)
    got = check(exp, rows)
    flat = np.array(x.vals, dtype=np.float16).reshape(rows, rsize)
    want = flat.astype(np.float32).sum(axis=1).astype(np.float16)
    assert np.array_equal(np.array(got, dtype=np.float16), want, equal_nan=True)
    _assert_form(_source(exp, rows), GPU.limits["f16"])


@pytest.mark.parametrize("op", [Op.MAX, Op.MIN], ids=str)
@pytest.mark.parametrize("rows,rsize", [(3, 7), (5, 300), (2, 9000)])
def test_max_min_in_f16(device_class: int, op: Op, rows: int, rsize: int) -> None:
    vals = _ramp(rows * rsize, scale=13.0).vals
    vals[rsize // 2] = math.nan  # NaN wins in row 0
    vals[rsize + 1] = 65504.0
    vals[-1] = -math.inf
    x = Buf(F16, vals)
    check(E.reduce(op, _rows(x, rows, rsize), rsize), rows)


def test_sum_in_f16_rounds_every_step(storage: int) -> None:
    # a REDUCE in float16 itself (not widened): each partial sum rounds, in the reference's order
    rows, rsize = 6, 100
    x = _ramp(rows * rsize, scale=7.25)
    check(E.reduce(Op.ADD, _rows(x, rows, rsize), rsize), rows)


# ---- matrix products ----------------------------------------------------------------------------
def _matmul(a: Buf, b: Buf, m: int, k: int, n: int, d: dt.DType) -> E.Exp:
    i = E.idx(m * n)
    row, col = E.idiv(i, n), E.mod(i, n)
    r = E.ridx(k)
    la = E.load(a, E.add(E.mul(row, k), r), d)
    lb = E.load(b, E.add(E.mul(r, n), col), d)
    return E.reduce(Op.ADD, E.binary(Op.MUL, E.cast(la, F32), E.cast(lb, F32)), k)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 7), (17, 300, 13), (33, 64, 20)])
def test_f16_matmul_accumulates_in_f32(device_class: int, m: int, k: int, n: int) -> None:
    # jnp.dot of float16 (lowering): products and sums in f32, one rounding. float16 operands
    # do not take the tiled matmul (wgsl_matmul.match wants float32 loads): the reduction
    # kernels run it. Half-integer operands keep every partial sum exact: bit for bit.
    a = Buf(F16, [((j * 7) % 9 - 4) * 0.5 for j in range(m * k)])
    b = Buf(F16, [((j * 5) % 11 - 5) * 1.5 for j in range(k * n)])
    exp = E.cast(_matmul(a, b, m, k, n, F16), F16)
    kernel, _ = make_kernel(exp, m * n)
    assert wgsl_matmul.match(kernel, force=True) is None
    got = check(exp, m * n)
    want = (
        np.array(a.vals, np.float16).reshape(m, k).astype(np.float32)
        @ np.array(b.vals, np.float16).reshape(k, n).astype(np.float32)
    ).astype(np.float16)
    assert np.array_equal(np.array(got, np.float16).reshape(m, n), want)


@pytest.mark.parametrize("m,k,n", [(16, 16, 16), (33, 20, 45), (32, 8, 64)])
def test_tiled_matmul_with_a_float16_epilogue(
    monkeypatch: pytest.MonkeyPatch, device_class: int, m: int, k: int, n: int
) -> None:
    # a float32 product (tiled: wgsl_matmul) plus a float16 bias: the bias binding is f16
    monkeypatch.setattr(wgsl_matmul, "MIN_MACS", 0)
    monkeypatch.setattr(wgsl_matmul, "MIN_DIM", 1)
    GPU._cache.clear()
    a = Buf(F32, [float((j * 7) % 9 - 4) for j in range(m * k)])
    b = Buf(F32, [float((j * 5) % 11 - 5) for j in range(k * n)])
    bias = Buf(F16, [((j * 3) % 17 - 8) * 0.125 + 2.0**-20 * (j % 2) for j in range(n)])
    col = E.mod(E.idx(m * n), n)
    prod = _matmul(a, b, m, k, n, F32)
    exp = E.binary(Op.ADD, prod, E.cast(E.load(bias, col, F16), F32))
    check(exp, m * n)  # integer products and sums: exact however they are summed
    kernel, _ = make_kernel(exp, m * n)
    assert wgsl_matmul.match(kernel) is not None
    src = GPU.prepare(kernel).source
    assert "As[" in src or "c0_0" in src  # a tiled product
    _assert_form(src, GPU.limits["f16"])
    # ... and rounded to float16 at the end (a 16-bit output: the reduction kernels)
    check(E.cast(exp, F16), m * n)
    GPU._cache.clear()


# ---- whole programs through webjax.numpy --------------------------------------------------------
def test_numpy_float16_programs(storage: int) -> None:
    import webjax
    import webjax.numpy as jnp
    from webjax._src.runtime.backend import get_backend

    backend = get_backend("webgpu")  # the instance webjax.numpy dispatches to
    saved = dict(backend.limits)
    backend.limits["f16"] = storage
    backend._cache.clear()
    try:
        rng = np.random.default_rng(3)
        x = (rng.standard_normal((37, 29)) * 40).astype(np.float16)
        w = (rng.integers(-6, 7, (29, 11)) * 0.5).astype(np.float16)

        def run(platform: str) -> list[np.ndarray]:
            with webjax.default_device(webjax.devices(platform)[0]):
                a, b = jnp.asarray(x), jnp.asarray(w)
                outs = [a * 3 + 1, jnp.sqrt(jnp.abs(a)), a.sum(axis=0), a.max(axis=1)]
                outs += [a.astype(jnp.float32), (a / 7).astype(jnp.int16), a.T, a[::2, 1:6]]
                outs.append(jnp.round(a) @ b)
                return [np.asarray(o) for o in outs]

        for got, want in zip(run("webgpu"), run("cpu"), strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want, equal_nan=True), (got, want)
    finally:
        backend.limits.clear()
        backend.limits.update(saved)
        backend._cache.clear()
