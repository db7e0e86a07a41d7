"""float32 special functions in WGSL: erf, erfc, erf_inv, lgamma, digamma.

Built on wgsl_libm's exp/log/sin/cos. erfc(x) = exp(-x^2) g(x) with g fitted per interval
(Chebyshev least squares on erfc(x) e^(x^2), computed with mpmath at 40 digits, converted to
float32 monomials in t = (x - mid) / half-width; relative error about 1e-7 in float32 Horner);
exp(-x^2) keeps x^2 as a double-float and scales once, so tiny results round once. lgamma uses
the Taylor series of lnGamma(2 + t) (coefficients (-1)^k (zeta(k) - 1) / k), recurrences,
Stirling's series and reflection; digamma the reference's recurrence + asymptotic series.
Accuracy: a few ulp, except near the zeros of lgamma/digamma (absolute ~1e-7 there).
"""

from __future__ import annotations

from collections.abc import Callable

# (lo, hi, monomial coefficients in t = (x - (lo + hi) / 2) / ((hi - lo) / 2)) of erfc(x) e^(x^2)
_ERFC_FITS = [
    (0.5, 1.0, [0.5069376230239868, -0.09199317544698715, 0.014434883370995522,
                -0.002028688555583358, 0.000260900822468102, -3.114970604656264e-05,
                3.4878382848546607e-06, -3.6927397673025553e-07, 3.803262771384652e-08,
                -3.6620368959461302e-09]),
    (1.0, 2.0, [0.32158541679382324, -0.08181145787239075, 0.01903776079416275,
                -0.004116363357752562, 0.0008360836072824895, -0.0001608111197128892,
                2.9471793823176995e-05, -5.171516477275873e-06, 8.705112577445107e-07,
                -1.416006227827893e-07, 2.3902170909195775e-08, -3.6516663026731067e-09]),
    (2.0, 4.0, [0.17900115251541138, -0.054372258484363556, 0.01588437147438526,
                -0.004479431547224522, 0.001223031897097826, -0.0003241228114347905,
                8.35842511150986e-05, -2.0998777472414076e-05, 5.089237674837932e-06,
                -1.218085344589781e-06, 3.385938498468022e-07, -7.831825854509589e-08]),
    (4.0, 10.1, [0.07924498617649078, -0.033625852316617966, 0.01413659192621708,
                 -0.005889656022191048, 0.0024311826564371586, -0.0009951272513717413,
                 0.000408492109272629, -0.0001651057245908305, 5.734656224376522e-05,
                 -2.2144802642287686e-05, 1.6373365724575706e-05, -6.597947958653094e-06]),
]  # fmt: skip
# lnGamma(2 + t) = t (1 - gamma) + sum_{k>=2} c_k t^k, c_k = (-1)^k (zeta(k) - 1) / k
_LGAMMA_ONE_MINUS_EULER = 0.42278432846069336
_LGAMMA_C = [0.32246702909469604, -0.0673523023724556, 0.020580807700753212,
             -0.007385550998151302, 0.0028905102517455816, -0.0011927539017051458,
             0.0005096695385873318, -0.00022315475507639349, 9.945750935003161e-05,
             -4.4926237023901194e-05, 2.050721195701044e-05, -9.439488167117815e-06,
             4.3748668758780695e-06, -2.039215814875206e-06]  # fmt: skip


_ERF_TAYLOR = (1.0, -1 / 3, 1 / 10, -1 / 42, 1 / 216, -1 / 1320, 1 / 9360, -1 / 75600)


def _horner(var: str, coefs: list[float]) -> str:
    expr = f"{coefs[-1]!r}"
    for c in reversed(coefs[:-1]):
        expr = f"{c!r} + {var} * ({expr})"
    return expr


def _erfc_g() -> str:
    lines = ["fn erfc_g(x: f32) -> f32 {"]
    for lo, hi, coefs in _ERFC_FITS[:-1]:
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        lines.append(f"  if (x < {hi!r}) {{")
        lines.append(f"    let t = (x - {mid!r}) * {1 / half!r};")
        lines.append(f"    return {_horner('t', coefs)};")
        lines.append("  }")
    lo, hi, coefs = _ERFC_FITS[-1]
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
            [1.1283791670955126 * c for c in _ERF_TAYLOR],
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
        + _horner("t", [_LGAMMA_ONE_MINUS_EULER, *_LGAMMA_C])
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
