"""float32 special functions in WGSL: erf, erfc, erf_inv, lgamma, digamma.

Built on wgsl_libm's exp/log/sin/cos. erfc(x) = exp(-x^2) g(x) with g fitted per interval
(Chebyshev least squares on erfc(x) e^(x^2), computed with mpmath at 40 digits, converted to
float32 monomials in t = (x - mid) / half-width; relative error about 1e-7 in float32 Horner);
exp(-x^2) keeps x^2 as a double-float and scales once, so tiny results round once. lgamma uses
the Taylor series of lnGamma(2 + t) (coefficients (-1)^k (zeta(k) - 1) / k), recurrences,
Stirling's series and reflection; digamma the reference's recurrence + asymptotic series.
Accuracy: a few ulp, except near the zeros of lgamma/digamma (absolute ~1e-7 there).
The coefficient tables are codegen/libm_tables.py's, shared with the GLSL library.
"""

from __future__ import annotations

from collections.abc import Callable

from ..libm_tables import ERF_TAYLOR, ERFC_FITS, LGAMMA_C, LGAMMA_ONE_MINUS_EULER, TWO_OVER_SQRT_PI


def _horner(var: str, coefs: list[float]) -> str:
    expr = f"{coefs[-1]!r}"
    for c in reversed(coefs[:-1]):
        expr = f"{c!r} + {var} * ({expr})"
    return expr


def _erfc_g() -> str:
    lines = ["fn erfc_g(x: f32) -> f32 {"]
    for lo, hi, coefs in ERFC_FITS[:-1]:
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        lines.append(f"  if (x < {hi!r}) {{")
        lines.append(f"    let t = (x - {mid!r}) * {1 / half!r};")
        lines.append(f"    return {_horner('t', coefs)};")
        lines.append("  }")
    lo, hi, coefs = ERFC_FITS[-1]
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    lines.append(f"  let t = (x - {mid!r}) * {1 / half!r};")
    lines.append(f"  return {_horner('t', coefs)};")
    lines.append("}")
    return "\n".join(lines)


_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "erfc_g": (_erfc_g(), ()),
    # exp(-x^2) * g for x >= 0.5, x^2 as a double-float; one rounding even when subnormal
    "erfc_pos": (
        """
fn erfc_pos(x: f32) -> f32 {
  if (x > 10.1) { return 0.0; }
  let q = two_prod(x, x);
  let k = round(-q.hi * 1.44269504);
  let r = fb(fb(-q.hi - k * LN2_HI) - k * LN2_LO) - q.lo;
  return ldexp2(exp_poly(r) * erfc_g(x), i32(k));
}""",
        ("erfc_g", "df", "fb", "libm_consts", "ldexp2", "exp_poly"),
    ),
    # erf(x) = 2/sqrt(pi) (x - x^3/3 + x^5/10 - ...) for |x| < 0.5
    "erf_small": (
        "fn erf_small(x: f32) -> f32 {\n  let z = x * x;\n  return x * ("
        + _horner(
            "z",
            [TWO_OVER_SQRT_PI * c for c in ERF_TAYLOR],
        )
        + ");\n}",
        (),
    ),
    "m_erf": (
        """
fn m_erf(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  let ax = abs(x);
  if (ax < 0.5) { return erf_small(x); }
  let r = 1.0 - erfc_pos(ax);
  return select(r, -r, x < 0.0);
}""",
        ("f_isnan", "erf_small", "erfc_pos"),
    ),
    "m_erfc": (
        """
fn m_erfc(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (abs(x) < 0.5) { return 1.0 - erf_small(x); }
  if (x > 0.0) { return erfc_pos(x); }
  return 2.0 - erfc_pos(-x);
}""",
        ("f_isnan", "erf_small", "erfc_pos"),
    ),
    # erf_inv: a closed-form first guess, then Newton steps on erf (|y| <= 1/2) or on erfc
    # against 1 - |y| (exact there), so the steps keep full relative precision near |y| = 1.
    "m_erfinv": (
        """
fn m_erfinv(y: f32) -> f32 {
  let ay = abs(y);
  if (f_isnan(y) || ay > 1.0) { return bitcast<f32>(F_NAN); }
  if (ay == 1.0) { return bitcast<f32>(select(0x7f800000u, 0xff800000u, y < 0.0)); }
  if (ay == 0.0) { return y; }
  let omy = 1.0 - ay;
  let ln = m_log(omy * (1.0 + ay));
  let t = 4.33074417 + 0.5 * ln;
  var x = sqrt(sqrt(t * t - ln * 6.80272109) - t);
  for (var k = 0; k < 3; k++) {
    let d = 1.12837917 * m_exp(-x * x);
    if (ay <= 0.5) { x = x - (m_erf(x) - ay) / d; } else { x = x + (m_erfc(x) - omy) / d; }
  }
  return select(x, -x, y < 0.0);
}""",
        ("f_isnan", "f_nan", "libm_consts", "m_log", "m_exp", "m_erf", "m_erfc"),
    ),
    "lgamma_t": (
        "fn lgamma_t(t: f32) -> f32 {\n  return t * ("
        + _horner("t", [LGAMMA_ONE_MINUS_EULER, *LGAMMA_C])
        + ");\n}",
        (),
    ),
    # sin(pi x) and cos(pi x) with the exact reduction x - 2 round(x / 2)
    "sincospi": (
        """
fn sinpi(x: f32) -> f32 {
  var r = x - 2.0 * round(0.5 * x);
  if (abs(r) > 0.5) { r = select(-1.0, 1.0, r > 0.0) - r; }
  return m_sin(PI_HI * r);
}
fn cospi(x: f32) -> f32 {
  let r = abs(x - 2.0 * round(0.5 * x));
  if (r > 0.5) { return -m_sin(PI_HI * (r - 0.5)); }
  return m_sin(PI_HI * (0.5 - r));
}""",
        ("m_sin", "libm_consts"),
    ),
    "lgamma_pos": (
        """
fn lgamma_pos(x: f32) -> f32 {
  if (x < 0.5) { return lgamma_t(x) - m_log(x) - m_log1p(x); }
  if (x < 1.5) { return lgamma_t(x - 1.0) - m_log(x); }
  if (x < 2.5) { return lgamma_t(x - 2.0); }
  if (x < 8.0) {
    let n = floor(x - 1.5);
    let y = x - n;
    var p = y;
    for (var k = 1.0; k < n; k = k + 1.0) { p = p * (y + k); }
    return lgamma_t(y - 2.0) + m_log(p);
  }
  if (x == bitcast<f32>(0x7f800000u)) { return x; }
  let z = 1.0 / (x * x);
  let s = (1.0 / 12.0 + z * (-1.0 / 360.0 + z * (1.0 / 1260.0 + z * (-1.0 / 1680.0)))) / x;
  return (x - 0.5) * (m_log(x) - 1.0) + fb(0.418938533 + s);
}""",
        ("lgamma_t", "m_log", "m_log1p", "fb"),
    ),
    "m_lgamma": (
        """
fn m_lgamma(x: f32) -> f32 {
  if (f_isnan(x)) { return x; }
  if (x > 0.0) { return lgamma_pos(x); }
  if (floor(x) == x) { return bitcast<f32>(0x7f800000u); }
  let ax = -x;
  return fb(1.14472989 - m_log(abs(sinpi(x)))) - fb(lgamma_pos(ax) + m_log(ax));
}""",
        ("f_isnan", "lgamma_pos", "sincospi", "m_log", "fb"),
    ),
    "m_digamma": (
        """
fn digamma_pos(x0: f32) -> f32 {
  var x = x0;
  var r = 0.0;
  for (var k = 0; k < 6 && x < 6.0; k++) { r = r - 1.0 / x; x = x + 1.0; }
  let f = 1.0 / (x * x);
  let tail = f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0))));
  return r + fb(fb(m_log(x) - 0.5 / x) - tail);
}
fn m_digamma(x: f32) -> f32 {
  if (f_isnan(x) || x == -bitcast<f32>(0x7f800000u)) { return bitcast<f32>(F_NAN); }
  if (x <= 0.0 && floor(x) == x) { return bitcast<f32>(F_NAN); }
  if (abs(x) < 1e-8) { return -1.0 / x - 0.577215665; }  // psi(x) = -1/x - gamma + O(x)
  if (x > 0.0) { return digamma_pos(x); }
  return fb(digamma_pos(-x) - 1.0 / x) - PI_HI * (cospi(x) / sinpi(x));
}""",
        ("f_isnan", "f_nan", "m_log", "sincospi", "libm_consts", "fb"),
    ),
}


def register(h: Callable[..., None]) -> None:
    for name, (src, deps) in _SOURCES.items():
        h(name, src.strip("\n"), *deps)
