"""Complex arithmetic on real kernels: the lowering rules of primitives on complex operands.

Kernels never see a complex type (see `array.storage`): a rule receives the storage expressions
of its operands, takes their real and imaginary parts as real expressions over the element
index, computes the result's parts with real ops and interleaves them again. Primitives that
treat the parts independently (movement, sums, selection) do not need a rule here: they are
applied to each part (`_by_parts`, entered in dispatch's `lowering.COMPONENTWISE` table).

The formulas are arranged to avoid needless overflow and cancellation: hypot-style
magnitudes, Smith's division with C99's recovery of infinities, log|z| near |z| = 1 from an
exactly summed |z|^2 - 1 (Dekker products), Kahan's tanh, Hull et al.'s asin/acos (whence
asinh/acosh) and Kahan's atanh (whence atan). They are accurate to a few ulps over the whole
range (tests/test_complex.py measures them against NumPy in complex128), and follow XLA's
conventions at special values where XLA differs from C99 (zero signs on branch cuts).

Primitives that are not one kernel expression on complex operands are written with lax
functions on arrays (`_composed`: lexicographic reduce_max/min and cummax/cummin, products by
pairwise halving, prefix scans by doubling). Primitives with their own evaluation (sort,
scatters, convolutions) get a complex front (`_sort_impl`, `_scatter_impl`, `_conv_impl`) that
splits their operands into parts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..core import Primitive, ShapedArray
from ..dispatch import lazy
from ..dispatch.array import Array, exp_of, interleave, part
from ..dispatch.lowering import COMPLEX_LOWERINGS, COMPONENTWISE, LOWERINGS, _at, apply_primitive
from ..ir import exp as E
from ..ir import view
from ..ir.exp import Exp
from ..ir.ops import Op
from ..runtime.backend import Device
from . import convolution, lax, slicing, sorting, windowed  # noqa: F401 (registers cum*)


class V:
    """A real expression with arithmetic operators, to write formulas readably."""

    __slots__ = ("e",)

    def __init__(self, e: Exp) -> None:
        self.e = e

    def _c(self, other: Any) -> Exp:
        return other.e if isinstance(other, V) else E.const(other, self.e.dtype)

    def __add__(self, o: Any) -> V:
        return V(E.binary(Op.ADD, self.e, self._c(o)))

    __radd__ = __add__

    def __sub__(self, o: Any) -> V:
        return V(E.binary(Op.SUB, self.e, self._c(o)))

    def __rsub__(self, o: Any) -> V:
        return V(E.binary(Op.SUB, self._c(o), self.e))

    def __mul__(self, o: Any) -> V:
        return V(E.binary(Op.MUL, self.e, self._c(o)))

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> V:
        return V(E.binary(Op.DIV, self.e, self._c(o)))

    def __rtruediv__(self, o: Any) -> V:
        return V(E.binary(Op.DIV, self._c(o), self.e))

    def __neg__(self) -> V:
        return V(E.unary(Op.NEG, self.e))

    def lt(self, o: Any) -> Exp:
        return E.binary(Op.CMPLT, self.e, self._c(o))

    def le(self, o: Any) -> Exp:
        return E.binary(Op.CMPLE, self.e, self._c(o))

    def eq(self, o: Any) -> Exp:
        return E.binary(Op.CMPEQ, self.e, self._c(o))


def _u(op: Op) -> Callable[[V], V]:
    return lambda x: V(E.unary(op, x.e))


exp_, log_, sqrt_, abs_ = _u(Op.EXP), _u(Op.LOG), _u(Op.SQRT), _u(Op.ABS)
sin_, cos_, sinh_, cosh_ = _u(Op.SIN), _u(Op.COS), _u(Op.SINH), _u(Op.COSH)
expm1_, log1p_ = _u(Op.EXPM1), _u(Op.LOG1P)
asin_, acos_, atan_ = _u(Op.ASIN), _u(Op.ACOS), _u(Op.ATAN)


def const(v: float, like: V) -> V:
    return V(E.const(v, like.e.dtype))


def negative(x: V) -> Exp:
    """x < 0 or x is -0.0 (the sign bit; NaNs of either sign count as their bit says)."""
    it = dtypes.int64 if x.e.dtype is dtypes.float64 else dtypes.int32
    return E.binary(Op.CMPLT, E.bitcast(x.e, it), E.const(0, it))


def copysign_(m: V, s: V) -> V:
    """|m| with the sign of s (m >= 0 or NaN)."""
    return where(negative(s), -m, m)


def not_(a: Exp) -> Exp:
    return E.unary(Op.NOT, a)


def atan2_(y: V, x: V) -> V:
    return V(E.binary(Op.ATAN2, y.e, x.e))


def max_(a: V, b: V) -> V:
    return V(E.binary(Op.MAX, a.e, b.e))


def min_(a: V, b: V) -> V:
    return V(E.binary(Op.MIN, a.e, b.e))


def where(c: Exp, t: V, f: V) -> V:
    return V(E.where(c, t.e, f.e))


def and_(a: Exp, b: Exp) -> Exp:
    return E.binary(Op.AND, a, b)


def or_(a: Exp, b: Exp) -> Exp:
    return E.binary(Op.OR, a, b)


C = tuple[V, V]  # (real, imaginary)


# ---- complex functions on parts ----------------------------------------------------------------
def c_mul(a: C, b: C) -> C:
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


def c_div(a: C, b: C) -> C:
    """Smith's algorithm (scale by the larger component of the divisor), then C99's recovery
    of infinite and zero cases where that gives NaN + NaN i (x / 0 = inf, inf / y = inf,
    x / inf = 0, with the signs of the operands), as XLA's division does."""
    (p, q), (c, d) = a, b
    big_c = abs_(d).le(abs_(c))
    r1 = d / c
    den1 = c + d * r1
    r2 = c / d
    den2 = c * r2 + d
    re = where(big_c, (p + q * r1) / den1, (p * r2 + q) / den2)
    im = where(big_c, (q - p * r1) / den1, (q * r2 - p) / den2)
    both_nan = and_(is_nan(re), is_nan(im))
    zero_den = and_(c.eq(0.0), d.eq(0.0))
    num_not_nan = or_(not_(is_nan(p)), not_(is_nan(q)))
    inf = const(math.inf, p)
    s = copysign_(inf, c)
    re1, im1 = s * p, s * q
    inf_num = and_(or_(is_inf(p), is_inf(q)), and_(is_finite(c), is_finite(d)))
    p1, q1 = unit_inf(p), unit_inf(q)
    re2, im2 = inf * (p1 * c + q1 * d), inf * (q1 * c - p1 * d)
    inf_den = and_(or_(is_inf(c), is_inf(d)), and_(is_finite(p), is_finite(q)))
    c1, d1 = unit_inf(c), unit_inf(d)
    zero = const(0.0, p)
    re3, im3 = zero * (p * c1 + q * d1), zero * (q * c1 - p * d1)
    fix_re = where(and_(zero_den, num_not_nan), re1, where(inf_num, re2, where(inf_den, re3, re)))
    fix_im = where(and_(zero_den, num_not_nan), im1, where(inf_num, im2, where(inf_den, im3, im)))
    return where(both_nan, fix_re, re), where(both_nan, fix_im, im)


def is_nan(x: V) -> Exp:
    return E.binary(Op.CMPNE, x.e, x.e)


def is_inf(x: V) -> Exp:
    return abs_(x).eq(math.inf)


def is_finite(x: V) -> Exp:
    return abs_(x).lt(math.inf)


def unit_inf(x: V) -> V:
    """copysign(1 if x is infinite else 0, x) (C99's "box" of an infinity)."""
    return copysign_(where(is_inf(x), const(1.0, x), const(0.0, x)), x)


def _split(a: V) -> tuple[V, V]:
    """Veltkamp's split: a = hi + lo exactly, each with half the significand."""
    k = 134217729.0 if a.e.dtype is dtypes.float64 else 4097.0
    t = a * k
    hi = t - (t - a)
    return hi, a - hi


def _square(a: V) -> tuple[V, V]:
    """a * a = p + e exactly (Dekker's product)."""
    p = a * a
    hi, lo = _split(a)
    return p, ((hi * hi - p) + hi * lo * 2.0) + lo * lo


def _two_sum(a: V, b: V) -> tuple[V, V]:
    """a + b = s + e exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _sum_squares(u: V, a: V, b: V) -> V:
    """u + a^2 + b^2 for an exact u, accurate when the terms cancel (|z| near 1 in log)."""
    a2, a2e = _square(a)
    b2, b2e = _square(b)
    s, e1 = _two_sum(u, a2)
    s, e2 = _two_sum(s, b2)
    return s + ((e1 + e2) + (a2e + b2e))


def c_abs(z: C) -> V:
    """hypot(re, im) without overflow: max * sqrt(1 + (min / max)^2)."""
    x, y = abs_(z[0]), abs_(z[1])
    hi, lo = max_(x, y), min_(x, y)
    r = lo / hi
    h = hi * sqrt_(1.0 + r * r)
    h = where(hi.eq(0.0), hi, h)
    inf = or_(x.eq(math.inf), y.eq(math.inf))
    return where(inf, V(E.const(math.inf, x.e.dtype)), h)


def c_exp(z: C) -> C:
    a, b = z
    e = exp_(a)
    return e * cos_(b), where(b.eq(0.0), const(0.0, b), e * sin_(b))  # +0, as XLA


def c_log(z: C) -> C:
    """log|z| + i arg z; where |z|^2 is within a factor 2 of 1, log|z| = log1p(|z|^2 - 1) / 2
    with |z|^2 - 1 summed exactly enough not to cancel."""
    x, y = abs_(z[0]), abs_(z[1])
    m2 = x * x + y * y
    near = and_(const(0.5, x).le(m2), m2.le(2.0))
    re = where(near, log1p_(_sum_squares(const(-1.0, x), x, y)) * 0.5, log_(c_abs(z)))
    return re, atan2_(z[1], z[0])


def c_sqrt(z: C, signed_zero: bool = False) -> C:
    """sqrt(|z|) on the bisector: t = sqrt((|z| + |a|) / 2), the other part b / (2t) (scaled
    by 1/4 near the overflow threshold). As XLA's, a negative zero imaginary part counts as
    positive on the branch cut (C99's sign with `signed_zero`, for rsqrt)."""
    a, b = z
    dt = a.e.dtype
    huge = V(E.const(1e300 if dt is dtypes.float64 else 1e36, dt)).lt(max_(abs_(a), abs_(b)))
    scale = where(huge, const(0.25, a), const(1.0, a))
    sa, sb = a * scale, b * scale
    m = c_abs((sa, sb))
    t = sqrt_((m + abs_(sa)) * 0.5) * where(huge, const(2.0, a), const(1.0, a))
    zero = t.eq(0.0)
    other = where(zero, t, abs_(b) / (t * 2.0))
    pos = E.unary(Op.NOT, E.binary(Op.CMPLT, a.e, E.const(0.0, dt)))
    re = where(pos, t, other)
    neg_b = negative(b) if signed_zero else b.lt(0.0)
    signed_t = where(neg_b, -t, t)
    im = where(pos, where(zero, b, b / (t * 2.0)), signed_t)
    # infinities: sqrt(x +- i inf) = inf +- i inf; sqrt(-inf + iy) = 0 +- i inf
    inf = const(math.inf, a)
    b_inf = is_inf(b)
    a_neg_inf = and_(a.eq(-math.inf), is_finite(b))
    re = where(b_inf, inf, where(a_neg_inf, const(0.0, a), re))
    im = where(b_inf, b, where(a_neg_inf, where(neg_b, -inf, inf), im))
    return re, im


def c_sin(z: C) -> C:
    """sin a cosh b + i cos a sinh b (a zero real part stays exact, so sin(+-inf i) is
    0 +- inf i)."""
    a, b = z
    return where(a.eq(0.0), a, sin_(a) * cosh_(b)), cos_(a) * sinh_(b)


def c_cos(z: C) -> C:
    a, b = z
    return cos_(a) * cosh_(b), where(a.eq(0.0), const(0.0, a), -(sin_(a) * sinh_(b)))


def c_sinh(z: C) -> C:
    a, b = z
    return sinh_(a) * cos_(b), where(b.eq(0.0), b, cosh_(a) * sin_(b))


def c_cosh(z: C) -> C:
    a, b = z
    return cosh_(a) * cos_(b), where(b.eq(0.0), const(0.0, a), sinh_(a) * sin_(b))


def c_tanh(z: C) -> C:
    """Kahan's form: with t = tan b, beta = 1 + t^2, s = sinh a, rho = sqrt(1 + s^2),
    tanh z = (beta rho s + i t) / (1 + beta s^2) (no cancellation near the poles); past
    |a| = big, where the real part rounds to sign(a), the imaginary part is
    2 sin(2b) exp(-2|a|)."""
    a, b = z
    big = 10.0 if a.e.dtype is dtypes.float32 else 20.0
    t = V(E.unary(Op.TAN, b.e))
    beta = t * t + 1.0
    s = sinh_(a)
    rho = sqrt_(s * s + 1.0)
    den = beta * s * s + 1.0
    re = beta * rho * s / den
    im = t / den
    # (not for an infinite or NaN b with a finite a: that is NaN + NaN i, as the general form
    # gives)
    far = and_(V(E.const(big, a.e.dtype)).lt(abs_(a)), or_(is_finite(b), is_inf(a)))
    one = copysign_(const(1.0, a), a)
    im_far = where(is_inf(a), const(0.0, a), sin_(b * 2.0) * 2.0 * exp_(abs_(a) * -2.0))
    # b = 0 keeps the zero's sign (tanh of a real is real)
    im = where(b.eq(0.0), b, im)
    im_far = where(b.eq(0.0), b, im_far)
    return where(far, one, re), where(far, im_far, im)


def c_tan(z: C) -> C:
    """tan z = -i tanh(iz)."""
    t = c_tanh((-z[1], z[0]))
    return t[1], -t[0]


def c_expm1(z: C) -> C:
    """e^a cos b - 1 = expm1(a) cos b - 2 sin^2(b / 2): no cancellation near 0."""
    a, b = z
    s = sin_(b * 0.5)
    re = expm1_(a) * cos_(b) - s * s * 2.0
    # a zero real part is +0 (expm1(-0 + 0i) = 0 + 0i, as JAX and the array API standard)
    return where(re.eq(0.0), const(0.0, a), re), where(b.eq(0.0), b, exp_(a) * sin_(b))


def c_log1p(z: C) -> C:
    """log|1 + z| = log1p(2a + a^2 + b^2) / 2 (summed without cancellation) where |1 + z|^2
    is within a factor 2 of 1, log(hypot(1 + a, b)) elsewhere."""
    a, b = z
    one_a = a + 1.0
    m2 = one_a * one_a + b * b
    near = and_(const(0.5, a).le(m2), m2.le(2.0))
    q = _sum_squares(a * 2.0, a, b)
    re = where(near, log1p_(q) * 0.5, log_(c_abs((one_a, b))))
    return re, atan2_(b, one_a)


def c_pow(z: C, w: C) -> C:
    """z^w = |z|^c e^(-d arg z) (cos q + i sin q), q = c arg z + d log|z| for w = c + di (the
    modulus from the real power, exact for real bases and exponents); 0^w is 1 for w = 0, 0
    for real w > 0; 1^w is 1."""
    (a, b), (c, d) = z, w
    m = c_abs(z)
    th = atan2_(b, a)
    mag = V(E.binary(Op.POW, m.e, c.e)) * exp_(-(d * th))
    dl = where(d.eq(0.0), d, d * log_(m))
    q = c * th + dl
    r = mag * cos_(q), where(q.eq(0.0), q, mag * sin_(q))
    # a positive real base to a real power: the real power (1^nan = 1, as XLA's)
    real = and_(and_(const(0.0, a).lt(a), b.eq(0.0)), d.eq(0.0))
    zero = V(E.const(0.0, a.e.dtype))
    r = where(real, V(E.binary(Op.POW, a.e, c.e)), r[0]), where(real, zero, r[1])
    z0 = and_(a.eq(0.0), b.eq(0.0))
    w0 = and_(c.eq(0.0), d.eq(0.0))
    wpos = and_(E.binary(Op.CMPLT, E.const(0.0, c.e.dtype), c.e), d.eq(0.0))
    one = V(E.const(1.0, a.e.dtype))
    nan = V(E.const(math.nan, a.e.dtype))
    re = where(z0, where(w0, one, where(wpos, zero, nan)), r[0])
    im = where(z0, where(or_(w0, wpos), zero, nan), r[1])
    # 1^w is 1 for every w, infinite or NaN too (as XLA's)
    unit = or_(w0, and_(a.eq(1.0), b.eq(0.0)))
    return where(unit, one, re), where(unit, zero, im)


def c_integer_pow(z: C, y: int) -> C:
    acc: C | None = None
    n = abs(y)
    b = z
    while n:
        if n & 1:
            acc = b if acc is None else c_mul(acc, b)
        n >>= 1
        if n:
            b = c_mul(b, b)
    dt = z[0].e.dtype
    if acc is None:
        acc = (V(E.const(1.0, dt)), V(E.const(0.0, dt)))
    if y < 0:
        acc = c_div((V(E.const(1.0, dt)), V(E.const(0.0, dt))), acc)
    return acc


def c_sign(z: C) -> C:
    m = c_abs(z)
    zero = m.eq(0.0)
    safe = where(zero, V(E.const(1.0, m.e.dtype)), m)
    return where(zero, z[0], z[0] / safe), where(zero, z[1], z[1] / safe)


def c_rsqrt(z: C) -> C:
    """1 / sqrt z, on XLA's branch (its exp(-log(z) / 2) honours a negative zero)."""
    dt = z[0].e.dtype
    return c_div((V(E.const(1.0, dt)), V(E.const(0.0, dt))), c_sqrt(z, signed_zero=True))


def c_exp2(z: C) -> C:
    """exp(z * (ln 2 + 0i)) by a full complex product, as XLA: an infinite part times the
    zero imaginary part is NaN, so exp2 of a complex infinity is NaN + NaN i."""
    ln2 = (const(math.log(2.0), z[0]), const(0.0, z[0]))
    return c_exp(c_mul(z, ln2))


def c_logistic(z: C) -> C:
    one = (const(1.0, z[0]), const(0.0, z[0]))
    e = c_exp((-z[0], -z[1]))
    return c_div(one, (e[0] + 1.0, e[1]))


def c_atan2(y: C, x: C) -> C:
    """atan2 of complex operands, as XLA defines it: -i log((x + iy) / sqrt(x^2 + y^2))."""
    num = (x[0] - y[1], x[1] + y[0])
    den = c_sqrt(_c_add(c_mul(x, x), c_mul(y, y)))
    lg = c_log(c_div(num, den))
    return lg[1], -lg[0]


def _c_add(a: C, b: C) -> C:
    return a[0] + b[0], a[1] + b[1]


def _big(dt: Any) -> float:
    """Past this magnitude the large-argument forms of the inverse functions are exact to
    working precision (about 1 / sqrt(eps))."""
    return 1e8 if dt is dtypes.float64 else 1e4


def _asin_acos_parts(x: V, y: V) -> tuple[V, V, V]:
    """For x, y >= 0: the real parts of asin(x + iy) and acos(x + iy) and the magnitude of
    their imaginary parts, by Hull, Fairgrieve and Tang's algorithm (1997): with
    r = |z + 1|, s = |z - 1|, A = (r + s) / 2 and B = x / A, asin z = asin B + i log(A +
    sqrt(A^2 - 1)); each part is rearranged where its direct form cancels."""
    dt = x.e.dtype
    one = const(1.0, x)
    r = c_abs((x + 1.0, y))
    s = c_abs((x - 1.0, y))
    a = r * 0.5 + s * 0.5
    b = x / a
    yy = y * y
    hr = r * 0.5 + (x + 1.0) * 0.5  # (r + x + 1) / 2, without overflow
    below = x.lt(1.0)
    # real parts: asin B and acos B while B is small, else atan of a well-conditioned ratio
    d_le = sqrt_((a + x) * 0.5 * (yy / (r + (x + 1.0)) + (s + (one - x))))
    h = a * 0.5 + x * 0.5
    d_gt = y * sqrt_(h / hr * 0.5 + h / (s * 0.5 + (x - 1.0) * 0.5) * 0.5)
    d = where(x.le(1.0), d_le, d_gt)
    small_b = b.le(0.6417)
    re_asin = where(small_b, asin_(b), atan_(x / d))
    re_acos = where(small_b, acos_(b), atan_(d / x))
    # imaginary part: log1p(A - 1 + sqrt((A - 1)(A + 1))) near A = 1, else log(A + sqrt(A^2 - 1))
    am1 = where(
        below,
        (yy / (r + (x + 1.0)) + yy / (s + (one - x))) * 0.5,
        (yy / (r + (x + 1.0)) + (s + (x - 1.0))) * 0.5,
    )
    im_near = log1p_(am1 + sqrt_(am1 * (a + 1.0)))
    im_mid = log_(a + sqrt_((a - 1.0) * (a + 1.0)))
    im = where(a.le(1.5), im_near, im_mid)
    # y so small that y^2 underflows: the first-order term y / sqrt(1 - x^2)
    tiny = 1e-150 if dt is dtypes.float64 else 1e-18
    im = where(and_(y.lt(tiny), below), y / sqrt_((one - x) * (x + 1.0)), im)
    # large |z|: asin z = atan2(x, y) + i (log A + log 2) to working precision (infinities too)
    big = V(E.const(_big(dt), dt)).lt(a)
    re_asin = where(big, atan2_(x, y), re_asin)
    re_acos = where(big, atan2_(y, x), re_acos)
    im = where(big, log_(a) + math.log(2.0), im)
    return re_asin, re_acos, im


def _with_sign(m: V, s: V) -> V:
    """|m| with the sign of s, a zero counting as positive: XLA's inverse functions ignore
    the sign of zero parts on their branch cuts."""
    return where(s.lt(0.0), -m, m)


def c_asin(z: C) -> C:
    re, _, im = _asin_acos_parts(abs_(z[0]), abs_(z[1]))
    return _with_sign(re, z[0]), _with_sign(im, z[1])


def c_acos(z: C) -> C:
    _, re, im = _asin_acos_parts(abs_(z[0]), abs_(z[1]))
    re = where(z[0].lt(0.0), V(E.const(math.pi, re.e.dtype)) - re, re)
    return re, _with_sign(-im, z[1])


def c_asinh(z: C) -> C:
    """asinh z = -i asin(iz): the real part from asin's imaginary one, the imaginary part
    from asin's real one with the sign of Im z (its zero's too, as in JAX)."""
    re, _, im = _asin_acos_parts(abs_(z[1]), abs_(z[0]))
    return _with_sign(im, z[0]), copysign_(re, z[1])


def c_acosh(z: C) -> C:
    """acosh z = |Im acos z| + i sign(y) Re acos z (the branch with a nonnegative real part)."""
    u, v = c_acos(z)
    return abs_(v), _with_sign(u, z[1])


def c_atanh(z: C) -> C:
    """atanh z = log((1 + z) / (1 - z)) / 2 (Kahan's arrangement): for x, y >= 0 the real part
    is log1p(4x / ((1 - x)^2 + y^2)) / 4 (the difference of logs of |1 + z| and |1 - z| near
    z = 1), the imaginary part atan2(2y, (1 - x)(1 + x) - y^2) / 2; past 1 / sqrt(eps) they
    are x / |z|^2 and pi / 2 - y / |z|^2."""
    x, y = abs_(z[0]), abs_(z[1])
    dt = x.e.dtype
    one = const(1.0, x)
    omx = one - x
    d = omx * omx + y * y
    re_far = log1p_(x * 4.0 / d) * 0.25
    re_near = (log_(c_abs((x + 1.0, y))) - log_(c_abs((omx, y)))) * 0.5
    re = where(d.lt(x), re_near, re_far)
    im = atan2_(y * 2.0, omx * (x + 1.0) - y * y) * 0.5
    big = V(E.const(_big(dt), dt)).lt(max_(x, y))
    m = c_abs((x, y))
    half_pi = V(E.const(math.pi / 2, dt))
    inf = m.eq(math.inf)
    re = where(big, where(inf, const(0.0, x), x / m / m), re)
    im = where(big, where(inf, half_pi, half_pi - y / m / m), im)
    # an infinite imaginary part gives +-0 + i pi/2 even with a NaN real part (C99's catanh)
    y_inf = is_inf(y)
    re, im = where(y_inf, const(0.0, x), re), where(y_inf, half_pi, im)
    return copysign_(re, z[0]), copysign_(im, z[1])


def c_atan(z: C) -> C:
    """atan z = -i atanh(iz)."""
    u, v = c_atanh((-z[1], z[0]))
    return v, -u


# ---- rules -------------------------------------------------------------------------------------
def _parts(e: Exp, aval: ShapedArray, out: ShapedArray) -> C:
    """The parts of a complex operand, read at the output's index (rank 0 broadcasts)."""
    re, im = part(e, aval.size, 0), part(e, aval.size, 1)
    real_aval = ShapedArray(aval.shape, dtypes.component(aval.dtype))
    real_out = ShapedArray(out.shape, dtypes.component(aval.dtype))
    return V(_at(re, real_aval, real_out)), V(_at(im, real_aval, real_out))


def _out(z: C, out: ShapedArray) -> Exp:
    return interleave(z[0].e, z[1].e, out.size)


def _unary(fn: Callable[[C], C]) -> Callable[..., Exp]:
    def rule(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
        return _out(fn(_parts(ins[0], avals[0], out)), out)

    return rule


def _binary(fn: Callable[[C, C], C]) -> Callable[..., Exp]:
    def rule(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
        a, b = (_parts(e, av, out) for e, av in zip(ins, avals, strict=True))
        return _out(fn(a, b), out)

    return rule


def _abs(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
    return c_abs(_parts(ins[0], avals[0], out)).e


def _compare(negate: bool) -> Callable[..., Exp]:
    def rule(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
        a, b = (_parts(e, av, out) for e, av in zip(ins, avals, strict=True))
        same = and_(a[0].eq(b[0]), a[1].eq(b[1]))
        return E.unary(Op.NOT, same) if negate else same

    return rule


def _integer_pow(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, y: int, **_: Any
) -> Exp:
    return _out(c_integer_pow(_parts(ins[0], avals[0], out), y), out)


def _real(k: int) -> Callable[..., Exp]:
    def rule(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
        return part(ins[0], avals[0].size, k)

    return rule


def _complex(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
    re, im = (_at(e, av, out.update(dtype=av.dtype)) for e, av in zip(ins, avals, strict=True))
    return interleave(re, im, out.size)


def _conj(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
    if avals[0].dtype.kind != "c":  # conj of a real array: x + 0i
        return interleave(ins[0], E.const(0.0, ins[0].dtype), out.size)
    re, im = _parts(ins[0], avals[0], out)
    return _out((re, -im), out)


def _convert(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, new_dtype: Any, **_: Any
) -> Exp:
    src, dst = avals[0].dtype, out.dtype
    if src.kind == "c" and dst.kind == "c":
        re, im = _parts(ins[0], avals[0], out)
        comp = dtypes.component(dst)
        return interleave(E.cast(re.e, comp), E.cast(im.e, comp), out.size)
    if dst.kind == "c":  # real -> complex: zero imaginary part
        comp = dtypes.component(dst)
        x = E.cast(ins[0], comp)
        return interleave(x, E.const(0.0, comp), out.size)
    # complex -> real keeps the real part (NumPy's ComplexWarning), to bool too, as JAX's
    re = _parts(ins[0], avals[0], out)[0]
    return E.cast(re.e, dst)


def _dot_general(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, device: Device, **params: Any
) -> Exp:
    """Four real contractions: (a + bi)(c + di) = (ac - bd) + (ad + bc)i."""
    real_rule = LOWERINGS[lax.dot_general_p]
    comp = dtypes.component(out.dtype)
    ravals = [ShapedArray(av.shape, comp) for av in avals]
    rout = ShapedArray(out.shape, comp)
    pa = [part(ins[0], avals[0].size, k) for k in (0, 1)]
    pb = [part(ins[1], avals[1].size, k) for k in (0, 1)]
    params.pop("preferred_element_type", None)

    def dot(x: Exp, y: Exp) -> V:
        e = real_rule([x, y], ravals, rout, preferred_element_type=None, **params)
        return V(lazy.load_all(lazy.schedule(e, rout.size, device)))

    re = dot(pa[0], pb[0]) - dot(pa[1], pb[1])
    im = dot(pa[0], pb[1]) + dot(pa[1], pb[0])
    return interleave(re.e, im.e, out.size)


def _lex(greater: bool) -> Callable[..., Exp]:
    """max/min of complex numbers in lexicographic order (real part, then imaginary part), as
    JAX's: x is picked where it wins the comparison (so NaNs pick the other operand)."""

    def rule(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
        (xr, xi), (yr, yi) = (_parts(e, av, out) for e, av in zip(ins, avals, strict=True))

        def wins(a: V, b: V) -> Exp:
            return b.lt(a) if greater else a.lt(b)

        pick = E.where(xr.eq(yr), wins(xi, yi), wins(xr, yr))
        return _out((where(pick, xr, yr), where(pick, xi, yi)), out)

    return rule


def _clamp(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
    """XLA's clamp of complex numbers compares real parts only: y = lo where Re x <= Re lo,
    else x; then y where Re y <= Re hi, else hi (so NaNs end up as hi)."""
    lo, x, hi = (_parts(e, av, out) for e, av in zip(ins, avals, strict=True))
    take_lo = x[0].le(lo[0])
    y = where(take_lo, lo[0], x[0]), where(take_lo, lo[1], x[1])
    keep = y[0].le(hi[0])
    return _out((where(keep, y[0], hi[0]), where(keep, y[1], hi[1])), out)


# ---- rules written with lax functions ------------------------------------------------------------
def _composed(fn: Callable[..., Any]) -> Callable[..., Exp]:
    """A rule computed by `fn` from lax functions on arrays (the operands' storage expressions
    wrapped as arrays); for primitives that are no single kernel expression on complex
    operands (products, lexicographic reductions and scans)."""

    def rule(
        ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, device: Device, **params: Any
    ) -> Exp:
        args = [Array(av, device, e) for e, av in zip(ins, avals, strict=True)]
        res = exp_of(fn(*args, **params))
        assert res is not None
        return res

    return rule


def _kept(ndim: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _reduce_lex(greater: bool) -> Callable[..., Any]:
    """reduce_max/min: the extreme real part, then the extreme imaginary part among the
    elements that have it. A NaN real part wins (as the real reduction's NaN does), and the
    imaginary part is then the extreme among the NaN-real elements' (so the reduction of one
    element is that element, NaN + 0i included, as XLA's)."""

    def fn(x: Any, *, axes: tuple[int, ...], **_: Any) -> Any:
        shape = x.aval.shape
        re, im = lax.real(x), lax.imag(x)
        red = lax.reduce_max if greater else lax.reduce_min
        m = red(re, axes)
        mb = lax.broadcast_in_dim(m, shape, _kept(len(shape), axes))
        hit = lax.bitwise_or(lax.eq(re, mb), lax.bitwise_and(lax.ne(re, re), lax.ne(mb, mb)))
        fill = lax.full(shape, -math.inf if greater else math.inf, re.aval.dtype)
        mi = red(lax.select(hit, im, fill), axes)
        return lax.complex(m, mi)

    return fn


def _reduce_prod(x: Any, *, axes: tuple[int, ...], **_: Any) -> Any:
    """The product over `axes` by pairwise halving (log2(n) complex multiplies)."""
    shape = x.aval.shape
    kept = _kept(len(shape), axes)
    lead = tuple(shape[i] for i in kept)
    n = math.prod(shape[a] for a in axes)
    one = lax.full((), 1, x.aval.dtype)
    if n == 0:
        return lax.broadcast(one, lead)
    xs = lax.reshape(lax.transpose(x, kept + tuple(axes)), (*lead, n))
    k = len(lead)
    while n > 1:
        if n % 2:
            xs = lax.pad(xs, one, [(0, 0, 0)] * k + [(0, 1, 0)])
            n += 1
        h = n // 2
        a = lax.slice(xs, (0,) * (k + 1), (*lead, h))
        b = lax.slice(xs, (0,) * k + (h,), (*lead, n))
        xs, n = lax.mul(a, b), h
    return lax.reshape(xs, lead)


def _scan(combine: Callable[[Any, Any], Any], fill: Any) -> Callable[..., Any]:
    """An inclusive scan by recursive doubling (Hillis-Steele): log2(n) shifted combines."""

    def fn(x: Any, *, axis: int, reverse: bool) -> Any:
        nd = x.aval.ndim
        if reverse:
            x = lax.rev(x, (axis,))
        n = x.aval.shape[axis]
        pad_value = lax.full((), fill, x.aval.dtype)
        d = 1
        while d < n:
            hi = list(x.aval.shape)
            hi[axis] = n - d
            cfg = [(0, 0, 0)] * nd
            cfg[axis] = (d, 0, 0)
            x = combine(x, lax.pad(lax.slice(x, (0,) * nd, hi), pad_value, cfg))
            d *= 2
        return lax.rev(x, (axis,)) if reverse else x

    return fn


def _sort_impl(real_impl: Callable[..., Any]) -> Callable[..., Any]:
    """lax.sort with complex operands: each becomes its real and imaginary parts (two keys
    where it is a key, so complex keys order lexicographically, as JAX's comparator)."""

    def impl(*operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list[Any]:
        complex_at = [core.get_aval(o).dtype.kind == "c" for o in operands]
        if not any(complex_at):
            return real_impl(*operands, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
        split: list[Any] = []
        keys = 0
        for k, (o, c) in enumerate(zip(operands, complex_at, strict=True)):
            parts = [lax.real(o), lax.imag(o)] if c else [o]
            split += parts
            keys += len(parts) if k < num_keys else 0
        outs = sorting.sort_p.bind(*split, dimension=dimension, is_stable=is_stable, num_keys=keys)
        res, i = [], 0
        for c in complex_at:
            res.append(lax.complex(outs[i], outs[i + 1]) if c else outs[i])
            i += 2 if c else 1
        return res

    return impl


def _scatter_impl(name: str, real_impl: Callable[..., Any]) -> Callable[..., Any]:
    """Scatters of complex operands. Replacement and addition act on each part; products and
    lexicographic extrema find each update's flat target (a gather of the operand's flat
    positions with the scatter's indices, -1 where JAX drops the update) and combine the
    updates per target over an (operand x updates) grid."""
    prim = slicing.scatter_prims[name]

    def impl(operand: Any, indices: Any, updates: Any, **params: Any) -> Any:
        if core.get_aval(operand).dtype.kind != "c":
            return real_impl(operand, indices, updates, **params)
        if name in ("scatter", "scatter-add"):
            re = prim.bind(lax.real(operand), indices, lax.real(updates), **params)
            im = prim.bind(lax.imag(operand), indices, lax.imag(updates), **params)
            return lax.complex(re, im)
        oa, ua = operand.aval, core.get_aval(updates)
        size, n = oa.size, ua.size
        if n == 0 or size == 0:
            return operand
        gdn, sizes = slicing._scatter_to_gather(params["dimension_numbers"], ua, oa)
        drop = params["mode"] is slicing.GatherScatterMode.FILL_OR_DROP
        flat_pos = lax.reshape(lax.iota(dtypes.int32, size), oa.shape)
        target = slicing.gather(
            flat_pos, indices, gdn, sizes, mode="fill" if drop else "clip", fill_value=-1
        )
        grid = (size, n)
        hit = lax.eq(
            lax.broadcast_in_dim(lax.reshape(target, (n,)), grid, (1,)),
            lax.broadcasted_iota(dtypes.int32, grid, 0),
        )
        u = lax.broadcast_in_dim(lax.reshape(updates, (n,)), grid, (1,))
        if name == "scatter-mul":
            ones = lax.full(grid, 1, oa.dtype)
            prod = lax.reduce_prod(lax.select(hit, u, ones), (1,))
            return lax.mul(operand, lax.reshape(prod, oa.shape))
        big = name == "scatter-max"
        fill = lax.full(
            grid, complex(-math.inf, -math.inf) if big else complex(math.inf, math.inf), oa.dtype
        )
        red = lax.reduce_max if big else lax.reduce_min
        best = lax.reshape(red(lax.select(hit, u, fill), (1,)), oa.shape)
        return (lax.max if big else lax.min)(operand, best)

    return impl


def _conv_impl(real_impl: Callable[..., Any]) -> Callable[..., Any]:
    """Convolutions of complex operands: four real convolutions of the parts (the operation
    is bilinear), as the complex dot_general."""
    prim = convolution.conv_general_dilated_p

    def impl(lhs: Any, rhs: Any, **params: Any) -> Any:
        kinds = [core.get_aval(x).dtype.kind for x in (lhs, rhs)]
        if "c" not in kinds:
            return real_impl(lhs, rhs, **params)
        pet = params.get("preferred_element_type")
        if pet is not None:
            params = {**params, "preferred_element_type": dtypes.component(pet)}

        def parts(x: Any, kind: str) -> tuple[Any, Any]:
            return (lax.real(x), lax.imag(x)) if kind == "c" else (x, None)

        (ar, ai), (br, bi) = parts(lhs, kinds[0]), parts(rhs, kinds[1])

        def conv(a: Any, b: Any) -> Any:
            return None if a is None or b is None else prim.bind(a, b, **params)

        def add(x: Any, y: Any, sign: float = 1.0) -> Any:
            if y is None:
                return x
            y = y if sign > 0 else lax.neg(y)
            return y if x is None else lax.add(x, y)

        re = add(conv(ar, br), conv(ai, bi), -1.0)
        im = add(conv(ar, bi), conv(ai, br))
        return lax.complex(re, im)

    return impl


_UNARY = {
    "exp": c_exp, "log": c_log, "sqrt": c_sqrt, "rsqrt": c_rsqrt, "sin": c_sin, "cos": c_cos,
    "tan": c_tan, "sinh": c_sinh, "cosh": c_cosh, "tanh": c_tanh, "expm1": c_expm1,
    "log1p": c_log1p, "sign": c_sign, "exp2": c_exp2, "logistic": c_logistic, "asin": c_asin,
    "acos": c_acos, "atan": c_atan, "asinh": c_asinh, "acosh": c_acosh, "atanh": c_atanh,
}  # fmt: skip
for _name, _fn in _UNARY.items():
    COMPLEX_LOWERINGS[lax.prims[_name]] = _unary(_fn)
COMPLEX_LOWERINGS[lax.prims["mul"]] = _binary(c_mul)
COMPLEX_LOWERINGS[lax.prims["div"]] = _binary(c_div)
COMPLEX_LOWERINGS[lax.prims["pow"]] = _binary(c_pow)
COMPLEX_LOWERINGS[lax.prims["atan2"]] = _binary(c_atan2)
COMPLEX_LOWERINGS[lax.prims["abs"]] = _abs
COMPLEX_LOWERINGS[lax.prims["eq"]] = _compare(False)
COMPLEX_LOWERINGS[lax.prims["ne"]] = _compare(True)
COMPLEX_LOWERINGS[lax.integer_pow_p] = _integer_pow
COMPLEX_LOWERINGS[lax.real_p] = _real(0)
COMPLEX_LOWERINGS[lax.imag_p] = _real(1)
COMPLEX_LOWERINGS[lax.complex_p] = _complex
COMPLEX_LOWERINGS[lax.conj_p] = _conj
COMPLEX_LOWERINGS[lax.convert_element_type_p] = _convert


def _iota(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    dtype: Any,
    shape: tuple[int, ...],
    dimension: int,
    **_: Any,
) -> Exp:
    """A complex iota: the index as the real part, zero imaginary part."""
    comp = dtypes.component(dtype)
    i = view.unravel(E.idx(out.size), shape)[dimension]
    return interleave(E.cast(i, comp), E.const(0.0, comp), out.size)


COMPLEX_LOWERINGS[lax.iota_p] = _iota
COMPLEX_LOWERINGS[lax.dot_general_p] = _dot_general
COMPLEX_LOWERINGS[lax.max_p] = _lex(True)
COMPLEX_LOWERINGS[lax.min_p] = _lex(False)
COMPLEX_LOWERINGS[lax.clamp_p] = _clamp
COMPLEX_LOWERINGS[lax.prims["reduce_max"]] = _composed(_reduce_lex(True))
COMPLEX_LOWERINGS[lax.prims["reduce_min"]] = _composed(_reduce_lex(False))
COMPLEX_LOWERINGS[lax.prims["reduce_prod"]] = _composed(_reduce_prod)
COMPLEX_LOWERINGS[lax.prims["cumprod"]] = _composed(_scan(lax.mul, 1))
COMPLEX_LOWERINGS[lax.prims["cummax"]] = _composed(_scan(lax.max, complex(-math.inf, -math.inf)))
COMPLEX_LOWERINGS[lax.prims["cummin"]] = _composed(_scan(lax.min, complex(math.inf, math.inf)))
sorting.sort_p.def_impl(_sort_impl(sorting.sort_p.impl_or_raise()))
convolution.conv_general_dilated_p.def_impl(
    _conv_impl(convolution.conv_general_dilated_p.impl_or_raise())
)
for _name, _sp in slicing.scatter_prims.items():
    _sp.def_impl(_scatter_impl(_name, _sp.impl_or_raise()))


def _impl(prim: Any) -> Callable[..., Any]:
    return lambda *args, **params: apply_primitive(prim, *args, **params)


for _p in (lax.real_p, lax.imag_p, lax.complex_p, lax.conj_p):
    _p.def_impl(_impl(_p))


# ---- primitives that act on each part --------------------------------------------------------
# Movement, sums and selection treat the real and imaginary parts independently: on complex
# operands they are applied to each part and the parts are recombined. The parts and the
# recombination are index rewrites, so this fuses like the real primitive.
_PARTWISE = (
    "neg", "add", "sub", "add_any", "select_n", "broadcast_in_dim", "reshape", "squeeze",
    "stop_gradient", "transpose", "concatenate", "slice", "pad", "rev", "dynamic_slice",
    "dynamic_update_slice", "gather", "scatter", "scatter-add", "reduce_sum", "cumsum",
    "reduce_window_sum", "window_gather", "window_scatter_add", "copy", "copy_p",
)  # fmt: skip


def _by_parts(
    prim: Primitive, args: Sequence[Any], avals: list[ShapedArray], params: dict[str, Any]
) -> Any:
    def parts(x: Any, av: ShapedArray) -> tuple[Any, Any]:
        if av.dtype.kind != "c":
            return x, x
        if not isinstance(x, Array):  # a Python complex
            z = complex(x)
            return z.real, z.imag
        return lax.real(x), lax.imag(x)

    split = [parts(a, av) for a, av in zip(args, avals, strict=True)]
    re = prim.bind(*(p[0] for p in split), **params)
    im = prim.bind(*(p[1] for p in split), **params)
    return lax.complex(re, im)


for _name in _PARTWISE:
    COMPONENTWISE[_name] = _by_parts
