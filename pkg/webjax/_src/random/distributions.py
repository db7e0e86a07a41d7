"""jax.random's derived distributions: transformations of uniform, normal and gamma draws.

Each sampler applies JAX's transformation to the same underlying draws (`random._uniform_impl`,
`_normal_impl`, `_gamma_impl`, ... are bit-exact with JAX's), with the same key splits, so the
same key gives the same values as JAX up to the rounding of the transcendental ops involved.
binomial is JAX's (TensorFlow's) algorithm: inversion by geometric draws for n p <= 10,
Hormann's BTRS rejection above; multinomial is a scan of conditional binomials.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import core, dtypes
from ..dtypes import DType
from ..jit import jit
from ..lax import control_flow, lax, windowed
from ..numpy import contractions, linalg, ufuncs, util
from .keys import _asarray, _single_key, _split_data
from .samplers import (
    _FINFO,
    _any,
    _bernoulli_impl,
    _broadcast_shapes,
    _canonical,
    _check_shape,
    _const,
    _exponential_impl,
    _float_dtype,
    _fma,
    _full,
    _gamma_impl,
    _normal_impl,
    _param_shape,
    _row,
    _shape_of,
    _to,
    _uniform_impl,
)


def _dtype_or_float(name: str, dtype: Any) -> DType:
    return _float_dtype(name, float if dtype is None else dtype)


def _int_dtype(name: str, dtype: Any) -> DType:
    dt = _canonical(int if dtype is None else dtype)
    if dt.kind not in "iu":
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dt.name}")
    return dt


def _param(x: Any, dt: DType) -> Any:
    """A parameter converted to `dt` (Python scalars are folded to constants of `dt`)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return _const(x, dt)
    return lax.convert_element_type(_asarray(x), dt)


def _keys2(data: Any) -> tuple[Any, Any]:
    ks = _split_data(data, (2,))
    return _row(ks, 0), _row(ks, 1)


def _bshape(x: Any, shape: tuple[int, ...]) -> Any:
    """x broadcast (NumPy rules) to `shape`."""
    return _to(x, core.get_aval(x).dtype, shape)


# ---- continuous ---------------------------------------------------------------------------------
def _lognormal_impl(data: Any, sigma: Any, shape: tuple[int, ...], dt: DType) -> Any:
    return lax.exp(lax.mul(_normal_impl(data, shape, dt), _bshape(_param(sigma, dt), shape)))


_lognormal_jit = jit(_lognormal_impl, static_argnums=(2, 3))


def lognormal(
    key: Any, sigma: Any = 1.0, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """exp(sigma * N(0, 1))."""
    data, _ = _single_key("lognormal", key)
    dt = _dtype_or_float("lognormal", dtype)
    return _lognormal_jit(data, sigma, _param_shape("lognormal", shape, sigma), dt)


def _cauchy_impl(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    eps = 2.0 ** -_FINFO[dt.name][1]
    u = _uniform_impl(data, shape, dt, eps, 1.0)
    return lax.tan(lax.mul(_const(math.pi, dt), lax.sub(u, _const(0.5, dt))))


_cauchy_jit = jit(_cauchy_impl, static_argnums=(1, 2))


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard Cauchy: tan(pi (u - 1/2))."""
    data, _ = _single_key("cauchy", key)
    return _cauchy_jit(data, core.canonicalize_shape(shape), _dtype_or_float("cauchy", dtype))


def _pareto_impl(data: Any, b: Any, shape: tuple[int, ...], dt: DType) -> Any:
    e = _exponential_impl(data, shape, dt)
    return lax.exp(lax.div(e, _bshape(_param(b, dt), shape)))


_pareto_jit = jit(_pareto_impl, static_argnums=(2, 3))


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Pareto(b) on [1, inf): exp(E / b) for E exponential."""
    data, _ = _single_key("pareto", key)
    dt = _dtype_or_float("pareto", dtype)
    return _pareto_jit(data, b, _param_shape("pareto", shape, b), dt)


def _t_impl(data: Any, df: Any, shape: tuple[int, ...], dt: DType) -> Any:
    kn, kg = _keys2(data)
    n = _normal_impl(kn, shape, dt)
    half_df = lax.div(_bshape(_param(df, dt), shape), _const(2.0, dt))
    g = _gamma_impl(kg, half_df, shape, dt, False)
    return lax.mul(n, lax.sqrt(lax.div(half_df, g)))


_t_jit = jit(_t_impl, static_argnums=(2, 3))


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t with `df` degrees of freedom: N sqrt(df / 2 / Gamma(df / 2))."""
    data, _ = _single_key("t", key)
    dt = _dtype_or_float("t", dtype)
    return _t_jit(data, df, _param_shape("t", shape, df), dt)


def _chisquare_impl(data: Any, df: Any, shape: tuple[int, ...], dt: DType) -> Any:
    half_df = lax.div(_bshape(_param(df, dt), shape), _const(2.0, dt))
    log_g = _gamma_impl(data, half_df, shape, dt, True)
    return lax.mul(lax.exp(log_g), _const(2.0, dt))


_chisquare_jit = jit(_chisquare_impl, static_argnums=(2, 3))


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Chi-square with `df` degrees of freedom: 2 Gamma(df / 2) (drawn in log space)."""
    data, _ = _single_key("chisquare", key)
    dt = _dtype_or_float("chisquare", dtype)
    return _chisquare_jit(data, df, _param_shape("chisquare", shape, df), dt)


def _f_impl(data: Any, dfnum: Any, dfden: Any, shape: tuple[int, ...], dt: DType) -> Any:
    dfden = _bshape(_param(dfden, dt), shape)
    dfnum = _bshape(_param(dfnum, dt), shape)
    k_den, k_num = _keys2(data)
    num = lax.div(_chisquare_impl(k_num, dfnum, shape, dt), dfnum)
    den = lax.div(_chisquare_impl(k_den, dfden, shape, dt), dfden)
    return lax.div(num, den)


_f_jit = jit(_f_impl, static_argnums=(3, 4))


def f(
    key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """F(dfnum, dfden): a ratio of scaled chi-square draws."""
    data, _ = _single_key("f", key)
    dt = _dtype_or_float("f", dtype)
    return _f_jit(data, dfnum, dfden, _param_shape("f", shape, dfnum, dfden), dt)


def _rademacher_impl(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    b = lax.convert_element_type(_bernoulli_impl(data, 0.5, shape, dtypes.default_float()), dt)
    return lax.sub(lax.mul(_full(shape, 2, dt), b), _full(shape, 1, dt))


_rademacher_jit = jit(_rademacher_impl, static_argnums=(1, 2))


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """-1 or +1 with equal probability."""
    data, _ = _single_key("rademacher", key)
    dt = _canonical(int if dtype is None else dtype)
    return _rademacher_jit(data, core.canonicalize_shape(shape), dt)


def _maxwell_impl(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    n = _normal_impl(data, (*shape, 3), dt)
    return lax.sqrt(lax.reduce_sum(lax.mul(n, n), (len(shape),)))


_maxwell_jit = jit(_maxwell_impl, static_argnums=(1, 2))


def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """One-sided Maxwell: the norm of a 3-d standard normal vector."""
    data, _ = _single_key("maxwell", key)
    return _maxwell_jit(data, core.canonicalize_shape(shape), _dtype_or_float("maxwell", dtype))


def _dsm_impl(data: Any, loc: Any, scale: Any, shape: tuple[int, ...], dt: DType) -> Any:
    k_max, k_rad = _keys2(data)
    m = _maxwell_impl(k_max, shape, dt)
    sign = _rademacher_impl(k_rad, shape, dt)
    return _fma(
        lax.mul(sign, m), _bshape(_param(scale, dt), shape), _bshape(_param(loc, dt), shape)
    )


_dsm_jit = jit(_dsm_impl, static_argnums=(3, 4))


def double_sided_maxwell(
    key: Any, loc: Any, scale: Any, shape: Sequence[int] = (), dtype: Any = None
) -> Any:
    """Double-sided Maxwell around `loc` with `scale`; the result shape is shape + the
    broadcast shape of loc and scale (shape defaults to the latter alone)."""
    data, _ = _single_key("double_sided_maxwell", key)
    dt = _dtype_or_float("double_sided_maxwell", dtype)
    pshape = _broadcast_shapes(_shape_of(loc), _shape_of(scale))
    shape = core.canonicalize_shape(shape)
    full = (*shape, *pshape) if shape else pshape
    return _dsm_jit(data, loc, scale, full, dt)


def _weibull_impl(data: Any, scale: Any, conc: Any, shape: tuple[int, ...], dt: DType) -> Any:
    u = _uniform_impl(data, shape, dt, 0.0, 1.0)
    if isinstance(conc, (int, float)) and not isinstance(conc, bool):
        inv = _const(1.0 / conc, dt)  # JAX divides Python scalars in double precision
    else:
        inv = lax.div(_const(1.0, dt), _param(conc, dt))
    out_shape = _broadcast_shapes(shape, _shape_of(inv), _shape_of(scale))
    base = _bshape(lax.neg(lax.log1p(lax.neg(u))), out_shape)
    return lax.mul(lax.pow(base, _bshape(inv, out_shape)), _bshape(_param(scale, dt), out_shape))


_weibull_jit = jit(_weibull_impl, static_argnums=(3, 4))


def weibull_min(
    key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (), dtype: Any = None
) -> Any:
    """Weibull(scale, concentration) by inverting the CDF: scale (-log(1 - u))^(1/c)."""
    data, _ = _single_key("weibull_min", key)
    dt = _dtype_or_float("weibull_min", dtype)
    return _weibull_jit(data, scale, concentration, core.canonicalize_shape(shape), dt)


def _rayleigh_impl(data: Any, scale: Any, shape: tuple[int, ...], dt: DType) -> Any:
    u = _uniform_impl(data, shape, dt, 0.0, 1.0)
    s = _bshape(_param(scale, dt), shape)
    return lax.mul(s, lax.sqrt(lax.mul(lax.log(u), _const(-2.0, dt))))


_rayleigh_jit = jit(_rayleigh_impl, static_argnums=(2, 3))


def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Rayleigh(scale): scale sqrt(-2 log u)."""
    data, _ = _single_key("rayleigh", key)
    dt = _dtype_or_float("rayleigh", dtype)
    return _rayleigh_jit(data, scale, _param_shape("rayleigh", shape, scale), dt)


def _wald_impl(data: Any, mean: Any, shape: tuple[int, ...], dt: DType) -> Any:
    k1, k2 = _keys2(data)
    mean = _bshape(_param(mean, dt), shape)
    v = _normal_impl(k1, shape, dt)
    z = _uniform_impl(k2, shape, dt, 0.0, 1.0)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(
        lax.add(lax.mul(lax.mul(_const(4.0, dt), mean), y), lax.mul(mean_sq, y_sq))
    )
    half = _const(2.0, dt)
    x = lax.sub(
        lax.add(mean, lax.div(lax.mul(mean_sq, y), half)), lax.mul(lax.div(mean, half), sqrt_term)
    )
    return lax.select(lax.le(z, lax.div(mean, lax.add(mean, x))), x, lax.div(mean_sq, x))


_wald_jit = jit(_wald_impl, static_argnums=(2, 3))


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) with the given mean (Michael-Schucany-Haas)."""
    data, _ = _single_key("wald", key)
    dt = _dtype_or_float("wald", dtype)
    return _wald_jit(data, mean, _param_shape("wald", shape, mean), dt)


def _triangular_impl(
    data: Any, left: Any, mode: Any, right: Any, shape: tuple[int, ...], dt: DType
) -> Any:
    left = _bshape(_param(left, dt), shape)
    right = _bshape(_param(right, dt), shape)
    mode = _bshape(_param(mode, dt), shape)
    fc = lax.div(lax.sub(mode, left), lax.sub(right, left))
    u = _uniform_impl(data, shape, dt, 0.0, 1.0)
    width = lax.sub(right, left)
    out1 = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    one_minus = lax.sub(_const(1.0, dt), u)
    out2 = lax.sub(right, lax.sqrt(lax.mul(lax.mul(one_minus, width), lax.sub(right, mode))))
    return lax.select(lax.lt(u, fc), out1, out2)


_triangular_jit = jit(_triangular_impl, static_argnums=(4, 5))


def triangular(
    key: Any,
    left: Any,
    mode: Any,
    right: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
) -> Any:
    """Triangular(left, mode, right) by inverting the CDF."""
    data, _ = _single_key("triangular", key)
    dt = _dtype_or_float("triangular", dtype)
    shape = _param_shape("triangular", shape, left, mode, right)
    return _triangular_jit(data, left, mode, right, shape, dt)


def _gennorm_impl(data: Any, p: Any, shape: tuple[int, ...], dt: DType) -> Any:
    k_g, k_r = _keys2(data)
    if isinstance(p, (int, float)) and not isinstance(p, bool):
        inv = _const(1.0 / p, dt)
    else:
        inv = lax.div(_const(1.0, dt), _param(p, dt))
    g = _gamma_impl(k_g, inv, shape, dt, False)
    r = _rademacher_impl(k_r, shape, dt)
    return lax.mul(r, lax.pow(g, _bshape(inv, shape)))


_gennorm_jit = jit(_gennorm_impl, static_argnums=(2, 3))


def generalized_normal(key: Any, p: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Generalized normal with density proportional to exp(-|x|^p)."""
    data, _ = _single_key("generalized_normal", key)
    dt = _dtype_or_float("generalized_normal", dtype)
    shape = core.canonicalize_shape(shape)
    _check_shape("generalized_normal", shape, _shape_of(p))
    return _gennorm_jit(data, p, shape, dt)


def _ball_impl(data: Any, p: Any, d: int, shape: tuple[int, ...], dt: DType) -> Any:
    k1, k2 = _keys2(data)
    g = _gennorm_impl(k1, p, (*shape, d), dt)
    e = _exponential_impl(k2, shape, dt)
    if isinstance(p, (int, float)) and not isinstance(p, bool):
        pp, inv = _const(p, dt), _const(1.0 / p, dt)
    else:
        pp = _param(p, dt)
        inv = lax.div(_const(1.0, dt), pp)
    powed = lax.pow(lax.abs(g), _bshape(pp, (*shape, d)))
    r = lax.pow(lax.add(lax.reduce_sum(powed, (len(shape),)), e), _bshape(inv, shape))
    return lax.div(g, lax.broadcast_in_dim(r, (*shape, d), tuple(range(len(shape)))))


_ball_jit = jit(_ball_impl, static_argnums=(2, 3, 4))


def ball(key: Any, d: int, p: Any = 2, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform points in the unit Lp ball of dimension d (Barthe et al.)."""
    data, _ = _single_key("ball", key)
    dt = _dtype_or_float("ball", dtype)
    d = core.concrete_or_error(int, d, "The error occurred in jax.random.ball()")
    return _ball_jit(data, p, d, core.canonicalize_shape(shape), dt)


def _orthogonal_impl(data: Any, n: int, m: int, shape: tuple[int, ...], dt: DType) -> Any:
    z = _normal_impl(data, (*shape, max(n, m), min(n, m)), dt)
    q, r = linalg.qr(z)
    d = linalg.diagonal(r)
    k = min(n, m)
    sign = lax.broadcast_in_dim(
        lax.sign(d), (*shape, max(n, m), k), (*range(len(shape)), len(shape) + 1)
    )
    x = lax.mul(q, sign)
    if n < m:
        nd = len(shape)
        x = lax.transpose(x, (*range(nd), nd + 1, nd))
    return x


_orthogonal_jit = jit(_orthogonal_impl, static_argnums=(1, 2, 3, 4))


def orthogonal(
    key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None, m: int | None = None
) -> Any:
    """A matrix uniform on O(n) (semi-orthogonal n x m when m is given): the Q of a normal
    matrix's QR factorization, signs fixed by R's diagonal (Mezzadri)."""
    data, _ = _single_key("orthogonal", key)
    dt = _dtype_or_float("orthogonal", dtype)
    n = core.concrete_or_error(int, n, "The error occurred in jax.random.orthogonal()")
    m = (
        n
        if m is None
        else core.concrete_or_error(int, m, "The error occurred in jax.random.orthogonal()")
    )
    return _orthogonal_jit(data, n, m, core.canonicalize_shape(shape), dt)


def _mvn_impl(
    data: Any, mean: Any, cov: Any, shape: tuple[int, ...], dt: DType, method: str
) -> Any:
    n = core.get_aval(mean).shape[-1]
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = lax.mul(
            u,
            lax.broadcast_in_dim(
                lax.sqrt(s),
                core.get_aval(u).shape,
                (*range(core.get_aval(s).ndim - 1), core.get_aval(u).ndim - 1),
            ),
        )
    elif method == "eigh":
        w, v = linalg.eigh(cov)
        factor = lax.mul(
            v,
            lax.broadcast_in_dim(
                lax.sqrt(w),
                core.get_aval(v).shape,
                (*range(core.get_aval(w).ndim - 1), core.get_aval(v).ndim - 1),
            ),
        )
    else:
        factor = linalg.cholesky(cov)
    z = _normal_impl(data, (*shape, n), dt)
    return ufuncs.add(mean, contractions.einsum("...ij,...j->...i", factor, z))


_mvn_jit = jit(_mvn_impl, static_argnums=(3, 4, 5))


def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    method: str = "cholesky",
) -> Any:
    """Normal vectors with the given mean and covariance: mean + factor @ z, factor from a
    Cholesky (default), eigh or svd factorization of cov."""
    data, _ = _single_key("multivariate_normal", key)
    mean, cov = _promote_pair(mean, cov)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dt = core.get_aval(mean).dtype if dtype is None else _canonical(dtype)
    if dt.kind != "f":
        raise ValueError(
            f"dtype argument to `multivariate_normal` must be a float dtype, got {dt.name}"
        )
    ms, cs = core.get_aval(mean).shape, core.get_aval(cov).shape
    if len(ms) < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {len(ms)}")
    if len(cs) < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {len(cs)}")
    n = ms[-1]
    if cs[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {cs}."
        )
    if shape is None:
        shape = _broadcast_shapes(ms[:-1], cs[:-2])
    else:
        shape = core.canonicalize_shape(shape)
        _check_shape("normal", shape, ms[:-1], cs[:-2])
    return _mvn_jit(data, mean, cov, shape, dt, method)


def _promote_pair(mean: Any, cov: Any) -> tuple[Any, Any]:
    """mean and cov in their common float dtype (JAX's promote_dtypes_inexact; no broadcast)."""
    mean, cov = _asarray(mean), _asarray(cov)
    dt, weak = util.result_type(mean, cov)
    if dt.kind != "f":
        dt, weak = dtypes.default_float(), False
    return util.convert(mean, dt, weak), util.convert(cov, dt, weak)


# ---- discrete -----------------------------------------------------------------------------------
def _geometric_impl(data: Any, p: Any, shape: tuple[int, ...], dt: DType) -> Any:
    p = _asarray(p) if not isinstance(p, (int, float)) else p
    pdt = dtypes.default_float() if isinstance(p, (int, float)) else core.get_aval(p).dtype
    if pdt.kind != "f":
        pdt = dtypes.default_float()
    u = _uniform_impl(data, shape, pdt, 0.0, 1.0)
    u = lax.select(lax.eq(u, _full(shape, 0.0, pdt)), _full(shape, 1.0, pdt), u)
    log_u = lax.log(u)
    log_q = _bshape(lax.log1p(lax.neg(_param(p, pdt))), shape)
    g = lax.add(lax.floor(lax.div(log_u, log_q)), _full(shape, 1.0, pdt))
    return lax.convert_element_type(g, dt)


_geometric_jit = jit(_geometric_impl, static_argnums=(2, 3))


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Number of Bernoulli(p) trials up to the first success (>= 1)."""
    data, _ = _single_key("geometric", key)
    dt = _int_dtype("geometric", dtype)
    return _geometric_jit(data, p, _param_shape("geometric", shape, p), dt)


# log(k!) minus Stirling's approximation, for k = 0..9 (computed, not tabulated by hand)
_STIRLING_TAIL = tuple(
    math.lgamma(k + 1) - ((k + 0.5) * math.log(k + 1) - (k + 1) + 0.5 * math.log(2 * math.pi))
    for k in range(10)
)


def _stirling_tail(k: Any) -> Any:
    """JAX's table-or-series correction; as JAX, the series is evaluated at min(k, 9)."""
    dt = core.get_aval(k).dtype
    shape = core.get_aval(k).shape
    c = lambda v: _full(shape, v, dt)
    use_table = lax.le(k, c(9.0))
    kc = lax.clamp(c(0.0), k, c(9.0))
    kp1 = lax.add(kc, c(1.0))
    kp1sq = lax.mul(kp1, kp1)
    inner = lax.sub(c(1.0 / 360), lax.div(c(1.0 / 1260), kp1sq))
    approx = lax.div(lax.sub(c(1.0 / 12), lax.div(inner, kp1sq)), kp1)
    kf = lax.floor(kc)
    table = c(_STIRLING_TAIL[9])
    for i in range(8, -1, -1):
        table = lax.select(lax.eq(kf, c(float(i))), c(_STIRLING_TAIL[i]), table)
    return lax.select(use_table, table, approx)


def _binomial_inversion(data: Any, count: Any, prob: Any, shape: tuple[int, ...], dt: DType) -> Any:
    pdt = core.get_aval(prob).dtype
    log1m_p = lax.log1p(lax.neg(prob))
    max_iters = _const(float(2**31 - 1), pdt)

    def cond(state: Any) -> Any:
        i, _, geom_sum, _ = state
        return lax.bitwise_and(_any(lax.le(geom_sum, count)), lax.lt(i, max_iters))

    def body(state: Any) -> Any:
        i, num_geom, geom_sum, k = state
        sub, k = _keys2(k)
        num_geom = lax.select(
            lax.le(geom_sum, count), lax.add(num_geom, _full(shape, 1.0, pdt)), num_geom
        )
        u = _uniform_impl(sub, shape, pdt, 0.0, 1.0)
        geom = lax.ceil(lax.div(lax.log(u), log1m_p))
        return lax.add(i, _const(1.0, pdt)), num_geom, lax.add(geom_sum, geom), k

    init = (_const(0.0, pdt), _full(shape, 0.0, pdt), _full(shape, 0.0, pdt), data)
    k = control_flow.while_loop(cond, body, init)[1]
    return lax.convert_element_type(lax.sub(k, _full(shape, 1.0, pdt)), dt)


def _btrs(data: Any, count: Any, prob: Any, shape: tuple[int, ...], dt: DType) -> Any:
    """Hormann's transformed rejection with squeeze for binomials (BTRS)."""
    pdt = core.get_aval(prob).dtype
    c_ = lambda v: _full(shape, v, pdt)
    one = c_(1.0)
    stddev = lax.sqrt(lax.mul(lax.mul(count, prob), lax.sub(one, prob)))
    b = _fma(c_(2.53), stddev, c_(1.15))
    a = _fma(c_(0.01), prob, _fma(c_(0.0248), b, c_(-0.0873)))
    c = _fma(count, prob, c_(0.5))
    v_r = lax.sub(c_(0.92), lax.div(c_(4.2), b))
    r = lax.div(prob, lax.sub(one, prob))
    alpha = lax.mul(lax.add(c_(2.83), lax.div(c_(5.1), b)), stddev)
    m = lax.floor(lax.mul(lax.add(count, one), prob))
    max_iters = _const(float(2**31 - 1), pdt)
    tails_m = lax.add(_stirling_tail(m), _stirling_tail(lax.sub(count, m)))
    log_m = lax.log(lax.div(lax.add(m, one), lax.mul(r, lax.add(lax.sub(count, m), one))))
    half = c_(0.5)

    def cond(state: Any) -> Any:
        i, _, accepted, _ = state
        return lax.bitwise_and(_any(lax.bitwise_not(accepted)), lax.lt(i, max_iters))

    def body(state: Any) -> Any:
        i, k_out, accepted, key = state
        ks = _split_data(key, (3,))
        key = _row(ks, 0)
        u = lax.sub(_uniform_impl(_row(ks, 1), shape, pdt, 0.0, 1.0), half)
        v = _uniform_impl(_row(ks, 2), shape, pdt, 0.0, 1.0)
        us = lax.sub(half, lax.abs(u))
        accept1 = lax.bitwise_and(lax.ge(us, c_(0.07)), lax.le(v, v_r))
        k = lax.floor(_fma(lax.add(lax.div(lax.mul(c_(2.0), a), us), b), u, c))
        reject = lax.bitwise_or(lax.lt(k, c_(0.0)), lax.gt(k, count))
        v = lax.log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        cmk1 = lax.add(lax.sub(count, k), one)
        ub = lax.add(
            lax.add(
                lax.mul(lax.add(m, half), log_m),
                lax.mul(
                    lax.add(count, one), lax.log(lax.div(lax.add(lax.sub(count, m), one), cmk1))
                ),
            ),
            lax.mul(lax.add(k, half), lax.log(lax.div(lax.mul(r, cmk1), lax.add(k, one)))),
        )
        ub = lax.sub(
            lax.sub(lax.add(ub, tails_m), _stirling_tail(k)), _stirling_tail(lax.sub(count, k))
        )
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v, ub)))
        k_out = lax.select(accept, k, k_out)
        return lax.add(i, _const(1.0, pdt)), k_out, lax.bitwise_or(accepted, accept), key

    init = (_const(0.0, pdt), c_(-1.0), _full(shape, False, dtypes.bool_), data)
    return lax.convert_element_type(control_flow.while_loop(cond, body, init)[1], dt)


def _binomial_impl(data: Any, n: Any, p: Any, shape: tuple[int, ...], dt: DType) -> Any:
    p = _asarray(p) if not isinstance(p, (int, float)) else p
    pdt = dtypes.default_float() if isinstance(p, (int, float)) else core.get_aval(p).dtype
    if pdt.kind != "f":
        pdt = dtypes.default_float()
    c_ = lambda v: _full(shape, v, pdt)
    prob = _bshape(_param(p, pdt), shape)
    count = _bshape(_param(n, pdt), shape)
    p_lt_half = lax.lt(prob, c_(0.5))
    q = lax.select(p_lt_half, prob, lax.sub(c_(1.0), prob))
    count_bad = lax.bitwise_or(lax.ne(count, count), lax.lt(count, c_(0.0)))
    count_inf = lax.eq(lax.abs(count), c_(math.inf))
    q_nan = lax.ne(q, q)
    q_neg = lax.lt(q, c_(0.0))
    q = lax.select(lax.bitwise_or(q_nan, q_neg), c_(0.01), q)
    use_inversion = lax.bitwise_or(count_bad, lax.le(lax.mul(count, q), c_(10.0)))
    count = lax.floor(count)
    count_inv = lax.select(use_inversion, count, c_(0.0))
    count_btrs = lax.select(use_inversion, c_(1e4), count)
    q_btrs = lax.select(use_inversion, c_(0.5), q)
    samples = lax.select(
        use_inversion,
        _binomial_inversion(data, count_inv, q, shape, dt),
        _btrs(data, count_btrs, q_btrs, shape, dt),
    )
    invalid = lax.bitwise_or(lax.bitwise_or(q_neg, q_nan), count_bad)
    samples = lax.select(invalid, _full(shape, math.nan, dt), samples)
    samples = lax.select(
        lax.bitwise_and(count_inf, lax.bitwise_not(invalid)), _full(shape, math.inf, dt), samples
    )
    keep = lax.bitwise_or(lax.bitwise_or(p_lt_half, count_bad), lax.bitwise_or(q_nan, count_inf))
    return lax.select(keep, samples, lax.sub(lax.convert_element_type(count, dt), samples))


_binomial_jit = jit(_binomial_impl, static_argnums=(3, 4))


def binomial(
    key: Any, n: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """Binomial(n, p) counts, as floats: inversion for n p <= 10, BTRS rejection above."""
    data, _ = _single_key("binomial", key)
    dt = _dtype_or_float("binomial", dtype)
    shape = _param_shape("binomial", shape, n, p)
    return _binomial_jit(data, n, p, shape, dt)


def multinomial(
    key: Any,
    n: Any,
    p: Any,
    *,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    unroll: Any = 1,
) -> Any:
    """Counts of n draws over the categories of p (last axis): conditional binomials."""
    data, _ = _single_key("multinomial", key)
    p = _asarray(p)
    pa = core.get_aval(p)
    fdt = dtypes.result_type(
        (pa.dtype, pa.weak_type),
        (dtypes.default_float(), True)
        if isinstance(n, (int, float))
        else (core.get_aval(_asarray(n)).dtype, core.get_aval(_asarray(n)).weak_type),
    )[0]
    if fdt.kind != "f":
        fdt = dtypes.default_float()
    out_dt = fdt if dtype is None else _canonical(dtype)
    shape = pa.shape if shape is None else core.canonicalize_shape(shape)
    if not shape:
        raise ValueError("multinomial: p must have at least one dimension (the categories)")
    p = lax.convert_element_type(p, fdt)
    try:
        nn = _to(n, fdt, shape[:-1])
        p = _to(p, fdt, shape)
    except ValueError:
        raise ValueError(
            f"Incompatible types for broadcasting: input type={fdt.name}{list(pa.shape)} and "
            f"requested type={fdt.name}{list(shape)}"
        ) from None
    nd = len(shape)
    p = lax.transpose(p, (nd - 1, *range(nd - 1)))
    remaining = windowed.cumsum(p, 0, reverse=True)
    zero = _full(core.get_aval(remaining).shape, 0.0, fdt)
    one = _full(core.get_aval(remaining).shape, 1.0, fdt)
    ratios = lax.div(p, lax.select(lax.eq(remaining, zero), one, remaining))
    keys = _split_data(data, (shape[-1],))
    batch = shape[:-1]

    def step(remainder: Any, rk: Any) -> Any:
        ratio, k = rk
        ratio = lax.clamp(_const(0.0, fdt), ratio, _const(1.0, fdt))
        count = _binomial_impl(k, remainder, ratio, batch, fdt)
        return lax.sub(remainder, count), count

    _, counts = control_flow.scan(step, nn, (ratios, keys), unroll=unroll)
    counts = lax.transpose(counts, (*range(1, nd), 0))
    return lax.convert_element_type(counts, out_dt)


__all__ = [
    "ball",
    "binomial",
    "cauchy",
    "chisquare",
    "double_sided_maxwell",
    "f",
    "generalized_normal",
    "geometric",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "orthogonal",
    "pareto",
    "rademacher",
    "rayleigh",
    "t",
    "triangular",
    "wald",
    "weibull_min",
]
