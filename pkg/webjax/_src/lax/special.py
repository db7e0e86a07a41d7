"""Special functions of `jax.lax` written on existing lax ops (no primitives of their own).

JAX's igamma/igammac/igamma_grad_a/random_gamma_grad/betainc/zeta/polygamma/bessel_i0e/i1e are
primitives lowered to XLA routines; here each is a fixed-length computation on lax ops, so it
runs on every backend and compiles into `jit` programs:

* igamma family: Cephes/XLA's power series for P(a, x) (x < 1 or x <= a) and continued
  fraction for Q(a, x) (x >= 1 and x > a), each for a fixed number of terms (128 and 64 in
  float32, 320 and 128 in float64; XLA stops when the term falls below eps), converged away
  from x ~ a; where a > 20 and |x - a| < 0.3 a (they would need O(sqrt(a)) terms), Temme's
  uniform asymptotic expansion (DLMF 8.12), its coefficients derived in exact rationals.
  x^a e^-x / Gamma(a) is Stirling's form past a = 20, where a log x - x - lgamma(a) cancels
  (XLA's float32 loses every digit by a = 1e6). Derivatives in `a` carry the recurrences'
  derivatives along, and differentiate the expansion where it serves.
* betainc: the continued fraction of DLMF 8.17.22 by the modified Lentz method (80 steps in
  float32, 200 in float64: converged for a, b up to ~3e3 and ~1e4), with the symmetry 8.17.4 when
  x > (a + 1) / (a + b + 2).
* zeta (Hurwitz): direct sum of the first terms (until q + n > 9; q >= -16 for the negative
  non-integer q that integer x allows), then Euler-Maclaurin with 12 Bernoulli terms;
  polygamma(m, x) = (-1)^(m+1) m! zeta(m + 1, x) (digamma for m = 0).
* bessel_i0e/i1e: Chebyshev expansions on |x| <= 8 and on 16/|x| - 1 for |x| > 8 (coefficients
  fitted for webjax in extended precision; float64 accurate to a few 1e-15).

float16/bfloat16 compute in float32, as JAX does. Derivatives follow JAX's rules (custom_jvp):
betainc in a or b and polygamma in m raise ValueError, as in JAX.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

from .. import core, dtypes
from ..custom_derivatives import custom_jvp
from ..interpreters import ad
from ..jit import eager_jit
from . import control_flow, lax


# ---- argument handling --------------------------------------------------------------------------
def _operands(name: str, *args: Any) -> list[Any]:
    """Same-dtype float operands (Python scalars take the arrays' dtype), scalars broadcast."""
    args = tuple(lax.to_array(a) if not lax._is_python_scalar(a) else a for a in args)
    if all(lax._is_python_scalar(a) for a in args):
        args = (lax.full((), args[0], dtypes.default_float()), *args[1:])
    xs = lax._coerce_scalars(*args)
    avals = [core.get_aval(x) for x in xs]
    dt = avals[0].dtype
    for av in avals:
        if av.dtype is not dt:
            raise TypeError(
                f"lax.{name} requires arguments to have the same dtypes, got "
                + ", ".join(a.dtype.name for a in avals)
                + "."
            )
    if dt.kind != "f":
        raise TypeError(
            f"lax.{name} does not accept dtype {dt.name}. Accepted dtypes are subtypes of floating."
        )
    shapes = {av.shape for av in avals if av.shape}
    if len(shapes) > 1:
        raise TypeError(
            f"lax.{name} got incompatible shapes for broadcasting: "
            + ", ".join(str(a.shape) for a in avals)
            + "."
        )
    shape = shapes.pop() if shapes else ()
    return [x if core.get_aval(x).shape == shape else lax.broadcast(x, shape) for x in xs]


def _call(jitted: Any, name: str, *args: Any) -> Any:
    """`jitted` on the operands; weak when every operand is (JAX's weak-type rule)."""
    xs = _operands(name, *args)
    out = jitted(*xs)
    if all(core.get_aval(x).weak_type for x in xs) and not core.get_aval(out).weak_type:
        out = lax.convert_element_type(out, core.get_aval(out).dtype, weak_type=True)
    return out


def _upcast(fn: Any) -> Any:
    """Compute 16-bit floats in float32 (as JAX), then round back."""

    def wrapped(*xs: Any) -> Any:
        dt = core.get_aval(xs[0]).dtype
        if dt.bits == 16:
            out = fn(*(lax.convert_element_type(x, dtypes.float32) for x in xs))
            return lax.convert_element_type(out, dt)
        return fn(*xs)

    return wrapped


def _c(v: float, like: Any) -> Any:
    av = core.get_aval(like)
    return lax.full(av.shape, v, av.dtype)


def _eps(x: Any) -> float:
    return 2.0**-52 if core.get_aval(x).dtype.bits == 64 else 2.0**-23


def _fmax(x: Any) -> float:
    return 1.7976931348623157e308 if core.get_aval(x).dtype.bits == 64 else 3.4028234663852886e38


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


def _any_of(*preds: Any) -> Any:
    out = preds[0]
    for p in preds[1:]:
        out = lax.bitwise_or(out, p)
    return out


def _nonzero_tangent(t: Any) -> bool:
    """Whether a tangent may be nonzero: traced ones may; concrete ones when any entry is."""
    if isinstance(t, core.Tracer):
        return True
    av = core.get_aval(t)
    if not av.shape:
        return bool(t != 0)
    return bool(lax.reduce_or(lax.ne(t, lax.full(av.shape, 0, av.dtype)), tuple(range(av.ndim))))


# ---- incomplete gamma ---------------------------------------------------------------------------
def _series_steps(x: Any) -> int:
    return 320 if core.get_aval(x).dtype.bits == 64 else 128


def _cf_steps(x: Any) -> int:
    return 128 if core.get_aval(x).dtype.bits == 64 else 64


def _igamma_series(a: Any, x: Any, deriv: bool) -> tuple[Any, Any]:
    """sum_n x^n / ((a + 1)...(a + n)) and its derivative in a (Cephes' igam series)."""
    one = _c(1.0, a)
    zero = _c(0.0, a)

    def body(_: Any, s: Any) -> Any:
        r, c, ans, dc, dans = s
        r = lax.add(r, one)
        if deriv:
            dc = lax.sub(lax.mul(dc, lax.div(x, r)), lax.div(lax.mul(c, x), lax.mul(r, r)))
            dans = lax.add(dans, dc)
        c = lax.mul(c, lax.div(x, r))
        return r, c, lax.add(ans, c), dc, dans

    init = (a, one, one, zero, zero)
    _, _, ans, _, dans = control_flow.fori_loop(0, _series_steps(a), body, init)
    return ans, dans


def _igammac_cf(a: Any, x: Any, deriv: bool) -> tuple[Any, Any]:
    """Cephes' continued fraction for Q(a, x) / ax and its derivative in a."""
    eps = _eps(x)
    one, zero = _c(1.0, x), _c(0.0, x)
    y = lax.sub(one, a)
    z = lax.add(lax.add(x, y), one)
    pkm2, qkm2 = one, x
    pkm1 = lax.add(x, one)
    qkm1 = lax.mul(z, x)
    ans = lax.div(pkm1, qkm1)
    dqkm1 = lax.neg(x)
    dans = lax.div(lax.neg(lax.mul(ans, dqkm1)), qkm1)
    big, small = _c(1.0 / eps, x), _c(eps, x)

    def body(_: Any, s: Any) -> Any:
        c, y, z, ans, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans = s
        c, y, z = lax.add(c, one), lax.add(y, one), lax.add(z, _c(2.0, x))
        yc = lax.mul(y, c)
        pk = lax.sub(lax.mul(pkm1, z), lax.mul(pkm2, yc))
        qk = lax.sub(lax.mul(qkm1, z), lax.mul(qkm2, yc))
        ok = lax.ne(qk, zero)
        safe_qk = lax.select(ok, qk, one)
        ans = lax.select(ok, lax.div(pk, safe_qk), ans)
        if deriv:
            dpk = lax.add(
                lax.sub(lax.sub(lax.mul(dpkm1, z), pkm1), lax.mul(dpkm2, yc)), lax.mul(pkm2, c)
            )
            dqk = lax.add(
                lax.sub(lax.sub(lax.mul(dqkm1, z), qkm1), lax.mul(dqkm2, yc)), lax.mul(qkm2, c)
            )
            dans = lax.select(ok, lax.div(lax.sub(dpk, lax.mul(ans, dqk)), safe_qk), dans)
            dpkm2, dqkm2, dpkm1, dqkm1 = dpkm1, dqkm1, dpk, dqk
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        rescale = lax.gt(lax.abs(pk), big)
        sc = lambda v: lax.select(rescale, lax.mul(v, small), v)
        pkm2, pkm1, qkm2, qkm1 = sc(pkm2), sc(pkm1), sc(qkm2), sc(qkm1)
        if deriv:
            dpkm2, dqkm2, dpkm1, dqkm1 = sc(dpkm2), sc(dqkm2), sc(dpkm1), sc(dqkm1)
        return c, y, z, ans, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans

    init = (zero, y, z, ans, pkm1, qkm1, pkm2, qkm2, zero, zero, zero, dqkm1, dans)
    out = control_flow.fori_loop(0, _cf_steps(x), body, init)
    return out[3], out[12]


@functools.cache
def _temme_coefficients(k_terms: int, n_terms: int) -> tuple[tuple[float, ...], ...]:
    """d[k][n], the coefficients of C_k(eta) = sum_n d[k][n] eta^n in Temme's expansion.

    Exact rationals: mu = x / a - 1 as a series in eta (eta^2 / 2 = mu - log(1 + mu)) from the
    differential equation mu mu' = eta (1 + mu); C_0 = 1 / mu - 1 / eta; and C_k = C_{k-1}' / eta
    + c_k / mu, where c_k cancels the pole at eta = 0.
    """
    m = [Fraction(0), Fraction(1)]
    for n in range(2, n_terms + 2 * k_terms + 3):
        acc = m[n - 1] - sum((m[i] * (n + 1 - i) * m[n + 1 - i] for i in range(2, n)), Fraction(0))
        m.append(acc / (n + 1))
    inv = [Fraction(1)]  # eta / mu
    for n in range(1, len(m) - 1):
        inv.append(-sum((m[j + 1] * inv[n - j] for j in range(1, n + 1)), Fraction(0)))
    rows = [inv[1:]]
    for _ in range(1, k_terms):
        prev = rows[-1]
        rows.append([(n + 2) * prev[n + 2] - prev[1] * inv[n + 1] for n in range(len(prev) - 2)])
    return tuple(tuple(float(t) for t in row[:n_terms]) for row in rows)


def stirling_remainder(x: Any, terms: int) -> Any:
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) ~ 1/(12x) - 1/(360x^3) + 1/(1260x^5)
    - 1/(1680x^7) + 1/(1188x^9), Stirling's series to `terms` terms (for large x)."""
    coefs = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)[:terms]
    t = lax.div(_c(1.0, x), lax.mul(x, x))
    poly = _c(coefs[-1], x)
    for coef in reversed(coefs[:-1]):
        poly = lax.add(_c(coef, x), lax.mul(t, poly))
    return lax.div(poly, x)


def _temme_region(a: Any, x: Any) -> Any:
    """Where the uniform expansion is used: a > 20 and x within 0.3 a of a, where the series and
    the continued fraction would need O(sqrt(a)) terms; outside it they converge in a few
    dozen."""
    near = lax.lt(lax.abs(lax.div(lax.sub(x, a), a)), _c(0.3, a))
    return lax.bitwise_and(lax.gt(a, _c(20.0, a)), near)


def _log1pmx(a: Any, x: Any) -> tuple[Any, Any, Any]:
    """mu = x / a - 1, mu - log(1 + mu) >= 0, and g with mu - log(1 + mu) = mu^2 g for
    |mu| < 0.3 (smooth through mu = 0, where the expansion's eta = mu sqrt(2 g))."""
    two = _c(2.0, a)
    mu = lax.div(lax.sub(x, a), a)
    # near 0: mu - log(1 + mu) = t mu - 2 (t^3 / 3 + t^5 / 5 + ...), t = mu / (2 + mu) (|t| <
    # 0.18), so g = 1 / (2 + mu) - 2 t (1 / 3 + t^2 / 5 + ...) / (2 + mu)^2
    t = lax.div(mu, lax.add(two, mu))
    t2 = lax.mul(t, t)
    odd = _c(0.0, a)
    for j in reversed(range(1, 12 if core.get_aval(a).dtype.bits == 64 else 6)):
        odd = lax.add(lax.mul(odd, t2), _c(1.0 / (2 * j + 1), a))
    inv = lax.div(_c(1.0, a), lax.add(two, mu))
    g = lax.sub(inv, lax.mul(lax.mul(two, lax.mul(t, odd)), lax.mul(inv, inv)))
    near = lax.lt(lax.abs(mu), _c(0.3, a))
    far = lax.sub(mu, lax.sub(lax.log(x), lax.log(a)))
    return mu, lax.select(near, lax.mul(lax.mul(mu, mu), g), far), g


def _igamma_temme(a: Any, x: Any) -> tuple[Any, Any]:
    """P(a, x) and Q(a, x) by Temme's uniform asymptotic expansion for large a:
    Q = erfc(eta sqrt(a / 2)) / 2 + R, P = erfc(-eta sqrt(a / 2)) / 2 - R, with
    R = exp(-a eta^2 / 2) / sqrt(2 pi a) sum_k C_k(eta) / a^k (DLMF 8.12.3-8.12.8)."""
    wide = core.get_aval(a).dtype.bits == 64
    d = _temme_coefficients(*((14, 20) if wide else (6, 10)))
    one, two = _c(1.0, a), _c(2.0, a)
    mu, half_eta2, g = _log1pmx(a, x)
    eta = lax.mul(mu, lax.sqrt(lax.mul(two, g)))
    inv_a = lax.div(one, a)
    total = _c(0.0, a)
    for row in reversed(d):
        ck = _c(0.0, a)
        for coef in reversed(row):
            ck = lax.add(lax.mul(ck, eta), _c(coef, a))
        total = lax.add(lax.mul(total, inv_a), ck)
    scale = lax.div(
        lax.exp(lax.neg(lax.mul(a, half_eta2))),
        lax.mul(_c(math.sqrt(2 * math.pi), a), lax.sqrt(a)),
    )
    r = lax.mul(scale, total)
    arg = lax.mul(eta, lax.sqrt(lax.mul(_c(0.5, a), a)))
    half = _c(0.5, a)
    q = lax.add(lax.mul(half, lax.erfc(arg)), r)
    p = lax.sub(lax.mul(half, lax.erfc(lax.neg(arg))), r)
    return p, q


def _log_ax(a: Any, x: Any) -> tuple[Any, Any]:
    """log(x^a e^-x / Gamma(a)), and whether its exp underflows.

    Past a = 20 it is -a (mu - log(1 + mu)) + log(a / 2 pi) / 2 - (Stirling's series of
    lgamma(a)'s remainder), mu = x / a - 1: a log x - x - lgamma(a) cancels to nothing there
    (lgamma(1e6) = 1.3e7 leaves no float32 digit of a result near -1).
    """
    direct = lax.sub(lax.sub(lax.mul(a, lax.log(x)), x), lax.lgamma(a))
    _, pmx, _ = _log1pmx(a, x)
    stirling = lax.sub(
        lax.sub(lax.mul(_c(0.5, a), lax.log(lax.div(a, _c(2 * math.pi, a)))), lax.mul(a, pmx)),
        stirling_remainder(a, 5),
    )
    large = lax.bitwise_and(lax.gt(a, _c(20.0, a)), lax.lt(a, _c(math.inf, a)))
    out = lax.select(large, stirling, direct)
    return out, lax.lt(out, _c(-math.log(_fmax(x)), x))


def _domain(a: Any, x: Any) -> Any:
    zero = _c(0.0, a)
    both_zero = lax.bitwise_and(lax.eq(a, zero), lax.eq(x, zero))
    return _any_of(lax.lt(x, zero), lax.lt(a, zero), both_zero, _isnan(a), _isnan(x))


@_upcast
def _igamma_value(a: Any, x: Any) -> Any:
    one, zero = _c(1.0, a), _c(0.0, a)
    use_cf = lax.bitwise_and(lax.ge(x, one), lax.gt(x, a))
    log_ax, underflow = _log_ax(a, x)
    ax = lax.exp(log_ax)
    series = lax.div(lax.mul(_igamma_series(a, x, False)[0], ax), a)
    cf = lax.mul(_igammac_cf(a, x, False)[0], ax)
    out = lax.select(use_cf, lax.sub(one, cf), series)
    # an underflowing x^a e^-x / Gamma(a) leaves the series at its first term, ax / a (NaN for
    # a = 0 and 0 < x < 1, as XLA)
    out = lax.select(underflow, lax.select(use_cf, one, lax.div(ax, a)), out)
    out = lax.select(_temme_region(a, x), _igamma_temme(a, x)[0], out)
    out = lax.select(lax.eq(x, zero), zero, out)
    out = lax.select(lax.eq(x, _c(math.inf, x)), one, out)
    return lax.select(_domain(a, x), _c(math.nan, a), out)


@_upcast
def _igammac_value(a: Any, x: Any) -> Any:
    one, zero = _c(1.0, a), _c(0.0, a)
    use_series = lax.bitwise_or(lax.lt(x, one), lax.lt(x, a))
    log_ax, underflow = _log_ax(a, x)
    ax = lax.exp(log_ax)
    series = lax.div(lax.mul(_igamma_series(a, x, False)[0], ax), a)
    cf = lax.mul(_igammac_cf(a, x, False)[0], ax)
    out = lax.select(use_series, lax.sub(one, series), cf)
    out = lax.select(underflow, lax.select(use_series, one, zero), out)
    out = lax.select(_temme_region(a, x), _igamma_temme(a, x)[1], out)
    out = lax.select(lax.bitwise_or(lax.eq(x, _c(math.inf, x)), lax.eq(a, zero)), zero, out)
    return lax.select(_domain(a, x), _c(math.nan, a), out)


def _igamma_deriv(a: Any, x: Any, sample: bool) -> Any:
    """d igamma / da (sample=False) or the derivative of a Gamma(a) sample x in a."""
    one, zero = _c(1.0, a), _c(0.0, a)
    use_cf = lax.bitwise_and(lax.gt(x, one), lax.gt(x, a))
    log_ax, underflow = _log_ax(a, x)
    ax = lax.exp(log_ax)
    log_x = lax.log(x)
    ans, dans = _igamma_series(a, x, True)
    dlog = lax.sub(log_x, lax.digamma(lax.add(a, one)))
    inner = lax.add(lax.mul(ans, dlog), dans)
    if sample:
        series = lax.div(lax.mul(lax.neg(inner), x), a)
    else:
        series = lax.div(lax.mul(ax, inner), a)
    ans, dans = _igammac_cf(a, x, True)
    inner = lax.add(lax.mul(ans, lax.sub(log_x, lax.digamma(a))), dans)
    cf = lax.mul(inner, x) if sample else lax.neg(lax.mul(ax, inner))
    out = lax.select(use_cf, cf, series)
    if not sample:
        out = lax.select(underflow, zero, out)
    out = lax.select(*_igamma_temme_deriv(a, x, sample), out)
    out = lax.select(lax.eq(x, zero), zero, out)
    bad = _any_of(lax.lt(x, zero), lax.le(a, zero), _isnan(a), _isnan(x))
    return lax.select(bad, _c(math.nan, a), out)


def _igamma_temme_deriv(a: Any, x: Any, sample: bool) -> tuple[Any, Any]:
    """Where Temme's expansion serves (a sample's derivative: while x^a e^-x / Gamma(a) does not
    underflow), and there dP/da (or -dP/da / dP/dx), the expansion differentiated in a."""
    region = _temme_region(a, x)
    hundred = _c(100.0, a)
    a_t, x_t = lax.select(region, a, hundred), lax.select(region, x, hundred)
    _, (dpda,) = ad.jvp_flat(lambda a_: [_igamma_temme(a_, x_t)[0]], [a_t], [_c(1.0, a)])
    if not sample:
        return region, dpda
    log_ax, _ = _log_ax(a_t, x_t)
    region = lax.bitwise_and(region, lax.gt(log_ax, _c(-60.0, a)))
    return region, lax.div(lax.mul(lax.neg(dpda), x_t), lax.exp(log_ax))


def _igamma_dx(a: Any, x: Any) -> Any:
    one = _c(1.0, a)
    return lax.exp(
        lax.sub(lax.add(lax.neg(x), lax.mul(lax.sub(a, one), lax.log(x))), lax.lgamma(a))
    )


@custom_jvp
def _igamma(a: Any, x: Any) -> Any:
    return _igamma_value(a, x)


@custom_jvp
def _igammac(a: Any, x: Any) -> Any:
    return _igammac_value(a, x)


_igamma.defjvps(
    lambda t, _, a, x: lax.mul(t, igamma_grad_a(a, x)),
    lambda t, _, a, x: lax.mul(t, _igamma_dx(a, x)),
)
_igammac.defjvps(
    lambda t, _, a, x: lax.neg(lax.mul(t, igamma_grad_a(a, x))),
    lambda t, _, a, x: lax.neg(lax.mul(t, _igamma_dx(a, x))),
)


@eager_jit
def _igamma_jit(a: Any, x: Any) -> Any:
    return _igamma(a, x)


@eager_jit
def _igammac_jit(a: Any, x: Any) -> Any:
    return _igammac(a, x)


@eager_jit
def _igamma_grad_a_jit(a: Any, x: Any) -> Any:
    return _upcast(lambda a_, x_: _igamma_deriv(a_, x_, False))(a, x)


@eager_jit
def _random_gamma_grad_jit(a: Any, x: Any) -> Any:
    return _upcast(lambda a_, x_: _igamma_deriv(a_, x_, True))(a, x)


def igamma(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma function P(a, x)."""
    return _call(_igamma_jit, "igamma", a, x)


def igammac(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _call(_igammac_jit, "igammac", a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """d/da of igamma(a, x)."""
    return _call(_igamma_grad_a_jit, "igamma_grad_a", a, x)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative in `a` of a Gamma(a, 1) sample `x` (implicit reparameterization)."""
    return _call(_random_gamma_grad_jit, "random_gamma_grad", a, x)


# ---- incomplete beta ----------------------------------------------------------------------------
@_upcast
def _betainc_value(a: Any, b: Any, x: Any) -> Any:
    eps = _eps(x)
    one, zero, two = _c(1.0, a), _c(0.0, a), _c(2.0, a)
    inf = _c(math.inf, a)
    a_zero = lax.bitwise_or(lax.eq(a, zero), lax.eq(b, inf))
    b_zero = lax.bitwise_or(lax.eq(b, zero), lax.eq(a, inf))
    x_zero, x_one = lax.eq(x, zero), lax.eq(x, one)
    is_zero = lax.bitwise_or(
        lax.bitwise_and(b_zero, lax.bitwise_not(x_one)), lax.bitwise_and(a_zero, x_zero)
    )
    is_one = lax.bitwise_or(
        lax.bitwise_and(a_zero, lax.bitwise_not(x_zero)), lax.bitwise_and(b_zero, x_one)
    )
    is_nan = _any_of(
        lax.lt(a, zero),
        lax.lt(b, zero),
        lax.lt(x, zero),
        lax.gt(x, one),
        lax.bitwise_and(a_zero, b_zero),
        _isnan(a),
        _isnan(b),
        _isnan(x),
    )
    # the fraction converges fast for x < (a + 1) / (a + b + 2); otherwise use I_x(a, b) =
    # 1 - I_(1-x)(b, a)
    direct = lax.lt(x, lax.div(lax.add(a, one), lax.add(lax.add(a, b), two)))
    a, b = lax.select(direct, a, b), lax.select(direct, b, a)
    x = lax.select(direct, x, lax.sub(one, x))
    tiny = _c(eps / 2, a)
    n_steps = 200 if core.get_aval(a).dtype.bits == 64 else 80
    guard = lambda v: lax.select(lax.lt(lax.abs(v), tiny), tiny, v)

    def body(i: Any, s: Any) -> Any:
        c, d, h = s
        fi = lax.convert_element_type(i, core.get_aval(a).dtype)
        m = lax.floor(lax.div(lax.sub(fi, one), two))
        a2m = lax.add(a, lax.mul(two, m))
        even_num = lax.div(
            lax.neg(lax.mul(lax.mul(lax.add(a, m), lax.add(lax.add(a, b), m)), x)),
            lax.mul(a2m, lax.add(a2m, one)),
        )
        first_even = lax.div(lax.neg(lax.mul(lax.add(a, b), x)), lax.add(a, one))
        even_num = lax.select(lax.eq(m, zero), first_even, even_num)
        odd_num = lax.div(lax.mul(lax.mul(m, lax.sub(b, m)), x), lax.mul(lax.sub(a2m, one), a2m))
        is_even = lax.eq(
            lax.rem(i, lax.full((), 2, core.get_aval(i).dtype)),
            lax.full((), 0, core.get_aval(i).dtype),
        )
        num = lax.select(lax.broadcast(is_even, core.get_aval(a).shape), even_num, odd_num)
        num = lax.select(
            lax.broadcast(
                lax.eq(i, lax.full((), 1, core.get_aval(i).dtype)), core.get_aval(a).shape
            ),
            one,
            num,
        )
        c = guard(lax.add(one, lax.div(num, c)))
        d = lax.div(one, guard(lax.add(one, lax.mul(num, d))))
        return c, d, lax.mul(h, lax.mul(c, d))

    _, _, frac = control_flow.fori_loop(1, n_steps, body, (tiny, zero, tiny))
    very_small = _c(2.0 ** (-1022 if core.get_aval(a).dtype.bits == 64 else -126) * 2, a)
    lbeta_small_a = lax.sub(lax.lgamma(b), lax.lgamma(lax.add(a, b)))
    lbeta = lax.add(lax.lgamma(a), lbeta_small_a)
    log1m_x = lax.log1p(lax.neg(x))
    factor = lax.select(
        lax.lt(a, very_small),
        lax.exp(lax.sub(lax.mul(log1m_x, b), lbeta_small_a)),
        lax.div(lax.exp(lax.sub(lax.add(lax.mul(lax.log(x), a), lax.mul(log1m_x, b)), lbeta)), a),
    )
    out = lax.mul(frac, factor)
    out = lax.select(direct, out, lax.sub(one, out))
    out = lax.select(is_zero, zero, out)
    out = lax.select(is_one, one, out)
    return lax.select(is_nan, _c(math.nan, a), out)


def _betainc_no_ab(t: Any, _: Any, *args: Any) -> Any:
    if _nonzero_tangent(t):
        raise ValueError("Betainc gradient with respect to a and b not supported.")
    return lax.mul(t, _c(0.0, t))


def _betainc_dx(t: Any, _: Any, a: Any, b: Any, x: Any) -> Any:
    one = _c(1.0, a)
    lbeta = lax.sub(lax.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(lax.add(a, b)))
    d = lax.exp(
        lax.sub(
            lax.add(
                lax.mul(lax.sub(b, one), lax.log1p(lax.neg(x))),
                lax.mul(lax.sub(a, one), lax.log(x)),
            ),
            lbeta,
        )
    )
    return lax.mul(t, d)


@custom_jvp
def _betainc(a: Any, b: Any, x: Any) -> Any:
    return _betainc_value(a, b, x)


_betainc.defjvps(_betainc_no_ab, _betainc_no_ab, _betainc_dx)


@eager_jit
def _betainc_jit(a: Any, b: Any, x: Any) -> Any:
    return _betainc(a, b, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta function I_x(a, b)."""
    return _call(_betainc_jit, "betainc", a, b, x)


# ---- Hurwitz zeta and polygamma -----------------------------------------------------------------
def _bernoulli(n: int) -> Fraction:
    """B_n (B_1 = -1/2) by the Akiyama-Tanigawa algorithm."""
    row = [Fraction(0)] * (n + 1)
    for m in range(n + 1):
        row[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
    return row[0] if n != 1 else Fraction(-1, 2)


# (2j)! / B_2j for j = 1..12: the Euler-Maclaurin correction terms' denominators
_EM_DENOMS = tuple(float(math.factorial(2 * j) / _bernoulli(2 * j)) for j in range(1, 13))
_ZETA_TERMS = 9  # direct terms before the Euler-Maclaurin tail (at least; more for q < 0)
_ZETA_EXTRA = 16  # extra direct terms so that q down to -16 reaches q + n > 9


@_upcast
def _zeta_series(x: Any, q: Any) -> Any:
    """The Euler-Maclaurin expression itself, with no domain masks (JAX's derivatives are
    this expression's, so the analytic continuation even where the value is NaN)."""
    one, zero = _c(1.0, x), _c(0.0, x)
    dt = core.get_aval(x).dtype
    # the last direct term is at w = q + n with n >= 9 and q + n > 9
    n = lax.max(_c(float(_ZETA_TERMS), q), lax.add(lax.floor(lax.sub(_c(9.0, q), q)), one))
    n = lax.min(n, _c(float(_ZETA_TERMS + _ZETA_EXTRA), q))
    neg_x = lax.neg(x)

    def term(k: int) -> Any:
        return lax.pow(lax.add(q, _c(float(k), q)), neg_x)

    s = term(0)
    for k in range(1, _ZETA_TERMS + 1):
        s = lax.add(s, term(k))

    def extra(k: Any, s: Any) -> Any:
        fk = lax.convert_element_type(k, dt)
        t = lax.pow(lax.add(q, lax.broadcast(fk, core.get_aval(q).shape)), neg_x)
        return lax.add(s, lax.select(lax.le(lax.broadcast(fk, core.get_aval(n).shape), n), t, zero))

    s = control_flow.fori_loop(_ZETA_TERMS + 1, _ZETA_TERMS + _ZETA_EXTRA + 1, extra, s)
    w = lax.add(q, n)
    b = lax.pow(w, neg_x)
    s = lax.sub(lax.add(s, lax.div(lax.mul(b, w), lax.sub(x, one))), lax.mul(_c(0.5, x), b))
    # sum_j B_2j / (2j)! x (x + 1) ... (x + 2j - 2) w^(-x - 2j + 1), the products built up
    # incrementally so they never overflow
    inv_w = lax.div(one, w)
    ab = lax.mul(lax.mul(b, x), inv_w)  # x * w^(-x-1)
    step = 0.0
    for j, den in enumerate(_EM_DENOMS):
        if j:
            ab = lax.mul(lax.mul(ab, lax.add(x, _c(step, x))), inv_w)
            step += 1.0
            ab = lax.mul(lax.mul(ab, lax.add(x, _c(step, x))), inv_w)
        s = lax.add(s, lax.div(ab, _c(den, x)))
        step += 1.0
    huge_q = lax.gt(q, _c(1e8, q))
    # the branch not taken gets a safe x: its derivative at the pole x = 1 would be inf, and
    # the zero cotangent a select sends there would make 0 * inf = NaN in reverse mode
    xq = lax.select(huge_q, x, _c(2.0, x))
    big_q = lax.mul(
        lax.add(lax.div(one, lax.sub(xq, one)), lax.div(one, lax.mul(_c(2.0, q), q))),
        lax.pow(q, lax.sub(one, xq)),
    )
    return lax.select(huge_q, big_q, s)


@_upcast
def _zeta_value(x: Any, q: Any) -> Any:
    one, zero = _c(1.0, x), _c(0.0, x)
    out = _zeta_series(x, q)
    nan, inf = _c(math.nan, x), _c(math.inf, x)
    # as XLA: NaN for q = NaN or +inf and x = +inf (its sum meets 0 * inf), then for x < 1, then
    # for q <= 0 with x not an integer; a pole at integer q <= 0 is +inf only for even x; x = 1 is
    # the harmonic series (+inf) whatever q is
    out = lax.select(
        _any_of(_isnan(q), lax.eq(q, inf), lax.eq(x, inf), _xla_zeta_nan(x, q)), nan, out
    )
    out = lax.select(lax.lt(x, one), nan, out)
    x_int = lax.eq(x, lax.floor(x))
    q_le_0 = lax.le(q, zero)
    out = lax.select(lax.bitwise_and(q_le_0, lax.bitwise_not(x_int)), nan, out)
    x_even = lax.bitwise_and(x_int, lax.eq(lax.rem(x, _c(2.0, x)), zero))
    at_pole = lax.bitwise_and(q_le_0, lax.eq(q, lax.floor(q)))
    out = lax.select(at_pole, lax.select(x_even, inf, nan), out)
    return lax.select(lax.eq(x, one), inf, out)


def _xla_zeta_nan(x: Any, q: Any) -> Any:
    """Where XLA's zeta is NaN for huge x: its Euler-Maclaurin tail, a Horner sum of about
    (x / a)^22 B_22 / 22! with a = q + 10, overflows while a^-x underflows (0 * inf)."""
    a = lax.add(q, _c(10.0, q))
    log_fmax = math.log(_fmax(x))
    log_tail = lax.sub(lax.mul(_c(22.0, x), lax.sub(lax.log(x), lax.log(a))), _c(43.4, x))
    overflow = _any_of(lax.gt(log_tail, _c(log_fmax, x)), lax.gt(x, _c(math.exp(log_fmax / 2), x)))
    underflow = lax.eq(lax.pow(a, lax.neg(x)), _c(0.0, x))
    return lax.bitwise_and(overflow, underflow)


def _zeta_dx(t: Any, _: Any, x: Any, q: Any) -> Any:
    if _nonzero_tangent(t):
        raise NotImplementedError("zeta gradient with respect to x is not implemented")
    return lax.mul(t, _c(0.0, t))


@custom_jvp
def _zeta(x: Any, q: Any) -> Any:
    return _zeta_value(x, q)


_zeta.defjvps(
    _zeta_dx,
    lambda t, _, x, q: lax.mul(t, lax.neg(lax.mul(x, _zeta(lax.add(x, _c(1.0, x)), q)))),
)


@eager_jit
def _zeta_jit(x: Any, q: Any) -> Any:
    return _zeta(x, q)


def zeta(x: Any, q: Any) -> Any:
    """Hurwitz zeta function sum_n (n + q)^-x."""
    return _call(_zeta_jit, "zeta", x, q)


def _polygamma_value(m: Any, x: Any) -> Any:
    one, zero = _c(1.0, x), _c(0.0, x)
    m1 = lax.add(m, one)
    sign = lax.select(lax.eq(lax.rem(m, _c(2.0, m)), zero), _c(-1.0, x), one)
    safe_m1 = lax.select(lax.ge(m, one), m1, _c(2.0, m))
    rest = lax.mul(lax.mul(sign, lax.exp(lax.lgamma(safe_m1))), _zeta(safe_m1, x))
    out = lax.select(lax.eq(m, zero), lax.digamma(x), rest)
    bad = lax.bitwise_or(lax.ne(m, lax.floor(m)), lax.lt(m, zero))
    return lax.select(bad, _c(math.nan, x), out)


def _polygamma_dm(t: Any, _: Any, m: Any, x: Any) -> Any:
    if _nonzero_tangent(t):
        raise ValueError("polygamma gradient with respect to m is not supported")
    return lax.mul(t, _c(0.0, t))


@custom_jvp
def _polygamma(m: Any, x: Any) -> Any:
    return _upcast(_polygamma_value)(m, x)


_polygamma.defjvps(
    _polygamma_dm, lambda t, _, m, x: lax.mul(t, _polygamma(lax.add(m, _c(1.0, m)), x))
)


@eager_jit
def _polygamma_jit(m: Any, x: Any) -> Any:
    return _polygamma(m, x)


def polygamma(m: Any, x: Any) -> Any:
    """The m-th derivative of digamma (m a non-negative integer value; NaN otherwise)."""
    return _call(_polygamma_jit, "polygamma", m, x)


# ---- exponentially scaled Bessel functions ------------------------------------------------------
def _chebyshev(t: Any, coeffs: tuple[float, ...]) -> Any:
    """sum_k c_k T_k(t) by Clenshaw's recurrence."""
    two_t = lax.add(t, t)
    b1 = b2 = _c(0.0, t)
    for c in reversed(coeffs[1:]):
        b1, b2 = lax.add(lax.sub(lax.mul(two_t, b1), b2), _c(c, t)), b1
    return lax.add(lax.sub(lax.mul(t, b1), b2), _c(coeffs[0], t))


def _trim(coeffs: tuple[float, ...], x: Any) -> tuple[float, ...]:
    """Drop trailing coefficients below the dtype's resolution."""
    tol = 1e-18 if core.get_aval(x).dtype.bits == 64 else 1e-9
    n = len(coeffs)
    while n > 1 and abs(coeffs[n - 1]) < tol:
        n -= 1
    return coeffs[:n]


@_upcast
def _i0e_value(x: Any) -> Any:
    ax = lax.abs(x)
    eight = _c(8.0, x)
    small_t = lax.sub(lax.mul(lax.min(ax, eight), _c(0.25, x)), _c(1.0, x))
    safe = lax.max(ax, eight)
    large_t = lax.sub(lax.div(_c(16.0, x), safe), _c(1.0, x))
    small = _chebyshev(small_t, _trim(_I0E_SMALL, x))
    large = lax.div(_chebyshev(large_t, _trim(_I0E_LARGE, x)), lax.sqrt(safe))
    return lax.select(lax.le(ax, eight), small, large)


@_upcast
def _i1e_value(x: Any) -> Any:
    ax = lax.abs(x)
    eight = _c(8.0, x)
    small_t = lax.sub(lax.mul(lax.min(ax, eight), _c(0.25, x)), _c(1.0, x))
    safe = lax.max(ax, eight)
    large_t = lax.sub(lax.div(_c(16.0, x), safe), _c(1.0, x))
    small = lax.mul(_chebyshev(small_t, _trim(_I1E_SMALL, x)), x)
    large = lax.div(_chebyshev(large_t, _trim(_I1E_LARGE, x)), lax.sqrt(safe))
    large = lax.mul(lax.sign(x), large)
    return lax.select(lax.le(ax, eight), small, large)


@custom_jvp
def _i0e(x: Any) -> Any:
    return _i0e_value(x)


@custom_jvp
def _i1e(x: Any) -> Any:
    return _i1e_value(x)


def _i1e_dx(t: Any, y: Any, x: Any) -> Any:
    eps = _eps(x)
    not_tiny = lax.gt(lax.abs(x), _c(eps, x))
    safe = lax.select(not_tiny, x, _c(eps, x))
    d = lax.sub(_i0e(safe), lax.mul(y, lax.add(lax.sign(safe), lax.div(_c(1.0, x), safe))))
    return lax.mul(t, lax.select(not_tiny, d, _c(0.5, x)))


_i0e.defjvps(lambda t, y, x: lax.mul(t, lax.sub(_i1e(x), lax.mul(lax.sign(x), y))))
_i1e.defjvps(_i1e_dx)


@eager_jit
def _i0e_jit(x: Any) -> Any:
    return _i0e(x)


@eager_jit
def _i1e_jit(x: Any) -> Any:
    return _i1e(x)


def bessel_i0e(x: Any) -> Any:
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0."""
    return _call(_i0e_jit, "bessel_i0e", x)


def bessel_i1e(x: Any) -> Any:
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1."""
    return _call(_i1e_jit, "bessel_i1e", x)


lgamma = lax.lgamma
digamma = lax.digamma

# Chebyshev coefficients (fitted for webjax in long double, see the module docstring):
# i0e(x) = sum c_k T_k(x/4 - 1) and i1e(x) = x sum c_k T_k(x/4 - 1) on [0, 8];
# sqrt(x) i0e(x), sqrt(x) i1e(x) = sum c_k T_k(16/x - 1) on [8, inf).
_I0E_SMALL = (
    0.33839763720473803,
    -0.30468267234319835,
    0.1716209015222087,
    -0.09490109704804757,
    0.04930528423967063,
    -0.02373741480589939,
    0.01054646039459492,
    -0.004324309995050496,
    0.0016394756169412553,
    -0.000576375574538501,
    0.0001885028850957594,
    -5.754195010073797e-05,
    1.6448448070644907e-05,
    -4.416738358373858e-06,
    1.1173875390339816e-06,
    -2.6707938530644506e-07,
    6.046995013643305e-08,
    -1.3000250009535306e-08,
    2.6598236325560277e-09,
    -5.189794663036496e-10,
    9.675799429216967e-11,
    -1.7268164987008133e-11,
    2.9549525149422155e-12,
    -4.855418891121472e-13,
    7.665599850882178e-14,
    -1.1576949102131388e-14,
    1.6036359560669477e-15,
    -1.2749656754202386e-16,
    -8.651325809354916e-17,
)
_I0E_LARGE = (
    0.4022452055070544,
    0.0033691164782557238,
    6.889758346913842e-05,
    2.8913705208648255e-06,
    2.0489185891650433e-07,
    2.2666689935728954e-08,
    3.396231994521378e-09,
    4.940602703730826e-10,
    1.1889115111244491e-11,
    -3.149913272923466e-11,
    -1.3215844889800932e-11,
    -1.7941449519630338e-12,
    7.179783200264578e-13,
    3.8531278861997367e-13,
    1.5365215610269046e-14,
    -4.1469275929850724e-14,
    -9.592141534189857e-15,
    3.849821936935393e-15,
    1.7334527910306542e-15,
    -3.0217798749343493e-16,
    -3.2411844475693787e-16,
    7.692739674436399e-17,
    1.161722627818218e-18,
    4.0937034578164554e-17,
    -5.547672781228141e-17,
)
_I1E_SMALL = (
    0.12629359322181682,
    -0.17641651835783403,
    0.10264365868984707,
    -0.052945981208094954,
    0.024726449030626478,
    -0.01056408489462616,
    0.004156422944312848,
    -0.0015135724506312133,
    0.0005122859561685355,
    -0.00016176081582585609,
    4.781565107545942e-05,
    -1.3273163655997889e-05,
    3.4702513080956665e-06,
    -8.568720264270936e-07,
    2.0032947531216745e-07,
    -4.445059124416424e-08,
    9.381537342003967e-09,
    -1.887249706560416e-09,
    3.625589821069596e-10,
    -6.663485030869718e-11,
    1.1736138274055677e-11,
    -1.983925442360856e-12,
    3.2232925694562045e-13,
    -5.0370456167241204e-14,
    7.547765954805318e-15,
    -1.0514158053238382e-15,
    9.949611178054045e-17,
    3.666425924239235e-17,
    -5.689117235856373e-17,
)
_I1E_LARGE = (
    0.38928811750914005,
    -0.00976109749136144,
    -0.00011058893876265357,
    -3.8825648088475735e-06,
    -2.512236238174162e-07,
    -2.63146884381415e-08,
    -3.835380417086931e-09,
    -5.589743147082355e-10,
    -1.8974990068781895e-11,
    3.2526068340435475e-11,
    1.4125774391339496e-11,
    2.0356621249773e-12,
    -7.198893282704677e-13,
    -4.083201702101413e-13,
    -2.1051049358539187e-14,
    4.276083176782408e-14,
    1.0382975946035545e-14,
    -3.776246893308355e-15,
    -1.9194812839878894e-15,
    3.7118637156996483e-16,
    2.54996219452297e-16,
    1.037418848742755e-17,
    -9.043330320701593e-17,
    4.971717482149529e-17,
    -3.829957726832201e-17,
)
