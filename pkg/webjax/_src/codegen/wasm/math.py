"""Helper functions for the wasm codegen: half-float conversions, fmod, nextafter, and float64
transcendentals (exp, log, sin, atan, erf, ...), generated as wasm functions.

Each helper is written in a tiny stack notation (one token per instruction: `@x` gets local x,
`=x` sets it, `:x` tees it, `f64:1.5`/`i32:7`/`i64:0x10` are constants, `call:name` calls
another helper, `if:f64` opens an if with a result) and assembled once per set of callee
indices. The float64 routines use range reduction plus Taylor/continued-fraction expansions and
aim at a few ulp in float64; float32 kernels call them and demote, which gives results within
about one float32 ulp. Written from the textbook formulas, not from any library's code.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ...ir.ops import Op
from .asm import F32, F64, I32, I64, Func

# Float64 unary/binary helpers by op (for float32/16 the codegen promotes and demotes).
UNARY_OPS: dict[Op, str] = {
    Op.EXP: "exp", Op.EXP2: "exp2", Op.EXPM1: "expm1", Op.LOG: "log", Op.LOG1P: "log1p",
    Op.SIN: "sin", Op.COS: "cos", Op.TAN: "tan", Op.ASIN: "asin", Op.ACOS: "acos",
    Op.ATAN: "atan", Op.SINH: "sinh", Op.COSH: "cosh", Op.TANH: "tanh", Op.ASINH: "asinh",
    Op.ACOSH: "acosh", Op.ATANH: "atanh", Op.LOGISTIC: "logistic", Op.RSQRT: "rsqrt",
    Op.CBRT: "cbrt", Op.ERF: "erf", Op.ERFC: "erfc", Op.ERF_INV: "erf_inv",
    Op.LGAMMA: "lgamma", Op.DIGAMMA: "digamma",
}  # fmt: skip
BINARY_OPS: dict[Op, str] = {Op.MOD: "fmod", Op.POW: "pow", Op.ATAN2: "atan2"}

_LOGDD_LOCALS = (
    "e:i32 b:i64 m:f64 f:f64 th:f64 tl:f64 sh:f64 sl:f64 c:f64 ah:f64 al:f64 bh:f64 bl:f64 "
    "p:f64 pe:f64 z:f64 tail:f64 ef:f64 aa:f64 bb:f64 hh:f64 l:f64"
)
_POW_LOCALS = (
    "odd:i32 isint:i32 r:f64 lh:f64 ll:f64 yh:f64 yl:f64 c:f64 bh:f64 bl:f64 hh:f64 hl:f64"
)

_K: dict[str, float] = {
    "inf": math.inf,
    "-inf": -math.inf,
    "nan": math.nan,
    "LN2": math.log(2),
    "LN2_HI": float.fromhex("0x1.62e42fefa3800p-1"),  # 42 bits: k * LN2_HI exact for |k| < 2^11
    "LN2_LO": float.fromhex("0x1.ef35793c76730p-45"),
    "INV_LN2": float.fromhex("0x1.71547652b82fep+0"),
    "SQRT2": float.fromhex("0x1.6a09e667f3bcdp+0"),
    "PI_HI": float.fromhex("0x1.921fb54442d18p+1"),
    "PI_LO": float.fromhex("0x1.1a62633145c07p-53"),
    "PIO2_HI": float.fromhex("0x1.921fb54442d18p+0"),
    "PIO2_LO": float.fromhex("0x1.1a62633145c07p-54"),
    "PIO4_HI": float.fromhex("0x1.921fb54442d18p-1"),
    "PIO4_LO": float.fromhex("0x1.1a62633145c07p-55"),
    "3PIO4": 3 * math.pi / 4,
    "PIO2_1": float.fromhex("0x1.921fb54400000p+0"),  # pi/2 in 33-bit pieces
    "PIO2_2": float.fromhex("0x1.0b4611a600000p-34"),
    "PIO2_3": float.fromhex("0x1.3198a2e037073p-69"),
    "TWO_OVER_PI": float.fromhex("0x1.45f306dc9c883p-1"),
    "ATAN_HALF_HI": float.fromhex("0x1.dac670561bb4fp-2"),
    "ATAN_HALF_LO": float.fromhex("0x1.a2b7f222f65e2p-56"),
    "ATAN_1_5_HI": float.fromhex("0x1.f730bd281f69bp-1"),
    "ATAN_1_5_LO": float.fromhex("0x1.007887af0cbbdp-56"),
    "TWO_OVER_SQRTPI": float.fromhex("0x1.20dd750429b6dp+0"),
    "INV_SQRTPI": float.fromhex("0x1.20dd750429b6dp-1"),
    "LN_SQRT_2PI": float.fromhex("0x1.d67f1c864beb5p-1"),
}


def _poly(var: str, coeffs: list[float]) -> str:
    """Horner form of sum(coeffs[i] * var**i), as tokens (leaves the value on the stack)."""
    toks = [f"f64:{coeffs[-1].hex()}"]
    for c in reversed(coeffs[:-1]):
        toks.append(f"@{var} f64.mul f64:{c.hex()} f64.add")
    return " ".join(toks)


# pow2(n) for an i32 exponent on the stack, -1022 <= n <= 1023: a float64 built from bits.
_POW2 = "i32:1023 i32.add i64.extend_i32_u i64:52 i64.shl f64.reinterpret_i64"
# scale the f64 y (local) by 2**k (i32 local) in two exact-then-rounded steps
_SCALE = f"@y @k i32:1 i32.shr_s {_POW2} f64.mul @k @k i32:1 i32.shr_s i32.sub {_POW2} f64.mul"

_EXP_C = [1 / math.factorial(n) for n in range(15)]
_LOG_R = [2 / (2 * n + 1) for n in range(1, 12)]
_SIN_C = [(-1) ** n / math.factorial(2 * n + 1) for n in range(1, 10)]
_COS_C = [(-1) ** n / math.factorial(2 * n) for n in range(2, 11)]
_ATAN_C = [(-1) ** (n + 1) / (2 * n + 1) for n in range(1, 23)]  # atan = u - u*z*P(z)
_ERF_C = [(-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(0, 30)]

# name -> (params, results, locals, body). Params/locals are (name, type).
_Spec = tuple[list[tuple[str, int]], list[int], list[tuple[str, int]], str]
_D = F64
_SPECS: dict[str, _Spec] = {}


def _def(name: str, params: str, results: list[int], locs: str, body: str) -> None:
    def parse(s: str) -> list[tuple[str, int]]:
        out = []
        for item in s.split():
            n, t = item.split(":")
            out.append((n, {"i32": I32, "i64": I64, "f32": F32, "f64": F64}[t]))
        return out

    _SPECS[name] = (parse(params), results, parse(locs), body)


# fmt: off
# ---- half floats -----------------------------------------------------------------------------
_def("f32_to_f16", "x:f32", [I32], "b:i32 s:i32 a:i32 t:i32", """
    @x i32.reinterpret_f32 =b
    @b i32:16 i32.shr_u i32:0x8000 i32.and =s
    @b i32:0x7FFFFFFF i32.and =a
    @a i32:0x7F800000 i32.gt_u if @s i32:0x7E00 i32.or return end
    @a i32:0x38800000 i32.ge_u if
      @a i32:0x38000000 i32.sub =t
      @t i32:0xFFF i32.add @t i32:13 i32.shr_u i32:1 i32.and i32.add i32:13 i32.shr_u =t
      @s i32:0x7C00 @t @t i32:0x7C00 i32.gt_u select i32.or return
    end
    @s @a f32.reinterpret_i32 f32:0x1p24 f32.mul f32.nearest i32.trunc_f32_u i32.or
""")
_def("f16_to_f32", "h:i32", [F32], "e:i32 s:i32", """
    @h i32:0x8000 i32.and i32:16 i32.shl =s
    @h i32:10 i32.shr_u i32:31 i32.and =e
    @e i32.eqz if
      @h i32:0x3FF i32.and f32.convert_i32_u f32:0x1p-24 f32.mul @s f32.reinterpret_i32
      f32.copysign return
    end
    @e i32:31 i32.eq if
      @s i32:0x7F800000 i32.or @h i32:0x3FF i32.and i32:13 i32.shl i32.or
      f32.reinterpret_i32 return
    end
    @s @h i32:0x7FFF i32.and i32:13 i32.shl i32:0x38000000 i32.add i32.or f32.reinterpret_i32
""")
_def("round_f16", "x:f32", [F32], "", "@x call:f32_to_f16 call:f16_to_f32")
_def("round_bf16", "x:f32", [F32], "b:i32", """
    @x @x f32.ne if @x return end
    @x i32.reinterpret_f32 =b
    @b i32:0x7FFF i32.add @b i32:16 i32.shr_u i32:1 i32.and i32.add i32:0xFFFF0000 i32.and
    f32.reinterpret_i32
""")
# float64 -> float16 with one rounding: demote rounding to odd (sticky bit), then round to f16.
_def("f64_to_f16val", "x:f64", [F32], "y:f32 b:i32", """
    @x f32.demote_f64 =y
    @x @x f64.eq @y f64.promote_f32 @x f64.ne i32.and if
      @y i32.reinterpret_f32 =b
      @y f64.promote_f32 f64.abs @x f64.abs f64.gt if @b i32:1 i32.sub =b end
      @b i32:1 i32.or f32.reinterpret_i32 =y
    end
    @y call:round_f16
""")

# ---- nextafter at each float's own precision ----------------------------------------------------
_def("nextafter_f32", "a:f32 b:f32", [F32], "", """
    @a @a f32.ne @b @b f32.ne i32.or if @a @b f32.add return end
    @a @b f32.eq if @b return end
    @a f32:0 f32.eq if i32:1 f32.reinterpret_i32 @b f32.copysign return end
    @a i32.reinterpret_f32 i32:1 i32:-1 @a @b f32.lt @a f32:0 f32.gt i32.eq select i32.add
    f32.reinterpret_i32
""")
_def("nextafter_f64", "a:f64 b:f64", [F64], "", """
    @a @a f64.ne @b @b f64.ne i32.or if @a @b f64.add return end
    @a @b f64.eq if @b return end
    @a f64:0 f64.eq if i64:1 f64.reinterpret_i64 @b f64.copysign return end
    @a i64.reinterpret_f64 i64:1 i64:-1 @a @b f64.lt @a f64:0 f64.gt i32.eq select i64.add
    f64.reinterpret_i64
""")
_def("nextafter_f16", "a:f32 b:f32", [F32], "", """
    @a @a f32.ne @b @b f32.ne i32.or if @a @b f32.add return end
    @a @b f32.eq if @b return end
    @a f32:0 f32.eq if f32:0x1p-24 @b f32.copysign return end
    @a call:f32_to_f16 i32:1 i32:-1 @a @b f32.lt @a f32:0 f32.gt i32.eq select i32.add
    call:f16_to_f32
""")
_def("nextafter_bf16", "a:f32 b:f32", [F32], "", """
    @a @a f32.ne @b @b f32.ne i32.or if @a @b f32.add return end
    @a @b f32.eq if @b return end
    @a f32:0 f32.eq if i32:0x10000 f32.reinterpret_i32 @b f32.copysign return end
    @a i32.reinterpret_f32 i32:0x10000 i32:-0x10000 @a @b f32.lt @a f32:0 f32.gt i32.eq select
    i32.add f32.reinterpret_i32
""")

# ---- fmod: exact remainder by shift-and-subtract on the integer significands -------------------
_def("fmod", "a:f64 b:f64", [F64], "ea:i32 eb:i32 ma:i64 mb:i64 r:i64 n:i32 s:i32 bits:i64", """
    @b f64:0 f64.eq @a @a f64.ne i32.or @b @b f64.ne i32.or @a f64.abs f64:inf f64.eq i32.or
    if f64:nan return end
    @b f64.abs f64:inf f64.eq if @a return end
    @a f64.abs @b f64.abs f64.lt if @a return end
    @a f64.abs i64.reinterpret_f64 =bits
    @bits i64:52 i64.shr_u i32.wrap_i64 =ea
    @bits i64:0xFFFFFFFFFFFFF i64.and =ma
    @ea i32.eqz if i32:1 =ea else @ma i64:0x10000000000000 i64.or =ma end
    @b f64.abs i64.reinterpret_f64 =bits
    @bits i64:52 i64.shr_u i32.wrap_i64 =eb
    @bits i64:0xFFFFFFFFFFFFF i64.and =mb
    @eb i32.eqz if i32:1 =eb else @mb i64:0x10000000000000 i64.or =mb end
    @ma @mb i64.rem_u =r
    @ea @eb i32.sub =n
    block loop
      @n i32:0 i32.le_s br_if:1
      i32:10 @n @n i32:10 i32.gt_s select =s
      @r @s i64.extend_i32_u i64.shl @mb i64.rem_u =r
      @n @s i32.sub =n
      br:0
    end end
    @r f64.convert_i64_u
    @eb i32:53 i32.ge_s if:i64
      @eb i32:52 i32.sub i64.extend_i32_u i64:52 i64.shl
    else
      i64:1 @eb i32:1 i32.sub i64.extend_i32_u i64.shl
    end
    f64.reinterpret_i64 f64.mul @a f64.copysign
""")

# ---- exponentials and logarithms -------------------------------------------------------------
_def("exp", "x:f64", [F64], "t:f64 r:f64 y:f64 k:i32", f"""
    @x @x f64.ne if @x return end
    @x f64:709.79 f64.gt if f64:inf return end
    @x f64:-745.2 f64.lt if f64:0 return end
    @x f64:INV_LN2 f64.mul f64.nearest =t
    @x @t f64:LN2_HI f64.mul f64.sub @t f64:LN2_LO f64.mul f64.sub =r
    {_poly("r", _EXP_C)} =y
    @t i32.trunc_sat_f64_s =k
    {_SCALE}
""")
_def("exp2", "x:f64", [F64], "t:f64 y:f64 k:i32", f"""
    @x @x f64.ne if @x return end
    @x f64:1030 f64.gt if f64:inf return end
    @x f64:-1080 f64.lt if f64:0 return end
    @x f64.nearest =t
    @x @t f64.sub f64:LN2 f64.mul call:exp =y
    @t i32.trunc_sat_f64_s =k
    {_SCALE}
""")
_def("log", "x:f64", [F64], "e:i32 b:i64 m:f64 f:f64 s:f64 z:f64 h:f64 r:f64 ef:f64", f"""
    @x @x f64.ne if @x return end
    @x f64:0 f64.lt if f64:nan return end
    @x f64:0 f64.eq if f64:-inf return end
    @x f64:inf f64.eq if @x return end
    i32:0 =e
    @x f64:0x1p-1022 f64.lt if @x f64:0x1p54 f64.mul =x i32:-54 =e end
    @x i64.reinterpret_f64 =b
    @e @b i64:52 i64.shr_u i32.wrap_i64 i32:1023 i32.sub i32.add =e
    @b i64:0xFFFFFFFFFFFFF i64.and i64:0x3FF0000000000000 i64.or f64.reinterpret_i64 =m
    @m f64:SQRT2 f64.gt if @m f64:0.5 f64.mul =m @e i32:1 i32.add =e end
    @m f64:1 f64.sub =f
    @f f64:2 @f f64.add f64.div =s
    @s @s f64.mul =z
    @z {_poly("z", _LOG_R)} f64.mul =r
    f64:0.5 @f f64.mul @f f64.mul =h
    @e f64.convert_i32_s =ef
    @ef f64:LN2_HI f64.mul
    @h @s @h @r f64.add f64.mul @ef f64:LN2_LO f64.mul f64.add f64.sub @f f64.sub
    f64.sub
""")
_def("log1p", "x:f64", [F64], "u:f64", """
    @x @x f64.ne if @x return end
    @x f64:-1 f64.lt if f64:nan return end
    @x f64:-1 f64.eq if f64:-inf return end
    @x f64:inf f64.eq if @x return end
    f64:1 @x f64.add =u
    @u f64:1 f64.eq if @x return end
    @u call:log @x @u f64:1 f64.sub f64.div f64.mul
""")
_def("expm1", "x:f64", [F64], "u:f64 t:f64", """
    @x @x f64.ne if @x return end
    @x f64:-40 f64.lt if f64:-1 return end
    @x f64.abs f64:0x1p-54 f64.lt if @x return end
    @x call:exp =u
    @u f64:1 f64.eq if @x return end
    @u f64:1 f64.sub =t
    @x f64.abs f64:1 f64.ge if @t return end
    @t f64:-1 f64.eq if f64:-1 return end
    @t @x f64.mul @u call:log f64.div
""")
# log_dd(x) -> (hi, lo): log(x) for finite x > 0 as a double-double (about 2^-60 relative), so
# pow can form b*log(a) with its rounding error (Dekker's exact product, no FMA in scalar wasm).
_def("log_dd", "x:f64", [F64, F64], _LOGDD_LOCALS, f"""
    i32:0 =e
    @x f64:0x1p-1022 f64.lt if @x f64:0x1p54 f64.mul =x i32:-54 =e end
    @x i64.reinterpret_f64 =b
    @e @b i64:52 i64.shr_u i32.wrap_i64 i32:1023 i32.sub i32.add =e
    @b i64:0xFFFFFFFFFFFFF i64.and i64:0x3FF0000000000000 i64.or f64.reinterpret_i64 =m
    @m f64:SQRT2 f64.gt if @m f64:0.5 f64.mul =m @e i32:1 i32.add =e end
    @m f64:1 f64.sub =f
    f64:2 @f f64.add =th
    @f @th f64:2 f64.sub f64.sub =tl
    @f @th f64.div =sh
    @sh f64:134217729 f64.mul =c @c @c @sh f64.sub f64.sub =ah @sh @ah f64.sub =al
    @th f64:134217729 f64.mul =c @c @c @th f64.sub f64.sub =bh @th @bh f64.sub =bl
    @sh @th f64.mul =p
    @ah @bh f64.mul @p f64.sub @ah @bl f64.mul f64.add @al @bh f64.mul f64.add
    @al @bl f64.mul f64.add =pe
    @f @p f64.sub @pe f64.sub @sh @tl f64.mul f64.sub @th f64.div =sl
    @sh @sh f64.mul =z
    @sh @z {_poly("z", _LOG_R)} f64.mul f64.mul =tail
    @e f64.convert_i32_s =ef
    @ef f64:LN2_HI f64.mul =aa
    f64:2 @sh f64.mul =bb
    @aa @bb f64.add =hh
    @hh @aa f64.sub =c
    @aa @hh @c f64.sub f64.sub @bb @c f64.sub f64.add
    f64:2 @sl f64.mul f64.add @tail f64.add @ef f64:LN2_LO f64.mul f64.add =l
    @hh @l f64.add =p
    @p
    @l @p @hh f64.sub f64.sub
""")
_def("pow", "a:f64 b:f64", [F64], _POW_LOCALS, """
    @b f64:0 f64.eq if f64:1 return end
    @a f64:1 f64.eq if f64:1 return end
    @a @a f64.ne @b @b f64.ne i32.or if @a @b f64.add return end
    @b f64.abs f64:inf f64.eq if
      @a f64.abs f64:1 f64.eq if f64:1 return end
      f64:0 f64:inf @a f64.abs f64:1 f64.lt @b f64:0 f64.gt i32.eq select return
    end
    @b f64.floor @b f64.eq =isint
    @isint @b f64.abs f64:0x1p53 f64.lt i32.and
    @b f64:0.5 f64.mul f64.floor @b f64:0.5 f64.mul f64.ne i32.and =odd
    @a f64.abs f64:inf f64.eq if
      @b f64:0 f64.gt if @a f64:inf @odd select return end
      f64:0 @a f64.copysign f64:0 @odd select return
    end
    @a f64:0 f64.lt @isint i32.eqz i32.and if f64:nan return end
    @a f64:0 f64.eq if
      @b f64:0 f64.gt if @a f64:0 @odd select return end
      f64:inf @a f64.copysign f64:inf @odd select return
    end
    @a f64.abs call:log_dd =ll =lh
    @b @lh f64.mul =yh
    @b f64.abs f64:0x1p30 f64.lt if
      @b f64:134217729 f64.mul =c @c @c @b f64.sub f64.sub =bh @b @bh f64.sub =bl
      @lh f64:134217729 f64.mul =c @c @c @lh f64.sub f64.sub =hh @lh @hh f64.sub =hl
      @bh @hh f64.mul @yh f64.sub @bh @hl f64.mul f64.add @bl @hh f64.mul f64.add
      @bl @hl f64.mul f64.add @b @ll f64.mul f64.add =yl
    end
    @yh call:exp =r
    @r f64.abs f64:inf f64.lt @r f64:0 f64.ne i32.and if @r @r @yl f64.mul f64.add =r end
    @r f64.neg @r @odd @a f64:0 f64.lt i32.and select
""")

# ---- trigonometry ----------------------------------------------------------------------------
# rem_pio2(x) -> (r, q): x = q*pi/2 + r, |r| <= pi/4. Cody-Waite with pi/2 in 33-bit pieces
# (k * piece exact for |k| < 2^20) below 1.6e6; above, rem_pio2_large multiplies the integer
# significand by a 224-bit window of 2/pi's bits (Payne-Hanek) in 32-bit limbs.
_def("rem_pio2", "x:f64", [F64, I32], "k:f64 r:f64 q:i32", """
    @x f64.abs f64:1.6e6 f64.lt if
      @x f64:TWO_OVER_PI f64.mul f64.nearest =k
      @x @k f64:PIO2_1 f64.mul f64.sub @k f64:PIO2_2 f64.mul f64.sub
      @k f64:PIO2_3 f64.mul f64.sub
      @k i64.trunc_sat_f64_s i32.wrap_i64 return
    end
    @x f64.abs call:rem_pio2_large =q =r
    @x f64:0 f64.lt if @r f64.neg i32:0 @q i32.sub return end
    @r @q
""")


def _rem_pio2_large_body() -> str:
    t = ["""
    @ax i64.reinterpret_f64 =bits
    @bits i64:52 i64.shr_u i32.wrap_i64 i32:1075 i32.sub =e
    @bits i64:0xFFFFFFFFFFFFF i64.and i64:0x10000000000000 i64.or =m
    @m i64:32 i64.shr_u =mh
    @m i64:0xFFFFFFFF i64.and =ml
    @e i32:2 i32.sub i32:5 i32.shr_s i32:2 i32.add =t0
    @e i32:32 i32.sub @t0 i32:2 i32.sub i32:5 i32.shl i32.sub i32:30 i32.add i64.extend_i32_s =d
    """]
    for j in range(7):
        t.append(f"@t0 i32:{j} i32.add call:pio2_chunk =c{j}")
    for j in range(7):
        for half, base in (("ml", 6 - j), ("mh", 7 - j)):
            t.append(f"@{half} @c{j} i64.mul =p")
            t.append(f"@L{base} @p i64:0xFFFFFFFF i64.and i64.add =L{base}")
            t.append(f"@L{base + 1} @p i64:32 i64.shr_u i64.add =L{base + 1}")
    for i in range(8):
        t.append(f"@L{i + 1} @L{i} i64:32 i64.shr_u i64.add =L{i + 1}")
        t.append(f"@L{i} i64:0xFFFFFFFF i64.and =L{i}")
    for i in range(6, 1, -1):  # shift left by d so the binary point sits at bit 222
        t.append(f"@L{i} @d i64.shl @L{i - 1} i64:32 @d i64.sub i64.shr_u i64.or")
        t.append(f"i64:0xFFFFFFFF i64.and =S{i}")
    t.append("""
    @S6 i64:30 i64.shr_u i32.wrap_i64 =q
    @S6 i64:0x3FFFFFFF i64.and i64:34 i64.shl @S5 i64:2 i64.shl i64.or @S4 i64:30 i64.shr_u
    i64.or =fh
    @S4 i64:0x3FFFFFFF i64.and i64:34 i64.shl @S3 i64:2 i64.shl i64.or @S2 i64:30 i64.shr_u
    i64.or =fl
    f64:1 =sg
    @fh i64:63 i64.shr_u i32.wrap_i64 if
      @q i32:1 i32.add =q
      f64:-1 =sg
      @fh i64:-1 i64.xor @fl i64.eqz i64.extend_i32_u i64.add =fh
      i64:0 @fl i64.sub =fl
    end
    @fh f64.convert_i64_u f64:0x1p-64 f64.mul @fl f64.convert_i64_u f64:0x1p-128 f64.mul
    f64.add @sg f64.mul =f
    @f f64:PIO2_HI f64.mul @f f64:PIO2_LO f64.mul f64.add
    @q i32:3 i32.and
    """)
    return "\n".join(t)


_LARGE_LOCALS = (
    "bits:i64 m:i64 mh:i64 ml:i64 e:i32 t0:i32 d:i64 p:i64 fh:i64 fl:i64 q:i32 f:f64 sg:f64 "
    + " ".join(f"c{j}:i64" for j in range(7)) + " "
    + " ".join(f"L{i}:i64" for i in range(9)) + " "
    + " ".join(f"S{i}:i64" for i in range(2, 7))
)
_def("rem_pio2_large", "ax:f64", [F64, I32], _LARGE_LOCALS, _rem_pio2_large_body())
_def("sin_k", "r:f64", [F64], "z:f64", f"""
    @r @r f64.mul =z
    @r @r @z f64.mul {_poly("z", _SIN_C)} f64.mul f64.add
""")
_def("cos_k", "r:f64", [F64], "z:f64", f"""
    @r @r f64.mul =z
    f64:1 f64:0.5 @z f64.mul @z @z f64.mul {_poly("z", _COS_C)} f64.mul f64.sub f64.sub
""")
_TRIG_HEAD = """
    @x f64.abs f64:inf f64.eq @x @x f64.ne i32.or if @x @x f64.sub return end
    @x call:rem_pio2 =q =r @r call:sin_k =s @r call:cos_k =c
"""
_TRIG_LOCALS = "r:f64 q:i32 s:f64 c:f64 v:f64"
_def("sin", "x:f64", [F64], _TRIG_LOCALS, f"""
    @x f64.abs f64:0x1p-27 f64.lt if @x return end
    {_TRIG_HEAD}
    @c @s @q i32:1 i32.and select =v
    @v f64.neg @v @q i32:2 i32.and select
""")
_def("cos", "x:f64", [F64], _TRIG_LOCALS, f"""
    {_TRIG_HEAD}
    @s @c @q i32:1 i32.and select =v
    @v f64.neg @v @q i32:1 i32.add i32:2 i32.and select
""")
_def("tan", "x:f64", [F64], _TRIG_LOCALS, f"""
    @x f64.abs f64:0x1p-27 f64.lt if @x return end
    {_TRIG_HEAD}
    @c f64.neg @s f64.div @s @c f64.div @q i32:1 i32.and select
""")
_def("atan", "x:f64", [F64], "t:f64 u:f64 bh:f64 bl:f64 z:f64", f"""
    @x @x f64.ne if @x return end
    @x f64.abs =t
    @t f64:0x1p-27 f64.lt if @x return end
    @t f64:0x1p66 f64.gt if f64:PIO2_HI @x f64.copysign return end
    @t f64:0.4375 f64.lt if
      f64:0 =bh f64:0 =bl @t =u
    else @t f64:0.6875 f64.lt if
      f64:ATAN_HALF_HI =bh f64:ATAN_HALF_LO =bl
      f64:2 @t f64.mul f64:1 f64.sub f64:2 @t f64.add f64.div =u
    else @t f64:1.1875 f64.lt if
      f64:PIO4_HI =bh f64:PIO4_LO =bl @t f64:1 f64.sub @t f64:1 f64.add f64.div =u
    else @t f64:2.4375 f64.lt if
      f64:ATAN_1_5_HI =bh f64:ATAN_1_5_LO =bl
      @t f64:1.5 f64.sub f64:1 f64:1.5 @t f64.mul f64.add f64.div =u
    else
      f64:PIO2_HI =bh f64:PIO2_LO =bl f64:-1 @t f64.div =u
    end end end end
    @u @u f64.mul =z
    @bh @u @z f64.mul {_poly("z", _ATAN_C)} f64.mul @bl f64.sub @u f64.sub f64.sub
    @x f64.copysign
""")
_def("atan2", "y:f64 x:f64", [F64], "t:f64", """
    @x @x f64.ne @y @y f64.ne i32.or if @x @y f64.add return end
    @y f64:0 f64.eq if
      @y f64:PI_HI @y f64.copysign
      @x f64:0 f64.gt @x f64:0 f64.eq f64:1 @x f64.copysign f64:0 f64.gt i32.and i32.or
      select return
    end
    @x f64:0 f64.eq if f64:PIO2_HI @y f64.copysign return end
    @x f64.abs f64:inf f64.eq if
      @y f64.abs f64:inf f64.eq if
        f64:PIO4_HI f64:3PIO4 @x f64:0 f64.gt select @y f64.copysign return
      end
      f64:0 f64:PI_HI @x f64:0 f64.gt select @y f64.copysign return
    end
    @y f64.abs f64:inf f64.eq if f64:PIO2_HI @y f64.copysign return end
    @y @x f64.div f64.abs call:atan =t
    @x f64:0 f64.gt if @t @y f64.copysign return end
    f64:PI_HI @t f64:PI_LO f64.sub f64.sub @y f64.copysign
""")
_def("asin", "x:f64", [F64], "", """
    @x f64.abs f64:1 f64.gt if f64:nan return end
    @x f64:1 @x f64.sub f64:1 @x f64.add f64.mul f64.sqrt call:atan2
""")
_def("acos", "x:f64", [F64], "", """
    @x f64.abs f64:1 f64.gt if f64:nan return end
    f64:1 @x f64.sub f64:1 @x f64.add f64.mul f64.sqrt @x call:atan2
""")

# ---- hyperbolic ------------------------------------------------------------------------------
_def("sinh", "x:f64", [F64], "t:f64 e:f64", """
    @x @x f64.ne if @x return end
    @x f64.abs =t
    @t f64:0x1p-28 f64.lt if @x return end
    @t f64:1 f64.lt if
      @t call:expm1 =e f64:0.5 @e @e @e f64:1 f64.add f64.div f64.add f64.mul @x f64.copysign
      return
    end
    @t f64:22 f64.lt if
      @t call:exp =e f64:0.5 @e f64:1 @e f64.div f64.sub f64.mul @x f64.copysign return
    end
    @t f64:709 f64.lt if f64:0.5 @t call:exp f64.mul @x f64.copysign return end
    f64:0.5 @t f64.mul call:exp =e f64:0.5 @e f64.mul @e f64.mul @x f64.copysign
""")
_def("cosh", "x:f64", [F64], "t:f64 e:f64", """
    @x @x f64.ne if @x return end
    @x f64.abs =t
    @t f64:1 f64.lt if
      @t call:expm1 =e f64:1 @e @e f64.mul f64:2 f64:2 @e f64.mul f64.add f64.div f64.add return
    end
    @t f64:22 f64.lt if
      @t call:exp =e f64:0.5 @e f64.mul f64:0.5 @e f64.div f64.add return
    end
    @t f64:709 f64.lt if f64:0.5 @t call:exp f64.mul return end
    f64:0.5 @t f64.mul call:exp =e f64:0.5 @e f64.mul @e f64.mul
""")
_def("tanh", "x:f64", [F64], "t:f64 e:f64", """
    @x @x f64.ne if @x return end
    @x f64.abs =t
    @t f64:22 f64.gt if f64:1 @x f64.copysign return end
    @t f64:0x1p-28 f64.lt if @x return end
    f64:2 @t f64.mul call:expm1 =e
    @e @e f64:2 f64.add f64.div @x f64.copysign
""")
_def("asinh", "x:f64", [F64], "t:f64 r:f64", """
    @x @x f64.ne @x f64.abs f64:inf f64.eq i32.or if @x return end
    @x f64.abs =t
    @t f64:0x1p-28 f64.lt if @x return end
    @t f64:0x1p28 f64.gt if
      @t call:log f64:LN2 f64.add =r
    else @t f64:2 f64.gt if
      f64:2 @t f64.mul f64:1 @t @t f64.mul f64:1 f64.add f64.sqrt @t f64.add f64.div f64.add
      call:log =r
    else
      @t @t @t f64.mul f64:1 f64:1 @t @t f64.mul f64.add f64.sqrt f64.add f64.div f64.add
      call:log1p =r
    end end
    @r @x f64.copysign
""")
_def("acosh", "x:f64", [F64], "t:f64", """
    @x @x f64.ne if @x return end
    @x f64:1 f64.lt if f64:nan return end
    @x f64:inf f64.eq if @x return end
    @x f64:0x1p28 f64.gt if @x call:log f64:LN2 f64.add return end
    @x f64:2 f64.gt if
      f64:2 @x f64.mul f64:1 @x @x @x f64.mul f64:1 f64.sub f64.sqrt f64.add f64.div f64.sub
      call:log return
    end
    @x f64:1 f64.sub =t
    @t f64:2 @t f64.mul @t @t f64.mul f64.add f64.sqrt f64.add call:log1p
""")
_def("atanh", "x:f64", [F64], "t:f64 r:f64", """
    @x @x f64.ne if @x return end
    @x f64.abs =t
    @t f64:1 f64.gt if f64:nan return end
    @t f64:1 f64.eq if f64:inf @x f64.copysign return end
    @t f64:0x1p-28 f64.lt if @x return end
    @t f64:0.5 f64.lt if
      f64:2 @t f64.mul f64:2 @t f64.mul @t f64.mul f64:1 @t f64.sub f64.div f64.add call:log1p =r
    else
      f64:2 @t f64.mul f64:1 @t f64.sub f64.div call:log1p =r
    end
    f64:0.5 @r f64.mul @x f64.copysign
""")
_def("logistic", "x:f64", [F64], "e:f64", """
    @x f64:0 f64.ge if f64:1 f64:1 @x f64.neg call:exp f64.add f64.div return end
    @x call:exp =e @e f64:1 @e f64.add f64.div
""")
_def("rsqrt", "x:f64", [F64], "", "f64:1 @x f64.sqrt f64.div")
_def("cbrt", "x:f64", [F64], "t:f64 y:f64", """
    @x @x f64.ne @x f64:0 f64.eq i32.or @x f64.abs f64:inf f64.eq i32.or if @x return end
    @x f64.abs =t
    @t call:log f64:3 f64.div call:exp =y
    @y @y @t @y @y f64.mul f64.div f64.sub f64:3 f64.div f64.sub @x f64.copysign
""")

# ---- error function --------------------------------------------------------------------------
# erf on [1, 4): Taylor polynomials about the centres 1.125, 1.375, ..., 3.875 (radius 1/8),
# 13 terms each: within 1.2 ulp of float64 over the range. Their coefficients come from erf(c)
# and erf's derivatives, 2/sqrt(pi) (-1)^(k-1) H_(k-1)(c) exp(-c^2) (physicists' Hermite
# polynomials by their recurrence). The continued fraction there needed 90 to 330 divisions.
_ERF_MID_WIDTH = 0.25
_ERF_MID_TERMS = 13


def _erf_taylor(c: float, n: int) -> list[float]:
    out = [math.erf(c)]
    g = 2 / math.sqrt(math.pi) * math.exp(-c * c)
    h_prev, h = 0.0, 1.0  # H_(k-2), H_(k-1)
    for k in range(1, n):
        out.append(g * (-1) ** (k - 1) * h / math.factorial(k))
        h_prev, h = h, 2 * c * h - 2 * (k - 1) * h_prev
    return out


def _erf_mid_body() -> str:
    """erf(t) for 1 <= t < 4: the interval's index j, then its polynomial in u = t - c_j."""
    parts = ["@t f64:1 f64.sub f64:4 f64.mul i32.trunc_f64_s =j"]
    count = round(3 / _ERF_MID_WIDTH)
    for j in range(count):
        c = 1 + _ERF_MID_WIDTH * (j + 0.5)
        poly = _poly("u", _erf_taylor(c, _ERF_MID_TERMS))
        last = j == count - 1
        head = "" if last else f"@j i32:{j} i32.le_s if "
        parts.append(f"{head}@t f64:{c.hex()} f64.sub =u {poly} return{'' if last else ' end'}")
    return "\n".join(parts)


# erf: alternating Taylor series below 1 (little cancellation there), 1 - erfc above.
# erfc: 1 - erf below 1; above, exp(-x^2)/sqrt(pi) over Laplace's continued fraction evaluated
# backwards with a depth that converges to float64 at each range.
_def("erf_series", "x:f64", [F64], "z:f64", f"""
    @x @x f64.mul =z
    @x f64:TWO_OVER_SQRTPI f64.mul {_poly("z", _ERF_C)} f64.mul
""")
_def("erfc_cf", "x:f64", [F64], "f:f64 k:f64 hi:f64 lo:f64 xs:f64", """
    f64:330 f64:170 f64:90 f64:45 f64:25 @x f64:5 f64.lt select @x f64:3 f64.lt select
    @x f64:2 f64.lt select @x f64:1.5 f64.lt select =k
    @x =f
    block loop
      @k f64:0 f64.le br_if:1
      @x @k f64:0.5 f64.mul @f f64.div f64.add =f
      @k f64:1 f64.sub =k
      br:0
    end end
    @x i64.reinterpret_f64 i64:0xFFFFFFFFF8000000 i64.and f64.reinterpret_i64 =xs
    @xs @xs f64.mul =hi
    @x @xs f64.sub @x @xs f64.add f64.mul =lo
    @hi f64.neg call:exp @lo f64.neg call:exp f64.mul f64:INV_SQRTPI f64.mul @f f64.div
""")
_def("erf_mid", "t:f64", [F64], "u:f64 j:i32", _erf_mid_body())
# erf of float32 (and narrower) arguments: |x| P(x^2) / Q(x^2) on |x| <= 4 (erf rounds to 1 in
# float32 from 3.92 on), with its sign copied back. P (degree 9 in x^2) and Q (degree 8) are a
# fit of our own: weighted least squares on Chebyshev nodes, reweighted toward the minimax
# error, solved in a Chebyshev basis of x^2 and converted to powers. Within 4.4e-13 of erf
# relative in float64; rounded to float32 it is erf's correctly rounded value but for about 1
# in 200,000 arguments (one ulp off). Branch-free, so the SIMD loop (simd.py) runs the same
# operations in the same order on f64x2 lanes: scalar and vector results are bit-identical,
# at a few times the speed of the float64 `erf` below (an encoder layer's GELU).
ERF_RATIONAL_P = [float.fromhex(c) for c in (
    "0x1.20dd75042a415p+0", "0x1.03f65a4be47eap-3", "0x1.7ec578f91199ap-5",
    "0x1.6a6bb93c9c595p-10", "0x1.102c17b481763p-12", "-0x1.315f7dce1b403p-17",
    "-0x1.29e721a811ce6p-22", "-0x1.fed6a985ed2b5p-25", "-0x1.1b5877e90b6c4p-31",
    "0x1.06cd40d13f014p-40",
)]
ERF_RATIONAL_Q = [float.fromhex(c) for c in (
    "0x1.0000000000000p+0", "0x1.c886b0c9c59d9p-2", "0x1.70b67112dfe57p-4",
    "0x1.56b063f407e75p-7", "0x1.6ec43e1fc3a2bp-11", "0x1.0f26c0caa249bp-16",
    "-0x1.bc1bee4f9ca4dp-20", "-0x1.9385f68f73601p-23", "-0x1.256594a3f056dp-27",
)]
ERF_RATIONAL_BOUND = 4.0
_def("erf_rational", "x:f64", [F64], "t:f64 z:f64", f"""
    @x f64.abs f64:{ERF_RATIONAL_BOUND} f64.min =t
    @t @t f64.mul =z
    @t {_poly("z", ERF_RATIONAL_P)} f64.mul {_poly("z", ERF_RATIONAL_Q)} f64.div @x f64.copysign
""")
_def("erf", "x:f64", [F64], "t:f64", """
    @x @x f64.ne if @x return end
    @x f64.abs =t
    @t f64:1 f64.lt if @x call:erf_series return end
    @t f64:4 f64.lt if @t call:erf_mid @x f64.copysign return end
    @t f64:6 f64.gt if f64:1 @x f64.copysign return end
    f64:1 @t call:erfc_cf f64.sub @x f64.copysign
""")
_def("erfc", "x:f64", [F64], "", """
    @x @x f64.ne if @x return end
    @x f64:1 f64.lt if f64:1 @x call:erf f64.sub return end
    @x f64:27.3 f64.gt if f64:0 return end
    @x call:erfc_cf
""")


# ---- erf_inv, lgamma, digamma --------------------------------------------------------------------
# erf_inv: the reference's closed-form first guess, then Newton steps on erf (on erfc above 0.5,
# where 1 - y is exact and erf(x) - y would cancel).
_def("erf_inv", "y:f64", [F64], "t:f64 x:f64 ln:f64 tt:f64 n:i32", """
    @y @y f64.ne if @y return end
    @y f64.abs =t
    @t f64:1 f64.gt if f64:nan return end
    @t f64:1 f64.eq if f64:inf @y f64.copysign return end
    f64:1 @t f64.sub f64:1 @t f64.add f64.mul call:log =ln
    f64:4.330746750799873 @ln f64:0.5 f64.mul f64.add =tt
    @tt @tt f64.mul @ln f64:6.802721088435374 f64.mul f64.sub f64.sqrt @tt f64.sub f64.sqrt =x
    i32:4 =n
    block loop
      @n i32.eqz br_if:1
      @t f64:0.5 f64.lt if
        @x @x call:erf @t f64.sub f64:TWO_OVER_SQRTPI @x @x f64.mul f64.neg call:exp f64.mul
        f64.div f64.sub =x
      else
        @x @x call:erfc f64:1 @t f64.sub f64.sub f64:TWO_OVER_SQRTPI @x @x f64.mul f64.neg
        call:exp f64.mul f64.div f64.add =x
      end
      @n i32:1 i32.sub =n
      br:0
    end end
    @x @y f64.copysign
""")
# |sin(pi x)| for finite x, reduced exactly to pi * s with s in [0, 1/2].
_def("abs_sinpi", "x:f64", [F64], "s:f64", """
    @x @x f64:0.5 f64.mul f64.nearest f64:2 f64.mul f64.sub f64.abs =s
    @s f64:0.5 f64.gt if f64:1 @s f64.sub =s end
    @s f64:PI_HI f64.mul call:sin
""")
# lgamma for x >= 0.5: series about 1 and 2 (zeta coefficients), the recurrence below 10,
# Stirling's series above.
_def("lgamma_pos", "x:f64", [F64], "z:f64 p:f64 w:f64", """
    @x f64:1.5 f64.lt if @x f64:1 f64.sub =z @z LGAMMA1(z) f64.mul return end
    @x f64:10 f64.lt if
      f64:1 =p
      block loop
        @x f64:2.5 f64.lt br_if:1
        @x f64:1 f64.sub =x
        @p @x f64.mul =p
        br:0
      end end
      @x f64:2 f64.sub =z
      @p call:log @z LGAMMA2(z) f64.mul f64.add return
    end
    f64:1 @x f64.div =z
    @z @z f64.mul =w
    @x f64:0.5 f64.sub @x call:log f64.mul @x f64.sub f64:LN_SQRT_2PI f64.add
    @z STIRLING(w) f64.mul f64.add
""")
_def("lgamma", "x:f64", [F64], "", """
    @x @x f64.ne if @x return end
    @x f64.abs f64:inf f64.eq if f64:inf return end
    @x f64:0 f64.le @x f64.floor @x f64.eq i32.and if f64:inf return end
    @x f64:0.5 f64.ge if @x call:lgamma_pos return end
    @x f64.abs f64:0x1p-60 f64.lt if @x f64.abs call:log f64.neg return end
    f64:PI_HI @x call:abs_sinpi f64.div call:log f64:1 @x f64.sub call:lgamma_pos f64.sub
""")
_def("digamma", "x:f64", [F64], "r:f64 s:f64 z:f64 w:f64", """
    @x @x f64.ne @x f64:-inf f64.eq i32.or if f64:nan return end
    @x f64:inf f64.eq if @x return end
    @x f64:0 f64.le @x f64.floor @x f64.eq i32.and if f64:nan return end
    f64:0 =r
    @x f64:0.5 f64.lt if
      @x @x f64.nearest f64.sub f64:PI_HI f64.mul =s
      f64:PI_HI @s call:cos f64.mul @s call:sin f64.div f64.neg =r
      f64:1 @x f64.sub =x
    end
    block loop
      @x f64:10 f64.ge br_if:1
      @r f64:1 @x f64.div f64.sub =r
      @x f64:1 f64.add =x
      br:0
    end end
    f64:1 @x @x f64.mul f64.div =w
    @r @x call:log f64.add f64:0.5 @x f64.div f64.sub @w DIGAMMA_ASYM(w) f64.mul f64.sub
""")


# fmt: on


# 2/pi's fraction bits, 32 per entry (two zero entries first: windows may start before bit 0).
# fmt: off
_TWO_OVER_PI_BITS = (
    0, 0,
    0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB,
    0xDEBBC561, 0xB7246E3A, 0x424DD2E0, 0x06492EEA, 0x09D1921C, 0xFE1DEB1C, 0xB129A73E,
    0xE88235F5, 0x2EBB4484, 0xE99C7026, 0xB45F7E41, 0x3991D639, 0x835339F4, 0x9C845F8B,
    0xBDF9283B, 0x1FF897FF, 0xDE05980F, 0xEF2F118B, 0x5A0A6D1F, 0x6D367ECF, 0x27CB09B7,
    0x4F463F66, 0x9E5FEA2D, 0x7527BAC7, 0xEBE5F17B, 0x3D0739F7, 0x8A5292EA, 0x6BFB5FB1,
    0x1F8D5D08, 0x56033046,
)
# fmt: on


def _pio2_chunk() -> Func:
    """pio2_chunk(t: i32) -> i64: _TWO_OVER_PI_BITS[t], as a br_table jump table."""
    f = Func([I32], [I64])
    n = len(_TWO_OVER_PI_BITS)
    for _ in range(n):
        f.block("block")
    f.get(0)
    f.br_table(list(range(n)), n - 1)
    for i, v in enumerate(_TWO_OVER_PI_BITS):
        f.end()
        f.i64(v)
        if i < n - 1:
            f.op("return")
    return f


_SPECS["pio2_chunk"] = ([("t", I32)], [I64], [], "")
_BUILDERS: dict[str, Callable[[], Func]] = {"pio2_chunk": _pio2_chunk}


# ---- assembling ------------------------------------------------------------------------------
_BLOCK_TYPES = {"": 0x40, "f64": F64, "f32": F32, "i32": I32, "i64": I64}
_cache: dict[tuple[str, tuple[int, ...]], Func] = {}
_deps: dict[str, list[str]] = {}


def helper_names() -> list[str]:
    return list(_SPECS)


def deps(name: str) -> list[str]:
    d = _deps.get(name)
    if d is None:
        d = _deps[name] = sorted({t[5:] for t in _SPECS[name][3].split() if t.startswith("call:")})
    return d


def build_helper(name: str, index_of: Callable[[str], int]) -> Func:
    """The helper's function, calling other helpers at `index_of(callee)`."""
    callees = deps(name)
    key = (name, tuple(index_of(c) for c in callees))
    f = _cache.get(key)
    if f is None:
        f = _cache[key] = _assemble(name, dict(zip(callees, key[1])))
    return f


def _zeta_minus_1(k: int) -> float:
    """zeta(k) - 1 for k >= 2: a partial sum plus Euler-Maclaurin's tail."""
    n = 60
    total = math.fsum(j**-k for j in range(2, n))
    tail = n ** (1 - k) / (k - 1) + 0.5 * n**-k + k * n ** (-k - 1) / 12
    tail -= k * (k + 1) * (k + 2) * n ** (-k - 3) / 720
    return total + tail


_EULER_GAMMA = 0.5772156649015329


def _macros() -> dict[str, list[float]]:
    z1 = [-_EULER_GAMMA] + [(-1) ** k * (1 + _zeta_minus_1(k)) / k for k in range(2, 60)]
    z2 = [1 - _EULER_GAMMA] + [(-1) ** k * _zeta_minus_1(k) / k for k in range(2, 34)]
    bern = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]
    stirling = [b / (2 * k * (2 * k - 1)) for k, b in enumerate(bern, 1)]
    digamma = [b / (2 * k) for k, b in enumerate(bern, 1)]
    return {"LGAMMA1": z1, "LGAMMA2": z2, "STIRLING": stirling, "DIGAMMA_ASYM": digamma}


_MACROS: dict[str, list[float]] = {}


def _expand(body: str) -> str:
    """Replace NAME(var) polynomial macros (coefficients computed on first use)."""
    if "(" not in body:
        return body
    if not _MACROS:
        _MACROS.update(_macros())
    for name, coeffs in _MACROS.items():
        for var in ("z", "w"):
            body = body.replace(f"{name}({var})", _poly(var, coeffs))
    return body


def _num(s: str) -> float:
    if s in _K:
        return _K[s]
    if s.lstrip("-").startswith("0x") and "p" in s:
        return float.fromhex(s)
    return float(s)


def _assemble(name: str, callee_index: dict[str, int]) -> Func:
    if name in _BUILDERS:
        return _BUILDERS[name]()
    params, results, locs, body = _SPECS[name]
    body = _expand(body)
    f = Func([t for _, t in params], results)
    names = {n: i for i, (n, _) in enumerate(params)}
    for n, t in locs:
        names[n] = f.local(t)
    for tok in body.split():
        c = tok[0]
        if c == "@":
            f.get(names[tok[1:]])
        elif c == "=":
            f.set(names[tok[1:]])
        elif c == ":":
            f.tee(names[tok[1:]])
        elif ":" in tok:
            kind, arg = tok.split(":", 1)
            if kind == "f64":
                f.f64(_num(arg))
            elif kind == "f32":
                f.f32(_num(arg))
            elif kind == "i32":
                f.i32(int(arg, 0))
            elif kind == "i64":
                f.i64(int(arg, 0))
            elif kind == "call":
                f.call(callee_index[arg])
            elif kind == "br":
                f.br(int(arg))
            elif kind == "br_if":
                f.br_if(int(arg))
            elif kind in ("if", "block", "loop"):
                f.block(kind, _BLOCK_TYPES[arg])
            else:
                raise ValueError(f"bad token {tok!r} in helper {name}")
        elif tok in ("if", "block", "loop"):
            f.block(tok)
        elif tok == "end":
            f.end()
        else:
            f.op(tok)
    return f
