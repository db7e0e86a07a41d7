"""GLSL ES 3.00 helper functions for the webgl codegen: exact bit-level ops and float32 math.

GLSL ES lets compilers treat NaN loosely (`isnan` may be folded away, comparisons with NaN are
not guaranteed false) and gives builtins loose accuracy, so NaN-sensitive ops are bit tests and
the transcendentals (glsl/libm.py, glsl/special.py) are written with explicit range reduction
and polynomials. WebGL2 is GLSL ES 3.00: no `ldexp`, `frexp`, `bitCount`, `findMSB`,
`umulExtended` or `precise` (those are ES 3.10+), so helpers build them from shifts and masks.
`HELPERS[name]` is GLSL source; `DEPS[name]` lists helpers it calls (emitted first).

Every shader declares `uniform int u_zero;` (always 0, set by the runtime and unknown to the
compiler): `fb(x)` hides x from unsafe float rewrites (x + 0.0 -> x, x * 0.0 -> 0, x - x -> 0,
re-association), as WGSL's `opq` does on the webgpu side.
"""

from __future__ import annotations

from . import libm as glsl_libm
from . import special as glsl_special

HELPERS: dict[str, str] = {}
DEPS: dict[str, tuple[str, ...]] = {}


def _h(name: str, src: str, *deps: str) -> None:
    HELPERS[name] = src.strip("\n")
    DEPS[name] = deps


# ---- optimization barrier ------------------------------------------------------------------------
_h("fb", "float fb(float x) { return uintBitsToFloat(floatBitsToUint(x) | uint(u_zero)); }")
_h("fb2", "float fb2(float x) { return uintBitsToFloat(floatBitsToUint(x) ^ uint(u_zero)); }")

# ---- classification and exact float ops ---------------------------------------------------------
_h("f_nan", "const uint F_NAN = 0x7fc00000u;")
_h("f_isnan", "bool f_isnan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }")
_h("f_isinf", "bool f_isinf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }")
_h(
    "f_isfinite",
    "bool f_isfinite(float x) { return (floatBitsToUint(x) & 0x7f800000u) != 0x7f800000u; }",
)
_h(
    "f_lt",
    "bool f_lt(float a, float b) { return !(f_isnan(a) || f_isnan(b)) && a < b; }",
    "f_isnan",
)
_h(
    "f_le",
    "bool f_le(float a, float b) { return !(f_isnan(a) || f_isnan(b)) && a <= b; }",
    "f_isnan",
)
_h(
    "f_eq",
    "bool f_eq(float a, float b) { return !(f_isnan(a) || f_isnan(b)) && a == b; }",
    "f_isnan",
)
_h("f_ne", "bool f_ne(float a, float b) { return !f_eq(a, b); }", "f_eq")
# MAX/MIN: NaN-propagating; of +0 and -0, max is +0 and min is -0 (AND / OR of the bits).
_h(
    "f_max",
    """
float f_max(float a, float b) {
  if (f_isnan(a) || f_isnan(b)) { return uintBitsToFloat(F_NAN); }
  if (a > b) { return a; }
  if (b > a) { return b; }
  return uintBitsToFloat(floatBitsToUint(a) & floatBitsToUint(b));
}""",
    "f_isnan",
    "f_nan",
)
_h(
    "f_min",
    """
float f_min(float a, float b) {
  if (f_isnan(a) || f_isnan(b)) { return uintBitsToFloat(F_NAN); }
  if (a < b) { return a; }
  if (b < a) { return b; }
  return uintBitsToFloat(floatBitsToUint(a) | floatBitsToUint(b));
}""",
    "f_isnan",
    "f_nan",
)
# 2^k for -126 <= k <= 127 (a normal power of two) and p * 2^k for any k (two steps, so that
# results near the subnormal range round once): GLSL ES 3.00 has no ldexp.
_h("pow2i", "float pow2i(int k) { return uintBitsToFloat(uint(k + 127) << 23); }")
_h(
    "ldexp2",
    """
float ldexp2(float p, int k) {
  int a = clamp(k / 2, -126, 127);
  int b = clamp(k - a, -126, 127);
  return fb(p * pow2i(a)) * pow2i(b);
}""",
    "pow2i",
    "fb",
)
# Division: IEEE special cases by hand, then the quotient of the mantissas (in [1, 2)) corrected
# by its exact remainder (a Dekker product), scaled back by the exponent difference. Where the
# device divides correctly (the start-up probe says so), kernels use `f_div_hw`.
_h("df", "struct df { float hi; float lo; };")
_h(
    "split",
    """
df split(float a) {
  float c = fb(4097.0 * a);
  float hi = fb(c - fb(c - a));
  return df(hi, a - hi);
}""",
    "df",
    "fb",
)
_h(
    "two_prod",
    """
df two_prod(float a, float b) {
  float p = fb(a * b);
  df x = split(a);
  df y = split(b);
  float e = fb(fb(fb(fb(x.hi * y.hi) - p) + fb(x.hi * y.lo)) + fb(x.lo * y.hi)) + fb(x.lo * y.lo);
  return df(p, e);
}""",
    "split",
)
_h(
    "f_div",
    """
float f_div(float a, float b) {
  uint ua = floatBitsToUint(a) & 0x7fffffffu;
  uint ub = floatBitsToUint(b) & 0x7fffffffu;
  uint sign = (floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u;
  if (ua > 0x7f800000u || ub > 0x7f800000u || (ua == ub && (ua == 0u || ua == 0x7f800000u))) {
    return uintBitsToFloat(F_NAN);
  }
  if (ua == 0x7f800000u || ub == 0u) { return uintBitsToFloat(sign | 0x7f800000u); }
  if (ub == 0x7f800000u || ua == 0u) { return uintBitsToFloat(sign); }
  int e = int(ua >> 23) - int(ub >> 23);
  if (ua < 0x00800000u || ub < 0x00800000u || e < -125) { return fb(a / b); }
  if (e > 128) { return uintBitsToFloat(sign | 0x7f800000u); }
  float ma = uintBitsToFloat((ua & 0x7fffffu) | 0x3f800000u);
  float mb = uintBitsToFloat((ub & 0x7fffffu) | 0x3f800000u);
  float q = fb(ma / mb);
  df p = two_prod(q, mb);
  float qc = q + fb(fb(fb(ma - p.hi) - p.lo) / mb);
  float mag = ldexp2(qc, e);
  return uintBitsToFloat(floatBitsToUint(mag) | sign);
}""",
    "two_prod",
    "ldexp2",
    "f_nan",
)
_h("f_div_hw", "float f_div_hw(float a, float b) { return fb(a / b); }", "fb")
_h(
    "f_sign",
    """
float f_sign(float x) {
  uint u = floatBitsToUint(x);
  if ((u & 0x7fffffffu) == 0u || f_isnan(x)) { return x; }
  return uintBitsToFloat((u & 0x80000000u) | 0x3f800000u);
}""",
    "f_isnan",
)
# floor/ceil/round on the bits' exponent: exact for every float32 (|x| >= 2^23 is integral),
# keeping -0 and NaN; round is half to even.
_h(
    "f_floor",
    """
float f_floor(float x) {
  if (!(abs(x) < 8388608.0)) { return x; }
  float t = trunc(x);
  return (t > x) ? t - 1.0 : t;
}""",
)
_h(
    "f_ceil",
    """
float f_ceil(float x) {
  if (!(abs(x) < 8388608.0)) { return x; }
  float t = trunc(x);
  float c = (t < x) ? t + 1.0 : t;
  return uintBitsToFloat(floatBitsToUint(c) | (floatBitsToUint(x) & 0x80000000u));
}""",
)
_h(
    "f_round",
    """
float f_round(float x) {
  if (!(abs(x) < 8388608.0)) { return x; }
  float r = roundEven(x);
  return uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(x) & 0x80000000u));
}""",
)
# fmod, exact: |a| = ma * 2^ea, |b| = mb * 2^eb (24-bit integer mantissas); the remainder of
# ma * 2^(ea-eb) by mb is built 8 bits at a time, then scaled back by 2^eb.
_h(
    "f_fmod",
    """
float f_fmod(float a, float b) {
  uint ua = floatBitsToUint(a);
  uint xa = ua & 0x7fffffffu;
  uint xb = floatBitsToUint(b) & 0x7fffffffu;
  if (xa >= 0x7f800000u || xb > 0x7f800000u || xb == 0u) { return uintBitsToFloat(F_NAN); }
  if (xa < xb) { return a; }
  int ea = int(xa >> 23);
  uint ma = xa & 0x7fffffu;
  if (ea == 0) { ea = 1; } else { ma = ma | 0x800000u; }
  int eb = int(xb >> 23);
  uint mb = xb & 0x7fffffu;
  if (eb == 0) { eb = 1; } else { mb = mb | 0x800000u; }
  uint r = ma % mb;
  int d = ea - eb;
  for (int k = 0; k < 64; k++) {
    if (d <= 0 || r == 0u) { break; }
    int s = min(d, 8);
    r = (r << uint(s)) % mb;
    d = d - s;
  }
  float mag = ldexp2(float(r), eb - 150);
  return uintBitsToFloat((ua & 0x80000000u) | floatBitsToUint(mag));
}""",
    "f_nan",
    "ldexp2",
)
_h(
    "f_nextafter",
    """
float f_nextafter(float a, float b) {
  if (f_isnan(a) || f_isnan(b)) { return uintBitsToFloat(F_NAN); }
  if (a == b) { return b; }
  uint ua = floatBitsToUint(a);
  if ((ua & 0x7fffffffu) == 0u) { return uintBitsToFloat((floatBitsToUint(b) & 0x80000000u) | 1u); }
  if ((a < b) == (a > 0.0)) { return uintBitsToFloat(ua + 1u); }
  return uintBitsToFloat(ua - 1u);
}""",
    "f_isnan",
    "f_nan",
)
_TINY = "((floatBitsToUint(b) >> 16) & 0x8000u) | 1u"  # the smallest subnormal with b's sign
for _fmt, _to, _from in (
    ("f16", "f32_to_f16(a)", "f16_to_f32({})"),
    ("bf16", "(floatBitsToUint(a) >> 16)", "uintBitsToFloat(({}) << 16)"),
):
    _h(
        f"f_nextafter_{_fmt}",
        f"""
float f_nextafter_{_fmt}(float a, float b) {{
  if (f_isnan(a) || f_isnan(b)) {{ return uintBitsToFloat(F_NAN); }}
  if (a == b) {{ return b; }}
  uint ua = {_to};
  if ((ua & 0x7fffu) == 0u) {{ return {_from.format(_TINY)}; }}
  if ((a < b) == (a > 0.0)) {{ return {_from.format("ua + 1u")}; }}
  return {_from.format("ua - 1u")};
}}""",
        "f_isnan",
        "f_nan",
        *(("f32_to_f16", "f16_to_f32") if _fmt == "f16" else ()),
    )

# ---- float16 / bfloat16 as float values ---------------------------------------------------------
# f32 -> binary16 bits, round half to even; NaN stays NaN (quiet), overflow -> inf. (GLSL's
# packHalf2x16 leaves the rounding to the implementation.)
_h(
    "f32_to_f16",
    """
uint f32_to_f16(float x) {
  uint u = floatBitsToUint(x);
  uint s = (u >> 16) & 0x8000u;
  uint a = u & 0x7fffffffu;
  if (a > 0x7f800000u) { return s | 0x7e00u | ((a >> 13) & 0x3ffu); }
  if (a >= 0x477ff000u) { return s | 0x7c00u; }
  if (a >= 0x38800000u) {
    uint r = a - 0x38000000u;
    return s | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13);
  }
  return s | uint(roundEven(uintBitsToFloat(a) * 16777216.0));
}""",
)
_h(
    "f16_to_f32",
    """
float f16_to_f32(uint h) {
  uint s = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 0u) { return uintBitsToFloat(s | floatBitsToUint(float(m) * 5.9604644775390625e-8)); }
  if (e == 31u) { return uintBitsToFloat(s | 0x7f800000u | (m << 13)); }
  return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
}""",
)
_h(
    "round_f16",
    "float round_f16(float x) { return f16_to_f32(f32_to_f16(x)); }",
    "f32_to_f16",
    "f16_to_f32",
)
_h(
    "round_bf16",
    """
float round_bf16(float x) {
  uint u = floatBitsToUint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) { return uintBitsToFloat(u | 0x400000u); }
  return uintBitsToFloat((u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u);
}""",
)

# ---- integer ops with the IR's rules (x/0 = -1, x%0 = x, INT_MIN/-1 wraps) -----------------------
# Signed division runs on magnitudes in uint: drivers disagree on int `/` and `%` at INT_MIN.
_h(
    "idiv_i32",
    """
int idiv_i32(int a, int b) {
  if (b == 0) { return -1; }
  uint ua = a < 0 ? 0u - uint(a) : uint(a);
  uint ub = b < 0 ? 0u - uint(b) : uint(b);
  uint q = ua / ub;
  return int((a < 0) != (b < 0) ? 0u - q : q);
}""",
)
_h(
    "idiv_u32",
    "uint idiv_u32(uint a, uint b) { if (b == 0u) { return 0xffffffffu; } return a / b; }",
)
_h(
    "imod_i32",
    """
int imod_i32(int a, int b) {
  if (b == 0) { return a; }
  uint ua = a < 0 ? 0u - uint(a) : uint(a);
  uint ub = b < 0 ? 0u - uint(b) : uint(b);
  uint r = ua % ub;
  return int(a < 0 ? 0u - r : r);
}""",
)
_h("imod_u32", "uint imod_u32(uint a, uint b) { if (b == 0u) { return a; } return a % b; }")
# population count and count-leading-zeros of a 32-bit pattern (ES 3.00 has neither builtin)
_h(
    "popcnt",
    """
uint popcnt(uint v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  v = (v + (v >> 4)) & 0x0f0f0f0fu;
  return (v * 0x01010101u) >> 24;
}""",
)
_h(
    "clz32",
    """
uint clz32(uint v) {
  if (v == 0u) { return 32u; }
  uint n = 0u;
  if ((v & 0xffff0000u) == 0u) { n += 16u; v <<= 16; }
  if ((v & 0xff000000u) == 0u) { n += 8u; v <<= 8; }
  if ((v & 0xf0000000u) == 0u) { n += 4u; v <<= 4; }
  if ((v & 0xc0000000u) == 0u) { n += 2u; v <<= 2; }
  if ((v & 0x80000000u) == 0u) { n += 1u; }
  return n;
}""",
)


# ---- transcendentals (glsl/libm.py) and special functions (glsl/special.py) ---------------------
glsl_libm.register(_h)
glsl_special.register(_h)
