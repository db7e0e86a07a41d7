"""jax.nn: activations, the softmax family (softmax, log_softmax, logsumexp, logmeanexp,
standardize) and one_hot, with JAX's definitions.

Each function is the expression JAX documents for it, in the same operation order (so values
match JAX to the rounding of the underlying elementwise ops), and keeps JAX's custom derivatives:
relu and relu6 have zero gradient at their kinks, softmax has the jvp y * (t - sum(y * t)),
logaddexp (behind softplus) has the jvp that stays finite at infinities. The row-wise functions
subtract a stop-gradient maximum first, so they never overflow.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

from .. import core, dtypes
from ..custom_derivatives import custom_jvp
from ..jit import eager_jit, jit
from ..lax import lax
from ..numpy import ufuncs, util

Axis = int | Sequence[int] | None


# ---- helpers ------------------------------------------------------------------------------------
def _array(x: Any) -> Any:
    return util.convert(x, *util.result_type(x)) if util.is_scalar(x) else util.ensure_array(x)


def _inexact(x: Any) -> Any:
    """`x` as an array of an inexact dtype (JAX's to_inexact_dtype: bools and ints of up to 32
    bits promote to float32, 64-bit ints to float64; complex stays complex)."""
    x = _array(x)
    av = util.aval(x)
    if av.dtype.kind not in "fc":
        x = util.convert(x, dtypes.to_inexact(av.dtype), av.weak_type)
    return x


def _inexact_lit(x: Any) -> Any:
    """`x` as a float array the way JAX's formulas built on Python float literals make it:
    integers and bools meet a weak float literal, so they become the weak default float."""
    x = _array(x)
    av = util.aval(x)
    if av.dtype.kind not in "fc":
        x = util.convert(x, dtypes.default_float(), True)
    return x


def _int_lit(x: Any) -> Any:
    """`x` as an array the way it meets an integer literal in JAX's formulas: a bool array
    becomes the weak default int (max(b, 0) is an int in JAX), other dtypes are kept."""
    x = _array(x)
    if util.aval(x).dtype is dtypes.bool_:
        x = util.convert(x, dtypes.default_int(), True)
    return x


def _inexact_int_lit(x: Any) -> Any:
    """`x` as a float array where JAX's formula meets an integer literal first (logaddexp(x, 0),
    x / (|x| + 1)): bools become the weak default float, ints the default float."""
    return _inexact(_int_lit(x))


def _no_bool(x: Any, op: str) -> Any:
    """JAX's formulas that negate or subtract `x` first reject bools (lax's TypeError)."""
    x = _array(x)
    if util.aval(x).dtype is dtypes.bool_:
        raise TypeError(
            f"{op} does not accept dtype bool. Accepted dtypes are subtypes of integer, "
            "floating, complexfloating."
        )
    return x


def _c(v: Any, like: Any) -> Any:
    """A scalar of `like`'s dtype and weak type (a Python literal in JAX's formulas), broadcast
    to its shape (a view, never a kernel)."""
    av = core.get_aval(like)
    return lax.full(av.shape, v, av.dtype, weak_type=av.weak_type)


def _ordered(compare: Any, x: Any, value: float) -> Any:
    """x compared with a constant as jnp compares: complex numbers in order of real part, then
    imaginary part (lax's comparisons take no complex operands)."""
    return compare(x, _c(value, x))


def _where(pred: Any, x: Any, y: Any) -> Any:
    return lax.select(pred, x, y)


def _axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    return util.canonical_axes(axis, ndim)


def _keep(r: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """Broadcast a reduction over `axes` back to `shape` (keepdims, then a view)."""
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return lax.broadcast_in_dim(r, shape, kept)


# ---- piecewise activations ----------------------------------------------------------------------
def identity(x: Any) -> Any:
    """Identity activation: x."""
    return _array(x)


@custom_jvp
def _relu(x: Any) -> Any:
    return lax.max(x, _c(0, x))


_relu.defjvps(lambda g, ans, x: lax.select(lax.gt(x, _c(0, x)), g, _c(0, g)))


def relu(x: Any) -> Any:
    """max(x, 0), with gradient 0 at x == 0 (as JAX)."""
    return _relu(_int_lit(x))


@custom_jvp
def _relu6(x: Any) -> Any:
    return lax.min(lax.max(x, _c(0, x)), _c(6.0, x))


_relu6.defjvps(
    lambda g, ans, x: lax.select(
        lax.bitwise_and(lax.gt(x, _c(0, x)), lax.lt(x, _c(6, x))), g, _c(0, g)
    )
)


def relu6(x: Any) -> Any:
    """min(max(x, 0), 6), with gradient 0 at both kinks (as JAX)."""
    return _relu6(_inexact_lit(x))


@jit
def leaky_relu(x: Any, negative_slope: Any = 0.01) -> Any:
    """x where x >= 0, else negative_slope * x."""
    x = _inexact_lit(x)
    return _where(_ordered(ufuncs.greater_equal, x, 0), x, lax.mul(_c(negative_slope, x), x))


@jit
def hard_tanh(x: Any) -> Any:
    """x clipped to [-1, 1]."""
    x = _int_lit(x)
    inner = _where(_ordered(ufuncs.less, x, -1), _c(-1, x), x)
    return _where(_ordered(ufuncs.greater, x, 1), _c(1, x), inner)


@jit
def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6."""
    x = _inexact_lit(x)
    return lax.div(relu6(lax.add(x, _c(3.0, x))), _c(6.0, x))


@jit
def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x)."""
    x = _inexact_lit(x)
    return lax.mul(x, hard_sigmoid(x))


hard_swish = hard_silu


@eager_jit
def sparse_plus(x: Any) -> Any:
    """0 for x <= -1, (x + 1)^2 / 4 on (-1, 1), x for x >= 1."""
    x = _inexact_lit(x)
    mid = lax.div(lax.integer_pow(lax.add(x, _c(1.0, x)), 2), _c(4.0, x))
    # jnp's comparisons: a complex x is ordered lexicographically, as in JAX
    inner = lax.select(ufuncs.greater_equal(x, _c(1.0, x)), x, mid)
    return lax.select(ufuncs.less_equal(x, _c(-1.0, x)), _c(0.0, x), inner)


@eager_jit
def sparse_sigmoid(x: Any) -> Any:
    """clip((x + 1) / 2, 0, 1): the derivative of sparse_plus."""
    x = _inexact_lit(x)
    if util.aval(x).dtype.kind == "c":  # JAX's jnp.clip
        raise ufuncs.complex_clip_error()
    clipped = lax.min(lax.max(lax.add(x, _c(1.0, x)), _c(0.0, x)), _c(2.0, x))
    return lax.mul(_c(0.5, x), clipped)


# ---- smooth activations -------------------------------------------------------------------------
def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), as lax.logistic (integer inputs are a TypeError, as in JAX)."""
    return lax.logistic(_array(x))


@custom_jvp
def _logaddexp(x1: Any, x2: Any) -> Any:
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    # NaNs, or infinities of the same sign, make delta NaN: then x1 + x2 is the answer.
    return _where(
        lax.ne(delta, delta),
        lax.add(x1, x2),
        lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))),
    )


def _finite_or_zero(x: Any) -> Any:
    return _where(lax.eq(x, _c(math.inf, x)), _c(0, x), x)


@_logaddexp.defjvp
def _logaddexp_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    x1, x2 = primals
    t1, t2 = tangents
    out = _logaddexp(x1, x2)
    w1 = lax.exp(lax.sub(_finite_or_zero(x1), _finite_or_zero(out)))
    w2 = lax.exp(lax.sub(_finite_or_zero(x2), _finite_or_zero(out)))
    return out, lax.add(lax.mul(t1, w1), lax.mul(t2, w2))


@jit
def softplus(x: Any) -> Any:
    """log(1 + exp(x)), as logaddexp(x, 0)."""
    x = _inexact_int_lit(x)
    if util.aval(x).dtype.kind == "c":  # JAX's logaddexp(x, 0) of a complex x
        return ufuncs.logaddexp(x, 0)
    return _logaddexp(x, _c(0, x))


@jit
def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x)."""
    x = _no_bool(x, "neg")
    if util.aval(x).dtype.kind in "iu":  # -x in x's type first (int8's -(-128) wraps)
        return lax.neg(softplus(_inexact(lax.neg(x))))
    x = _inexact(x)
    return lax.neg(softplus(lax.neg(x)))


@custom_jvp
def _log1mexp(x: Any) -> Any:
    c = _c(math.log(2.0), x)
    small = lax.log(lax.neg(lax.expm1(lax.neg(x))))
    large = lax.log1p(lax.neg(lax.exp(lax.neg(x))))
    return lax.select(lax.lt(x, c), small, large)


_log1mexp.defjvps(lambda t, _, x: lax.div(t, lax.expm1(x)))


def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) accurately (Machler's two branches around log 2)."""
    return _log1mexp(_inexact(x))


@jit
def soft_sign(x: Any) -> Any:
    """x / (|x| + 1)."""
    x = _array(x)
    if util.aval(x).dtype.kind in "iuc":
        # |x| + 1 in x's type (an int's wraps: int8's |-128| + 1 is -127), then the division
        # promotes, as JAX's formula does
        return ufuncs.divide(x, ufuncs.add(ufuncs.abs(x), 1))
    x = _inexact_int_lit(x)
    return lax.div(x, lax.add(lax.abs(x), _c(1, x)))


@jit
def silu(x: Any) -> Any:
    """x * sigmoid(x) (integer inputs are a TypeError, as in JAX)."""
    x = _array(x)
    return lax.mul(x, lax.logistic(x))


swish = silu


def tanh(x: Any) -> Any:
    return lax.tanh(_inexact(x))


@eager_jit
def mish(x: Any) -> Any:
    """x * tanh(softplus(x))."""
    x = _inexact_int_lit(x)
    return lax.mul(x, lax.tanh(softplus(x)))


@eager_jit
def squareplus(x: Any, b: Any = 4) -> Any:
    """(x + sqrt(x^2 + b)) / 2."""
    x = _array(x)
    y = ufuncs.add(x, ufuncs.sqrt(ufuncs.add(ufuncs.square(x), b)))
    return ufuncs.divide(y, 2)


@jit
def elu(x: Any, alpha: Any = 1.0) -> Any:
    """x where x > 0, else alpha * expm1(x) (expm1 of a safe 0 on the other branch)."""
    x = _inexact_lit(x)
    pos = _ordered(ufuncs.greater, x, 0)
    return _where(pos, x, lax.mul(_c(alpha, x), lax.expm1(_where(pos, _c(0, x), x))))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@jit
def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with the self-normalizing constants."""
    x = _inexact_lit(x)
    return lax.mul(_c(_SELU_SCALE, x), elu(x, _SELU_ALPHA))


@jit
def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _inexact_lit(x)
    a = _c(alpha, x)
    neg = lax.expm1(lax.div(lax.min(x, _c(0, x)), a))
    return lax.add(lax.max(x, _c(0, x)), lax.mul(a, neg))


@eager_jit(static_argnames=("approximate",))
def _gelu(x: Any, approximate: bool = True) -> Any:
    x = _inexact(x)
    if approximate:
        inner = lax.add(x, lax.mul(_c(0.044715, x), lax.integer_pow(x, 3)))
        t = lax.tanh(lax.mul(_c(math.sqrt(2 / math.pi), x), inner))
        cdf = lax.mul(_c(0.5, x), lax.add(_c(1.0, x), t))
        return lax.mul(x, cdf)
    half_x = lax.mul(_c(0.5, x), x)
    return lax.mul(half_x, lax.erfc(lax.mul(lax.neg(x), _c(math.sqrt(0.5), x))))


def gelu(x: Any, approximate: bool = True) -> Any:
    """x * Phi(x); approximate=True uses JAX's tanh formula. JAX's constants here are NumPy
    values, so the result is never weakly typed."""
    out = _gelu(x, approximate)
    av = util.aval(out)
    return lax.convert_element_type(out, av.dtype, weak_type=False) if av.weak_type else out


@eager_jit(static_argnames=("axis",))
def glu(x: Any, axis: int = -1) -> Any:
    """First half of `axis` gated by the sigmoid of the second half."""
    x = _array(x)
    av = core.get_aval(x)
    axis = util.canonical_axis(axis, av.ndim)
    size = av.shape[axis]
    if size % 2:
        raise AssertionError("axis size must be divisible by 2")
    lo, mid, hi = [0] * av.ndim, list(av.shape), list(av.shape)
    mid[axis] = size // 2
    start = [0] * av.ndim
    start[axis] = size // 2
    x1, x2 = lax.slice(x, lo, mid), lax.slice(x, start, hi)
    return lax.mul(x1, sigmoid(x2))


# ---- softmax family -----------------------------------------------------------------------------
def _masked_max(x: Any, axes: tuple[int, ...], where: Any, initial: float) -> Any:
    xs = x if where is None else _where(where, x, _c(initial, x))
    m = lax.reduce_max(xs, axes)
    return lax.max(m, _c(initial, m))


def _masked_sum(x: Any, axes: tuple[int, ...], where: Any) -> Any:
    xs = x if where is None else _where(where, x, _c(0, x))
    return lax.reduce_sum(xs, axes)


def _mask(where: Any, shape: tuple[int, ...]) -> Any:
    if where is None:
        return None
    w = util.ensure_array(where)
    return util.broadcast_to(lax.convert_element_type(w, dtypes.bool_), shape)


def _softmax_impl(x: Any, axes: tuple[int, ...], where: Any, initial: float) -> Any:
    shape = core.get_aval(x).shape
    x_max = _keep(_masked_max(x, axes, where, initial), shape, axes)
    x_safe = x if where is None else _where(where, x, _c(initial, x))
    unnormalized = lax.exp(lax.sub(x_safe, x_max))
    total = _keep(_masked_sum(unnormalized, axes, where), shape, axes)
    result = lax.div(unnormalized, total)
    return result if where is None else _where(where, result, _c(0, result))


@partial(custom_jvp, nondiff_argnums=(1, 2))
def _softmax(x: Any, axes: tuple[int, ...], where: Any) -> Any:
    return _softmax_impl(x, axes, where, -math.inf)


@_softmax.defjvp
def _softmax_jvp(axes: tuple[int, ...], where: Any, primals: tuple, tangents: tuple) -> tuple:
    (x,), (x_dot,) = primals, tangents
    y = _softmax(x, axes, where)
    shape = core.get_aval(y).shape
    s = _keep(_masked_sum(lax.mul(y, x_dot), axes, where), shape, axes)
    return y, lax.mul(y, lax.sub(x_dot, s))


def _int_shifted(x: Any, axes: tuple[int, ...]) -> Any:
    """x - max(x) of an integer array in its own dtype (wrapping around, as JAX's formula
    does before exp promotes it), in the float exp gives it (JAX's to_inexact_dtype)."""
    shape = core.get_aval(x).shape
    shifted = lax.sub(x, _keep(lax.reduce_max(x, axes), shape, axes))
    return util.convert(shifted, dtypes.to_inexact(core.get_aval(x).dtype), False)


@eager_jit(static_argnames=("axis",))
def softmax(x: Any, axis: Axis = -1, where: Any = None) -> Any:
    """exp(x - max) normalized along `axis`; masked-out entries are 0."""
    x = _array(x)
    shape = core.get_aval(x).shape
    axes = _axes(axis, len(shape))  # JAX checks the axis before the dtype
    x = _no_bool(x, "sub")
    mask = _mask(where, shape)
    if mask is None and core.get_aval(x).dtype.kind in "iu":
        unnormalized = lax.exp(_int_shifted(x, axes))
        return lax.div(unnormalized, _keep(lax.reduce_sum(unnormalized, axes), shape, axes))
    return _softmax(_inexact(x), axes, mask)


@eager_jit(static_argnames=("axis",))
def log_softmax(x: Any, axis: Axis = -1, where: Any = None) -> Any:
    """x - max - log(sum(exp(x - max))); masked-out entries are -inf."""
    x = _array(x)
    shape = core.get_aval(x).shape
    axes = _axes(axis, len(shape))  # JAX checks the axis before the dtype
    x = _no_bool(x, "sub")
    mask = _mask(where, shape)
    if mask is None and core.get_aval(x).dtype.kind in "iu":
        shifted = _int_shifted(x, axes)
        lse = lax.log(lax.reduce_sum(lax.exp(shifted), axes))
        return lax.sub(shifted, _keep(lse, shape, axes))
    x = _inexact(x)
    x_max = _keep(_masked_max(x, axes, mask, -math.inf), shape, axes)
    x_safe = x if mask is None else _where(mask, x, _c(-math.inf, x))
    shifted = lax.sub(x_safe, lax.stop_gradient(x_max))
    lse = lax.log(_masked_sum(lax.exp(shifted), axes, mask))
    result = lax.sub(shifted, _keep(lse, shape, axes))
    return result if mask is None else _where(mask, result, _c(-math.inf, result))


@eager_jit(static_argnames=("axis", "keepdims", "return_sign"))
def logsumexp(
    a: Any,
    axis: Any = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: Any = None,
) -> Any:
    """log(sum(b * exp(a))) computed stably (the max is shifted out and stop-gradient'ed)."""
    a = _inexact(a)
    av = util.aval(a)
    mask = None
    if where is not None:
        w = lax.convert_element_type(util.ensure_array(where), dtypes.bool_)
        mask = util.broadcast_to(w, av.shape)
        a = lax.select(mask, a, lax.full(av.shape, -math.inf, av.dtype))
    if b is not None:  # terms with a zero weight are left out, so neither they nor their
        # derivatives can turn an exp(inf) * 0 into NaN (JAX's masking)
        a, b = util.promote_args("logsumexp", a, b)
        a = util.where(ufuncs.not_equal(b, 0), a, -math.inf)
        av = util.aval(a)
        if mask is not None:
            mask = util.broadcast_to(mask, av.shape)
    axes = util.canonical_axes(axis, av.ndim)
    kept = tuple(i for i in range(av.ndim) if i not in axes)
    cplx = av.dtype.kind == "c"
    ar = lax.real(a) if cplx else a  # a complex a is shifted by the max of its real parts
    amax = lax.reduce_max(ar, axes) if axes else ar
    finite = lax.is_finite(amax)
    amax = lax.stop_gradient(
        lax.select(finite, amax, lax.full(util.aval(amax).shape, 0.0, util.aval(ar).dtype))
    )
    amax_a = lax.convert_element_type(amax, av.dtype) if cplx else amax
    shifted = lax.sub(a, lax.broadcast_in_dim(amax_a, av.shape, kept))
    e = lax.exp(shifted)
    if mask is not None:
        e = lax.select(mask, e, lax.full(av.shape, 0.0, av.dtype))
    if b is not None:
        e, bb = util.promote_args("logsumexp", e, b)
        e = lax.mul(e, bb)
    s = lax.reduce_sum(e, axes) if axes else e
    sign = lax.sign(s)
    # with b, a negative sum has no real log: NaN, unless the sign is asked for
    out = lax.add(lax.log(lax.abs(s)), amax) if return_sign else lax.add(lax.log(s), amax_a)
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
        out = lax.reshape(out, shape)
        sign = lax.reshape(sign, shape)
    if return_sign:
        return out, sign
    return out


@eager_jit(static_argnames=("axis", "keepdims"))
def logmeanexp(x: Any, axis: Axis = None, where: Any = None, keepdims: bool = False) -> Any:
    """log(mean(exp(x))) = logsumexp(x) - log(n), n counting only `where` entries if given."""
    x = _inexact(x)
    av = util.aval(x)
    axes = util.canonical_axes(axis, av.ndim)
    kept = tuple(i for i in range(av.ndim) if i not in axes)
    if where is None:
        mask = None
        count: Any = lax.full((), float(math.prod(av.shape[i] for i in axes)), av.dtype)
    else:
        mask = util.broadcast_to(util.ensure_array(where), av.shape)
        ones = lax.convert_element_type(mask, av.dtype)
        count = lax.reduce_sum(ones, axes) if axes else ones
    neg_inf = lax.full(av.shape, -math.inf, av.dtype)
    masked = x if mask is None else lax.select(mask, x, neg_inf)
    amax = lax.reduce_max(masked, axes) if axes else masked
    amax = lax.stop_gradient(
        lax.select(lax.is_finite(amax), amax, lax.full(util.aval(amax).shape, 0.0, av.dtype))
    )
    e = lax.exp(lax.sub(masked, lax.broadcast_in_dim(amax, av.shape, kept)))
    s = lax.reduce_sum(e, axes) if axes else e
    out = lax.sub(lax.add(lax.log(s), amax), lax.log(count))
    if keepdims:
        out = lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(av.shape)))
    return out


@eager_jit(static_argnames=("axis", "algorithm"))
def standardize(
    x: Any,
    axis: Axis = -1,
    mean: Any = None,
    variance: Any = None,
    epsilon: Any = 1e-5,
    where: Any = None,
    *,
    algorithm: str = "fast",
) -> Any:
    """(x - mean) * rsqrt(variance + epsilon) along `axis`."""
    x = _inexact(x)
    shape = core.get_aval(x).shape
    axes = _axes(axis, len(shape))
    mask = _mask(where, shape)
    if mask is None:
        n = _c(float(math.prod(shape[a] for a in axes)), lax.reduce_sum(x, axes))
    else:  # the statistics count the selected entries only (the output covers all of x)
        sel = lax.convert_element_type(mask, core.get_aval(x).dtype)
        n = lax.reduce_sum(sel, axes)

    def mean_of(v: Any) -> Any:
        return _keep(lax.div(_masked_sum(v, axes, mask), n), shape, axes)

    m = mean_of(x) if mean is None else util.broadcast_to(_inexact(mean), shape)
    if variance is None:
        if algorithm == "stable":
            d = lax.sub(x, m)
            variance = mean_of(lax.mul(d, d))
        elif algorithm == "fast":
            variance = lax.sub(mean_of(lax.mul(x, x)), lax.mul(m, m))
            if core.get_aval(variance).dtype.kind == "c":  # JAX clips it to 0, with jnp.clip
                raise ufuncs.complex_clip_error()
            variance = lax.max(variance, _c(0, variance))
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    else:
        variance = util.broadcast_to(_inexact(variance), shape)
    return lax.mul(lax.sub(x, m), lax.rsqrt(lax.add(variance, _c(epsilon, variance))))


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """A one at index x along a new `axis` of size num_classes (zeros when out of range)."""
    x = _array(x)
    av = core.get_aval(x)
    num_classes = core.concrete_or_error(
        operator.index, num_classes, "The error arose in jax.nn.one_hot argument `num_classes`."
    )
    out_axis = util.canonical_axis(axis, av.ndim + 1)
    dt = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype))
    shape = list(av.shape)
    shape.insert(out_axis, num_classes)
    lhs = lax.broadcast_in_dim(
        x, tuple(shape), tuple(i for i in range(len(shape)) if i != out_axis)
    )
    rhs = lax.broadcasted_iota(av.dtype, shape, out_axis)
    return lax.convert_element_type(lax.eq(lhs, rhs), dt)


__all__ = [
    "relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "gelu", "elu",
    "selu", "celu", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish", "glu",
    "soft_sign", "tanh", "softmax", "log_softmax", "logsumexp", "one_hot", "standardize",
    "identity", "log1mexp", "logmeanexp", "mish", "sparse_plus", "sparse_sigmoid", "squareplus",
]  # fmt: skip
