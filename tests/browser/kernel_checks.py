"""Kernel-level checks shared by the GPU backends' browser tests (webgpu, webgl).

Python source run in the page: `SETUP` builds a few kernels and the cpu reference's bytes
(`expect`), `SWEEP` compares every binary op and cast of every dtype, bit for bit, between
`gpu` (the backend under test, made by the test) and `cpu`, and `TRANSCENDENTALS` gives the
worst distance in ulps from the reference per float32 function.
"""

# Builds a kernel mixing the slice's ops: casts, index math, compares, WHERE, a REDUCE with an
# epilogue, packed bool/int8 outputs; `expect_*` come from the cpu reference in the same page.
SETUP = """
import struct
from webjax._src import dtypes as dt
from webjax._src.ir import exp as E
from webjax._src.ir.kernel import make_kernel
from webjax._src.ir.ops import Op


class Buf:
    def __init__(self, d):
        self.dtype = d


A, B = Buf(dt.int32), Buf(dt.float32)
N, R = 10, 6
i, r = E.idx(N), E.ridx(R)
a = E.load(A, i, dt.int32)
row = E.reduce(Op.ADD, E.load(B, E.add(E.mul(E.mod(i, 3), R), r), dt.float32), R)
val = E.binary(Op.MUL, E.cast(E.binary(Op.SUB, a, E.i32(4)), dt.float32), row)
small = E.binary(Op.CMPLT, E.cast(a, dt.float32), E.const(3.5, dt.float32))
KERNELS = {
    "f32": make_kernel(E.where(small, val, E.unary(Op.NEG, val)), N)[0],
    "bool": make_kernel(small, N)[0],
    "i8": make_kernel(E.cast(E.binary(Op.DIV, a, E.i32(-3)), dt.int8), N)[0],
}
A_BYTES = struct.pack(f"<{N}i", *range(N))
B_BYTES = struct.pack(f"<{3 * R}f", *[0.25 * k - 1 for k in range(3 * R)])


def run(backend, name):
    k = KERNELS[name]
    ha, hb = backend.malloc(len(A_BYTES)), backend.malloc(len(B_BYTES))
    backend.write(ha, A_BYTES)
    backend.write(hb, B_BYTES)
    out = backend.malloc(N * k.out_dtype.itemsize)
    backend.dispatch(backend.prepare(k), [ha, hb][: k.nargs], out)
    return out, N * k.out_dtype.itemsize


from webjax._src.runtime.cpu import CpuBackend

cpu = CpuBackend()
expect = {name: cpu.read(*run(cpu, name)).hex() for name in KERNELS}
"""


SWEEP = """
import math, struct
from webjax._src.ir import scalar
FMT = {"bool": "?", "int8": "b", "int16": "h", "int32": "i", "uint8": "B", "uint16": "H",
       "uint32": "I", "float16": "e", "bfloat16": "H", "float32": "f"}

def vals(d):
    if d.kind == "b":
        return [False, True]
    if d.kind == "f":
        vs = [0.0, -0.0, 1.0, -1.5, 2.5, 0.1, 1e30, -3e38, 65504.0, 7.0, math.inf, -math.inf,
              math.nan, 1e-3, 300.0]
        return [scalar.normalize(d, v) for v in vs]
    lo, hi = dt.iinfo_bounds(d)
    return sorted({v for v in [0, 1, -1, 7, -7, 31, 32, 100, -128, 255, 65535, lo, hi, lo + 1]
                   if lo <= v <= hi})

def pack(d, vs):
    if d is dt.bfloat16:
        vs = [struct.unpack("<I", struct.pack("<f", v))[0] >> 16 for v in vs]
    return struct.pack(f"<{len(vs)}{FMT[d.name]}", *vs)

def run_both(exp, size, bufs):
    k, objs = make_kernel(exp, size)
    res = []
    for be in (gpu, cpu):
        hs = []
        for o in objs:
            h = be.malloc(len(bufs[id(o)]))
            be.write(h, bufs[id(o)])
            hs.append(h)
        out = be.malloc(size * k.out_dtype.itemsize)
        be.dispatch(be.prepare(k), hs, out)
        res.append(be.read(out, size * k.out_dtype.itemsize))
    return k.out_dtype, res

def same(d, g, w):
    if g == w:
        return True
    n = len(g) // d.itemsize
    f = FMT[d.name] if d is not dt.bfloat16 else "H"
    a, b = struct.unpack(f"<{n}{f}", g), struct.unpack(f"<{n}{f}", w)
    if d is dt.bfloat16:  # compare as NaN-equal floats
        a = [struct.unpack("<f", struct.pack("<I", x << 16))[0] for x in a]
        b = [struct.unpack("<f", struct.pack("<I", x << 16))[0] for x in b]
    if d.kind == "f" and d is not dt.float16:  # SwiftShader flushes float32 subnormals
        a = [math.copysign(0.0, x) if abs(x) < 2.0**-126 else x for x in a]
        b = [math.copysign(0.0, x) if abs(x) < 2.0**-126 else x for x in b]
    return all(x == y or (x != x and y != y) for x, y in zip(a, b))

bad = []
INTS = [dt.int8, dt.int16, dt.int32, dt.uint8, dt.uint16, dt.uint32]
FLOATS = [dt.float32, dt.float16, dt.bfloat16]
cases = [(op, d) for d in INTS for op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.MIN,
         Op.SHL, Op.SHR, Op.CMPLT, Op.CMPEQ)]
cases += [(op, d) for d in FLOATS for op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX,
          Op.MIN, Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE)]
cases += [(op, dt.bool_) for op in (Op.AND, Op.OR, Op.XOR, Op.CMPLT)]
for op, d in cases:
    vs = vals(d)
    n = len(vs)
    A, B = Buf(d), Buf(d)
    i = E.idx(n * n)
    exp = E.binary(op, E.load(A, E.idiv(i, n), d), E.load(B, E.mod(i, n), d))
    od, (g, w) = run_both(exp, n * n, {id(A): pack(d, vs), id(B): pack(d, vs)})
    if not same(od, g, w):
        bad.append(f"{op.value}/{d}")
ALL = [dt.bool_, *INTS, *FLOATS]
for s in ALL:
    for t in ALL:
        vs = vals(s)
        A = Buf(s)
        x = E.load(A, E.idx(len(vs)), s)
        od, (g, w) = run_both(E.cast(x, t), len(vs), {id(A): pack(s, vs)})
        if not same(od, g, w):
            bad.append(f"cast {s}->{t}")
bad
"""


TRANSCENDENTALS = """
import math, random, struct
rnd = random.Random(3)
xs = [rnd.uniform(-20, 20) for _ in range(300)] + [1e-3, 0.5, 1e5, 3e38, -7e22, 1.0]
def ordered(v):
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    return b if b < 0x80000000 else 0x80000000 - b
worst = {}
for op in (Op.EXP, Op.LOG, Op.SIN, Op.COS, Op.TANH, Op.ATAN, Op.ERF, Op.LOG1P):
    src = [abs(x) for x in xs] if op in (Op.LOG, Op.LOG1P) else xs
    A = Buf(dt.float32)
    k, _ = make_kernel(E.unary(op, E.load(A, E.idx(len(src)), dt.float32)), len(src))
    outs = []
    for be in (gpu, cpu):
        h = be.malloc(4 * len(src))
        be.write(h, struct.pack(f"<{len(src)}f", *src))
        o = be.malloc(4 * len(src))
        be.dispatch(be.prepare(k), [h], o)
        outs.append(struct.unpack(f"<{len(src)}f", be.read(o, 4 * len(src))))
    worst[op.value] = max(
        0 if (g == w or (g != g and w != w)) else
        (abs(ordered(g) - ordered(w)) if math.isfinite(g) and math.isfinite(w) else 10**9)
        for g, w in zip(*outs))
worst
"""
