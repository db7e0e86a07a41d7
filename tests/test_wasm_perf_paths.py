"""The wasm backend's fast REDUCE paths (codegen/wasm_reduce.py) against the reference.

Vector reductions (unit-stride loads in RIDX) and the register-tiled matmul are planned from
index analysis and guarded at run time; these tests hit their edges: tile remainders, batched
and transposed layouts, epilogues, buffers shorter than the proven index range (the generic
fallback), split [lo, hi) ranges, NaN propagation and exact integer/min/max results.
"""

from __future__ import annotations

import itertools
import math
import random
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from webjax._src import dtypes as dt
from webjax._src.codegen.wasm import kernel as wasm_codegen
from webjax._src.codegen.wasm import reduce as wasm_reduce
from webjax._src.ir import exp as E
from webjax._src.ir import scalar
from webjax._src.ir.kernel import Kernel
from webjax._src.ir.ops import Op
from webjax._src.runtime.backend import BackendUnavailable

try:
    from webjax._src.runtime.wasm import WasmBackend

    WASM: Any = WasmBackend()
    SKIP = ""
except BackendUnavailable as e:  # pragma: no cover - depends on the host
    WASM, SKIP = None, f"wasm backend unavailable: {e}"

pytestmark = pytest.mark.skipif(WASM is None, reason=SKIP)

from test_wasm_backend import check, pack, run, run_reference, unpack  # noqa: E402

F32 = dt.float32


def _rand(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [scalar.normalize(F32, rng.uniform(-1, 1)) for _ in range(n)]


def _close(kernel: Kernel, inputs: list[bytes], rel: float = 1e-5) -> None:
    got = unpack(kernel.out_dtype, run(WASM, kernel, inputs))
    want = unpack(kernel.out_dtype, run_reference(kernel, inputs))
    for g, w in zip(got, want, strict=True):
        if w != w:
            assert g != g
        elif g != w:
            assert abs(g - w) <= rel * (1 + abs(w)), (g, w)


def _matmul(m: int, k: int, n: int, *, bt: bool = False, batch: int = 1) -> Kernel:
    i = E.idx(batch * m * n)
    r = E.ridx(k)
    b_ = E.idiv(i, m * n)
    row, col = E.mod(E.idiv(i, n), m), E.mod(i, n)
    a = E.load(0, E.add(E.add(E.mul(b_, m * k), E.mul(row, k)), r), F32)
    if bt:
        bi = E.add(E.add(E.mul(b_, n * k), E.mul(col, k)), r)
    else:
        bi = E.add(E.add(E.mul(b_, k * n), E.mul(r, n)), col)
    red = E.reduce(Op.ADD, E.binary(Op.MUL, a, E.load(1, bi, F32)), k)
    return Kernel(red, batch * m * n, (F32, F32))


@pytest.mark.parametrize(
    "m,k,n", [(4, 4, 8), (5, 33, 7), (8, 16, 16), (13, 40, 29), (32, 130, 40), (9, 513, 24)]
)
def test_tiled_matmul_shapes(m: int, k: int, n: int) -> None:
    kernel = _matmul(m, k, n)
    tiled = wasm_reduce.plan_matmul(kernel, kernel.exp) is not None
    assert tiled == ((m >= 2 and n >= 16) or (m >= 4 and n >= 8))
    _close(kernel, [pack(F32, _rand(m * k, 1)), pack(F32, _rand(k * n, 2))])


def test_tiled_matmul_exact_without_relaxed_simd() -> None:
    # mul+add per output in k order: bit for bit the scalar loop's result
    kernel = _matmul(12, 50, 24)
    wasm = wasm_codegen.generate(kernel, relaxed=False)
    fn = WASM.host.instantiate(wasm, wasm_codegen.EXPORT)
    a, b = pack(F32, _rand(12 * 50, 3)), pack(F32, _rand(50 * 24, 4))
    ha, hb, ho = WASM.malloc(len(a)), WASM.malloc(len(b)), WASM.malloc(12 * 24 * 4)
    WASM.write(ha, a)
    WASM.write(hb, b)
    WASM.write(ho, bytes(12 * 24 * 4))  # called outside dispatch: initialize it
    scratch = WASM.malloc(1 << 20)
    fn(ho.ptr, ha.ptr, hb.ptr, 12 * 50, 50 * 24, 0, 12 * 24, scratch.ptr)
    got = WASM.read(ho, 12 * 24 * 4)
    for h in (ha, hb, ho, scratch):
        WASM.free(h)
    assert got == run_reference(kernel, [a, b])


def test_batched_and_transposed_matmul() -> None:
    kb = _matmul(6, 20, 16, batch=3)
    assert wasm_reduce.plan_matmul(kb, kb.exp) is not None
    _close(kb, [pack(F32, _rand(3 * 6 * 20, 5)), pack(F32, _rand(3 * 20 * 16, 6))])
    kt = _matmul(9, 37, 11, bt=True, batch=2)  # A @ B.T: the vector reduction per output
    assert wasm_reduce.plan_matmul(kt, kt.exp) is None
    _close(kt, [pack(F32, _rand(2 * 9 * 37, 7)), pack(F32, _rand(2 * 11 * 37, 8))])


def test_matmul_epilogue_bias_relu() -> None:
    m, k, n = 10, 24, 20
    base = _matmul(m, k, n)
    i = E.idx(m * n)
    bias = E.load(2, E.mod(i, n), F32)
    out = E.binary(Op.MAX, E.binary(Op.ADD, base.exp, bias), E.const(0.0, F32))
    kernel = Kernel(out, m * n, (F32, F32, F32))
    assert wasm_reduce.plan_matmul(kernel, base.exp) is not None
    _close(
        kernel, [pack(F32, _rand(m * k, 9)), pack(F32, _rand(k * n, 10)), pack(F32, _rand(n, 11))]
    )


def test_short_buffers_fall_back_to_bounds_safe_loads() -> None:
    # inputs shorter than the kernel's index range read zeros, as the generic path does
    m, k, n = 8, 16, 16
    kernel = _matmul(m, k, n)
    a, b = _rand(m * k - 5, 12), _rand(k * n - 3, 13)
    check(kernel, [pack(F32, a), pack(F32, b)])
    i = E.idx(8)
    r = E.ridx(40)
    red = Kernel(E.reduce(Op.ADD, E.load(0, E.add(E.mul(i, 40), r), F32), 40), 8, (F32,))
    # (the fallback sums in the vector path's lane order, not the reference's r order:
    # test_wasm_sum_order checks that order bit for bit)
    _close(red, [pack(F32, _rand(8 * 40 - 7, 14))])


def test_split_ranges_take_the_generic_path() -> None:
    m, k, n = 8, 16, 16
    kernel = _matmul(m, k, n)
    a, b = pack(F32, _rand(m * k, 15)), pack(F32, _rand(k * n, 16))
    want = unpack(F32, run_reference(kernel, [a, b]))
    exe = WASM.prepare(kernel)
    ha, hb, ho = WASM.malloc(len(a)), WASM.malloc(len(b)), WASM.malloc(4 * m * n)
    WASM.write(ha, a)
    WASM.write(hb, b)
    WASM.write(ho, bytes(4 * m * n))  # called outside dispatch: initialize it
    scratch = WASM.malloc(exe.scratch)
    for lo, hi in [(0, 50), (50, 51), (51, m * n)]:
        exe.fn(ho.ptr, ha.ptr, hb.ptr, m * k, k * n, lo, hi, scratch.ptr)
    got = unpack(F32, WASM.read(ho, 4 * m * n))
    for h in (ha, hb, ho, scratch):
        WASM.free(h)
    assert all(abs(g - w) <= 1e-5 for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("combine", [Op.MAX, Op.MIN, Op.ADD])
def test_vector_reduction_nan_and_signed_zero(combine: Op) -> None:
    rows, k = 5, 67
    vals = _rand(rows * k, 17)
    vals[3] = math.nan  # row 0
    vals[k + 66] = math.nan  # row 1, in the scalar tail
    vals[2 * k : 3 * k] = [-0.0] * k  # row 2: all negative zeros
    vals[3 * k + 10] = math.inf
    vals[4 * k + 20] = -math.inf
    i = E.idx(rows)
    r = E.ridx(k)
    kernel = Kernel(E.reduce(combine, E.load(0, E.add(E.mul(i, k), r), F32), k), rows, (F32,))
    if combine is Op.ADD:
        _close(kernel, [pack(F32, vals)])
    else:
        check(kernel, [pack(F32, vals)])


@pytest.mark.parametrize("d", [dt.int32, dt.uint32])
@pytest.mark.parametrize("combine", [Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR])
def test_vector_reduction_integers_exact(combine: Op, d: dt.DType) -> None:
    rows, k = 3, 101
    rng = random.Random(hash((combine.value, d.name)) & 0xFFFF)
    lo, hi = dt.iinfo_bounds(d)
    data = [rng.randint(lo, hi) for _ in range(rows * k)]
    i = E.idx(rows)
    r = E.ridx(k)
    kernel = Kernel(E.reduce(combine, E.load(0, E.add(E.mul(i, k), r), d), k), rows, (d,))
    check(kernel, [pack(d, data)])


def test_vector_reduction_of_an_expression() -> None:
    # sum_r (x[i, r] - y[r])^2 * s, with s and y broadcast: a fused body on lanes
    rows, k = 7, 90
    i = E.idx(rows)
    r = E.ridx(k)
    x = E.load(0, E.add(E.mul(i, k), r), F32)
    y = E.load(1, r, F32)
    s = E.load(2, E.i32(0), F32)
    dxy = E.binary(Op.SUB, x, y)
    body = E.binary(Op.MUL, E.binary(Op.MUL, dxy, dxy), s)
    red = E.reduce(Op.ADD, body, k)
    kernel = Kernel(E.unary(Op.SQRT, red), rows, (F32, F32, F32))
    assert wasm_reduce.plan_reduce(red, _dep_r(kernel)) is not None
    _close(kernel, [pack(F32, _rand(rows * k, 18)), pack(F32, _rand(k, 19)), pack(F32, [0.5])])


def _dep_r(kernel: Kernel) -> set[int]:
    dep: set[int] = set()
    for n in kernel.exp.toposort():
        if n.op is Op.RIDX or (n.op is not Op.REDUCE and any(id(s) in dep for s in n.src)):
            dep.add(id(n))
    return dep


def test_end_to_end_jnp_on_wasm() -> None:
    np = pytest.importorskip("numpy")
    import webjax
    import webjax.numpy as jnp

    dev = webjax.devices("wasm")[0]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 70), dtype=np.float32)
    w = rng.standard_normal((70, 45), dtype=np.float32)
    b = rng.standard_normal((45,), dtype=np.float32)
    xs, ws, bs = (webjax.device_put(v, dev) for v in (x, w, b))
    f = webjax.jit(lambda x, w, b: jnp.maximum(x @ w + b, 0))
    np.testing.assert_allclose(
        np.asarray(f(xs, ws, bs)), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5
    )
    g = webjax.jit(lambda x, w: x @ w.T)
    w2 = rng.standard_normal((45, 70), dtype=np.float32)
    np.testing.assert_allclose(
        np.asarray(g(xs, webjax.device_put(w2, dev))), x @ w2.T, rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(float(jnp.sum(xs)), float(x.astype(np.float64).sum()), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jnp.max(xs, axis=1)), x.max(axis=1))


@pytest.mark.parametrize(
    "m,k,n,batch,parts",
    [
        (64, 40, 32, 1, 2),
        (61, 33, 40, 1, 3),
        (6, 20, 16, 5, 4),
        (30, 17, 24, 3, 7),
        (9, 8, 64, 1, 5),
    ],
)
def test_split_ranges_keep_their_tiles(m: int, k: int, n: int, batch: int, parts: int) -> None:
    # a worker pool's ranges (wasm.split) cut at tile rows: each range runs its tiles, and the
    # pieces give the whole call's result bit for bit (the same code per output)
    base = _matmul(m, k, n, batch=batch)
    i = E.idx(batch * m * n)
    out = E.binary(
        Op.MAX, E.binary(Op.ADD, base.exp, E.load(2, E.mod(i, n), F32)), E.const(0.0, F32)
    )
    for kernel in (base, Kernel(out, batch * m * n, (F32, F32, F32))):
        mod = wasm_codegen.generate_module(kernel, relaxed=WASM.relaxed_simd)
        assert mod.rows is not None
        M, N, MR, Mfull = mod.rows
        cuts = wasm_codegen.split(kernel.size, parts, mod.rows)
        assert cuts[0] == 0 and cuts[-1] == kernel.size and len(cuts) >= 3
        assert all(a < b for a, b in itertools.pairwise(cuts))
        for c in cuts:
            assert c % N == 0 and ((c // N) % M % MR == 0 or (c // N) % M >= Mfull)
        fn = WASM.host.instantiate(mod.wasm, wasm_codegen.EXPORT)
        ins = [
            pack(F32, _rand(batch * m * k, 20)),
            pack(F32, _rand(batch * k * n, 21)),
            pack(F32, _rand(n, 22)),
        ][: kernel.nargs]
        hs = [WASM.malloc(len(x)) for x in ins]
        for h, x in zip(hs, ins, strict=True):
            WASM.write(h, x)
        lens = [len(x) // 4 for x in ins]
        scratch = WASM.malloc(mod.scratch * parts)
        results = []
        for ranges in ([(0, kernel.size)], list(itertools.pairwise(cuts))):
            ho = WASM.malloc(4 * kernel.size)
            WASM.write(ho, bytes(4 * kernel.size))  # called outside dispatch: initialize it
            for j, (lo, hi) in enumerate(ranges):
                fn(ho.ptr, *(h.ptr for h in hs), *lens, lo, hi, scratch.ptr + j * mod.scratch)
            results.append(WASM.read(ho, 4 * kernel.size))
            WASM.free(ho)
        for h in [*hs, scratch]:
            WASM.free(h)
        assert results[0] == results[1]
        _close(kernel, ins)


def test_split_elementwise_cuts() -> None:
    assert wasm_codegen.split(1000, 2, None) == [0, 496, 1000]
    assert wasm_codegen.split(20, 4, None) == [0, 16, 20]
    assert wasm_codegen.split(1 << 20, 1, None) == [0, 1 << 20]


def _channel_kernel(c: int, hw: int, d: dt.DType = F32) -> Kernel:
    """A batch-norm-shaped kernel: (x[i] - m[i / hw]) * rsqrt(v[i / hw] + eps), then relu."""
    i = E.idx(c * hw)
    ch = E.idiv(i, hw)
    x = E.load(0, i, d)
    scale = E.unary(Op.RSQRT, E.binary(Op.ADD, E.load(2, ch, d), E.const(1e-5, d)))
    y = E.binary(Op.MUL, E.binary(Op.SUB, x, E.load(1, ch, d)), scale)
    return Kernel(E.binary(Op.MAX, y, E.const(0.0, d)), c * hw, (d, d, d))


@pytest.mark.parametrize("c,hw", [(3, 16), (5, 49), (4, 196), (2, 3136), (7, 17)])
def test_blocked_elementwise_matches_the_reference(c: int, hw: int) -> None:
    # per-channel values computed once per block of hw elements: bit for bit the reference
    kernel = _channel_kernel(c, hw)
    plan = wasm_codegen._block_plan(kernel, kernel.exp.toposort(), _dep_i(kernel))
    assert plan is not None and plan[0] == hw
    x = _rand(c * hw, 30)
    m = _rand(c, 31)
    v = [abs(t) + 0.1 for t in _rand(c, 32)]
    check(kernel, [pack(F32, x), pack(F32, m), pack(F32, v)])
    # shorter inputs read zeros in the blocked loop too
    check(kernel, [pack(F32, x[:-5]), pack(F32, m[:-1]), pack(F32, v)])


def _dep_i(kernel: Kernel) -> set[int]:
    dep: set[int] = set()
    for n in kernel.exp.toposort():
        if n.op is Op.IDX or any(id(s) in dep for s in n.src):
            dep.add(id(n))
    return dep


def test_blocked_elementwise_split_ranges() -> None:
    # ranges cut anywhere (inside blocks, one element long) each start and end their blocks
    c, hw = 6, 52
    kernel = _channel_kernel(c, hw)
    ins = [pack(F32, _rand(c * hw, 33)), pack(F32, _rand(c, 34)), pack(F32, [0.5] * c)]
    want = unpack(F32, run_reference(kernel, ins))
    exe = WASM.prepare(kernel)
    hs = [WASM.malloc(len(b)) for b in ins]
    for h, b in zip(hs, ins, strict=True):
        WASM.write(h, b)
    ho = WASM.malloc(4 * c * hw)
    cuts = [0, 1, 7, 51, 52, 53, 100, 101, 160, c * hw]
    for lo, hi in itertools.pairwise(cuts):
        WASM.write(ho, pack(F32, [-7.0] * (c * hw)))  # called outside dispatch: initialize
        exe.fn(ho.ptr, *[h.ptr for h in hs], c * hw, c, c, lo, hi)
        got = unpack(F32, WASM.read(ho, 4 * c * hw))
        assert got[lo:hi] == want[lo:hi], (lo, hi)
        assert got[:lo] + got[hi:] == [-7.0] * (c * hw - hi + lo), (lo, hi)  # nothing else
    for h in (*hs, ho):
        WASM.free(h)


def test_block_plan_needs_a_per_block_value() -> None:
    i = E.idx(4 * 64)
    # only the division itself is constant over a block: no plan
    only_div = Kernel(E.cast(E.idiv(i, 64), F32), 4 * 64, ())
    assert wasm_codegen._block_plan(only_div, only_div.exp.toposort(), _dep_i(only_div)) is None
    # blocks of fewer than MIN_BLOCK elements are not worth it
    small = _channel_kernel(40, 5)
    assert wasm_codegen._block_plan(small, small.exp.toposort(), _dep_i(small)) is None
    # the largest set of divisors wins: i / 64 and i / 128 both step with blocks of 64
    j = E.idx(8 * 64)
    two = E.binary(Op.ADD, E.load(0, E.idiv(j, 64), F32), E.load(1, E.idiv(j, 128), F32))
    k2 = Kernel(E.binary(Op.MUL, two, E.load(2, E.mod(j, 5), F32)), 8 * 64, (F32, F32, F32))
    plan = wasm_codegen._block_plan(k2, k2.exp.toposort(), _dep_i(k2))
    assert plan is not None and plan[0] == 64
    check(k2, [pack(F32, _rand(8, 35)), pack(F32, _rand(4, 36)), pack(F32, _rand(5, 37))])
    # i / 96 is not constant over a block of 64 (it steps inside blocks 1, 4, ...)
    three = E.binary(Op.ADD, two, E.load(1, E.idiv(j, 96), F32))
    k3 = Kernel(E.binary(Op.MUL, three, E.load(2, E.idiv(j, 64), F32)), 8 * 64, (F32, F32, F32))
    plan = wasm_codegen._block_plan(k3, k3.exp.toposort(), _dep_i(k3))
    assert plan is not None and plan[0] == 64
    check(k3, [pack(F32, _rand(8, 38)), pack(F32, _rand(6, 39)), pack(F32, _rand(8, 40))])
