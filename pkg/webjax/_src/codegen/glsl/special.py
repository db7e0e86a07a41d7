"""float32 special functions in GLSL ES 3.00 for the webgl codegen: erf, erfc, erfinv, lgamma,
digamma.

Everything is built on glsl/libm's exp/log/log1p/sin and exactly rounded + - * /, never on the
GLSL builtins for transcendentals (whose accuracy is left to the implementation).

- erfc(x) for x >= 0.5 is exp(-x^2) * g(x), with g(x) = erfc(x) e^(x^2) a per-interval float32
  polynomial in the interval's normalized variable (fitted offline, relative error about 1e-7).
  x^2 is kept as a double-float and the scaling by 2^k is applied once, so subnormal results
  are rounded only once (on devices that keep subnormals). Below 0.5, erf uses its Taylor
  series.
- erfinv starts from a closed-form approximation and takes three Newton steps, on erf for
  |y| <= 1/2 and on erfc against 1 - |y| (exact there) above, which keeps relative precision
  as |y| approaches 1.
- lgamma uses the Taylor series of lnGamma(2 + t), with coefficients (-1)^k (zeta(k) - 1) / k,
  shifted by the recurrence on (0, 8), Stirling's series above and reflection for x < 0.
- digamma shifts x up to 6 by the recurrence, then uses the asymptotic series; reflection for
  x < 0.

Accuracy is a few ulp, except where the result is much smaller than the terms it comes from
(near the zeros of lgamma and digamma, above all for x < 0): there the error is a few ulp of
those terms, 1e-7 to 1e-6 absolute. `fb()` (glsl/math) pins the evaluation order where it
matters. The coefficient tables are codegen/libm_tables.py's, shared with the WGSL library.
"""

from __future__ import annotations

from collections.abc import Callable

from ..libm_tables import ERF_TAYLOR, ERFC_FITS, LGAMMA_C, LGAMMA_ONE_MINUS_EULER, TWO_OVER_SQRT_PI


def _lit(c: float) -> str:
    """A GLSL float literal for c (repr always has a '.' or an exponent, both valid in GLSL)."""
    s = repr(float(c))
    return s if ("." in s or "e" in s) else s + ".0"


def _horner(var: str, coefs: list[float]) -> str:
    expr = _lit(coefs[-1])
    for c in reversed(coefs[:-1]):
        expr = f"{_lit(c)} + {var} * ({expr})"
    return expr


def _erfc_g() -> str:
    lines = ["float erfc_g(float x) {"]
    for lo, hi, coefs in ERFC_FITS[:-1]:
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        lines.append(f"  if (x < {_lit(hi)}) {{")
        lines.append(f"    float t = (x - {_lit(mid)}) * {_lit(1 / half)};")
        lines.append(f"    return {_horner('t', coefs)};")
        lines.append("  }")
    lo, hi, coefs = ERFC_FITS[-1]
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    lines.append(f"  float t = (x - {_lit(mid)}) * {_lit(1 / half)};")
    lines.append(f"  return {_horner('t', coefs)};")
    lines.append("}")
    return "\n".join(lines)


_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "erfc_g": (_erfc_g(), ()),
    # erfc(x) for x >= 0.5: e^(-x^2) from the double-float x^2 (hi reduced by k ln 2, lo folded
    # into the reduced argument), times g, scaled by 2^k in a single final rounding
    "erfc_pos": (
        """
float erfc_pos(float x) {
  if (x > 10.1) { return 0.0; }
  df q = two_prod(x, x);
  float k = roundEven(-q.hi * 1.44269504);
  float r = fb(fb(-q.hi - k * LN2_HI) - k * LN2_LO) - q.lo;
  return ldexp2(exp_poly(r) * erfc_g(x), int(k));
}""",
        ("erfc_g", "df", "two_prod", "fb", "libm_consts", "ldexp2", "exp_poly"),
    ),
    # erf(x) for |x| < 0.5 by its Taylor series
    "erf_small": (
        "float erf_small(float x) {\n  float z = x * x;\n  return x * ("
        + _horner("z", [TWO_OVER_SQRT_PI * c for c in ERF_TAYLOR])
        + ");\n}",
        (),
    ),
    "m_erf": (
        """
float m_erf(float x) {
  if (f_isnan(x)) { return x; }
  float ax = abs(x);
  if (ax < 0.5) { return erf_small(x); }
  float r = 1.0 - erfc_pos(ax);
  return (x < 0.0) ? -r : r;
}""",
        ("f_isnan", "erf_small", "erfc_pos"),
    ),
    "m_erfc": (
        """
float m_erfc(float x) {
  if (f_isnan(x)) { return x; }
  if (abs(x) < 0.5) { return 1.0 - erf_small(x); }
  if (x > 0.0) { return erfc_pos(x); }
  return 2.0 - erfc_pos(-x);
}""",
        ("f_isnan", "erf_small", "erfc_pos"),
    ),
    # first guess x0 = sqrt(sqrt(t^2 - ln / a) - t), t = 2 / (pi a) + ln / 2, ln = log(1 - y^2),
    # a = 0.147; then Newton on erf(x) = |y| or erfc(x) = 1 - |y|
    "m_erfinv": (
        """
float m_erfinv(float y) {
  float ay = abs(y);
  if (f_isnan(y) || ay > 1.0) { return uintBitsToFloat(F_NAN); }
  if (ay == 1.0) { return uintBitsToFloat((y < 0.0) ? 0xff800000u : 0x7f800000u); }
  if (ay == 0.0) { return y; }
  float omy = 1.0 - ay;
  float ln = m_log(omy * (1.0 + ay));
  float t = 4.33074417 + 0.5 * ln;
  float x = sqrt(sqrt(t * t - ln * 6.80272109) - t);
  for (int k = 0; k < 3; k++) {
    float d = 1.12837917 * m_exp(-x * x);
    if (ay <= 0.5) { x = x - (m_erf(x) - ay) / d; } else { x = x + (m_erfc(x) - omy) / d; }
  }
  return (y < 0.0) ? -x : x;
}""",
        ("f_isnan", "f_nan", "m_log", "m_exp", "m_erf", "m_erfc"),
    ),
    # lnGamma(2 + t), called with |t| <= 1/2
    "lgamma_t": (
        "float lgamma_t(float t) {\n  return t * ("
        + _horner("t", [LGAMMA_ONE_MINUS_EULER, *LGAMMA_C])
        + ");\n}",
        (),
    ),
    # sin(pi x) and cos(pi x), reduced exactly by x - 2 roundEven(x / 2) to r in [-1, 1]
    "sincospi": (
        """
float sinpi(float x) {
  float r = x - 2.0 * roundEven(0.5 * x);
  if (abs(r) > 0.5) { r = ((r > 0.0) ? 1.0 : -1.0) - r; }
  return m_sin(PI_HI * r);
}
float cospi(float x) {
  float r = abs(x - 2.0 * roundEven(0.5 * x));
  if (r > 0.5) { return -m_sin(PI_HI * (r - 0.5)); }
  return m_sin(PI_HI * (0.5 - r));
}""",
        ("m_sin", "libm_consts"),
    ),
    # lgamma for x > 0: below 1.5, lnGamma(x + 1 or x + 2) less log x (and log(x + 1)); on
    # [2.5, 8), lnGamma(y) + log(y (y + 1) ... (x - 1)) with y = x - n in [1.5, 2.5); Stirling's
    # series from 8 on
    "lgamma_pos": (
        """
float lgamma_pos(float x) {
  if (x < 0.5) { return lgamma_t(x) - m_log(x) - m_log1p(x); }
  if (x < 1.5) { return lgamma_t(x - 1.0) - m_log(x); }
  if (x < 2.5) { return lgamma_t(x - 2.0); }
  if (x < 8.0) {
    float n = floor(x - 1.5);
    float y = x - n;
    float p = y;
    for (int k = 1; k < 7; k++) {
      if (float(k) >= n) { break; }
      p = p * (y + float(k));
    }
    return lgamma_t(y - 2.0) + m_log(p);
  }
  if (f_isinf(x)) { return x; }
  float z = 1.0 / (x * x);
  float s = (1.0 / 12.0 + z * (-1.0 / 360.0 + z * (1.0 / 1260.0 + z * (-1.0 / 1680.0)))) / x;
  return (x - 0.5) * (m_log(x) - 1.0) + fb(0.418938533 + s);
}""",
        ("lgamma_t", "m_log", "m_log1p", "f_isinf", "fb"),
    ),
    # x < 0: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(-x) - log(-x); poles at the integers
    "m_lgamma": (
        """
float m_lgamma(float x) {
  if (f_isnan(x)) { return x; }
  if (x > 0.0) { return lgamma_pos(x); }
  if (f_floor(x) == x) { return uintBitsToFloat(0x7f800000u); }
  float ax = -x;
  return fb(1.14472989 - m_log(abs(sinpi(x)))) - fb(lgamma_pos(ax) + m_log(ax));
}""",
        ("f_isnan", "f_floor", "lgamma_pos", "sincospi", "m_log", "fb"),
    ),
    # x > 0: psi(x) = psi(x + n) - sum 1 / (x + i) with x + n >= 6, then
    # psi(x) ~ log x - 1 / (2x) - sum B_2k / (2k x^2k); x < 0: psi(x) = psi(-x) - 1/x - pi cot(pi x)
    "m_digamma": (
        """
float digamma_pos(float x0) {
  float x = x0;
  float r = 0.0;
  for (int k = 0; k < 6 && x < 6.0; k++) { r = r - 1.0 / x; x = x + 1.0; }
  float f = 1.0 / (x * x);
  float tail = f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0))));
  return r + fb(fb(m_log(x) - 0.5 / x) - tail);
}
float m_digamma(float x) {
  if (f_isnan(x) || (f_isinf(x) && x < 0.0)) { return uintBitsToFloat(F_NAN); }
  if (x <= 0.0 && f_floor(x) == x) { return uintBitsToFloat(F_NAN); }
  if (abs(x) < 1e-8) { return -1.0 / x - 0.577215665; }
  if (x > 0.0) { return digamma_pos(x); }
  return fb(digamma_pos(-x) - 1.0 / x) - PI_HI * (cospi(x) / sinpi(x));
}""",
        ("f_isnan", "f_isinf", "f_nan", "f_floor", "m_log", "sincospi", "libm_consts", "fb"),
    ),
}


def register(h: Callable[..., None]) -> None:
    for name, (src, deps) in _SOURCES.items():
        h(name, src.strip("\n"), *deps)
