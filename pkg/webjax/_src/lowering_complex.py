"""Complex arithmetic on real kernels: the lowering rules of primitives on complex operands.

Kernels never see a complex type (see `array.storage`): a rule receives the storage expressions
of its operands, takes their real and imaginary parts as real expressions over the element
index, computes the result's parts with real ops and interleaves them again. Primitives that
treat the parts independently (movement, sums, selection) do not need a rule here: they are
applied to each part (`lowering.COMPONENTWISE`).

The formulas are the textbook ones, arranged to avoid needless overflow and cancellation
(hypot-style magnitudes, Smith's division, half-angle forms for expm1), as XLA's expansions are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import dtypes, lazy
from .array import interleave, part
from .core import ShapedArray
from .ir import exp as E
from .ir.exp import Exp
from .ir.ops import Op
from .lax import lax
from .lowering import COMPLEX_LOWERINGS, LOWERINGS, _at, apply_primitive
from .runtime.backend import Device


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
    """Smith's algorithm: scale by the larger component of the divisor."""
    (p, q), (c, d) = a, b
    big_c = abs_(d).le(abs_(c))
    r1 = d / c
    den1 = c + d * r1
    r2 = c / d
    den2 = c * r2 + d
    re = where(big_c, (p + q * r1) / den1, (p * r2 + q) / den2)
    im = where(big_c, (q - p * r1) / den1, (q * r2 - p) / den2)
    return re, im


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
    return e * cos_(b), where(b.eq(0.0), b, e * sin_(b))


def c_log(z: C) -> C:
    return log_(c_abs(z)), atan2_(z[1], z[0])


def c_sqrt(z: C) -> C:
    """sqrt(|z|) on the bisector: t = sqrt((|z| + |a|) / 2), the other part b / (2t)."""
    a, b = z
    m = c_abs(z)
    t = sqrt_((m + abs_(a)) * 0.5)
    zero = t.eq(0.0)
    other = where(zero, t, abs_(b) / (t * 2.0))
    pos = E.unary(Op.NOT, E.binary(Op.CMPLT, a.e, E.const(0.0, a.e.dtype)))
    re = where(pos, t, other)
    signed_t = where(b.lt(0.0), -t, t)
    im = where(pos, where(zero, b, b / (t * 2.0)), signed_t)
    return re, im


def c_sin(z: C) -> C:
    a, b = z
    return sin_(a) * cosh_(b), cos_(a) * sinh_(b)


def c_cos(z: C) -> C:
    a, b = z
    return cos_(a) * cosh_(b), -(sin_(a) * sinh_(b))


def c_sinh(z: C) -> C:
    a, b = z
    return sinh_(a) * cos_(b), cosh_(a) * sin_(b)


def c_cosh(z: C) -> C:
    a, b = z
    return cosh_(a) * cos_(b), sinh_(a) * sin_(b)


def c_tanh(z: C) -> C:
    """(sinh 2a + i sin 2b) / (cosh 2a + cos 2b); past |a| = big the result is sign(a) + 0i
    to working precision (and cosh would overflow)."""
    a, b = z
    big = 40.0 if a.e.dtype is dtypes.float32 else 350.0
    den = cosh_(a * 2.0) + cos_(b * 2.0)
    re = sinh_(a * 2.0) / den
    im = sin_(b * 2.0) / den
    far = E.binary(Op.CMPLT, E.const(big, a.e.dtype), abs_(a).e)
    one = where(a.lt(0.0), V(E.const(-1.0, a.e.dtype)), V(E.const(1.0, a.e.dtype)))
    return where(far, one, re), where(far, b * 0.0, im)


def c_tan(z: C) -> C:
    """tan z = -i tanh(iz)."""
    t = c_tanh((-z[1], z[0]))
    return t[1], -t[0]


def c_expm1(z: C) -> C:
    """e^a cos b - 1 = expm1(a) cos b - 2 sin^2(b / 2): no cancellation near 0."""
    a, b = z
    s = sin_(b * 0.5)
    return expm1_(a) * cos_(b) - s * s * 2.0, where(b.eq(0.0), b, exp_(a) * sin_(b))


def c_log1p(z: C) -> C:
    """log|1 + z| = log1p(a (2 + a) + b^2) / 2 near 0, log(hypot(1 + a, b)) elsewhere."""
    a, b = z
    one_a = a + 1.0
    small = (abs_(a) + abs_(b)).lt(0.5)
    near = log1p_(a * (a + 2.0) + b * b) * 0.5
    far = log_(c_abs((one_a, b)))
    return where(small, near, far), atan2_(b, one_a)


def c_pow(z: C, w: C) -> C:
    """z^w = exp(w log z); 0^w is 1 for w = 0, 0 for real w > 0."""
    r = c_exp(c_mul(w, c_log(z)))
    z0 = and_(z[0].eq(0.0), z[1].eq(0.0))
    w0 = and_(w[0].eq(0.0), w[1].eq(0.0))
    wpos = and_(E.binary(Op.CMPLT, E.const(0.0, w[0].e.dtype), w[0].e), w[1].eq(0.0))
    zero = V(E.const(0.0, z[0].e.dtype))
    one = V(E.const(1.0, z[0].e.dtype))
    re = where(z0, where(w0, one, where(wpos, zero, r[0])), r[0])
    im = where(z0, where(or_(w0, wpos), zero, r[1]), r[1])
    return where(w0, one, re), where(w0, zero, im)


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
    dt = z[0].e.dtype
    return c_div((V(E.const(1.0, dt)), V(E.const(0.0, dt))), c_sqrt(z))


def c_exp2(z: C) -> C:
    ln2 = math.log(2.0)
    return c_exp((z[0] * ln2, z[1] * ln2))


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
    am1 = where(below, (yy / (r + (x + 1.0)) + yy / (s + (one - x))) * 0.5,
                (yy / (r + (x + 1.0)) + (s + (x - 1.0))) * 0.5)  # fmt: skip
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


def c_asin(z: C) -> C:
    re, _, im = _asin_acos_parts(abs_(z[0]), abs_(z[1]))
    return copysign_(re, z[0]), copysign_(im, z[1])


def c_acos(z: C) -> C:
    _, re, im = _asin_acos_parts(abs_(z[0]), abs_(z[1]))
    re = where(negative(z[0]), V(E.const(math.pi, re.e.dtype)) - re, re)
    return re, copysign_(im, -z[1])


def c_asinh(z: C) -> C:
    """asinh z = -i asin(iz)."""
    u, v = c_asin((-z[1], z[0]))
    return v, -u


def c_acosh(z: C) -> C:
    """acosh z = |Im acos z| + i sign(y) Re acos z (the branch with a nonnegative real part)."""
    u, v = c_acos(z)
    return abs_(v), copysign_(u, z[1])


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


def _integer_pow(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, y: int,
                 **_: Any) -> Exp:  # fmt: skip
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


def _convert(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, new_dtype: Any,
             **_: Any) -> Exp:  # fmt: skip
    src, dst = avals[0].dtype, out.dtype
    if src.kind == "c" and dst.kind == "c":
        re, im = _parts(ins[0], avals[0], out)
        comp = dtypes.component(dst)
        return interleave(E.cast(re.e, comp), E.cast(im.e, comp), out.size)
    if dst.kind == "c":  # real -> complex: zero imaginary part
        comp = dtypes.component(dst)
        x = E.cast(ins[0], comp)
        return interleave(x, E.const(0.0, comp), out.size)
    # complex -> real keeps the real part (NumPy's ComplexWarning); to bool: z != 0
    re, im = _parts(ins[0], avals[0], out)
    if dst is dtypes.bool_:
        return or_(E.unary(Op.NOT, re.eq(0.0)), E.unary(Op.NOT, im.eq(0.0)))
    return E.cast(re.e, dst)


def _dot_general(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *,
                 device: Device, **params: Any) -> Exp:  # fmt: skip
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
COMPLEX_LOWERINGS[lax.dot_general_p] = _dot_general


def _impl(prim: Any) -> Callable[..., Any]:
    return lambda *args, **params: apply_primitive(prim, *args, **params)


for _p in (lax.real_p, lax.imag_p, lax.complex_p, lax.conj_p):
    _p.def_impl(_impl(_p))
