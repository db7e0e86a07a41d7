"""`jax.scipy.stats`: densities, distribution functions and quantiles with JAX's formulas.

Functions are named `<distribution>_<function>` here; `webjax.scipy.stats.<distribution>`
re-exports them under their scipy names (`norm.logpdf`, ...).
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..lax import lax
from ..lax import linalg as lax_linalg
from ..lax import special as lax_special
from ..numpy import matrices, reductions, util
from ..numpy import ufuncs as u
from .special import (
    betainc,
    betaln,
    gammainc,
    gammaincc,
    gammaln,
    log_ndtr,
    logit,
    ndtr,
    ndtri,
    xlog1py,
    xlogy,
)

_inexact = u._promote_inexact


def _c(v: float, like: Any) -> Any:
    return util.lax_const(v, like)


def _weak(out: Any, weak: bool) -> Any:
    """`out` with the weak type JAX's formula gives it."""
    av = util.aval(out)
    return out if av.weak_type == weak else lax.convert_element_type(out, av.dtype, weak_type=weak)


def _weak_of(*xs: Any) -> bool:
    return all(util.aval(x).weak_type for x in xs)


def _const_weak(x: Any) -> bool:
    """Whether JAX's constants built from `x` are weak (Python scalars: a weak 0-d x)."""
    return util.aval(util.lax_const(0, x)).weak_type


def _where(pred: Any, x: Any, y: Any) -> Any:
    return util.where(pred, x, y)


# ---- norm ---------------------------------------------------------------------------------------
def norm_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("norm.logpdf", x, loc, scale)
    s2 = lax.mul(scale, scale)
    log_normalizer = lax.log(lax.mul(_c(2 * math.pi, x), s2))
    d = lax.sub(x, loc)
    quadratic = lax.div(lax.mul(d, d), s2)
    return lax.div(lax.add(log_normalizer, quadratic), _c(-2.0, x))


def norm_pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(norm_logpdf(x, loc, scale))


def norm_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("norm.cdf", x, loc, scale)
    return ndtr(lax.div(lax.sub(x, loc), scale))


def norm_logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("norm.logcdf", x, loc, scale)
    return log_ndtr(lax.div(lax.sub(x, loc), scale))


def norm_ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = _inexact("norm.ppf", q, loc, scale)
    return lax.add(lax.mul(ndtri(q), scale), loc)


def norm_sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("norm.sf", x, loc, scale)
    return norm_cdf(lax.neg(x), lax.neg(loc), scale)


def norm_logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("norm.logsf", x, loc, scale)
    return norm_logcdf(lax.neg(x), lax.neg(loc), scale)


def norm_isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    (q,) = _inexact("norm.isf", q)
    return norm_ppf(lax.sub(_c(1.0, q), q), loc, scale)


# ---- uniform ------------------------------------------------------------------------------------
def uniform_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("uniform.logpdf", x, loc, scale)
    outside = lax.bitwise_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    return _where(outside, -math.inf, lax.neg(lax.log(scale)))


def uniform_pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(uniform_logpdf(x, loc, scale))


def uniform_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("uniform.cdf", x, loc, scale)
    hi = lax.add(loc, scale)
    inside = lax.bitwise_and(lax.ge(x, loc), lax.le(x, hi))
    out = _where(inside, lax.div(lax.sub(x, loc), scale), 0.0)
    out = _where(lax.gt(x, hi), 1.0, out)
    return _weak(_where(lax.lt(x, loc), 0.0, out), False)


def uniform_ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = _inexact("uniform.ppf", q, loc, scale)
    bad = lax.bitwise_or(lax.ne(q, q), lax.bitwise_or(lax.lt(q, _c(0.0, q)), lax.gt(q, _c(1.0, q))))
    return _where(bad, math.nan, lax.add(loc, lax.mul(scale, q)))


# ---- bernoulli ----------------------------------------------------------------------------------
def bernoulli_logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = _inexact("bernoulli.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = lax.add(xlogy(x, p), xlog1py(lax.sub(_c(1.0, x), x), lax.neg(p)))
    outside = lax.bitwise_or(lax.lt(x, _c(0.0, x)), lax.gt(x, _c(1.0, x)))
    return _where(outside, -math.inf, log_probs)


def bernoulli_pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return lax.exp(bernoulli_logpmf(k, p, loc))


def bernoulli_cdf(k: Any, p: Any) -> Any:
    k, p = _inexact("bernoulli.cdf", k, p)
    zero, one = _c(0.0, k), _c(1.0, k)
    bad = lax.bitwise_or(
        lax.bitwise_or(lax.ne(k, k), lax.ne(p, p)), lax.bitwise_or(lax.lt(p, zero), lax.gt(p, one))
    )
    out = _where(lax.ge(k, one), 1.0, 0.0)
    out = _where(lax.bitwise_and(lax.ge(k, zero), lax.lt(k, one)), lax.sub(one, p), out)
    return _where(bad, math.nan, out)


def bernoulli_ppf(q: Any, p: Any) -> Any:
    q, p = _inexact("bernoulli.ppf", q, p)
    zero, one = _c(0.0, q), _c(1.0, q)
    bad_p = lax.bitwise_or(lax.lt(p, zero), lax.gt(p, one))
    bad_q = lax.bitwise_or(lax.lt(q, zero), lax.gt(q, one))
    nan = lax.bitwise_or(lax.ne(q, q), lax.ne(p, p))
    bad = lax.bitwise_or(nan, lax.bitwise_or(bad_p, bad_q))
    return _where(bad, math.nan, _where(lax.le(q, lax.sub(one, p)), zero, one))


# ---- beta ---------------------------------------------------------------------------------------
def beta_logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = _inexact("beta.logpdf", x, a, b, loc, scale)
    one, zero = _c(1.0, x), _c(0.0, x)
    y = lax.div(lax.sub(x, loc), scale)
    lin = lax.add(xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(lax.neg(betaln(a, b)), lin), lax.log(scale))
    outside = lax.bitwise_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    out = _where(outside, -math.inf, log_probs)
    bad = lax.bitwise_or(lax.bitwise_or(lax.le(a, zero), lax.le(b, zero)), lax.le(scale, zero))
    return _where(bad, math.nan, out)


def beta_pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(beta_logpdf(x, a, b, loc, scale))


def _unit(x: Any, loc: Any, scale: Any) -> Any:
    return lax.clamp(_c(0.0, x), lax.div(lax.sub(x, loc), scale), _c(1.0, x))


def beta_cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = _inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, _unit(x, loc, scale))


def beta_logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(beta_cdf(x, a, b, loc, scale))


def beta_sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = _inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, lax.sub(_c(1.0, x), _unit(x, loc, scale)))


def beta_logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(beta_sf(x, a, b, loc, scale))


# ---- gamma and chi2 -----------------------------------------------------------------------------
def gamma_logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = _inexact("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = _c(1.0, x)
    y = _where(ok, lax.div(lax.sub(x, loc), scale), one)
    lin = lax.sub(xlogy(lax.sub(a, one), y), y)
    log_probs = lax.sub(lin, lax.add(lax.lgamma(a), lax.log(scale)))
    return _where(ok, log_probs, -math.inf)


def gamma_pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(gamma_logpdf(x, a, loc, scale))


def gamma_cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = _inexact("gamma.cdf", x, a, loc, scale)
    y = lax.clamp(_c(0.0, x), lax.div(lax.sub(x, loc), scale), _c(math.inf, x))
    return gammainc(a, y)


def gamma_logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(gamma_cdf(x, a, loc, scale))


def gamma_sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = _inexact("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return _where(lax.lt(y, _c(0.0, y)), 1.0, gammaincc(a, y))


def gamma_logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(gamma_sf(x, a, loc, scale))


def chi2_logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = _inexact("chi2.logpdf", x, df, loc, scale)
    one, two = _c(1.0, x), _c(2.0, x)
    y = lax.div(lax.sub(x, loc), scale)
    half = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(half, one), lax.log(y)), lax.div(y, two))
    const = lax.neg(lax.add(lax.lgamma(half), lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(const, lax.log(scale)), kernel)
    return _where(lax.lt(x, loc), -math.inf, log_probs)


def chi2_pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(chi2_logpdf(x, df, loc, scale))


def _chi2_arg(x: Any, loc: Any, scale: Any) -> Any:
    y = lax.div(lax.sub(x, loc), lax.mul(scale, _c(2.0, scale)))
    return lax.clamp(_c(0.0, x), y, _c(math.inf, x))


def chi2_cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = _inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(lax.div(df, _c(2.0, df)), _chi2_arg(x, loc, scale))


def chi2_logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(chi2_cdf(x, df, loc, scale))


def chi2_sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = _inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(lax.div(df, _c(2.0, df)), _chi2_arg(x, loc, scale))


def chi2_logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(chi2_sf(x, df, loc, scale))


# ---- t ------------------------------------------------------------------------------------------
def t_logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = _inexact("t.logpdf", x, df, loc, scale)
    two = _c(2.0, x)
    sx = lax.div(lax.sub(x, loc), scale)
    half = lax.div(df, two)
    half_p = lax.add(half, _c(0.5, x))
    const = lax.mul(lax.mul(scale, scale), _c(math.pi, x))
    tmp = lax.div(lax.log(lax.mul(const, df)), two)
    normalize = lax.sub(lax.add(lax.lgamma(half), tmp), lax.lgamma(half_p))
    quadratic = lax.div(lax.mul(sx, sx), df)
    return lax.neg(lax.add(normalize, lax.mul(half_p, lax.log1p(quadratic))))


def t_pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(t_logpdf(x, df, loc, scale))


# ---- laplace, logistic, cauchy, expon -----------------------------------------------------------
def laplace_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("laplace.logpdf", x, loc, scale)
    lin = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(lin, lax.log(lax.mul(_c(2.0, x), scale))))


def laplace_pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(laplace_logpdf(x, loc, scale))


def laplace_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("laplace.cdf", x, loc, scale)
    half, one = _c(0.5, x), _c(1.0, x)
    d = lax.div(lax.sub(x, loc), scale)
    return lax.select(
        lax.le(d, _c(0.0, x)),
        lax.mul(half, lax.exp(d)),
        lax.sub(one, lax.mul(half, lax.exp(lax.neg(d)))),
    )


def logistic_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("logistic.logpdf", x, loc, scale)
    x = lax.div(lax.sub(x, loc), scale)
    two = _c(2.0, x)
    half = lax.div(x, two)
    return lax.sub(lax.mul(lax.neg(two), u.logaddexp(half, lax.neg(half))), lax.log(scale))


def logistic_pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logistic_logpdf(x, loc, scale))


def logistic_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("logistic.cdf", x, loc, scale)
    return lax.logistic(lax.div(lax.sub(x, loc), scale))


def logistic_sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("logistic.sf", x, loc, scale)
    return lax.logistic(lax.neg(lax.div(lax.sub(x, loc), scale)))


def logistic_ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def logistic_isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)


def cauchy_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("cauchy.logpdf", x, loc, scale)
    sx = lax.div(lax.sub(x, loc), scale)
    normalize = lax.log(lax.mul(_c(math.pi, x), scale))
    return lax.neg(lax.add(normalize, lax.log1p(lax.mul(sx, sx))))


def cauchy_pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(cauchy_logpdf(x, loc, scale))


def cauchy_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("cauchy.cdf", x, loc, scale)
    sx = lax.div(lax.sub(x, loc), scale)
    inv_pi = lax.div(_c(1.0, x), _c(math.pi, x))
    return lax.add(_c(0.5, x), lax.mul(inv_pi, lax.atan(sx)))


def cauchy_logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(cauchy_cdf(x, loc, scale))


def cauchy_sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("cauchy.sf", x, loc, scale)
    return cauchy_cdf(lax.neg(x), lax.neg(loc), scale)


def cauchy_logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("cauchy.logsf", x, loc, scale)
    return cauchy_logcdf(lax.neg(x), lax.neg(loc), scale)


def cauchy_ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = _inexact("cauchy.ppf", q, loc, scale)
    unscaled = lax.tan(lax.sub(lax.mul(_c(math.pi, q), q), _c(math.pi / 2, q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def cauchy_isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = _inexact("cauchy.isf", q, loc, scale)
    unscaled = lax.tan(lax.sub(_c(math.pi / 2, q), lax.mul(_c(math.pi, q), q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def expon_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("expon.logpdf", x, loc, scale)
    lin = lax.div(lax.sub(x, loc), scale)
    return _where(lax.lt(x, loc), -math.inf, lax.neg(lax.add(lin, lax.log(scale))))


def expon_pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(expon_logpdf(x, loc, scale))


def expon_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("expon.cdf", x, loc, scale)
    neg = lax.div(lax.sub(loc, x), scale)
    return _where(lax.lt(x, loc), 0.0, lax.neg(lax.expm1(neg)))


def expon_logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = _inexact("expon.sf", x, loc, scale)
    neg = lax.div(lax.sub(loc, x), scale)
    return _where(lax.lt(x, loc), 0.0, neg)


def expon_sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(expon_logsf(x, loc, scale))


def expon_logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log1p(lax.neg(expon_sf(x, loc, scale)))


def expon_ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = _inexact("expon.ppf", q, loc, scale)
    bad = lax.bitwise_or(lax.ne(q, q), lax.bitwise_or(lax.lt(q, _c(0.0, q)), lax.gt(q, _c(1.0, q))))
    return _where(bad, math.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))


# ---- pareto -------------------------------------------------------------------------------------
def pareto_logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = _inexact("pareto.logpdf", x, b, loc, scale)
    sx = lax.div(lax.sub(x, loc), scale)
    normalize = lax.log(lax.div(scale, b))
    log_probs = lax.neg(lax.add(normalize, lax.mul(lax.add(b, _c(1.0, x)), lax.log(sx))))
    return _where(lax.lt(x, lax.add(loc, scale)), -math.inf, log_probs)


def pareto_pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(pareto_logpdf(x, b, loc, scale))


def pareto_cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = _inexact("pareto.cdf", x, b, loc, scale)
    sx = lax.div(lax.sub(x, loc), scale)
    val = lax.sub(_c(1.0, x), lax.pow(sx, lax.neg(b)))
    return _where(lax.lt(x, lax.add(loc, scale)), 0.0, val)


def pareto_logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = _inexact("pareto.logcdf", x, b, loc, scale)
    sx = lax.div(lax.sub(x, loc), scale)
    val = lax.log1p(lax.neg(lax.pow(sx, lax.neg(b))))
    return _where(lax.lt(x, lax.add(loc, scale)), -math.inf, val)


def pareto_logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = _inexact("pareto.logsf", x, b, loc, scale)
    sx = lax.div(lax.sub(x, loc), scale)
    out = _where(lax.lt(x, lax.add(loc, scale)), 0.0, lax.neg(lax.mul(b, lax.log(sx))))
    return _weak(out, _const_weak(x))


def pareto_sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(pareto_logsf(x, b, loc, scale))


def pareto_ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, b, loc, scale = _inexact("pareto.ppf", q, b, loc, scale)
    one = _c(1.0, q)
    val = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    bad = lax.bitwise_or(lax.ne(q, q), lax.bitwise_or(lax.lt(q, _c(0.0, q)), lax.gt(q, one)))
    return _where(bad, math.nan, val)


# ---- discrete: poisson, geom, binom -------------------------------------------------------------
def poisson_logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = _inexact("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = lax.sub(lax.sub(xlogy(x, mu), lax.lgamma(lax.add(x, _c(1.0, x)))), mu)
    bad = lax.bitwise_or(lax.lt(x, _c(0.0, x)), lax.ne(u.round(k), k))
    return _weak(_where(bad, -math.inf, log_probs), _weak_of(k, mu, loc))


def poisson_pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    return lax.exp(poisson_logpmf(k, mu, loc))


def poisson_cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = _inexact("poisson.cdf", k, mu, loc)
    x = lax.sub(k, loc)
    p = gammaincc(lax.floor(lax.add(_c(1.0, x), x)), mu)
    return _where(lax.lt(x, _c(0.0, x)), 0.0, p)


def geom_logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = _inexact("geom.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = lax.add(xlog1py(lax.sub(x, _c(1.0, x)), lax.neg(p)), lax.log(p))
    return _where(lax.le(x, _c(0.0, x)), -math.inf, log_probs)


def geom_pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return lax.exp(geom_logpmf(k, p, loc))


def binom_logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = _inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    one, zero = _c(1.0, y), _c(0.0, y)
    lg_rest = lax.add(lax.lgamma(lax.add(y, one)), lax.lgamma(lax.add(lax.sub(n, y), one)))
    comb = lax.sub(lax.lgamma(lax.add(n, one)), lg_rest)
    lin = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(comb, lin)
    zero_case = lax.bitwise_or(lax.bitwise_and(lax.eq(y, zero), lax.eq(n, zero)), lax.eq(lin, zero))
    log_probs = _where(zero_case, 0.0, log_probs)
    inside = lax.bitwise_and(lax.ge(k, loc), lax.lt(k, lax.add(lax.add(loc, n), one)))
    return _weak(_where(inside, log_probs, -math.inf), _weak_of(k, n, p, loc))


def binom_pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    return lax.exp(binom_logpmf(k, n, p, loc))


# ---- multivariate normal ------------------------------------------------------------------------
def multivariate_normal_logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = (util.ensure_array(v) for v in (x, mean, cov))
    dt, weak = util.result_type(x, mean, cov)
    if dt.kind != "f":
        dt, weak = dtypes.default_float(), False
    x, mean, cov = (util.convert(v, dt, weak) for v in (x, mean, cov))
    log2pi = math.log(2 * math.pi)
    if not util.aval(mean).shape:
        quad = u.divide(u.multiply(-0.5, u.square(u.subtract(x, mean))), cov)
        return u.subtract(quad, u.multiply(0.5, u.add(log2pi, u.log(cov))))
    n = util.aval(mean).shape[-1]
    y = u.subtract(x, mean)
    sq_axis = util.aval(y).ndim - 1
    if not util.aval(cov).shape:
        sq = lax.reduce_sum(lax.mul(y, y), (sq_axis,))
        quad = u.divide(u.multiply(-0.5, sq), cov)
        return u.subtract(quad, u.multiply(n / 2, u.add(log2pi, u.log(cov))))
    cshape = util.aval(cov).shape
    if len(cshape) < 2 or cshape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax_linalg.cholesky(cov)
    batch = util.broadcast_shapes(util.aval(y).shape[:-1], cshape[:-2])
    z = lax_linalg.triangular_solve(
        util.broadcast_to(chol, (*batch, n, n)),
        util.broadcast_to(y, (*batch, n)),
        left_side=True,
        lower=True,
    )
    sq = lax.reduce_sum(lax.mul(z, z), (len(batch),))
    log_det = reductions.sum(u.log(matrices.diagonal(chol, axis1=-1, axis2=-2)), axis=-1)
    return u.subtract(u.subtract(u.multiply(-0.5, sq), n / 2 * log2pi), log_det)


def multivariate_normal_pdf(x: Any, mean: Any, cov: Any) -> Any:
    return lax.exp(multivariate_normal_logpdf(x, mean, cov))


# ---- dirichlet ----------------------------------------------------------------------------------
def _dirichlet_logpdf(x: Any, alpha: Any) -> Any:
    x, alpha = util.promote_dtypes_inexact(x, alpha)
    xa, aa = util.aval(x), util.aval(alpha)
    if aa.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={aa.shape}")
    k = aa.shape[0]
    if xa.ndim == 0 or xa.shape[0] not in (k, k - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={xa.shape}, alpha.shape={aa.shape}"
        )
    if xa.shape[0] == k - 1:  # the last coordinate is implied: 1 - sum of the others
        last = lax.sub(_c(1.0, x), reductions.sum(x, axis=0, keepdims=True))
        x = lax.concatenate([x, last], 0)
    a = lax.broadcast_in_dim(alpha, util.aval(x).shape, (0,))
    log_norm = lax.sub(reductions.sum(gammaln(alpha)), gammaln(reductions.sum(alpha)))
    log_p = lax.sub(reductions.sum(xlogy(lax.sub(a, _c(1.0, a)), x), axis=0), log_norm)
    # on the open simplex: every coordinate positive, coordinates summing to 1 (within 1e-6)
    on_simplex = lax.bitwise_and(
        lax.gt(reductions.min(x, axis=0), _c(0.0, x)),
        lax.lt(lax.abs(lax.sub(reductions.sum(x, axis=0), _c(1.0, x))), _c(1e-6, x)),
    )
    return _where(on_simplex, log_p, -math.inf)


def dirichlet_logpdf(x: Any, alpha: Any) -> Any:
    """log density of Dirichlet(alpha) at x (x's first axis indexes the k categories, or k - 1
    of them with the last implied); -inf off the open simplex."""
    return _dirichlet_logpdf(x, alpha)


def dirichlet_pdf(x: Any, alpha: Any) -> Any:
    return lax.exp(_dirichlet_logpdf(x, alpha))


# ---- truncnorm ----------------------------------------------------------------------------------
def _log_sub_exp(x: Any, y: Any) -> Any:
    """log(exp(x) - exp(y)) for x >= y."""
    return lax.add(x, lax.log1p(lax.neg(lax.exp(lax.sub(y, x)))))


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """log(Phi(b) - Phi(a)) for a <= b, from whichever tail keeps the difference accurate."""
    a, b = util.promote_args("truncnorm", a, b)
    zero = _c(0.0, a)
    left = lax.le(b, zero)  # both in the left tail
    right = lax.gt(a, zero)  # both in the right tail: mirror into the left one
    lt = _log_sub_exp(log_ndtr(b), log_ndtr(a))
    rt = _log_sub_exp(log_ndtr(lax.neg(a)), log_ndtr(lax.neg(b)))
    mid = lax.log1p(lax.sub(lax.neg(ndtr(a)), ndtr(lax.neg(b))))
    return _where(left, lt, _where(right, rt, mid))


def _truncnorm_args(name: str, *args: Any) -> list[Any]:
    x, a, b, loc, scale = _inexact(name, *args)
    return [lax.div(lax.sub(x, loc), scale), a, b, loc, scale]


def truncnorm_logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, a, b, _, scale = _truncnorm_args("truncnorm.logpdf", x, a, b, loc, scale)
    val = lax.sub(lax.sub(norm_logpdf(z), _log_gauss_mass(a, b)), lax.log(scale))
    outside = lax.bitwise_or(lax.lt(z, a), lax.gt(z, b))
    return _where(outside, -math.inf, val)


def truncnorm_pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(truncnorm_logpdf(x, a, b, loc, scale))


def truncnorm_logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, a, b, _, _ = _truncnorm_args("truncnorm.logcdf", x, a, b, loc, scale)
    zc = u.clip(z, a, b)
    val = lax.sub(_log_gauss_mass(a, zc), _log_gauss_mass(a, b))
    val = _where(lax.ge(z, b), 0.0, val)
    return _where(lax.le(z, a), -math.inf, val)


def truncnorm_cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(truncnorm_logcdf(x, a, b, loc, scale))


def truncnorm_logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, a, b, _, _ = _truncnorm_args("truncnorm.logsf", x, a, b, loc, scale)
    zc = u.clip(z, a, b)
    val = lax.sub(_log_gauss_mass(zc, b), _log_gauss_mass(a, b))
    val = _where(lax.le(z, a), 0.0, val)
    return _where(lax.ge(z, b), -math.inf, val)


def truncnorm_sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(truncnorm_logsf(x, a, b, loc, scale))


# ---- gumbel_r, gumbel_l -------------------------------------------------------------------------
# With z = (x - loc) / scale, the right-skewed law has log F = -exp(-z) and log S = log(1 - F);
# the left-skewed one is its mirror image (log S = -exp(z)). A scale <= 0 gives NaN, as in JAX.
def _gumbel_z(name: str, x: Any, loc: Any, scale: Any, left: bool) -> tuple[Any, Any, Any]:
    """(z, scale > 0, the promoted scale) with z mirrored for gumbel_l, so both laws share the
    right-skewed forms."""
    x, loc, scale = _inexact(name, x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return (lax.neg(z) if left else z), lax.gt(scale, _c(0.0, scale)), scale


def _gumbel_logpdf(name: str, x: Any, loc: Any, scale: Any, left: bool) -> Any:
    z, ok, scale = _gumbel_z(name, x, loc, scale, left)
    val = lax.sub(xlogy(_c(-1.0, scale), scale), lax.add(z, lax.exp(lax.neg(z))))
    return _where(ok, val, math.nan)


def _gumbel_upper(z: Any) -> Any:
    """log F(z) of the right-skewed law (the lower tail): -exp(-z)."""
    return lax.neg(lax.exp(lax.neg(z)))


def _gumbel_lower(z: Any) -> Any:
    """log(1 - F(z)) of the right-skewed law, accurate where F is near 0 or near 1."""
    return lax.log(lax.neg(lax.expm1(_gumbel_upper(z))))


def gumbel_r_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return _gumbel_logpdf("gumbel_r.logpdf", x, loc, scale, False)


def gumbel_r_pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(gumbel_r_logpdf(x, loc, scale))


def gumbel_r_logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, ok, _ = _gumbel_z("gumbel_r.logcdf", x, loc, scale, False)
    return _where(ok, _gumbel_upper(z), math.nan)


def gumbel_r_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(gumbel_r_logcdf(x, loc, scale))


def gumbel_r_logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, ok, _ = _gumbel_z("gumbel_r.logsf", x, loc, scale, False)
    return _where(ok, _gumbel_lower(z), math.nan)


def gumbel_r_sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(gumbel_r_logsf(x, loc, scale))


def _gumbel_ppf(name: str, q: Any, loc: Any, scale: Any, left: bool) -> Any:
    q, loc, scale = _inexact(name, q, loc, scale)
    inside = lax.bitwise_and(lax.gt(q, _c(0.0, q)), lax.lt(q, _c(1.0, q)))
    # right: loc - scale log(-log q); left: loc + scale log(-log(1 - q))
    t = lax.neg(xlog1py(_c(1.0, q), lax.neg(q)) if left else lax.log(q))
    step = lax.mul(scale, lax.log(t))
    return _where(inside, lax.add(loc, step) if left else lax.sub(loc, step), math.nan)


def gumbel_r_ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return _gumbel_ppf("gumbel_r.ppf", q, loc, scale, False)


def gumbel_l_logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return _gumbel_logpdf("gumbel_l.logpdf", x, loc, scale, True)


def gumbel_l_pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(gumbel_l_logpdf(x, loc, scale))


def gumbel_l_logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, ok, _ = _gumbel_z("gumbel_l.logcdf", x, loc, scale, True)
    return _where(ok, _gumbel_lower(z), math.nan)


def gumbel_l_cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(gumbel_l_logcdf(x, loc, scale))


def gumbel_l_logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, ok, _ = _gumbel_z("gumbel_l.logsf", x, loc, scale, True)
    return _where(ok, _gumbel_upper(z), math.nan)


def gumbel_l_sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(gumbel_l_logsf(x, loc, scale))


def gumbel_l_ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return _gumbel_ppf("gumbel_l.ppf", q, loc, scale, True)


# ---- vonmises, wrapcauchy (circular laws) -------------------------------------------------------
def vonmises_logpdf(x: Any, kappa: Any) -> Any:
    """kappa (cos x - 1) - log(2 pi I0e(kappa)): I0e = exp(-kappa) I0 keeps large kappa finite."""
    x, kappa = _inexact("vonmises.logpdf", x, kappa)
    norm = lax.log(lax.mul(_c(2 * math.pi, kappa), lax_special.bessel_i0e(kappa)))
    val = lax.sub(lax.mul(kappa, lax.sub(lax.cos(x), _c(1.0, x))), norm)
    return _where(lax.gt(kappa, _c(0.0, kappa)), val, math.nan)


def vonmises_pdf(x: Any, kappa: Any) -> Any:
    return lax.exp(vonmises_logpdf(x, kappa))


def wrapcauchy_logpdf(x: Any, c: Any) -> Any:
    """(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)) on [0, 2 pi]; NaN unless 0 < c < 1."""
    x, c = _inexact("wrapcauchy.logpdf", x, c)
    one, c2 = _c(1.0, c), lax.mul(c, c)
    denom = lax.sub(lax.add(one, c2), lax.mul(lax.mul(_c(2.0, c), c), lax.cos(x)))
    val = lax.sub(lax.sub(lax.log(lax.sub(one, c2)), lax.log(_c(2 * math.pi, x))), lax.log(denom))
    on_circle = lax.bitwise_and(lax.ge(x, _c(0.0, x)), lax.le(x, _c(2 * math.pi, x)))
    valid = lax.bitwise_and(lax.gt(c, _c(0.0, c)), lax.lt(c, one))
    return _where(valid, _where(on_circle, val, -math.inf), math.nan)


def wrapcauchy_pdf(x: Any, c: Any) -> Any:
    return lax.exp(wrapcauchy_logpdf(x, c))


# ---- nbinom, betabinom --------------------------------------------------------------------------
def nbinom_logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """log C(y + n - 1, y) + n log p + y log(1 - p), y = k - loc (-inf below loc)."""
    k, n, p, loc = _inexact("nbinom.logpmf", k, n, p, loc)
    y, one = lax.sub(k, loc), _c(1.0, k)
    log_comb = lax.sub(gammaln(lax.add(y, n)), lax.add(gammaln(n), gammaln(lax.add(y, one))))
    val = lax.add(log_comb, lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p))))
    return _where(lax.lt(k, loc), -math.inf, val)


def nbinom_pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    return lax.exp(nbinom_logpmf(k, n, p, loc))


def betabinom_logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """log C(n, y) + log B(y + a, n - y + b) - log B(a, b), y = floor(k) - loc, with
    C(n, y) = 1 / ((n + 1) B(n - y + 1, y + 1)); -inf off the support, NaN for n < 0 or
    a, b <= 0."""
    k, n, a, b, loc = _inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one, zero = _c(1.0, y), _c(0.0, y)
    rest = lax.sub(n, y)
    log_comb = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(rest, one), lax.add(y, one))))
    val = lax.add(log_comb, lax.sub(betaln(lax.add(y, a), lax.add(rest, b)), betaln(a, b)))
    val = _where(lax.bitwise_and(lax.eq(y, zero), lax.eq(n, zero)), 0.0, val)
    off = lax.bitwise_or(
        lax.bitwise_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)), lax.le(lax.add(y, a), zero)
    )
    val = _where(off, -math.inf, val)
    bad = lax.bitwise_or(lax.lt(n, zero), lax.bitwise_or(lax.le(a, zero), lax.le(b, zero)))
    return _where(bad, math.nan, val)


def betabinom_pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    return lax.exp(betabinom_logpmf(k, n, a, b, loc))


# ---- gennorm ------------------------------------------------------------------------------------
def gennorm_logpdf(x: Any, beta: Any) -> Any:
    """The generalized normal law: beta / (2 Gamma(1 / beta)) exp(-|x|^beta)."""
    x, beta = _inexact("gennorm.logpdf", x, beta)
    log_norm = lax.sub(
        lax.log(lax.mul(_c(0.5, beta), beta)), lax.lgamma(lax.div(_c(1.0, beta), beta))
    )
    return lax.sub(log_norm, lax.pow(lax.abs(x), beta))


def gennorm_pdf(x: Any, beta: Any) -> Any:
    return lax.exp(gennorm_logpdf(x, beta))


def gennorm_cdf(x: Any, beta: Any) -> Any:
    """(1 + sign(x) P(1 / beta, |x|^beta)) / 2, P the regularized lower incomplete gamma."""
    x, beta = _inexact("gennorm.cdf", x, beta)
    half_mass = gammainc(lax.div(_c(1.0, beta), beta), lax.pow(lax.abs(x), beta))
    return lax.mul(_c(0.5, x), lax.add(_c(1.0, x), lax.mul(lax.sign(x), half_mass)))


# ---- multinomial --------------------------------------------------------------------------------
def multinomial_logpmf(x: Any, n: Any, p: Any) -> Any:
    """log n! + sum_i (x_i log p_i - log x_i!) over the last axis; -inf unless the counts (all
    of them, as JAX sums them) add up to n. Counts must be integers."""
    (p,) = _inexact("multinomial.logpmf", p)
    util.check_arraylike("multinomial.logpmf", x, n)
    x, n = util.promote_dtypes(x, n)
    xd, nd = util.aval(x).dtype, util.aval(n).dtype
    if xd.kind not in "iu":
        raise ValueError(f"x and n must be of integer type; got x.dtype={xd}, n.dtype={nd}")
    pd = util.aval(p).dtype
    x, n = lax.convert_element_type(x, pd), lax.convert_element_type(n, pd)
    one = _c(1.0, p)
    terms = lax.sub(xlogy(x, p), gammaln(lax.add(x, one)))
    val = lax.add(gammaln(lax.add(n, one)), reductions.sum(terms, axis=-1))
    return _where(lax.eq(reductions.sum(x), n), val, -math.inf)


def multinomial_pmf(x: Any, n: Any, p: Any) -> Any:
    return lax.exp(multinomial_logpmf(x, n, p))
