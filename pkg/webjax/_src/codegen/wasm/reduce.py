"""Fast paths for REDUCE kernels: SIMD reductions over contiguous data and register-tiled matmul.

Both are planned from the kernel IR by index analysis and guarded at run time, so the generic
scalar code (wasm.py) stays the fallback:

* **Vector reduction** (`RPlan`): a REDUCE whose body reads 4-byte data at indices affine in
  RIDX with unit stride (`sum(x, -1)`, row-wise dots, `x @ w.T`), computed by SIMD lane ops
  (wasm_simd's native set). Four lanes of r per vector, several independent accumulators, a
  horizontal combine at the end, a scalar tail. A float sum's order is then not r order (JAX's
  own order differs too), so the scalar loop sums float32 in the same lane order
  (`lane_unroll`): fused or not, SIMD or not, a sum is bit-identical on one device. Integer
  ops, MIN/MAX (NaN-propagating, -0 < +0) are exact in any order.
* **Tiled matmul** (`MPlan`): REDUCE(ADD, MUL(LOAD a, LOAD b)) over float32 where, writing the
  flat output index as i = batch * (M * N) + row * N + col, a's index is affine in (batch, row, r)
  and b's in (batch, r, col) with unit stride in col. MR x 4*NV outputs per tile live in f32x4
  registers; per k one row vector of b per column vector and one splat of a per row feed
  multiply-adds (`f32x4.relaxed_madd` where the engine validates relaxed SIMD), with pointers
  bumped instead of recomputing indices. Without relaxed SIMD each output sums in k order, bit
  for bit as the scalar loop does. The k loop is blocked (partial sums go through the output)
  and columns are blocked so the panel of b in use stays in cache. Tiles cover the largest
  multiple of MR rows and 4*NV columns; the scalar loop does the rest and applies epilogues,
  reading the tile's sums back from the output. A call for a range [lo, hi) of outputs (a
  worker pool's share) runs the tiles of the rows in it when lo and hi are cut at tile rows
  (wasm.split cuts there), else the scalar loop does the whole range.

Loads are bounds-safe in the generic path; here every index is proven by range analysis to lie
in [0, max] and a runtime check `max < len` per input picks the fast path (else generic).
"""

from __future__ import annotations

from typing import Any

from ...ir import scalar
from ...ir.exp import Exp
from ...ir.ops import Op
from . import simd as wasm_simd
from .asm import F32, I32, V128

_INT32_FULL = (-(2**31), 2**31 - 1)
ENABLED = True  # off: every REDUCE takes the generic scalar path (benchmarks' baseline)
TILE = (2, 4)  # matmul register tile: rows x f32x4 column vectors (tuned on wasmtime)
BLOCK = (128, 64)  # k block (elements), column block (tiles)
_VEC_DTYPES = {"float32", "int32", "uint32"}


def exact_index(e: Exp) -> tuple[int, int] | None:
    """The proven range of an int32 index expression, when no step of it can wrap."""
    vr = e.vrange
    if vr is None or vr == _INT32_FULL or vr[0] < 0:
        return None
    return vr


# ---- affine decomposition in r -------------------------------------------------------------
Atoms = list[tuple[int, Exp]]  # sum of coef * atom (atoms independent of r)


def split_r(e: Exp, dep_r: set[int]) -> tuple[int, Atoms] | None:
    """e == coef * r + sum(c * atom) with r-independent atoms, or None."""
    if id(e) not in dep_r:
        return 0, [(1, e)]
    op = e.op
    if op is Op.RIDX:
        return 1, []
    if op in (Op.ADD, Op.SUB):
        a, b = split_r(e.src[0], dep_r), split_r(e.src[1], dep_r)
        if a is None or b is None:
            return None
        s = 1 if op is Op.ADD else -1
        return a[0] + s * b[0], a[1] + [(s * c, t) for c, t in b[1]]
    if op is Op.MUL and e.src[1].is_const:
        a = split_r(e.src[0], dep_r)
        if a is None:
            return None
        k = int(e.src[1].arg)
        return a[0] * k, [(c * k, t) for c, t in a[1]]
    return None


def push_atoms(gen: Any, atoms: Atoms) -> None:
    """Push sum(c * atom) as an i32 (0 when empty)."""
    f = gen.f
    const = 0
    first = True
    for c, t in atoms:
        if t.is_const:
            const += c * int(t.arg)
            continue
        gen.push(t)
        if c != 1:
            f.i32(c)
            f.op("i32.mul")
        if not first:
            f.op("i32.add")
        first = False
    if first:
        f.i32(const)
    elif const:
        f.i32(const)
        f.op("i32.add")


def bounds_check(gen: Any, loads: list[Exp]) -> int:
    """A local: 1 when every load's proven maximum index is below its input's length."""
    f = gen.f
    ok = f.local(I32)
    f.i32(1)
    for ld in loads:
        hi = exact_index(ld.src[0])
        assert hi is not None
        f.i32(hi[1])
        f.get(1 + gen.n + ld.arg)
        f.op("i32.lt_u", "i32.and")
    f.set(ok)
    return ok


# ---- vector reductions ---------------------------------------------------------------------
_RED_F32 = {Op.ADD: "f32x4.add", Op.MAX: "f32x4.max", Op.MIN: "f32x4.min"}
_RED_I32 = {
    Op.ADD: "i32x4.add", Op.MUL: "i32x4.mul", Op.AND: "v128.and", Op.OR: "v128.or",
    Op.XOR: "v128.xor", Op.MAX: "i32x4.max", Op.MIN: "i32x4.min",
}  # fmt: skip


def _vec_combine(combine: Op, d: Any) -> str | None:
    if d.name == "float32":
        return _RED_F32.get(combine)
    name = _RED_I32.get(combine)
    if name is not None and combine in (Op.MAX, Op.MIN):
        name += "_u" if d.name == "uint32" else "_s"
    return name


class RPlan:
    __slots__ = ("node", "loads", "vnodes", "splats", "unroll", "ok")

    def __init__(
        self,
        node: Exp,
        loads: dict[int, tuple[Exp, Atoms]],
        vnodes: list[Exp],
        splats: list[Exp],
        unroll: int,
    ) -> None:
        self.node, self.loads, self.vnodes, self.splats = node, loads, vnodes, splats
        self.unroll = unroll
        self.ok = -1  # the bounds-check local, set by prepare()


def _native_ok(n: Exp) -> bool:
    if n.dtype.name not in wasm_simd._LANE_DTYPES:
        return False
    if any(s.dtype.name not in wasm_simd._LANE_DTYPES for s in n.src):
        return False
    if n.op is Op.WHERE:
        return True
    if n.op is Op.CAST:
        return True
    if n.op is Op.BITCAST:
        return n.dtype.itemsize == 4 and n.src[0].dtype.itemsize == 4
    if n.op in (Op.LOAD, Op.RIDX, Op.IDX, Op.REDUCE):
        return False
    sk = wasm_simd._k(n.src[0].dtype) if n.src else ""
    return wasm_simd._native_name(n.op, sk, n.src[0].dtype if n.src else n.dtype) is not None


def plan_reduce(node: Exp, dep_r: set[int]) -> RPlan | None:
    combine, rsize = node.arg
    d = node.dtype
    if not ENABLED or d.name not in _VEC_DTYPES or _vec_combine(combine, d) is None or rsize < 8:
        return None
    body = node.src[0]
    loads: dict[int, tuple[Exp, Atoms]] = {}
    vset: set[int] = set()
    splat_set: dict[int, Exp] = {}
    stack = [body]
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if id(n) not in dep_r:
            splat_set[id(n)] = n
            continue
        if n.op is Op.LOAD and n.dtype.name in _VEC_DTYPES:
            sp = split_r(n.src[0], dep_r)
            if sp is None or sp[0] != 1 or exact_index(n.src[0]) is None:
                return None
            loads[id(n)] = (n, sp[1])
            continue
        if not _native_ok(n):
            return None
        vset.add(id(n))
        stack.extend(n.src)
    if id(body) in splat_set or not loads:
        return None
    vnodes = [n for n in body.toposort() if id(n) in vset]
    splats = list(splat_set.values())
    return RPlan(node, loads, vnodes, splats, _unroll(rsize))


def _unroll(rsize: int) -> int:
    """Vector accumulators of a vector reduction over rsize elements (rsize >= 8)."""
    return 4 if rsize >= 32 else 2


def lane_unroll(node: Exp) -> int:
    """The vector accumulators whose summation order the scalar loop must follow for this
    REDUCE (0: it sums in r order). A float32 sum's value depends on its order, and whether the
    vector path runs depends on fusion (a fused producer the lanes cannot compute sends it down
    the scalar loop), so both sum in the vector order: element r into lane r % 4 of
    accumulator (r // 4) % u up to the last whole step of 4 * u, then `combine_tree`, then the
    rest in r order. Integer sums and MIN/MAX are exact in any order; float MUL never
    vectorizes."""
    combine, rsize = node.arg
    if node.dtype.name != "float32" or combine is not Op.ADD or rsize < 8:
        return 0
    return _unroll(rsize)


def combine_tree(u: int) -> Any:
    """The vector path's combine of accumulators 0..u-1, as nested pairs of indices."""
    accs: list[Any] = list(range(u))
    while len(accs) > 1:
        nxt = [(a, b) for a, b in zip(accs[0::2], accs[1::2], strict=False)]
        if len(accs) % 2:
            nxt.append(accs[-1])
        accs = nxt
    return accs[0]


class _RVec(wasm_simd._Vec):
    """wasm_simd's lane emitter; the loads are set up by emit_reduce."""

    extra: Any

    def __init__(self, gen: Any) -> None:
        super().__init__(gen, wasm_simd.Plan([], [], set(), False))


def prepare_reduce(gen: Any, p: RPlan) -> None:
    """Hoisted part: the bounds check local."""
    p.ok = bounds_check(gen, [ld for ld, _ in p.loads.values()])


def emit_reduce(gen: Any, p: RPlan, acc: int, scalar_tail: Any) -> None:
    """acc = REDUCE(...) when the bounds check passed (the caller emits the generic else)."""
    f = gen.f
    combine, rsize = p.node.arg
    d = p.node.dtype
    is_f = d.name == "float32"
    u = p.unroll
    step = 4 * u
    main = rsize - rsize % step
    off = f.local(I32)
    ptrs: dict[int, int] = {}
    for key, (ld, atoms) in p.loads.items():
        loc = f.local(I32)
        f.get(1 + ld.arg)
        push_atoms(gen, atoms)
        f.i32(2)
        f.op("i32.shl", "i32.add")
        f.set(loc)
        ptrs[key] = loc
    vec = _RVec(gen)
    for s in p.splats:
        vec.v[id(s)] = loc = f.local(V128)
        gen.push(s)
        f.op("f32x4.splat" if wasm_simd._k(s.dtype) == "f" else "i32x4.splat")
        f.set(loc)
    ident = _identity(combine, d)
    accs = [f.local(V128) for _ in range(u)]
    for a in accs:
        gen.const(ident, d)
        f.op("f32x4.splat" if is_f else "i32x4.splat")
        f.set(a)
    vop = _vec_combine(combine, d)
    assert vop is not None
    f.i32(0)
    f.set(off)
    f.block("loop")
    lds = {key: f.local(V128) for key in ptrs}
    for j, a in enumerate(accs):
        vec.extra = 16 * j
        for key, loc in lds.items():
            f.get(ptrs[key])
            f.get(off)
            f.op("i32.add")
            f.simd_mem("v128.load", offset=16 * j)
            f.set(loc)
            vec.v[key] = loc
        for n in p.vnodes:
            loc = vec.v.get(id(n))
            if loc is None:
                loc = vec.v[id(n)] = f.local(V128)
            vec.node(n)
            f.set(loc)
        f.get(a)
        vec.get(p.node.src[0])
        f.op(vop)
        f.set(a)
    f.get(off)
    f.i32(16 * u)
    f.op("i32.add")
    f.tee(off)
    f.i32(main * 4)
    f.op("i32.lt_u")
    f.br_if(0)
    f.end()
    # tree-combine the accumulators (combine_tree: the scalar loop's lane order follows it),
    # then the four lanes
    while len(accs) > 1:
        nxt = []
        for a, b in zip(accs[0::2], accs[1::2], strict=False):
            f.get(a)
            f.get(b)
            f.op(vop)
            f.set(a)
            nxt.append(a)
        if len(accs) % 2:
            nxt.append(accs[-1])
        accs = nxt
    lane_t = F32 if is_f else I32
    t = f.local(lane_t)
    ext = "f32x4.extract_lane" if is_f else "i32x4.extract_lane"
    f.get(accs[0])
    f.lane(ext, 0)
    f.set(acc)
    for lane in (1, 2, 3):
        f.get(accs[0])
        f.lane(ext, lane)
        f.set(t)
        gen.binary(combine, d, acc, t)
        f.set(acc)
    if main < rsize:
        scalar_tail(acc, main)


def _identity(combine: Op, d: Any) -> Any:
    return scalar.identity(combine, d)


# ---- tiled matmul ----------------------------------------------------------------------------
class MPlan:
    """A matmul plan: operands, sizes, tile and block sizes (filled in by plan_matmul)."""

    __slots__ = ("node", "a", "b", "B", "M", "N", "K", "MR", "NV", "lin_a", "lin_b", "ok",
                 "tiled", "Mfull", "Nfull", "trivial", "KC", "NC")  # fmt: skip
    node: Any
    a: Any
    b: Any
    B: int
    M: int
    N: int
    K: int
    MR: int
    NV: int
    lin_a: Any
    lin_b: Any
    ok: Any
    tiled: bool
    Mfull: int
    Nfull: int
    trivial: bool
    KC: int
    NC: int

    def __init__(self, **kw: Any) -> None:
        for k, v in kw.items():
            setattr(self, k, v)


Lin = dict[str, int]  # variable -> coefficient; "1" is the constant


def _lin(e: Exp, env: dict[int, Lin], ranges: dict[str, int]) -> Lin | None:
    """e as an exact linear form over the tile variables, or None."""
    memo: dict[int, Lin | None] = {}

    def rng(lf: Lin) -> tuple[int, int]:
        lo = hi = lf.get("1", 0)
        for v, c in lf.items():
            if v == "1":
                continue
            span = c * (ranges[v] - 1)
            lo += min(0, span)
            hi += max(0, span)
        return lo, hi

    def go(n: Exp) -> Lin | None:
        key = id(n)
        if key in memo:
            return memo[key]
        out: Lin | None = None
        if key in env:
            out = env[key]
        elif n.is_const:
            out = {"1": int(n.arg)}
        elif n.op in (Op.ADD, Op.SUB):
            a, b = go(n.src[0]), go(n.src[1])
            if a is not None and b is not None:
                s = 1 if n.op is Op.ADD else -1
                out = dict(a)
                for v, c in b.items():
                    out[v] = out.get(v, 0) + s * c
        elif n.op is Op.MUL and n.src[1].is_const:
            a = go(n.src[0])
            if a is not None:
                k = int(n.src[1].arg)
                out = {v: c * k for v, c in a.items()}
        elif n.op in (Op.DIV, Op.MOD) and n.src[1].is_const and int(n.src[1].arg) > 0:
            a = go(n.src[0])
            k = int(n.src[1].arg)
            if a is not None and rng(a)[0] >= 0:
                whole = {v: c for v, c in a.items() if c % k == 0}
                rest = {v: c for v, c in a.items() if c % k != 0}
                lo, hi = rng(rest)
                if lo >= 0 and hi < k:
                    if n.op is Op.DIV:
                        out = {v: c // k for v, c in whole.items()}
                    else:
                        out = rest
        memo[key] = out
        return out

    res = go(e)
    if res is None:
        return None
    return {v: c for v, c in res.items() if c}


def plan_matmul(kernel: Any, node: Exp) -> MPlan | None:
    combine, K = node.arg
    body = node.src[0]
    if (
        not ENABLED
        or combine is not Op.ADD
        or node.dtype.name != "float32"
        or body.op is not Op.MUL
    ):
        return None
    x, y = body.src
    if x.op is not Op.LOAD or y.op is not Op.LOAD or x.dtype.name != "float32":
        return None
    if y.dtype.name != "float32" or K < 4:
        return None
    if exact_index(x.src[0]) is None or exact_index(y.src[0]) is None:
        return None
    if kernel.out_dtype.itemsize != 4:
        return None
    size = kernel.size
    ivar = ridx = None
    divs: set[int] = set()
    for n in kernel.exp.toposort():
        if n.op is Op.IDX:
            ivar = n
        elif n.op is Op.RIDX:
            ridx = n
    if ivar is None or ridx is None:
        return None
    for n in (x.src[0], y.src[0]):
        for m in n.toposort():
            if m.op in (Op.DIV, Op.MOD) and m.src[0] is ivar and m.src[1].is_const:
                divs.add(int(m.src[1].arg))
    divs = {k for k in divs if 1 < k < size and size % k == 0}
    for N in sorted(divs):
        for MN in sorted({k for k in divs if k > N and k % N == 0} | {size}):
            B, M = size // MN, MN // N
            ranges = {"b": B, "m": M, "n": N, "r": K}
            env = {id(ivar): {"b": MN, "m": N, "n": 1}, id(ridx): {"r": 1}}
            la, lb = _lin(x.src[0], env, ranges), _lin(y.src[0], env, ranges)
            if la is None or lb is None:
                continue
            for pa, pb, xa, xb in ((la, lb, x, y), (lb, la, y, x)):
                if pa.get("n", 0) == 0 and pb.get("m", 0) == 0 and pb.get("n", 0) == 1:
                    MR, NV = TILE
                    if M < MR or N < 4 * NV:
                        MR, NV = 4, 2
                    if M < MR or N < 4 * NV or pa.get("m", 0) < 0:
                        return None
                    return MPlan(
                        node=node,
                        a=xa,
                        b=xb,
                        B=B,
                        M=M,
                        N=N,
                        K=K,
                        MR=MR,
                        NV=NV,
                        lin_a=pa,
                        lin_b=pb,
                        ok=-1,
                        tiled=-1,
                        Mfull=M - M % MR,
                        Nfull=N - N % (4 * NV),
                        trivial=kernel.exp is node,
                        KC=BLOCK[0],
                        NC=4 * NV * BLOCK[1],
                    )
            break
    return None


def scratch_bytes(p: MPlan) -> int:
    """Bytes of scratch memory the tiled pass packs panels of b into."""
    return min(p.KC, p.K) * (p.NC + p.MR) * 4


def emit_matmul(gen: Any, p: MPlan) -> None:
    """The tiled pass over the full tiles of the rows in [lo, hi) (run when the bounds check
    passed and lo, hi are cut at tile rows: a multiple of N whose row in its batch is a
    multiple of MR or at least Mfull)."""
    _TiledPass(gen, p).emit()


class _TiledPass:
    """Emits the tiled pass: the guard (`p.tiled`), then the loop nest over batches, column
    blocks of NC, k blocks of KC (packing the block's panel of b into the scratch), tile rows
    of MR (packing that row tile of a) and tile columns of NR = 4 * NV, whose micro-kernel
    runs the k block on MR x NV f32x4 accumulators."""

    def __init__(self, gen: Any, p: MPlan) -> None:
        self.gen, self.p, self.f = gen, p, gen.f
        self.KC = min(p.KC, p.K)
        self.NC = p.NC
        self.NR = 4 * p.NV

    def emit(self) -> None:
        f, p = self.f, self.p
        self.guard()
        # (the locals in this order: their indices are part of the module bytes)
        self.bt, self.m0, self.n0, self.k0, self.kk = (f.local(I32) for _ in range(5))
        self.ms, self.me = f.local(I32), f.local(I32)  # the rows of batch bt in range: [ms, me)
        self.nc0, self.nc_end, self.kc_end = f.local(I32), f.local(I32), f.local(I32)
        self.pa, self.pb, self.po = f.local(I32), f.local(I32), f.local(I32)
        self.acc = [[f.local(V128) for _ in range(p.NV)] for _ in range(p.MR)]
        self.bv = [f.local(V128) for _ in range(p.NV)]
        self.av = f.local(V128)
        self.counted_loop(self.bt, self.batch_start, self.batch_end, 1, self.batch)
        f.end()

    # ---- the guard ---------------------------------------------------------------------------
    def guard(self) -> None:
        """p.ok (the bounds check), p.tiled = ok and lo < hi and both cut at tile rows, and the
        `if` on it that the loop nest runs in; glo, ghi: the global rows lo // N, hi // N."""
        gen, f, p = self.gen, self.f, self.p
        N, M, MR = p.N, p.M, p.MR
        p.ok = bounds_check(gen, [p.a, p.b])
        p.tiled = f.local(I32)
        glo, ghi, tmp = f.local(I32), f.local(I32), f.local(I32)
        self.glo, self.ghi, self.tmp = glo, ghi, tmp
        for g, end in ((glo, gen.lo), (ghi, gen.hi)):
            f.get(end)
            f.i32(N)
            f.op("i32.div_u")
            f.set(g)
        f.get(p.ok)
        for g, end in ((glo, gen.lo), (ghi, gen.hi)):
            # end % N == 0 and (row % MR == 0 or row >= Mfull), row = (end // N) % M
            f.get(end)
            f.i32(N)
            f.op("i32.rem_u", "i32.eqz", "i32.and")
            f.get(g)
            f.i32(M)
            f.op("i32.rem_u")
            f.tee(tmp)
            f.i32(MR)
            f.op("i32.rem_u", "i32.eqz")
            f.get(tmp)
            f.i32(p.Mfull)
            f.op("i32.ge_u", "i32.or", "i32.and")
        f.get(gen.lo)
        f.get(gen.hi)
        f.op("i32.lt_u", "i32.and")
        f.tee(p.tiled)
        f.block("if")

    # ---- loops -------------------------------------------------------------------------------
    def counted_loop(self, var: int, start: Any, end: Any, step: int, body: Any) -> None:
        """for var in range(start, end, step), with end > start guaranteed by the caller."""
        f = self.f
        start()
        f.set(var)
        f.block("loop")
        body()
        f.get(var)
        f.i32(step)
        f.op("i32.add")
        f.tee(var)
        end()
        f.op("i32.lt_u")
        f.br_if(0)
        f.end()

    def const(self, v: int) -> Any:
        return lambda: self.f.i32(v)

    def local(self, v: int) -> Any:
        return lambda: self.f.get(v)

    def count_down_k_block(self) -> None:
        """kk = kc_end - k0, and the loop whose body the caller emits next (ended by
        `next_k`)."""
        f = self.f
        f.get(self.kc_end)
        f.get(self.k0)
        f.op("i32.sub")
        f.set(self.kk)
        f.block("loop")

    def next_k(self, step_a: int, step_b: int) -> None:
        """pa += step_a, pb += step_b, and the loop again while --kk."""
        f = self.f
        f.get(self.pa)
        f.i32(step_a)
        f.op("i32.add")
        f.set(self.pa)
        f.get(self.pb)
        f.i32(step_b)
        f.op("i32.add")
        f.set(self.pb)
        f.get(self.kk)
        f.i32(1)
        f.op("i32.sub")
        f.tee(self.kk)
        f.br_if(0)
        f.end()

    def batch_start(self) -> None:
        f = self.f
        f.get(self.glo)
        f.i32(self.p.M)
        f.op("i32.div_u")

    def batch_end(self) -> None:  # (ghi + M - 1) // M
        f, M = self.f, self.p.M
        f.get(self.ghi)
        f.i32(M - 1)
        f.op("i32.add")
        f.i32(M)
        f.op("i32.div_u")

    def batch(self) -> None:
        """Batch bt: ms = max(glo - bt*M, 0), me = min(ghi - bt*M, Mfull); the column blocks
        when ms < me."""
        f, p = self.f, self.p
        bt, tmp, ms, me = self.bt, self.tmp, self.ms, self.me
        f.get(bt)
        f.i32(p.M)
        f.op("i32.mul")
        f.set(tmp)
        f.get(self.glo)
        f.get(tmp)
        f.op("i32.sub")
        f.i32(0)
        f.get(self.glo)
        f.get(tmp)
        f.op("i32.gt_u", "select")
        f.set(ms)
        f.get(self.ghi)
        f.get(tmp)
        f.op("i32.sub")
        f.tee(me)
        f.i32(p.Mfull)
        f.get(me)
        f.i32(p.Mfull)
        f.op("i32.lt_u", "select")
        f.tee(me)
        f.get(ms)
        f.op("i32.gt_u")
        f.block("if")
        self.counted_loop(self.nc0, self.const(0), self.const(p.Nfull), self.NC, self.column_block)
        f.end()

    def column_block(self) -> None:
        """Columns [nc0, nc_end = min(nc0 + NC, Nfull)): the k blocks."""
        f, p, nc_end = self.f, self.p, self.nc_end
        f.get(self.nc0)
        f.i32(self.NC)
        f.op("i32.add")
        f.set(nc_end)
        f.i32(p.Nfull)
        f.get(nc_end)
        f.get(nc_end)
        f.i32(p.Nfull)
        f.op("i32.gt_u", "select")
        f.set(nc_end)
        self.counted_loop(self.k0, self.const(0), self.const(p.K), self.KC, self.k_block)

    def k_block(self) -> None:
        """k in [k0, kc_end = min(k0 + KC, K)): pack the panel of b for each tile column, then
        the row tiles."""
        f, K, kc_end = self.f, self.p.K, self.kc_end
        f.get(self.k0)
        f.i32(self.KC)
        f.op("i32.add")
        f.set(kc_end)
        f.i32(K)
        f.get(kc_end)
        f.get(kc_end)
        f.i32(K)
        f.op("i32.gt_u", "select")
        f.set(kc_end)
        self.counted_loop(
            self.n0, self.local(self.nc0), self.local(self.nc_end), self.NR, self.pack_b_panel
        )
        self.counted_loop(
            self.m0, self.local(self.ms), self.local(self.me), self.p.MR, self.row_tile
        )

    # ---- packing -----------------------------------------------------------------------------
    def pack_b_panel(self) -> None:
        """scratch[(n0 - nc0) * KC + (k - k0) * NR + c] = b[k, n0 + c] for k0 <= k < kc_end."""
        f, p, gen = self.f, self.p, self.gen
        NV = p.NV
        b_r, b_b, b_c = (p.lin_b.get(v, 0) for v in ("r", "b", "1"))
        f.get(1 + p.b.arg)
        f.get(self.bt)
        f.i32(b_b)
        f.op("i32.mul")
        f.get(self.k0)
        f.i32(b_r)
        f.op("i32.mul", "i32.add")
        f.get(self.n0)
        f.op("i32.add")
        f.i32(b_c)
        f.op("i32.add")
        f.i32(2)
        f.op("i32.shl", "i32.add")
        f.set(self.pa)
        f.get(gen.scratch)
        f.get(self.n0)
        f.get(self.nc0)
        f.op("i32.sub")
        f.i32(self.KC * 4)
        f.op("i32.mul", "i32.add")
        f.set(self.pb)
        self.count_down_k_block()
        for j in range(NV):
            f.get(self.pb)
            f.get(self.pa)
            f.simd_mem("v128.load", offset=16 * j)
            f.simd_mem("v128.store", offset=16 * j)
        self.next_k(4 * b_r, 16 * NV)

    def row_tile(self) -> None:
        """Rows [m0, m0 + MR): pack a's row tile, then the tile columns."""
        self.pack_a()
        self.counted_loop(
            self.n0, self.local(self.nc0), self.local(self.nc_end), self.NR, self.micro_tile
        )

    def pack_a(self) -> None:
        """scratch[KC*NC + (k - k0) * MR + m] = a[m0 + m, k] for k0 <= k < kc_end."""
        f, p, gen = self.f, self.p, self.gen
        MR = p.MR
        a_r, a_m, a_b, a_c = (p.lin_a.get(v, 0) for v in ("r", "m", "b", "1"))
        f.get(1 + p.a.arg)
        f.get(self.bt)
        f.i32(a_b)
        f.op("i32.mul")
        f.get(self.m0)
        f.i32(a_m)
        f.op("i32.mul", "i32.add")
        f.get(self.k0)
        f.i32(a_r)
        f.op("i32.mul", "i32.add")
        f.i32(a_c)
        f.op("i32.add")
        f.i32(2)
        f.op("i32.shl", "i32.add")
        f.set(self.pa)
        f.get(gen.scratch)
        f.i32(self.KC * self.NC * 4)
        f.op("i32.add")
        f.set(self.pb)
        self.count_down_k_block()
        for m in range(MR):
            f.get(self.pb)
            f.get(self.pa)
            f.mem("i32.load", offset=4 * m * a_m)
            f.mem("i32.store", offset=4 * m)
        self.next_k(4 * a_r, 4 * MR)

    # ---- the micro-kernel --------------------------------------------------------------------
    def micro_tile(self) -> None:
        """The MR x NR tile at (m0, n0) over the k block, its sums kept in the output."""
        self.tile_pointers()
        self.load_accumulators()
        self.tile_k_loop()
        self.store_accumulators()

    def tile_pointers(self) -> None:
        """pa: the packed row tile of a; pb: the packed panel of b for columns n0.. (KC x NR,
        row-major) in the scratch; po: out + 4 * (bt*M*N + m0*N + n0)."""
        f, p, gen = self.f, self.p, self.gen
        M, N = p.M, p.N
        f.get(gen.scratch)
        f.i32(self.KC * self.NC * 4)
        f.op("i32.add")
        f.set(self.pa)
        f.get(gen.scratch)
        f.get(self.n0)
        f.get(self.nc0)
        f.op("i32.sub")
        f.i32(self.KC * 4)
        f.op("i32.mul", "i32.add")
        f.set(self.pb)
        f.get(0)
        f.get(self.bt)
        f.i32(M * N)
        f.op("i32.mul")
        f.get(self.m0)
        f.i32(N)
        f.op("i32.mul", "i32.add")
        f.get(self.n0)
        f.op("i32.add")
        f.i32(2)
        f.op("i32.shl", "i32.add")
        f.set(self.po)

    def load_accumulators(self) -> None:
        """Zero on the first k block, else the partial sums in the output."""
        f, N = self.f, self.p.N
        f.get(self.k0)
        f.op("i32.eqz")
        f.block("if")
        for row in self.acc:
            for a in row:
                f.v128_const(bytes(16))
                f.set(a)
        f.op("else")
        for m, row in enumerate(self.acc):
            for j, a in enumerate(row):
                f.get(self.po)
                f.simd_mem("v128.load", offset=4 * (m * N) + 16 * j)
                f.set(a)
        f.end()

    def tile_k_loop(self) -> None:
        """Per k: NV row vectors of b, and per row a splat of a into NV multiply-adds
        (f32x4.relaxed_madd where the engine has relaxed SIMD)."""
        f, p, relaxed = self.f, self.p, self.gen.relaxed
        MR, NV = p.MR, p.NV
        acc, bv, av = self.acc, self.bv, self.av
        self.count_down_k_block()
        for j in range(NV):
            f.get(self.pb)
            f.simd_mem("v128.load", offset=16 * j)
            f.set(bv[j])
        for m in range(MR):
            f.get(self.pa)
            f.simd_mem("v128.load32_splat", offset=4 * m)
            f.set(av)
            for j in range(NV):
                if relaxed:
                    f.get(av)
                    f.get(bv[j])
                    f.get(acc[m][j])
                    f.op("f32x4.relaxed_madd")
                else:
                    f.get(acc[m][j])
                    f.get(av)
                    f.get(bv[j])
                    f.op("f32x4.mul", "f32x4.add")
                f.set(acc[m][j])
        self.next_k(4 * MR, 16 * NV)

    def store_accumulators(self) -> None:
        f, N = self.f, self.p.N
        for m, row in enumerate(self.acc):
            for j, a in enumerate(row):
                f.get(self.po)
                f.get(a)
                f.simd_mem("v128.store", offset=4 * (m * N) + 16 * j)


def start_counters(gen: Any, p: MPlan) -> tuple[int, int]:
    """(col, row) locals tracking i % N and (i // N) % M in the scalar pass after the tiles
    (it starts at i = lo); when the tiles covered every output and there is no epilogue, the
    scalar pass is skipped outright."""
    f = gen.f
    col, row = f.local(I32), f.local(I32)
    f.get(gen.lo)
    f.i32(p.N)
    f.op("i32.rem_u")
    f.set(col)
    f.get(gen.lo)
    f.i32(p.N)
    f.op("i32.div_u")
    f.i32(p.M)
    f.op("i32.rem_u")
    f.set(row)
    if p.trivial and p.Mfull == p.M and p.Nfull == p.N:
        f.get(gen.hi)
        f.get(gen.i)
        f.get(p.tiled)
        f.op("select")
        f.set(gen.i)
    return col, row


def step_counters(gen: Any, p: MPlan, cr: tuple[int, int]) -> None:
    f = gen.f
    col, row = cr
    f.get(col)
    f.i32(1)
    f.op("i32.add")
    f.tee(col)
    f.i32(p.N)
    f.op("i32.eq")
    f.block("if")
    f.i32(0)
    f.set(col)
    f.get(row)
    f.i32(1)
    f.op("i32.add")
    f.tee(row)
    f.i32(p.M)
    f.op("i32.eq")
    f.block("if")
    f.i32(0)
    f.set(row)
    f.end()
    f.end()


def emit_covered(gen: Any, p: MPlan, cr: tuple[int, int]) -> None:
    """Push 1 when the current output was computed by a tile (the tiles ran, and it lies in
    the tiled rows and columns)."""
    f = gen.f
    col, row = cr
    f.get(p.tiled)
    f.get(col)
    f.i32(p.Nfull)
    f.op("i32.lt_u", "i32.and")
    f.get(row)
    f.i32(p.Mfull)
    f.op("i32.lt_u", "i32.and")
