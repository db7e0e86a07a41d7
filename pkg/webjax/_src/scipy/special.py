"""`jax.scipy.special` written on lax, with JAX's formulas, edge cases and weak types: the error
function and the normal distribution, the gamma and beta family (incomplete ones included),
logit/expit, x log y and entropies, Bessel i0/i1, zeta and polygamma, the softmax family,
Box-Cox, Bernoulli numbers, exponential integrals and spherical harmonics.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from .. import config as _config
from .. import core, dtypes
from ..custom_derivatives import custom_jvp
from ..jit import eager_jit
from ..lax import control_flow, lax
from ..lax import special as lsp
from ..nn import functions as nn
from ..nn.functions import logsumexp
from ..numpy import creation, util
from ..numpy import ufuncs as u
from ..transformations import jvp
from .bessel import bessel_jn
from .special_integrals import (
    dawsn,
    faddeeva,
    fresnel,
    hyp1f1,
    hyp2f1,
    owens_t,
    sici,
    spence,
    wofz,
)


# ---- helpers -------------------------------------------------------------------------------------
def _float(x: Any) -> Any:
    x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
    a = util.aval(x)
    if a.dtype.kind != "f":
        x = util.convert(x, dtypes.to_inexact(a.dtype), a.weak_type)
    return x


def _inexact(name: str, *args: Any) -> list[Any]:
    return u._promote_inexact(name, *args)


def _inexact_real(name: str, *args: Any) -> list[Any]:
    """`_inexact` for JAX's real-only functions, with JAX's order of errors: its
    promote_args_inexact broadcasts operands of different ranks first (ValueError for
    incompatible shapes), then the function rejects complex dtypes (ValueError), and only then
    do lax ops see same-rank mismatches (TypeError, from `_inexact` here)."""
    util.check_arraylike(name, *args)
    shapes = [util.aval(a if util.is_scalar(a) else util.ensure_array(a)).shape for a in args]
    if len({len(s) for s in shapes if s}) > 1:
        if _config.numpy_rank_promotion.value == "raise":
            util._rank_promotion(name, shapes)
        util.broadcast_shapes(*shapes)
    if util.result_type(*args)[0].kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return _inexact(name, *args)


def _c(v: float, like: Any) -> Any:
    return util.lax_const(v, like)


def _full(v: complex, like: Any) -> Any:
    av = util.aval(like)
    return lax.full(av.shape, v, av.dtype, weak_type=av.weak_type)


def _with_weak(out: Any, weak: bool) -> Any:
    """`out` with the given weak type (JAX's results here are weak exactly when stated)."""
    av = util.aval(out)
    return out if av.weak_type == weak else lax.convert_element_type(out, av.dtype, weak_type=weak)


# ---- error function and the normal distribution --------------------------------------------------
def erf(x: Any) -> Any:
    return lax.erf(_float(x))


def erfc(x: Any) -> Any:
    return lax.erfc(_float(x))


def erfinv(x: Any) -> Any:
    return lax.erf_inv(_float(x))


def _erfcx_asymptotic(x: Any, nterms: int) -> Any:
    """erfcx(x) ~ sum_k (-1)^k (2k - 1)!! / (2 x^2)^k / (sqrt(pi) x)."""
    coeffs = [(-1) ** k * math.prod(range(1, 2 * k, 2)) / 2**k for k in range(nterms)]
    t = lax.div(_c(1.0, x), lax.mul(x, x))
    p = _full(coeffs[-1], x)
    for cf in reversed(coeffs[:-1]):
        p = lax.add(lax.mul(p, t), _c(cf, x))
    return lax.div(p, lax.mul(x, _c(math.sqrt(math.pi), x)))


def _erfcx_value(x: Any) -> Any:
    dt = util.aval(x).dtype
    if dt.bits < 32:
        return lax.convert_element_type(
            _erfcx_value(lax.convert_element_type(x, dtypes.float32)), dt
        )
    fmax = 1.7976931348623157e308 if dt.bits == 64 else 3.4028234663852886e38
    nterms = 9 if dt.bits == 64 else 5
    large = lax.gt(x, _c(math.sqrt(math.log(fmax)), x))
    safe = lax.select(large, _full(1.0, x), x)
    direct = lax.mul(lax.exp(lax.mul(safe, safe)), lax.erfc(safe))
    return lax.select(large, _erfcx_asymptotic(x, nterms), direct)


@custom_jvp
def _erfcx(x: Any) -> Any:
    return _erfcx_value(x)


_erfcx.defjvps(
    lambda t, ans, x: lax.mul(
        t, lax.sub(lax.mul(lax.mul(_c(2.0, x), x), ans), _c(2.0 / math.sqrt(math.pi), x))
    )
)


def erfcx(x: Any) -> Any:
    """exp(x^2) erfc(x), without overflow for large x; of complex x the Faddeeva function
    w(ix) (= exp(x^2) erfc(x) too), as JAX."""
    (x,) = _inexact("erfcx", x)
    if util.aval(x).dtype.kind == "c":
        return _with_weak(faddeeva(lax.complex(lax.neg(lax.imag(x)), lax.real(x))), False)
    return _with_weak(_erfcx(x), False)


def _ndtr_arg(x: Any, name: str = "ndtr") -> Any:
    """JAX's ndtr family take float32/float64 only (a Python float becomes a strong array)."""
    x = util.ensure_array(x)
    dt = util.aval(x).dtype
    if dt not in (dtypes.float32, dtypes.float64):
        extra = "" if name == "log_ndtr" else ", see docstring for supported types"
        raise TypeError(f"x.dtype={dt.name} is not supported{extra}.")
    return util.convert(x, dt, False)


def ndtr(x: Any) -> Any:
    x = _ndtr_arg(x)
    return lax.mul(_c(0.5, x), lax.erfc(lax.mul(x, _c(-1.0 / math.sqrt(2.0), x))))


def _log_ndtr_value(x: Any) -> Any:
    """log Phi(x) in three pieces: log1p(-Phi(-x)) above 5 (Phi near 1), log Phi(x) between,
    and below -5 log(1/2) - x^2/2 + log erfcx(-x / sqrt 2), with Phi(x) = erfc(-x / sqrt 2) / 2
    = e^(-x^2/2) erfcx(-x / sqrt 2) / 2, which never underflows."""
    lo, hi = _c(-5.0, x), _c(5.0, x)
    mid_x = lax.clamp(lo, x, hi)
    mid = lax.log(ndtr(mid_x))
    up_x = lax.max(x, hi)
    upper = lax.log1p(lax.neg(ndtr(lax.neg(up_x))))
    low_x = lax.min(x, lo)
    scaled = _erfcx_value(lax.mul(low_x, _c(-1.0 / math.sqrt(2.0), x)))
    lower = lax.add(
        lax.sub(_c(math.log(0.5), x), lax.mul(_c(0.5, x), lax.mul(low_x, low_x))), lax.log(scaled)
    )
    return lax.select(lax.lt(x, lo), lower, lax.select(lax.gt(x, hi), upper, mid))


@custom_jvp
def _log_ndtr(x: Any) -> Any:
    return _log_ndtr_value(x)


def _log_ndtr_jvp(t: Any, y: Any, x: Any) -> Any:
    """d/dx log Phi(x) = phi(x) / Phi(x): exp(log phi(x) - log Phi(x)), and below -5, where that
    difference cancels, sqrt(2 / pi) / erfcx(-x / sqrt 2)."""
    log_pdf = lax.sub(lax.mul(_c(-0.5, x), lax.mul(x, x)), _c(0.5 * math.log(2 * math.pi), x))
    direct = lax.exp(lax.sub(log_pdf, y))
    lo = _c(-5.0, x)
    scaled = _erfcx_value(lax.mul(lax.min(x, lo), _c(-1.0 / math.sqrt(2.0), x)))
    tail = lax.div(_c(math.sqrt(2.0 / math.pi), x), scaled)
    return lax.mul(t, lax.select(lax.lt(x, lo), tail, direct))


_log_ndtr.defjvps(_log_ndtr_jvp)


def log_ndtr(x: Any) -> Any:
    """log of the normal CDF, accurate in both tails (x = -100 gives about -5005.5)."""
    return _log_ndtr(_ndtr_arg(x, "log_ndtr"))


def _ndtri_value(p: Any) -> Any:
    """Phi^-1(p) from the lower tail q = min(p, 1 - p): sqrt(2) erfinv(2q - 1) (or, for tiny q,
    where 2q - 1 rounds to -1, the asymptotic -sqrt(t - log t - log 2 pi), t = -2 log q),
    refined by Newton steps on log Phi(x) = log q, which keep full relative accuracy in q."""
    one, half = _c(1.0, p), _c(0.5, p)
    upper = lax.gt(p, half)
    q = lax.select(upper, lax.sub(one, p), p)
    zero = _c(0.0, q)
    safe_q = lax.select(lax.gt(q, zero), q, _full(0.25, q))  # q == 0 gives -inf below
    log_q = lax.log(safe_q)
    central = lax.mul(_c(math.sqrt(2.0), q), lax.erf_inv(lax.sub(lax.add(safe_q, safe_q), one)))
    t = lax.mul(_c(-2.0, q), log_q)
    tail = lax.neg(lax.sqrt(lax.sub(lax.sub(t, lax.log(t)), _c(math.log(2 * math.pi), q))))
    x = lax.select(lax.lt(safe_q, _c(1e-5, q)), tail, central)
    tiny = lax.lt(safe_q, _c(0.02, q))  # where 2q - 1 loses digits: refine
    for _ in range(4):
        log_cdf = lax.log(lax.mul(half, lax.erfc(lax.mul(x, _c(-1.0 / math.sqrt(2.0), x)))))
        log_pdf = lax.sub(lax.mul(_c(-0.5, x), lax.mul(x, x)), _c(0.5 * math.log(2 * math.pi), x))
        step = lax.mul(lax.sub(log_cdf, log_q), lax.exp(lax.sub(log_cdf, log_pdf)))
        x = lax.select(tiny, lax.sub(x, step), x)
    x = lax.select(lax.eq(q, zero), _full(-math.inf, q), x)
    x = lax.select(upper, lax.neg(x), x)
    bad = lax.bitwise_or(lax.bitwise_or(lax.lt(p, zero), lax.gt(p, one)), lax.ne(p, p))
    return lax.select(bad, _full(math.nan, p), x)


@custom_jvp
def _ndtri(p: Any) -> Any:
    return _ndtri_value(p)


def _ndtri_jvp(t: Any, x: Any, p: Any) -> Any:
    """dx/dp = 1 / phi(x) = sqrt(2 pi) exp(x^2 / 2); 0 at p = 0 and 1 (infinite x), NaN outside
    [0, 1] (NaN x), as JAX."""
    d = lax.mul(_c(math.sqrt(2 * math.pi), x), lax.exp(lax.mul(_c(0.5, x), lax.mul(x, x))))
    infinite = lax.eq(lax.abs(x), _c(math.inf, x))
    return lax.mul(t, lax.select(infinite, _full(0.0, x), d))


_ndtri.defjvps(_ndtri_jvp)


def ndtri(p: Any) -> Any:
    """The inverse of the standard normal CDF (NaN outside [0, 1])."""
    return _ndtri(_ndtr_arg(p, "ndtri"))


# ---- gamma and beta family -----------------------------------------------------------------------
def gammaln(x: Any) -> Any:
    return lax.lgamma(_float(x))


def digamma(x: Any) -> Any:
    return lax.digamma(_float(x))


@eager_jit
def gammasgn(x: Any) -> Any:
    """The sign of the gamma function (NaN at poles and NaN, -1 at -0)."""
    (x,) = _inexact("gammasgn", x)
    fl = lax.floor(x)
    neg = lax.lt(x, _c(0.0, x))
    nan_case = lax.bitwise_or(lax.bitwise_and(neg, lax.eq(x, fl)), lax.ne(x, x))
    odd = lax.ne(lax.rem(fl, _c(2.0, x)), _c(0.0, x))
    minus = lax.bitwise_or(
        lax.bitwise_and(neg, odd), lax.bitwise_and(lax.eq(x, _c(0.0, x)), u.signbit(x))
    )
    out = lax.select(minus, _full(-1.0, x), _full(1.0, x))
    return _with_weak(lax.select(nan_case, _full(math.nan, x), out), False)


# Lanczos' approximation with g = 7 and 9 terms (C. Lanczos, SIAM J. Numer. Anal. B 1, 1964;
# the coefficients as GSL tabulates them), the one JAX uses for complex arguments:
# Gamma(z + 1) = sqrt(2 pi) t^(z + 1/2) e^-t A(z), t = z + g + 1/2, A(z) = c0 + sum c_k/(z + k).
_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7,
)  # fmt: skip


def _lanczos_loggamma(z: Any) -> Any:
    """Principal log Gamma(z) of complex z with Re z >= 1/2, by Lanczos' approximation."""
    w = lax.sub(z, _c(1.0, z))
    series = _c(_LANCZOS[0], z)
    for k, coef in enumerate(_LANCZOS[1:], 1):
        series = lax.add(series, lax.div(_c(coef, z), lax.add(w, _c(float(k), z))))
    t = lax.add(w, _c(_LANCZOS_G + 0.5, z))
    power = lax.mul(lax.add(w, _c(0.5, z)), lax.log(t))
    head = lax.add(_c(0.5 * math.log(2 * math.pi), z), power)
    return lax.add(lax.sub(head, t), lax.log(series))


def _complex_poles(z: Any) -> tuple[Any, Any]:
    """(where z is a pole or NaN, z with those places set to 1): what the complex gamma family
    answers nan+nanj at, and an argument that keeps the rest (and gradients) finite there."""
    re, im = lax.real(z), lax.imag(z)
    zero = _c(0.0, re)
    pole = lax.bitwise_and(
        lax.bitwise_and(lax.eq(im, zero), lax.eq(re, lax.floor(re))), lax.le(re, zero)
    )
    bad = lax.bitwise_or(pole, lax.bitwise_or(lax.ne(re, re), lax.ne(im, im)))
    return bad, lax.select(bad, _full(1.0, z), z)


def _complex_gamma(z: Any) -> Any:
    """Gamma(z) = exp(log Gamma(z)), reflected for Re z < 1/2: Gamma(z) Gamma(1 - z) =
    pi / sin(pi z); nan+nanj at poles and NaN parts, as JAX."""
    bad, z = _complex_poles(z)
    left = lax.lt(lax.real(z), _c(0.5, lax.real(z)))
    right = _lanczos_loggamma(lax.select(left, lax.sub(_c(1.0, z), z), z))
    zl = lax.select(left, z, _full(0.5, z))  # the unused branch stays finite
    sin_pi_z = lax.sin(lax.mul(_c(math.pi, z), zl))
    reflected = lax.sub(lax.sub(_c(math.log(math.pi), z), lax.log(sin_pi_z)), right)
    out = lax.exp(lax.select(left, reflected, right))
    return lax.select(bad, _full(complex(math.nan, math.nan), z), out)


def _complex_loggamma(z: Any) -> Any:
    """The principal branch of log Gamma(z) (SciPy's: one cut, on the negative real axis):
    log Gamma(z + n) - sum_{k < n} log(z + k) with n = max(0, ceil(1/2 - Re z)), the shifted
    value by Lanczos' approximation; nan+nanj at poles and NaN parts, as JAX."""
    bad, z = _complex_poles(z)
    re = lax.real(z)
    n = lax.max(lax.ceil(lax.sub(_c(0.5, re), re)), _c(0.0, re))

    def more(state: tuple[Any, Any]) -> Any:
        k, _ = state
        return lax.reduce_or(lax.lt(k, n), tuple(range(util.aval(n).ndim)))

    def step(state: tuple[Any, Any]) -> tuple[Any, Any]:
        k, logs = state
        live = lax.lt(k, n)
        zk = lax.add(z, lax.convert_element_type(k, util.aval(z).dtype))
        zk = lax.select(live, zk, _full(1.0, z))
        return lax.add(k, _c(1.0, k)), lax.add(logs, lax.log(zk))

    start = (_full(0.0, re), _full(0.0, z))
    _, logs = control_flow.while_loop(more, step, start)
    shifted = lax.add(z, lax.convert_element_type(n, util.aval(z).dtype))
    out = lax.sub(_lanczos_loggamma(shifted), logs)
    return lax.select(bad, _full(complex(math.nan, math.nan), z), out)


@eager_jit
def gamma(x: Any) -> Any:
    """The gamma function: sign(Gamma(x)) exp(lgamma(x)) for real x; complex x by Lanczos'
    approximation with the reflection formula (`_complex_gamma`)."""
    (x,) = _inexact("gamma", x)
    if util.aval(x).dtype.kind == "c":
        return _with_weak(_complex_gamma(x), False)
    return lax.mul(gammasgn(x), _with_weak(lax.exp(lax.lgamma(x)), False))


@eager_jit
def loggamma(x: Any) -> Any:
    """log Gamma(x): for real x > 0 (NaN elsewhere), for complex x its principal branch
    (`_complex_loggamma`)."""
    (x,) = _inexact("loggamma", x)
    if util.aval(x).dtype.kind == "c":
        return _with_weak(_complex_loggamma(x), False)
    return lax.select(lax.gt(x, _c(0.0, x)), lax.lgamma(x), _full(math.nan, x))


def _stirling_delta_diff(a: Any, b: Any) -> Any:
    """d(b) - d(a + b) for the Stirling remainder d(x) = lgamma(x) - ((x - 1/2) log x - x +
    log(2 pi) / 2), to four terms (b >= 8)."""
    return lax.sub(lsp.stirling_remainder(b, 4), lsp.stirling_remainder(lax.add(a, b), 4))


@eager_jit
def betaln(a: Any, b: Any) -> Any:
    """log |B(a, b)|; for max(a, b) >= 8, lgamma(b) - lgamma(a + b) is summed from Stirling's
    series so large arguments do not cancel catastrophically."""
    a, b = _inexact("betaln", a, b)
    a, b = lax.min(a, b), lax.max(a, b)
    small = lax.add(lax.lgamma(a), lax.sub(lax.lgamma(b), lax.lgamma(lax.add(a, b))))
    safe_b = lax.max(b, _c(8.0, b))
    # lgamma(b) - lgamma(a + b) = d(b) - d(a+b) - (a + b - 1/2) log1p(a/b) - a (log b - 1)
    w = _stirling_delta_diff(a, safe_b)
    uu = lax.mul(lax.add(safe_b, lax.sub(a, _c(0.5, a))), lax.log1p(lax.div(a, safe_b)))
    v = lax.mul(a, lax.sub(lax.log(safe_b), _c(1.0, a)))
    diff = lax.select(lax.le(uu, v), lax.sub(lax.sub(w, v), uu), lax.sub(lax.sub(w, uu), v))
    large = lax.add(lax.lgamma(a), diff)
    out = lax.select(lax.lt(b, _c(8.0, b)), small, large)
    return _with_weak(out, util.aval(a).weak_type and util.aval(b).weak_type)


@eager_jit
def beta(a: Any, b: Any) -> Any:
    """The beta function Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = _inexact("beta", a, b)
    sign = lax.mul(lax.mul(gammasgn(a), gammasgn(b)), gammasgn(lax.add(a, b)))
    return lax.mul(sign, lax.exp(betaln(a, b)))


def factorial(n: Any, exact: bool = False) -> Any:
    """n! = Gamma(n + 1) as a float (0 for n < 0)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _inexact("factorial", n)
    out = util.where(lax.lt(n, _c(0.0, n)), 0, lax.exp(lax.lgamma(lax.add(n, _c(1.0, n)))))
    return _with_weak(out, util.aval(n).weak_type)


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """N choose k from log-gamma values (0 outside 0 <= k <= N)."""
    if repetition:
        N, k = _inexact("comb", N, k)
        ok = lax.bitwise_and(lax.eq(k, _c(0.0, k)), lax.ge(N, _c(0.0, N)))
        res = comb(lax.sub(lax.add(N, k), _c(1.0, N)), k, repetition=False)
        return util.where(ok, 1.0, res)
    N, k = _inexact("comb", N, k)
    ok = lax.bitwise_and(
        lax.bitwise_and(lax.le(k, N), lax.ge(N, _c(0.0, N))), lax.ge(k, _c(0.0, k))
    )
    sn = util.where(ok, N, 0.0)
    sk = util.where(ok, k, 0.0)
    one = _c(1.0, sn)
    res = lax.exp(
        lax.sub(
            lax.sub(lax.lgamma(lax.add(sn, one)), lax.lgamma(lax.add(sk, one))),
            lax.lgamma(lax.sub(lax.add(sn, one), sk)),
        )
    )
    return _with_weak(util.where(ok, res, 0.0), util.aval(N).weak_type and util.aval(k).weak_type)


@custom_jvp
def _poch(z: Any, m: Any) -> Any:
    out = lax.div(gamma(lax.add(z, m)), gamma(z))
    return lax.select(lax.eq(m, _c(0.0, m)), _full(1.0, z), out)


_poch.defjvps(
    lambda zd, ans, z, m: lax.mul(lax.mul(lax.sub(digamma(lax.add(z, m)), digamma(z)), ans), zd),
    lambda md, ans, z, m: lax.mul(lax.mul(digamma(lax.add(z, m)), ans), md),
)


def poch(z: Any, m: Any) -> Any:
    """Rising factorial Gamma(z + m) / Gamma(z) (1 when m == 0)."""
    return _with_weak(_poch(*_inexact("poch", z, m)), False)


@eager_jit(static_argnames=("d",))
def multigammaln(a: Any, d: Any) -> Any:
    """log of the multivariate gamma function of dimension d."""
    d = core.concrete_or_error(int, d, "d argument of multigammaln")
    a, dd = _inexact("multigammaln", a, d)
    const = lax.mul(
        lax.mul(lax.mul(_c(0.25, a), dd), lax.sub(dd, _c(1.0, a))), lax.log(_c(math.pi, a))
    )
    av = util.aval(a)
    shape = (*av.shape, d)
    half_i = lax.div(
        lax.convert_element_type(lax.broadcasted_iota(dtypes.int32, shape, av.ndim), av.dtype),
        _c(2.0, a),
    )
    terms = lax.lgamma(lax.sub(lax.broadcast_in_dim(a, shape, tuple(range(av.ndim))), half_i))
    return lax.add(lax.reduce_sum(terms, (av.ndim,)), const)


def gammainc(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma P(a, x)."""
    return lsp.igamma(*_inexact("gammainc", a, x))


def gammaincc(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma Q(a, x)."""
    return lsp.igammac(*_inexact("gammaincc", a, x))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta I_x(a, b)."""
    return lsp.betainc(*_inexact("betainc", a, b, x))


# ---- logistic ------------------------------------------------------------------------------------
def expit(x: Any) -> Any:
    return lax.logistic(_float(x))


@custom_jvp
def _logit(x: Any) -> Any:
    return lax.log(lax.div(x, lax.sub(_c(1.0, x), x)))


_logit.defjvps(lambda t, _, x: lax.div(t, lax.mul(x, lax.sub(_c(1.0, x), x))))


def logit(x: Any) -> Any:
    """log(x / (1 - x)), with JAX's derivative 1 / (x (1 - x))."""
    return _logit(_float(x))


# ---- x log y and entropies -----------------------------------------------------------------------
def _x_times(name: str, log_fn: Any, x: Any, y: Any) -> Any:
    """x * log_fn(y), 0 where x == 0 unless y is NaN (JAX's and scipy's convention)."""
    av = util.aval(x)
    ok = lax.bitwise_or(lax.ne(x, _c(0.0, x)), lax.ne(y, y))
    return lax.select(ok, lax.mul(x, log_fn(y)), lax.full(av.shape, 0.0, av.dtype, av.weak_type))


@custom_jvp
def _xlogy(x: Any, y: Any) -> Any:
    return _x_times("xlogy", lax.log, x, y)


@custom_jvp
def _xlog1py(x: Any, y: Any) -> Any:
    return _x_times("xlog1py", lax.log1p, x, y)


def _xlogy_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x, y), (xd, yd) = primals, tangents
    return _xlogy(x, y), lax.add(lax.mul(xd, lax.log(y)), lax.div(lax.mul(yd, x), y))


def _xlog1py_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x, y), (xd, yd) = primals, tangents
    d = lax.div(lax.mul(yd, x), lax.add(_c(1.0, y), y))
    return _xlog1py(x, y), lax.add(lax.mul(xd, lax.log1p(y)), d)


_xlogy.defjvp(_xlogy_jvp)
_xlog1py.defjvp(_xlog1py_jvp)


def _promote_float(name: str, x: Any, y: Any) -> list[Any]:
    # promote, then to a float (JAX's promote_args_inexact: weak types survive)
    x, y = util.promote_dtypes_inexact(*util.promote_args(name, x, y))
    shape = util.broadcast_shapes(util.aval(x).shape, util.aval(y).shape)
    return [util.broadcast_to(x, shape), util.broadcast_to(y, shape)]


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), with 0 where x == 0 (JAX's convention; NaN y still propagates)."""
    return _xlogy(*_promote_float("xlogy", x, y))


def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), with 0 where x == 0 (NaN y still propagates)."""
    return _xlog1py(*_promote_float("xlog1py", x, y))


@custom_jvp
def _xlogx(x: Any) -> Any:
    return _xlogy(x, x)


_xlogx.defjvps(lambda t, _, x: lax.mul(t, lax.add(lax.log(x), _c(1.0, x))))


def entr(x: Any) -> Any:
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0 (derivative -(log x + 1), as JAX)."""
    x = _float(x)
    av = util.aval(x)
    if av.dtype.kind == "c":
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(
        lax.lt(x, _c(0.0, x)),
        lax.full(av.shape, -math.inf, av.dtype, av.weak_type),
        lax.neg(_xlogx(x)),
    )


@eager_jit
def rel_entr(p: Any, q: Any) -> Any:
    """p log(p / q) for p, q > 0; 0 for p == 0, q >= 0; inf otherwise."""
    p, q = _inexact_real("rel_entr", p, q)
    zero = _c(0.0, p)
    both = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    sp = lax.select(both, p, _full(1.0, p))
    sq = lax.select(both, q, _full(1.0, q))
    val = lax.sub(_xlogx(sp), xlogy(sp, sq))
    out = lax.select(both, val, lax.select(one_zero, _full(0.0, p), _full(math.inf, p)))
    return _with_weak(out, util.aval(_c(0.0, out)).weak_type)


@eager_jit
def kl_div(p: Any, q: Any) -> Any:
    """p log(p / q) - p + q (elementwise Kullback-Leibler divergence)."""
    p, q = _inexact_real("kl_div", p, q)
    out = lax.add(lax.sub(rel_entr(p, q), p), q)
    return _with_weak(out, util.aval(_c(0.0, out)).weak_type)


# ---- Bessel -------------------------------------------------------------------------------------
def i0e(x: Any) -> Any:
    """exp(-|x|) I0(x)."""
    return lsp.bessel_i0e(*_inexact("i0e", x))


def i1e(x: Any) -> Any:
    """exp(-|x|) I1(x)."""
    return lsp.bessel_i1e(*_inexact("i1e", x))


def i0(x: Any) -> Any:
    """Modified Bessel function of order 0."""
    (x,) = _inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lsp.bessel_i0e(x))


def i1(x: Any) -> Any:
    """Modified Bessel function of order 1."""
    (x,) = _inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lsp.bessel_i1e(x))


# ---- zeta and polygamma -------------------------------------------------------------------------
@custom_jvp
def _zeta(x: Any, q: Any) -> Any:
    return lsp._zeta_value(x, q)


def _zeta_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    """Derivatives of the Euler-Maclaurin expression itself (in x and q), unmasked as JAX's."""
    return _zeta(*primals), jvp(lsp._zeta_series, primals, tangents)[1]


_zeta.defjvp(_zeta_jvp)


def zeta(x: Any, q: Any = None) -> Any:
    """Hurwitz zeta sum_n (n + q)^-x (q is required, as in JAX)."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta "
            "function."
        )
    x, q = _inexact("zeta", x, q)
    return _with_weak(_zeta(x, q), util.aval(x).weak_type)


def polygamma(n: Any, x: Any) -> Any:
    """psi^(n)(x), for integer n."""
    ndt = util.aval(n).dtype if not isinstance(n, int) else dtypes.int32
    if isinstance(n, bool) or ndt.kind not in "iu":
        raise ValueError(
            f"Argument `n` to polygamma must be of integer type. Got dtype {ndt.name}."
        )
    return lsp.polygamma(*_inexact("polygamma", n, x))


# ---- softmax family (logsumexp is jax.nn's) ------------------------------------------------------
def softmax(x: Any, /, *, axis: Any = None) -> Any:
    """exp(x) / sum(exp(x)) over `axis` (all axes by default, as scipy)."""
    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: Any = None) -> Any:
    """x - logsumexp(x) over `axis` (all axes by default, as scipy)."""
    return nn.log_softmax(x, axis=axis)


# ---- Box-Cox and Bernoulli numbers ---------------------------------------------------------------
def boxcox(x: Any, lmbda: Any) -> Any:
    """(x^lmbda - 1) / lmbda, log(x) at lmbda == 0."""
    x, lmbda = _inexact("boxcox", x, lmbda)
    zero = lax.eq(lmbda, _c(0.0, lmbda))
    safe = lax.select(zero, _full(1.0, lmbda), lmbda)
    log_x = lax.log(x)
    return lax.select(zero, log_x, lax.div(lax.expm1(lax.mul(safe, log_x)), safe))


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """((1 + x)^lmbda - 1) / lmbda, log1p(x) at lmbda == 0."""
    x, lmbda = _inexact("boxcox1p", x, lmbda)
    zero = lax.eq(lmbda, _c(0.0, lmbda))
    safe = lax.select(zero, _full(1.0, lmbda), lmbda)
    log1p_x = lax.log1p(x)
    return lax.select(zero, log1p_x, lax.div(lax.expm1(lax.mul(safe, log1p_x)), safe))


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2)."""
    n = core.concrete_or_error(operator.index, n, "Argument n of bernoulli")
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    return creation.array(
        [float(lsp._bernoulli(k)) for k in range(n + 1)], dtype=dtypes.default_float()
    )


# ---- exponential integrals ----------------------------------------------------------------------
_EULER_GAMMA = 0.5772156649015329


def _expn_value(n: Any, x: Any) -> Any:
    """E_n(x) for integer-valued n >= 0 and x >= 0: the continued fraction (modified Lentz) for
    x > 1, the power series with its digamma term for x <= 1 (Numerical Recipes' scheme), each
    for a fixed number of terms."""
    dt = util.aval(x).dtype
    if dt.bits < 32:
        x32 = lax.convert_element_type(x, dtypes.float32)
        n32 = lax.convert_element_type(n, dtypes.float32)
        return lax.convert_element_type(_expn_value(n32, x32), dt)
    f64 = dt.bits == 64
    c = lambda v: _full(v, x)
    one, zero = c(1.0), c(0.0)
    big = c(1e300 if f64 else 1e30)
    # continued fraction, valid for x > 1 (inputs moved there elsewhere)
    xc = lax.select(lax.gt(x, one), x, c(2.0))
    b0 = lax.add(xc, n)
    d0 = lax.div(one, b0)

    def cf_body(i: Any, st: Any) -> Any:
        b, cc, d, h = st
        fi = lax.broadcast(lax.convert_element_type(i, dt), util.aval(x).shape)
        an = lax.neg(lax.mul(fi, lax.add(lax.sub(n, one), fi)))
        b = lax.add(b, c(2.0))
        d = lax.div(one, lax.add(lax.mul(an, d), b))
        cc = lax.add(b, lax.div(an, cc))
        return b, cc, d, lax.mul(h, lax.mul(cc, d))

    steps = 100 if f64 else 28
    _, _, _, h = control_flow.fori_loop(1, steps + 1, cf_body, (b0, big, d0, d0))
    cf = lax.mul(h, lax.exp(lax.neg(xc)))
    # series, valid for 0 < x <= 1
    xs = lax.select(lax.gt(x, one), one, lax.select(lax.gt(x, zero), x, one))
    nm1 = lax.sub(n, one)
    log_x = lax.log(xs)
    psi = lax.digamma(lax.max(n, one))  # -gamma + sum_{k < n} 1/k
    first = lax.select(
        lax.ne(nm1, zero),
        lax.div(one, lax.select(lax.ne(nm1, zero), nm1, one)),
        lax.sub(lax.neg(log_x), c(_EULER_GAMMA)),
    )

    def series_body(i: Any, st: Any) -> Any:
        ans, fact = st
        fi = lax.broadcast(lax.convert_element_type(i, dt), util.aval(x).shape)
        fact = lax.mul(fact, lax.div(lax.neg(xs), fi))
        hit = lax.eq(fi, nm1)
        denom = lax.select(hit, one, lax.sub(fi, nm1))
        term = lax.select(
            hit, lax.mul(fact, lax.add(lax.neg(log_x), psi)), lax.neg(lax.div(fact, denom))
        )
        return lax.add(ans, term), fact

    ans, _ = control_flow.fori_loop(1, (26 if f64 else 16) + 1, series_body, (first, one))
    out = lax.select(lax.gt(x, one), cf, ans)
    safe_x = lax.select(lax.eq(x, zero), one, x)
    out = lax.select(lax.eq(n, zero), lax.div(lax.exp(lax.neg(safe_x)), safe_x), out)
    at_zero = lax.select(
        lax.lt(n, c(2.0)), c(math.inf), lax.div(one, lax.select(lax.lt(n, c(2.0)), one, nm1))
    )
    out = lax.select(lax.eq(x, zero), at_zero, out)
    bad = lax.bitwise_or(lax.lt(n, zero), lax.lt(x, zero))
    return lax.select(lax.bitwise_or(bad, lax.ne(x, x)), c(math.nan), out)


@custom_jvp
def _expn(n: Any, x: Any) -> Any:
    return _expn_value(n, x)


def _expn_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (n, x), (_, xd) = primals, tangents
    return _expn(n, x), lax.mul(xd, lax.neg(_expn(lax.sub(n, _full(1.0, n)), x)))


_expn.defjvp(_expn_jvp)


@eager_jit
def _expn_jit(n: Any, x: Any) -> Any:
    return _expn(n, x)


def expn(n: Any, x: Any) -> Any:
    """Generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt (integer n)."""
    n_arr = util.ensure_array(n)
    x, nf = _inexact("expn", x, n_arr)
    nf = lax.select(lax.eq(nf, lax.floor(nf)), nf, _full(math.nan, nf))
    return _expn_jit(nf, x)


def exp1(x: Any) -> Any:
    """Exponential integral E_1(x)."""
    (x,) = _inexact("exp1", x)
    return _expn_jit(_full(1.0, x), x)


def _expi_value(x: Any) -> Any:
    dt = util.aval(x).dtype
    if dt.bits < 32:
        return lax.convert_element_type(
            _expi_value(lax.convert_element_type(x, dtypes.float32)), dt
        )
    f64 = dt.bits == 64
    c = lambda v: _full(v, x)
    one, zero = c(1.0), c(0.0)
    split = 40.0
    # x > 0 small: gamma + log x + sum_k x^k / (k k!)
    xs = lax.select(lax.bitwise_and(lax.gt(x, zero), lax.le(x, c(split))), x, one)

    def body(i: Any, st: Any) -> Any:
        s, t = st
        fi = lax.broadcast(lax.convert_element_type(i, dt), util.aval(x).shape)
        t = lax.mul(t, lax.div(lax.mul(xs, lax.sub(fi, one)), lax.mul(fi, fi)))
        return lax.add(s, t), t

    # term_k = x^k / (k k!): start from term_1 = x
    s, _ = control_flow.fori_loop(2, (200 if f64 else 150) + 1, body, (xs, xs))
    series = lax.add(lax.add(c(_EULER_GAMMA), lax.log(xs)), s)
    # x > split: e^x / x sum_k k! / x^k
    xl = lax.select(lax.gt(x, c(split)), x, c(2 * split))
    inv = lax.div(one, xl)
    acc, term = one, one
    for k in range(1, 41 if f64 else 31):
        term = lax.mul(term, lax.mul(c(float(k)), inv))
        acc = lax.add(acc, term)
    asym = lax.mul(lax.div(lax.exp(xl), xl), acc)
    pos = lax.select(lax.gt(x, c(split)), asym, series)
    neg = lax.neg(_expn_value(one, lax.select(lax.lt(x, zero), lax.neg(x), one)))
    out = lax.select(lax.lt(x, zero), neg, pos)
    return lax.select(lax.eq(x, zero), c(math.nan), out)


@custom_jvp
def _expi(x: Any) -> Any:
    return _expi_value(x)


_expi.defjvps(lambda t, _, x: lax.mul(t, lax.div(lax.exp(x), x)))


@eager_jit
def _expi_jit(x: Any) -> Any:
    return _expi(x)


def expi(x: Any) -> Any:
    """Exponential integral Ei(x) (principal value; -E_1(-x) for x < 0)."""
    (x,) = _inexact("expi", x)
    return _expi_jit(x)


# ---- spherical harmonics ------------------------------------------------------------------------
def sph_harm_y(
    n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None, n_max: int | None = None
) -> Any:
    """Y_n^m(theta, phi) (theta polar, phi azimuthal; Condon-Shortley phase), complex.

    The associated Legendre factor comes from the recurrence on the normalized functions
    Pbar_l^|m| (which never overflow), run up to degree n_max (by default the largest n, which
    then must be concrete)."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported."
        )
    n, m = util.ensure_array(n), util.ensure_array(m)
    theta, phi = util.promote_dtypes_inexact(theta, phi)
    dt = util.aval(theta).dtype
    if dt.kind != "f" or dt.bits < 32:
        raise TypeError(
            f"complex does not accept dtype {dt.name} at position 0. Accepted dtypes at position "
            "0 are subtypes of float32, float64."
        )
    if n_max is None:
        n_max = core.concrete_or_error(
            lambda v: int(util.ensure_array(v).max()) if util.aval(v).size else 0,
            n,
            "The n_max argument of jax.scipy.special.sph_harm_y must be concrete.",
        )
    shape = util.broadcast_shapes(*(util.aval(v).shape for v in (n, m, theta, phi)))
    n, m, theta, phi = (util.broadcast_to(v, shape) for v in (n, m, theta, phi))
    nf = lax.convert_element_type(n, dt)
    ma = lax.abs(lax.convert_element_type(m, dt))
    x = lax.cos(theta)
    s = lax.sqrt(lax.max(lax.sub(_c(1.0, x), lax.mul(x, x)), _c(0.0, x)))
    # Pbar_m^m = (-1)^m sqrt((2m + 1) / 4 pi) sqrt((2m)!) / (2^m m!) s^m
    half_lg_2m = lax.mul(_c(0.5, ma), lax.lgamma(lax.add(lax.add(ma, ma), _c(1.0, ma))))
    log_diag = lax.sub(
        lax.sub(half_lg_2m, lax.mul(ma, _c(math.log(2.0), ma))),
        lax.lgamma(lax.add(ma, _c(1.0, ma))),
    )
    odd = lax.ne(lax.rem(ma, _c(2.0, ma)), _c(0.0, ma))
    sign = lax.select(odd, _full(-1.0, ma), _full(1.0, ma))
    norm0 = lax.sqrt(lax.div(lax.add(lax.add(ma, ma), _c(1.0, ma)), _c(4 * math.pi, ma)))
    s_pow = lax.select(lax.eq(ma, _c(0.0, ma)), _full(1.0, s), lax.pow(s, ma))
    diag = lax.mul(lax.mul(sign, norm0), lax.mul(lax.exp(log_diag), s_pow))

    def a(l: Any) -> Any:  # sqrt((4 l^2 - 1) / (l^2 - m^2)) for l > |m| (finite elsewhere, so
        # the masked-out branches pass zero cotangents, not NaN, in reverse mode)
        num = lax.max(lax.sub(lax.mul(_c(4.0, l), lax.mul(l, l)), _c(1.0, l)), _c(1.0, l))
        den = lax.max(lax.sub(lax.mul(l, l), lax.mul(ma, ma)), _c(1.0, l))
        return lax.sqrt(lax.div(num, den))

    zero = _full(0.0, x)
    p_prev2, p_prev, out = zero, zero, zero
    for deg in range(int(n_max) + 1):
        lv = _full(float(deg), x)
        start = lax.eq(lv, ma)
        second = lax.eq(lv, lax.add(ma, _c(1.0, ma)))
        rec = lax.mul(
            a(lv), lax.sub(lax.mul(x, p_prev), lax.div(p_prev2, a(lax.sub(lv, _c(1.0, lv)))))
        )
        nxt = lax.mul(lax.mul(x, lax.sqrt(lax.add(lax.add(ma, ma), _c(3.0, ma)))), p_prev)
        p = lax.select(start, diag, lax.select(second, nxt, lax.select(lax.gt(lv, ma), rec, zero)))
        out = lax.select(lax.eq(nf, lv), p, out)
        p_prev2, p_prev = p_prev, p
    ang = lax.mul(ma, phi)
    y = lax.complex(lax.mul(out, lax.cos(ang)), lax.mul(out, lax.sin(ang)))
    # Y_n^-m = (-1)^m conj(Y_n^m)
    neg = lax.lt(m, lax.full((), 0, util.aval(m).dtype))
    y_neg = lax.mul(lax.conj(y), lax.convert_element_type(sign, util.aval(y).dtype))
    return lax.select(neg, y_neg, y)


__all__ = [
    "bessel_jn",
    "dawsn",
    "fresnel",
    "hyp1f1",
    "hyp2f1",
    "owens_t",
    "wofz",
    "sici",
    "spence",
    "bernoulli", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "digamma", "entr",
    "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit", "expn", "factorial", "gamma",
    "gammainc", "gammaincc", "gammaln", "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div",
    "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
    "poch", "polygamma", "rel_entr", "softmax", "sph_harm_y", "xlog1py", "xlogy", "zeta",
]  # fmt: skip
