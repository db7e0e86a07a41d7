"""Kernel expressions as WGSL: how each dtype is stored and computed, the helper prelude, ops,
and the `let` lines and functions (`value`, loaders) that evaluate an expression.

Every buffer is bound as `array<u32>` (or `array<vec4<u32>>` where lanes read it four words at
a time): 32-bit dtypes are bitcast words, sub-32-bit dtypes are packed little-endian (4
bool/int8/uint8 or 2 int16/uint16/float16/bfloat16 per word). Each
invocation writes whole output words, so packed outputs have no write races. Values live in a
"compute type" per dtype (bool, i32, u32 or f32); narrow ints are re-wrapped after ops that can
leave their range; float16/bfloat16 are f32 values rounded to the format after every op (exact
for + - * / and sqrt, as f32 has > 2p+2 bits), so no optional feature is needed and f16
subnormals survive GPUs that flush f32 subnormals.
Where the device has `shader-f16` and the start-up `probe_f16` finds its f16 <-> f32
conversions exact (subnormals, the largest finite value, infinities, -0, NaN payloads on load;
stored NaNs need only keep their sign), `limits["f16"]` binds float16 buffers as `array<f16>`
(`array<vec4<f16>>` where lanes load or store four) behind `enable f16;`: loads are `f32(x)`,
stores `f16(v)` of a v already rounded by round_f16, so exact however the device rounds; the
compute stays f32. Each invocation then writes single f16 elements (one output element per
"word"). That is race-free: in WGSL memory locations are bytes and "a memory operation accesses
exactly the set of locations associated with the particular memory view used" (Memory Model,
mapped to the Vulkan memory model), so a store to an f16 element touches its 2 bytes only and
stores to neighbouring elements by other invocations do not conflict; the implementation must
honour that even where the hardware writes 32-bit words. (WGSL notes that a write to one
*component* of a vector may access the whole vector: f16 outputs are written as whole f16
elements or whole vec4<f16>s, never by component.)
Drivers are not IEEE-strict (checked on lavapipe, NVIDIA's Vulkan driver and SwiftShader): they
may assume no NaN, fold x*0 -> 0 and x+0 -> x, re-associate (a/b + r/b -> (a+r)/b), divide
through a reciprocal and flush subnormals (WebGPU allows the last). So NaN-sensitive ops are
bit tests, float arithmetic goes through an optimization barrier (`fb`, wgsl_math), division
is corrected to be correctly rounded (unless the start-up `probe` finds the device's own
division and sqrt exact), and transcendentals come from wgsl_libm / wgsl_special.
"""

from __future__ import annotations

import struct
from typing import Any

from ... import dtypes as dt
from ...dtypes import DType
from ...ir.exp import Exp
from ...ir.kernel import Kernel
from ...ir.ops import Op
from . import math as wgsl_math

LANES = 4  # consecutive indices per invocation in vectorized kernels (one vec4; _Scope)

# compute type per dtype; dtypes missing here are not supported by this codegen
_CT = {
    "bool": "bool",
    "int8": "i32",
    "int16": "i32",
    "int32": "i32",
    "uint8": "u32",
    "uint16": "u32",
    "uint32": "u32",
    "float16": "f32",
    "bfloat16": "f32",
    "float32": "f32",
}


class WgslUnsupported(NotImplementedError):
    """The kernel uses an op or dtype the webgpu codegen cannot render."""


def _unsupported(op: Op, d: DType) -> WgslUnsupported:
    return WgslUnsupported(f"op '{op.value}' on {d.name} is not implemented by the webgpu backend")


# ---- helpers: the prelude holds only the helpers a kernel uses ---------------------------------
class _Prelude:
    def __init__(self, limits: dict[str, int] | None = None) -> None:
        self.names: list[str] = []
        # ops that the device does exactly itself (probe) call its builtins directly
        lim = limits or {}
        self.f16 = bool(lim.get("f16"))  # float16 buffers bound as f16 (shader-f16, probe_f16)
        self.enable_f16 = False  # a binding is f16: the shader starts with `enable f16;`
        self.alias = {
            name: fast
            for flag, name, fast in (
                ("exact_div", "f_div", "f_div_hw"),
                ("exact_sqrt", "m_sqrt", "m_sqrt_hw"),
            )
            if lim.get(flag)
        }

    def need(self, name: str) -> str:
        for dep in wgsl_math.DEPS.get(name, ()):
            self.need(dep)
        if name not in self.names:
            self.names.append(name)
        return name

    def source(self) -> str:
        return "\n".join(wgsl_math.HELPERS[n] for n in self.names)

    def header(self) -> list[str]:
        """Directives that open the shader (after its bindings were declared)."""
        return ["enable f16;", ""] if self.enable_f16 else []


# ---- constants ---------------------------------------------------------------------------------
def _f32_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def const_expr(value: object, d: DType, pre: _Prelude | None = None) -> str:
    """A WGSL literal; with `pre`, float literals go through the optimization barrier."""
    ct = _CT[d.name]
    if ct == "f32" and pre is not None:
        bits = _f32_bits(float(value))  # type: ignore[arg-type]
        if (bits >> 23) & 0xFF == 0xFF:  # inf/NaN: Tint rejects them as constants
            return f"bitcast<f32>(0x{bits:08x}u | {pre.need('opq')})"
        return f"{pre.need('fb')}({const_expr(value, d)})"
    if ct == "bool":
        return "true" if value else "false"
    if ct == "u32":
        return f"{int(value) & 0xFFFFFFFF}u"  # type: ignore[call-overload]
    if ct == "i32":
        v = int(value)  # type: ignore[call-overload]
        if v == -(2**31):
            return "bitcast<i32>(0x80000000u)"  # the literal 2147483648i does not exist
        return f"{v}i" if v >= 0 else f"({v}i)"
    bits = _f32_bits(float(value))  # type: ignore[arg-type]
    x = struct.unpack("<f", struct.pack("<I", bits))[0]
    exp_field = (bits >> 23) & 0xFF
    text = repr(x)
    if 0 < exp_field < 0xFF and float(text) == x and len(text) <= 12:
        return f"{text}f" if x >= 0 else f"({text}f)"
    if bits == 0:
        return "0.0f"
    return f"bitcast<f32>(0x{bits:08x}u)"  # inf, nan, -0, subnormals, long mantissas


# ---- bits <-> values --------------------------------------------------------------------------
def to_bits(d: DType, x: str, pre: _Prelude) -> str:
    """u32 holding the dtype's bit pattern in its low bits (upper bits zero)."""
    n = d.name
    if n == "bool":
        return f"select(0u, 1u, {x})"
    if n in ("int8", "int16"):
        return f"(bitcast<u32>({x}) & {_mask(d)}u)"
    if n == "int32":
        return f"bitcast<u32>({x})"
    if n in ("uint8", "uint16", "uint32"):
        return x
    if n == "float32":
        return f"bitcast<u32>({x})"
    if n == "float16":
        return f"{pre.need('f32_to_f16')}({x})"
    if n == "bfloat16":
        return f"(bitcast<u32>({x}) >> 16u)"
    raise AssertionError(n)


def from_bits(d: DType, u: str, pre: _Prelude) -> str:
    """Value of dtype `d` from a u32 whose low bits hold it (upper bits may be garbage)."""
    n = d.name
    if n == "bool":
        return f"(({u} & 0xffu) != 0u)"
    if n == "int8":
        return f"(bitcast<i32>({u} << 24u) >> 24u)"
    if n == "int16":
        return f"(bitcast<i32>({u} << 16u) >> 16u)"
    if n == "int32":
        return f"bitcast<i32>({u})"
    if n in ("uint8", "uint16"):
        return f"({u} & {_mask(d)}u)"
    if n == "uint32":
        return u
    if n == "float32":
        return f"bitcast<f32>({u})"
    if n == "float16":
        return f"{pre.need('f16_to_f32')}({u} & 0xffffu)"
    if n == "bfloat16":
        return f"bitcast<f32>({u} << 16u)"
    raise AssertionError(n)


# ---- storage elements: u32 words, or f16 where the device has shader-f16 ------------------------
def native_f16(d: DType, pre: _Prelude) -> bool:
    """Whether buffers of `d` are bound as f16 elements (float16 with limits["f16"])."""
    return pre.f16 and d is dt.float16


def elem_type(d: DType, pre: _Prelude, vec: bool = False) -> str:
    """WGSL element type of a binding that holds `d` (vec: four elements or words at a time)."""
    if native_f16(d, pre):
        pre.enable_f16 = True
        return "vec4<f16>" if vec else "f16"
    return "vec4<u32>" if vec else "u32"


def from_elem(d: DType, e: str, pre: _Prelude) -> str:
    """Value of dtype `d` from a storage element: an f16 (exact in f32) or a word's low bits."""
    return f"f32({e})" if native_f16(d, pre) else from_bits(d, e, pre)


def to_elem(d: DType, x: str, pre: _Prelude) -> str:
    """A value of dtype `d` as a storage element. f16(x) is exact: every float16 value is an f32
    rounded to the format (round_f16) and so representable, whatever way the device rounds."""
    return f"f16({x})" if native_f16(d, pre) else to_bits(d, x, pre)


def per_word(d: DType, limits: dict[str, int]) -> int:
    """Output elements per invocation-owned store: packed narrow dtypes fill whole words."""
    if d is dt.float16 and limits.get("f16"):
        return 1
    return 4 // d.itemsize


def _mask(d: DType) -> str:
    return hex((1 << d.bits) - 1)


def _wrap(d: DType, x: str) -> str:
    """Re-wrap an i32/u32 result into a narrow int dtype (two's complement)."""
    n = d.name
    if n == "int8":
        return f"(({x} << 24u) >> 24u)"
    if n == "int16":
        return f"(({x} << 16u) >> 16u)"
    if n in ("uint8", "uint16"):
        return f"(({x}) & {_mask(d)}u)"
    return x


def _round(d: DType, x: str, pre: _Prelude) -> str:
    """Round an f32 result to the float dtype's format."""
    if d is dt.float16:
        return f"{pre.need('round_f16')}({x})"
    if d is dt.bfloat16:
        return f"{pre.need('round_bf16')}({x})"
    return x


# ---- op rendering -------------------------------------------------------------------------------
_FLOAT_UNARY = {  # op -> helper in wgsl_math (f32 -> f32)
    Op.SQRT: "m_sqrt", Op.RSQRT: "m_rsqrt", Op.CBRT: "m_cbrt", Op.EXP: "m_exp",
    Op.EXP2: "m_exp2", Op.EXPM1: "m_expm1", Op.LOG: "m_log", Op.LOG1P: "m_log1p",
    Op.SIN: "m_sin", Op.COS: "m_cos", Op.TAN: "m_tan", Op.ASIN: "m_asin", Op.ACOS: "m_acos",
    Op.ATAN: "m_atan", Op.SINH: "m_sinh", Op.COSH: "m_cosh", Op.TANH: "m_tanh",
    Op.ASINH: "m_asinh", Op.ACOSH: "m_acosh", Op.ATANH: "m_atanh", Op.LOGISTIC: "m_logistic",
    Op.ERF: "m_erf", Op.ERFC: "m_erfc", Op.ERF_INV: "m_erfinv", Op.LGAMMA: "m_lgamma",
    Op.DIGAMMA: "m_digamma", Op.SIGN: "f_sign",
}  # fmt: skip
_FLOAT_BINARY = {Op.MOD: "f_fmod", Op.MAX: "f_max", Op.MIN: "f_min", Op.POW: "m_pow",
                 Op.ATAN2: "m_atan2", Op.NEXTAFTER: "f_nextafter"}  # fmt: skip
_FLOAT_CMP = {Op.CMPLT: "f_lt", Op.CMPLE: "f_le", Op.CMPEQ: "f_eq", Op.CMPNE: "f_ne"}
_INFIX = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.AND: "&", Op.OR: "|", Op.XOR: "^"}
_CMP = {Op.CMPLT: "<", Op.CMPLE: "<=", Op.CMPEQ: "==", Op.CMPNE: "!="}
_BOOL = {
    Op.AND: "({a} & {b})", Op.MIN: "({a} & {b})", Op.MUL: "({a} & {b})",
    Op.OR: "({a} | {b})", Op.MAX: "({a} | {b})", Op.ADD: "({a} | {b})",
    Op.XOR: "({a} != {b})", Op.CMPNE: "({a} != {b})", Op.CMPEQ: "({a} == {b})",
    Op.CMPLT: "(!{a} & {b})", Op.CMPLE: "(!{a} | {b})",
}  # fmt: skip


def render_op(op: Op, d: DType, sd: DType, args: list[str], pre: _Prelude) -> str:
    """WGSL expression for `op` with result dtype `d`, operand dtype `sd`."""
    if op is Op.WHERE:
        return f"select({args[2]}, {args[1]}, {args[0]})"
    if op is Op.CAST:
        return _cast(sd, d, args[0], pre)
    if op is Op.BITCAST:
        return from_bits(d, to_bits(sd, args[0], pre), pre)
    kind = sd.kind
    if kind == "b":
        if op is Op.NOT:
            return f"(!{args[0]})"
        if op in _BOOL:
            return _BOOL[op].format(a=args[0], b=args[1])
        raise _unsupported(op, sd)
    if kind == "f":
        return _float_op(op, d, sd, args, pre)
    return _int_op(op, d, sd, args, pre)


def _float_op(op: Op, d: DType, sd: DType, a: list[str], pre: _Prelude) -> str:
    if op in _FLOAT_CMP:
        return f"{pre.need(_FLOAT_CMP[op])}({a[0]}, {a[1]})"
    if op is Op.ISFINITE:
        return f"{pre.need('f_isfinite')}({a[0]})"
    if op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV):
        # The barrier stops fma contraction and reassociation across ops; x - x must not
        # become 0 (inf - inf is NaN): the same operand twice gets a second, distinct barrier.
        y = f"{pre.need('fb2')}({a[1]})" if a[0] == a[1] else a[1]
        if op is Op.DIV:  # correctly rounded even where the GPU divides approximately
            div = pre.alias.get("f_div", "f_div")
            return _round(d, f"{pre.need(div)}({a[0]}, {y})", pre)
        return _round(d, f"{pre.need('fb')}({a[0]} {_INFIX[op]} {y})", pre)
    if op is Op.NEG:  # behind the barrier: x + (-x) must not become 0 either (inf + -inf)
        return f"{pre.need('fb')}(-{a[0]})"
    if op is Op.ABS:
        return f"bitcast<f32>(bitcast<u32>({a[0]}) & 0x7fffffffu)"
    if op in (Op.FLOOR, Op.CEIL, Op.ROUND):
        return f"{pre.need('f_' + op.value)}({a[0]})"
    if op is Op.NEXTAFTER:  # steps are per format
        name = {"float32": "f_nextafter", "float16": "f_nextafter_f16"}.get(d.name)
        return f"{pre.need(name or 'f_nextafter_bf16')}({a[0]}, {a[1]})"
    if op in _FLOAT_BINARY:
        return _round(d, f"{pre.need(_FLOAT_BINARY[op])}({a[0]}, {a[1]})", pre)
    if op in _FLOAT_UNARY:
        name = _FLOAT_UNARY[op]
        if name not in wgsl_math.HELPERS:
            raise _unsupported(op, d)
        return _round(d, f"{pre.need(pre.alias.get(name, name))}({a[0]})", pre)
    raise _unsupported(op, d)


def _int_op(op: Op, d: DType, sd: DType, a: list[str], pre: _Prelude) -> str:
    signed = sd.kind == "i"
    ct = "i32" if signed else "u32"
    bits = sd.bits
    x = a[0]
    if op in _CMP:
        return f"({x} {_CMP[op]} {a[1]})"
    if op in _INFIX:
        return _wrap(d, f"({x} {_INFIX[op]} {a[1]})")
    if op is Op.NEG:
        return _wrap(d, f"(0{'' if signed else 'u'} - {x})")
    if op is Op.NOT:
        return _wrap(d, f"(~{x})")
    if op in (Op.MAX, Op.MIN):
        return f"{op.value}({x}, {a[1]})"
    if op is Op.DIV:
        return _wrap(d, f"{pre.need('idiv_' + ct)}({x}, {a[1]})")
    if op is Op.MOD:
        return f"{pre.need('imod_' + ct)}({x}, {a[1]})"
    if op is Op.ABS:
        return _wrap(d, f"select({x}, 0 - {x}, {x} < 0)") if signed else x
    if op is Op.SIGN:
        if signed:
            return f"select(select(0, -1, {x} < 0), 1, {x} > 0)"
        return f"select(0u, 1u, {x} > 0u)"
    if op is Op.POPCNT:
        return f"{ct}(countOneBits({to_bits(sd, x, pre)}))"
    if op is Op.CLZ:
        return f"{ct}(countLeadingZeros({to_bits(sd, x, pre)}) - {32 - bits}u)"
    if op not in (Op.SHL, Op.SHR, Op.SHRL):
        raise _unsupported(op, sd)
    sh_ok = f"({a[1]} >= 0 && {a[1]} < {bits})" if signed else f"({a[1]} < {bits}u)"
    # masked: the select discards out-of-range shifts, but a constant amount past the width
    # would not compile (WGSL rejects `x << 65535u` even in a branch never taken)
    sh = f"(u32({a[1]}) & 31u)" if signed else f"({a[1]} & 31u)"
    if op is Op.SHL:
        return _wrap(d, f"select({ct}(0), {x} << {sh}, {sh_ok})")
    if op is Op.SHR and signed:
        return f"select(select(0, -1, {x} < 0), {x} >> {sh}, {sh_ok})"
    if op in (Op.SHR, Op.SHRL):
        if not signed:
            return f"select(0u, {x} >> {sh}, {sh_ok})"
        ux = to_bits(sd, x, pre)
        return _wrap(d, f"bitcast<i32>(select(0u, {ux} >> {sh}, {sh_ok}))")
    raise _unsupported(op, sd)


def _cast(sd: DType, d: DType, x: str, pre: _Prelude) -> str:
    if sd is d:
        return x
    if d.kind == "b":
        if sd.kind == "f":  # NaN != 0 is true; -0.0 == 0
            return f"((bitcast<u32>({x}) & 0x7fffffffu) != 0u)"
        return f"({x} != {_CT[sd.name]}(0))"
    ct = _CT[d.name]
    if d.kind == "f":
        if sd.kind == "b":
            return f"select(0.0f, 1.0f, {x})"
        v = x if sd.kind == "f" else f"f32({x})"
        return _round(d, v, pre)
    # to an integer dtype
    if sd.kind == "b":
        return f"select({ct}(0), {ct}(1), {x})"
    if sd.kind == "f":
        lo, hi = dt.iinfo_bounds(d)
        # NaN -> 0, saturate at the bounds (exact in f32), truncate inside them
        nan = pre.need("f_isnan")
        # (int32/uint32 maxima round up to 2**31 / 2**32 in f32: `>=` stays exact)
        fhi, flo = const_expr(float(hi), dt.float32), const_expr(float(lo), dt.float32)
        conv = f"select({ct}({x}), {const_expr(hi, d)}, {x} >= {fhi})"
        conv = f"select({conv}, {const_expr(lo, d)}, {x} <= {flo})"
        return f"select({conv}, {ct}(0), {nan}({x}))"
    # int -> int: reinterpret the 32-bit pattern, then wrap to the target width
    v = x if _CT[sd.name] == ct else f"bitcast<{ct}>({x})"
    return _wrap(d, v)


# ---- expressions -------------------------------------------------------------------------------
def _load_fn(slot: int, d: DType, pre: _Prelude, vec: bool = False) -> str:
    ct = _CT[d.name]
    if native_f16(d, pre):  # bound as array<f16> or array<vec4<f16>>
        e = f"in{slot}[u32(k) >> 2u][u32(k) & 3u]" if vec else f"in{slot}[u32(k)]"
        return f"fn ld{slot}(k: i32) -> f32 {{ return {from_elem(d, e, pre)}; }}"
    if vec:  # bound as array<vec4<u32>> (32-bit dtypes only)
        word = f"in{slot}[u32(k) >> 2u][u32(k) & 3u]"
    elif d.itemsize == 4:
        word = f"in{slot}[u32(k)]"
    elif d.itemsize == 2:
        word = f"(in{slot}[u32(k) >> 1u] >> ((u32(k) & 1u) * 16u))"
    else:
        word = f"(in{slot}[u32(k) >> 2u] >> ((u32(k) & 3u) * 8u))"
    # Out-of-range k: WebGPU's robust buffer access clamps or yields 0, never faults.
    return f"fn ld{slot}(k: i32) -> {ct} {{ return {from_bits(d, word, pre)}; }}"


class _Scope:
    """Names of emitted values in one WGSL function: shared ones, and per lane (lanes mode)."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.lanes: list[dict[int, str]] = [{} for _ in range(LANES)]
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"t{self.count - 1}"

    def lane(self, node: Exp, j: int) -> str:
        return self.names.get(id(node)) or self.lanes[j][id(node)]


def _node_expr(node: Exp, args: list[str], pre: _Prelude) -> str:
    op = node.op
    if op is Op.CONST:
        return const_expr(node.arg, node.dtype, pre)
    if op is Op.IDX:
        return "i"
    if op is Op.RIDX:
        return "r"
    if op is Op.LOAD:
        return f"ld{node.arg}({args[0]})"
    if op in (Op.DIV, Op.MOD) and node.dtype.kind in "iu" and node.src[1].is_const:
        # index math: a non-negative value by a positive constant needs none of idiv's
        # sign and zero handling, and unsigned division by a constant is a multiply
        k, rng = int(node.src[1].arg), node.src[0].vrange
        if k > 0 and rng is not None and rng[0] >= 0:
            sym = "/" if op is Op.DIV else "%"
            if _CT[node.dtype.name] == "i32":
                return f"i32(u32({args[0]}) {sym} {k}u)"
            return f"({args[0]} {sym} {k}u)"
    sd = node.src[1].dtype if op is Op.WHERE else node.src[0].dtype
    return render_op(op, node.dtype, sd, args, pre)


def _emit(nodes: list[Exp], scope: _Scope, out: list[str], ind: str, pre: _Prelude) -> None:
    """`let` lines for `nodes` (in dependency order) not yet named (CSE by identity)."""
    names = scope.names
    for node in nodes:
        if id(node) in names:
            continue
        name = scope.fresh()
        expr = _node_expr(node, [names[id(s)] for s in node.src], pre)
        out.append(f"{ind}let {name}: {_CT[node.dtype.name]} = {expr};")
        names[id(node)] = name


def _epilogue_nodes(kernel: Kernel) -> list[Exp]:
    """What the root reaches without entering the REDUCE body, in dependency order."""
    order = kernel.exp.toposort()
    need = {id(kernel.exp)}
    for n in reversed(order):
        if id(n) in need and n.op is not Op.REDUCE:
            need.update(id(s) for s in n.src)
    return [n for n in order if id(n) in need]


def _value_fn(kernel: Kernel, red: Exp | None, pre: _Prelude) -> list[str]:
    """`fn value(i[, acc])`: the output element, with the REDUCE's result passed in as acc."""
    scope = _Scope()
    params = "i: i32"
    if red is not None:
        scope.names[id(red)] = "acc"
        params += f", acc: {_CT[red.dtype.name]}"
    lines = [f"fn value({params}) -> {_CT[kernel.out_dtype.name]} {{"]
    _emit(_epilogue_nodes(kernel), scope, lines, "  ", pre)
    lines += [f"  return {scope.names[id(kernel.exp)]};", "}"]
    return lines


def _straight(render_fn: Any, limits: dict[str, int]) -> bool:
    """Whether the code `render_fn(prelude)` renders calls only helpers without branches or
    loops: lanes inline an expression four times per invocation, and SwiftShader's compiler
    took seconds (then lost the device) on four copies of f_fmod in a reduction's loop."""
    pre = _Prelude(limits)
    render_fn(pre)
    return all(wgsl_math.straight(n) for n in pre.names)


def _opq_init(pre: _Prelude) -> list[str]:
    return ["  opq = select(0u, 1u, arrayLength(&out) == 0u);"] if "opq" in pre.names else []
