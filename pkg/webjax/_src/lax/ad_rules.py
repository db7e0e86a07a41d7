"""Derivative rules of the lax primitives: jvp for every differentiable primitive, transpose
for the linear ones. Written with lax functions only, so they compose with every trace."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..core import ShapedArray
from ..interpreters import ad
from ..interpreters.ad import UndefinedPrimal, Zero, is_undefined
from . import lax
from .lax import prims

# ---- helpers ------------------------------------------------------------------------------------


def _aval(x: Any) -> ShapedArray:
    return x.aval if isinstance(x, (Zero, UndefinedPrimal)) else core.get_aval(x)


def _zeros(aval: ShapedArray) -> Any:
    return lax.full(aval.shape, 0, aval.dtype)


def _scalar(v: float, like: Any) -> Any:
    return lax.full((), v, _aval(like).dtype)


def _add(a: Any, b: Any) -> Any:
    return add_any_p.bind(a, b)


ad.zeros_like_aval = _zeros
ad.add_tangents = _add

add_any_p = lax._prim("add_any")
add_any_p.def_abstract_eval(lambda a, b: a.update(weak_type=a.weak_type and b.weak_type))


def _unbroadcast(ct: Any, aval: ShapedArray) -> Any:
    """Sum a cotangent back to an operand that lax broadcast from rank 0."""
    if isinstance(ct, Zero):
        return Zero(aval)
    if _aval(ct).shape == aval.shape:
        return ct
    return lax.reduce_sum(ct, tuple(range(len(_aval(ct).shape))))


def _tangent_dtype_ok(aval: ShapedArray) -> bool:
    return aval.dtype.kind in "fc"


def defjvp_unary(name: str, deriv: Callable[[Any, Any], Any]) -> None:
    """d f(x) = deriv(x, f(x)) * t."""

    def rule(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        y = prims[name].bind(x)
        return y, lax.mul(ad.instantiate(t), deriv(x, y))

    ad.primitive_jvps[prims[name]] = rule


def deflinear(prim: core.Primitive, transpose: Callable[..., list[Any]]) -> None:
    """A linear primitive: its jvp applies it to the tangents."""

    def jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        out = prim.bind(*primals, **params)
        if all(isinstance(t, Zero) for t in tangents):
            zero = [Zero(_aval(o)) for o in out] if prim.multiple_results else Zero(_aval(out))
            return out, zero
        tangent_in = [ad.instantiate(t) for t in tangents]
        return out, prim.bind(*tangent_in, **params)

    ad.primitive_jvps[prim] = jvp
    ad.primitive_transposes[prim] = transpose


# ---- nondifferentiable --------------------------------------------------------------------------
for _name in (
    "sign",
    "floor",
    "ceil",
    "round",
    "is_finite",
    "population_count",
    "clz",
    "not",
    "and",
    "or",
    "xor",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "iota",
    "reduce_and",
    "reduce_or",
    "reduce_xor",
    "stop_gradient",
    "bitcast_convert_type",
):
    ad.nondifferentiable.add(prims[_name])


# ---- unary --------------------------------------------------------------------------------------
defjvp_unary("exp", lambda x, y: y)
defjvp_unary("exp2", lambda x, y: lax.mul(y, _scalar(math.log(2.0), x)))
defjvp_unary("log", lambda x, y: lax.div(_scalar(1.0, x), x))
defjvp_unary("log1p", lambda x, y: lax.div(_scalar(1.0, x), lax.add(x, _scalar(1.0, x))))
defjvp_unary("expm1", lambda x, y: lax.add(y, _scalar(1.0, x)))
defjvp_unary("tanh", lambda x, y: lax.sub(_scalar(1.0, x), lax.mul(y, y)))
defjvp_unary("logistic", lambda x, y: lax.mul(y, lax.sub(_scalar(1.0, x), y)))
defjvp_unary("sin", lambda x, y: lax.cos(x))
defjvp_unary("cos", lambda x, y: lax.neg(lax.sin(x)))
defjvp_unary("tan", lambda x, y: lax.add(_scalar(1.0, x), lax.mul(y, y)))
defjvp_unary("asin", lambda x, y: lax.rsqrt(lax.sub(_scalar(1.0, x), lax.mul(x, x))))
defjvp_unary("acos", lambda x, y: lax.neg(lax.rsqrt(lax.sub(_scalar(1.0, x), lax.mul(x, x)))))
defjvp_unary("atan", lambda x, y: lax.div(_scalar(1.0, x), lax.add(_scalar(1.0, x), lax.mul(x, x))))
defjvp_unary("sinh", lambda x, y: lax.cosh(x))
defjvp_unary("cosh", lambda x, y: lax.sinh(x))
defjvp_unary("asinh", lambda x, y: lax.rsqrt(lax.add(lax.mul(x, x), _scalar(1.0, x))))
defjvp_unary(
    "acosh",
    lambda x, y: lax.rsqrt(lax.mul(lax.sub(x, _scalar(1.0, x)), lax.add(x, _scalar(1.0, x)))),
)
defjvp_unary(
    "atanh", lambda x, y: lax.div(_scalar(1.0, x), lax.sub(_scalar(1.0, x), lax.mul(x, x)))
)
defjvp_unary("sqrt", lambda x, y: lax.div(_scalar(0.5, x), y))
defjvp_unary("rsqrt", lambda x, y: lax.mul(_scalar(-0.5, x), lax.div(y, x)))
defjvp_unary("cbrt", lambda x, y: lax.div(_scalar(1.0 / 3.0, x), lax.mul(y, y)))


def _abs_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    """|x|' t = t where x >= 0 else -t (so 1 at 0 and -1 at NaN, as JAX); for complex x,
    Re(conj(x) t) / |x| (0 where x = 0), as JAX."""
    (x,), (t,) = primals, tangents
    y = lax.abs(x)
    if _aval(x).dtype.kind != "c":
        t = ad.instantiate(t)
        return y, lax.select(lax.ge(x, _scalar(0.0, x)), t, lax.neg(t))
    ya = _aval(y)
    safe = lax.select(lax.eq(y, _scalar(0.0, y)), lax.full(ya.shape, 1.0, ya.dtype), y)
    d = lax.div(lax.conj(x), lax.complex(safe, _zeros(ya)))
    return y, lax.real(lax.mul(ad.instantiate(t), d))


ad.primitive_jvps[prims["abs"]] = _abs_jvp
defjvp_unary(
    "erf",
    lambda x, y: lax.mul(_scalar(2.0 / math.sqrt(math.pi), x), lax.exp(lax.neg(lax.mul(x, x)))),
)
defjvp_unary(
    "erfc",
    lambda x, y: lax.mul(_scalar(-2.0 / math.sqrt(math.pi), x), lax.exp(lax.neg(lax.mul(x, x)))),
)
defjvp_unary(
    "erf_inv", lambda x, y: lax.mul(_scalar(math.sqrt(math.pi) / 2.0, x), lax.exp(lax.mul(y, y)))
)
defjvp_unary("lgamma", lambda x, y: lax.digamma(x))


def _trigamma(x: Any) -> Any:
    """polygamma(1, x): shift x past 6 by recurrence, then the asymptotic series; negative
    arguments by reflection, trigamma(1 - x) + trigamma(x) = pi^2 / sin^2(pi x), with sin's
    argument reduced exactly (x - round(x)) so that poles keep their precision. 16-bit floats
    compute in float32."""
    dt = _aval(x).dtype
    if dt.itemsize == 2:
        return lax.convert_element_type(_trigamma(lax.convert_element_type(x, dtypes.float32)), dt)
    one = _scalar(1.0, x)
    neg = lax.lt(x, _scalar(0.5, x))
    z = lax.select(neg, lax.sub(one, x), x)
    acc = lax.full(_aval(x).shape, 0.0, _aval(x).dtype)
    for k in range(6):
        zk = lax.add(z, _scalar(float(k), x))
        acc = lax.add(acc, lax.div(one, lax.mul(zk, zk)))
    w = lax.add(z, _scalar(6.0, x))
    u = lax.div(one, w)
    u2 = lax.mul(u, u)
    c = lambda v: _scalar(v, x)
    inner = lax.sub(c(1 / 42), lax.mul(u2, c(1 / 30)))
    inner = lax.sub(c(1 / 30), lax.mul(u2, inner))
    inner = lax.sub(c(1 / 6), lax.mul(u2, inner))
    tail = lax.add(lax.add(u, lax.mul(u2, c(0.5))), lax.mul(lax.mul(u, u2), inner))
    pos = lax.add(acc, tail)
    s = lax.sin(lax.mul(_scalar(math.pi, x), lax.sub(x, lax.round(x))))  # (squared: sign-free)
    reflected = lax.sub(lax.div(_scalar(math.pi**2, x), lax.mul(s, s)), pos)
    return lax.select(neg, reflected, pos)


defjvp_unary("digamma", lambda x, y: _trigamma(x))


def _neg_transpose(ct: Any, x: Any) -> list[Any]:
    return [Zero(x.aval) if isinstance(ct, Zero) else lax.neg(ct)]


deflinear(prims["neg"], _neg_transpose)


# ---- complex parts (transposes as JAX's: no conjugation) -----------------------------------------
def _real_transpose(ct: Any, x: Any) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [lax.complex(ct, _zeros(_aval(ct)))]


def _imag_transpose(ct: Any, x: Any) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [lax.complex(_zeros(_aval(ct)), lax.neg(ct))]


def _complex_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(_aval(x)), Zero(_aval(y))]
    re, im = lax.real(ct), lax.neg(lax.imag(ct))
    return [
        _unbroadcast(re, _aval(x)) if is_undefined(x) else None,
        _unbroadcast(im, _aval(y)) if is_undefined(y) else None,
    ]


def _conj_transpose(ct: Any, x: Any, *, input_dtype: Any) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [lax.conj(ct) if input_dtype.kind == "c" else lax.real(ct)]


deflinear(lax.real_p, _real_transpose)
deflinear(lax.imag_p, _imag_transpose)
deflinear(lax.conj_p, _conj_transpose)


def _complex_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    x, y = primals
    out = lax.complex(x, y)
    if all(isinstance(t, Zero) for t in tangents):
        return out, Zero(_aval(out))
    oa = _aval(out)
    tx, ty = (
        lax.broadcast_in_dim(ad.instantiate(t), oa.shape, ())
        if _aval(ad.instantiate(t)).shape != oa.shape
        else ad.instantiate(t)
        for t in tangents
    )
    return out, lax.complex(tx, ty)


ad.primitive_jvps[lax.complex_p] = _complex_jvp
ad.primitive_transposes[lax.complex_p] = _complex_transpose


# ---- binary -------------------------------------------------------------------------------------
def _bcast_tangent(t: Any, out_aval: ShapedArray) -> Any:
    """A tangent of a rank-0 operand broadcast against a larger operand."""
    t = ad.instantiate(t)
    if _aval(t).shape == out_aval.shape:
        return t
    return lax.broadcast_in_dim(t, out_aval.shape, ())


def _add_jvp(sign: float) -> Callable[..., tuple[Any, Any]]:
    def rule(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
        x, y = primals
        tx, ty = tangents
        out = lax.add(x, y) if sign > 0 else lax.sub(x, y)
        oa = _aval(out)
        if isinstance(ty, Zero):
            return out, _bcast_tangent(tx, oa)
        ty = _bcast_tangent(ty, oa)
        if sign < 0:
            ty = lax.neg(ty)
        if isinstance(tx, Zero):
            return out, ty
        return out, _add(_bcast_tangent(tx, oa), ty)

    return rule


def _add_transpose(sign: float) -> Callable[..., list[Any]]:
    def rule(ct: Any, x: Any, y: Any) -> list[Any]:
        ctx = _unbroadcast(ct, _aval(x)) if is_undefined(x) else None
        cty = _unbroadcast(ct, _aval(y)) if is_undefined(y) else None
        if cty is not None and sign < 0 and not isinstance(cty, Zero):
            cty = lax.neg(cty)
        return [ctx, cty]

    return rule


ad.primitive_jvps[prims["add"]] = _add_jvp(1.0)
ad.primitive_transposes[prims["add"]] = _add_transpose(1.0)
ad.primitive_jvps[prims["sub"]] = _add_jvp(-1.0)
ad.primitive_transposes[prims["sub"]] = _add_transpose(-1.0)
ad.primitive_jvps[add_any_p] = _add_jvp(1.0)
ad.primitive_transposes[add_any_p] = _add_transpose(1.0)


def _mul_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    x, y = primals
    tx, ty = tangents
    out = lax.mul(x, y)
    terms = []
    if not isinstance(tx, Zero):
        terms.append(lax.mul(tx, y))
    if not isinstance(ty, Zero):
        terms.append(lax.mul(x, ty))
    t = terms[0] if len(terms) == 1 else _add(*terms)
    return out, _bcast_tangent(t, _aval(out))


def _mul_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if is_undefined(x) and is_undefined(y):
        raise ValueError("mul is not linear in both operands")
    if isinstance(ct, Zero):
        return [
            Zero(x.aval) if is_undefined(x) else None,
            Zero(y.aval) if is_undefined(y) else None,
        ]
    if is_undefined(x):
        return [_unbroadcast(lax.mul(ct, y), x.aval), None]
    return [None, _unbroadcast(lax.mul(x, ct), y.aval)]


ad.primitive_jvps[prims["mul"]] = _mul_jvp
ad.primitive_transposes[prims["mul"]] = _mul_transpose


def _div_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    x, y = primals
    tx, ty = tangents
    out = lax.div(x, y)
    if _aval(out).dtype.kind not in "fc":
        return out, Zero(_aval(out))
    t: Any = Zero(_aval(out))
    if not isinstance(tx, Zero):
        t = lax.div(tx, y)
    if not isinstance(ty, Zero):
        t = ad.add_maybe_zero(t, lax.neg(lax.mul(ty, lax.div(out, y))))
    return out, _bcast_tangent(t, _aval(out))


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if is_undefined(y):
        raise ValueError("div is not linear in its divisor")
    if isinstance(ct, Zero):
        return [Zero(x.aval), None]
    return [_unbroadcast(lax.div(ct, y), x.aval), None]


ad.primitive_jvps[prims["div"]] = _div_jvp
ad.primitive_transposes[prims["div"]] = _div_transpose


def _binary_jvp(name: str, dx: Callable[..., Any] | None, dy: Callable[..., Any] | None) -> None:
    """d f(x, y) = dx(x, y, out) * tx + dy(x, y, out) * ty."""

    def rule(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
        x, y = primals
        tx, ty = tangents
        out = prims[name].bind(x, y)
        t: Any = Zero(_aval(out))
        if dx is not None and not isinstance(tx, Zero):
            t = ad.add_maybe_zero(t, lax.mul(_bcast_tangent(tx, _aval(out)), dx(x, y, out)))
        if dy is not None and not isinstance(ty, Zero):
            t = ad.add_maybe_zero(t, lax.mul(_bcast_tangent(ty, _aval(out)), dy(x, y, out)))
        return out, t

    ad.primitive_jvps[prims[name]] = rule


def _balanced(x: Any, y: Any, out: Any) -> Any:
    """1 where x alone attains the extremum, 1/2 on ties (JAX's balanced choice)."""
    one, half, zero = _scalar(1.0, out), _scalar(0.5, out), _scalar(0.0, out)
    x_is = lax.eq(x, out)
    y_is = lax.eq(y, out)
    shape = _aval(out).shape
    x_is = x_is if _aval(x_is).shape == shape else lax.broadcast_in_dim(x_is, shape, ())
    y_is = y_is if _aval(y_is).shape == shape else lax.broadcast_in_dim(y_is, shape, ())
    full = lambda v: lax.broadcast_in_dim(v, shape, ())
    return lax.select(x_is, lax.select(y_is, full(half), full(one)), full(zero))


_binary_jvp("max", lambda x, y, o: _balanced(x, y, o), lambda x, y, o: _balanced(y, x, o))
_binary_jvp("min", lambda x, y, o: _balanced(x, y, o), lambda x, y, o: _balanced(y, x, o))
_binary_jvp(
    "rem",
    lambda x, y, o: lax.full(_aval(o).shape, 1.0, _aval(o).dtype),
    lambda x, y, o: lax.neg(lax.mul(lax.sign(lax.div(x, y)), lax.floor(lax.abs(lax.div(x, y))))),
)
_binary_jvp(
    "atan2",
    lambda x, y, o: lax.div(y, lax.add(lax.mul(x, x), lax.mul(y, y))),
    lambda x, y, o: lax.neg(lax.div(x, lax.add(lax.mul(x, x), lax.mul(y, y)))),
)


def _pow_dy(x: Any, y: Any, out: Any) -> Any:
    zero = _scalar(0.0, x)
    safe_log = lax.log(
        lax.select(lax.eq(x, zero), lax.full(_aval(x).shape, 1.0, _aval(x).dtype), x)
    )
    return lax.mul(out, safe_log)


def _pow_dx(x: Any, y: Any, out: Any) -> Any:
    one = _scalar(1.0, y)
    return lax.mul(y, lax.pow(x, lax.sub(y, one)))


_binary_jvp("pow", _pow_dx, _pow_dy)


def _integer_pow_jvp(primals: list[Any], tangents: list[Any], *, y: int) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = lax.integer_pow(x, y)
    if y == 0:
        return out, Zero(_aval(out))
    d = _scalar(float(y), x) if y == 1 else lax.mul(_scalar(float(y), x), lax.integer_pow(x, y - 1))
    return out, lax.mul(ad.instantiate(t), d)


ad.primitive_jvps[lax.integer_pow_p] = _integer_pow_jvp


# ---- conversions and selection ------------------------------------------------------------------
def _convert_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = lax.convert_element_type_p.bind(x, **params)
    oa = _aval(out)
    if oa.dtype.kind not in "fc" or _aval(x).dtype.kind not in "fc" or isinstance(t, Zero):
        return out, Zero(ad.tangent_aval(oa))
    return out, lax.convert_element_type(t, oa.dtype)


def _convert_transpose(ct: Any, x: Any, **params: Any) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [lax.convert_element_type(ct, x.aval.dtype)]


ad.primitive_jvps[lax.convert_element_type_p] = _convert_jvp
ad.primitive_transposes[lax.convert_element_type_p] = _convert_transpose


def _select_n_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    which, *cases = primals
    out = lax.select_n(which, *cases)
    case_ts = tangents[1:]
    if all(isinstance(t, Zero) for t in case_ts):
        return out, Zero(_aval(out))
    return out, lax.select_n(which, *[ad.instantiate(t) for t in case_ts])


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    if is_undefined(which):
        raise ValueError("select_n is not linear in its predicate")
    out: list[Any] = [None]
    for k, c in enumerate(cases):
        if not is_undefined(c):
            out.append(None)
            continue
        if isinstance(ct, Zero):
            out.append(Zero(c.aval))
            continue
        zeros = lax.full(c.aval.shape, 0, c.aval.dtype)
        picks = [ct if j == k else zeros for j in range(len(cases))]
        out.append(lax.select_n(which, *picks))
    return out


ad.primitive_jvps[lax.select_n_p] = _select_n_jvp
ad.primitive_transposes[lax.select_n_p] = _select_n_transpose


# ---- movement and reductions (linear) -----------------------------------------------------------
def _reduce_sum_transpose(
    ct: Any, x: Any, *, axes: tuple[int, ...], out_sharding: Any = None
) -> list[Any]:
    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [lax.broadcast_in_dim(ct, shape, kept)]


def _broadcast_in_dim_transpose(
    ct: Any,
    x: Any,
    *,
    shape: tuple[int, ...],
    broadcast_dimensions: tuple[int, ...],
    sharding: Any = None,
) -> list[Any]:
    in_shape = x.aval.shape
    new_dims = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
    expanded = tuple(
        d for j, d in enumerate(broadcast_dimensions) if in_shape[j] == 1 and shape[d] != 1
    )
    summed = lax.reduce_sum(ct, tuple(sorted(new_dims + expanded))) if new_dims or expanded else ct
    return [lax.reshape(summed, in_shape)]


def _reshape_transpose(ct: Any, x: Any, **params: Any) -> list[Any]:
    return [lax.reshape(ct, x.aval.shape)]


def _transpose_transpose(ct: Any, x: Any, *, permutation: tuple[int, ...]) -> list[Any]:
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    return [lax.transpose(ct, inverse)]


def _concatenate_transpose(ct: Any, *xs: Any, dimension: int) -> list[Any]:
    out: list[Any] = []
    start = 0
    for x in xs:
        size = _aval(x).shape[dimension]
        if is_undefined(x):
            if isinstance(ct, Zero):
                out.append(Zero(x.aval))
            else:
                lo = [0] * len(x.aval.shape)
                hi = list(_aval(ct).shape)
                lo[dimension], hi[dimension] = start, start + size
                out.append(lax.slice(ct, lo, hi))
        else:
            out.append(None)
        start += size
    return out


deflinear(lax.reduce_sum_p, _reduce_sum_transpose)
deflinear(lax.broadcast_in_dim_p, _broadcast_in_dim_transpose)
deflinear(lax.reshape_p, _reshape_transpose)
deflinear(lax.squeeze_p, _reshape_transpose)
deflinear(lax.transpose_p, _transpose_transpose)
deflinear(lax.concatenate_p, _concatenate_transpose)


def _reduce_chooser_jvp(name: str) -> Callable[..., tuple[Any, Any]]:
    def rule(
        primals: list[Any], tangents: list[Any], *, axes: tuple[int, ...], out_sharding: Any = None
    ) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        out = prims[name].bind(x, axes=axes, out_sharding=None)
        xa = _aval(x)
        if xa.dtype.kind not in "fc":
            return out, Zero(_aval(out))
        kept = tuple(i for i in range(xa.ndim) if i not in axes)
        at = lax.convert_element_type(
            lax.eq(x, lax.broadcast_in_dim(out, xa.shape, kept)), xa.dtype
        )
        counts = lax.reduce_sum(at, axes)
        return out, lax.div(lax.reduce_sum(lax.mul(ad.instantiate(t), at), axes), counts)

    return rule


ad.primitive_jvps[prims["reduce_max"]] = _reduce_chooser_jvp("reduce_max")
ad.primitive_jvps[prims["reduce_min"]] = _reduce_chooser_jvp("reduce_min")


def _reduce_prod_jvp(
    primals: list[Any], tangents: list[Any], *, axes: tuple[int, ...], out_sharding: Any = None
) -> tuple[Any, Any]:
    # d prod(x) = sum_i t_i * prod_{j != i} x_j, without dividing (exact at zeros).
    (x,), (t,) = primals, tangents
    out = lax.reduce_prod(x, axes)
    xa = _aval(x)
    kept = [i for i in range(xa.ndim) if i not in axes]
    perm = kept + list(axes)
    n = math.prod(xa.shape[a] for a in axes)
    lead = tuple(xa.shape[i] for i in kept)
    xs = lax.reshape(lax.transpose(x, perm), lead + (n,))
    ts = lax.reshape(lax.transpose(ad.instantiate(t), perm), lead + (n,))
    k = len(lead)
    grid = lead + (n, n)
    xi = lax.broadcast_in_dim(xs, grid, tuple(range(k)) + (k + 1,))
    eye = lax.eq(
        lax.broadcasted_iota(dtypes.int32, grid, k), lax.broadcasted_iota(dtypes.int32, grid, k + 1)
    )
    others = lax.reduce_prod(lax.select(eye, lax.full(grid, 1, xa.dtype), xi), (k + 1,))
    return out, lax.reduce_sum(lax.mul(ts, others), (k,))


ad.primitive_jvps[prims["reduce_prod"]] = _reduce_prod_jvp


def coverage() -> dict[str, dict[str, bool]]:
    """primitive name -> {jvp, transpose} availability (nondifferentiable counts as jvp)."""
    table = {}
    for name, p in sorted(prims.items()):
        table[name] = {
            "jvp": p in ad.primitive_jvps or p in ad.nondifferentiable,
            "transpose": p in ad.primitive_transposes,
        }
    return table


def instantiate_all(ts: Sequence[Any]) -> list[Any]:
    return [ad.instantiate(t) for t in ts]


def _slice_transpose(
    ct: Any,
    x: Any,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> list[Any]:
    shape = x.aval.shape
    st = strides or (1,) * len(shape)
    out_shape = _aval(ct).shape
    if 0 in out_shape:
        return [_zeros(x.aval)]
    cfg = []
    for d, lo, s, n in zip(shape, start_indices, st, out_shape, strict=True):
        cfg.append((lo, d - (lo + (n - 1) * s + 1), s - 1))
    return [lax.pad(ct, lax.full((), 0, x.aval.dtype), cfg)]


deflinear(lax.slice_p, _slice_transpose)


def _pad_transpose(
    ct: Any, x: Any, padding_value: Any, *, padding_config: tuple[tuple[int, int, int], ...]
) -> list[Any]:
    if isinstance(ct, Zero):
        return [
            Zero(x.aval) if is_undefined(x) else None,
            Zero(_aval(padding_value)) if is_undefined(padding_value) else None,
        ]
    dt = _aval(ct).dtype
    unneg = [(max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in padding_config]
    ct2 = lax.pad(ct, lax.full((), 0, dt), unneg) if any(a or b for a, b, _ in unneg) else ct
    shape2 = _aval(ct2).shape
    starts = [max(lo, 0) for lo, _, _ in padding_config]
    limits = [n - max(hi, 0) for n, (_, hi, _) in zip(shape2, padding_config, strict=True)]
    steps = [i + 1 for _, _, i in padding_config]
    t_x = lax.slice(ct2, starts, limits, steps)
    res: list[Any] = [t_x if is_undefined(x) else None, None]
    if is_undefined(padding_value):
        all_axes = tuple(range(len(shape2)))
        total = lax.reduce_sum(ct, tuple(range(len(_aval(ct).shape))))
        res[1] = lax.sub(total, lax.reduce_sum(t_x, all_axes))
    return res


deflinear(lax.pad_p, _pad_transpose)


def _rev_transpose(ct: Any, x: Any, *, dimensions: tuple[int, ...]) -> list[Any]:
    return [lax.rev(ct, dimensions)]


deflinear(lax.rev_p, _rev_transpose)


def _dynamic_slice_jvp(
    primals: list[Any], tangents: list[Any], *, slice_sizes: tuple[int, ...]
) -> tuple[Any, Any]:
    x, *starts = primals
    out = lax.dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    if isinstance(tangents[0], Zero):
        return out, Zero(_aval(out))
    return out, lax.dynamic_slice_p.bind(tangents[0], *starts, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(
    ct: Any, x: Any, *starts: Any, slice_sizes: tuple[int, ...]
) -> list[Any]:
    none: list[Any] = [None] * len(starts)
    if isinstance(ct, Zero):
        return [Zero(x.aval), *none]
    zeros = _zeros(x.aval)
    return [lax.dynamic_update_slice_p.bind(zeros, ct, *starts), *none]


ad.primitive_jvps[lax.dynamic_slice_p] = _dynamic_slice_jvp
ad.primitive_transposes[lax.dynamic_slice_p] = _dynamic_slice_transpose


def _dus_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    x, u, *starts = primals
    tx, tu = tangents[0], tangents[1]
    out = lax.dynamic_update_slice_p.bind(x, u, *starts)
    if isinstance(tx, Zero) and isinstance(tu, Zero):
        return out, Zero(_aval(out))
    t = lax.dynamic_update_slice_p.bind(ad.instantiate(tx), ad.instantiate(tu), *starts)
    return out, t


def _dus_transpose(ct: Any, x: Any, u: Any, *starts: Any) -> list[Any]:
    none: list[Any] = [None] * len(starts)
    u_aval = _aval(u)
    if isinstance(ct, Zero):
        return [
            Zero(x.aval) if is_undefined(x) else None,
            Zero(u_aval) if is_undefined(u) else None,
            *none,
        ]
    ct_x = lax.dynamic_update_slice_p.bind(ct, _zeros(u_aval), *starts) if is_undefined(x) else None
    ct_u = (
        lax.dynamic_slice_p.bind(ct, *starts, slice_sizes=u_aval.shape) if is_undefined(u) else None
    )
    return [ct_x, ct_u, *none]


ad.primitive_jvps[lax.dynamic_update_slice_p] = _dus_jvp
ad.primitive_transposes[lax.dynamic_update_slice_p] = _dus_transpose


# ---- dot_general ------------------------------------------------------------------------------
def _dot_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    x, y = primals
    tx, ty = tangents
    out = lax.dot_general_p.bind(x, y, **params)
    t: Any = Zero(ad.tangent_aval(_aval(out)))
    if not isinstance(tx, Zero):
        t = lax.dot_general_p.bind(tx, y, **params)
    if not isinstance(ty, Zero):
        t = ad.add_maybe_zero(t, lax.dot_general_p.bind(x, ty, **params))
    return out, t


def _ranges_like(*xs: Sequence[int]) -> list[list[int]]:
    start, out = 0, []
    for x in xs:
        out.append(list(range(start, start + len(x))))
        start += len(x)
    return out


def _dot_transpose_lhs(
    ct: Any,
    y: Any,
    x_aval: ShapedArray,
    y_aval: ShapedArray,
    dimension_numbers: Any,
    swap: bool,
    **params: Any,
) -> Any:
    (xc, yc), (xb, yb) = dimension_numbers
    x_ndim = x_aval.ndim
    x_kept = lax._dot_free(x_ndim, xc, xb)
    y_kept = lax._dot_free(y_aval.ndim, yc, yb)
    if swap:
        ans_batch, ans_y, _ = _ranges_like(xb, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(xb, x_kept, y_kept)
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(yb)))
    # result layout: batch, x kept (from ct), x contracting (from y, in yc order)
    out = lax.dot_general(ct, y, dims, preferred_element_type=x_aval.dtype)
    x_contract_sorted_by_y = [xc[i] for i in sorted(range(len(yc)), key=lambda i: yc[i])]
    out_axes = list(xb) + list(x_kept) + x_contract_sorted_by_y
    perm = [out_axes.index(i) for i in range(x_ndim)]
    return lax.transpose(out, perm)


def _dot_transpose(ct: Any, x: Any, y: Any, *, dimension_numbers: Any, **_: Any) -> list[Any]:
    (xc, yc), (xb, yb) = dimension_numbers
    x_aval, y_aval = _aval(x), _aval(y)
    if isinstance(ct, Zero):
        return [
            Zero(x_aval) if is_undefined(x) else None,
            Zero(y_aval) if is_undefined(y) else None,
        ]
    ct_x = ct_y = None
    if is_undefined(x):
        ct_x = _dot_transpose_lhs(ct, y, x_aval, y_aval, dimension_numbers, swap=False)
    if is_undefined(y):
        swapped = ((yc, xc), (yb, xb))
        ct_y = _dot_transpose_lhs(ct, x, y_aval, x_aval, swapped, swap=True)
    return [ct_x, ct_y]


ad.primitive_jvps[lax.dot_general_p] = _dot_jvp
ad.primitive_transposes[lax.dot_general_p] = _dot_transpose


def _clamp_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    lo, x, hi = primals
    tlo, tx, thi = tangents
    out = lax.clamp(lo, x, hi)
    oa = _aval(out)
    zeros = lax.full(oa.shape, 0, oa.dtype)
    t: Any = Zero(ad.tangent_aval(oa))
    if not isinstance(tx, Zero):
        inside = lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi))
        t = lax.select(_bcast_bool(inside, oa), ad.instantiate(tx), zeros)
    # A bound's tangent flows where that bound is the result: lo where lo > x and lo < hi (when
    # lo >= hi the result is hi), hi where hi < x. As in JAX, a bound's tangent is not broadcast:
    # differentiating by a scalar bound of an array operand is JAX's select shape error.
    if not isinstance(tlo, Zero):
        _clamp_bound_shape(lo, x)
        lo_wins = lax.bitwise_and(lax.gt(lo, x), lax.lt(lo, hi))
        t = ad.add_maybe_zero(
            t, lax.select(_bcast_bool(lo_wins, oa), _bcast_tangent(tlo, oa), zeros)
        )
    if not isinstance(thi, Zero):
        _clamp_bound_shape(hi, x)
        t = ad.add_maybe_zero(
            t, lax.select(_bcast_bool(lax.lt(hi, x), oa), _bcast_tangent(thi, oa), zeros)
        )
    return out, t


def _clamp_bound_shape(bound: Any, x: Any) -> None:
    bs, xs = tuple(_aval(bound).shape), tuple(_aval(x).shape)
    if bs != xs:
        raise TypeError(f"select cases must have the same shapes, got [{xs}, {bs}].")


def _bcast_bool(p: Any, oa: ShapedArray) -> Any:
    return p if _aval(p).shape == oa.shape else lax.broadcast_in_dim(p, oa.shape, ())


ad.primitive_jvps[lax.clamp_p] = _clamp_jvp
