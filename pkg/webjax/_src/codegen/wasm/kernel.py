"""Kernel IR -> WebAssembly module bytes (the wasm backend's codegen).

The module imports its linear memory as ("env", "memory") and exports one function

    kernel(out, in_ptr_0, ..., in_ptr_{n-1}, in_len_0, ..., in_len_{n-1}, lo, hi)

that writes `out[i] = exp` for `lo <= i < hi` (pointers are byte offsets, lengths are element
counts; a worker pool splits [0, size) into ranges: `split` says where a kernel may be cut). The
memory import is shared (limits 0..MAX_PAGES) when `shared` is asked for (threads). Every
integer dtype of at most 32 bits computes in an i32 local kept *canonical* (sign-extended for
signed, zero-extended for unsigned, 0/1 for bool), 64-bit ints in i64, float32 in f32, float64
in f64; float16/bfloat16 compute in f32 holding an exactly representable value, re-rounded after
every inexact op. That re-rounding matches the reference bit for bit for + - * / sqrt: float32
carries 24 >= 2*11+2 bits, so the double rounding is innocuous. Transcendentals run as float64
helper functions (wasm_math) and are demoted for narrower floats. Loads are bounds-safe: an
index outside [0, len) reads 0 and never touches memory outside the buffer. Elementwise kernels
over contiguous 32-bit data get a SIMD128 main loop (wasm_simd).
"""

from __future__ import annotations

from typing import NamedTuple

from ...dtypes import DType
from ...ir import scalar
from ...ir.exp import Exp
from ...ir.kernel import Kernel
from ...ir.ops import COMPARE, Op
from . import math as wasm_math
from . import reduce as wasm_reduce
from . import simd as wasm_simd
from .asm import F32, F64, I32, I64, MAX_PAGES, V128, Func, module

EXPORT = "kernel"

# dtype name -> (compute class, wasm value type, load op, store op, log2 itemsize)
_DT: dict[str, tuple[str, int, str, str, int]] = {
    "bool": ("b", I32, "i32.load8_u", "i32.store8", 0),
    "int8": ("i", I32, "i32.load8_s", "i32.store8", 0),
    "uint8": ("u", I32, "i32.load8_u", "i32.store8", 0),
    "int16": ("i", I32, "i32.load16_s", "i32.store16", 1),
    "uint16": ("u", I32, "i32.load16_u", "i32.store16", 1),
    "int32": ("i", I32, "i32.load", "i32.store", 2),
    "uint32": ("u", I32, "i32.load", "i32.store", 2),
    "int64": ("i", I64, "i64.load", "i64.store", 3),
    "uint64": ("u", I64, "i64.load", "i64.store", 3),
    "float16": ("f", F32, "i32.load16_u", "i32.store16", 1),
    "bfloat16": ("f", F32, "i32.load16_u", "i32.store16", 1),
    "float32": ("f", F32, "f32.load", "f32.store", 2),
    "float64": ("f", F64, "f64.load", "f64.store", 3),
}
_HALF = ("float16", "bfloat16")
_P = {I32: "i32", I64: "i64", F32: "f32", F64: "f64"}

# Ops computed by a float64 helper (name in wasm_math.HELPERS), demoted for narrower floats.
_F64_UNARY = wasm_math.UNARY_OPS
# Float64 helpers that narrower floats call instead (as accurate after rounding, and faster).
_NARROW_UNARY = {Op.ERF: "erf_rational"}
_F64_BINARY = wasm_math.BINARY_OPS

Ref = Exp | int  # an IR node, or a local index holding a value


class UnsupportedError(NotImplementedError):
    """The wasm backend cannot compile this op/dtype combination."""


def supports_dtype(d: DType) -> bool:
    return d.name in _DT


def _info(d: DType) -> tuple[str, int, str, str, int]:
    info = _DT.get(d.name)
    if info is None:
        raise UnsupportedError(f"wasm backend: dtype {d.name} is not supported")
    return info


def _unsupported(op: Op, d: DType) -> UnsupportedError:
    return UnsupportedError(f"wasm backend: op {op.value} on {d.name} is not supported")


class _Gen:
    """Builds the module for one kernel: the kernel function plus the helpers it calls."""

    def __init__(
        self, kernel: Kernel, simd: bool = True, relaxed: bool = False, shared: bool = False
    ) -> None:
        self.kernel = kernel
        self.use_simd = simd
        self.relaxed = relaxed
        self.shared = shared
        self.scratch_bytes = 0
        self.simd_used = False
        n = kernel.nargs
        self.n = n
        self.f = Func([I32] * (1 + 2 * n + 2), [])
        self.lo, self.hi = 1 + 2 * n, 2 + 2 * n
        self.loc: dict[int, int] = {}  # id(node) -> local
        self.helpers: dict[str, int] = {}  # helper name -> function index
        self.helper_order: list[str] = []
        self._tmp: dict[int, list[int]] = {}

    # -- plumbing ----------------------------------------------------------------------------
    def call(self, name: str) -> None:
        self.f.call(self.helper_index(name))

    def helper_index(self, name: str) -> int:
        idx = self.helpers.get(name)
        if idx is None:
            idx = self.helpers[name] = 1 + len(self.helper_order)
            self.helper_order.append(name)
        return idx

    def tmp(self, vt: int) -> int:
        """A scratch local (reused: emitters finish with a temp before asking for the next)."""
        pool = self._tmp.setdefault(vt, [])
        if not pool:
            pool.append(self.f.local(vt))
        return pool[0]

    def push(self, ref: Ref) -> None:
        f = self.f
        if isinstance(ref, int):
            f.get(ref)
            return
        if ref.op is Op.CONST:
            self.const(ref.arg, ref.dtype)
        else:
            f.get(self.loc[id(ref)])

    def const(self, v: object, d: DType) -> None:
        vt = _info(d)[1]
        if vt == I32:
            self.f.i32(int(v))  # type: ignore[call-overload]
        elif vt == I64:
            self.f.i64(int(v))  # type: ignore[call-overload]
        elif vt == F32:
            self.f.f32(float(v))  # type: ignore[arg-type]
        else:
            self.f.f64(float(v))  # type: ignore[arg-type]

    def normalize(self, d: DType) -> None:
        """Re-canonicalize a wrapped sub-32-bit integer (or bool) on the stack."""
        k, vt, *_ = _info(d)
        if vt != I32 or d.bits == 32:
            return
        if k == "i":
            self.f.op("i32.extend8_s" if d.bits == 8 else "i32.extend16_s")
        elif k == "u":
            self.f.i32(0xFF if d.bits == 8 else 0xFFFF)
            self.f.op("i32.and")
        else:  # bool results are produced as 0/1 already
            pass

    def round_half(self, d: DType) -> None:
        """Round the f32 on the stack to float16/bfloat16 precision (no-op for others)."""
        if d.name == "float16":
            self.call("round_f16")
        elif d.name == "bfloat16":
            self.call("round_bf16")

    # -- the kernel --------------------------------------------------------------------------
    def build(self) -> bytes:
        k, f = self.kernel, self.f
        order = k.exp.toposort()
        dep_i: set[int] = set()
        dep_r: set[int] = set()
        for node in order:
            if node.op is Op.IDX or any(id(s) in dep_i for s in node.src):
                dep_i.add(id(node))
            if node.op is Op.RIDX or (
                node.op is not Op.REDUCE and any(id(s) in dep_r for s in node.src)
            ):
                dep_r.add(id(node))
        for node in order:
            _info(node.dtype)
        red = k.reduction
        self.rplan = self.mplan = None
        if red is not None and self.use_simd:
            self.rplan = wasm_reduce.plan_reduce(red, dep_r)
            if id(red) in dep_i:
                self.mplan = wasm_reduce.plan_matmul(k, red)
        # a float32 sum outside a tiled matmul (whose tiles sum in k order) sums in the vector
        # path's lane order, also in the scalar loop, its lane accumulators in the scratch
        self.lane_u = 0 if red is None or self.mplan is not None else wasm_reduce.lane_unroll(red)
        if self.mplan is not None:
            # one more parameter: scratch memory (scratch_bytes) for packed panels
            self.scratch = len(f.params)
            f.params.append(I32)
            self.scratch_bytes = wasm_reduce.scratch_bytes(self.mplan)
        elif self.lane_u:
            self.scratch = len(f.params)
            f.params.append(I32)
            self.scratch_bytes = 16 * self.lane_u
        self.i = f.local(I32)
        self.r = f.local(I32)
        self.inner = [n for n in order if id(n) in dep_r]
        outer = [n for n in order if id(n) not in dep_r]
        if red is not None and self.use_simd and self.rplan is not None:
            wasm_reduce.prepare_reduce(self, self.rplan)
        # Hoist what depends on neither index out of the element loop.
        for node in outer:
            if id(node) not in dep_i:
                self.emit(node)
        self.loop_hi = self.hi
        blocks = _block_plan(k, order, dep_i) if red is None else None
        if blocks is not None:
            self.build_blocked(outer, dep_i, *blocks)
            return self.finish()
        simd = wasm_simd.plan(k, outer, dep_i) if self.use_simd else None
        self.simd_used = simd is not None or self.rplan is not None or self.mplan is not None
        if self.mplan is not None:
            wasm_reduce.emit_matmul(self, self.mplan)
        f.get(self.lo)
        f.set(self.i)
        if self.mplan is not None:
            self.mcount = wasm_reduce.start_counters(self, self.mplan)
        if simd is not None:
            wasm_simd.emit_main_loop(self, simd)
        f.block("block")
        f.block("loop")
        f.get(self.i)
        f.get(self.hi)
        f.op("i32.ge_u")
        f.br_if(1)
        scalar_loop_nodes = [n for n in outer if id(n) in dep_i]
        saved = dict(self.loc)
        if self.mplan is not None:
            # outputs a tile computed: skip them (or re-read their sums for the epilogue)
            f.block("block")
            wasm_reduce.emit_covered(self, self.mplan, self.mcount)
            if self.mplan.trivial:
                f.br_if(0)
            else:
                self.cov = f.local(I32)
                f.set(self.cov)
        for node in scalar_loop_nodes:
            self.emit(node)
        self.store_output()
        if self.mplan is not None:
            f.end()
            wasm_reduce.step_counters(self, self.mplan, self.mcount)
        self.loc = saved
        f.get(self.i)
        f.i32(1)
        f.op("i32.add")
        f.set(self.i)
        f.br(0)
        f.end()
        f.end()
        return self.finish()

    def build_blocked(self, outer: list[Exp], dep_i: set[int], block: int, inv: set[int]) -> None:
        """The element loop of an elementwise kernel as blocks of `block` consecutive indices
        (the last ones cut at `hi`), over which the nodes in `inv` (functions of IDX / c for
        multiples c of `block`: a channel's parameters, say) are constant: those are computed
        once per block, the rest per element (SIMD main loop, then the scalar tail)."""
        f = self.f
        per_elem = dep_i - inv
        block_nodes = [n for n in outer if id(n) in inv]
        elem_nodes = [n for n in outer if id(n) in per_elem]
        simd = wasm_simd.plan(self.kernel, outer, per_elem) if self.use_simd else None
        self.simd_used = simd is not None
        bend = self.loop_hi = f.local(I32)
        f.get(self.lo)
        f.set(self.i)
        f.block("block")
        f.block("loop")
        f.get(self.i)
        f.get(self.hi)
        f.op("i32.ge_u")
        f.br_if(1)
        # bend = min(hi, (i / block + 1) * block)
        f.get(self.i)
        f.i32(block)
        f.op("i32.div_u")
        f.i32(1)
        f.op("i32.add")
        f.i32(block)
        f.op("i32.mul")
        f.tee(bend)
        f.get(self.hi)
        f.get(bend)
        f.get(self.hi)
        f.op("i32.lt_u", "select")
        f.set(bend)
        saved = dict(self.loc)
        for node in outer:
            if node.op is Op.IDX:
                self.loc[id(node)] = self.i
        for node in block_nodes:  # at the block's first index: the same at all of them
            self.emit(node)
        if simd is not None:
            wasm_simd.emit_main_loop(self, simd)
        f.block("block")
        f.block("loop")
        f.get(self.i)
        f.get(bend)
        f.op("i32.ge_u")
        f.br_if(1)
        inner_saved = dict(self.loc)
        for node in elem_nodes:
            self.emit(node)
        self.store_output()
        self.loc = inner_saved
        f.get(self.i)
        f.i32(1)
        f.op("i32.add")
        f.set(self.i)
        f.br(0)
        f.end()
        f.end()
        self.loc = saved
        f.br(0)
        f.end()
        f.end()

    def finish(self) -> bytes:
        funcs = [self.f]
        i = 0
        while i < len(self.helper_order):  # helpers may request more helpers
            funcs.append(wasm_math.build_helper(self.helper_order[i], self.helper_index))
            i += 1
        return module(funcs, {EXPORT: 0}, shared_max=MAX_PAGES if self.shared else None)

    def store_output(self, value: Ref | None = None, lane: int = 0) -> None:
        """out[i + lane] = value (the kernel's expression by default)."""
        f, k = self.f, self.kernel
        d = k.out_dtype
        _, _, _, store, shift = _info(d)
        f.get(0)
        f.get(self.i)
        if shift:
            f.i32(shift)
            f.op("i32.shl")
        f.op("i32.add")
        self.push(k.exp if value is None else value)
        if d.name == "float16":
            self.call("f32_to_f16")
        elif d.name == "bfloat16":
            f.op("i32.reinterpret_f32")
            f.i32(16)
            f.op("i32.shr_u")
        f.mem(store, offset=lane * d.itemsize)

    def emit(self, node: Exp) -> None:
        """Compute `node` into a fresh local (constants are inlined where used)."""
        op = node.op
        if op is Op.CONST:
            return
        if op is Op.IDX:
            self.loc[id(node)] = self.i
            return
        if op is Op.RIDX:
            self.loc[id(node)] = self.r
            return
        if op is Op.REDUCE:
            self.emit_reduce(node)
            return
        vt = _info(node.dtype)[1]
        self.value(node)
        loc = self.f.local(vt)
        self.f.set(loc)
        self.loc[id(node)] = loc

    def emit_reduce(self, node: Exp) -> None:
        f = self.f
        acc = f.local(_info(node.dtype)[1])
        if self.mplan is not None and not self.mplan.trivial:
            # a tile left this output's sum in out[i]: read it back for the epilogue
            f.get(self.cov)
            f.block("if")
            f.get(0)
            f.get(self.i)
            f.i32(2)
            f.op("i32.shl", "i32.add")
            f.mem("f32.load")
            f.set(acc)
            f.op("else")
            self.reduce_into(node, acc)
            f.end()
        else:
            self.reduce_into(node, acc)
        self.loc[id(node)] = acc

    def reduce_into(self, node: Exp, acc: int) -> None:
        p = self.rplan
        if p is None or p.node is not node:
            self.scalar_reduce(node, acc, 0)
            return
        f = self.f
        f.get(p.ok)
        f.block("if")
        wasm_reduce.emit_reduce(self, p, acc, lambda a, start: self.scalar_reduce(node, a, start))
        f.op("else")
        self.scalar_reduce(node, acc, 0)
        f.end()

    def scalar_reduce(self, node: Exp, acc: int, start: int) -> None:
        """acc = combine(acc, body(r)) for start <= r < size (acc = identity when start == 0);
        from 0, a float32 sum sums in the vector path's lane order (`lane_reduce`)."""
        f = self.f
        combine, rsize = node.arg
        d = node.dtype
        if start == 0 and self.lane_u and node is self.kernel.reduction:
            start = self.lane_reduce(node, acc)
            if start == rsize:
                return
        elif start == 0:
            self.const(scalar.identity(combine, d), d)
            f.set(acc)
        self.r_loop(start, rsize, lambda: self.accumulate(combine, d, acc, node.src[0]))

    def accumulate(self, combine: Op, d: DType, acc: int, body: Exp) -> None:
        self.binary(combine, d, acc, body)
        self.f.set(acc)

    def r_loop(self, start: int, end: int, step: object) -> None:
        """for start <= r < end (start < end): the r-dependent nodes, then step()."""
        f = self.f
        f.i32(start)
        f.set(self.r)
        f.block("loop")
        saved = dict(self.loc)
        for m in self.inner:
            self.emit(m)
        step()  # type: ignore[operator]
        self.loc = saved
        f.get(self.r)
        f.i32(1)
        f.op("i32.add")
        f.tee(self.r)
        f.i32(end)
        f.op("i32.lt_u")
        f.br_if(0)
        f.end()

    def lane_reduce(self, node: Exp, acc: int) -> int:
        """acc = the float32 sum of body(r), r < main, in the vector path's order: r into
        scratch slot r % (4u) (lane r % 4 of accumulator (r // 4) % u), the accumulators
        combined by `combine_tree`, then the lanes 0..3 in order. Returns main (the last whole
        step of 4u), where the r-order tail starts."""
        f, u = self.f, self.lane_u
        rsize = node.arg[1]
        slots = 4 * u
        main = rsize - rsize % slots
        for s in range(slots):
            f.get(self.scratch)
            f.f32(0.0)
            f.mem("f32.store", offset=4 * s)
        addr = f.local(I32)

        def step() -> None:
            f.get(self.scratch)
            f.get(self.r)
            f.i32(slots - 1)
            f.op("i32.and")
            f.i32(2)
            f.op("i32.shl", "i32.add")
            f.tee(addr)
            f.get(addr)
            f.mem("f32.load")
            self.push(node.src[0])
            f.op("f32.add")
            f.mem("f32.store")

        self.r_loop(0, main, step)
        tree = wasm_reduce.combine_tree(u)

        def push_tree(t: object, lane: int) -> None:
            if isinstance(t, tuple):
                push_tree(t[0], lane)
                push_tree(t[1], lane)
                f.op("f32.add")
            else:
                f.get(self.scratch)
                f.mem("f32.load", offset=4 * (4 * t + lane))  # type: ignore[operator]

        for lane in range(4):
            push_tree(tree, lane)
            if lane:
                f.op("f32.add")  # acc + lane
        f.set(acc)
        return main

    # -- one node's value onto the stack ---------------------------------------------------------
    def value(self, node: Exp) -> None:
        op, d = node.op, node.dtype
        if op is Op.LOAD:
            self.load(node)
        elif op is Op.WHERE:
            c, t, e = node.src
            self.push(t)
            self.push(e)
            self.push(c)
            self.f.op("select")
        elif op is Op.CAST:
            self.cast(node.src[0].dtype, d, node.src[0])
        elif op is Op.BITCAST:
            self.bitcast(node.src[0].dtype, d, node.src[0])
        elif len(node.src) == 2:
            self.binary(op, node.src[0].dtype, node.src[0], node.src[1])
        else:
            self.unary(op, node.src[0].dtype, node.src[0])

    def load(self, node: Exp, index: Ref | None = None) -> None:
        """Bounds-safe load of `node` (its own index, or `index`: a local holding one)."""
        f = self.f
        slot = node.arg
        d = node.dtype
        _, _, load, _, shift = _info(d)
        if index is None:
            index = node.src[0]
        ptr, length = 1 + slot, 1 + self.n + slot
        # address = ptr + (in range ? index : 0) << shift; value = in range ? load : 0
        f.get(ptr)
        self.push(index)
        f.i32(0)
        self.push(index)
        f.get(length)
        f.op("i32.lt_u", "select")
        if shift:
            f.i32(shift)
            f.op("i32.shl")
        f.op("i32.add")
        f.mem(load)
        if d.name == "float16":
            self.call("f16_to_f32")
        elif d.name == "bfloat16":
            f.i32(16)
            f.op("i32.shl", "f32.reinterpret_i32")
        self.const(0, d)
        self.push(index)
        f.get(length)
        f.op("i32.lt_u", "select")

    # -- unary ---------------------------------------------------------------------------------
    def unary(self, op: Op, d: DType, x: Ref) -> None:
        kind, vt, *_ = _info(d)
        f = self.f
        p = _P[vt]
        if kind == "b":
            if op is not Op.NOT:
                raise _unsupported(op, d)
            self.push(x)
            f.i32(1)
            f.op("i32.xor")
            return
        if kind == "f":
            self.float_unary(op, d, x)
            return
        if op is Op.NEG:
            self.const(0, d)
            self.push(x)
            f.op(p + ".sub")
            self.normalize(d)
        elif op is Op.NOT:
            self.push(x)
            self.const(-1, d)
            f.op(p + ".xor")
            self.normalize(d)
        elif op is Op.ABS:
            if kind == "u":
                self.push(x)
                return
            self.const(0, d)
            self.push(x)
            f.op(p + ".sub")
            self.push(x)
            self.push(x)
            self.const(0, d)
            f.op(p + ".lt_s", "select")
            self.normalize(d)
        elif op is Op.SIGN:
            self.push(x)
            self.const(0, d)
            if kind == "u":
                f.op(p + ".ne")
            else:
                f.op(p + ".gt_s")
                self.push(x)
                self.const(0, d)
                f.op(p + ".lt_s", "i32.sub")
            if vt == I64:
                f.op("i64.extend_i32_s")
        elif op in (Op.POPCNT, Op.CLZ):
            self.push(x)
            if d.bits < 32:
                f.i32((1 << d.bits) - 1)
                f.op("i32.and")
            f.op(p + (".popcnt" if op is Op.POPCNT else ".clz"))
            if op is Op.CLZ and d.bits < 32:
                f.i32(32 - d.bits)
                f.op("i32.sub")
        else:
            raise _unsupported(op, d)

    def float_unary(self, op: Op, d: DType, x: Ref) -> None:
        f = self.f
        vt = _info(d)[1]
        p = _P[vt]
        simple = {
            Op.NEG: ".neg", Op.ABS: ".abs", Op.FLOOR: ".floor", Op.CEIL: ".ceil",
            Op.ROUND: ".nearest",
        }  # fmt: skip
        if op in simple:
            self.push(x)
            f.op(p + simple[op])
        elif op is Op.SQRT:
            self.push(x)
            f.op(p + ".sqrt")
            self.round_half(d)
        elif op is Op.SIGN:
            # copysign(1, x) for nonzero x; x itself for +-0 and NaN
            self.const(1.0, d)
            self.push(x)
            f.op(p + ".copysign")
            self.push(x)
            self.push(x)
            f.op(p + ".abs")
            self.const(0.0, d)
            f.op(p + ".gt", "select")
        elif op is Op.ISFINITE:
            self.push(x)
            f.op(p + ".abs")
            self.const(float("inf"), d)
            f.op(p + ".lt")
        elif op is Op.NOT or op is Op.POPCNT or op is Op.CLZ:
            raise _unsupported(op, d)
        elif op in _F64_UNARY:
            self.push(x)
            if vt == F32:
                f.op("f64.promote_f32")
            self.call(_NARROW_UNARY.get(op, _F64_UNARY[op]) if vt == F32 else _F64_UNARY[op])
            if vt == F32:
                f.op("f32.demote_f64")
                self.round_half(d)
        else:
            raise _unsupported(op, d)

    # -- binary --------------------------------------------------------------------------------
    def binary(self, op: Op, d: DType, a: Ref, b: Ref) -> None:
        kind, vt, *_ = _info(d)
        f = self.f
        p = _P[vt]
        if kind == "b":
            name = _BOOL_BINARY.get(op)
            if name is None:
                raise _unsupported(op, d)
            self.push(a)
            self.push(b)
            f.op(name)
            return
        if kind == "f":
            self.float_binary(op, d, a, b)
            return
        s = "_s" if kind == "i" else "_u"
        if op in (Op.ADD, Op.SUB, Op.MUL):
            self.push(a)
            self.push(b)
            f.op(p + {Op.ADD: ".add", Op.SUB: ".sub", Op.MUL: ".mul"}[op])
            self.normalize(d)
        elif op in (Op.AND, Op.OR, Op.XOR):
            self.push(a)
            self.push(b)
            f.op(p + {Op.AND: ".and", Op.OR: ".or", Op.XOR: ".xor"}[op])
        elif op in COMPARE:
            self.push(a)
            self.push(b)
            f.op(p + _INT_CMP[op] + ("" if op in (Op.CMPEQ, Op.CMPNE) else s))
        elif op in (Op.MAX, Op.MIN):
            self.push(a)
            self.push(b)
            self.push(a)
            self.push(b)
            f.op(p + (".gt" if op is Op.MAX else ".lt") + s, "select")
        elif op in (Op.DIV, Op.MOD) and self.const_divide(op, d, a, b):
            pass
        elif op is Op.DIV:
            self.int_div(d, a, b)
        elif op is Op.MOD:
            # x % 0 = x; rem_s(INT_MIN, -1) is 0 in wasm (no trap), as in the reference
            self.push(a)
            self.push(a)
            self.safe_divisor(d, b, minus_one=False)
            f.op(p + ".rem" + s)
            self.is_zero(d, b)
            f.op("select")
        elif op in (Op.SHL, Op.SHR, Op.SHRL):
            self.shift(op, d, a, b)
        else:
            raise _unsupported(op, d)

    def const_divide(self, op: Op, d: DType, a: Ref, b: Ref) -> bool:
        """a / c or a % c for a constant c that cannot trap (not 0, not -1 for a full-width
        signed DIV): plain div/rem, which engines strength-reduce to multiplies and shifts
        (index arithmetic is full of these). Unsigned ops where `a` is proven non-negative."""
        if isinstance(b, int) or b.op is not Op.CONST:
            return False
        kind, vt, *_ = _info(d)
        c = int(b.arg)
        if c == 0 or (op is Op.DIV and c == -1 and kind == "i" and d.bits in (32, 64)):
            return False
        vr = None if isinstance(a, int) else a.vrange
        unsigned = kind == "u" or (c > 0 and vr is not None and vr[0] >= 0)
        self.push(a)
        self.const(c, d)
        self.f.op(_P[vt] + (".div" if op is Op.DIV else ".rem") + ("_u" if unsigned else "_s"))
        if op is Op.DIV:
            self.normalize(d)
        return True

    def is_zero(self, d: DType, b: Ref) -> None:
        self.push(b)
        self.f.op(_P[_info(d)[1]] + ".eqz")

    def safe_divisor(self, d: DType, b: Ref, minus_one: bool) -> None:
        """b, or 1 where b == 0 (and, for full-width signed, where b == -1)."""
        f = self.f
        p = _P[_info(d)[1]]
        self.const(1, d)
        self.push(b)
        if minus_one:
            self.push(b)
            self.const(1, d)
            f.op(p + ".add")
            self.const(2, d)
            f.op(p + ".lt_u")  # b in {-1, 0}
        else:
            self.push(b)
            f.op(p + ".eqz")
        f.op("select")

    def int_div(self, d: DType, a: Ref, b: Ref) -> None:
        kind, vt, *_ = _info(d)
        f = self.f
        p = _P[vt]
        full_signed = kind == "i" and d.bits in (32, 64)
        # x / 0 = -1; INT_MIN / -1 = INT_MIN (= -x with wrap); smaller types cannot trap
        self.const(-1, d)
        if full_signed:
            self.const(0, d)
            self.push(a)
            f.op(p + ".sub")
            self.push(a)
            self.safe_divisor(d, b, minus_one=True)
            f.op(p + ".div_s")
            self.push(b)
            self.const(-1, d)
            f.op(p + ".eq", "select")
        else:
            self.push(a)
            self.safe_divisor(d, b, minus_one=False)
            f.op(p + (".div_s" if kind == "i" else ".div_u"))
        self.is_zero(d, b)
        f.op("select")
        self.normalize(d)

    def shift(self, op: Op, d: DType, a: Ref, b: Ref) -> None:
        kind, vt, *_ = _info(d)
        f = self.f
        p = _P[vt]
        width = 64 if vt == I64 else 32
        # value for out-of-range counts (s < 0 or s >= bits, i.e. unsigned s >= bits)
        if op is Op.SHR and kind == "i":
            self.push(a)
            self.const(width - 1, d)
            f.op(p + ".shr_s")
        else:
            self.const(0, d)
        self.push(a)
        if op is not Op.SHL and not (op is Op.SHR and kind == "i") and d.bits < width:
            self.const((1 << d.bits) - 1, d)
            f.op(p + ".and")
        self.push(b)
        if op is Op.SHL:
            f.op(p + ".shl")
        elif op is Op.SHR and kind == "i":
            f.op(p + ".shr_s")
        else:
            f.op(p + ".shr_u")
        self.push(b)
        self.const(d.bits, d)
        f.op(p + ".ge_u", "select")
        self.normalize(d)

    def float_binary(self, op: Op, d: DType, a: Ref, b: Ref) -> None:
        f = self.f
        vt = _info(d)[1]
        p = _P[vt]
        if op in _FLOAT_ARITH:
            self.push(a)
            self.push(b)
            f.op(p + _FLOAT_ARITH[op])
            if op not in (Op.MAX, Op.MIN):
                self.round_half(d)
        elif op in COMPARE:
            self.push(a)
            self.push(b)
            f.op(p + _FLOAT_CMP[op])
        elif op is Op.NEXTAFTER:
            self.push(a)
            self.push(b)
            if d.name in _HALF:
                self.call("nextafter_f16" if d.name == "float16" else "nextafter_bf16")
            else:
                self.call("nextafter_" + p)
        elif op in _F64_BINARY:
            self.push(a)
            if vt == F32:
                f.op("f64.promote_f32")
            self.push(b)
            if vt == F32:
                f.op("f64.promote_f32")
            self.call(_F64_BINARY[op])
            if vt == F32:
                f.op("f32.demote_f64")
                self.round_half(d)
        else:
            raise _unsupported(op, d)

    # -- conversions -----------------------------------------------------------------------------
    def cast(self, s: DType, d: DType, x: Ref) -> None:
        f = self.f
        sk, svt, *_ = _info(s)
        dk, dvt, *_ = _info(d)
        self.push(x)
        if dk == "b":
            self.const(0, s)
            f.op(_P[svt] + ".ne")
            return
        if dk in "iu":
            if sk == "f":
                self.float_to_int(s, d)
            elif svt == I64 and dvt == I32:
                f.op("i32.wrap_i64")
                self.normalize(d)
            elif svt == I32 and dvt == I64:
                f.op("i64.extend_i32_u" if s.name == "uint32" else "i64.extend_i32_s")
            elif dvt == I32:
                self.normalize(d)
            return
        # to float
        if sk != "f":
            if svt == I64:
                # the reference rounds through float64 first: do the same
                f.op("f64.convert_i64_u" if sk == "u" else "f64.convert_i64_s")
                if dvt == F32:
                    self.f64_to_f32_class(d)
                return
            conv = "_u" if s.name == "uint32" else "_s"
            f.op(_P[dvt] + ".convert_i32" + conv)
            self.round_half(d)
            return
        if svt == F64 and dvt == F32:
            self.f64_to_f32_class(d)
        elif svt == F32 and dvt == F64:
            f.op("f64.promote_f32")
        elif d.name in _HALF:
            self.round_half(d)

    def f64_to_f32_class(self, d: DType) -> None:
        if d.name == "float16":
            self.call("f64_to_f16val")  # one rounding, straight from float64
        else:
            self.f.op("f32.demote_f64")
            self.round_half(d)

    def float_to_int(self, s: DType, d: DType) -> None:
        f = self.f
        svt = _info(s)[1]
        dk, dvt, *_ = _info(d)
        sp = _P[svt]
        sign = "_s" if dk == "i" else "_u"
        f.op(f"{_P[dvt]}.trunc_sat_{sp}{sign}")
        if d.bits >= 32:
            return
        lo, hi = -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1
        if dk == "u":
            lo, hi = 0, (1 << d.bits) - 1
        t = self.tmp(I32)
        f.set(t)
        if dk == "i":  # clamp to [lo, hi] (trunc_sat already did the int32 range and NaN)
            f.i32(lo)
            f.get(t)
            f.get(t)
            f.i32(lo)
            f.op("i32.lt_s", "select")
            f.set(t)
        f.i32(hi)
        f.get(t)
        f.get(t)
        f.i32(hi)
        f.op("i32.gt_s" if dk == "i" else "i32.gt_u", "select")

    def bitcast(self, s: DType, d: DType, x: Ref) -> None:
        f = self.f
        _sk, svt, *_ = _info(s)
        dk, dvt, *_ = _info(d)
        self.push(x)
        if s.itemsize == 1:
            if dk == "b":
                f.i32(0)
                f.op("i32.ne")
            else:
                self.normalize(d)
            return
        if s.itemsize == 2:
            # to raw 16 bits
            if s.name == "float16":
                self.call("f32_to_f16")
            elif s.name == "bfloat16":
                f.op("i32.reinterpret_f32")
                f.i32(16)
                f.op("i32.shr_u")
            else:
                f.i32(0xFFFF)
                f.op("i32.and")
            if d.name == "float16":
                self.call("f16_to_f32")
            elif d.name == "bfloat16":
                f.i32(16)
                f.op("i32.shl", "f32.reinterpret_i32")
            else:
                self.normalize(d)
            return
        if svt == dvt:
            return
        f.op(
            {
                (F32, I32): "i32.reinterpret_f32",
                (I32, F32): "f32.reinterpret_i32",
                (F64, I64): "i64.reinterpret_f64",
                (I64, F64): "f64.reinterpret_i64",
            }[(svt, dvt)]
        )


_BOOL_BINARY = {
    Op.AND: "i32.and", Op.MIN: "i32.and", Op.MUL: "i32.and",
    Op.OR: "i32.or", Op.MAX: "i32.or", Op.ADD: "i32.or",
    Op.XOR: "i32.xor", Op.CMPNE: "i32.xor", Op.CMPEQ: "i32.eq",
    Op.CMPLT: "i32.lt_u", Op.CMPLE: "i32.le_u",
}  # fmt: skip
_INT_CMP = {Op.CMPLT: ".lt", Op.CMPLE: ".le", Op.CMPEQ: ".eq", Op.CMPNE: ".ne"}
_FLOAT_CMP = {Op.CMPLT: ".lt", Op.CMPLE: ".le", Op.CMPEQ: ".eq", Op.CMPNE: ".ne"}
_FLOAT_ARITH = {
    Op.ADD: ".add", Op.SUB: ".sub", Op.MUL: ".mul", Op.DIV: ".div", Op.MAX: ".max", Op.MIN: ".min",
}  # fmt: skip


def generate(kernel: Kernel, *, simd: bool = True, relaxed: bool = False) -> bytes:
    """The module bytes for `kernel` (see the module docstring for the export's signature).

    `relaxed`: the engine validates relaxed SIMD (`relaxed_probe()`), so tiled matmuls may use
    `f32x4.relaxed_madd` (fused or not, as the engine likes: within float tolerance either way).
    """
    return _Gen(kernel, simd, relaxed).build()


# Blocks of fewer indices than this are not worth the per-block setup.
MIN_BLOCK = 16


def _block_plan(k: Kernel, order: list[Exp], dep_i: set[int]) -> tuple[int, set[int]] | None:
    """(block, nodes constant over each block) for an elementwise kernel whose index is
    divided by constants (IDX / c): the block is the c (at least MIN_BLOCK, below the size)
    that the most such divisors are multiples of, and a node is constant over a block when
    it reaches IDX only through those divisions (IDX / c is constant over an aligned block of
    a divisor of c). None when nothing but the divisions themselves would be (no gain)."""
    divs = [
        int(n.src[1].arg)
        for n in order
        if n.op is Op.DIV and n.src[0].op is Op.IDX and n.src[1].is_const and n.dtype.bits == 32
    ]
    cands = {c for c in divs if MIN_BLOCK <= c < k.size}
    if not cands:
        return None
    block = max(cands, key=lambda c: (sum(1 for d in divs if d % c == 0), c))
    inv: set[int] = set()
    for n in order:
        if id(n) not in dep_i or n.op is Op.IDX:
            continue
        if n.op is Op.DIV and n.src[0].op is Op.IDX and n.src[1].is_const:
            if int(n.src[1].arg) % block == 0 and n.dtype.bits == 32:
                inv.add(id(n))
        elif all(id(s) not in dep_i or id(s) in inv for s in n.src):
            inv.add(id(n))
    if not any(n.op is not Op.DIV for n in order if id(n) in inv):
        return None
    if id(k.exp) in inv:  # the output itself is constant per block: a broadcast (stores only)
        return None
    return block, inv


class Module(NamedTuple):
    """A generated kernel module and what running it needs.

    `scratch` > 0: the export takes one more i32 parameter after `hi`, a byte offset of that
    many bytes of 16-byte aligned scratch memory (one block per concurrent call). `rows`:
    (M, N, MR, Mfull) of a register-tiled matmul, whose tiles only run on ranges cut at tile
    rows (see `split`)."""

    wasm: bytes
    scratch: int
    rows: tuple[int, int, int, int] | None


def generate_module(
    kernel: Kernel, *, simd: bool = True, relaxed: bool = False, shared: bool = False
) -> Module:
    """`generate`, with the scratch size and split constraints. `shared`: the module imports a
    shared memory (limits 0..MAX_PAGES, the threads proposal), as a worker pool needs."""
    gen = _Gen(kernel, simd, relaxed, shared)
    wasm = gen.build()
    mp = gen.mplan
    rows = None if mp is None else (mp.M, mp.N, mp.MR, mp.Mfull)
    return Module(wasm, gen.scratch_bytes, rows)


def generate_ex(kernel: Kernel, *, simd: bool = True, relaxed: bool = False) -> tuple[bytes, int]:
    """(module bytes, scratch bytes): see `Module`."""
    m = generate_module(kernel, simd=simd, relaxed=relaxed)
    return m.wasm, m.scratch


def split(size: int, parts: int, rows: tuple[int, int, int, int] | None) -> list[int]:
    """Cut points 0 = c_0 < c_1 < ... < c_k = size (k <= parts) dividing [0, size) into near
    equal ranges for concurrent calls: at multiples of 16 elements (whole cache lines and SIMD
    vectors), and for a tiled matmul (`rows` = (M, N, MR, Mfull)) at tile rows of a batch
    (a multiple of MR rows, Mfull, or a batch boundary) so that every range keeps its tiles."""
    cuts = [0]
    for j in range(1, parts):
        t = size * j / parts
        if rows is None:
            c = round(t / 16) * 16
        else:
            M, N, MR, Mfull = rows
            g = t / N
            bt = int(g // M)
            m = g - bt * M
            cands = [*range(0, Mfull + 1, MR), Mfull, M]
            c = (bt * M + min(cands, key=lambda x: abs(x - m))) * N
        if cuts[-1] < c < size:
            cuts.append(c)
    cuts.append(size)
    return cuts


def relaxed_probe() -> bytes:
    """A tiny module using f32x4.relaxed_madd: engines that validate it have relaxed SIMD."""
    f = Func([], [V128])
    for _ in range(3):
        f.f32(1.0)
        f.op("f32x4.splat")
    f.op("f32x4.relaxed_madd")
    return module([f], {EXPORT: 0})


def helper_calls(kernel: Kernel) -> int:
    """How many float64 helper functions (transcendentals, fmod, pow) an element computes."""
    ops = _F64_UNARY.keys() | _F64_BINARY.keys()
    return sum(1 for n in kernel.exp.toposort() if n.op in ops and n.dtype.kind == "f")


def uses_simd(kernel: Kernel) -> bool:
    """Whether generate() gives `kernel` a SIMD main loop (for tests and profiling)."""
    gen = _Gen(kernel)
    gen.build()
    return gen.simd_used
