"""WGSL codegen: a Kernel becomes compute shaders (the same text runs on wgpu and in browsers).

Every buffer is bound as `array<u32>`: 32-bit dtypes are bitcast words, sub-32-bit dtypes are
packed little-endian (4 bool/int8/uint8 or 2 int16/uint16/float16/bfloat16 per word). Each
invocation writes whole output words, so packed outputs have no write races. Values live in a
"compute type" per dtype (bool, i32, u32 or f32); narrow ints are re-wrapped after ops that can
leave their range; float16/bfloat16 are f32 values rounded to the format after every op (exact
for + - * / and sqrt, as f32 has > 2p+2 bits), so no optional feature (shader-f16) is needed
and f16 subnormals survive GPUs that flush f32 subnormals.
Drivers are not IEEE-strict (checked on lavapipe, NVIDIA's Vulkan driver and SwiftShader): they
may assume no NaN, fold x*0 -> 0 and x+0 -> x, re-associate (a/b + r/b -> (a+r)/b), divide
through a reciprocal and flush subnormals (WebGPU allows the last). So NaN-sensitive ops are
bit tests, float arithmetic goes through an optimization barrier (`fb`, wgsl_math), division
is corrected to be correctly rounded, and transcendentals come from wgsl_libm / wgsl_special.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .. import dtypes as dt
from ..dtypes import DType
from ..ir import scalar
from ..ir.exp import Exp
from ..ir.kernel import Kernel
from ..ir.ops import Op
from . import wgsl_math

PLATFORM = "webgpu"
WORKGROUP = 64
MAX_GROUPS_X = 65535
_MAX_LOOP = 65535  # iterations of one loop that every implementation runs (llvmpipe caps here)
REDUCE_THREADS = 256  # threads per output in grouped reductions
GROUPED_MIN_RSIZE = 256  # reductions at least this long with
GROUPED_MAX_WORDS = 65536  # ... at most this many output words run grouped
SPLIT_MIN_CHUNK = 16 * REDUCE_THREADS  # two-pass reductions: at least this much per workgroup
SPLIT_TARGET_GROUPS = 1024  # ... and about this many workgroups in the first pass

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


def supports_dtype(d: DType) -> bool:
    return d.name in _CT


def check_dtype(d: DType) -> None:
    if d.name not in _CT:
        hint = " (WGSL has no 64-bit floats; use float32)" if d.name == "float64" else ""
        raise WgslUnsupported(f"dtype {d.name} is not supported on the webgpu device{hint}")


def _unsupported(op: Op, d: DType) -> WgslUnsupported:
    return WgslUnsupported(f"op '{op.value}' on {d.name} is not implemented by the webgpu backend")


@dataclass(frozen=True)
class WgslPass:
    """One compute shader launch: entry point `main`, bindings 0..n-1 (the last read_write)."""

    source: str
    nbindings: int
    workgroups: tuple[int, int]  # dispatch grid (x, y)


@dataclass(frozen=True)
class WgslProgram:
    """A kernel's launches. Two passes (partials into `scratch_bytes` of scratch, then the
    finish with the epilogue) split long reductions with few outputs over many workgroups."""

    passes: tuple[WgslPass, ...]
    nargs: int
    invocations: int  # output words; 0 means nothing to run
    scratch_bytes: int = 0
    note: str = ""  # how it was scheduled (the tiled matmul's tile), for profiles and benches

    @property
    def source(self) -> str:
        return "\n".join(p.source for p in self.passes)

    @property
    def workgroups(self) -> tuple[int, int]:
        return self.passes[-1].workgroups


# ---- helpers: the prelude holds only the helpers a kernel uses ---------------------------------
class _Prelude:
    def __init__(self) -> None:
        self.names: list[str] = []

    def need(self, name: str) -> str:
        for dep in wgsl_math.DEPS.get(name, ()):
            self.need(dep)
        if name not in self.names:
            self.names.append(name)
        return name

    def source(self) -> str:
        return "\n".join(wgsl_math.HELPERS[n] for n in self.names)


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
            return _round(d, f"{pre.need('f_div')}({a[0]}, {y})", pre)
        return _round(d, f"{pre.need('fb')}({a[0]} {_INFIX[op]} {y})", pre)
    if op is Op.NEG:
        return f"(-{a[0]})"
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
        return _round(d, f"{pre.need(name)}({a[0]})", pre)
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
    sh = f"u32({a[1]})" if signed else a[1]
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


# ---- kernel rendering ---------------------------------------------------------------------------
def _uses_ridx(node: Exp, memo: dict[int, bool]) -> bool:
    r = memo.get(id(node))
    if r is None:
        # the REDUCE itself is loop-invariant: only its body is per-iteration
        r = node.op is Op.RIDX or (
            node.op is not Op.REDUCE and any(_uses_ridx(s, memo) for s in node.src)
        )
        memo[id(node)] = r
    return r


def _load_fn(slot: int, d: DType, pre: _Prelude) -> str:
    ct = _CT[d.name]
    if d.itemsize == 4:
        word = f"in{slot}[u32(k)]"
    elif d.itemsize == 2:
        word = f"(in{slot}[u32(k) >> 1u] >> ((u32(k) & 1u) * 16u))"
    else:
        word = f"(in{slot}[u32(k) >> 2u] >> ((u32(k) & 3u) * 8u))"
    # Out-of-range k: WebGPU's robust buffer access clamps or yields 0, never faults.
    return f"fn ld{slot}(k: i32) -> {ct} {{ return {from_bits(d, word, pre)}; }}"


def _emit(nodes: list[Exp], names: dict[int, str], out: list[str], ind: str, pre: _Prelude) -> None:
    """`let` lines for `nodes` (in dependency order) not yet in `names` (CSE by identity)."""
    for node in nodes:
        if id(node) in names:
            continue
        name = f"t{len(names)}"
        args = [names[id(s)] for s in node.src]
        ct = _CT[node.dtype.name]
        op = node.op
        if op is Op.CONST:
            expr = const_expr(node.arg, node.dtype, pre)
        elif op is Op.IDX:
            expr = "i"
        elif op is Op.RIDX:
            expr = "r"
        elif op is Op.LOAD:
            expr = f"ld{node.arg}({args[0]})"
        else:
            sd = node.src[1].dtype if op is Op.WHERE else node.src[0].dtype
            expr = render_op(op, node.dtype, sd, args, pre)
        out.append(f"{ind}let {name}: {ct} = {expr};")
        names[id(node)] = name


def _reduce_fn(red: Exp, stride: int, pre: _Prelude, span: int = 0) -> list[str]:
    """`fn reduce_body(i, r0, r1)`: combine the body over r = r0, r0 + stride, ... < r1
    (r1 - r0 <= span, by default the whole reduction)."""
    combine, rsize = red.arg
    span = span or rsize
    d = red.dtype
    ct = _CT[d.name]
    memo: dict[int, bool] = {}
    body = red.src[0].toposort()
    names: dict[int, str] = {}
    lines = [f"fn reduce_body(i: i32, r0: i32, r1: i32) -> {ct} {{"]
    _emit([n for n in body if not _uses_ridx(n, memo)], names, lines, "  ", pre)
    ident = const_expr(scalar.identity(combine, d), d, pre)
    lines.append(f"  var acc: {ct} = {ident};")
    step: list[str] = []
    _emit([n for n in body if _uses_ridx(n, memo)], names, step, "    ", pre)
    step.append(f"    acc = {render_op(combine, d, d, ['acc', names[id(red.src[0])]], pre)};")
    # llvmpipe ends every loop (nest) after 65535 iterations in total: unroll beyond that
    iters = -(-span // stride)
    unroll = -(-iters // _MAX_LOOP)
    if unroll == 1:
        lines.append(f"  for (var r: i32 = r0; r < r1; r = r + {stride}) {{")
        lines += step
    else:
        lines.append(f"  for (var q: i32 = r0; q < r1; q = q + {stride * unroll}) {{")
        for u in range(unroll):
            lines.append(f"   {{ let r = q + {u * stride}; if (r < r1) {{")
            lines += step
            lines.append("   }}")
    lines += ["  }", "  return acc;", "}"]
    return lines


def _partials_fn(red: Exp, chunks: int, pre: _Prelude) -> list[str]:
    """Second pass of a split reduction: combine the chunks' partial results in order."""
    combine = red.arg[0]
    d = red.dtype
    ct = _CT[d.name]
    ident = const_expr(scalar.identity(combine, d), d, pre)
    step = render_op(combine, d, d, ["acc", _from32(d, f"scr[u32(i * {chunks} + g)]")], pre)
    return [
        f"fn partials(i: i32) -> {ct} {{",
        f"  var acc: {ct} = {ident};",
        f"  for (var g: i32 = 0; g < {chunks}; g = g + 1) {{ acc = {step}; }}",
        "  return acc;",
        "}",
    ]


def _to32(d: DType, x: str) -> str:
    """A compute-type value as a u32 word (scratch and shared memory hold words)."""
    ct = _CT[d.name]
    return f"select(0u, 1u, {x})" if ct == "bool" else x if ct == "u32" else f"bitcast<u32>({x})"


def _from32(d: DType, u: str) -> str:
    ct = _CT[d.name]
    return f"({u} != 0u)" if ct == "bool" else u if ct == "u32" else f"bitcast<{ct}>({u})"


def _value_fn(kernel: Kernel, red: Exp | None, pre: _Prelude) -> list[str]:
    """`fn value(i[, acc])`: the output element, with the REDUCE's result passed in as acc."""
    order = kernel.exp.toposort()
    need = {id(kernel.exp)}
    for n in reversed(order):  # what the root reaches without entering the REDUCE body
        if id(n) in need and n.op is not Op.REDUCE:
            need.update(id(s) for s in n.src)
    names: dict[int, str] = {}
    params = "i: i32"
    if red is not None:
        names[id(red)] = "acc"
        params += f", acc: {_CT[red.dtype.name]}"
    lines = [f"fn value({params}) -> {_CT[kernel.out_dtype.name]} {{"]
    _emit([n for n in order if id(n) in need], names, lines, "  ", pre)
    lines += [f"  return {names[id(kernel.exp)]};", "}"]
    return lines


def _grid(groups: int) -> tuple[int, int]:
    gx = min(groups, MAX_GROUPS_X)
    return gx, (-(-groups // gx) if groups else 0)


def _shader(kernel: Kernel, pre: _Prelude, body: list[str], extra: str = "") -> str:
    """Bindings, the helpers `pre` collected, input loaders, then `body` (functions + main)."""
    n = kernel.nargs
    loads = [_load_fn(s, d, pre) for s, d in enumerate(kernel.arg_dtypes)]  # before pre.source()
    lines = [f"@group(0) @binding({s}) var<storage, read> in{s}: array<u32>;" for s in range(n)]
    if extra:
        lines.append(f"@group(0) @binding({n}) var<storage, read> {extra}: array<u32>;")
    out = n + 1 if extra else n
    lines += [f"@group(0) @binding({out}) var<storage, read_write> out: array<u32>;", ""]
    lines += [pre.source(), *loads, "", *body]
    return "\n".join(lines) + "\n"


def render(
    kernel: Kernel, max_bindings: int = 8, limits: dict[str, int] | None = None
) -> WgslProgram:
    """Render the kernel as WGSL compute shaders (entry points `main`).

    Elementwise kernels and short reductions run one output word per invocation, reductions
    sequentially in the order of the reference. Long reductions with few outputs run one
    workgroup per output word (REDUCE_THREADS strided partials, then a tree in shared memory),
    or, with very few outputs, two passes: chunked partials over many workgroups, then the
    finish. Float sums and products then round differently from the sequential order.
    `max_bindings` (storage buffers per shader) decides whether the two-pass form fits.
    Float32 matrix products (wgsl_matmul.match) run as workgroup-tiled matmuls, with the tile
    chosen from `limits` (max_workgroup_storage bytes, max_invocations per workgroup).
    """
    out_d = kernel.out_dtype
    for d in (*kernel.arg_dtypes, out_d):
        check_dtype(d)
    for n in kernel.exp.toposort():
        check_dtype(n.dtype)
    red = kernel.reduction
    if red is not None:
        from . import wgsl_matmul

        plan = wgsl_matmul.match(kernel)
        if plan is not None:
            tiled = wgsl_matmul.render(kernel, plan, limits or {})
            if tiled is not None:
                prog, tile = tiled
                return WgslProgram(prog.passes, prog.nargs, prog.invocations, 0, str(tile))
    per = 4 // out_d.itemsize  # elements per output word
    words = -(-kernel.size // per)
    rsize = red.arg[1] if red is not None else 0
    nargs = kernel.nargs
    if red is None or not (
        rsize > _MAX_LOOP or (rsize >= GROUPED_MIN_RSIZE and words <= GROUPED_MAX_WORDS)
    ):
        pre = _Prelude()
        fns = (_reduce_fn(red, 1, pre) if red is not None else []) + _value_fn(kernel, red, pre)
        gx, gy = _grid(-(-words // WORKGROUP))
        call = f"reduce_body({{i}}, 0, {rsize})" if red is not None else None
        main = _main_flat(kernel, call, per, words, gx, pre)
        source = _shader(kernel, pre, fns + [""] + main)
        return WgslProgram((WgslPass(source, nargs + 1, (gx, gy)),), nargs, words)
    chunks = min(-(-rsize // SPLIT_MIN_CHUNK), max(1, SPLIT_TARGET_GROUPS // kernel.size))
    if chunks < 2 or nargs + 2 > max_bindings:
        pre = _Prelude()
        fns = _reduce_fn(red, REDUCE_THREADS, pre) + _value_fn(kernel, red, pre)
        gx, gy = _grid(words)
        main = _main_grouped(kernel, red, per, words, gx, pre)
        source = _shader(kernel, pre, fns + [""] + main)
        return WgslProgram((WgslPass(source, nargs + 1, (gx, gy)),), nargs, words)
    # two passes: partials[i * chunks + g] over chunk g of output i, then the finish
    chunk = -(-rsize // chunks)
    pre1 = _Prelude()
    fns1 = _reduce_fn(red, REDUCE_THREADS, pre1, chunk)
    g1 = _grid(kernel.size * chunks)
    main1 = _main_partials(kernel, red, chunks, chunk, g1[0], pre1)
    pass1 = WgslPass(_shader(kernel, pre1, fns1 + [""] + main1), nargs + 1, g1)
    pre2 = _Prelude()
    fns2 = _partials_fn(red, chunks, pre2) + _value_fn(kernel, red, pre2)
    g2 = _grid(-(-words // WORKGROUP))
    main2 = _main_flat(kernel, "partials({i})", per, words, g2[0], pre2)
    pass2 = WgslPass(_shader(kernel, pre2, fns2 + [""] + main2, extra="scr"), nargs + 2, g2)
    return WgslProgram((pass1, pass2), nargs, words, 4 * kernel.size * chunks)


def _opq_init(pre: _Prelude) -> list[str]:
    return ["  opq = select(0u, 1u, arrayLength(&out) == 0u);"] if "opq" in pre.names else []


def _main_flat(
    kernel: Kernel, red_call: str | None, per: int, words: int, gx: int, pre: _Prelude
) -> list[str]:
    d = kernel.out_dtype

    def val(i: str) -> str:
        v = f"value({i}, {red_call.format(i=i)})" if red_call else f"value({i})"
        return to_bits(d, v, pre)

    lines = [
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
        f"  let w = gid.x + gid.y * {gx * WORKGROUP}u;",
        f"  if (w >= {words}u) {{ return; }}",
    ]
    body: list[str] = []
    if per == 1:
        body.append(f"  out[w] = {val('i32(w)')};")
    else:
        bits = 32 // per
        tail = kernel.size % per
        if tail:  # the last word is partly ours: keep the bytes past `size`
            keep = (0xFFFFFFFF << (tail * bits)) & 0xFFFFFFFF
            body += [f"  if (w == {words - 1}u) {{", f"    var v = out[w] & 0x{keep:08x}u;"]
            for j in range(tail):
                body.append(f"    v = v | ({val(f'i32(w) * {per} + {j}')} << {j * bits}u);")
            body += ["    out[w] = v;", "    return;", "  }"]
        body.append("  var v = 0u;")
        for j in range(per):
            body.append(f"  v = v | ({val(f'i32(w) * {per} + {j}')} << {j * bits}u);")
        body.append("  out[w] = v;")
    return lines + _opq_init(pre) + body + ["}"]


def _tree(red: Exp, pre: _Prelude) -> list[str]:
    """Shared-memory tree over part[0..REDUCE_THREADS) (as u32 words); part[0] ends whole."""
    d = red.dtype
    both = render_op(red.arg[0], d, d, [_from32(d, "part[lid]"), _from32(d, "part[lid + s]")], pre)
    return [
        "workgroupBarrier();",
        f"for (var s = {REDUCE_THREADS // 2}u; s > 0u; s = s >> 1u) {{",
        f"  if (lid < s) {{ part[lid] = {_to32(d, both)}; }}",
        "  workgroupBarrier();",
        "}",
    ]


_WG_HEAD = [
    f"var<workgroup> part: array<u32, {REDUCE_THREADS}>;",
    "",
    f"@compute @workgroup_size({REDUCE_THREADS})",
    "fn main(@builtin(workgroup_id) wid: vec3<u32>,",
    "        @builtin(local_invocation_index) lid: u32) {",
]


def _main_grouped(
    kernel: Kernel, red: Exp, per: int, words: int, gx: int, pre: _Prelude
) -> list[str]:
    d = kernel.out_dtype
    rd = red.dtype
    bits = 32 // per
    first = _from32(rd, "part[0]")
    lines = [
        *_WG_HEAD,
        f"  let w = wid.x + wid.y * {gx}u;",
        f"  if (w >= {words}u) {{ return; }}",
        *_opq_init(pre),
        "  var v = 0u;",
    ]
    for j in range(per):
        lines += [
            f"  let i{j} = i32(w) * {per} + {j};",
            f"  if (i{j} < {kernel.size}) {{",
            f"    part[lid] = {_to32(rd, f'reduce_body(i{j}, i32(lid), {red.arg[1]})')};",
            *("    " + t for t in _tree(red, pre)),
            "    if (lid == 0u) {",
            f"      v = v | ({to_bits(d, f'value(i{j}, {first})', pre)} << {j * bits}u);",
            "    }",
            "    workgroupBarrier();",
            "  }",
        ]
    tail = kernel.size % per
    if tail:
        keep = (0xFFFFFFFF << (tail * bits)) & 0xFFFFFFFF
        lines.append(f"  if (w == {words - 1}u) {{ v = v | (out[w] & 0x{keep:08x}u); }}")
    lines += ["  if (lid == 0u) { out[w] = v; }", "}"]
    return lines


def _main_partials(
    kernel: Kernel, red: Exp, chunks: int, chunk: int, gx: int, pre: _Prelude
) -> list[str]:
    rsize = red.arg[1]
    return [
        *_WG_HEAD,
        f"  let wg = wid.x + wid.y * {gx}u;",
        f"  if (wg >= {kernel.size * chunks}u) {{ return; }}",
        *_opq_init(pre),
        f"  let i = i32(wg / {chunks}u);",
        f"  let r0 = i32(wg % {chunks}u) * {chunk};",
        f"  let r1 = min(r0 + {chunk}, {rsize});",
        f"  part[lid] = {_to32(red.dtype, 'reduce_body(i, r0 + i32(lid), r1)')};",
        *("  " + t for t in _tree(red, pre)),
        "  if (lid == 0u) { out[wg] = part[0]; }",
        "}",
    ]
