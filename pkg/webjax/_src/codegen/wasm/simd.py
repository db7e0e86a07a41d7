"""SIMD128 main loop for elementwise kernels: four outputs per iteration.

Applies when every node that depends on IDX has a 32-bit-or-narrower int, bool or float32 dtype
and no REDUCE depends on IDX. Lanes hold what the scalar code holds (canonical i32 for ints, 0/1
for bools, f32 for float32), so every op has a lane-wise fallback that runs the scalar emitter
once per lane; the common ops (arithmetic, compares, min/max, select, float<->int casts) use
native SIMD instructions, and so do integer division and remainder by constants of dividends
proven in [0, 2**31) (index arithmetic: shifts, masks, multiply-high). Loads at exactly IDX of
4-byte dtypes become one `v128.load`; the vector loop stops where the shortest such input ends,
so those loads need no bounds check. Other loads gather lane by lane through the scalar
bounds-safe load. The scalar loop finishes the tail.
"""

from __future__ import annotations

import struct
from typing import Any

from ...ir.exp import Exp
from ...ir.kernel import Kernel
from ...ir.ops import COMPARE, Op
from . import math as wasm_math
from .asm import F32, I32, V128

_LANE_DTYPES = {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32"}
_LANES = 4


class Plan:
    __slots__ = ("nodes", "splats", "contig", "uses_vidx")

    def __init__(self, nodes: list[Exp], splats: list[Exp], contig: set[int], vidx: bool):
        self.nodes, self.splats, self.contig, self.uses_vidx = nodes, splats, contig, vidx


def plan(kernel: Kernel, outer: list[Exp], dep_i: set[int]) -> Plan | None:
    nodes = [n for n in outer if id(n) in dep_i]
    if kernel.size < 2 * _LANES or not nodes:
        return None
    splats: list[Exp] = []
    seen: set[int] = set()
    contig: set[int] = set()
    vidx = any(n.op is Op.IDX for n in nodes)
    for n in nodes:
        if n.op is Op.REDUCE or n.dtype.name not in _LANE_DTYPES:
            return None
        if n.op is Op.LOAD and n.src[0].op is Op.IDX and n.dtype.itemsize == 4:
            contig.add(id(n))
            continue
        for s in n.src:
            if s.dtype.name not in _LANE_DTYPES:
                return None
            if id(s) not in dep_i and id(s) not in seen:
                seen.add(id(s))
                splats.append(s)
    return Plan([n for n in nodes if n.op is not Op.IDX], splats, contig, vidx)


def _k(d: Any) -> str:
    return "f" if d.name == "float32" else "b" if d.kind == "b" else d.kind


class _Vec:
    def __init__(self, gen: Any, p: Plan) -> None:
        self.g, self.f, self.p = gen, gen.f, p
        self.v: dict[int, int] = {}  # id(node) -> v128 local
        self.lane_tmp: dict[tuple[int, int], int] = {}

    def tmp(self, vt: int, k: int) -> int:
        loc = self.lane_tmp.get((vt, k))
        if loc is None:
            loc = self.lane_tmp[(vt, k)] = self.f.local(vt)
        return loc

    def const(self, kind: str, vals: list[Any]) -> None:
        fmt = "<4f" if kind == "f" else "<4I"
        self.f.v128_const(struct.pack(fmt, *[v & 0xFFFFFFFF if kind != "f" else v for v in vals]))

    def get(self, n: Exp) -> None:
        self.f.get(self.v[id(n)])

    # -- the loop ------------------------------------------------------------------------------
    def emit(self) -> None:
        g, f, p = self.g, self.f, self.p
        for s in p.splats:
            g.push(s)
            f.op("f32x4.splat" if _k(s.dtype) == "f" else "i32x4.splat")
            self.v[id(s)] = loc = f.local(V128)
            f.set(loc)
        vend = f.local(I32)
        f.get(g.loop_hi)
        f.set(vend)
        for slot in sorted({n.arg for n in p.nodes if id(n) in p.contig}):
            length = 1 + g.n + slot
            f.get(length)
            f.get(vend)
            f.get(length)
            f.get(vend)
            f.op("i32.lt_u", "select")
            f.set(vend)
        # vend = i + ((vend - i) & ~3) when vend > i, else i (i: where this loop starts)
        f.get(g.i)
        f.get(vend)
        f.get(g.i)
        f.op("i32.sub")
        f.i32(-_LANES)
        f.op("i32.and", "i32.add")
        f.get(g.i)
        f.get(vend)
        f.get(g.i)
        f.op("i32.gt_u", "select")
        f.set(vend)
        f.block("block")
        f.block("loop")
        f.get(g.i)
        f.get(vend)
        f.op("i32.ge_u")
        f.br_if(1)
        if p.uses_vidx:
            vidx = f.local(V128)
            f.get(g.i)
            f.op("i32x4.splat")
            self.const("i", [0, 1, 2, 3])
            f.op("i32x4.add")
            f.set(vidx)
            for n in g.kernel.exp.toposort():
                if n.op is Op.IDX:
                    self.v[id(n)] = vidx
        for n in p.nodes:
            loc = self.v[id(n)] = f.local(V128)
            self.node(n)
            f.set(loc)
        self.store(g.kernel.exp)
        f.get(g.i)
        f.i32(_LANES)
        f.op("i32.add")
        f.set(g.i)
        f.br(0)
        f.end()
        f.end()

    def store(self, e: Exp) -> None:
        g, f = self.g, self.f
        if e.dtype.itemsize == 4 and id(e) in self.v:
            f.get(0)
            f.get(g.i)
            f.i32(2)
            f.op("i32.shl", "i32.add")
            self.get(e)
            f.simd_mem("v128.store")
            return
        for lane in range(_LANES):
            g.store_output(self.lane(e, lane, 0), lane)

    def lane(self, e: Exp, lane: int, k: int) -> Any:
        """A Ref (scalar local, or a hoisted node) holding lane `lane` of e's value."""
        if id(e) not in self.v:
            return e  # hoisted scalar or constant
        f = self.f
        kind = _k(e.dtype)
        self.get(e)
        f.lane("f32x4.extract_lane" if kind == "f" else "i32x4.extract_lane", lane)
        t = self.tmp(F32 if kind == "f" else I32, k)
        f.set(t)
        return t

    # -- one node ------------------------------------------------------------------------------
    def node(self, n: Exp) -> None:
        if id(n) in self.p.contig:
            f, g = self.f, self.g
            f.get(1 + n.arg)
            f.get(g.i)
            f.i32(2)
            f.op("i32.shl", "i32.add")
            f.simd_mem("v128.load")
            return
        if not self.native(n):
            self.lanewise(n)

    def lanewise(self, n: Exp) -> None:
        g, f = self.g, self.f
        kind = _k(n.dtype)
        self.const("i", [0, 0, 0, 0])
        for lane in range(_LANES):
            refs = [self.lane(s, lane, k) for k, s in enumerate(n.src)]
            if n.op is Op.LOAD:
                g.load(n, refs[0])
            elif n.op is Op.WHERE:
                g.push(refs[1])
                g.push(refs[2])
                g.push(refs[0])
                f.op("select")
            elif n.op is Op.CAST:
                g.cast(n.src[0].dtype, n.dtype, refs[0])
            elif n.op is Op.BITCAST:
                g.bitcast(n.src[0].dtype, n.dtype, refs[0])
            elif len(refs) == 2:
                g.binary(n.op, n.src[0].dtype, refs[0], refs[1])
            else:
                g.unary(n.op, n.src[0].dtype, refs[0])
            f.lane("f32x4.replace_lane" if kind == "f" else "i32x4.replace_lane", lane)

    def operand(self, s: Exp) -> None:
        if id(s) in self.v:
            self.get(s)
        else:  # only reachable for nodes the planner did not splat (none today)
            raise AssertionError(f"no vector value for {s}")

    def normalize(self, d: Any) -> None:
        f = self.f
        if d.kind == "b" or d.bits == 32:
            return
        if d.kind == "i":
            f.i32(32 - d.bits)
            f.op("i32x4.shl")
            f.i32(32 - d.bits)
            f.op("i32x4.shr_s")
        else:
            self.const("i", [(1 << d.bits) - 1] * 4)
            f.op("v128.and")

    def native(self, n: Exp) -> bool:
        """Emit n with SIMD instructions when there are some; False leaves it to lanewise."""
        f = self.f
        op, d = n.op, n.dtype
        src = n.src
        sk = _k(src[0].dtype) if src else ""
        if op is Op.WHERE:
            self.operand(src[1])
            self.operand(src[2])
            self.operand(src[0])
            f.op("i32x4.neg", "v128.bitselect")
            return True
        if op is Op.CAST:
            return self.cast(src[0], d)
        if op is Op.ERF and d.name == "float32":
            self.erf(src[0])
            return True
        if op in (Op.DIV, Op.MOD):
            return self.const_divide(n)
        if op is Op.BITCAST:
            if d.itemsize == 4 and src[0].dtype.itemsize == 4:
                self.operand(src[0])
                return True
            return False
        name = _native_name(op, sk, src[0].dtype if src else d)
        if name is None:
            return False
        for s in src:
            self.operand(s)
        if op is Op.NOT:
            self.const("i", [1] * 4 if sk == "b" else [-1] * 4)
        f.op(*name)
        if op in COMPARE:
            f.op("i32x4.neg")  # all-ones mask -> 1
        elif sk in "iu" and op in (Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.ABS, Op.NOT):
            self.normalize(d)
        return True

    def erf(self, x: Exp) -> None:
        """float32 erf as the scalar code computes it (wasm_math's `erf_rational`: |x| clamped,
        promoted, a rational function in float64, demoted, x's sign), on two f64x2 halves."""
        f = self.f
        xs, a, t, z = f.local(V128), f.local(V128), f.local(V128), f.local(V128)
        halves = (f.local(V128), f.local(V128))
        self.operand(x)
        f.set(xs)
        f.get(xs)
        f.op("f32x4.abs")
        self.const("f", [wasm_math.ERF_RATIONAL_BOUND] * 4)
        f.op("f32x4.min")  # exact in float32, as the scalar f64.min of the promoted value
        f.set(a)
        for k, half in enumerate(halves):
            f.get(a)
            if k:
                f.get(a)
                f.shuffle(bytes([*range(8, 16), *range(8, 16)]))  # lanes 2, 3 down
            f.op("f64x2.promote_low_f32x4")
            f.set(t)
            f.get(t)
            f.get(t)
            f.op("f64x2.mul")
            f.set(z)
            f.get(t)
            for coeffs in (wasm_math.ERF_RATIONAL_P, wasm_math.ERF_RATIONAL_Q):
                self.const64(coeffs[-1])  # Horner, as wasm_math._poly
                for c in reversed(coeffs[:-1]):
                    f.get(z)
                    f.op("f64x2.mul")
                    self.const64(c)
                    f.op("f64x2.add")
                if coeffs is wasm_math.ERF_RATIONAL_P:
                    f.op("f64x2.mul")  # t * P
            f.op("f64x2.div", "f32x4.demote_f64x2_zero")
            f.set(half)
        f.get(halves[0])
        f.get(halves[1])
        f.shuffle(bytes([*range(8), *range(16, 24)]))
        f.set(a)
        f.get(xs)  # copysign: x's sign bit, the magnitude's other bits (a NaN's too)
        f.get(a)
        self.const("i", [0x80000000] * 4)
        f.op("v128.bitselect")

    def const64(self, v: float) -> None:
        self.f.v128_const(struct.pack("<2d", v, v))

    def const_divide(self, n: Exp) -> bool:
        """x / c, x % c for 0 <= x < 2**31 (proven) and a constant 0 < c < 2**31: shifts and
        masks for powers of two, else Granlund-Montgomery: q = (x * m) >> (31 + l) with
        l = ceil(log2 c), m = 2**(31 + l) // c + 1 < 2**32, exact for 31-bit x, through
        64-bit lane products (extmul) packed back to 32 bits; x % c = x - q * c."""
        f = self.f
        x, c_node = n.src
        if c_node.op is not Op.CONST or n.dtype.name not in ("int32", "uint32"):
            return False
        c = int(c_node.arg)
        vr = x.vrange
        if not 0 < c < 1 << 31 or vr is None or vr[0] < 0 or vr[1] >= 1 << 31:
            return False
        self.operand(x)
        if c & (c - 1) == 0:
            if n.op is Op.DIV:
                f.i32(c.bit_length() - 1)
                f.op("i32x4.shr_u")
            else:
                self.const("i", [c - 1] * 4)
                f.op("v128.and")
            return True
        xs = self.f.local(V128)
        f.set(xs)
        shift = 31 + (c - 1).bit_length()
        m = (1 << shift) // c + 1
        for half in ("low", "high"):
            f.get(xs)
            self.const("i", [m] * 4)
            f.op(f"i64x2.extmul_{half}_i32x4_u")
            f.i32(shift)
            f.op("i64x2.shr_u")
        f.shuffle(bytes([0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]))
        if n.op is Op.MOD:
            self.const("i", [c] * 4)
            f.op("i32x4.mul")
            f.set(self.tmp(V128, 0))
            f.get(xs)
            f.get(self.tmp(V128, 0))
            f.op("i32x4.sub")
        return True

    def cast(self, s: Exp, d: Any) -> bool:
        f = self.f
        sk, dk = _k(s.dtype), _k(d)
        self.operand(s)
        if dk == "b":
            if sk == "f":
                self.const("f", [0.0] * 4)
                f.op("f32x4.ne")
            else:
                self.const("i", [0] * 4)
                f.op("i32x4.ne")
            f.op("i32x4.neg")
        elif dk == "f":
            if sk != "f":
                f.op(
                    "f32x4.convert_i32x4_u" if s.dtype.name == "uint32" else "f32x4.convert_i32x4_s"
                )
        elif sk == "f":
            f.op("i32x4.trunc_sat_f32x4_s" if dk == "i" else "i32x4.trunc_sat_f32x4_u")
            if d.bits < 32:
                if dk == "i":
                    self.const("i", [-(1 << (d.bits - 1))] * 4)
                    f.op("i32x4.max_s")
                    self.const("i", [(1 << (d.bits - 1)) - 1] * 4)
                    f.op("i32x4.min_s")
                else:
                    self.const("i", [(1 << d.bits) - 1] * 4)
                    f.op("i32x4.min_u")
        else:
            self.normalize(d)
        return True


def _native_name(op: Op, sk: str, sd: Any) -> tuple[str, ...] | None:
    if sk == "f":
        return _F32_OPS.get(op)
    if sk == "b":
        return _BOOL_OPS.get(op)
    u = sk == "u"
    if op in _INT_SIGNED:
        return (_INT_SIGNED[op] + ("_u" if u else "_s"),)
    if op is Op.ABS:
        return () if u else ("i32x4.abs",)
    return _INT_OPS.get(op)


_F32_OPS: dict[Op, tuple[str, ...]] = {
    Op.ADD: ("f32x4.add",), Op.SUB: ("f32x4.sub",), Op.MUL: ("f32x4.mul",),
    Op.DIV: ("f32x4.div",), Op.MIN: ("f32x4.min",), Op.MAX: ("f32x4.max",),
    Op.NEG: ("f32x4.neg",), Op.ABS: ("f32x4.abs",), Op.SQRT: ("f32x4.sqrt",),
    Op.FLOOR: ("f32x4.floor",), Op.CEIL: ("f32x4.ceil",), Op.ROUND: ("f32x4.nearest",),
    Op.CMPEQ: ("f32x4.eq",), Op.CMPNE: ("f32x4.ne",), Op.CMPLT: ("f32x4.lt",),
    Op.CMPLE: ("f32x4.le",),
}  # fmt: skip
_BOOL_OPS: dict[Op, tuple[str, ...]] = {
    Op.AND: ("v128.and",), Op.MIN: ("v128.and",), Op.MUL: ("v128.and",),
    Op.OR: ("v128.or",), Op.MAX: ("v128.or",), Op.ADD: ("v128.or",),
    Op.XOR: ("v128.xor",), Op.NOT: ("v128.xor",), Op.CMPEQ: ("i32x4.eq",),
    Op.CMPNE: ("i32x4.ne",), Op.CMPLT: ("i32x4.lt_u",), Op.CMPLE: ("i32x4.le_u",),
}  # fmt: skip
_INT_OPS: dict[Op, tuple[str, ...]] = {
    Op.ADD: ("i32x4.add",), Op.SUB: ("i32x4.sub",), Op.MUL: ("i32x4.mul",),
    Op.AND: ("v128.and",), Op.OR: ("v128.or",), Op.XOR: ("v128.xor",), Op.NOT: ("v128.xor",),
    Op.NEG: ("i32x4.neg",), Op.CMPEQ: ("i32x4.eq",), Op.CMPNE: ("i32x4.ne",),
}  # fmt: skip
_INT_SIGNED = {
    Op.CMPLT: "i32x4.lt", Op.CMPLE: "i32x4.le", Op.MIN: "i32x4.min", Op.MAX: "i32x4.max",
}  # fmt: skip


def emit_main_loop(gen: Any, p: Plan) -> None:
    _Vec(gen, p).emit()
