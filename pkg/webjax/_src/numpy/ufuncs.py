"""Elementwise functions: promote, broadcast, then one or a few lax calls."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..lax import lax
from . import util


def _binary(name: str, fn: Any) -> Any:
    def op(x: Any, y: Any, /) -> Any:
        return fn(*util.promote_args(name, x, y))

    op.__name__ = name
    return op


def _unary(name: str, fn: Any, float_only: bool = False) -> Any:
    def op(x: Any, /) -> Any:
        x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
        if float_only and util.aval(x).dtype.kind != "f":
            x = util.convert(x, dtypes.default_float(), util.aval(x).weak_type)
        return fn(x)

    op.__name__ = name
    return op


add = _binary(
    "add", lambda x, y: lax.add(x, y) if util.aval(x).dtype.kind != "b" else lax.bitwise_or(x, y)
)
subtract = _binary("subtract", lax.sub)
multiply = _binary(
    "multiply",
    lambda x, y: lax.mul(x, y) if util.aval(x).dtype.kind != "b" else lax.bitwise_and(x, y),
)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)
less = _binary("less", lax.lt)
less_equal = _binary("less_equal", lax.le)
greater = _binary("greater", lax.gt)
greater_equal = _binary("greater_equal", lax.ge)
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)
left_shift = _binary("left_shift", lax.shift_left)
arctan2 = _binary("arctan2", lax.atan2)


def true_divide(x: Any, y: Any, /) -> Any:
    x, y = util.promote_args("true_divide", x, y)
    av = util.aval(x)
    if av.dtype.kind != "f":
        x = util.convert(x, dtypes.default_float(), av.weak_type)
        y = util.convert(y, dtypes.default_float(), util.aval(y).weak_type)
    return lax.div(x, y)


divide = true_divide


def floor_divide(x: Any, y: Any, /) -> Any:
    x, y = util.promote_args("floor_divide", x, y)
    dt = util.aval(x).dtype
    if dt.kind == "f":
        return lax.floor(lax.div(x, y))
    if dt.kind == "u":
        return lax.div(x, y)
    # round toward -inf: subtract one where the signs differ and the division is inexact
    q = lax.div(x, y)
    zero = lax.full((), 0, dt)
    r = lax.rem(x, y)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(x, zero), lax.lt(y, zero)))
    return lax.select(fix, lax.sub(q, lax.full((), 1, dt)), q)


def remainder(x: Any, y: Any, /) -> Any:
    x, y = util.promote_args("remainder", x, y)
    dt = util.aval(x).dtype
    r = lax.rem(x, y)
    if dt.kind == "u":
        return r
    zero = lax.full((), 0, dt)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(y, zero)))
    return lax.select(fix, lax.add(r, y), r)


mod = remainder


def power(x: Any, y: Any, /) -> Any:
    if isinstance(y, int) and not isinstance(y, bool) and not util.is_scalar(x):
        x = util.ensure_array(x)
        if util.aval(x).dtype.kind != "f" and y < 0:
            raise ValueError("Integers to negative integer powers are not allowed.")
        return lax.integer_pow(x, y)
    x, y = util.promote_args("power", x, y)
    if util.aval(x).dtype.kind != "f":
        raise NotImplementedError("jnp.power of integer arrays with array exponents")
    return lax.pow(x, y)


def negative(x: Any, /) -> Any:
    x = _as_array(x)
    return lax.neg(x)


def positive(x: Any, /) -> Any:
    return _as_array(x)


def _as_array(x: Any) -> Any:
    if util.is_scalar(x):
        return util.convert(x, *util.result_type(x))
    return util.ensure_array(x)


def absolute(x: Any, /) -> Any:
    x = _as_array(x)
    return x if util.aval(x).dtype.kind in "ub" else lax.abs(x)


abs = absolute


def invert(x: Any, /) -> Any:
    return lax.bitwise_not(_as_array(x))


bitwise_not = invert


def logical_not(x: Any, /) -> Any:
    x = _as_array(x)
    return lax.bitwise_not(util.convert(x, dtypes.bool_))


sign = _unary("sign", lax.sign)
floor = _unary("floor", lax.floor, True)
ceil = _unary("ceil", lax.ceil, True)
exp = _unary("exp", lax.exp, True)
exp2 = _unary("exp2", lax.exp2, True)
log = _unary("log", lax.log, True)
log1p = _unary("log1p", lax.log1p, True)
expm1 = _unary("expm1", lax.expm1, True)
sqrt = _unary("sqrt", lax.sqrt, True)
cbrt = _unary("cbrt", lax.cbrt, True)
sin = _unary("sin", lax.sin, True)
cos = _unary("cos", lax.cos, True)
tan = _unary("tan", lax.tan, True)
arcsin = _unary("arcsin", lax.asin, True)
arccos = _unary("arccos", lax.acos, True)
arctan = _unary("arctan", lax.atan, True)
sinh = _unary("sinh", lax.sinh, True)
cosh = _unary("cosh", lax.cosh, True)
tanh = _unary("tanh", lax.tanh, True)
arcsinh = _unary("arcsinh", lax.asinh, True)
arccosh = _unary("arccosh", lax.acosh, True)
arctanh = _unary("arctanh", lax.atanh, True)
isfinite = _unary(
    "isfinite",
    lambda x: (
        lax.is_finite(x)
        if util.aval(x).dtype.kind == "f"
        else lax.full(util.aval(x).shape, True, dtypes.bool_)
    ),
)


def square(x: Any, /) -> Any:
    return lax.integer_pow(_as_array(x), 2)


def reciprocal(x: Any, /) -> Any:
    x = _as_array(x)
    return lax.integer_pow(x, -1)


def isnan(x: Any, /) -> Any:
    x = _as_array(x)
    return lax.ne(x, x)
