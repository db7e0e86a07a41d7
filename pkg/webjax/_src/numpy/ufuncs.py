"""Elementwise functions: promote, broadcast, then one or a few lax calls."""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

from .. import core, dtypes
from ..custom_derivatives import custom_jvp
from ..lax import lax
from ..lax.control_flow import while_loop
from . import util
from .dtype_info import finfo


def _binary(name: str, fn: Any) -> Any:
    def op(x: Any, y: Any, /) -> Any:
        return fn(*util.promote_args(name, x, y))

    op.__name__ = name
    return op


def _unary(name: str, fn: Any, float_only: bool = False) -> Any:
    def op(x: Any, /) -> Any:
        util.check_arraylike(name, x)
        x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
        if float_only and util.aval(x).dtype.kind not in "fc":
            x = util.convert(x, dtypes.to_inexact(util.aval(x).dtype), util.aval(x).weak_type)
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


def _ordered(name: str, op: Any) -> Any:
    """An order comparison; complex numbers compare lexicographically (real part, then
    imaginary part), as in JAX."""

    def fn(x: Any, y: Any) -> Any:
        if util.aval(x).dtype.kind != "c":
            return op(x, y)
        rx, ry = lax.real(x), lax.real(y)
        return lax.select(lax.eq(rx, ry), op(lax.imag(x), lax.imag(y)), op(rx, ry))

    return _binary(name, fn)


less = _ordered("less", lax.lt)
less_equal = _ordered("less_equal", lax.le)
greater = _ordered("greater", lax.gt)
greater_equal = _ordered("greater_equal", lax.ge)
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)


def _shift_operands(name: str, x: Any, y: Any) -> list[Any]:
    """promote_args, then bools shift as int32 (JAX's shifts take numbers only)."""
    args = util.promote_args(name, x, y)
    if util.aval(args[0]).dtype.kind == "b":
        args = [util.convert(a, dtypes.int32, False) for a in args]
    return args


def left_shift(x: Any, y: Any, /) -> Any:
    return lax.shift_left(*_shift_operands("left_shift", x, y))


def _binary_inexact(name: str, fn: Any) -> Any:
    def op(x: Any, y: Any, /) -> Any:
        return fn(*_promote_inexact(name, x, y))

    op.__name__ = name
    return op


arctan2 = _binary_inexact("arctan2", lax.atan2)
atan2 = _binary_inexact("atan2", lax.atan2)


def true_divide(x: Any, y: Any, /) -> Any:
    # integers go to the float as they are: uint8 6 / -1 is -6.0, the -1 never wraps to 255
    # (scalars are not broadcast here: lax.div takes them, and the jaxpr is JAX's)
    x, y = util.promote_args("true_divide", *_integers_to_inexact("true_divide", x, y))
    return lax.div(x, y)


divide = true_divide


def _promote_numeric(name: str, *args: Any) -> list[Any]:
    """promote_args, with booleans moved to the default integer type (JAX's
    promote_args_numeric)."""
    out = util.promote_args(name, *args)
    if util.aval(out[0]).dtype.kind == "b":
        out = [util.convert(a, dtypes.default_int(), util.aval(a).weak_type) for a in out]
    return out


def floor_divide(x: Any, y: Any, /) -> Any:
    x, y = _promote_numeric("floor_divide", x, y)
    dt = util.aval(x).dtype
    if dt.kind == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    if dt.kind == "f":
        return _float_divmod(x, y)[0]
    if dt.kind == "u":
        return lax.div(x, y)
    # round toward -inf: subtract one where the signs differ and the division is inexact (a
    # zero divisor has sign 0, so x // 0 is -2 for x != 0, as in JAX)
    q = lax.div(x, y)
    zero = lax.full((), 0, dt)
    r = lax.rem(x, y)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.sign(x), lax.sign(y)))
    return util.with_weak_type_of(lax.select(fix, lax.sub(q, lax.full((), 1, dt)), q), q)


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    """Python's float divmod: the quotient from the exact remainder (x - x % y is a multiple of
    y), one less where the remainder's sign differs from y's, rounded to the integer it is
    within rounding of; so -1 // inf is -1 and signs of zero follow the division."""
    shape = util.broadcast_shapes(util.aval(x).shape, util.aval(y).shape)
    x, y = util.broadcast_to(x, shape), util.broadcast_to(y, shape)
    dt = util.aval(x).dtype
    mod = lax.rem(x, y)
    zero = lax.full((), 0, dt)
    div = lax.div(lax.select(lax.eq(y, zero), x, lax.sub(x, mod)), y)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, y), mod)
    div = lax.select(fix, lax.sub(div, lax.full((), 1, dt)), div)
    return util.with_weak_type_of(lax.round(div), mod), mod


def remainder(x: Any, y: Any, /) -> Any:
    x, y = _promote_numeric("remainder", x, y)
    dt = util.aval(x).dtype
    if dt.kind in "iu":  # x % 0 is 0 for integers, as in JAX
        ones = lax.full(util.aval(y).shape, 1, dt, weak_type=util.aval(y).weak_type)
        y = lax.select(lax.eq(y, lax.full((), 0, dt)), ones, y)
    r = lax.rem(x, y)
    if dt.kind == "u":
        return r
    zero = lax.full((), 0, dt)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(y, zero)))
    return lax.select(fix, lax.add(r, y), r)


mod = remainder


def power(x: Any, y: Any, /) -> Any:
    e = _static_int_exponent(y)
    if e is not None:  # a concrete integer exponent: exact repeated multiplication
        x = util.ensure_array(x) if not util.is_scalar(x) else x
        dt, weak = util.result_type(x)
        if dt.kind == "b":  # int32 even under x64, as JAX's
            dt, weak = dtypes.int32, False
        x = util.convert(x, dt, weak)
        if dt.kind in "iu" and e < 0:
            raise TypeError(
                f"Integers cannot be raised to negative powers, got "
                f"integer_pow({util.aval(x).str_short(True)}, {e})"
            )
        return lax.integer_pow(x, e)
    (xd, xw), (yd, yw) = util.result_type(x), util.result_type(y)
    x, y = util.promote_args("power", x, y)
    dt = util.aval(x).dtype
    if dt.kind not in "biu":
        out = lax.pow(x, y)
        if xd.kind in "fc" and yd.kind in "iu":  # an integer power of a float: weak only if
            out = util.convert(out, dt, xw and yw)  # both are, as lax.pow on the raw inputs
        return out
    if dt.kind == "b":
        x, y = (util.convert(a, dtypes.default_int(), util.aval(a).weak_type) for a in (x, y))
    return _integer_power(*_promote_full("power", x, y))


def _static_int_exponent(y: Any) -> int | None:
    """The exponent as a Python int when it is a concrete integer scalar (a Python or NumPy
    integer, or a 0-d integer array outside of tracing), else None."""
    if isinstance(y, (core.Tracer, builtins.float, builtins.complex)):
        return None
    if hasattr(y, "_exp"):  # a concrete webjax array
        av = util.aval(y)
        return builtins.int(y.item()) if av.ndim == 0 and av.dtype.kind in "iub" else None
    try:
        return operator.index(y)
    except TypeError:
        return None


def _integer_power(x: Any, y: Any) -> Any:
    """x ** y for integer arrays: binary exponentiation over the low 6 bits of y (larger
    exponents overflow for any |x| > 1); negative exponents follow the same bit pattern."""
    dt = util.aval(x).dtype
    zero, one = lax.full((), 0, dt), lax.full((), 1, dt)
    ones = lax.full(util.aval(x).shape, 1, dt)
    acc = lax.select(
        lax.bitwise_and(lax.eq(x, zero), lax.ne(y, zero)), lax.full(util.aval(x).shape, 0, dt), ones
    )
    for _ in range(6):
        odd = lax.ne(lax.bitwise_and(y, one), zero)
        acc = lax.select(odd, lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        y = lax.shift_right_logical(y, one)
    return acc


def negative(x: Any, /) -> Any:
    util.check_arraylike("negative", x)
    x = _as_array(x)
    return lax.neg(x)


def positive(x: Any, /) -> Any:
    util.check_arraylike("positive", x)
    return _as_array(x)


def _as_array(x: Any) -> Any:
    if util.is_scalar(x):
        return util.convert(x, *util.result_type(x))
    return util.ensure_array(x)


def absolute(x: Any, /) -> Any:
    util.check_arraylike("absolute", x)
    x = _as_array(x)
    return x if util.aval(x).dtype.kind in "ub" else lax.abs(x)


abs = absolute


def invert(x: Any, /) -> Any:
    util.check_arraylike("invert", x)
    return lax.bitwise_not(_as_array(x))


def bitwise_not(x: Any, /) -> Any:
    util.check_arraylike("bitwise_not", x)
    return invert(x)


def logical_not(x: Any, /) -> Any:
    util.check_arraylike("logical_not", x)
    x = _as_array(x)
    return lax.bitwise_not(util.convert(x, dtypes.bool_))


sign = _unary("sign", lax.sign)


def _rounding(name: str, fn: Any) -> Any:
    """floor/ceil: integers and bools are their own floor (dtype kept, as in JAX)."""

    def op(x: Any, /) -> Any:
        util.check_arraylike(name, x)
        x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
        return x if util.aval(x).dtype.kind in "biu" else fn(x)

    op.__name__ = name
    return op


floor = _rounding("floor", lax.floor)
ceil = _rounding("ceil", lax.ceil)
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
# the array-API spellings: the same functions under their own names (and error messages)
acos = _unary("acos", lax.acos, True)
acosh = _unary("acosh", lax.acosh, True)
asin = _unary("asin", lax.asin, True)
asinh = _unary("asinh", lax.asinh, True)
atan = _unary("atan", lax.atan, True)
atanh = _unary("atanh", lax.atanh, True)


def _isfinite(x: Any) -> Any:
    kind = util.aval(x).dtype.kind
    if kind == "c":  # both parts finite
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if kind == "f":
        return lax.is_finite(x)
    return lax.full(util.aval(x).shape, True, dtypes.bool_)


isfinite = _unary("isfinite", _isfinite)


def square(x: Any, /) -> Any:
    util.check_arraylike("square", x)
    x = _as_array(x)
    if util.aval(x).dtype.kind == "b":  # squares are numbers: bools as int32, as in JAX
        x = util.convert(x, dtypes.int32, False)
    return lax.integer_pow(x, 2)


def reciprocal(x: Any, /) -> Any:
    util.check_arraylike("reciprocal", x)
    (x,) = _promote_inexact("reciprocal", _as_array(x))
    return lax.integer_pow(x, -1)


def isnan(x: Any, /) -> Any:
    util.check_arraylike("isnan", x)
    x = _as_array(x)
    return lax.ne(x, x)


# ---- promotion helpers -------------------------------------------------------------------------
def _promote_full(name: str, *args: Any) -> list[Any]:
    """promote_args, with scalars broadcast too (select needs equal shapes)."""
    promoted = util.promote_args(name, *args)
    shape = util.broadcast_shapes(*(util.aval(a).shape for a in promoted))
    return [util.broadcast_to(a, shape) for a in promoted]


def _integers_to_inexact(name: str, *args: Any) -> tuple[Any, ...]:
    """The operands converted to the float their integer/bool result type moves to (JAX's
    promote_args_inexact; Python scalars go there as they are: -1 stays -1.0)."""
    util.check_arraylike(name, *args)
    dt, weak = util.result_type(*args)
    if dt.kind not in "fc":
        args = tuple(util.convert(a, dtypes.to_inexact(dt), weak) for a in args)
    return args


def _promote_inexact(name: str, *args: Any) -> list[Any]:
    """Promote, then move integer/bool results to the default float (JAX's promote_args_inexact),
    broadcast to one shape."""
    return _promote_full(name, *_integers_to_inexact(name, *args))


def _full(x: Any, value: Any) -> Any:
    av = util.aval(x)
    return lax.full(av.shape, value, av.dtype)


def _zero(x: Any) -> Any:
    return lax.full((), 0, util.aval(x).dtype)


def _is_float(x: Any) -> bool:
    return util.aval(x).dtype.kind == "f"


def _is_complex(x: Any) -> bool:
    return util.aval(x).dtype.kind == "c"


def _real_inputs(
    name: str,
    *args: Any,
    error: type[Exception] = TypeError,
    message: str = "",
    check: bool = True,
) -> Any:
    """The operands' promoted dtype; JAX's error when it is complex (`check`) for a function
    without a complex version, raised before shapes are broadcast (as JAX checks it first)."""
    util.check_arraylike(name, *args)
    dt, _ = util.result_type(*args)
    if check and dt.kind == "c":
        raise error(message or f"{name} does not support complex-valued inputs")
    return dt


def _real_only(name: str, x: Any, error: type[Exception] = TypeError, message: str = "") -> None:
    """JAX's error for a function without a complex version."""
    if _is_complex(x):
        raise error(message or f"{name} does not support complex-valued inputs")


# ---- logic and classification ------------------------------------------------------------------
def _truth(a: Any) -> Any:
    """A promoted operand's truth values, weak as JAX's: its comparison with a zero constant
    is weak only for a weak scalar (JAX makes a Python constant for those, a typed array for
    the rest), so logical_xor(bool array, 2) is weak for a 0-d array only."""
    av = util.aval(a)
    if av.dtype is dtypes.bool_:
        return a
    return util.convert(a, dtypes.bool_, av.weak_type and not av.shape)


def _weak_as_jax(out: Any, x: Any) -> Any:
    """`out` of a function JAX builds from selects and constants (hypot, gcd, lcm,
    heaviside): weak when its promoted operand `x` is a weak scalar, as there JAX's constants
    are Python scalars; otherwise its typed constants make the result strong."""
    av = util.aval(x)
    return util.with_weak_type_of(out, x) if av.weak_type and not av.shape else _strong(out)


def _strong(out: Any) -> Any:
    av = util.aval(out)
    return lax.convert_element_type(out, av.dtype, weak_type=False) if av.weak_type else out


def _logical(name: str, fn: Any) -> Any:
    def op(x: Any, y: Any, /) -> Any:
        x, y = util.promote_args(name, x, y)
        return fn(_truth(x), _truth(y))

    op.__name__ = name
    return op


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def isinf(x: Any, /) -> Any:
    util.check_arraylike("isinf", x)
    x = _as_array(x)
    if _is_complex(x):  # either part infinite
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    if not _is_float(x):
        return _full(lax.convert_element_type(x, dtypes.bool_), False)
    return lax.eq(lax.abs(x), lax.full((), float("inf"), util.aval(x).dtype))


def _isinf_signed(name: str, value: float) -> Any:
    def op(x: Any, /) -> Any:
        util.check_arraylike(name, x)
        x = _as_array(x)
        _real_only(name, x, ValueError, "isposinf/isneginf are not well defined for complex types")
        if not _is_float(x):
            return _full(lax.convert_element_type(x, dtypes.bool_), False)
        return lax.eq(x, lax.full((), value, util.aval(x).dtype))

    op.__name__ = name
    return op


isposinf = _isinf_signed("isposinf", float("inf"))
isneginf = _isinf_signed("isneginf", float("-inf"))


def signbit(x: Any, /) -> Any:
    util.check_arraylike("signbit", x)
    x = _as_array(x)
    dt = util.aval(x).dtype
    _real_only("signbit", x, ValueError, f"jax.numpy.signbit is not well defined for {dt.name}")
    if dt.kind in "ub":
        return _full(lax.convert_element_type(x, dtypes.bool_), False)
    if dt.kind != "f":
        return lax.lt(x, _zero(x))
    # the sign bit itself, so -0.0 and NaNs with their sign bit set count (as in JAX)
    bits = {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}[dt.itemsize]
    return lax.lt(lax.bitcast_convert_type(x, bits), lax.full((), 0, bits))


def nan_to_num(
    x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    util.check_arraylike("nan_to_num", x)
    x = _as_array(x)
    dt = util.aval(x).dtype
    if dt.kind == "c":  # each part on its own
        parts = (nan_to_num(p, copy, nan, posinf, neginf) for p in (lax.real(x), lax.imag(x)))
        return lax.complex(*parts)
    if dt.kind != "f":
        return x
    info = finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = util.where(isnan(x), util.convert(nan, dt), x)
    out = util.where(isposinf(x), util.convert(posinf, dt), out)
    return util.where(isneginf(x), util.convert(neginf, dt), out)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    a, b = _promote_full("isclose", a, b)
    dt = util.aval(a).dtype
    if dt.kind not in "fc":
        if dt.kind == "b":
            return lax.eq(a, b)
        a, b = util.convert(a, dtypes.default_float()), util.convert(b, dtypes.default_float())
        dt = dtypes.default_float()
    rt = dtypes.component(dt)  # tolerances compare magnitudes: |a - b| <= atol + rtol |b|
    rtol_, atol_ = util.convert(rtol, rt), util.convert(atol, rt)
    close = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol_, lax.mul(rtol_, lax.abs(b))))
    # infinities are close only to themselves; finite tolerance math would say inf - inf = nan
    both_inf = lax.bitwise_or(isinf(a), isinf(b))
    close = lax.select(both_inf, lax.eq(a, b), close)
    if equal_nan:
        close = lax.bitwise_or(close, lax.bitwise_and(isnan(a), isnan(b)))
    return close


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    util.check_arraylike("allclose", a, b)
    c = isclose(a, b, rtol, atol, equal_nan)
    return lax.reduce_and(c, tuple(range(util.aval(c).ndim)))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    try:
        a1, a2 = util.ensure_array(a1), util.ensure_array(a2)
    except TypeError:
        return util.convert(False, dtypes.bool_)
    if util.aval(a1).shape != util.aval(a2).shape:
        return util.convert(False, dtypes.bool_)
    eq = equal(a1, a2)
    if equal_nan:
        eq = lax.bitwise_or(eq, lax.bitwise_and(isnan(a1), isnan(a2)))
    return lax.reduce_and(eq, tuple(range(util.aval(eq).ndim)))


def array_equiv(a1: Any, a2: Any) -> Any:
    a1, a2 = util.ensure_array(a1), util.ensure_array(a2)
    eq = equal(a1, a2)  # shapes that do not broadcast raise TypeError, as in JAX
    return lax.reduce_and(eq, tuple(range(util.aval(eq).ndim)))


def complex_clip_error() -> ValueError:
    """JAX's error for clipping complex values (jnp.clip, and the nn functions built on it)."""
    return ValueError(
        "Clip received a complex value either through the input or the min/max keywords. "
        "Complex values have no ordering and cannot be clipped. Please convert to a real "
        "value or array by taking the real or imaginary components via jax.numpy.real/imag "
        "respectively."
    )


# ---- selection -------------------------------------------------------------------------------
def clip(
    arr: Any = None,
    /,
    min: Any = None,
    max: Any = None,
    *,
    a: Any = None,
    a_min: Any = None,
    a_max: Any = None,
) -> Any:
    # a=, a_min= and a_max= are NumPy's spellings (deprecated in JAX); accepted for old code
    arr = a if arr is None else arr
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    util.check_arraylike("clip", arr)
    min = a_min if min is None else min
    max = a_max if max is None else max
    out = _as_array(arr)
    if any(v is not None and util.aval(v).dtype.kind == "c" for v in (out, min, max)):
        raise complex_clip_error()
    if min is not None:
        out = maximum(min, out)
    if max is not None:
        out = minimum(max, out)
    return out


# ---- arithmetic --------------------------------------------------------------------------------
def right_shift(x: Any, y: Any, /) -> Any:
    x, y = _shift_operands("right_shift", x, y)
    if util.aval(x).dtype.kind == "u":
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


def bitwise_left_shift(x: Any, y: Any, /) -> Any:
    return lax.shift_left(*_shift_operands("bitwise_left_shift", x, y))


bitwise_right_shift = right_shift


def bitwise_invert(x: Any, /) -> Any:
    util.check_arraylike("bitwise_invert", x)
    return invert(x)


def fabs(x: Any, /) -> Any:
    _real_only("fabs", _as_array(x), TypeError, "ufunc 'fabs' does not support complex dtypes")
    (x,) = _promote_inexact("fabs", x)
    return lax.abs(x)


def fmod(x1: Any, x2: Any, /) -> Any:
    x1, x2 = _promote_full("fmod", x1, x2)
    if util.aval(x2).dtype.kind in "iu":  # x fmod 0 is 0 for integers, as in JAX
        x2 = util.with_weak_type_of(lax.select(lax.eq(x2, _zero(x2)), _full(x2, 1), x2), x2)
    elif util.aval(x1).dtype.kind == "b":  # booleans: the default integer's rem, unguarded
        x1, x2 = (util.convert(a, dtypes.default_int(), util.aval(a).weak_type) for a in (x1, x2))
    return lax.rem(x1, x2)


def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:
    util.check_arraylike("divmod", x1, x2)
    a, b = _promote_numeric("divmod", x1, x2)
    if util.aval(a).dtype.kind == "f":
        return _float_divmod(a, b)
    return floor_divide(x1, x2), remainder(x1, x2)


def copysign(x1: Any, x2: Any, /) -> Any:
    _real_inputs("copysign", x1, x2)
    x1, x2 = _promote_inexact("copysign", x1, x2)
    mag = lax.abs(x1)
    return lax.select(signbit(x2), lax.neg(mag), mag)


def float_power(x: Any, y: Any, /) -> Any:
    x, y = _promote_inexact("float_power", x, y)
    return lax.pow(x, y)


def heaviside(x1: Any, x2: Any, /) -> Any:
    dt = _real_inputs("heaviside", x1, x2, check=False)
    if dt.kind == "c":  # JAX's error: its formula compares the promoted x1 with 0 first
        raise TypeError(
            f"lt does not accept dtype {dt.name} at position 0. Accepted dtypes at position 0 "
            "are subtypes of integer, floating, bool."
        )
    x1, x2 = _promote_inexact("heaviside", x1, x2)
    zero = _zero(x1)
    out = lax.select(lax.gt(x1, zero), _full(x1, 1), x2)
    out = lax.select(lax.lt(x1, zero), _full(x1, 0), out)
    return _weak_as_jax(lax.select(isnan(x1), x1, out), x1)  # NaN stays NaN, as NumPy's


def hypot(x1: Any, x2: Any, /) -> Any:
    _real_inputs(
        "hypot",
        x1,
        x2,
        error=ValueError,
        message="jnp.hypot is not well defined for complex-valued "
        "inputs. Please convert to real values first, such as by using abs(x)",
    )
    x1, x2 = _promote_inexact("hypot", x1, x2)
    a, b = lax.abs(x1), lax.abs(x2)
    big, small = lax.max(a, b), lax.min(a, b)
    # scale by the larger magnitude so squaring cannot overflow
    safe = lax.select(lax.eq(big, _zero(big)), _full(big, 1), big)
    out = lax.mul(big, lax.sqrt(lax.add(_full(big, 1), lax.integer_pow(lax.div(small, safe), 2))))
    out = lax.select(lax.eq(big, _zero(big)), big, out)
    # an infinite side makes +inf, even with a NaN on the other (IEEE's hypot, as JAX)
    inf = lax.bitwise_or(isinf(a), isinf(b))
    return _weak_as_jax(lax.select(inf, _full(big, math.inf), out), x1)


def _log_base(name: str, base: float) -> Any:
    def op(x: Any, /) -> Any:
        (x,) = _promote_inexact(name, x)
        log = lax.log(x)
        if _is_complex(x):  # each part by the real constant (an infinite part keeps the other)
            c = lax.full((), math.log(base), util.aval(lax.real(log)).dtype)
            return lax.complex(lax.div(lax.real(log), c), lax.div(lax.imag(log), c))
        return lax.div(log, lax.full((), math.log(base), util.aval(x).dtype))

    op.__name__ = name
    return op


log2 = _log_base("log2", 2.0)
log10 = _log_base("log10", 10.0)


def logaddexp(x1: Any, x2: Any, /) -> Any:
    x1, x2 = _promote_inexact("logaddexp", x1, x2)
    if _is_complex(x1):
        return lax.complex_logaddexp(x1, x2)
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    # equal infinities give a nan delta; their sum is the right answer (and propagates nans)
    return lax.select(isnan(delta), lax.add(x1, x2), out)


def logaddexp2(x1: Any, x2: Any, /) -> Any:
    x1, x2 = _promote_inexact("logaddexp2", x1, x2)
    if _is_complex(x1):
        inv_ln2 = lax.full((), 1 / math.log(2), util.aval(x1).dtype)
        return lax.complex_logaddexp(
            x1, x2, lax.exp2, lambda t: lax.mul(inv_ln2, lax.log1p(t)), math.pi / math.log(2)
        )
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    inv_ln2 = lax.full((), 1 / math.log(2), util.aval(x1).dtype)
    tail = lax.mul(inv_ln2, lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))))
    out = lax.select(isnan(delta), lax.add(x1, x2), lax.add(amax, tail))
    return _weak_as_jax(out, x1)  # (int16 array with 3.0: strong, as JAX's)


def _scale(name: str, factor: float) -> Any:
    def op(x: Any, /) -> Any:
        (x,) = _promote_inexact(name, x)
        return util.with_weak_type_of(lax.mul(x, lax.full((), factor, util.aval(x).dtype)), x)

    op.__name__ = name
    return op


deg2rad = radians = _scale("deg2rad", 3.141592653589793 / 180)
rad2deg = degrees = _scale("rad2deg", 180 / 3.141592653589793)
radians.__name__, degrees.__name__ = "deg2rad", "rad2deg"


def sinc(x: Any, /) -> Any:
    (x,) = _promote_inexact("sinc", x)
    is_zero = lax.eq(x, _zero(x))
    # the safe denominator keeps the gradient finite at 0 (where sinc is flat)
    safe = lax.select(is_zero, _full(x, 1), x)
    pi_x = lax.mul(safe, lax.full((), 3.141592653589793, util.aval(x).dtype))
    return lax.select(is_zero, _full(x, 1), lax.div(lax.sin(pi_x), pi_x))


def round(a: Any, decimals: int = 0, out: None = None) -> Any:
    util.check_arraylike("round", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    a = _as_array(a)
    dt = util.aval(a).dtype
    if dt.kind == "c":  # each part
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if dt.kind == "b":
        raise ValueError("data type <class 'numpy.bool'> not inexact")
    if dt.kind != "f":
        if decimals < 0:
            raise NotImplementedError("jnp.round of integers with negative decimals")
        return a
    if decimals == 0:
        return lax.round(a, 1)  # half to even, as NumPy
    if dt.itemsize == 2:  # 16-bit floats scale in float32 (65504 * 1000 stays finite), as JAX
        wide = lax.convert_element_type(a, dtypes.float32)
        out = round(wide, decimals)
        return lax.convert_element_type(out, dt, weak_type=util.aval(a).weak_type)
    scale = lax.full((), 10.0**decimals, dt)
    return lax.div(lax.round(lax.mul(a, scale), 1), scale)


around = round


def rint(x: Any, /) -> Any:
    util.check_arraylike("rint", x)
    if util.aval(_as_array(x)).dtype.kind in "biu":  # JAX: the default float, strongly typed
        return lax.convert_element_type(_as_array(x), dtypes.default_float())
    (x,) = _promote_inexact("rint", x)
    if _is_complex(x):
        return lax.complex(lax.round(lax.real(x), 1), lax.round(lax.imag(x), 1))
    return lax.round(x, 1)


def trunc(x: Any, /) -> Any:
    util.check_arraylike("trunc", x)
    x = _as_array(x)
    if _is_complex(x):
        lax.lt(x, _zero(x))  # raises JAX's TypeError
    if not _is_float(x):
        return x
    return lax.select(lax.lt(x, _zero(x)), lax.ceil(x), lax.floor(x))


def fix(x: Any, out: None = None) -> Any:
    return trunc(x)


def fmax(x1: Any, x2: Any) -> Any:
    util.check_arraylike("greater", x1, x2)
    x1, x2 = _promote_full("fmax", x1, x2)
    if not (_is_float(x1) or _is_complex(x1)):
        return lax.max(x1, x2)
    out = lax.select(isnan(x1), x2, lax.max(x1, x2))
    return lax.select(isnan(x2), x1, out)


def fmin(x1: Any, x2: Any) -> Any:
    util.check_arraylike("less", x1, x2)
    x1, x2 = _promote_full("fmin", x1, x2)
    if not (_is_float(x1) or _is_complex(x1)):
        return lax.min(x1, x2)
    out = lax.select(isnan(x1), x2, lax.min(x1, x2))
    return lax.select(isnan(x2), x1, out)


def conjugate(x: Any, /) -> Any:
    util.check_arraylike("conjugate", x)
    x = _as_array(x)
    return lax.conj(x) if util.aval(x).dtype.kind == "c" else x


conj = conjugate


def real(val: Any, /) -> Any:
    util.check_arraylike("real", val)
    x = _as_array(val)
    return lax.real(x) if util.aval(x).dtype.kind == "c" else x


def imag(val: Any, /) -> Any:
    util.check_arraylike("imag", val)
    x = _as_array(val)
    if util.aval(x).dtype.kind == "c":
        return lax.imag(x)
    av = util.aval(x)
    return lax.full(av.shape, 0, av.dtype, weak_type=av.weak_type)


def gcd(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_args("gcd", x1, x2)
    if util.aval(x1).dtype.kind not in "iu":
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")

    def cond(c: Any) -> Any:
        return lax.reduce_or(lax.ne(c[1], _zero(c[1])), tuple(range(util.aval(c[1]).ndim)))

    def body(c: Any) -> Any:
        a, b = c
        nz = lax.ne(b, _zero(b))
        safe_b = lax.select(nz, b, _full(b, 1))
        return lax.select(nz, b, a), lax.select(nz, lax.rem(a, safe_b), b)

    a0, b0 = absolute(x1), absolute(x2)
    return _weak_as_jax(while_loop(cond, body, (lax.max(a0, b0), lax.min(a0, b0)))[0], x1)


def lcm(x1: Any, x2: Any) -> Any:
    x1, x2 = util.promote_args("lcm", x1, x2)
    d = gcd(x1, x2)
    zero = lax.eq(d, _zero(d))
    safe = lax.select(zero, _full(d, 1), d)
    # |x1| * (|x2| / d) with no |.| after: a product past the type's range wraps (int8's
    # lcm(127, 126) is -126), as in JAX
    a1, a2 = absolute(x1), absolute(x2)
    return _weak_as_jax(lax.select(zero, d, lax.mul(a1, lax.div(a2, safe))), x1)


# ---- floating-point decomposition ---------------------------------------------------------------
_INT_OF = {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}


def _float_layout(dt: Any) -> tuple[int, int, Any]:
    """(mantissa bits, exponent bias, same-width signed int dtype) of a float dtype."""
    info = finfo(dt)
    return info.nmant, info.maxexp - 1, _INT_OF[dt.itemsize]


def _pow2(k: Any, dt: Any) -> Any:
    """2.0**k exactly, for integer k in the normal exponent range of `dt` (built from bits)."""
    nmant, bias, it = _float_layout(dt)
    k = lax.convert_element_type(k, it)
    bits = lax.shift_left(lax.add(k, lax.full((), bias, it)), lax.full((), nmant, it))
    return lax.bitcast_convert_type(bits, dt)


def _frexp_exponent(x: Any) -> Any:
    """The exponent e with x = m 2**e, 0.5 <= |m| < 1, for finite nonzero x (int32)."""
    dt = util.aval(x).dtype
    nmant, bias, it = _float_layout(dt)
    tiny = finfo(dt).tiny
    sub = lax.lt(lax.abs(x), lax.full((), tiny, dt))
    # subnormals: scale into the normal range first (exact), remember the shift
    xn = lax.select(sub, lax.mul(x, lax.full((), 2.0**nmant, dt)), x)
    bits = lax.bitcast_convert_type(xn, it)
    field = lax.bitwise_and(
        lax.shift_right_arithmetic(bits, lax.full((), nmant, it)),
        lax.full((), (1 << (dt.bits - 1 - nmant)) - 1, it),
    )
    e = lax.sub(lax.convert_element_type(field, dtypes.int32), lax.full((), bias - 1, dtypes.int32))
    return lax.select(sub, lax.sub(e, lax.full((), nmant, dtypes.int32)), e)


def frexp(x: Any, /) -> tuple[Any, Any]:
    (x,) = _promote_inexact("frexp", x)
    _real_only("frexp", x)
    dt = util.aval(x).dtype
    special = lax.bitwise_or(lax.bitwise_or(isinf(x), isnan(x)), lax.eq(x, _zero(x)))
    e = _frexp_exponent(x)
    e = lax.select(special, lax.full(util.aval(e).shape, 0, dtypes.int32), e)
    # m = x * 2**-e in two exact steps (2**-e alone can leave the normal range); d m / d x is
    # 2**-e, as JAX's derivative rule
    half = lax.div(e, lax.full((), 2, dtypes.int32))
    m = lax.mul(lax.mul(x, _pow2(lax.neg(half), dt)), _pow2(lax.sub(half, e), dt))
    return lax.select(special, x, m), e


def ldexp(x1: Any, x2: Any, /) -> Any:
    util.check_arraylike("ldexp", x1, x2)
    a = _as_array(x1)
    b = _as_array(x2)
    da, db = util.aval(a).dtype, util.aval(b).dtype
    if db.kind not in "iub" or da.kind == "c":
        raise ValueError(f"ldexp not supported for input types {(da, db)}")
    (a,) = _promote_inexact("ldexp", a)
    dt = util.aval(a).dtype
    nmant, bias, _ = _float_layout(dt)
    try:
        shape = util.broadcast_shapes(util.aval(a).shape, util.aval(b).shape)
    except ValueError:  # JAX's error: the lax add inside its ldexp
        raise TypeError(
            f"add got incompatible shapes for broadcasting: {util.aval(a).shape}, "
            f"{util.aval(b).shape}."
        ) from None
    a, b = util.broadcast_to(a, shape), util.broadcast_to(b, shape)
    m, e = frexp(a)
    # target exponent, clamped to where the result is 0 or inf anyway
    lo, hi = -(bias + nmant + 2), bias + 2
    if db.kind == "b":
        b = lax.convert_element_type(b, dtypes.int32)
        db = dtypes.int32
    # clamp the shift (in its own dtype, so int64 shifts cannot wrap) before adding e
    wide = 2 * (bias + nmant + 2)
    b_lo = max(-wide, dtypes.iinfo_bounds(db)[0])
    b_hi = min(wide, dtypes.iinfo_bounds(db)[1])
    b = lax.clamp(lax.full((), b_lo, db), b, lax.full((), b_hi, db))
    k = lax.add(lax.convert_element_type(b, dtypes.int32), e)
    k = lax.clamp(lax.full((), lo, dtypes.int32), k, lax.full((), hi, dtypes.int32))
    half = lax.div(k, lax.full((), 2, dtypes.int32))
    out = lax.mul(lax.mul(m, _pow2(half, dt)), _pow2(lax.sub(k, half), dt))
    keep = lax.bitwise_or(lax.bitwise_or(isinf(a), isnan(a)), lax.eq(a, _zero(a)))
    return util.convert(lax.select(keep, a, out), dt)


def modf(x: Any, /, out: None = None) -> tuple[Any, Any]:
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    (x,) = _promote_inexact("modf", x)
    if _is_complex(x):
        lax.ge(x, _zero(x))  # raises JAX's TypeError
    whole = lax.select(lax.ge(x, _zero(x)), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


def nextafter(x: Any, y: Any, /) -> Any:
    x, y = _promote_inexact("nextafter", x, y)
    if _is_complex(x):
        return lax.nextafter(x, y)  # raises JAX's TypeError
    if util.aval(x).dtype.itemsize == 2:
        return _nextafter16(x, y)
    return lax.nextafter(x, y)  # not differentiable, as in JAX


@custom_jvp
def _nextafter16(x: Any, y: Any) -> Any:
    return _nextafter_bits(x, y)


@_nextafter16.defjvp
def _nextafter16_jvp(primals: tuple, tangents: tuple) -> tuple:
    # JAX's nextafter primitive has no derivative (its bit steps are not differentiable)
    raise NotImplementedError("Differentiation rule for 'nextafter' not implemented")


def _nextafter_bits(x: Any, y: Any) -> Any:
    """nextafter by stepping the bit pattern: for 16-bit floats, whose kernels compute in
    float32 (where lax.nextafter would step a float32 ulp that rounds back to x)."""
    dt = util.aval(x).dtype
    _, _, it = _float_layout(dt)
    bits = lax.bitcast_convert_type(x, it)
    one = lax.full((), 1, it)
    zero = _zero(x)
    away = lax.eq(lax.lt(x, y), lax.gt(x, zero))  # moving away from zero
    step = lax.select(away, lax.add(bits, one), lax.sub(bits, one))
    tiny = lax.select(
        lax.lt(y, zero),
        lax.full(util.aval(x).shape, 1 - (1 << (dt.bits - 1)), it),
        lax.full(util.aval(x).shape, 1, it),
    )
    out = lax.bitcast_convert_type(lax.select(lax.eq(x, zero), tiny, step), dt)
    out = lax.select(lax.eq(x, y), y, out)
    return lax.select(lax.bitwise_or(isnan(x), isnan(y)), _full(x, float("nan")), out)


def spacing(x: Any, /) -> Any:
    (x,) = _promote_inexact("spacing", x)
    _real_only("spacing", x, ValueError, "jnp.spacing is not defined for complex inputs.")
    dt = util.aval(x).dtype
    inf = _full(x, float("inf"))
    if dt.name == "float16":
        return lax.sub(nextafter(x, inf), x)
    toward = copysign(inf, x)
    out = lax.sub(nextafter(x, toward), x)
    smallest = copysign(_full(x, finfo(dt).smallest_subnormal), x)
    return lax.select(lax.eq(out, _zero(out)), smallest, out)


def bitwise_count(x: Any, /) -> Any:
    util.check_arraylike("bitwise_count", x)
    x = _as_array(x)
    if util.aval(x).dtype.kind == "b":
        x = util.convert(x, dtypes.int32)
    if util.aval(x).dtype.kind not in "iu":
        raise TypeError(
            f"bitwise_count requires integer or boolean input, got {util.aval(x).dtype}"
        )
    return lax.convert_element_type(lax.population_count(absolute(x)), dtypes.uint8)


# ---- complex-number queries ---------------------------------------------------------------------
def angle(z: Any, deg: bool = False) -> Any:
    """The argument atan2(imag, real) (a real array; reals have angle 0 or pi)."""
    util.check_arraylike("angle", z)
    av = util.aval(_as_array(z))
    if av.dtype.kind in "biu" or (av.dtype.kind == "f" and av.ndim == 0):
        # JAX's rule: the default float for integers, bools and 0-d floats
        z = util.convert(_as_array(z), dtypes.default_float(), av.weak_type)
    (z,) = _promote_inexact("angle", z)
    if _is_complex(z):  # weak for a Python complex, as JAX's
        out = lax.atan2(lax.imag(z), lax.real(z))
    else:
        z = util.convert(z, util.aval(z).dtype)
        out = lax.atan2(_full(z, 0), z)
    return rad2deg(out) if deg else out


def iscomplex(x: Any) -> Any:
    util.check_arraylike("imag", x)
    x = _as_array(x)
    if _is_complex(x):
        return lax.ne(lax.imag(x), _zero(lax.imag(x)))
    return lax.full(util.aval(x).shape, False, dtypes.bool_)


def isreal(x: Any) -> Any:
    util.check_arraylike("imag", x)
    x = _as_array(x)
    if _is_complex(x):
        return lax.eq(lax.imag(x), _zero(lax.imag(x)))
    return lax.full(util.aval(x).shape, True, dtypes.bool_)


def iscomplexobj(x: Any) -> bool:
    """Whether x has a complex dtype (arrays, dtypes' holders, Python complex, sequences)."""
    if x is None:
        return False
    if isinstance(x, complex):
        return True
    dt = getattr(x, "dtype", None)
    if dt is None:
        try:
            dt = util.aval(x).dtype
        except (TypeError, ValueError):
            return False
    return getattr(dt, "kind", None) == "c"


def isrealobj(x: Any) -> bool:
    return not iscomplexobj(x)


def real_if_close(a: Any, tol: float = 100) -> Any:
    """The real part of a complex array whose imaginary parts are all within tol machine
    epsilons of zero (tol > 1), or within tol (tol <= 1); else `a` unchanged (NumPy's; needs
    a concrete array, as its dtype depends on the values)."""
    a = _as_array(a)
    av = util.aval(a)
    if av.dtype.kind != "c":
        return a
    limit = tol * finfo(av.dtype).eps if tol > 1 else tol
    small = lax.reduce_and(
        lax.lt(lax.abs(lax.imag(a)), lax.full((), limit, dtypes.component(av.dtype))),
        tuple(range(av.ndim)),
    )
    concrete = util.concrete_array(small, "real_if_close needs concrete values.")
    return lax.real(a) if bool(concrete) else a


# ---- special functions ---------------------------------------------------------------------------
# Chebyshev coefficients of exp(-x) I0(x) (Cephes' i0.c, as NumPy's i0): on [0, 8] in
# t = x/2 - 2, and of sqrt(x) exp(-x) I0(x) on (8, inf) in t = 32/x - 2.
_I0_A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)  # fmt: skip
_I0_B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)  # fmt: skip


def _chebyshev(t: Any, coeffs: tuple[float, ...]) -> Any:
    """Clenshaw's recurrence for sum' c_k T_k(t/2) (Cephes' chbevl)."""
    dt = util.aval(t).dtype
    if dt.itemsize <= 4:  # terms below float32 resolution change nothing
        coeffs = tuple(c for c in coeffs if builtins.abs(c) > 1e-12)
    b0 = lax.full(util.aval(t).shape, coeffs[0], dt)
    b1 = b2 = _full(t, 0)
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = lax.add(lax.sub(lax.mul(t, b1), b2), lax.full((), c, dt))
    return lax.mul(lax.full((), 0.5, dt), lax.sub(b0, b2))


def i0(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 0: exp(|x|) i0e(|x|)."""
    (x,) = _promote_inexact("i0", x)
    dt = util.aval(x).dtype
    _real_only("i0", x, ValueError, f"Unsupported input type to jax.numpy.i0: {dt.name}")
    ax = lax.abs(x)
    eight = lax.full((), 8.0, dt)
    small = lax.le(ax, eight)
    xa = lax.min(ax, eight)
    xb = lax.max(ax, eight)
    ea = _chebyshev(lax.sub(lax.mul(xa, lax.full((), 0.5, dt)), lax.full((), 2.0, dt)), _I0_A)
    eb = lax.div(
        _chebyshev(lax.sub(lax.div(lax.full((), 32.0, dt), xb), lax.full((), 2.0, dt)), _I0_B),
        lax.sqrt(xb),
    )
    return util.with_weak_type_of(lax.mul(lax.exp(ax), lax.select(small, ea, eb)), x)


# ---- Python-level predicates -------------------------------------------------------------------
def isscalar(element: Any) -> bool:
    """True for Python/NumPy scalars (strings included, as NumPy) and 0-d arrays."""
    if isinstance(element, (bool, int, float, complex, str, bytes)):
        return True
    if type(element).__module__ == "numpy" and not hasattr(element, "__len__"):
        return True  # NumPy scalar types
    if hasattr(element, "ndim") and hasattr(element, "shape"):
        return element.ndim == 0
    if hasattr(element, "__jax_array__"):
        return util.aval(element.__jax_array__()).ndim == 0
    return False


def iterable(y: Any) -> bool:
    try:
        iter(y)
    except TypeError:
        return False
    return True
