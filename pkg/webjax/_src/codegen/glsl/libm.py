"""float32 transcendentals in GLSL ES 3.00 (WebGL2), accurate to a few ulp on any conforming GPU.

GLSL ES only asks builtins like sin, exp and log for loose accuracy (often no better than
mediump), so this library builds everything from + - * / and bit operations: exp and log by
splitting off the exponent and a short series, sin/cos/tan after a Payne-Hanek reduction done in
integer arithmetic (exact for every float32, however large), pow through a double-float log2
followed by exp2. It is the webgl counterpart of the WGSL library and follows it step by step;
ES 3.00 lacks ldexp, umulExtended and fma, so 2^k scaling goes through `ldexp2`/`pow2i` and
64-bit products are built from 16-bit halves. `fb()` (glsl/math.py) stops compilers from
re-associating or fusing where the rounding order matters. Division goes through `f_div`
(correctly rounded) except in a few terms whose rounding error is damped or corrected later.
Many WebGL devices flush subnormals to zero (Mesa's llvmpipe does, as do D3D11 back ends), so zero,
sign and subnormal tests look at the bits, subnormal inputs are normalized by integer-to-float
conversion, and subnormal results of exp, exp2, pow and atan2 are rounded from mantissa bits
(`scale2`): with or without flushing, the results match the WGSL library on normal numbers.
Registers helpers into the tables that glsl/math.py passes in (`register(h)`).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

from ..libm_tables import two_over_pi_words

_T = ", ".join(f"0x{w:08x}u" for w in two_over_pi_words(10))
_INF = "uintBitsToFloat(0x7f800000u)"
_NEG_SIGN = "(floatBitsToUint(x) & 0x80000000u) != 0u"  # x has its sign bit set
# f(x) = x (correctly rounded) for +-0 and subnormal x: checked on the bits, so that devices that
# flush subnormals to zero (most WebGL ones) still return them
_TINY = "if ((floatBitsToUint(x) & 0x7f800000u) == 0u) { return x; }"

_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "libm_consts": (
        """
const float LN2_HI = uintBitsToFloat(0x3f317200u);
const float LN2_LO = uintBitsToFloat(0x35bfbe8eu);
const float PIO2_HI = uintBitsToFloat(0x3fc90fdbu);
const float PIO2_LO = uintBitsToFloat(0xb33bbd2eu);
const float PI_HI = uintBitsToFloat(0x40490fdbu);
const float PI_LO = uintBitsToFloat(0xb3bbbd2eu);""",
        (),
    ),
    # e^r for |r| <= 0.35: Taylor series to r^7 (truncation below 0.1 ulp)
    "exp_poly": (
        """
float exp_poly(float r) {
  float p = 1.0 / 720.0 + r * (1.0 / 5040.0);
  float q = 1.0 / 24.0 + r * (1.0 / 120.0 + r * p);
  return 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * q)));
}""",
        (),
    ),
    # p 2^k for a positive normal p (k within ldexp2's reach), rounded once. A subnormal result
    # is built from p's mantissa bits (rounded half to even), so it comes out right on devices
    # that flush subnormal arithmetic results to zero as well
    "scale2": (
        """
float scale2(float p, int k) {
  uint u = floatBitsToUint(p);
  int e = int(u >> 23) - 127 + k;  // exponent of the result
  if (e >= -126) { return ldexp2(p, k); }
  int s = -e - 126;  // p's 24-bit mantissa m, shifted right by s, counts units of 2^-149
  if (s > 25) { return 0.0; }
  uint m = (u & 0x7fffffu) | 0x800000u;
  uint q = m >> uint(s);
  uint rem = m - (q << uint(s));
  uint hf = 1u << uint(s - 1);
  if (rem > hf || (rem == hf && (q & 1u) == 1u)) { q = q + 1u; }
  return uintBitsToFloat(q);
}""",
        ("ldexp2",),
    ),
    "m_exp": (
        """
float m_exp(float x) {
  if (f_isnan(x)) { return x; }
  if (x >= uintBitsToFloat(0x42b17218u)) { return F_INF; }
  if (x < -103.97209) { return 0.0; }
  float k = roundEven(x * 1.44269504);
  float r = fb(x - k * LN2_HI) - k * LN2_LO;
  return scale2(exp_poly(r), int(k));
}""",
        ("f_isnan", "fb", "libm_consts", "scale2", "exp_poly"),
    ),
    "m_exp2": (
        """
float m_exp2(float x) {
  if (f_isnan(x)) { return x; }
  if (x >= 128.0) { return F_INF; }
  if (x < -150.0) { return 0.0; }
  float k = roundEven(x);
  float f = x - k;
  return scale2(exp_poly(fb(f * LN2_HI) + f * LN2_LO), int(k));
}""",
        ("f_isnan", "fb", "libm_consts", "scale2", "exp_poly"),
    ),
    "m_expm1": (
        """
float m_expm1(float x) {
  if (f_isnan(x)) { return x; }
  $TINY
  if (abs(x) < 0.34657359) {
    float q = 1.0 / 720.0 + x * (1.0 / 5040.0 + x * (1.0 / 40320.0));
    float p = 1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * q));
    return x + x * x * (0.5 + x * p);
  }
  if (x < -17.0) { return -1.0; }
  return fb(m_exp(x)) - 1.0;
}""",
        ("m_exp", "fb"),
    ),
    # x = (1 + f) 2^e with 1 + f in [sqrt(1/2), sqrt(2)). A subnormal x is scaled up by 2^23 as
    # float(bits) * 2^-126, which involves no subnormal operand (devices that flush them still work)
    "log_parts": (
        """
struct LogParts { float f; float e; };
LogParts log_parts(float x) {
  uint u = floatBitsToUint(x);
  int e = int(u >> 23) - 127;
  if ((u >> 23) == 0u) {
    u = floatBitsToUint(float(u) * uintBitsToFloat(0x00800000u));
    e = int(u >> 23) - 150;
  }
  float m = uintBitsToFloat((u & 0x7fffffu) | 0x3f800000u);
  if (m > 1.41421354) { m = m * 0.5; e = e + 1; }
  return LogParts(m - 1.0, float(e));
}""",
        (),
    ),
    # log(1 + f) = f - (hfsq - s (hfsq + R(s^2))) with s = f / (2 + f), hfsq = f^2 / 2
    "m_log": (
        """
float m_log(float x) {
  uint u = floatBitsToUint(x);
  if (f_isnan(x) || u > 0x80000000u) { return uintBitsToFloat(F_NAN); }  // NaN or below -0
  if ((u & 0x7fffffffu) == 0u) { return -F_INF; }
  if (u == 0x7f800000u) { return x; }
  LogParts lp = log_parts(x);
  float f = lp.f;
  float s = f_div(f, 2.0 + f);
  float z = s * s;
  float r = z * (0.666666667 + z * (0.4 + z * (0.285714286 + z * (0.222222222 + z * 0.181818182))));
  float hfsq = 0.5 * f * f;
  float lg = f - fb(hfsq - s * (hfsq + r));
  return lp.e * LN2_HI + fb(lp.e * LN2_LO + lg);
}""",
        ("f_div", "f_isnan", "f_nan", "fb", "libm_consts", "log_parts"),
    ),
    # log1p(x) = log(u) * x / (u - 1) with u = 1 + x rounded (corrects u's rounding error)
    "m_log1p": (
        """
float m_log1p(float x) {
  if (f_isnan(x) || x < -1.0) { return uintBitsToFloat(F_NAN); }
  $TINY
  if (x == -1.0) { return -F_INF; }
  if (x == F_INF) { return x; }
  float u = fb(1.0 + x);
  if (u == 1.0) { return x; }
  if (u > 16777216.0) { return m_log(u); }
  return m_log(u) * f_div(x, fb(u - 1.0));
}""",
        ("f_div", "m_log", "fb"),
    ),
    # ---- trigonometry: Payne-Hanek reduction of |x| to r in [-pi/4, pi/4] plus a quadrant ----
    # the 64-bit product of two uints as (low word, high word), from 16-bit halves
    "mul64": (
        """
uvec2 mul64(uint a, uint b) {
  uint a0 = a & 0xffffu; uint a1 = a >> 16;
  uint b0 = b & 0xffffu; uint b1 = b >> 16;
  uint p00 = a0 * b0; uint p01 = a0 * b1; uint p10 = a1 * b0;
  uint mid = (p00 >> 16) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return uvec2((p00 & 0xffffu) | (mid << 16),
               a1 * b1 + (p01 >> 16) + (p10 >> 16) + (mid >> 16));
}""",
        (),
    ),
    # |x| = m 2^e (24-bit m): m times a 96-bit window of 2/pi starting at the bit worth 2^(1-e)
    # gives the quadrant (the two bits worth 2 and 1) and the fraction, to 94 bits
    "trig_reduce": (
        f"""
const uint TWO_OVER_PI[10] = uint[10]({_T});
struct TrigRed {{ float r; uint q; }};
uint tpi_word(uint i, uint o) {{
  if (o == 0u) {{ return TWO_OVER_PI[i]; }}
  return (TWO_OVER_PI[i] << o) | (TWO_OVER_PI[i + 1u] >> (32u - o));
}}
TrigRed trig_reduce(float ax) {{
  if (ax <= uintBitsToFloat(0x3f490fdau)) {{ return TrigRed(ax, 0u); }}
  uint u = floatBitsToUint(ax);
  uint m = (u & 0x7fffffu) | 0x800000u;
  uint q0 = (u >> 23) - 88u;  // table bit of 2/pi's bit (e - 1), for x = m 2^e
  uint wi = q0 >> 5;
  uint o = q0 & 31u;
  uvec2 p2 = mul64(m, tpi_word(wi + 2u, o));
  uvec2 p1 = mul64(m, tpi_word(wi + 1u, o));
  uvec2 p0 = mul64(m, tpi_word(wi, o));
  // m * window = z2:z1:z0 (bits 0..95); bit 94 has weight 1, so bits 94-95 are the quadrant
  uint lo = p2.x;
  uint mid = p2.y + p1.x;
  uint c1 = (mid < p2.y) ? 1u : 0u;
  uint z2 = p1.y + p0.x + c1;
  uint q = z2 >> 30;
  uint hi = z2 & 0x3fffffffu;
  bool neg = hi >= 0x20000000u;
  if (neg) {{  // fraction >= 1/2: use fraction - 1 (negate the 94-bit fixed-point value)
    q = q + 1u;
    lo = ~lo + 1u;
    uint cl = (lo == 0u) ? 1u : 0u;
    mid = ~mid + cl;
    uint cm = (mid == 0u && cl == 1u) ? 1u : 0u;
    hi = ((~hi) & 0x3fffffffu) + cm;
  }}
  float f = fb(float(lo) * uintBitsToFloat(0x10800000u) + float(mid) * uintBitsToFloat(0x20800000u))
            + float(hi) * uintBitsToFloat(0x30800000u);
  float r = fb(f * PIO2_HI) + f * PIO2_LO;
  return TrigRed(neg ? -r : r, q & 3u);
}}""",
        ("mul64", "fb", "libm_consts"),
    ),
    # Taylor kernels on [-pi/4, pi/4]
    "sin_cos_k": (
        """
float sin_k(float r) {
  float z = r * r;
  float p = -1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (1.0 / 362880.0)));
  return r + r * z * p;
}
float cos_k(float r) {
  float z = r * r;
  float p = 1.0 / 24.0 + z * (-1.0 / 720.0 + z * (1.0 / 40320.0 + z * (-1.0 / 3628800.0)));
  return 1.0 - fb(0.5 * z - z * z * p);
}""",
        ("fb",),
    ),
    "m_sin": (
        f"""
float m_sin(float x) {{
  if (!f_isfinite(x)) {{ return uintBitsToFloat(F_NAN); }}
  $TINY
  TrigRed t = trig_reduce(abs(x));
  float s = ((t.q & 1u) == 1u) ? cos_k(t.r) : sin_k(t.r);
  if (t.q >= 2u) {{ s = -s; }}
  return ({_NEG_SIGN}) ? -s : s;
}}""",
        ("f_isfinite", "f_nan", "trig_reduce", "sin_cos_k"),
    ),
    "m_cos": (
        """
float m_cos(float x) {
  if (!f_isfinite(x)) { return uintBitsToFloat(F_NAN); }
  TrigRed t = trig_reduce(abs(x));
  float c = ((t.q & 1u) == 1u) ? sin_k(t.r) : cos_k(t.r);
  return (t.q == 1u || t.q == 2u) ? -c : c;
}""",
        ("f_isfinite", "f_nan", "trig_reduce", "sin_cos_k"),
    ),
    "m_tan": (
        f"""
float m_tan(float x) {{
  if (!f_isfinite(x)) {{ return uintBitsToFloat(F_NAN); }}
  $TINY
  TrigRed t = trig_reduce(abs(x));
  float s = sin_k(t.r);
  float c = cos_k(t.r);
  float v = ((t.q & 1u) == 1u) ? -f_div(c, s) : f_div(s, c);
  return ({_NEG_SIGN}) ? -v : v;
}}""",
        ("f_div", "f_isfinite", "f_nan", "trig_reduce", "sin_cos_k"),
    ),
    # atan: |x| > 1 -> pi/2 - atan(1/|x|); t > tan(pi/12) -> pi/6 + atan((t sqrt3 - 1)/(t + sqrt3))
    "m_atan": (
        f"""
float atan_k(float t) {{
  float z = t * t;
  float p = 1.0 / 9.0 + z * (-1.0 / 11.0 + z * (1.0 / 13.0 + z * (-1.0 / 15.0)));
  return t + t * z * (-1.0 / 3.0 + z * (0.2 + z * (-1.0 / 7.0 + z * p)));
}}
float m_atan(float x) {{
  if (f_isnan(x)) {{ return x; }}
  $TINY
  float ax = abs(x);
  bool inv = ax > 1.0;
  float t = inv ? f_div(1.0, ax) : ax;
  float r;
  if (t > 0.267949194) {{
    float u = f_div(fb(fb(t * 1.73205081) - 1.0), t + 1.73205081);
    r = fb(atan_k(u) + uintBitsToFloat(0xb27a5193u)) + uintBitsToFloat(0x3f060a92u);
  }} else {{
    r = atan_k(t);
  }}
  if (inv) {{ r = fb(PIO2_HI - r) + PIO2_LO; }}
  return ({_NEG_SIGN}) ? -r : r;
}}""",
        ("f_div", "f_isnan", "fb", "libm_consts"),
    ),
    "m_atan2": (
        """
float atan2_up(float v) {
  uint u = floatBitsToUint(v);
  return (u < 0x00800000u) ? float(u) * uintBitsToFloat(0x01000000u) : v * 16777216.0;
}
float m_atan2(float y, float x) {
  if (f_isnan(x) || f_isnan(y)) { return uintBitsToFloat(F_NAN); }
  uint sy = floatBitsToUint(y) & 0x80000000u;
  bool xneg = (floatBitsToUint(x) & 0x80000000u) != 0u;
  float a;
  if ((floatBitsToUint(y) & 0x7fffffffu) == 0u) {
    a = xneg ? PI_HI : 0.0;
  } else if (f_isinf(x) && f_isinf(y)) {
    a = xneg ? uintBitsToFloat(0x4016cbe4u) : uintBitsToFloat(0x3f490fdbu);
  } else if ((floatBitsToUint(x) & 0x7fffffffu) == 0u || f_isinf(y)) {
    a = PIO2_HI;
  } else if (f_isinf(x)) {
    a = xneg ? PI_HI : 0.0;
  } else {
    float ay = abs(y);
    float ax = abs(x);
    if (((floatBitsToUint(y) & 0x7f800000u) == 0u) || ((floatBitsToUint(x) & 0x7f800000u) == 0u)) {
      ay = atan2_up(ay);  // a subnormal: scale both by 2^24 (a ratio of normals, same quotient)
      ax = atan2_up(ax);
    }
    int de = int(floatBitsToUint(ay) >> 23) - int(floatBitsToUint(ax) >> 23);
    if (de < -100 && !xneg) {  // atan2 = y / x, perhaps subnormal: divide scaled, round once
      a = scale2(f_div(ay * uintBitsToFloat(0x5f800000u), ax), -64);
    } else {
      a = m_atan(f_div(ay, ax));
      if (xneg) { a = fb(PI_HI - a) + PI_LO; }
    }
  }
  return uintBitsToFloat(floatBitsToUint(a) | sy);
}""",
        ("f_div", "f_isnan", "f_isinf", "f_nan", "fb", "libm_consts", "m_atan", "scale2"),
    ),
    "m_asin": (
        """
float m_asin(float x) {
  if (f_isnan(x) || abs(x) > 1.0) { return uintBitsToFloat(F_NAN); }
  $TINY
  return m_atan2(x, m_sqrt(fb(1.0 - x) * fb(1.0 + x)));
}""",
        ("m_atan2", "m_sqrt", "fb"),
    ),
    "m_acos": (
        """
float m_acos(float x) {
  if (f_isnan(x) || abs(x) > 1.0) { return uintBitsToFloat(F_NAN); }
  return m_atan2(m_sqrt(fb(1.0 - x) * fb(1.0 + x)), x);
}""",
        ("m_atan2", "m_sqrt", "fb"),
    ),
    # ---- hyperbolic -------------------------------------------------------------------------
    "m_sinh": (
        f"""
float m_sinh(float x) {{
  if (f_isnan(x)) {{ return x; }}
  $TINY
  float ax = abs(x);
  float r;
  if (ax < 1.0) {{
    float u = m_expm1(ax);
    r = 0.5 * (u + u / (u + 1.0));
  }} else if (ax < 9.0) {{
    float e = m_exp(ax);
    r = 0.5 * (e - f_div(1.0, e));
  }} else {{
    float h = m_exp(0.5 * ax);
    r = fb(0.5 * h) * h;  // halve first: h * h alone would overflow early
  }}
  return ({_NEG_SIGN}) ? -r : r;
}}""",
        ("f_div", "f_isnan", "m_expm1", "m_exp", "fb"),
    ),
    "m_cosh": (
        """
float m_cosh(float x) {
  if (f_isnan(x)) { return x; }
  float ax = abs(x);
  if (ax < 9.0) {
    float e = m_exp(ax);
    return 0.5 * (e + f_div(1.0, e));
  }
  float h = m_exp(0.5 * ax);
  return fb(0.5 * h) * h;
}""",
        ("f_div", "f_isnan", "m_exp", "fb"),
    ),
    "m_tanh": (
        f"""
float m_tanh(float x) {{
  if (f_isnan(x)) {{ return x; }}
  $TINY
  float ax = abs(x);
  float r;
  if (ax < 0.55) {{
    float u = m_expm1(2.0 * ax);
    r = f_div(u, u + 2.0);
  }} else if (ax < 9.1) {{
    r = 1.0 - f_div(2.0, m_exp(2.0 * ax) + 1.0);
  }} else {{
    r = 1.0;
  }}
  return ({_NEG_SIGN}) ? -r : r;
}}""",
        ("f_div", "f_isnan", "m_expm1", "m_exp"),
    ),
    "m_asinh": (
        f"""
float m_asinh(float x) {{
  if (!f_isfinite(x)) {{ return x; }}
  $TINY
  float ax = abs(x);
  float r;
  if (ax > 4096.0) {{
    r = m_log(ax) + uintBitsToFloat(0x3f317218u);
  }} else {{
    float z = ax * ax;
    r = m_log1p(ax + z / (1.0 + m_sqrt(1.0 + z)));
  }}
  return ({_NEG_SIGN}) ? -r : r;
}}""",
        ("f_isfinite", "m_log", "m_log1p", "m_sqrt"),
    ),
    "m_acosh": (
        """
float m_acosh(float x) {
  if (f_isnan(x) || x < 1.0) { return uintBitsToFloat(F_NAN); }
  if (x > 4096.0) { return m_log(x) + uintBitsToFloat(0x3f317218u); }
  float t = x - 1.0;
  return m_log1p(t + m_sqrt(2.0 * t + t * t));
}""",
        ("f_isnan", "f_nan", "m_log", "m_log1p", "m_sqrt"),
    ),
    "m_atanh": (
        f"""
float m_atanh(float x) {{
  if (f_isnan(x) || abs(x) > 1.0) {{ return uintBitsToFloat(F_NAN); }}
  $TINY
  float ax = abs(x);
  float r = (ax == 1.0) ? F_INF : 0.5 * m_log1p(f_div(2.0 * ax, 1.0 - ax));
  return ({_NEG_SIGN}) ? -r : r;
}}""",
        ("f_div", "f_isnan", "f_nan", "m_log1p"),
    ),
    "m_logistic": (
        """
float m_logistic(float x) {
  if (f_isnan(x)) { return x; }
  if (x >= 0.0) { return f_div(1.0, 1.0 + m_exp(-x)); }
  if (x < -25.0) { return m_exp(x); }  // e / (1 + e) = e to float32 precision
  float e = m_exp(x);
  return f_div(e, 1.0 + e);
}""",
        ("f_div", "f_isnan", "m_exp"),
    ),
    # sqrt(x), correctly rounded: x = m 4^k with m in [1, 4) (subnormals scaled by 2^24 first, as
    # float(bits) * 2^-125);
    # the builtin's sqrt(m) is corrected once by its exact residual m - s^2, then scaled by 2^k
    "m_sqrt": (
        """
float m_sqrt(float x) {
  uint u = floatBitsToUint(x);
  if (f_isnan(x) || u > 0x80000000u) { return uintBitsToFloat(F_NAN); }  // NaN or below -0
  if ((u & 0x7fffffffu) == 0u || u == 0x7f800000u) { return x; }  // +-0, +inf
  int e = int(u >> 23) - 127;
  if (u < 0x00800000u) {
    u = floatBitsToUint(float(u) * uintBitsToFloat(0x01000000u));
    e = int(u >> 23) - 151;
  }
  int k = e >> 1;
  float m = uintBitsToFloat((u & 0x7fffffu) | (uint(127 + e - 2 * k) << 23));
  float s = fb(sqrt(m));
  df p = two_prod(s, s);
  float sc = s + fb(fb(fb(m - p.hi) - p.lo) / (2.0 * s));
  return sc * pow2i(k);
}""",
        ("f_isnan", "f_nan", "two_prod", "pow2i", "fb"),
    ),
    # the device's own sqrt, where a start-up probe found it correctly rounded
    "m_sqrt_hw": (
        """
float m_sqrt_hw(float x) {
  return (f_isnan(x) || floatBitsToUint(x) > 0x80000000u) ? uintBitsToFloat(F_NAN) : fb(sqrt(x));
}""",
        ("f_isnan", "f_nan", "fb"),
    ),
    "m_rsqrt": (
        "float m_rsqrt(float x) { return f_div(1.0, m_sqrt(x)); }",
        ("m_sqrt", "f_div"),
    ),
    # cbrt: a first guess from the exponent bits divided by 3, then Newton steps
    # y += (x / y^2 - y) / 3 (subnormals scaled by 2^24 first, as float(bits) * 2^-125, and the
    # result by 2^-8)
    "m_cbrt": (
        """
float m_cbrt(float x) {
  uint ua = floatBitsToUint(x) & 0x7fffffffu;
  if (ua == 0u || ua >= 0x7f800000u) { return x; }
  float a = uintBitsToFloat(ua);
  float scale = 1.0;
  if (ua < 0x00800000u) { a = float(ua) * uintBitsToFloat(0x01000000u); scale = 1.0 / 256.0; }
  float y = uintBitsToFloat(floatBitsToUint(a) / 3u + 0x2a555555u);
  for (int k = 0; k < 4; k++) { y = y + (f_div(a, y * y) - y) * (1.0 / 3.0); }
  y = y * scale;
  return uintBitsToFloat(floatBitsToUint(y) | (floatBitsToUint(x) & 0x80000000u));
}""",
        ("f_div",),
    ),
    # ---- pow: 2^(b log2|a|), log2 as a double-float (~2^-30 relative), then exp2 of it -------
    # a + b = s + e exactly (Knuth)
    "two_sum": (
        """
df two_sum(float a, float b) {
  float s = fb(a + b);
  float bb = fb(s - a);
  return df(s, fb(a - fb(s - bb)) + fb(b - bb));
}""",
        ("df", "fb"),
    ),
    "log2_df": (
        """
df log2_df(float x) {
  LogParts lp = log_parts(x);
  float f = lp.f;
  df v = two_sum(f, 2.0);
  float s = f / v.hi;
  df pr = two_prod(s, v.hi);
  float sl = (fb(fb(f - pr.hi) - pr.lo) - s * v.lo) / v.hi;
  float z = s * s;
  float r = z * (0.666666667 + z * (0.4 + z * (0.285714286 + z * (0.222222222 + z * 0.181818182))));
  df ln = two_sum(2.0 * s, fb(2.0 * sl + s * r));
  float l2e = uintBitsToFloat(0x3fb8aa3bu);  // log2(e) = l2e + 0x32a57060
  df p = two_prod(ln.hi, l2e);
  float lo = fb(p.lo + fb(ln.hi * uintBitsToFloat(0x32a57060u) + ln.lo * l2e));
  df t = two_sum(lp.e, p.hi);
  return two_sum(t.hi, fb(t.lo + lo));
}""",
        ("log_parts", "two_sum", "two_prod", "fb"),
    ),
    # pow with the C99 special cases (pow(x, +-0) = 1, pow(1, y) = 1, pow(-1, +-inf) = 1, ...)
    "m_pow": (
        """
bool pow_is_int(float b) {
  uint u = floatBitsToUint(b) & 0x7fffffffu;
  if (u >= 0x4b000000u) { return true; }  // |b| >= 2^23 (some floor()s fail on huge values)
  if (u < 0x3f800000u) { return u == 0u; }  // |b| < 1, subnormals included
  return floor(b) == b;
}
bool pow_is_odd(float b) { return pow_is_int(b) && abs(b) < 16777216.0 && (int(b) & 1) == 1; }
float m_pow(float a, float b) {
  if ((floatBitsToUint(b) & 0x7fffffffu) == 0u || a == 1.0) { return 1.0; }
  if (f_isnan(a) || f_isnan(b)) { return uintBitsToFloat(F_NAN); }
  float aa = abs(a);
  bool bneg = (floatBitsToUint(b) & 0x80000000u) != 0u;
  if (f_isinf(b)) {
    if (aa == 1.0) { return 1.0; }
    return ((aa < 1.0) == bneg) ? F_INF : 0.0;
  }
  bool odd = pow_is_odd(b);
  uint sgn = (odd && (floatBitsToUint(a) & 0x80000000u) != 0u) ? 0x80000000u : 0u;
  bool zero = (floatBitsToUint(a) & 0x7fffffffu) == 0u;
  if (zero || f_isinf(a)) {
    bool big = zero == bneg;
    return uintBitsToFloat((big ? 0x7f800000u : 0u) | sgn);
  }
  if ((floatBitsToUint(a) & 0x80000000u) != 0u && !pow_is_int(b)) { return uintBitsToFloat(F_NAN); }
  // a = -1 (log2 = 0): exact, and two_prod(b, 0) overflows in split() (4097 b) for |b| > 2^116
  if (aa == 1.0) { return uintBitsToFloat(0x3f800000u | sgn); }
  df l = log2_df(aa);
  df y = two_prod(b, l.hi);
  float yh = y.hi;
  float yl = fb(y.lo + b * l.lo);
  float r;
  // yh + yl >= 128 overflows; yh = 128 with yl < 0 (log2 of the result just below 128, as
  // for results near float32's max) is finite: k = 128 and f < 0 below
  if (yh > 128.0 || (yh == 128.0 && yl >= 0.0)) {
    r = F_INF;
  } else if (yh < -151.0) {
    r = 0.0;
  } else {
    float k = roundEven(yh);
    float f = fb(yh - k) + yl;
    r = scale2(exp_poly(fb(f * LN2_HI) + f * LN2_LO), int(k));
  }
  return uintBitsToFloat(floatBitsToUint(r) | sgn);
}""",
        (
            "f_isnan",
            "f_isinf",
            "f_nan",
            "log2_df",
            "two_prod",
            "exp_poly",
            "scale2",
            "libm_consts",
            "fb",
        ),
    ),
}


def _literal(m: re.Match[str]) -> str:
    """`uintBitsToFloat(0x...u)` of a finite value -> the shortest decimal literal that reads back
    as exactly that float32 (plain constants fold everywhere); inf stays a bit cast."""
    bits = int(m.group(1), 16)
    if (bits >> 23) & 0xFF == 0xFF:
        return m.group(0)
    x = struct.unpack("<f", struct.pack("<I", bits))[0]
    return repr(x) if x >= 0 else f"({x!r})"


def register(h: Callable[..., None]) -> None:
    for name, (src, deps) in _SOURCES.items():
        src = re.sub(r"uintBitsToFloat\(0x([0-9a-f]{8})u\)", _literal, src)
        src = src.replace("F_INF", _INF).replace("$TINY", _TINY)
        h(name, src, *deps)
