"""jax.scipy.special functions defined by integrals: Dawson's integral, Spence's function
(the dilogarithm), Fresnel and sine/cosine integrals, Owen's T, the Faddeeva function and
Kummer's 1F1, written on jnp so they trace, differentiate, vmap and run on every device.

dawsn(x) = exp(-x^2) int_0^x exp(t^2) dt: Gauss-Legendre quadrature of x int_0^1
exp(x^2 (u^2 - 1)) du for |x| <= 4 (the integrand is smooth there), the asymptotic series
1/(2x) sum (2k-1)!!/(2x^2)^k beyond. spence(x) = Li2(1 - x): the power series of Li2 on
|z| <= 1/2, reached through the reflection, Landen and inversion identities.
"""

from __future__ import annotations

import math
from typing import Any

from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ..lax import control_flow, lax
from ..numpy import util

# 24-point Gauss-Legendre nodes and weights on [0, 1], computed once on the host (Newton on
# the Legendre recurrence)


def _gauss_legendre(n: int) -> tuple[list[float], list[float]]:
    nodes, weights = [], []
    for i in range(1, n + 1):
        x = math.cos(math.pi * (i - 0.25) / (n + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = n * (x * p1 - p0) / (x * x - 1)
            dx = p1 / dp
            x -= dx
            if abs(dx) < 1e-16:
                break
        nodes.append(0.5 * (x + 1))
        weights.append(1.0 / ((1 - x * x) * dp * dp))
    return nodes, weights


_NODES, _WEIGHTS = _gauss_legendre(24)


def _inexact(name: str, x: Any) -> Any:
    util.check_arraylike(name, x)
    (x,) = util.promote_dtypes_inexact(jnp.asarray(x))
    return x


def dawsn(x: Any) -> Any:
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    x = _inexact("dawsn", x)
    dt = x.dtype
    small = jnp.abs(x) <= 4.0
    xs = jnp.where(small, x, 0.0)
    u = jnp.asarray(_NODES, dt)
    w = jnp.asarray(_WEIGHTS, dt)
    quad = xs * jnp.sum(w * jnp.exp(xs[..., None] ** 2 * (u**2 - 1.0)), axis=-1)
    xl = jnp.where(small, 4.0, x)
    inv = 1.0 / (2.0 * xl * xl)
    series, term = jnp.ones_like(xl), jnp.ones_like(xl)
    for k in range(1, 9):  # (2k-1)!! / (2x^2)^k: the smallest term near x = 4 is ~1e-9
        term = term * (2 * k - 1) * inv
        series = series + term
    return jnp.where(small, quad, series / (2.0 * xl))


_PI2_6 = math.pi**2 / 6


def _li2_series(z: Any) -> Any:
    """Li2(z) = sum z^k / k^2 for |z| <= 1/2 (30 terms: 2^-30 / 900 is below float64's
    resolution of the sum)."""
    out, zk = jnp.zeros_like(z), jnp.ones_like(z)
    for k in range(1, 31):
        zk = zk * z
        out = out + zk / float(k * k)
    return out


def _li2(z: Any) -> Any:
    """Li2(z) for real z <= 1, through identities that map z into |w| <= 1/2. Each branch
    gets z only where it is chosen (a safe constant elsewhere), so derivatives flow whole."""
    high, mid, low = z > 0.5, z >= -0.5, z >= -1.0
    # z in (1/2, 1]: Li2(z) = pi^2/6 - ln z ln(1 - z) - Li2(1 - z)
    zr = jnp.where(high, z, 0.75)
    log_terms = jnp.where(zr < 1.0, jnp.log(zr) * jnp.log1p(-jnp.where(zr < 1.0, zr, 0.5)), 0.0)
    reflect = _PI2_6 - log_terms - _li2_series(1.0 - zr)
    # z in [-1, -1/2): Landen, Li2(z) = -Li2(z / (z - 1)) - ln(1 - z)^2 / 2
    zl = jnp.where(low & ~mid, z, -0.75)
    landen = -_li2_series(zl / (zl - 1.0)) - 0.5 * jnp.log1p(-zl) ** 2
    # z < -1: inversion, Li2(z) = -pi^2/6 - ln(-z)^2 / 2 - Li2(1 / z), 1/z in (-1, 0) by Landen
    zi = jnp.where(low, -2.0, z)
    w = 1.0 / zi
    inv_landen = -_li2_series(w / (w - 1.0)) - 0.5 * jnp.log1p(-w) ** 2
    inv = -_PI2_6 - 0.5 * jnp.log(-zi) ** 2 - inv_landen
    center = _li2_series(jnp.where(mid & ~high, z, 0.0))
    return jnp.where(high, reflect, jnp.where(mid, center, jnp.where(low, landen, inv)))


def spence(x: Any) -> Any:
    """Spence's function int_1^x ln(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN below)."""
    x = _inexact("spence", x)
    return jnp.where(x < 0, math.nan, _li2(1.0 - jnp.maximum(x, 0.0)))


# ---- Fresnel and sine/cosine integrals --------------------------------------------------------
# Quadrature over [0, x] where the integrand has few oscillations, the asymptotic auxiliary
# functions f, g beyond (their terms fall below float32 resolution there).
_NODES64, _WEIGHTS64 = _gauss_legendre(64)


def _integrate(fun: Any, x: Any) -> Any:
    """int_0^x fun(t) dt by 64-point Gauss-Legendre (x broadcast against the nodes)."""
    u = jnp.asarray(_NODES64, x.dtype)
    w = jnp.asarray(_WEIGHTS64, x.dtype)
    return x * jnp.sum(w * fun(x[..., None] * u), axis=-1)


def _asymptotic(z: Any, first: float, ratio: Any, terms: int) -> Any:
    """sum_k (-1)^k c_k z^-k with c_0 = 1 and c_k / c_(k-1) = ratio(k)."""
    out, term = jnp.ones_like(z), jnp.ones_like(z)
    for k in range(1, terms + 1):
        term = term * (-ratio(k)) / z
        out = out + term
    return first * out


def _square_mod4(x: Any) -> Any:
    """x^2 mod 4 with x^2's low bits kept (sin(pi x^2 / 2) has period 4 in x^2): x split into
    a high half (12 bits, its square exact) and the rest, each partial product reduced."""
    scale = 4097.0  # Dekker's split for float32: 2^12 + 1
    c = x * scale
    hi = c - (c - x)
    lo = x - hi
    parts = [jnp.remainder(hi * hi, 4.0), jnp.remainder(2.0 * hi * lo, 4.0), lo * lo]
    return jnp.remainder(parts[0] + parts[1] + parts[2], 4.0)


def fresnel(x: Any) -> tuple[Any, Any]:
    """(S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt."""
    x = _inexact("fresnel", x)
    ax = jnp.abs(x)
    small = ax <= 4.0
    xs = jnp.where(small, ax, 0.0)
    half_pi = math.pi / 2
    s_q = _integrate(lambda t: jnp.sin(half_pi * t * t), xs)
    c_q = _integrate(lambda t: jnp.cos(half_pi * t * t), xs)
    xl = jnp.where(small, 4.0, ax)
    z = (math.pi * xl * xl) ** 2
    # f ~ 1/(pi x) sum (-1)^k (4k-1)!! / (pi x^2)^(2k), g ~ 1/(pi^2 x^3) sum (-1)^k (4k+1)!! / ...
    f = _asymptotic(z, 1.0, lambda k: (4 * k - 1) * (4 * k - 3), 6) / (math.pi * xl)
    g = _asymptotic(z, 1.0, lambda k: (4 * k + 1) * (4 * k - 1), 6) / (math.pi**2 * xl**3)
    arg = half_pi * _square_mod4(xl)
    s_a = 0.5 - f * jnp.cos(arg) - g * jnp.sin(arg)
    c_a = 0.5 + f * jnp.sin(arg) - g * jnp.cos(arg)
    sign = jnp.sign(x)
    return sign * jnp.where(small, s_q, s_a), sign * jnp.where(small, c_q, c_a)


_EULER = 0.5772156649015329


def sici(x: Any) -> tuple[Any, Any]:
    """(Si(x), Ci(x)): int_0^x sin(t)/t dt and gamma + ln|x| + int_0^x (cos(t) - 1)/t dt."""
    x = _inexact("sici", x)
    ax = jnp.abs(x)
    small = ax <= 20.0
    xs = jnp.where(small, ax, 0.0)

    def sinc(t: Any) -> Any:
        return jnp.where(t == 0, 1.0, jnp.sin(t) / jnp.where(t == 0, 1.0, t))

    def cosm1(t: Any) -> Any:  # (cos t - 1) / t = -2 sin^2(t/2) / t, exact near 0
        return jnp.where(t == 0, 0.0, -2.0 * jnp.sin(t / 2) ** 2 / jnp.where(t == 0, 1.0, t))

    si_q = _integrate(sinc, xs)
    ci_q = _EULER + jnp.log(jnp.where(small, ax, 1.0)) + _integrate(cosm1, xs)
    xl = jnp.where(small, 20.0, ax)
    z = xl * xl
    f = _asymptotic(z, 1.0, lambda k: (2 * k) * (2 * k - 1), 9) / xl
    g = _asymptotic(z, 1.0, lambda k: (2 * k + 1) * (2 * k), 9) / z
    si_a = math.pi / 2 - f * jnp.cos(xl) - g * jnp.sin(xl)
    ci_a = f * jnp.sin(xl) - g * jnp.cos(xl)
    si = jnp.sign(x) * jnp.where(small, si_q, si_a)
    ci = jnp.where(ax == 0, -math.inf, jnp.where(small, ci_q, ci_a))
    return si, ci


# ---- Owen's T function ---------------------------------------------------------------------------
def _upper_tail(x: Any) -> Any:
    """1 - Phi(x), accurate for x >= 0."""
    return 0.5 * lax.erfc(x / math.sqrt(2.0))


def _owens_t_quad(h: Any, a: Any) -> Any:
    """T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx, for |a| <= 1."""
    u = jnp.asarray(_NODES, h.dtype)
    w = jnp.asarray(_WEIGHTS, h.dtype)
    x = a[..., None] * u
    q = 1.0 + x * x
    return a * jnp.sum(w * jnp.exp(-0.5 * h[..., None] ** 2 * q) / q, axis=-1) / (2 * math.pi)


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function T(h, a) (even in h, odd in a): quadrature for |a| <= 1, Owen's
    identity T(h, a) + T(ah, 1/a) = (Phi(h) + Phi(ah)) / 2 - Phi(h) Phi(ah) beyond."""
    util.check_arraylike("owens_t", h, a)
    h, a = util.promote_dtypes_inexact(jnp.asarray(h), jnp.asarray(a))
    h, a = jnp.broadcast_arrays(h, a)
    ah, aa = jnp.abs(h), jnp.abs(a)
    inner = aa <= 1.0
    a_in = jnp.where(inner, aa, 1.0)
    t_in = _owens_t_quad(ah, a_in)
    a_out = jnp.where(inner, 2.0, aa)
    ha = ah * a_out
    # the identity in upper tails Q = 1 - Phi (h, ah >= 0): (Q(h) + Q(ah)) / 2 - Q(h) Q(ah)
    qh, qha = _upper_tail(ah), _upper_tail(ha)
    t_out = 0.5 * (qh + qha) - qh * qha - _owens_t_quad(ha, 1.0 / a_out)
    return jnp.sign(a) * jnp.where(inner, t_in, t_out)


# ---- the Faddeeva function -----------------------------------------------------------------------
def _weideman(n: int) -> tuple[float, list[float]]:
    """Weideman's (1994) rational approximation of w(z) in the upper half plane: the length
    L and the n coefficients (highest power first) of the polynomial in Z = (L + iz)/(L - iz),
    from a DFT of exp(-t^2) (L^2 + t^2) at t = L tan(theta / 2), computed once on the host."""
    m = 2 * n
    length = math.sqrt(n / math.sqrt(2))
    ts = [length * math.tan(k * math.pi / (2 * m)) for k in range(-m + 1, m)]
    f = [0.0] + [math.exp(-t * t) * (length * length + t * t) for t in ts]
    shifted = f[m:] + f[:m]
    coef = [
        sum(v * math.cos(2 * math.pi * j * i / (2 * m)) for i, v in enumerate(shifted)) / (2 * m)
        for j in range(1, n + 1)
    ]
    return length, coef[::-1]


_W_LENGTH, _W_COEF = _weideman(32)


def _wofz_upper(z: Any) -> Any:
    iz = 1j * z
    den = _W_LENGTH - iz
    big_z = (_W_LENGTH + iz) / den
    p = jnp.zeros_like(z)
    for c in _W_COEF:
        p = p * big_z + c
    return 2.0 * p / (den * den) + (1.0 / math.sqrt(math.pi)) / den


@custom_jvp
def faddeeva(z: Any) -> Any:
    """w(z) of a complex array: Weideman's rational approximation for Im z >= 0,
    w(z) = 2 exp(-z^2) - w(-z) below. Its derivative is JAX's closed form
    w'(z) = -2 z w(z) + 2i / sqrt(pi), not that of the approximation."""
    upper = jnp.imag(z) >= 0
    zu = jnp.where(upper, z, -z)
    w = _wofz_upper(zu)
    return jnp.where(upper, w, 2.0 * jnp.exp(-z * z) - w)


faddeeva.defjvps(lambda t, w, z: t * (-2.0 * z * w + 2j / math.sqrt(math.pi)))


def wofz(z: Any) -> Any:
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz), complex."""
    util.check_arraylike("wofz", z)
    z = jnp.asarray(z)
    if z.dtype.kind != "c":
        (z,) = util.promote_dtypes_inexact(z)
        z = z.astype(jnp.complex128 if z.dtype.itemsize == 8 else jnp.complex64)
    return faddeeva(z)


# ---- Kummer's confluent hypergeometric function -------------------------------------------------
_HYP1F1_TERMS = 400  # enough for the series' terms to peak (near k = |x| < 100) and decay


def _hyp1f1_series(a: Any, b: Any, x: Any) -> Any:
    """sum (a)_k / (b)_k x^k / k! for x >= 0 (all terms of one sign for a, b > 0)."""

    def body(k: Any, state: Any) -> Any:
        total, term = state
        kf = k.astype(x.dtype)
        term = term * (a + kf) / (b + kf) * x / (kf + 1.0)
        return total + term, term

    one = jnp.ones_like(x)
    return control_flow.fori_loop(0, _HYP1F1_TERMS, body, (one, one))[0]


def _hyp1f1_asymptotic(a: Any, b: Any, x: Any) -> Any:
    """Gamma(b)/Gamma(a) e^x x^(a-b) sum (1-a)_k (b-a)_k / k! x^-k, for large positive x."""
    total, term = jnp.ones_like(x), jnp.ones_like(x)
    for k in range(12):
        term = term * (1.0 - a + k) * (b - a + k) / ((k + 1.0) * x)
        total = total + term
    sign = _gamma_sign(b) * _gamma_sign(a)
    log_mag = lax.lgamma(b) - lax.lgamma(a) + x + (a - b) * jnp.log(x)
    return sign * jnp.exp(log_mag) * total


def _gamma_sign(v: Any) -> Any:
    """The sign of Gamma(v) for real v (negative between -2k-1 and -2k)."""
    neg = (v < 0) & (jnp.floor(v) % 2 == 1)
    return jnp.where(neg, -1.0, 1.0)


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's function 1F1(a; b; x) for real arguments: the power series (through Kummer's
    transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x) for x < 0, which keeps its terms of one
    sign), the asymptotic expansion for |x| >= 100; 1 for a = 0 and e^x for a = b, as JAX."""
    util.check_arraylike("hyp1f1", a, b, x)
    a, b, x = util.promote_dtypes_inexact(*(jnp.asarray(v) for v in (a, b, x)))
    if x.dtype.kind == "c":
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    a, b, x = jnp.broadcast_arrays(a, b, x)
    neg = x < 0
    aa = jnp.where(neg, b - a, a)
    ax = jnp.abs(x)
    small = ax < 100.0
    series = _hyp1f1_series(aa, b, jnp.where(small, ax, 0.0))
    asym = _hyp1f1_asymptotic(aa, b, jnp.where(small, 100.0, ax))
    val = jnp.where(small, series, asym)
    out = jnp.where(neg, jnp.exp(x) * val, val)
    out = jnp.where(a == b, jnp.exp(x), out)
    return jnp.where(a == 0, jnp.ones_like(out), out)


# ---- Gauss's hypergeometric function -------------------------------------------------------------
def _hyp2f1_series(a: Any, b: Any, c: Any, x: Any) -> Any:
    """sum (a)_k (b)_k / (c)_k x^k / k!, for 0 <= x <= 0.9 (400 terms: 0.9^400 ~ 5e-19)."""

    def body(k: Any, state: Any) -> Any:
        total, term = state
        kf = k.astype(x.dtype)
        term = term * (a + kf) * (b + kf) / ((c + kf) * (kf + 1.0)) * x
        return total + term, term

    one = jnp.ones_like(x)
    return control_flow.fori_loop(0, _HYP1F1_TERMS, body, (one, one))[0]


def _gamma_ratio(num: list[Any], den: list[Any]) -> Any:
    """prod Gamma(num) / prod Gamma(den), through lgamma and the signs."""
    log = sum(lax.lgamma(v) for v in num) - sum(lax.lgamma(v) for v in den)
    sign = jnp.ones_like(log)
    for v in [*num, *den]:
        sign = sign * _gamma_sign(v)
    return sign * jnp.exp(log)


def _hyp2f1_unit(a: Any, b: Any, c: Any, x: Any) -> Any:
    """2F1 for x in [0, 1]: the series up to 0.9, the 1 - x connection formula above (NaN where
    c - a - b is an integer, the logarithmic case), Gauss's sum at x = 1."""
    near = x > 0.9
    xs = jnp.where(near, 0.0, x)
    series = _hyp2f1_series(a, b, c, xs)
    y = jnp.where(near, 1.0 - x, 0.5)
    s = c - a - b
    first = _gamma_ratio([c, s], [c - a, c - b]) * _hyp2f1_series(a, b, 1.0 - s, y)
    second = (
        _gamma_ratio([c, -s], [a, b]) * jnp.power(y, s) * _hyp2f1_series(c - a, c - b, s + 1.0, y)
    )
    log_case = s == jnp.round(s)
    connected = jnp.where(log_case, math.nan, first + second)
    gauss = jnp.where(s > 0, _gamma_ratio([c, s], [c - a, c - b]), math.inf)
    return jnp.where(x == 1.0, gauss, jnp.where(near, connected, series))


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Gauss's hypergeometric function 2F1(a, b; c; x) for real x <= 1: the power series, the
    connection formula near x = 1, Pfaff's transformation (1 - x)^-a 2F1(a, c - b; c; x/(x-1))
    for x < 0; NaN for x > 1 (complex there)."""
    util.check_arraylike("hyp2f1", a, b, c, x)
    a, b, c, x = util.promote_dtypes_inexact(*(jnp.asarray(v) for v in (a, b, c, x)))
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    neg = x < 0
    xn = jnp.where(neg, x, -1.0)
    pfaff = jnp.power(1.0 - xn, -a) * _hyp2f1_unit(a, c - b, c, xn / (xn - 1.0))
    direct = _hyp2f1_unit(a, b, c, jnp.clip(jnp.where(neg, 0.0, x), 0.0, 1.0))
    out = jnp.where(neg, pfaff, direct)
    return jnp.where(x > 1.0, math.nan, out)
