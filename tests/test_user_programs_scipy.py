"""jax.scipy (special, stats, linalg), jnp.linalg, jax.nn and jax.core as real user programs use
them, differentially tested against real JAX: values, dtypes, weak types, shapes and exception
types, on every backend.

Each case is a function of the modules (jnp, lax, jax) run once with webjax and once with JAX;
the results (arrays, or nested tuples/lists of them, or Python values) must agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jax_compare
import webjax
import webjax.core
import webjax.nn.initializers
import webjax.numpy as wjnp
import webjax.scipy.linalg
import webjax.scipy.special
import webjax.scipy.stats
from webjax import lax as wlax

jax = pytest.importorskip("jax")
rjnp = pytest.importorskip("jax.numpy")
rlax = pytest.importorskip("jax.lax")
pytest.importorskip("jax.scipy.special")
pytest.importorskip("jax.scipy.stats")
pytest.importorskip("jax.scipy.linalg")
pytest.importorskip("jax.nn.initializers")
pytest.importorskip("jax.core")

pytestmark = pytest.mark.filterwarnings("ignore:Explicitly requested dtype")

WJ = (wjnp, wlax, webjax)
JX = (rjnp, rlax, jax)

SUITE = jax_compare.Cases(WJ, JX, rtol=1e-4, atol=1e-5, warnings_too=False)
case = SUITE.case


def sp(jx):
    return jx.scipy.special


def st(jx):
    return jx.scipy.stats


def sl(jx):
    return jx.scipy.linalg


def weak1d(jnp):
    """A weakly typed 1-d float array (an int array times a Python float)."""
    return jnp.arange(3) * 0.25 + 0.1


# ---- jax.scipy.special: weak types ----------------------------------------------------------
@case
def special_python_scalars_give_weak_results(jnp, lax, jx):
    s = sp(jx)
    return (
        s.betaln(1.0, 2.0),
        s.logit(0.3),
        s.expit(2),
        s.xlogy(2, 3),
        s.xlog1py(0.0, -1.0),
        s.entr(2),
        s.i0e(1),
        s.i1e(0.5),
        s.gammainc(2, 1.0),
        s.gammaincc(2.0, 1.0),
        s.polygamma(1, 2.0),
        s.factorial(4),
        s.comb(5.0, 2.0),
        s.comb(5, 2, repetition=True),
        s.zeta(2.0, 1.0),
        s.kl_div(0.5, 0.3),
        s.rel_entr(0.5, 0.3),
        s.betainc(2.0, 3.0, 0.5),
    )


@case
def special_strong_results_of_python_scalars(jnp, lax, jx):
    s = sp(jx)  # JAX's formulas here build strong constants
    return s.gammasgn(2.0), s.gamma(2.0), s.beta(2.0, 3.0), s.poch(3.0, 2.0), s.erfcx(0.5)


@case
def special_weak_1d_arrays(jnp, lax, jx):
    s, w = sp(jx), weak1d(jnp)
    return (
        s.betaln(w, w),
        s.factorial(w),
        s.comb(w + 3, w),
        s.kl_div(w, w),
        s.rel_entr(w, w),
        s.logit(w),
        s.xlogy(w, w),
        s.entr(w),
        s.i0e(w),
        s.gammainc(w, w),
        s.zeta(w + 2, w),
    )


@case
def lax_special_functions_keep_weak_types(jnp, lax, jx):
    w = jnp.asarray(1.5)
    return (
        lax.bessel_i0e(w),
        lax.bessel_i1e(w),
        lax.igamma(w, w),
        lax.igammac(w, w),
        lax.polygamma(w, w),
        lax.zeta(w, w),
        lax.betainc(w, w, lax.mul(w, 0.1)),
        lax.random_gamma_grad(w, w),
        lax.igamma_grad_a(w, w),
        lax.bessel_i0e(jnp.array([1.5])),
        lax.igamma(w, jnp.array([1.0, 2.0])),
    )


# ---- jax.scipy.special: values and errors ---------------------------------------------------
@case
def logsumexp_with_negative_b_is_nan_without_return_sign(jnp, lax, jx):
    s = sp(jx)
    a = jnp.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
    b = jnp.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]])
    return (
        s.logsumexp(a, b=b, axis=1),
        s.logsumexp(a, b=b, axis=1, return_sign=True),
        s.logsumexp(a, b=b),
        s.logsumexp(a, b=jnp.abs(b), axis=0, keepdims=True),
        s.logsumexp(jnp.array([1.0, 1.0]), b=jnp.array([1.0, -1.0]), return_sign=True),
    )


@case
def ndtr_family_values(jnp, lax, jx):
    s = sp(jx)
    x = jnp.array([-3.5, -1.0, 0.0, 0.3, 1.7, 4.0])
    p = jnp.array([0.0, 1e-6, 0.1, 0.5, 0.9, 1.0])
    return s.ndtr(x), s.ndtri(p), s.log_ndtr(jnp.array([-10.0, -3.0, 0.0, 3.0])), s.ndtr(1.0)


@case
def ndtri_tails_keep_relative_accuracy(jnp, lax, jx):
    p = jnp.array([1e-30, 1e-20, 1e-10, 1e-6, 1e-3, 0.02, 0.5, 0.97, 0.999, 1 - 1e-6])
    edges = jnp.array([0.0, 1.0, -0.1, 1.1, jnp.nan])
    grads = jx.vmap(jx.grad(sp(jx).ndtri))(jnp.array([0.0, 1.0, 0.5, 1e-6, 0.3]))
    return sp(jx).ndtri(p), sp(jx).ndtri(edges), grads


@case
def log_ndtr_tails_and_gradient(jnp, lax, jx):
    x = jnp.array([-100.0, -40.0, -20.0, -10.0, -5.0, -1.0, 0.0, 3.0, 5.0, 10.0])
    g = jx.vmap(jx.grad(sp(jx).log_ndtr))(x[1:])
    return sp(jx).log_ndtr(x), g, st(jx).norm.logcdf(x), st(jx).norm.logsf(-x)


@case
def ndtr_of_int_is_type_error(jnp, lax, jx):
    return sp(jx).ndtr(jnp.arange(3))


@case
def ndtr_of_python_int_is_type_error(jnp, lax, jx):
    return sp(jx).ndtr(1)


@case
def ndtri_of_float16_is_type_error(jnp, lax, jx):
    return sp(jx).ndtri(jnp.array([0.5], jnp.float16))


@case
def log_ndtr_of_bfloat16_is_type_error(jnp, lax, jx):
    return sp(jx).log_ndtr(jnp.array([0.5], jnp.bfloat16))


@case
def norm_cdf_of_float16_is_type_error(jnp, lax, jx):
    return st(jx).norm.cdf(jnp.ones(2, jnp.float16))


@case
def sph_harm_y_values(jnp, lax, jx):
    s = sp(jx)
    r = np.random.RandomState(0)
    n = jnp.asarray(r.randint(0, 9, 40))
    m = jnp.clip(jnp.asarray(r.randint(-8, 9, 40)), -n, n)
    th = jnp.asarray(r.uniform(0, 3.14, 40).astype(np.float32))
    ph = jnp.asarray(r.uniform(-3, 3, 40).astype(np.float32))
    return (
        s.sph_harm_y(n, m, th, ph, n_max=8),
        s.sph_harm_y(
            jnp.array([1, 2]), jnp.array([0, 1]), jnp.array([-0.3, 4.0]), jnp.array([0.2, 0.2])
        ),
        s.sph_harm_y(jnp.arange(3), jnp.zeros(3, int), jnp.array([0.5]), jnp.array([0.2])),
        jx.jit(lambda n: s.sph_harm_y(n, jnp.zeros(2, int), th[:2], ph[:2], n_max=8))(n[:2]),
        jx.grad(lambda t: s.sph_harm_y(jnp.array([2]), jnp.array([1]), t, ph[:1]).real.sum())(
            th[:1]
        ),
    )


@case
def sph_harm_y_diff_n_not_implemented(jnp, lax, jx):
    return sp(jx).sph_harm_y(jnp.array([1]), jnp.array([0]), jnp.ones(1), jnp.ones(1), diff_n=1)


@case
def sph_harm_y_traced_n_needs_n_max(jnp, lax, jx):
    f = lambda n: sp(jx).sph_harm_y(n, jnp.zeros(2, int), jnp.ones(2), jnp.ones(2))
    return jx.jit(f)(jnp.array([1, 3]))


# ---- jax.scipy.stats ------------------------------------------------------------------------
@case
def stats_python_scalars_give_weak_results(jnp, lax, jx):
    s = st(jx)
    return (
        s.norm.pdf(0.5),
        s.norm.logpdf(1.0, loc=1, scale=2),
        s.t.pdf(0.5, 2),
        s.t.logpdf(0.5, 2.0),
        s.poisson.logpmf(2, 3.0),
        s.bernoulli.ppf(0.5, 0.3),
        s.cauchy.logpdf(1.0),
        s.expon.cdf(1.0),
        s.gamma.logpdf(1.0, 2.0),
    )


@case
def stats_weak_1d_arrays(jnp, lax, jx):
    s, w = st(jx), weak1d(jnp)
    return (
        s.beta.cdf(w, 2.0, 3.0),
        s.gamma.cdf(w, 2.0),
        s.gamma.logcdf(w, 2.0),
        s.pareto.sf(w + 1, 2.0),
        s.pareto.logsf(w + 1, 2.0),
        s.poisson.logpmf(w * 0 + 1.0, 2.0),
        s.poisson.pmf(jnp.arange(4), 0.0),
        s.binom.logpmf(w * 0 + 1.0, 5.0, 0.3),
        s.uniform.cdf(w),
        s.uniform.cdf(0.5),
        s.norm.logpdf(w),
    )


@case
def bernoulli_ppf_dtype_and_weak_type(jnp, lax, jx):
    s = st(jx).bernoulli
    q = jnp.array([0.0, 0.5, 0.8, 1.0])
    return (
        s.ppf(q, 0.3),
        s.ppf(0.5, 0.3),
        s.ppf(q.astype(jnp.float16), jnp.float16(0.3)),
        s.ppf(jnp.array([-0.1, 1.1]), 0.3),
        s.logpmf(jnp.array([-1, 0, 1, 2]), 0.3),
    )


@case
def dirichlet_logpdf_and_pdf(jnp, lax, jx):
    s = st(jx).dirichlet
    a = jnp.array([1.0, 2.0, 3.0])
    return (
        s.logpdf(jnp.array([0.2, 0.3, 0.5]), a),
        s.pdf(jnp.array([0.2, 0.3, 0.5]), a),
        s.logpdf(jnp.array([[0.2, 0.1], [0.3, 0.4], [0.5, 0.5]]), a),
        s.logpdf(jnp.array([0.2, 0.3]), a),  # the last coordinate implied
        s.logpdf(jnp.array([0.2, 0.3, 0.6]), a),  # off the simplex
        s.logpdf(jnp.array([0.0, 0.5, 0.5]), a),  # on its boundary
        s.logpdf(jnp.array([-0.1, 0.6, 0.5]), a),
        s.logpdf(jnp.array([0.25, 0.75]), jnp.arange(2) * 0.5 + 1),
        s.logpdf(jnp.ones((3, 2, 4)) / 3, a),
    )


@case
def dirichlet_alpha_must_be_1d(jnp, lax, jx):
    return st(jx).dirichlet.logpdf(jnp.ones(2) / 2, jnp.ones((2, 2)))


@case
def dirichlet_x_of_wrong_length(jnp, lax, jx):
    return st(jx).dirichlet.logpdf(jnp.ones(5) / 5, jnp.ones(3))


@case
def dirichlet_gradient(jnp, lax, jx):
    x = jnp.array([0.2, 0.8])
    return jx.grad(lambda a: st(jx).dirichlet.logpdf(x, a))(jnp.array([1.5, 2.0]))


@case
def truncnorm_functions(jnp, lax, jx):
    s = st(jx).truncnorm
    x = jnp.array([-2.0, -0.5, 0.0, 0.3, 1.0, 2.5])
    out = []
    for a, b, loc, scale in [(-1.0, 2.0, 0.2, 1.3), (0.5, 3.0, 0.0, 1.0), (-4.0, -1.0, 0.0, 1.0)]:
        for f in (s.pdf, s.logpdf, s.cdf, s.logcdf, s.sf, s.logsf):
            out.append(f(x, a, b, loc, scale))
    return out


@case
def truncnorm_gradient(jnp, lax, jx):
    s = st(jx).truncnorm
    x, a = jnp.float32(0.3), jnp.float32(-1.0)  # (of weak inputs, see the report on grad)
    return (
        jx.grad(lambda x: s.logpdf(x, -1.0, 2.0))(x),
        jx.grad(lambda a: s.logpdf(0.3, a, 2.0))(a),
        jx.grad(lambda x: s.cdf(x, -1.0, 2.0))(x),
        jx.grad(lambda x: s.logcdf(x, 0.5, 3.0))(x + 1),
    )


@case
def laplace_gradient_at_its_location(jnp, lax, jx):
    s = st(jx).laplace
    return jx.grad(s.logpdf)(0.0), jx.grad(lambda x: s.logpdf(x, 1.0))(1.0)


@case
def abs_derivative_at_zero_and_nan(jnp, lax, jx):
    g = jx.vmap(jx.grad(jnp.abs))
    return (
        g(jnp.array([0.0, -0.0, -2.0, 3.0, jnp.nan])),
        jx.jvp(jnp.abs, (jnp.array([0.0, -0.0, -1.0]),), (jnp.ones(3),)),
    )


# ---- lax.clamp ------------------------------------------------------------------------------
@case
def clamp_python_ints_with_float_array_is_type_error(jnp, lax, jx):
    return lax.clamp(0, jnp.array([1.5, -2.0]), 1)


@case
def clamp_python_floats_with_float16_array_is_type_error(jnp, lax, jx):
    return lax.clamp(0.0, jnp.ones(2, jnp.float16), 1.0)


@case
def clamp_mismatched_array_dtypes_is_type_error(jnp, lax, jx):
    return lax.clamp(jnp.float16(0), jnp.array([1.5, 2.0]), jnp.float16(1))


@case
def clamp_weak_types(jnp, lax, jx):
    w, s = weak1d(jnp), jnp.array([0.0, 1.0, 2.0])
    ws, ss = jnp.asarray(0.5), jnp.float32(0.5)
    return (
        lax.clamp(ws, s, ws),
        lax.clamp(ss, w, ws),
        lax.clamp(ws, w, ws),
        lax.clamp(0.0, w, 1.0),
        lax.clamp(0, jnp.arange(4), 2),
        lax.clamp(True, jnp.array([True, False]), False),
    )


# ---- jax.scipy.linalg -----------------------------------------------------------------------
RNG = np.random.RandomState(0)
A4 = RNG.randn(4, 4).astype(np.float32)
SPD = (A4 @ A4.T + 4 * np.eye(4)).astype(np.float32)
NONSYM = SPD + np.triu(np.ones((4, 4), np.float32), 1)
B42 = RNG.randn(4, 2).astype(np.float32)


@case
def scipy_cholesky_reads_one_triangle(jnp, lax, jx):
    s, a = sl(jx), jnp.asarray(NONSYM)
    return (
        s.cholesky(a),
        s.cholesky(a, lower=True),
        s.cho_factor(a)[0],
        jnp.tril(s.cho_factor(a, lower=True)[0]),
        jnp.linalg.cholesky(a),
    )


@case
def scipy_cholesky_gradients(jnp, lax, jx):
    s, a, b = sl(jx), jnp.asarray(SPD), jnp.ones(4)
    g = jx.grad
    return (
        g(lambda m: s.cho_solve(s.cho_factor(m), b).sum())(a),
        g(lambda m: s.cho_solve(s.cho_factor(m, lower=True), b).sum())(a),
        g(lambda m: s.cholesky(m).sum())(a),
        g(lambda m: s.cholesky(m, lower=True).sum())(a),
        g(lambda m: jnp.linalg.cholesky(m).sum())(a),
    )


@case
def scipy_linalg_solvers(jnp, lax, jx):
    s = sl(jx)
    b = jnp.asarray(B42)
    t = jnp.asarray(np.triu(A4) + 3 * np.eye(4, dtype=np.float32))
    lu, piv = s.lu_factor(jnp.asarray(A4))
    return (
        s.solve_triangular(t, b, trans=1),
        s.solve_triangular(t, b, trans="C", unit_diagonal=True),
        s.solve_triangular(t.T, b[:, 0], lower=True),
        s.lu_solve((lu, piv), b, trans=1),
        s.cho_solve(s.cho_factor(jnp.asarray(SPD)), b),
        s.expm(jnp.asarray(A4) * 0.5),
        s.block_diag(jnp.ones((2, 2)), jnp.arange(3), 5.0),
        s.eigh(jnp.asarray(SPD), eigvals_only=True),
    )


@case
def scipy_qr_raw_mode_is_value_error(jnp, lax, jx):
    return sl(jx).qr(jnp.ones((3, 2)), mode="raw")


# ---- jnp.linalg -----------------------------------------------------------------------------
@case
def linalg_cond_of_singular_matrices(jnp, lax, jx):
    L = jnp.linalg
    z = jnp.zeros((2, 2))
    return L.cond(z), L.cond(z, -2), L.cond(z, "fro"), L.cond(z, 1), L.cond(jnp.asarray(A4))


@case
def linalg_cond_of_empty_matrix(jnp, lax, jx):
    return jnp.linalg.cond(jnp.ones((0, 0)))


@case
def linalg_norms_and_matrix_power(jnp, lax, jx):
    L = jnp.linalg
    v, m = jnp.array([3.0, -4.0, 0.0, 1.0]), jnp.array([[1.0, -2.0, 3.0], [0.0, 4.0, -1.0]])
    vec = [L.norm(v, o) for o in (None, 1, 2, 0.5, jnp.inf, -jnp.inf, 0, -1)]
    mat = [L.norm(m, o) for o in (None, "fro", "nuc", 1, -1, 2, -2, jnp.inf, -jnp.inf)]
    return (
        vec,
        mat,
        L.matrix_power(jnp.asarray(A4), -2),
        L.cholesky(jnp.array([[1.0, 2.0], [2.0, 1.0]])),
    )


# ---- jax.nn ---------------------------------------------------------------------------------
X8 = np.array([-5.0, -1.5, -0.5, 0.0, 0.3, 1.0, 2.5, 8.0], np.float32)
LIT_ACTS = [
    "relu",
    "relu6",
    "leaky_relu",
    "hard_sigmoid",
    "hard_silu",
    "hard_tanh",
    "elu",
    "celu",
    "selu",
    "sparse_plus",
    "sparse_sigmoid",
    "softplus",
    "soft_sign",
    "log_sigmoid",
    "mish",
    "gelu",
    "silu",
]


@case
def activations_of_python_scalars_weak_types(jnp, lax, jx):
    return [getattr(jx.nn, n)(0.5) for n in LIT_ACTS] + [jx.nn.gelu(0.5, approximate=False)]


@case
def activations_of_integer_arrays(jnp, lax, jx):
    names = [n for n in LIT_ACTS if n not in ("silu", "hard_tanh", "relu")]
    return [getattr(jx.nn, n)(jnp.arange(3)) for n in names]


@case
def activations_of_weak_arrays(jnp, lax, jx):
    return [getattr(jx.nn, n)(weak1d(jnp)) for n in LIT_ACTS]


@case
def activation_values_and_gradients(jnp, lax, jx):
    x = jnp.asarray(X8)
    vals = [getattr(jx.nn, n)(x) for n in LIT_ACTS]
    grads = [jx.vmap(jx.grad(getattr(jx.nn, n)))(x) for n in LIT_ACTS]
    return vals, grads


@case
def silu_of_integer_array_is_type_error(jnp, lax, jx):
    return jx.nn.silu(jnp.arange(3))


@case
def one_hot_num_classes(jnp, lax, jx):
    i = jnp.array([0, 2, -1, 3])
    return (
        jx.nn.one_hot(i, jnp.int32(3)),
        jx.nn.one_hot(i, jnp.array(3)),
        jx.nn.one_hot(i, 4, axis=0),
        jx.nn.one_hot(i, 3, dtype=jnp.int32),
    )


@case
def one_hot_float_num_classes_is_type_error(jnp, lax, jx):
    return jx.nn.one_hot(jnp.array([0, 1]), 3.0)


@case
def one_hot_traced_num_classes_is_concretization_error(jnp, lax, jx):
    return jx.jit(lambda n: jx.nn.one_hot(jnp.array([0, 1]), n))(3)


@case
def standardize_where(jnp, lax, jx):
    x = jnp.array([[1.0, 4.0, -2.0, 0.5], [3.0, -1.0, 2.0, 7.0]])
    w = jnp.array([[True, True, False, True], [False, True, True, True]])
    nn = jx.nn
    return (
        nn.standardize(x, where=w),
        nn.standardize(x, axis=0, where=w),
        nn.standardize(x, mean=0.0, where=w),
        nn.standardize(x, where=w, variance=2.0),
        jx.grad(lambda x: (nn.standardize(x, where=w) * jnp.arange(4.0)).sum())(x),
    )


@case
def dot_product_attention_cudnn_without_cudnn(jnp, lax, jx):
    q = jnp.ones((1, 3, 2, 4))
    return jx.nn.dot_product_attention(q, q, q, implementation="cudnn")


@case
def complex_variance_scaling_initializers(jnp, lax, jx):
    init = jx.nn.initializers
    k = jx.random.key(4)
    vs = [
        init.variance_scaling(1.0, "fan_avg", d)(k, (3, 3), jnp.complex64)
        for d in ("normal", "uniform", "truncated_normal")
    ]
    return vs, init.lecun_normal()(jx.random.key(7), (3, 3), jnp.complex64)


@case
def real_initializers_bit_exact(jnp, lax, jx):
    init = jx.nn.initializers
    k = jx.random.key(0)
    names = [
        "glorot_normal",
        "glorot_uniform",
        "he_normal",
        "he_uniform",
        "lecun_normal",
        "lecun_uniform",
    ]
    return (
        [getattr(init, n)()(k, (3, 4)) for n in names],
        init.orthogonal()(k, (3, 5)),
        init.truncated_normal(0.5)(k, (5,)),
    )


# ---- indexing, split, jax.core, typeof --------------------------------------------------------
@case
def scalar_bool_indices_add_an_axis(jnp, lax, jx):
    x = jnp.arange(6).reshape(2, 3)
    return (
        x[True],
        x[False],
        x[True, 0],
        x[0, True],
        x[..., True],
        x[..., False],
        x[1:, False],
        x[jnp.array(True)],
        x[jnp.array(False)],
        x[True, True],
        x[True, False],
        x[True, 1:],
        x[True, :, 1],
        x[True, jnp.array([0, 1])],
        jnp.asarray(5)[True],
        jnp.asarray(5)[False],
        jx.jit(lambda x: x[True])(jnp.arange(3)),
    )


@case
def scalar_bool_index_updates(jnp, lax, jx):
    x = jnp.arange(3.0)
    return (
        x.at[True].set(7.0),
        x.at[False].set(7.0),
        x.at[True].add(1.0),
        x.at[True, 1].set(9.0),
        x.at[True].get(),
    )


@case
def traced_scalar_bool_index_is_an_error(jnp, lax, jx):
    return jx.jit(lambda x, b: x[b])(jnp.arange(3), True)


@case
def split_point_past_the_end_is_value_error(jnp, lax, jx):
    return jnp.split(jnp.arange(5), [1, 10])


@case
def split_points_out_of_order_is_value_error(jnp, lax, jx):
    return jnp.array_split(jnp.arange(5), [3, 1])


@case
def split_negative_point_is_value_error(jnp, lax, jx):
    return jnp.split(jnp.arange(5), [-2])


@case
def split_valid_points(jnp, lax, jx):
    return jnp.split(jnp.arange(6), [2, 2, 6]), jnp.hsplit(jnp.ones((2, 4)), [1, 3])


@case
def core_module_names(jnp, lax, jx):
    c = jx.core
    sa = c.ShapedArray((2, 3), jnp.float32)
    traced = []
    jx.jit(lambda x: traced.append(isinstance(x, c.Tracer)) or x)(1.0)
    cj = jx.make_jaxpr(lambda x: x * 2.0)(1.0)
    return (
        str(sa),
        sa.shape,
        sa == jx.typeof(jnp.ones((2, 3))),
        isinstance(jx.typeof(jnp.ones(2)), c.ShapedArray),
        isinstance(sa, c.AbstractValue),
        c.ShapedArray((2,), jnp.float32, weak_type=True).weak_type,
        traced,
        c.concrete_or_error(int, 3),
        c.valid_jaxtype(jnp.ones(2)),
        c.valid_jaxtype("x"),
        float(c.eval_jaxpr(cj.jaxpr, cj.consts, 3.0)[0]),
        c.is_constant_shape((2, 3)),
        sa.str_short(),
        sa.str_short(short_dtypes=True),
    )


@case
def core_concrete_or_error_of_tracer(jnp, lax, jx):
    return jx.jit(lambda x: jx.core.concrete_or_error(int, x, "ctx"))(3)


@case
def typeof_text(jnp, lax, jx):
    return (
        str(jx.typeof(jnp.ones(3))),
        repr(jx.typeof(jnp.ones((2, 3), jnp.int8))),
        str(jx.typeof(1.0)),
        jx.typeof(jnp.ones((2, 3))).str_short(),
    )


# ---- bfloat16 -------------------------------------------------------------------------------
@case
def bfloat16_from_numpy_rounds_to_nearest(jnp, lax, jx):
    x = np.array([-7.992, 1.0039, 1.0108, 0.1, 3.14159], np.float32)
    return (
        jnp.asarray(x, jnp.bfloat16),
        jnp.asarray(x.astype(np.float64), jnp.bfloat16),
        jnp.exp(jnp.asarray(x, jnp.bfloat16)),
    )


# ---- the differential test (keep last: it parametrizes over every case above) ---------------
@pytest.mark.parametrize("name", list(SUITE.fns))
def test_matches_jax(device, name):
    SUITE.check(name)


BF16_VALUES = [
    [-7.992, 1.0, 1.0078125],
    [1.5],
    [0.1, 100.0, 1e-5],
    [3.0, 256.0, 1e10],
    [np.nan, np.inf, -1.25],
    [1 / 3, 2 / 3],
    [1234.5, 0.5],
    [0.0, -0.0],
]


@pytest.mark.parametrize("values", BF16_VALUES)
def test_bfloat16_repr_and_str_as_jax(values):
    a = rjnp.array(values, rjnp.bfloat16)
    b = wjnp.array(values, wjnp.bfloat16)
    assert (repr(b), str(b)) == (repr(a), str(a))
    a0, b0 = rjnp.array(values[0], rjnp.bfloat16), wjnp.array(values[0], wjnp.bfloat16)
    assert (repr(b0), str(b0)) == (repr(a0), str(a0))


def test_bfloat16_matrix_repr_as_jax():
    a = rjnp.arange(12.0).astype(rjnp.bfloat16).reshape(3, 4) / 7
    b = wjnp.arange(12.0).astype(wjnp.bfloat16).reshape(3, 4) / 7
    assert repr(b) == repr(a)


def test_install_as_jax_maps_core_and_new_stats_modules():
    code = (
        "import webjax; webjax.install_as_jax()\n"
        "import jax, jax.numpy as jnp\n"
        "from jax import core\n"
        "from jax.core import ShapedArray\n"
        "import jax.scipy.stats.dirichlet as d, jax.scipy.stats.truncnorm as t\n"
        "import types\n"
        "print(isinstance(jax, types.ModuleType), jax.__name__, core.__name__,\n"
        "      ShapedArray is core.ShapedArray)\n"
        "print(d.__name__, t.__name__, float(t.cdf(0.0, -1.0, 1.0)))\n"
    )
    env = {
        "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "pkg"),
        "PATH": "/usr/bin:/bin",
        "WEBJAX_PLATFORM": "cpu",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "True",
        "webjax",
        "webjax.core",
        "True",
        "webjax.scipy.stats.dirichlet",
        "webjax.scipy.stats.truncnorm",
        "0.5",
    ]
