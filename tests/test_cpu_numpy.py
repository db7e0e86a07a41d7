"""The cpu backend's NumPy evaluator (codegen.numpy_ref) against the pure-Python reference
(codegen.pyref), bit for bit (any NaN equals any NaN; zeros keep their sign).

Targeted tests run every op on every dtype over special values (NaN, infinities, -0.0, INT_MIN,
zero divisors, out-of-range shifts), every cast and bitcast, every reduction combiner in both
grid layouts and with reduction chunking, masked out-of-range loads; a seeded fuzz builds random
kernels (op trees over all dtypes, index arithmetic, reductions with epilogues).
"""

from __future__ import annotations

import math
import random
import struct
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

np = pytest.importorskip("numpy")

from webjax._src import dtypes as dt  # noqa: E402
from webjax._src.codegen import numpy_ref, pyref  # noqa: E402
from webjax._src.ir import exp as E  # noqa: E402
from webjax._src.ir import scalar  # noqa: E402
from webjax._src.ir.exp import Exp  # noqa: E402
from webjax._src.ir.kernel import Kernel  # noqa: E402
from webjax._src.ir.ops import COMPARE, FLOAT_ONLY, Op  # noqa: E402

INTS = [dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint16, dt.uint32, dt.uint64]
FLOATS = [dt.float32, dt.float64, dt.float16, dt.bfloat16]
ALL = [dt.bool_, *INTS, *FLOATS]

F_SPECIAL = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0, 7.0, 0.1, -0.7, 123.456, 1e-3,
    1e30, -1e30, 3.4e38, 65504.0, 65520.0, 2.0**31, -(2.0**31), 2.0**63, 1e-8, 300.0, -129.0,
    1.17549435e-38, 1e-40, 1e300, -1e-310, 710.5, -745.5, 0.9999, -1.0001, 1e-30,
    math.inf, -math.inf, math.nan,
]  # fmt: skip


def values(d: dt.DType, rng: random.Random | None = None, n: int = 0) -> list[Any]:
    """Special values of d (normalized), plus n random ones."""
    if d.kind == "b":
        vs: list[Any] = [False, True]
        return vs + [rng.random() < 0.5 for _ in range(n)] if rng else vs
    if d.kind == "f":
        vs = [scalar.normalize(d, v) for v in F_SPECIAL]
        if rng:
            for _ in range(n):
                v = rng.choice(
                    [
                        rng.uniform(-4, 4),
                        rng.gauss(0, 50),
                        rng.uniform(-1, 1),
                        math.ldexp(rng.random(), rng.randint(-30, 30)),
                    ]
                )
                vs.append(scalar.normalize(d, v))
        return vs
    lo, hi = dt.iinfo_bounds(d)
    base = [0, 1, 2, 3, 5, 7, 8, 15, 16, 31, 32, 33, 63, 64, 100, 127, 128, 255, 12345, 65535]
    base += [lo, hi, lo + 1, hi - 1, 2**31 - 1, 2**31, 2**32 - 1] + [-v for v in base]
    vs = sorted({v for v in base if lo <= v <= hi})
    if rng:
        vs += [rng.randint(lo, hi) for _ in range(n)]
        vs += [rng.randint(-40, 70) for _ in range(n) if lo <= -40]
    return vs


def pack(d: dt.DType, vals: list[Any]) -> bytearray:
    if d is dt.bfloat16:
        return bytearray(b"".join(struct.pack("<f", v)[2:] for v in vals))
    fmt = "e" if d is dt.float16 else pyref.FORMATS[d.name]
    return bytearray(struct.pack(f"<{len(vals)}{fmt}", *vals))


def decode(d: dt.DType, raw: bytes) -> list[Any]:
    n = len(raw) // d.itemsize
    if d is dt.bfloat16:
        return [struct.unpack("<f", b"\0\0" + raw[2 * i : 2 * i + 2])[0] for i in range(n)]
    fmt = "e" if d is dt.float16 else pyref.FORMATS[d.name]
    return list(struct.unpack(f"<{n}{fmt}", raw))


def run_pyref(kernel: Kernel, inputs: list[bytearray]) -> bytes:
    fn = pyref.compile_kernel(kernel)
    ins = [
        list(struct.unpack(f"<{len(raw) // d.itemsize}{pyref.fmt(d)}", raw))
        for d, raw in zip(kernel.arg_dtypes, inputs, strict=True)
    ]
    out: list[Any] = [0] * kernel.size
    fn(out, *ins)
    return struct.pack(f"<{kernel.size}{pyref.fmt(kernel.out_dtype)}", *out)


def run_numpy(kernel: Kernel, inputs: list[bytearray]) -> bytes:
    out = bytearray(kernel.size * kernel.out_dtype.itemsize)
    numpy_ref.compile_kernel(kernel)(out, [bytearray(b) for b in inputs])
    return bytes(out)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float):
        if a != a:
            return b != b
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


def check(kernel: Kernel, inputs: list[bytearray], what: str = "") -> None:
    kernel.check()
    want = decode(kernel.out_dtype, run_pyref(kernel, inputs))
    got = decode(kernel.out_dtype, run_numpy(kernel, inputs))
    bad = [(i, w, g) for i, (w, g) in enumerate(zip(want, got, strict=True)) if not same(w, g)]
    assert not bad, f"{what}: {len(bad)} mismatches, first {bad[:5]}\n{kernel.exp!r}"


@pytest.fixture(params=["default", "small"])
def chunks(request: Any, monkeypatch: Any) -> str:
    """Run with the default chunking and with tiny chunks (both grid layouts, r-chunking)."""
    if request.param == "small":
        monkeypatch.setattr(numpy_ref, "_GRID", 48)
        monkeypatch.setattr(numpy_ref, "_CHUNK", 16)
        monkeypatch.setattr(numpy_ref, "_LOOP_ROWS", 5)
    return str(request.param)


# ---- elementwise ops ------------------------------------------------------------------------
def _unary_ops(d: dt.DType) -> list[Op]:
    if d.kind == "b":
        return [Op.NOT]
    if d.kind in "iu":
        return [Op.NEG, Op.NOT, Op.ABS, Op.SIGN, Op.POPCNT, Op.CLZ]
    return sorted(
        [Op.NEG, Op.ABS, Op.SIGN, *FLOAT_ONLY - {Op.POW, Op.ATAN2, Op.NEXTAFTER}],
        key=lambda o: o.value,
    )


def _binary_ops(d: dt.DType) -> list[Op]:
    if d.kind == "b":
        return [Op.AND, Op.OR, Op.XOR, Op.MAX, Op.MIN, Op.ADD, Op.MUL, *sorted(COMPARE, key=str)]
    common = [Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.MIN, *sorted(COMPARE, key=str)]
    if d.kind in "iu":
        return common + [Op.AND, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.SHRL]
    return common + [Op.POW, Op.ATAN2, Op.NEXTAFTER]


@pytest.mark.parametrize("d", ALL, ids=str)
def test_unary_ops(d: dt.DType) -> None:
    rng = random.Random(1)
    vals = values(d, rng, 200)
    n = len(vals)
    x = E.load(0, E.idx(n), d)
    for op in _unary_ops(d):
        e = E.unary(op, x)
        check(Kernel(e, n, (d,)), [pack(d, vals)], f"{op.value} {d}")


@pytest.mark.parametrize("d", ALL, ids=str)
def test_binary_ops(d: dt.DType) -> None:
    rng = random.Random(2)
    vals = values(d, rng, 12 if d.kind == "f" else 6)
    m = len(vals)
    n = m * m
    i = E.idx(n)
    a = E.load(0, E.idiv(i, m), d)
    b = E.load(1, E.mod(i, m), d)
    for op in _binary_ops(d):
        check(Kernel(E.binary(op, a, b), n, (d, d)), [pack(d, vals)] * 2, f"{op.value} {d}")


def test_random_float_transcendentals_narrow() -> None:
    """Many random inputs: the rounding-safety check must make narrow dtypes exact."""
    rng = random.Random(3)
    for d in (dt.float32, dt.bfloat16, dt.float16):
        vals = [scalar.normalize(d, rng.uniform(-12, 12)) for _ in range(3000)]
        vals += [
            scalar.normalize(d, math.ldexp(rng.random(), rng.randint(-20, 5))) for _ in range(1000)
        ]
        n = len(vals)
        x = E.load(0, E.idx(n), d)
        for op in [
            Op.EXP,
            Op.LOG,
            Op.TANH,
            Op.SIN,
            Op.LOGISTIC,
            Op.EXPM1,
            Op.LOG1P,
            Op.ATAN,
            Op.CBRT,
            Op.EXP2,
            Op.ASINH,
            Op.SINH,
            Op.RSQRT,
        ]:
            e = E.unary(op, E.unary(Op.ABS, x) if op in (Op.LOG, Op.RSQRT) else x)
            check(Kernel(e, n, (d,)), [pack(d, vals)], f"{op.value} {d}")
        y = E.load(0, E.mod(E.add(E.idx(n), 17), n), d)
        for op in (Op.POW, Op.ATAN2):
            check(Kernel(E.binary(op, E.unary(Op.ABS, x), y), n, (d,)), [pack(d, vals)], op.value)


@pytest.mark.parametrize("src", ALL, ids=str)
def test_casts_and_bitcasts(src: dt.DType) -> None:
    rng = random.Random(4)
    vals = values(src, rng, 40)
    n = len(vals)
    x = E.load(0, E.idx(n), src)
    for dst in ALL:
        if dst is not src:
            check(Kernel(E.cast(x, dst), n, (src,)), [pack(src, vals)], f"cast {src}->{dst}")
            if dst.itemsize == src.itemsize:
                bits_vals = [v for v in vals if not (isinstance(v, float) and v != v)]
                xb = E.load(0, E.idx(len(bits_vals)), src)
                k = Kernel(E.bitcast(xb, dst), len(bits_vals), (src,))
                check(k, [pack(src, bits_vals)], f"bitcast {src}->{dst}")


def test_masked_loads_and_where() -> None:
    d = dt.float32
    vals = [float(v) for v in range(10)]
    n = 40
    i = E.idx(n)
    idx = E.add(E.mul(i, E.i32(3)), E.i32(-7))  # partly negative, partly past the end
    e = E.binary(Op.ADD, E.load(0, idx, d), E.load(0, E.binary(Op.SUB, E.i32(5), i), d))
    check(Kernel(e, n, (d,)), [pack(d, vals)], "masked")
    # empty buffer: every read is 0
    check(Kernel(E.load(0, i, dt.int16), n, (dt.int16,)), [bytearray()], "empty")
    c = E.binary(Op.CMPLT, E.load(0, E.mod(i, 10), d), E.const(4.5, d))
    e = E.where(c, E.load(1, i, dt.bfloat16), E.cast(E.load(0, i, d), dt.bfloat16))
    check(Kernel(e, n, (d, dt.bfloat16)), [pack(d, vals), pack(dt.bfloat16, [1.5] * 50)], "where")


def test_int32_index_wraparound() -> None:
    n = 64
    i = E.idx(n)
    big = E.binary(Op.MUL, E.add(i, E.i32(2**30)), E.i32(7))  # wraps in int32
    e = E.cast(E.binary(Op.ADD, big, E.load(0, E.mod(big, E.i32(5)), dt.int32)), dt.int64)
    check(Kernel(e, n, (dt.int32,)), [pack(dt.int32, [10, -3, 99, 7, 1])], "wrap")


# ---- reductions ---------------------------------------------------------------------------------
def _reducers(d: dt.DType) -> list[Op]:
    if d.kind == "f":
        return [Op.ADD, Op.MUL, Op.MAX, Op.MIN]
    return [Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR]


@pytest.mark.parametrize("d", ALL, ids=str)
@pytest.mark.parametrize("shape", [(7, 13), (300, 5), (1, 200), (40, 40)], ids=str)
def test_reductions(d: dt.DType, shape: tuple[int, int], chunks: str) -> None:
    rows, rs = shape
    rng = random.Random(5)
    if d.kind == "f":
        vals = [scalar.normalize(d, rng.gauss(0, 3)) for _ in range(rows * rs)]
        # a few rows with specials: NaN, infinities, all -0.0, mixed zeros, huge
        for r, sp in enumerate(
            [
                [math.nan],
                [math.inf, -math.inf],
                [-0.0] * rs,
                [0.0, -0.0],
                [1e30, -1e30, 3e38],
                [-0.0, 0.0],
            ]
        ):
            if r < rows:
                row = (sp * rs)[:rs] if len(sp) > 1 else sp + vals[r * rs + 1 : (r + 1) * rs]
                vals[r * rs : (r + 1) * rs] = [scalar.normalize(d, v) for v in row]
        if rows == 1:
            vals = [-0.0] * rs if d is dt.float16 else vals
    else:
        vals = values(d, rng, rows * rs)[: rows * rs]
        vals += [0] * (rows * rs - len(vals))
        if d.kind == "b":
            vals = [bool(v) for v in vals]
    i, r = E.idx(rows), E.ridx(rs)
    body = E.load(0, E.add(E.mul(i, E.i32(rs)), r), d)
    for op in _reducers(d):
        red = E.reduce(op, body, rs)
        check(Kernel(red, rows, (d,)), [pack(d, vals)], f"reduce {op.value} {d} {shape}")
    if d.kind == "f":  # transposed access, epilogue, body with loads that do not use RIDX
        body = E.binary(Op.MUL, E.load(0, E.add(E.mul(r, E.i32(rows)), i), d), E.load(0, i, d))
        e = E.unary(Op.SQRT, E.unary(Op.ABS, E.reduce(Op.ADD, body, rs)))
        e = E.binary(Op.ADD, e, E.load(0, i, d))
        check(Kernel(e, rows, (d,)), [pack(d, vals)], f"epilogue {d} {shape}")


def test_matmul_kernel(chunks: str) -> None:
    rng = random.Random(6)
    m, k, n = 9, 33, 11
    a = [scalar.normalize(dt.float32, rng.gauss(0, 1)) for _ in range(m * k)]
    b = [scalar.normalize(dt.float32, rng.gauss(0, 1)) for _ in range(k * n)]
    i, r = E.idx(m * n), E.ridx(k)
    x = E.load(0, E.add(E.mul(E.idiv(i, n), E.i32(k)), r), dt.float32)
    y = E.load(1, E.add(E.mul(r, E.i32(n)), E.mod(i, n)), dt.float32)
    e = E.reduce(Op.ADD, E.binary(Op.MUL, x, y), k)
    e = E.binary(Op.MAX, e, E.const(0.0, dt.float32))  # relu epilogue
    check(Kernel(e, m * n, (dt.float32, dt.float32)), [pack(dt.float32, a), pack(dt.float32, b)])


# ---- fuzz ---------------------------------------------------------------------------------------
class _Gen:
    def __init__(self, rng: random.Random, size: int, rsize: int, nbuf: int) -> None:
        self.rng, self.size, self.rsize, self.nbuf = rng, size, rsize, nbuf
        self.slots: dict[dt.DType, int] = {}
        self.in_body = False

    def slot(self, d: dt.DType) -> int:
        return self.slots.setdefault(d, len(self.slots))

    def index(self) -> Exp:
        rng = self.rng
        i = E.idx(self.size)
        choices = [
            lambda: i,
            lambda: E.mod(E.add(i, E.i32(rng.randint(0, 9))), E.i32(self.nbuf)),
            lambda: E.add(E.mul(i, E.i32(rng.randint(1, 3))), E.i32(rng.randint(-6, 6))),
            lambda: E.idiv(
                E.binary(Op.SUB, E.i32(rng.randint(0, 40)), i), E.i32(rng.randint(1, 4))
            ),
        ]
        if self.in_body:
            r = E.ridx(self.rsize)
            choices += [
                lambda: E.add(E.mul(i, E.i32(self.rsize)), r),
                lambda: E.add(E.mul(r, E.i32(rng.randint(1, 5))), E.mod(i, E.i32(7))),
                lambda: r,
            ]
        return rng.choice(choices)()

    def leaf(self, d: dt.DType) -> Exp:
        rng = self.rng
        if rng.random() < 0.25:
            return E.const(rng.choice(values(d)), d)
        if self.in_body and d is dt.int32 and rng.random() < 0.2:
            return E.ridx(self.rsize)
        if d is dt.int32 and rng.random() < 0.15:
            return E.idx(self.size)
        return E.load(self.slot(d), self.index(), d)

    def gen(self, d: dt.DType, depth: int) -> Exp:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.2:
            return self.leaf(d)
        kind = rng.random()
        if d is dt.bool_ and kind < 0.3:  # comparison from any dtype
            s = rng.choice(ALL)
            op = rng.choice(sorted(COMPARE, key=str))
            return E.binary(op, self.gen(s, depth - 1), self.gen(s, depth - 1))
        if kind < 0.35:
            op = rng.choice(_unary_ops(d))
            return E.unary(op, self.gen(d, depth - 1))
        if kind < 0.75:
            op = rng.choice(_binary_ops(d))
            if op in COMPARE:
                op = Op.MAX
            return E.binary(op, self.gen(d, depth - 1), self.gen(d, depth - 1))
        if kind < 0.85:
            return E.cast(self.gen(rng.choice(ALL), depth - 1), d)
        if kind < 0.9:
            same_w = [s for s in ALL if s.itemsize == d.itemsize and s is not d]
            if same_w:
                return E.bitcast(self.gen(rng.choice(same_w), depth - 1), d)
        cond = self.gen(dt.bool_, depth - 1)
        return E.where(cond, self.gen(d, depth - 1), self.gen(d, depth - 1))


def _fuzz_kernel(rng: random.Random) -> tuple[Kernel, list[bytearray]]:
    size = rng.choice([1, 3, 17, 40])
    rsize = rng.choice([1, 2, 7, 19])
    nbuf = rng.choice([5, 23, 60])
    g = _Gen(rng, size, rsize, nbuf)
    d = rng.choice(ALL)
    if rng.random() < 0.4:
        rd = rng.choice(ALL)
        g.in_body = True
        body = g.gen(rd, rng.randint(1, 4))
        g.in_body = False
        red = E.reduce(rng.choice(_reducers(rd)), body, rsize)
        # epilogue: combine the reduction with fresh subtrees
        e = red
        for _ in range(rng.randint(0, 2)):
            if e.dtype is d or rng.random() < 0.5:
                other = g.gen(e.dtype, 2)
                ops = [o for o in _binary_ops(e.dtype) if o not in COMPARE]
                e = E.binary(rng.choice(ops), e, other)
            else:
                e = E.cast(e, d)
    else:
        e = g.gen(d, rng.randint(1, 5))
    arg_dtypes = [None] * len(g.slots)
    for dd, s in g.slots.items():
        arg_dtypes[s] = dd
    bufs = [pack(dd, [rng.choice(values(dd, rng, 5)) for _ in range(nbuf)]) for dd in arg_dtypes]
    return Kernel(e, size, tuple(arg_dtypes)), bufs  # type: ignore[arg-type]


def test_fuzz(chunks: str) -> None:
    rng = random.Random(20261130 if chunks == "default" else 77)
    ran = 0
    for _ in range(400):
        try:
            kernel, bufs = _fuzz_kernel(rng)
        except TypeError:
            continue  # an (op, dtype) the IR rejects at build time
        check(kernel, bufs, "fuzz")
        ran += 1
    assert ran > 250


# ---- the backend ---------------------------------------------------------------------------------
def test_cpu_backend_uses_numpy_and_falls_back() -> None:
    from webjax._src.runtime.cpu import CpuBackend

    k = Kernel(E.unary(Op.EXP, E.load(0, E.idx(4), dt.float32)), 4, (dt.float32,))
    fast, slow = CpuBackend(), CpuBackend(use_numpy=False)
    assert fast.prepare(k).vectorized and not slow.prepare(k).vectorized
    outs = []
    for be in (fast, slow):
        h = be.malloc(16)
        be.write(h, struct.pack("<4f", 0.0, 1.0, -2.0, 88.0))
        o = be.malloc(16)
        be.dispatch(be.prepare(k), [h], o)
        outs.append(be.read(o, 16))
    assert outs[0] == outs[1]


def test_speed_elementwise() -> None:
    """1M-element fused chain: well under a second (pyref takes tens of seconds)."""
    n = 1 << 20
    x = E.load(0, E.idx(n), dt.float32)
    e = E.binary(Op.ADD, E.unary(Op.TANH, E.binary(Op.MUL, x, x)), E.unary(Op.EXP, x))
    e = E.binary(Op.MAX, e, E.const(0.5, dt.float32))
    k = Kernel(e, n, (dt.float32,))
    buf = bytearray(np.random.default_rng(0).standard_normal(n).astype(np.float32).tobytes())
    fn = numpy_ref.compile_kernel(k)
    out = bytearray(4 * n)
    t = time.perf_counter()
    fn(out, [buf])
    assert time.perf_counter() - t < 5.0


def test_rounding_safety_net(monkeypatch: Any) -> None:
    """A NumPy function off by up to 2**22 float64 ulps still gives exact narrow results: the
    elements whose rounding is in doubt are recomputed by the scalar reference."""
    monkeypatch.setitem(numpy_ref._NP_FNS, Op.EXP, lambda x: np.exp(x) * (1 + 2.0**-30))
    monkeypatch.setattr(numpy_ref, "_ULPS", 2.0**24)
    rng = random.Random(9)
    d = dt.float32
    vals = [scalar.normalize(d, rng.uniform(-20, 20)) for _ in range(4000)]
    x = E.load(0, E.idx(len(vals)), d)
    k = Kernel(E.unary(Op.EXP, x), len(vals), (d,))
    check(k, [pack(d, vals)], "perturbed exp")
    monkeypatch.setattr(numpy_ref, "_ULPS", 0.0)  # without the net the perturbation shows
    with pytest.raises(AssertionError):
        check(k, [pack(d, vals)], "perturbed exp, no net")
