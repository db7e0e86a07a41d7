"""The GPU backends (webgpu: WGSL on wgpu-py, lavapipe here; webgl: GLSL ES on OpenGL ES through
EGL, llvmpipe here) against the IR reference semantics.

Kernels are built from ir.exp builders and run on each GPU backend (a module-scoped fixture sets
`GPU`); expected values come from the cpu backend (codegen.pyref) or, where noted, from
`ir.scalar.apply` evaluated node by node. Exact ops compare bit for bit (any NaN equals any
NaN); transcendentals within a few ulp. Tests of one backend's schedules say so and skip on the
other. test_webgpu_f16 and test_webgpu_schedules import the helpers with `GPU` = webgpu.
"""

from __future__ import annotations

import math
import random
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from webjax._src import dtypes as dt
from webjax._src.codegen.wgsl import kernel as wgsl
from webjax._src.ir import exp as E
from webjax._src.ir import scalar
from webjax._src.ir.kernel import Kernel, make_kernel
from webjax._src.ir.ops import Op
from webjax._src.runtime.backend import BackendUnavailable
from webjax._src.runtime.cpu import CpuBackend
from webjax._src.runtime.webgl import WebGLBackend
from webjax._src.runtime.webgpu import WebGPUBackend

_BACKENDS: dict[str, Any] = {}
_MISSING: dict[str, str] = {}
for _name, _cls in (("webgpu", WebGPUBackend), ("webgl", WebGLBackend)):
    try:
        _BACKENDS[_name] = _cls()
    except BackendUnavailable as e:  # pragma: no cover - depends on the host
        _MISSING[_name] = f"{_name} backend unavailable: {e}"

GPU: Any = _BACKENDS.get("webgpu")  # the importers' backend
SKIP = _MISSING.get("webgpu", "")
_TINY = 2.0**-126  # float32's smallest normal


def _probe_flushes_subnormals() -> bool:
    """GPUs may flush float32 subnormals to zero (NVIDIA's Vulkan, llvmpipe's GL, SwiftShader)."""
    if GPU is None:
        return False
    h = GPU.malloc(4)
    GPU.write(h, struct.pack("<f", 1e-40))
    src = type("H", (), {"dtype": dt.float32})()
    kernel, _ = make_kernel(
        E.binary(Op.MUL, E.load(src, E.idx(1), dt.float32), E.const(3.0, dt.float32)), 1
    )
    out = GPU.malloc(4)
    GPU.dispatch(GPU.prepare(kernel), [h], out)
    flushed = struct.unpack("<f", GPU.read(out, 4))[0] == 0.0
    GPU.free(h)
    GPU.free(out)
    return flushed


FTZ = _probe_flushes_subnormals()


@pytest.fixture(scope="module", params=["webgpu", "webgl"], autouse=True)
def gpu(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Every test of this module on each GPU backend (`GPU` and `FTZ` follow)."""
    global GPU, FTZ
    if request.param in _MISSING:
        pytest.skip(_MISSING[request.param])
    saved = GPU, FTZ
    GPU = _BACKENDS[request.param]
    FTZ = _probe_flushes_subnormals()
    try:
        yield GPU
    finally:
        GPU, FTZ = saved


def _flush(d: dt.DType, v: Any) -> Any:
    """Under FTZ, float32/bfloat16 subnormal results may read as zero (of the same sign)."""
    if FTZ and d.kind == "f" and d is not dt.float16 and v == v and 0 < abs(v) < _TINY:
        return math.copysign(0.0, v)
    return v


def _usable(d: dt.DType, vals: list[Any]) -> list[Any]:
    """Test inputs: without float32-range subnormals when the device flushes them."""
    if not FTZ or d.kind != "f" or d is dt.float16:
        return vals
    return [v for v in vals if not (0 < abs(scalar.normalize(d, v)) < _TINY)]


FMT = {"bool": "?", "int8": "b", "int16": "h", "int32": "i", "uint8": "B", "uint16": "H",
       "uint32": "I", "float16": "e", "bfloat16": "H", "float32": "f"}  # fmt: skip
INTS = [dt.int8, dt.int16, dt.int32, dt.uint8, dt.uint16, dt.uint32]
FLOATS = [dt.float32, dt.float16, dt.bfloat16]
ALL = [dt.bool_, *INTS, *FLOATS]

F32_VALUES = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 7.0, -7.0, 0.1, 123.456, 1e-3,
    1e30, -1e30, 3.4e38, -3.4e38, 65504.0, 65520.0, 2.0**31, -(2.0**31), 2.0**32, 1e-8,
    300.0, -129.0, 1.17549435e-38, math.inf, -math.inf, math.nan,
]  # fmt: skip


def values(d: dt.DType) -> list[Any]:
    if d.kind == "b":
        return [False, True]
    if d.kind == "f":
        return _usable(d, [scalar.normalize(d, v) for v in F32_VALUES + [1e-40, -3e-39]])
    lo, hi = dt.iinfo_bounds(d)
    vs = [0, 1, 2, 3, 5, 7, 8, 15, 16, 31, 32, 33, 100, 127, 128, 255, 256, 12345, 65535]
    vs += [lo, hi, lo + 1, hi - 1] + [-v for v in vs]
    return sorted({v for v in vs if lo <= v <= hi})


# ---- buffers ------------------------------------------------------------------------------------
class Buf:
    """A host-side array: a dtype and Python values (what make_kernel numbers into slots)."""

    def __init__(self, d: dt.DType, vals: list[Any]) -> None:
        self.dtype = d
        self.vals = [scalar.normalize(d, v) for v in vals]


def pack(d: dt.DType, vals: list[Any]) -> bytes:
    if d is dt.bfloat16:
        return struct.pack(f"<{len(vals)}H", *(_bf16_bits(v) for v in vals))
    return struct.pack(f"<{len(vals)}{FMT[d.name]}", *vals)


def unpack(d: dt.DType, raw: bytes) -> list[Any]:
    n = len(raw) // d.itemsize
    vals = list(struct.unpack(f"<{n}{FMT[d.name]}", raw))
    if d is dt.bfloat16:
        return [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in vals]
    return vals


def _bf16_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16


def run_on(backend: Any, kernel: Kernel, bufs: list[Buf]) -> list[Any]:
    handles = []
    for b in bufs:
        h = backend.malloc(len(b.vals) * b.dtype.itemsize)
        backend.write(h, pack(b.dtype, b.vals))
        handles.append(h)
    out_d = kernel.out_dtype
    out = backend.malloc(kernel.size * out_d.itemsize)
    backend.dispatch(backend.prepare(kernel), handles, out)
    got = unpack(out_d, backend.read(out, kernel.size * out_d.itemsize))
    for h in [*handles, out]:
        backend.free(h)
    return got


# Reference: scalar.apply node by node (independent of codegen.pyref).
def ref_eval(kernel: Kernel, bufs: list[Buf]) -> list[Any]:
    order = kernel.exp.toposort()

    def ev(node: E.Exp, i: int, r: int, memo: dict[int, Any]) -> Any:
        v = memo.get(id(node))
        if v is not None or id(node) in memo:
            return v
        op = node.op
        if op is Op.CONST:
            v = node.arg
        elif op is Op.IDX:
            v = i
        elif op is Op.RIDX:
            v = r
        elif op is Op.LOAD:
            k = ev(node.src[0], i, r, memo)
            vals = bufs[node.arg].vals
            v = vals[k] if 0 <= k < len(vals) else scalar.normalize(node.dtype, 0)
        elif op is Op.REDUCE:
            comb, n = node.arg
            v = scalar.identity(comb, node.dtype)
            for rr in range(n):
                inner: dict[int, Any] = {}
                v = scalar.apply(comb, node.dtype, (v, ev(node.src[0], i, rr, inner)))
        else:
            args = tuple(ev(s, i, r, memo) for s in node.src)
            sd = node.src[1].dtype if op is Op.WHERE else node.src[0].dtype
            v = scalar.apply(op, node.dtype, args, sd)
        memo[id(node)] = v
        return v

    del order
    return [ev(kernel.exp, i, 0, {}) for i in range(kernel.size)]


def _key(d: dt.DType, v: Any) -> Any:
    """Bit-exact identity for comparisons (all NaNs alike)."""
    if d.kind == "f":
        if v != v:
            return "nan"
        return struct.pack("<d", v)
    return v


def check(exp: E.Exp, size: int, oracle: str = "ref", zero_sign: bool = True) -> list[Any]:
    kernel, bufs = make_kernel(exp, size)
    kernel.check()
    got = run_on(GPU, kernel, bufs)
    if oracle == "cpu":
        want = run_on(CpuBackend(), kernel, bufs)
    else:
        want = ref_eval(kernel, bufs)
    d = kernel.out_dtype

    def key(v: Any) -> Any:
        v = _flush(d, v)
        return _key(d, v) if zero_sign or v != 0 else 0

    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want, strict=True)) if key(g) != key(w)]
    assert not bad, f"{len(bad)}/{size} differ (i, got, want): {bad[:8]}\n{E.render(exp)}"
    return got


def pairs(d: dt.DType, sd: dt.DType | None = None) -> tuple[E.Exp, E.Exp, int]:
    """Loads a[i // n], b[i % n]: every pair of test values (broadcast-style index math)."""
    vs = values(d)
    n = len(vs)
    a, b = Buf(d, vs), Buf(d, list(reversed(vs)) if False else vs)
    i = E.idx(n * n)
    return E.load(a, E.idiv(i, n), d), E.load(b, E.mod(i, n), d), n * n


# ---- exact elementwise ops ----------------------------------------------------------------------
INT_BINARY = [Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR,
              Op.SHL, Op.SHR, Op.SHRL, Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE]  # fmt: skip
FLOAT_BINARY = [Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.MIN, Op.CMPLT, Op.CMPLE,
                Op.CMPEQ, Op.CMPNE]  # fmt: skip
BOOL_BINARY = [Op.AND, Op.OR, Op.XOR, Op.MAX, Op.MIN, Op.ADD, Op.MUL, Op.CMPLT, Op.CMPLE,
               Op.CMPEQ, Op.CMPNE]  # fmt: skip


@pytest.mark.parametrize("d", INTS, ids=str)
@pytest.mark.parametrize("op", INT_BINARY, ids=lambda o: o.value)
def test_int_binary(op: Op, d: dt.DType) -> None:
    a, b, n = pairs(d)
    check(E.binary(op, a, b), n)


@pytest.mark.parametrize("d", FLOATS, ids=str)
@pytest.mark.parametrize("op", FLOAT_BINARY, ids=lambda o: o.value)
def test_float_binary(op: Op, d: dt.DType) -> None:
    a, b, n = pairs(d)
    check(E.binary(op, a, b), n)


@pytest.mark.parametrize("op", BOOL_BINARY, ids=lambda o: o.value)
def test_bool_binary(op: Op) -> None:
    a, b, n = pairs(dt.bool_)
    check(E.binary(op, a, b), n)


def _unary_input(d: dt.DType) -> tuple[E.Exp, int]:
    vs = values(d)
    return E.load(Buf(d, vs), E.idx(len(vs)), d), len(vs)


@pytest.mark.parametrize("d", INTS, ids=str)
@pytest.mark.parametrize("op", [Op.NEG, Op.NOT, Op.ABS, Op.SIGN, Op.POPCNT, Op.CLZ], ids=str)
def test_int_unary(op: Op, d: dt.DType) -> None:
    x, n = _unary_input(d)
    check(E.unary(op, x), n)


@pytest.mark.parametrize("d", FLOATS, ids=str)
@pytest.mark.parametrize(
    "op", [Op.NEG, Op.ABS, Op.SIGN, Op.FLOOR, Op.CEIL, Op.ROUND, Op.ISFINITE], ids=str
)
def test_float_unary_exact(op: Op, d: dt.DType) -> None:
    x, n = _unary_input(d)
    # scalar.py's floor/ceil return +0.0 for -0.0 and (-1, 0); IEEE (and JAX) keep the sign.
    check(E.unary(op, x), n, zero_sign=op not in (Op.FLOOR, Op.CEIL))


def test_floor_ceil_keep_the_sign_of_zero() -> None:
    vs = [-0.0, -0.5, 0.5, 0.0]
    x = E.load(Buf(dt.float32, vs), E.idx(4), dt.float32)
    k1, b1 = make_kernel(E.unary(Op.FLOOR, x), 4)
    k2, b2 = make_kernel(E.unary(Op.CEIL, x), 4)
    signs = [[math.copysign(1, v) for v in run_on(GPU, k, b)] for k, b in ((k1, b1), (k2, b2))]
    assert signs == [[-1, -1, 1, 1], [-1, -1, 1, 1]]


def test_bool_not() -> None:
    x, n = _unary_input(dt.bool_)
    check(E.unary(Op.NOT, x), n)


@pytest.mark.parametrize("src", ALL, ids=str)
@pytest.mark.parametrize("dst", ALL, ids=str)
def test_cast(src: dt.DType, dst: dt.DType) -> None:
    x, n = _unary_input(src)
    check(E.cast(x, dst), n)


def test_cast_float_to_int_rounding() -> None:
    vs = [0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 126.9, 127.5, 128.0, -128.9, -129.0, 2147483520.0,
          -2147483648.0, 4294967040.0, 1e10, -1e10, math.nan, -math.nan]  # fmt: skip
    x = E.load(Buf(dt.float32, vs), E.idx(len(vs)), dt.float32)
    for d in INTS + [dt.bool_]:
        check(E.cast(x, d), len(vs))


SAME_WIDTH = [(a, b) for a in ALL for b in ALL if a is not b and a.itemsize == b.itemsize]


@pytest.mark.parametrize("src,dst", SAME_WIDTH, ids=lambda p: str(p))
def test_bitcast(src: dt.DType, dst: dt.DType) -> None:
    if src is dt.bool_ or dst is dt.bool_:
        pytest.skip("bitcast to/from bool is not a JAX operation")
    x, n = _unary_input(src)
    check(E.bitcast(x, dst), n)


@pytest.mark.parametrize("d", ALL, ids=str)
def test_where_and_masked_out_of_range_loads(d: dt.DType) -> None:
    vs = values(d)
    n = len(vs)
    i = E.idx(2 * n)
    inside = E.binary(Op.CMPLT, i, E.i32(n))
    # i >= n reads past the end: the value is masked, the read must not fault
    x = E.load(Buf(d, vs), i, d)
    y = E.load(Buf(d, vs[::-1]), E.add(i, -n), d)
    check(E.where(inside, x, y), 2 * n)
    # negative and huge indices
    z = E.load(Buf(d, vs), E.binary(Op.SUB, i, E.i32(1_000_000)), d)
    check(E.where(E.binary(Op.CMPLT, i, E.i32(1)), z, x), 2 * n)


# ---- index arithmetic, sizes, many inputs -------------------------------------------------------
def test_transpose_broadcast_index_math() -> None:
    # out[r, c] = a[c, r] * 10 + b[c] over a (5, 7) output, a is (7, 5) row-major
    rows, cols = 5, 7
    a = Buf(dt.int32, list(range(rows * cols)))
    b = Buf(dt.int32, [100 * j for j in range(cols)])
    i = E.idx(rows * cols)
    r, c = E.idiv(i, cols), E.mod(i, cols)
    x = E.load(a, E.add(E.mul(c, rows), r), dt.int32)
    got = check(E.add(E.mul(x, E.i32(10)), E.load(b, c, dt.int32)), rows * cols)
    assert got[:3] == [0, 100 + 50, 200 + 100]


@pytest.mark.parametrize("d", ALL, ids=str)
@pytest.mark.parametrize("size", [0, 1, 2, 3, 5, 63, 64, 65, 1001])
def test_sizes(d: dt.DType, size: int) -> None:
    vs = values(d)
    src = Buf(d, [vs[k % len(vs)] for k in range(max(size, 1))])
    x = E.load(src, E.idx(size), d)
    check(
        E.where(E.binary(Op.CMPEQ, E.mod(E.idx(size), E.i32(3)), E.i32(0)), x, x) if size else x,
        size,
    )


def test_packed_output_keeps_bytes_past_the_end() -> None:
    if GPU.platform == "webgl":
        pytest.skip(
            "webgl draws whole words (a fragment cannot read the texture it writes): a packed "
            "output's last word is zero past its last element; outputs are allocated at their "
            "size, so no data lives there"
        )
    h = GPU.malloc(8)
    GPU.write(h, bytes(range(1, 9)))
    kernel, _ = make_kernel(E.cast(E.idx(5), dt.uint8), 5)
    GPU.dispatch(GPU.prepare(kernel), [], h)
    assert GPU.read(h, 8) == bytes([0, 1, 2, 3, 4, 6, 7, 8])
    GPU.free(h)


def test_many_inputs() -> None:
    n = min(GPU.max_args, 20)
    size = 50
    bufs = [Buf(dt.float32, [k * 0.25 + j for k in range(size)]) for j in range(n)]
    acc = E.load(bufs[0], E.idx(size), dt.float32)
    for b in bufs[1:]:
        acc = E.binary(Op.ADD, acc, E.load(b, E.idx(size), dt.float32))
    check(acc, size)


def test_large_2d_grid() -> None:
    size = 65535 * 64 + 1001  # more workgroups than one dispatch dimension allows
    kernel, _ = make_kernel(E.binary(Op.MUL, E.idx(size), E.i32(3)), size)
    if GPU.platform == "webgpu":
        prog = wgsl.render(kernel)
        assert prog.workgroups[1] > 1
        # four elements per invocation (4 | size) need four times as many for a second dimension
        big = 65535 * 64 * 4 + 1000
        kbig = make_kernel(E.binary(Op.MUL, E.idx(big), E.i32(3)), big)[0]
        assert wgsl.render(kbig).workgroups[1] > 1
    out = GPU.malloc(size * 4)
    GPU.dispatch(GPU.prepare(kernel), [], out)
    got = struct.unpack(f"<{size}i", GPU.read(out, size * 4))
    assert got[:3] == (0, 3, 6) and got[-1] == (size - 1) * 3
    assert all(got[k] == 3 * k for k in range(0, size, 9973))
    GPU.free(out)


# ---- reductions ---------------------------------------------------------------------------------
REDUCERS = [Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR]


@pytest.mark.parametrize("d", ALL, ids=str)
@pytest.mark.parametrize("comb", REDUCERS, ids=lambda o: o.value)
@pytest.mark.parametrize("rsize", [0, 1, 7, 300])
def test_reduce(comb: Op, d: dt.DType, rsize: int) -> None:
    if d.kind == "f" and comb in (Op.AND, Op.OR, Op.XOR):
        pytest.skip("bitwise reduction of floats")
    vs = values(d)
    if d.kind == "f":
        vs = [v for v in vs if math.isfinite(v) and abs(v) < 1e4] + [math.nan]
    rows = 4
    src = Buf(d, [vs[(k * 7) % len(vs)] for k in range(rows * max(rsize, 1))])
    i, r = E.idx(rows), E.ridx(rsize)
    body = E.load(src, E.add(E.mul(i, rsize), r), d)
    check(E.reduce(comb, body, rsize), rows)


@pytest.mark.parametrize("comb", [Op.ADD, Op.MUL, Op.MAX, Op.MIN], ids=lambda o: o.value)
@pytest.mark.parametrize("rows,rsize", [(3, 5000), (1, 70000), (2, 300_000), (70000, 3)])
def test_grouped_float_reduce(comb: Op, rows: int, rsize: int) -> None:
    # Long reductions run as workgroup trees (webgpu) or split passes (webgl): float sums and
    # products are within rounding of the sequential reference; max/min stay exact.
    rnd = random.Random(rows * rsize)
    if comb is Op.MUL:
        vals = [
            rnd.choice([1.0, -1.0]) * (2.0 if k % 4999 == 0 else 1.0) for k in range(rows * rsize)
        ]
    else:
        vals = [rnd.uniform(-100, 100) for _ in range(rows * rsize)]
    src = Buf(dt.float32, vals)
    i, r = E.idx(rows), E.ridx(rsize)
    kernel, bufs = make_kernel(
        E.reduce(comb, E.load(src, E.add(E.mul(i, rsize), r), dt.float32), rsize), rows
    )
    got = run_on(GPU, kernel, bufs)
    for k in range(rows):
        row = src.vals[k * rsize : (k + 1) * rsize]
        if comb is Op.ADD:
            assert abs(got[k] - math.fsum(row)) <= 1e-6 * sum(map(abs, row)) + 1e-30
        elif comb is Op.MUL:
            assert got[k] == math.prod(row)  # powers of two: exact in any order
        else:
            assert got[k] == (max(row) if comb is Op.MAX else min(row))


def test_grouped_int_reduce_with_epilogue_packed_output() -> None:
    rows, rsize = 7, 1000
    src = Buf(dt.int32, [(k * 31) % 17 - 8 for k in range(rows * rsize)])
    i, r = E.idx(rows), E.ridx(rsize)
    red = E.reduce(Op.ADD, E.load(src, E.add(E.mul(i, rsize), r), dt.int32), rsize)
    check(E.binary(Op.CMPLT, red, E.i32(-20)), rows)
    check(E.cast(E.binary(Op.XOR, red, E.i32(0x155)), dt.int16), rows)


def test_two_pass_reduce_with_epilogue_and_packed_output() -> None:
    rows, rsize = 3, 50_000  # few outputs, long rows: partials over many workgroups, then finish
    src = Buf(dt.int32, [(k * 7919) % 201 - 100 for k in range(rows * rsize)])
    bias = Buf(dt.int32, [5, -7, 300])
    i, r = E.idx(rows), E.ridx(rsize)
    red = E.reduce(Op.ADD, E.load(src, E.add(E.mul(i, rsize), r), dt.int32), rsize)
    exp = E.cast(E.binary(Op.ADD, red, E.load(bias, i, dt.int32)), dt.int8)
    kernel, _ = make_kernel(exp, rows)
    assert len(GPU.prepare(kernel).program.passes) == 2
    check(exp, rows)
    check(E.binary(Op.CMPLT, red, E.i32(0)), rows)  # bool output


def test_reduce_with_epilogue_and_hoisted_loads() -> None:
    # out[i] = max_r(a[i, r] * s[i]) + b[i]: s[i] is loop-invariant, b[i] after the loop
    rows, rsize = 9, 33
    a = Buf(dt.float32, [((k * 37) % 101 - 50) * 0.5 for k in range(rows * rsize)])
    s = Buf(dt.float32, [1.0 + k for k in range(rows)])
    b = Buf(dt.float32, [-3.0 * k for k in range(rows)])
    i, r = E.idx(rows), E.ridx(rsize)
    body = E.binary(
        Op.MUL, E.load(a, E.add(E.mul(i, rsize), r), dt.float32), E.load(s, i, dt.float32)
    )
    red = E.reduce(Op.MAX, body, rsize)
    check(E.binary(Op.ADD, red, E.load(b, i, dt.float32)), rows)


def test_long_reduce_sum() -> None:
    rsize = 100_000
    a = Buf(dt.int32, [(k * 7919) % 1000 - 500 for k in range(rsize)])
    got = check(E.reduce(Op.ADD, E.load(a, E.ridx(rsize), dt.int32), rsize), 1)
    assert got == [sum(a.vals)]


def test_reduce_matches_cpu_backend() -> None:
    a = Buf(dt.float32, [k * 0.5 for k in range(12)])
    i, r = E.idx(3), E.ridx(4)
    check(E.reduce(Op.ADD, E.load(a, E.add(E.mul(i, 4), r), dt.float32), 4), 3, oracle="cpu")


def test_elementwise_matches_cpu_backend() -> None:
    a, b, n = pairs(dt.int32)
    check(E.binary(Op.DIV, a, b), n, oracle="cpu")


# ---- errors, caching, memory ---------------------------------------------------------------------
def test_float64_is_refused_with_a_clear_error() -> None:
    assert not GPU.supports_dtype(dt.float64)
    kernel, _ = make_kernel(E.cast(E.idx(3), dt.float64), 3)
    with pytest.raises(NotImplementedError, match=rf"float64.*{GPU.platform}"):
        GPU.prepare(kernel)


def test_unsupported_op_names_op_and_backend() -> None:
    x = E.load(Buf(dt.bool_, [True]), E.idx(1), dt.bool_)
    kernel, _ = make_kernel(E.binary(Op.SUB, x, x), 1)
    with pytest.raises(NotImplementedError, match=rf"'sub' on bool.*{GPU.platform}"):
        GPU.prepare(kernel)


def test_pipeline_cache_and_source() -> None:
    kernel, _ = make_kernel(E.add(E.idx(10), 1), 10)
    assert GPU.prepare(kernel) is GPU.prepare(kernel)
    header = {"webgpu": "@compute @workgroup_size(64)", "webgl": "#version 300 es"}
    assert header[GPU.platform] in GPU.prepare(kernel).source


def test_in_place_dispatch_and_batched_reads() -> None:
    n = 100
    h = GPU.malloc(n * 4)
    GPU.write(h, struct.pack(f"<{n}i", *range(n)))
    src = type("H", (), {"dtype": dt.int32})()
    kernel, _ = make_kernel(E.add(E.load(src, E.idx(n), dt.int32), 1), n)
    exe = GPU.prepare(kernel)
    for _ in range(200):  # crosses the flush_every batching boundary several times
        GPU.dispatch(exe, [h], h)
    assert struct.unpack(f"<{n}i", GPU.read(h, n * 4)) == tuple(k + 200 for k in range(n))
    GPU.free(h)


def test_free_while_queued_then_reuse() -> None:
    n = 64
    a = GPU.malloc(n * 4)
    GPU.write(a, struct.pack(f"<{n}f", *([2.0] * n)))
    src = type("H", (), {"dtype": dt.float32})()
    kernel, _ = make_kernel(
        E.binary(Op.MUL, E.load(src, E.idx(n), dt.float32), E.const(3.0, dt.float32)), n
    )
    out = GPU.malloc(n * 4)
    GPU.dispatch(GPU.prepare(kernel), [a], out)
    GPU.free(a)  # still used by queued work: must not be recycled before it runs
    b = GPU.malloc(n * 4)
    GPU.write(b, struct.pack(f"<{n}f", *([5.0] * n)))
    assert struct.unpack(f"<{n}f", GPU.read(out, n * 4)) == (6.0,) * n
    GPU.synchronize()
    GPU.free(b)
    GPU.free(out)


# ---- transcendentals (within a few ulp of the reference) ----------------------------------------
def _ordered(d: dt.DType, v: float) -> int:
    if d is dt.float16:
        b = struct.unpack("<H", struct.pack("<e", v))[0]
        return b if b < 0x8000 else 0x8000 - b
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    if d is dt.bfloat16:
        b >>= 16
        return b if b < 0x8000 else 0x8000 - b
    return b if b < 0x80000000 else 0x80000000 - b


def ulp_diff(d: dt.DType, got: float, want: float) -> float:
    got, want = _flush(d, got), _flush(d, want)
    if got != got or want != want:
        return 0 if (got != got) and (want != want) else math.inf
    if math.isinf(got) or math.isinf(want):
        return 0 if got == want else math.inf
    return abs(_ordered(d, got) - _ordered(d, want))


def _sample(lo: float, hi: float, n: int = 1500, neg: bool = True, seed: int = 0) -> list[float]:
    """Log-uniform magnitudes 10^lo..10^hi, both signs, plus specials and [-10, 10]."""
    rnd = random.Random(seed)
    vs = [10 ** rnd.uniform(lo, hi) * (rnd.choice([1, -1]) if neg else 1) for _ in range(n)]
    vs += [rnd.uniform(-10, 10) for _ in range(300)]
    return vs + [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, 2.0, 1e-40, -1e-40]


_TRIG = _sample(-8, 38) + [k * math.pi / 4 for k in range(-300, 300)] + [1e22, 8.5e37, 3.4e38]
UNARY_TRANSCENDENTAL = {  # op: (inputs, max ulp error in float32)
    Op.EXP: (_sample(-8, 2.1), 1), Op.EXP2: (_sample(-8, 2.3), 1), Op.EXPM1: (_sample(-9, 2.1), 2),
    Op.LOG: (_sample(-44, 38), 1), Op.LOG1P: (_sample(-9, 38), 2), Op.SIN: (_TRIG, 2),
    Op.COS: (_TRIG, 2), Op.TAN: (_TRIG, 4), Op.ATAN: (_sample(-9, 38), 2),
    Op.ASIN: (_sample(-9, 0.1), 2), Op.ACOS: (_sample(-9, 0.1), 2), Op.SINH: (_sample(-9, 2.1), 3),
    Op.COSH: (_sample(-9, 2.1), 3), Op.TANH: (_sample(-9, 1.5), 2), Op.ASINH: (_sample(-9, 38), 2),
    Op.ACOSH: (_sample(-1, 38), 2), Op.ATANH: (_sample(-9, 0.05), 2),
    Op.LOGISTIC: (_sample(-9, 2.1), 2), Op.SQRT: (_sample(-44, 38), 1),
    Op.RSQRT: (_sample(-44, 38), 1), Op.CBRT: (_sample(-44, 38), 1),
    Op.ERF: (_sample(-9, 1.1), 2), Op.ERFC: (_sample(-9, 1.1), 3),
    Op.ERF_INV: ([v for v in _sample(-9, 0) if abs(v) <= 1] + [1 - 2**-24, 0.999, -0.5], 3),
    # scalar.py's lgamma fails on -inf (math.floor(-inf)); leave it out
    Op.LGAMMA: ([v for v in _sample(-9, 38) if v != -math.inf] + [1.0, 2.0, 1.0001, 2.5], 4),
    Op.DIGAMMA: (_sample(-9, 10) + [1.0, 2.0, -0.5], 4),
}  # fmt: skip
# Near their zeros lgamma (x < 0) and digamma lose relative accuracy: absolute error there.
ABS_TOL = {Op.LGAMMA: 1e-6, Op.DIGAMMA: 1e-6}


def _check_close(op: Op, d: dt.DType, exp: E.Exp, size: int, tol: float, args: Any) -> None:
    kernel, bufs = make_kernel(exp, size)
    got, want = run_on(GPU, kernel, bufs), ref_eval(kernel, bufs)
    bad = []
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        err = ulp_diff(d, g, w)
        if err > tol and not (op in ABS_TOL and abs(g - w) <= ABS_TOL[op] * max(1.0, abs(w))):
            bad.append((args(k), g, w, err))
    assert not bad, f"{op.value}/{d}: {len(bad)} beyond {tol} ulp: {bad[:6]}"


@pytest.mark.parametrize("op", list(UNARY_TRANSCENDENTAL), ids=lambda o: o.value)
@pytest.mark.parametrize("d", FLOATS, ids=str)
def test_unary_transcendental(op: Op, d: dt.DType) -> None:
    vals, tol = UNARY_TRANSCENDENTAL[op]
    # f16/bf16 compute in f32 and round once more: within one ulp of their format
    tol = tol if d is dt.float32 else 1
    vals = _usable(d, vals)
    if op is Op.LGAMMA:  # (-inf after rounding to the format)
        vals = [v for v in vals if scalar.normalize(d, v) != -math.inf]
    src = Buf(d, vals)
    _check_close(
        op, d, E.unary(op, E.load(src, E.idx(len(vals)), d)), len(vals), tol, lambda k: src.vals[k]
    )


@pytest.mark.parametrize("op", [Op.POW, Op.ATAN2], ids=lambda o: o.value)
@pytest.mark.parametrize("d", FLOATS, ids=str)
def test_binary_transcendental(op: Op, d: dt.DType) -> None:
    rnd = random.Random(7)
    base = _sample(-3, 3, n=400, seed=1)
    expo = _sample(-2, 1.5, n=400, seed=2) + [0.5, -0.5, 3.0, -3.0, 1 / 3, 1e-5]
    pairs_ = [(a, b) for a in base[::9] for b in expo[::7]] + [
        (rnd.uniform(-50, 50), rnd.uniform(-50, 50)) for _ in range(500)
    ]
    ok = set(_usable(d, [v for p in pairs_ for v in p]))
    pairs_ = [(x, y) for x, y in pairs_ if x in ok and y in ok]
    a, b = Buf(d, [p[0] for p in pairs_]), Buf(d, [p[1] for p in pairs_])
    n = len(pairs_)
    exp = E.binary(op, E.load(a, E.idx(n), d), E.load(b, E.idx(n), d))
    _check_close(op, d, exp, n, 2 if d is dt.float32 else 1, lambda k: (a.vals[k], b.vals[k]))


@pytest.mark.parametrize("d", FLOATS, ids=str)
def test_nextafter(d: dt.DType) -> None:
    # scalar.py steps in float64 and rounds back (a no-op in float32); JAX steps in the format.
    tiny = {"float32": 1e-45, "float16": 2**-24, "bfloat16": 9.2e-41}[d.name]
    vs = [0.0, -0.0, 1.0, -1.0, tiny, -tiny, 1e4, math.inf, -math.inf, math.nan, 0.1]
    if FTZ and d is not dt.float16:
        pytest.skip("nextafter reaches subnormals, which this device flushes")
    pairs_ = [(x, y) for x in vs for y in vs]
    a = Buf(d, [p[0] for p in pairs_])
    b = Buf(d, [p[1] for p in pairs_])
    n = len(pairs_)
    kernel, bufs = make_kernel(
        E.binary(Op.NEXTAFTER, E.load(a, E.idx(n), d), E.load(b, E.idx(n), d)), n
    )
    got = run_on(GPU, kernel, bufs)

    def step(x: float, y: float) -> float:
        if x != x or y != y:
            return math.nan
        if x == y:
            return y
        if x == 0:
            return math.copysign(unpack(d, (1).to_bytes(d.itemsize, "little"))[0], y)
        raw = int.from_bytes(pack(d, [x]), "little")
        raw += 1 if (x < y) == (x > 0) else -1
        return unpack(d, raw.to_bytes(d.itemsize, "little"))[0]

    want = [step(x, y) for x, y in zip(a.vals, b.vals, strict=True)]
    assert [_key(d, g) for g in got] == [_key(d, w) for w in want]


# ---- end to end through webjax.numpy -------------------------------------------------------------
def _on(platform: str, fn: Any) -> Any:
    import webjax

    with webjax.default_device(webjax.devices(platform)[0]):
        out = fn()
    return out.tolist() if hasattr(out, "tolist") else out


E2E = {
    "arange_reshape_mul_sum": lambda jnp: (jnp.arange(6).reshape(2, 3) * 2).sum(),
    "axis_sum_and_max": lambda jnp: (
        jnp.arange(24.0).reshape(2, 3, 4).sum(axis=1) + jnp.arange(8.0).reshape(2, 4).max()
    ),
    "where_compare": lambda jnp: jnp.where(jnp.arange(10) % 3 == 0, jnp.arange(10), -1),
    "float_chain": lambda jnp: jnp.exp(jnp.sin(jnp.linspace(-3.0, 3.0, 7)) * 0.5) - 1.0,
    "bool_and_int8": lambda jnp: (jnp.arange(9, dtype=jnp.int8) * 40 > 100).astype(jnp.int8) - 3,
    "transpose_broadcast": lambda jnp: jnp.arange(6.0).reshape(2, 3).T + jnp.arange(2.0),
    "long_sum": lambda jnp: jnp.ones(200_000, dtype=jnp.int32).sum(),
}


@pytest.mark.parametrize("name", list(E2E))
def test_end_to_end_matches_cpu(name: str) -> None:
    try:
        import webjax.numpy as jnp
        from webjax._src.runtime import webgpu  # noqa: F401  (registers the platform)
    except ImportError as e:  # pragma: no cover - the array layer is optional here
        pytest.skip(f"webjax.numpy not importable: {e}")
    fn = E2E[name]
    try:
        want = _on("cpu", lambda: fn(jnp))
    except AttributeError as e:  # the array API is still growing
        pytest.skip(f"not in webjax.numpy yet: {e}")
    got = _on("webgpu", lambda: fn(jnp))
    if name == "float_chain":
        assert got == pytest.approx(want, rel=1e-6, abs=1e-7)
    else:
        assert got == want
