"""GLSL ES 3.00 values, their storage in texture words, and the IR's ops on them.

Every buffer is an R32UI texture: its bytes in order, one 32-bit word per texel, narrow dtypes
packed into words as in memory (little-endian), so every dtype is bit-exact in storage (no
float texture formats, which would canonicalize NaNs and need EXT_color_buffer_float).
Values compute in `float`, `int`, `uint` or `bool` (`_CT`); narrow ints re-wrap after each op,
float16/bfloat16 round to their format after each op (as the reference executor does).
"""

from __future__ import annotations

import re
import struct

from ... import dtypes as dt
from ...dtypes import DType
from ...ir.exp import Exp
from ...ir.ops import Op
from . import math as glsl_math

# compute type per dtype; dtypes missing here are not supported by this codegen
_CT = {
    "bool": "bool",
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "uint8": "uint",
    "uint16": "uint",
    "uint32": "uint",
    "float16": "float",
    "bfloat16": "float",
    "float32": "float",
}


class GlslUnsupported(NotImplementedError):
    """The kernel uses an op or dtype the webgl codegen cannot render."""


def _unsupported(op: Op, d: DType) -> GlslUnsupported:
    return GlslUnsupported(f"op '{op.value}' on {d.name} is not implemented by the webgl backend")


def supports_dtype(d: DType) -> bool:
    return d.name in _CT


def check_dtype(d: DType) -> None:
    if d.name not in _CT:
        hint = " (WebGL2 has no 64-bit types; use 32-bit ones)" if d.itemsize == 8 else ""
        raise GlslUnsupported(f"dtype {d.name} is not supported on the webgl device{hint}")


def compute_type(d: DType) -> str:
    return _CT[d.name]


class Prelude:
    """The helpers (glsl/math.py) one shader uses, in dependency order."""

    def __init__(self, limits: dict[str, int] | None = None) -> None:
        self.names: list[str] = []
        lim = limits or {}
        self.alias = {
            name: fast
            for flag, name, fast in (
                ("exact_div", "f_div", "f_div_hw"),
                ("exact_sqrt", "m_sqrt", "m_sqrt_hw"),
            )
            if lim.get(flag)
        }

    def need(self, name: str) -> str:
        name = self.alias.get(name, name)
        if name not in glsl_math.HELPERS:
            raise GlslUnsupported(f"the webgl backend has no GLSL helper '{name}' yet")
        for dep in glsl_math.DEPS.get(name, ()):
            self.need(dep)
        if name not in self.names:
            self.names.append(name)
        return name

    def source(self) -> str:
        """The helpers' text, calls to aliased helpers (f_div -> f_div_hw where the device
        divides exactly) renamed inside the other helpers too."""
        text = "\n".join(glsl_math.HELPERS[n] for n in self.names)
        for name, fast in self.alias.items():
            text = re.sub(rf"\b{name}\(", f"{fast}(", text)
        return text


# ---- constants ---------------------------------------------------------------------------------
def f32_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def const_expr(value: object, d: DType, pre: Prelude | None = None) -> str:
    """A GLSL literal; with `pre`, float literals go through the optimization barrier."""
    ct = _CT[d.name]
    if ct == "bool":
        return "true" if value else "false"
    if ct == "uint":
        return f"{int(value) & 0xFFFFFFFF}u"  # type: ignore[call-overload]
    if ct == "int":
        v = int(value)  # type: ignore[call-overload]
        if v == -(2**31):
            return "int(0x80000000u)"  # the literal 2147483648 does not exist
        return f"{v}" if v >= 0 else f"({v})"
    bits = f32_bits(float(value))  # type: ignore[arg-type]
    x = struct.unpack("<f", struct.pack("<I", bits))[0]
    exp_field = (bits >> 23) & 0xFF
    text = repr(x)
    if 0 < exp_field < 0xFF and float(text) == x and len(text) <= 16:
        lit = text if x >= 0 else f"({text})"
    elif bits == 0:
        lit = "0.0"
    else:  # inf, nan, -0, subnormals
        lit = f"uintBitsToFloat(0x{bits:08x}u)"
    if pre is not None:
        return f"{pre.need('fb')}({lit})"
    return lit


# ---- bits <-> values --------------------------------------------------------------------------
def _mask(d: DType) -> str:
    return f"0x{(1 << d.bits) - 1:x}u"


def to_bits(d: DType, x: str, pre: Prelude) -> str:
    """uint holding the dtype's bit pattern in its low bits (upper bits zero)."""
    n = d.name
    if n == "bool":
        return f"({x} ? 1u : 0u)"
    if n in ("int8", "int16"):
        return f"(uint({x}) & {_mask(d)})"
    if n in ("int32", "float32"):
        return f"uint({x})" if n == "int32" else f"floatBitsToUint({x})"
    if n in ("uint8", "uint16", "uint32"):
        return x
    if n == "float16":
        return f"{pre.need('f32_to_f16')}({x})"
    if n == "bfloat16":
        return f"(floatBitsToUint({x}) >> 16)"
    raise AssertionError(n)


def from_bits(d: DType, u: str, pre: Prelude) -> str:
    """Value of dtype `d` from a uint whose low bits hold it (upper bits may be garbage)."""
    n = d.name
    if n == "bool":
        return f"(({u} & 0xffu) != 0u)"
    if n == "int8":
        return f"(int({u} << 24) >> 24)"
    if n == "int16":
        return f"(int({u} << 16) >> 16)"
    if n == "int32":
        return f"int({u})"
    if n in ("uint8", "uint16"):
        return f"({u} & {_mask(d)})"
    if n == "uint32":
        return u
    if n == "float32":
        return f"uintBitsToFloat({u})"
    if n == "float16":
        return f"{pre.need('f16_to_f32')}({u} & 0xffffu)"
    if n == "bfloat16":
        return f"uintBitsToFloat({u} << 16)"
    raise AssertionError(n)


def _wrap(d: DType, x: str) -> str:
    """Re-wrap an int/uint result into a narrow int dtype (two's complement)."""
    n = d.name
    if n == "int8":
        return f"(({x} << 24) >> 24)"
    if n == "int16":
        return f"(({x} << 16) >> 16)"
    if n in ("uint8", "uint16"):
        return f"(({x}) & {_mask(d)})"
    return x


def _round(d: DType, x: str, pre: Prelude) -> str:
    """Round a float result to the float dtype's format."""
    if d is dt.float16:
        return f"{pre.need('round_f16')}({x})"
    if d is dt.bfloat16:
        return f"{pre.need('round_bf16')}({x})"
    return x


# ---- op rendering -------------------------------------------------------------------------------
_FLOAT_UNARY = {  # op -> helper in glsl_math (float -> float)
    Op.SQRT: "m_sqrt", Op.RSQRT: "m_rsqrt", Op.CBRT: "m_cbrt", Op.EXP: "m_exp",
    Op.EXP2: "m_exp2", Op.EXPM1: "m_expm1", Op.LOG: "m_log", Op.LOG1P: "m_log1p",
    Op.SIN: "m_sin", Op.COS: "m_cos", Op.TAN: "m_tan", Op.ASIN: "m_asin", Op.ACOS: "m_acos",
    Op.ATAN: "m_atan", Op.SINH: "m_sinh", Op.COSH: "m_cosh", Op.TANH: "m_tanh",
    Op.ASINH: "m_asinh", Op.ACOSH: "m_acosh", Op.ATANH: "m_atanh", Op.LOGISTIC: "m_logistic",
    Op.ERF: "m_erf", Op.ERFC: "m_erfc", Op.ERF_INV: "m_erfinv", Op.LGAMMA: "m_lgamma",
    Op.DIGAMMA: "m_digamma", Op.SIGN: "f_sign", Op.FLOOR: "f_floor", Op.CEIL: "f_ceil",
    Op.ROUND: "f_round",
}  # fmt: skip
_FLOAT_BINARY = {Op.MOD: "f_fmod", Op.MAX: "f_max", Op.MIN: "f_min", Op.POW: "m_pow",
                 Op.ATAN2: "m_atan2"}  # fmt: skip
_FLOAT_CMP = {Op.CMPLT: "f_lt", Op.CMPLE: "f_le", Op.CMPEQ: "f_eq", Op.CMPNE: "f_ne"}
_INFIX = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.AND: "&", Op.OR: "|", Op.XOR: "^"}
_CMP = {Op.CMPLT: "<", Op.CMPLE: "<=", Op.CMPEQ: "==", Op.CMPNE: "!="}
_BOOL = {
    Op.AND: "({a} && {b})", Op.MIN: "({a} && {b})", Op.MUL: "({a} && {b})",
    Op.OR: "({a} || {b})", Op.MAX: "({a} || {b})", Op.ADD: "({a} || {b})",
    Op.XOR: "({a} != {b})", Op.CMPNE: "({a} != {b})", Op.CMPEQ: "({a} == {b})",
    Op.CMPLT: "(!{a} && {b})", Op.CMPLE: "(!{a} || {b})",
}  # fmt: skip


def render_op(op: Op, d: DType, sd: DType, args: list[str], pre: Prelude) -> str:
    """GLSL expression for `op` with result dtype `d`, operand dtype `sd`."""
    if op is Op.WHERE:
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if op is Op.CAST:
        return _cast(sd, d, args[0], pre)
    if op is Op.BITCAST:
        return from_bits(d, to_bits(sd, args[0], pre), pre)
    if sd.kind == "b":
        if op is Op.NOT:
            return f"(!{args[0]})"
        if op in _BOOL:
            return _BOOL[op].format(a=args[0], b=args[1])
        raise _unsupported(op, sd)
    if sd.kind == "f":
        return _float_op(op, d, sd, args, pre)
    return _int_op(op, d, sd, args, pre)


def _float_op(op: Op, d: DType, sd: DType, a: list[str], pre: Prelude) -> str:
    if op in _FLOAT_CMP:
        return f"{pre.need(_FLOAT_CMP[op])}({a[0]}, {a[1]})"
    if op is Op.ISFINITE:
        return f"{pre.need('f_isfinite')}({a[0]})"
    if op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV):
        # The barrier stops fma contraction and re-association across ops; x - x must not
        # become 0 (inf - inf is NaN): the same operand twice gets a second, distinct barrier.
        y = f"{pre.need('fb2')}({a[1]})" if a[0] == a[1] else a[1]
        if op is Op.DIV:
            return _round(d, f"{pre.need('f_div')}({a[0]}, {y})", pre)
        return _round(d, f"{pre.need('fb')}({a[0]} {_INFIX[op]} {y})", pre)
    if op is Op.NEG:
        return f"uintBitsToFloat(floatBitsToUint({a[0]}) ^ 0x80000000u)"
    if op is Op.ABS:
        return f"uintBitsToFloat(floatBitsToUint({a[0]}) & 0x7fffffffu)"
    if op is Op.NEXTAFTER:  # steps are per format
        name = {"float32": "f_nextafter", "float16": "f_nextafter_f16"}.get(d.name)
        return f"{pre.need(name or 'f_nextafter_bf16')}({a[0]}, {a[1]})"
    if op in _FLOAT_BINARY:
        return _round(d, f"{pre.need(_FLOAT_BINARY[op])}({a[0]}, {a[1]})", pre)
    if op in _FLOAT_UNARY:
        return _round(d, f"{pre.need(_FLOAT_UNARY[op])}({a[0]})", pre)
    raise _unsupported(op, d)


def _int_op(op: Op, d: DType, sd: DType, a: list[str], pre: Prelude) -> str:
    signed = sd.kind == "i"
    ct = "int" if signed else "uint"
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
        return _wrap(d, f"{pre.need('idiv_' + ('i32' if signed else 'u32'))}({x}, {a[1]})")
    if op is Op.MOD:
        return f"{pre.need('imod_' + ('i32' if signed else 'u32'))}({x}, {a[1]})"
    if op is Op.ABS:
        return _wrap(d, f"({x} < 0 ? 0 - {x} : {x})") if signed else x
    if op is Op.SIGN:
        if signed:
            return f"({x} > 0 ? 1 : ({x} < 0 ? -1 : 0))"
        return f"({x} > 0u ? 1u : 0u)"
    if op is Op.POPCNT:
        return f"{ct}({pre.need('popcnt')}({to_bits(sd, x, pre)}))"
    if op is Op.CLZ:
        return f"{ct}({pre.need('clz32')}({to_bits(sd, x, pre)}) - {32 - bits}u)"
    if op not in (Op.SHL, Op.SHR, Op.SHRL):
        raise _unsupported(op, sd)
    sh_ok = f"({a[1]} >= 0 && {a[1]} < {bits})" if signed else f"({a[1]} < {bits}u)"
    sh = f"uint({a[1]})" if signed else a[1]
    if op is Op.SHL:
        return _wrap(d, f"({sh_ok} ? {x} << {sh} : {ct}(0))")
    if op is Op.SHR and signed:
        return f"({sh_ok} ? {x} >> {sh} : ({x} < 0 ? -1 : 0))"
    if not signed:
        return f"({sh_ok} ? {x} >> {sh} : 0u)"
    ux = to_bits(sd, x, pre)
    return _wrap(d, f"int({sh_ok} ? {ux} >> {sh} : 0u)")


def _cast(sd: DType, d: DType, x: str, pre: Prelude) -> str:
    if sd is d:
        return x
    if d.kind == "b":
        if sd.kind == "f":  # NaN != 0 is true; -0.0 == 0
            return f"((floatBitsToUint({x}) & 0x7fffffffu) != 0u)"
        return f"({x} != {_CT[sd.name]}(0))"
    ct = _CT[d.name]
    if d.kind == "f":
        if sd.kind == "b":
            return f"({x} ? 1.0 : 0.0)"
        v = x if sd.kind == "f" else f"float({x})"
        return _round(d, v, pre)
    if sd.kind == "b":
        return f"({x} ? {ct}(1) : {ct}(0))"
    if sd.kind == "f":
        lo, hi = dt.iinfo_bounds(d)
        # NaN -> 0, saturate at the bounds (exact in float), truncate inside them (GLSL's
        # float -> int conversion is undefined outside the range)
        nan = pre.need("f_isnan")
        fhi, flo = const_expr(float(hi), dt.float32), const_expr(float(lo), dt.float32)
        if ct == "uint":
            conv = f"(({x}) >= {fhi} ? {const_expr(hi, d)} : uint(max({x}, 0.0)))"
        else:
            conv = f"(({x}) >= {fhi} ? {const_expr(hi, d)} : int({x}))"
            conv = f"(({x}) <= {flo} ? {const_expr(lo, d)} : {conv})"
        return f"({nan}({x}) ? {ct}(0) : {conv})"
    # int -> int: reinterpret the 32-bit pattern, then wrap to the target width
    v = x if _CT[sd.name] == ct else f"{ct}({x})"
    return _wrap(d, v)


# ---- expressions -------------------------------------------------------------------------------
def node_expr(node: Exp, args: list[str], pre: Prelude) -> str:
    op = node.op
    if op is Op.CONST:
        return const_expr(node.arg, node.dtype, pre if node.dtype.kind == "f" else None)
    if op is Op.IDX:
        return "i"
    if op is Op.RIDX:
        return "r"
    if op is Op.LOAD:
        return f"ld{node.arg}({args[0]})"
    if op in (Op.DIV, Op.MOD) and node.dtype.kind in "iu" and node.src[1].is_const:
        # index math: a non-negative value by a positive constant needs none of idiv's sign
        # and zero handling
        k, rng = int(node.src[1].arg), node.src[0].vrange
        if k > 0 and rng is not None and rng[0] >= 0:
            sym = "/" if op is Op.DIV else "%"
            if k & (k - 1) == 0:  # a power of two: a shift or a mask (CPU implementations
                # such as SwiftShader divide integers lane by lane)
                sym, k = (">>", k.bit_length() - 1) if op is Op.DIV else ("&", k - 1)
            if _CT[node.dtype.name] == "int":
                return f"int(uint({args[0]}) {sym} {k}u)"
            return f"({args[0]} {sym} {k}u)"
    sd = node.src[1].dtype if op is Op.WHERE else node.src[0].dtype
    return render_op(op, node.dtype, sd, args, pre)


def load_fn(slot: int, d: DType, pre: Prelude) -> str:
    """`ld<slot>(k)`: element k of input slot's texture (`in<slot>`, `u_w<slot>` = log2 of its
    width in texels). Out-of-range k reads some texel or zero (WebGL's robust access)."""
    if d.itemsize == 4:
        word, shift = "k", ""
    elif d.itemsize == 2:
        word, shift = "k >> 1", " >> uint((k & 1) * 16)"
    else:
        word, shift = "k >> 2", " >> uint((k & 3) * 8)"
    return (
        f"{_CT[d.name]} ld{slot}(int k) {{\n"
        f"  int w = {word};\n"
        f"  uint u = texelFetch(in{slot}, ivec2(w & ((1 << u_w{slot}) - 1), w >> u_w{slot}), 0)"
        f".r{shift};\n"
        f"  return {from_bits(d, 'u', pre)};\n"
        "}"
    )


class Scope:
    """Names of the emitted nodes of one function: `emit` declares each node once, in order."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.count = 0

    def emit(self, nodes: list[Exp], out: list[str], ind: str, pre: Prelude) -> None:
        for node in nodes:
            if id(node) in self.names:
                continue
            if node.op in (Op.IDX, Op.RIDX):
                self.names[id(node)] = "i" if node.op is Op.IDX else "r"
                continue
            name = f"t{self.count}"
            self.count += 1
            expr = node_expr(node, [self.names[id(s)] for s in node.src], pre)
            out.append(f"{ind}{compute_type(node.dtype)} {name} = {expr};")
            self.names[id(node)] = name
