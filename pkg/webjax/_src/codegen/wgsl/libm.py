"""float32 transcendentals in WGSL, accurate to a few ulp on any conforming GPU.

WGSL's builtins may be far off (sin/cos are only specified to 2^-11 absolute on [-pi, pi], exp to
3 + 2|x| ulp), so everything here is built from exactly rounded + - * / and bit operations:
exp/log by exponent split and short series, sin/cos/tan by Payne-Hanek reduction in integer
arithmetic (exact for every float32, however large), pow through a double-float log2. `fb()`
(wgsl_math) keeps compilers from re-associating where the rounding order matters.
Registers helpers into the tables that wgsl_math passes in (`register(h)`).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

from ..libm_tables import two_over_pi_words

_T = ", ".join(f"0x{w:08x}u" for w in two_over_pi_words(10))

_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "libm_consts": (
        """
const LN2_HI: f32 = bitcast<f32>(0x3f317200u);
const LN2_LO: f32 = bitcast<f32>(0x35bfbe8eu);
const PIO2_HI: f32 = bitcast<f32>(0x3fc90fdbu);
const PIO2_LO: f32 = bitcast<f32>(0xb33bbd2eu);
const PI_HI: f32 = bitcast<f32>(0x40490fdbu);
const PI_LO: f32 = bitcast<f32>(0xb3bbbd2eu);
const F_INF: f32 = bitcast<f32>(0x7f800000u);""",
        (),
    ),
    "ldexp2": (
        """
fn ldexp2(p: f32, k: i32) -> f32 { return ldexp(ldexp(p, k / 2), k - k / 2); }""",
        (),
    ),
    # e^r for |r| <= 0.35 (Taylor to r^7: error < 0.1 ulp)
    "exp_poly": (
        """
fn exp_poly(r: f32) -> f32 {
  let p = 1.0 / 720.0 + r * (1.0 / 5040.0);
  let q = 1.0 / 24.0 + r * (1.0 / 120.0 + r * p);
  return 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * q)));
}""",
        (),
    ),
    "m_exp": (
        """
fn m_exp(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (x >= bitcast<f32>(0x42b17218u)) { return F_INF; }
  if (x < -103.97209) { return 0.0; }
  let k = round(x * 1.44269504);
  let r = fb(x - k * LN2_HI) - k * LN2_LO;
  return ldexp2(exp_poly(r), i32(k));
}""",
        ("f_isnan", "fb", "libm_consts", "ldexp2", "exp_poly"),
    ),
    "m_exp2": (
        """
fn m_exp2(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (x >= 128.0) { return F_INF; }
  if (x < -150.0) { return 0.0; }
  let k = round(x);
  let f = x - k;
  return ldexp2(exp_poly(fb(f * LN2_HI) + f * LN2_LO), i32(k));
}""",
        ("f_isnan", "fb", "libm_consts", "ldexp2", "exp_poly"),
    ),
    "m_expm1": (
        """
fn m_expm1(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (abs(x) < 0.34657359) {
    let q = 1.0 / 720.0 + x * (1.0 / 5040.0 + x * (1.0 / 40320.0));
    let p = 1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * q));
    return x + x * x * (0.5 + x * p);
  }
  if (x < -17.0) { return -1.0; }
  return fb(m_exp(x)) - 1.0;
}""",
        ("m_exp", "fb"),
    ),
    # x = m 2^e, m in [sqrt(1/2), sqrt(2)); log(m) = f - (hfsq - s (hfsq + R(s^2))), s = f/(2+f)
    "log_parts": (
        """
struct LogParts { f: f32, e: f32 }
fn log_parts(x: f32) -> LogParts {
  var u = bitcast<u32>(x);
  var e = i32(u >> 23u) - 127;
  if ((u >> 23u) == 0u) {
    u = bitcast<u32>(x * 8388608.0);
    e = i32(u >> 23u) - 150;
  }
  var m = bitcast<f32>((u & 0x7fffffu) | 0x3f800000u);
  if (m > 1.41421354) { m = m * 0.5; e = e + 1; }
  return LogParts(m - 1.0, f32(e));
}""",
        (),
    ),
    "m_log": (
        """
fn m_log(x: f32) -> f32 {
  if (f_isnan(x) || x < 0.0) { return bitcast<f32>(F_NAN); }
  if (x == 0.0) { return -F_INF; }
  if (x == F_INF) { return x; }
  let lp = log_parts(x);
  let f = lp.f;
  let s = f_div(f, 2.0 + f);
  let z = s * s;
  let r = z * (0.666666667 + z * (0.4 + z * (0.285714286 + z * (0.222222222 + z * 0.181818182))));
  let hfsq = 0.5 * f * f;
  let lg = f - fb(hfsq - s * (hfsq + r));
  return lp.e * LN2_HI + fb(lp.e * LN2_LO + lg);
}""",
        ("f_div", "f_isnan", "f_nan", "fb", "libm_consts", "log_parts"),
    ),
    "m_log1p": (
        """
fn m_log1p(x: f32) -> f32 {
  if (f_isnan(x) || x < -1.0) { return bitcast<f32>(F_NAN); }
  if (x == -1.0) { return -F_INF; }
  if (x == F_INF) { return x; }
  let u = fb(1.0 + x);
  if (u == 1.0) { return x; }
  if (u > 16777216.0) { return m_log(u); }
  return m_log(u) * f_div(x, fb(u - 1.0));
}""",
        ("f_div", "m_log", "fb"),
    ),
    # ---- trigonometry: Payne-Hanek reduction of |x| to r in [-pi/4, pi/4] and a quadrant
    "mul64": (
        """
fn mul64(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u;
  let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u),
                   a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}""",
        (),
    ),
    "trig_reduce": (
        f"""
const TWO_OVER_PI = array<u32, 10>({_T});
struct TrigRed {{ r: f32, q: u32 }}
fn tpi_word(i: u32, o: u32) -> u32 {{
  if (o == 0u) {{ return TWO_OVER_PI[i]; }}
  return (TWO_OVER_PI[i] << o) | (TWO_OVER_PI[i + 1u] >> (32u - o));
}}
fn trig_reduce(ax: f32) -> TrigRed {{
  if (ax <= bitcast<f32>(0x3f490fdau)) {{ return TrigRed(ax, 0u); }}
  let u = bitcast<u32>(ax);
  let m = (u & 0x7fffffu) | 0x800000u;
  let q0 = (u >> 23u) - 88u;  // table bit of 2/pi's bit (e - 1), x = m 2^e
  let wi = q0 >> 5u;
  let o = q0 & 31u;
  let p2 = mul64(m, tpi_word(wi + 2u, o));
  let p1 = mul64(m, tpi_word(wi + 1u, o));
  let p0 = mul64(m, tpi_word(wi, o));
  // m * window = z2:z1:z0 (bits 0..95); bit 94 has weight 1 (mod 4: quadrant = bits 94, 95)
  var lo = p2.x;
  var mid = p2.y + p1.x;
  let c1 = select(0u, 1u, mid < p2.y);
  let z2a = p1.y + p0.x;
  let z2 = z2a + c1;
  var q = z2 >> 30u;
  var hi = z2 & 0x3fffffffu;
  let neg = hi >= 0x20000000u;
  if (neg) {{  // fraction >= 1/2: take fraction - 1 (negate the 94-bit fixed point value)
    q = q + 1u;
    lo = ~lo + 1u;
    let cl = select(0u, 1u, lo == 0u);
    mid = ~mid + cl;
    let cm = select(0u, 1u, mid == 0u && cl == 1u);
    hi = ((~hi) & 0x3fffffffu) + cm;
  }}
  let f = fb(f32(lo) * bitcast<f32>(0x10800000u) + f32(mid) * bitcast<f32>(0x20800000u))
          + f32(hi) * bitcast<f32>(0x30800000u);
  let r = fb(f * PIO2_HI) + f * PIO2_LO;
  return TrigRed(select(r, -r, neg), q & 3u);
}}""",
        ("mul64", "fb", "libm_consts"),
    ),
    "sin_cos_k": (
        """
fn sin_k(r: f32) -> f32 {
  let z = r * r;
  let p = -1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (1.0 / 362880.0)));
  return r + r * z * p;
}
fn cos_k(r: f32) -> f32 {
  let z = r * r;
  let p = 1.0 / 24.0 + z * (-1.0 / 720.0 + z * (1.0 / 40320.0 + z * (-1.0 / 3628800.0)));
  return 1.0 - fb(0.5 * z - z * z * p);
}""",
        ("fb",),
    ),
    "m_sin": (
        """
fn m_sin(x: f32) -> f32 {
  if (!f_isfinite(x)) { return bitcast<f32>(F_NAN); }
  let t = trig_reduce(abs(x));
  var s = select(sin_k(t.r), cos_k(t.r), (t.q & 1u) == 1u);
  if (t.q >= 2u) { s = -s; }
  return select(s, -s, (bitcast<u32>(x) & 0x80000000u) != 0u);
}""",
        ("f_isfinite", "f_nan", "trig_reduce", "sin_cos_k"),
    ),
    "m_cos": (
        """
fn m_cos(x: f32) -> f32 {
  if (!f_isfinite(x)) { return bitcast<f32>(F_NAN); }
  let t = trig_reduce(abs(x));
  let c = select(cos_k(t.r), sin_k(t.r), (t.q & 1u) == 1u);
  return select(c, -c, t.q == 1u || t.q == 2u);
}""",
        ("f_isfinite", "f_nan", "trig_reduce", "sin_cos_k"),
    ),
    "m_tan": (
        """
fn m_tan(x: f32) -> f32 {
  if (!f_isfinite(x)) { return bitcast<f32>(F_NAN); }
  let t = trig_reduce(abs(x));
  let s = sin_k(t.r);
  let c = cos_k(t.r);
  let v = select(f_div(s, c), -f_div(c, s), (t.q & 1u) == 1u);
  return select(v, -v, (bitcast<u32>(x) & 0x80000000u) != 0u);
}""",
        ("f_div", "f_isfinite", "f_nan", "trig_reduce", "sin_cos_k"),
    ),
    # atan: |x| > 1 -> pi/2 - atan(1/x); t > tan(pi/12) -> pi/6 + atan((t sqrt3 - 1)/(t + sqrt3))
    "m_atan": (
        """
fn atan_k(t: f32) -> f32 {
  let z = t * t;
  let p = 1.0 / 9.0 + z * (-1.0 / 11.0 + z * (1.0 / 13.0 + z * (-1.0 / 15.0)));
  return t + t * z * (-1.0 / 3.0 + z * (0.2 + z * (-1.0 / 7.0 + z * p)));
}
fn m_atan(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let ax = abs(x);
  let inv = ax > 1.0;
  var t = select(ax, f_div(1.0, ax), inv);
  var r: f32;
  if (t > 0.267949194) {
    let u = f_div(fb(fb(t * 1.73205081) - 1.0), t + 1.73205081);
    r = fb(atan_k(u) + bitcast<f32>(0xb27a5193u)) + bitcast<f32>(0x3f060a92u);
  } else {
    r = atan_k(t);
  }
  if (inv) { r = fb(PIO2_HI - r) + PIO2_LO; }
  return select(r, -r, (bitcast<u32>(x) & 0x80000000u) != 0u);
}""",
        ("f_div", "f_isnan", "fb", "libm_consts"),
    ),
    "m_atan2": (
        """
fn m_atan2(y: f32, x: f32) -> f32 {
  if (f_isnan(x) || f_isnan(y)) { return bitcast<f32>(F_NAN); }
  let sy = bitcast<u32>(y) & 0x80000000u;
  let xneg = (bitcast<u32>(x) & 0x80000000u) != 0u;
  var a: f32;
  if (y == 0.0) {
    a = select(0.0, PI_HI, xneg);
  } else if (f_isinf(x) && f_isinf(y)) {
    a = select(bitcast<f32>(0x3f490fdbu), bitcast<f32>(0x4016cbe4u), xneg);
  } else if (x == 0.0 || f_isinf(y)) {
    a = PIO2_HI;
  } else if (f_isinf(x)) {
    a = select(0.0, PI_HI, xneg);
  } else {
    a = m_atan(abs(f_div(y, x)));
    if (xneg) { a = fb(PI_HI - a) + PI_LO; }
  }
  return bitcast<f32>(bitcast<u32>(a) | sy);
}""",
        ("f_div", "f_isnan", "f_isinf", "f_nan", "fb", "libm_consts", "m_atan"),
    ),
    "m_asin": (
        """
fn m_asin(x: f32) -> f32 {
  if (f_isnan(x) || abs(x) > 1.0) { return bitcast<f32>(F_NAN); }
  return m_atan2(x, sqrt(fb(1.0 - x) * fb(1.0 + x)));
}""",
        ("m_atan2", "fb"),
    ),
    "m_acos": (
        """
fn m_acos(x: f32) -> f32 {
  if (f_isnan(x) || abs(x) > 1.0) { return bitcast<f32>(F_NAN); }
  return m_atan2(sqrt(fb(1.0 - x) * fb(1.0 + x)), x);
}""",
        ("m_atan2", "fb"),
    ),
    # ---- hyperbolic -----------------------------------------------------------------------
    "m_sinh": (
        """
fn m_sinh(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let ax = abs(x);
  var r: f32;
  if (ax < 1.0) {
    let u = m_expm1(ax);
    r = 0.5 * (u + u / (u + 1.0));
  } else if (ax < 9.0) {
    let e = m_exp(ax);
    r = 0.5 * (e - f_div(1.0, e));
  } else {
    let h = m_exp(0.5 * ax);
    r = fb(0.5 * h) * h;  // not 0.5 * (h * h): that overflows
  }
  return select(r, -r, (bitcast<u32>(x) & 0x80000000u) != 0u);
}""",
        ("f_div", "f_isnan", "m_expm1", "m_exp", "fb"),
    ),
    "m_cosh": (
        """
fn m_cosh(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let ax = abs(x);
  if (ax < 9.0) {
    let e = m_exp(ax);
    return 0.5 * (e + f_div(1.0, e));
  }
  let h = m_exp(0.5 * ax);
  return fb(0.5 * h) * h;
}""",
        ("f_div", "f_isnan", "m_exp", "fb"),
    ),
    "m_tanh": (
        """
fn m_tanh(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let ax = abs(x);
  var r: f32;
  if (ax < 0.55) {
    let u = m_expm1(2.0 * ax);
    r = f_div(u, u + 2.0);
  } else if (ax < 9.1) {
    r = 1.0 - f_div(2.0, m_exp(2.0 * ax) + 1.0);
  } else {
    r = 1.0;
  }
  return select(r, -r, (bitcast<u32>(x) & 0x80000000u) != 0u);
}""",
        ("f_div", "f_isnan", "m_expm1", "m_exp"),
    ),
    "m_asinh": (
        """
fn m_asinh(x: f32) -> f32 {
  if (!f_isfinite(x)) { return x; }
  let ax = abs(x);
  var r: f32;
  if (ax > 4096.0) {
    r = m_log(ax) + bitcast<f32>(0x3f317218u);
  } else {
    let z = ax * ax;
    r = m_log1p(ax + z / (1.0 + sqrt(1.0 + z)));
  }
  return select(r, -r, (bitcast<u32>(x) & 0x80000000u) != 0u);
}""",
        ("f_isfinite", "m_log", "m_log1p"),
    ),
    "m_acosh": (
        """
fn m_acosh(x: f32) -> f32 {
  if (f_isnan(x) || x < 1.0) { return bitcast<f32>(F_NAN); }
  if (x > 4096.0) { return m_log(x) + bitcast<f32>(0x3f317218u); }
  let t = x - 1.0;
  return m_log1p(t + sqrt(2.0 * t + t * t));
}""",
        ("f_isnan", "f_nan", "m_log", "m_log1p"),
    ),
    "m_atanh": (
        """
fn m_atanh(x: f32) -> f32 {
  if (f_isnan(x) || abs(x) > 1.0) { return bitcast<f32>(F_NAN); }
  let ax = abs(x);
  var r: f32;
  if (ax == 1.0) { r = F_INF; } else { r = 0.5 * m_log1p(f_div(2.0 * ax, 1.0 - ax)); }
  return select(r, -r, (bitcast<u32>(x) & 0x80000000u) != 0u);
}""",
        ("f_div", "f_isnan", "f_nan", "m_log1p", "libm_consts"),
    ),
    "m_logistic": (
        """
fn m_logistic(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (x >= 0.0) { return f_div(1.0, 1.0 + m_exp(-x)); }
  let e = m_exp(x);
  return f_div(e, 1.0 + e);
}""",
        ("f_div", "f_isnan", "m_exp"),
    ),
    "m_sqrt": (
        """
fn m_sqrt(x: f32) -> f32 {
  if (f_isnan(x) || x < 0.0) { return bitcast<f32>(F_NAN); }
  let u = bitcast<u32>(x);
  if (u < 0x00800000u || u >= 0x7f800000u) { return sqrt(x); }  // 0, subnormal, inf
  // x = m 4^k with m in [1, 4): correct sqrt(m) by its exact residual, then scale by 2^k
  let e = i32(u >> 23u) - 127;
  let k = e >> 1u;
  let m = bitcast<f32>((u & 0x7fffffu) | (u32(127 + e - 2 * k) << 23u));
  let s = fb(sqrt(m));
  let p = two_prod(s, s);
  let sc = s + fb(fb(fb(m - p.hi) - p.lo) / (2.0 * s));
  return ldexp(sc, k);
}""",
        ("f_isnan", "f_nan", "df", "fb"),
    ),
    "m_rsqrt": (
        "fn m_rsqrt(x: f32) -> f32 { return f_div(1.0, m_sqrt(x)); }",
        ("m_sqrt", "f_div"),
    ),
    # cbrt: exponent/3 first guess from the bits, then Newton steps y += (x/y^2 - y)/3
    "m_cbrt": (
        """
fn m_cbrt(x: f32) -> f32 {
  let ax = abs(x);
  if (ax == 0.0 || !f_isfinite(x)) { return x; }
  var a = ax;
  var scale = 1.0;
  if (ax < 1.1754944e-38) { a = ax * 16777216.0; scale = 1.0 / 256.0; }
  var y = bitcast<f32>(bitcast<u32>(a) / 3u + 0x2a555555u);
  for (var k = 0; k < 4; k++) { y = y + (f_div(a, y * y) - y) * (1.0 / 3.0); }
  y = y * scale;
  return select(y, -y, x < 0.0);
}""",
        (
            "f_div",
            "f_isfinite",
        ),
    ),
    # ---- pow: 2^(b log2|a|), log2 as a double-float (~2^-30 relative), then exp2 of it -----
    "df": (
        """
struct DF { hi: f32, lo: f32 }
fn two_sum(a: f32, b: f32) -> DF {
  let s = fb(a + b);
  let bb = fb(s - a);
  return DF(s, fb(a - fb(s - bb)) + fb(b - bb));
}
fn split(a: f32) -> DF {
  let c = fb(4097.0 * a);
  let hi = fb(c - fb(c - a));
  return DF(hi, fb(a - hi));
}
fn two_prod(a: f32, b: f32) -> DF {
  let p = fb(a * b);
  let x = split(a);
  let y = split(b);
  let e = fb(fb(fb(fb(x.hi * y.hi) - p) + fb(x.hi * y.lo)) + fb(x.lo * y.hi)) + fb(x.lo * y.lo);
  return DF(p, e);
}""",
        ("fb",),
    ),
    "log2_df": (
        """
fn log2_df(x: f32) -> DF {
  let lp = log_parts(x);
  let f = lp.f;
  let v = two_sum(f, 2.0);
  let s = f / v.hi;
  let pr = two_prod(s, v.hi);
  let sl = (fb(fb(f - pr.hi) - pr.lo) - s * v.lo) / v.hi;
  let z = s * s;
  let r = z * (0.666666667 + z * (0.4 + z * (0.285714286 + z * (0.222222222 + z * 0.181818182))));
  let ln = two_sum(2.0 * s, fb(2.0 * sl + s * r));
  let p = two_prod(ln.hi, bitcast<f32>(0x3fb8aa3bu));
  let lo = fb(p.lo + fb(ln.hi * bitcast<f32>(0x32a57060u) + ln.lo * bitcast<f32>(0x3fb8aa3bu)));
  let t = two_sum(lp.e, p.hi);
  return two_sum(t.hi, fb(t.lo + lo));
}""",
        ("log_parts", "df", "fb"),
    ),
    "m_pow": (
        """
fn pow_is_int(b: f32) -> bool {
  let u = bitcast<u32>(b) & 0x7fffffffu;
  if (u >= 0x4b000000u) { return true; }  // |b| >= 2^23 (inf and NaN are caught before)
  if (u < 0x3f800000u) { return u == 0u; }  // |b| < 1, subnormals included
  return floor(b) == b;
}
fn pow_is_odd(b: f32) -> bool { return pow_is_int(b) && abs(b) < 16777216.0 && (i32(b) & 1) == 1; }
fn m_pow(a: f32, b: f32) -> f32 {
  if (b == 0.0 || a == 1.0) { return 1.0; }
  if (f_isnan(a) || f_isnan(b)) { return bitcast<f32>(F_NAN); }
  let aa = abs(a);
  if (f_isinf(b)) {
    if (aa == 1.0) { return 1.0; }
    return select(0.0, F_INF, (aa < 1.0) == (b < 0.0));
  }
  let odd = pow_is_odd(b);
  let sgn = select(0u, 0x80000000u, odd && (bitcast<u32>(a) & 0x80000000u) != 0u);
  if (aa == 0.0 || f_isinf(a)) {
    let big = (aa == 0.0) == (b < 0.0);
    return bitcast<f32>(select(0u, 0x7f800000u, big) | sgn);
  }
  if (a < 0.0 && !pow_is_int(b)) { return bitcast<f32>(F_NAN); }
  // a = -1 (log2 = 0): exact, and two_prod(b, 0) overflows in split() (4097 b) for |b| > 2^116
  if (aa == 1.0) { return bitcast<f32>(0x3f800000u | sgn); }
  let l = log2_df(aa);
  let y = two_prod(b, l.hi);
  let yh = y.hi;
  let yl = fb(y.lo + b * l.lo);
  var r: f32;
  // yh + yl >= 128 overflows; yh = 128 with yl < 0 (log2 of the result just below 128, as
  // for results near float32's max) is finite: k = 128 and f < 0 below
  if (yh > 128.0 || (yh == 128.0 && yl >= 0.0)) { r = F_INF; }
  else if (yh < -151.0) { r = 0.0; }
  else {
    let k = round(yh);
    let f = fb(yh - k) + yl;
    r = ldexp2(exp_poly(fb(f * LN2_HI) + f * LN2_LO), i32(k));
  }
  return bitcast<f32>(bitcast<u32>(r) | sgn);
}""",
        (
            "f_isnan",
            "f_isinf",
            "f_nan",
            "log2_df",
            "exp_poly",
            "ldexp2",
            "libm_consts",
            "fb",
        ),
    ),
}


def _literal(m: re.Match[str]) -> str:
    """`bitcast<f32>(0x...u)` of a finite value -> an exact decimal literal (naga cannot
    evaluate bitcast in const declarations); inf stays a (runtime) bitcast."""
    bits = int(m.group(1), 16)
    if (bits >> 23) & 0xFF == 0xFF:
        return m.group(0)
    x = struct.unpack("<f", struct.pack("<I", bits))[0]
    return f"{x!r}f" if x >= 0 else f"({x!r}f)"


def register(h: Callable[..., None]) -> None:
    for name, (src, deps) in _SOURCES.items():
        src = re.sub(r"bitcast<f32>\(0x([0-9a-f]{8})u\)", _literal, src)
        src = src.replace("\nconst F_INF: f32 = bitcast<f32>(0x7f800000u);", "")
        src = src.replace("F_INF", "bitcast<f32>(0x7f800000u)")
        h(name, src, *deps)
