"""Reference scalar semantics of the IR: the living definition every codegen is tested against.

`apply(op, dtype, args)` computes one op on Python scalars and rounds/wraps the result to `dtype`
exactly (float32 through IEEE single rounding, ints with two's-complement wrap). Used for
constant folding and by the pure-Python reference codegen.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from typing import Any

from .. import dtypes as dt
from ..dtypes import DType
from .ops import Op

_INF = math.inf
_NAN = math.nan


# ---- rounding to a dtype ----------------------------------------------------------------------
def _f32(x: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(_INF, x)


def _f16(x: float) -> float:
    try:
        return struct.unpack("<e", struct.pack("<e", x))[0]
    except OverflowError:
        return math.copysign(_INF, x)


def _bf16(x: float) -> float:
    f = _f32(x)
    if f != f:
        return f
    (bits,) = struct.unpack("<I", struct.pack("<f", f))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round half to even
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _int_wrapper(bits: int, signed: bool) -> Callable[[Any], int]:
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)
    if signed:
        return lambda x: ((int(x) + half) & mask) - half
    return lambda x: int(x) & mask


ROUND: dict[DType, Callable[[Any], Any]] = {
    dt.bool_: bool,
    dt.float64: float,
    dt.float32: _f32,
    dt.float16: _f16,
    dt.bfloat16: _bf16,
}
for _d in (dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint16, dt.uint32, dt.uint64):
    ROUND[_d] = _int_wrapper(_d.bits, _d.kind == "i")


def narrow_float(x: float, f: dt.NarrowFloat) -> float:
    """x rounded to the narrow float format `f` (to nearest, ties to even; past the largest
    finite value to inf, NaN or the largest value, by the format), as ml_dtypes converts."""
    if f.unsigned:  # e8m0fnu: powers of two; the mantissa rounds half up; no zero, no sign
        if not 0.0 < x < _INF:
            return _NAN
        m, e = math.frexp(x)  # x = m * 2**e, 0.5 <= m < 1
        e = e if m >= 0.75 else e - 1
        e = max(e, f.minexp)  # below 2**-127: the smallest value
        return _NAN if e >= f.maxexp else math.ldexp(1.0, e)
    if x != x:
        return -0.0 if f.overflow == "sat" else _NAN
    a = abs(x)
    e = math.frexp(a)[1] - 1 if a else f.minexp
    e = min(max(e, f.minexp), f.maxexp)
    q = math.ldexp(1.0, e - f.nmant)
    r = round(a / q) * q if a < _INF else _INF  # a / q is exact; round() ties to even
    if r > f.max:
        r = {"inf": _INF, "nan": _NAN, "sat": f.max}[f.overflow]
    if x < 0 or (x == 0 and math.copysign(1.0, x) < 0):
        if r == 0 and not f.signed_zero:
            return 0.0
        return -r
    return r


def _round_narrow(x: Any, f: dt.NarrowFloat) -> float:
    return narrow_float(x, f)


for _name, _fmt in dt.NARROW_FLOATS.items():
    ROUND[dt.dtype(_name)] = functools.partial(_round_narrow, f=_fmt)
for _name, _bits in dt.NARROW_INT_BITS.items():
    ROUND[dt.dtype(_name)] = _int_wrapper(_bits, not _name.startswith("u"))


def normalize(dtype: DType, x: Any) -> Any:
    """Coerce a Python value to the canonical Python scalar of `dtype`."""
    if dtype.kind == "c":  # host values only: kernels see complex numbers as real pairs
        part = dt.float64 if dtype.itemsize == 16 else dt.float32
        z = complex(x)
        return complex(ROUND[part](z.real), ROUND[part](z.imag))
    if dtype.kind == "f":
        return ROUND[dtype](float(x))
    if dtype.kind == "b":
        return bool(x)
    return ROUND[dtype](int(x))


# ---- casts --------------------------------------------------------------------------------
def cast(x: Any, src: DType, dst: DType) -> Any:
    if dst.kind == "b":
        return x != 0
    if isinstance(x, complex):  # to a real type: the real part (a complex constant's real view)
        x = x.real
    if dst.kind == "f":
        return ROUND[dst](float(x))
    # to integer: floats truncate and saturate, NaN -> 0
    if src.kind == "f":
        if x != x:
            return 0
        lo, hi = dt.iinfo_bounds(dst)
        if x <= lo:
            return lo
        if x >= hi:
            return hi
        return int(x)
    return ROUND[dst](int(x))


_PACK = {dt.dtype(name): "<" + code for name, code in dt.STRUCT_FORMATS.items()}


def bitcast(x: Any, src: DType, dst: DType) -> Any:
    if src is dt.bfloat16:
        raw = struct.pack("<f", x)[2:]
    else:
        raw = struct.pack(_PACK[src], x)
    if dst is dt.bfloat16:
        return struct.unpack("<f", b"\0\0" + raw)[0]
    return struct.unpack(_PACK[dst], raw)[0]


# ---- float math with IEEE special values --------------------------------------------------------
def _safe(f: Callable[..., float]) -> Callable[..., float]:
    def g(*a: float) -> float:
        try:
            return f(*a)
        except OverflowError:
            return _INF
        except (ValueError, ZeroDivisionError):
            return _NAN

    return g


def _log(x: float) -> float:
    if x == 0:
        return -_INF
    if x < 0 or x != x:
        return _NAN
    return math.log(x) if x != _INF else _INF


def _log1p(x: float) -> float:
    if x == -1:
        return -_INF
    if x < -1 or x != x:
        return _NAN
    return math.log1p(x) if x != _INF else _INF


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return _INF


def _expm1(x: float) -> float:
    try:
        return math.expm1(x)
    except OverflowError:
        return _INF


def _div(a: float, b: float) -> float:
    if b == 0:
        if a != a or a == 0:
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)
    return a / b


def _pow(a: float, b: float) -> float:
    if -_INF < a < 0 and math.isfinite(b) and b != math.floor(b):
        return _NAN  # (Python raises OverflowError, not a complex, where |a|^b overflows)
    try:
        r = a**b
    except ZeroDivisionError:
        return math.copysign(_INF, a) if b == math.floor(b) and int(b) % 2 else _INF
    except OverflowError:
        odd = b == math.floor(b) and abs(b) < 2**53 and int(b) % 2 == 1
        return -_INF if a < 0 and odd else _INF
    return _NAN if isinstance(r, complex) else float(r)


def _logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = _exp(x)
    return e / (1.0 + e)


def _sqrt(x: float) -> float:
    if x < 0 or x != x:
        return _NAN
    return math.sqrt(x)


def _round_half_even(x: float) -> float:
    if x != x or x in (_INF, -_INF):
        return x
    return math.copysign(float(round(x)), x)


def _fmax(a: float, b: float) -> float:
    if a != a or b != b:
        return _NAN
    if a == b == 0:
        return b if math.copysign(1, a) < 0 else a
    return a if a > b else b


def _fmin(a: float, b: float) -> float:
    if a != a or b != b:
        return _NAN
    if a == b == 0:
        return a if math.copysign(1, a) < 0 else b
    return a if a < b else b


def _fmod(a: float, b: float) -> float:
    if b == 0 or a != a or b != b or a in (_INF, -_INF):
        return _NAN
    if b in (_INF, -_INF):
        return a
    return math.fmod(a, b)


def _sign(x: float) -> float:
    if x != x:
        return x
    return 1.0 if x > 0 else -1.0 if x < 0 else x


def _erf_inv(y: float) -> float:
    if y <= -1:
        return -_INF if y == -1 else _NAN
    if y >= 1:
        return _INF if y == 1 else _NAN
    # Newton iterations on erf from a rational first guess.
    x = 0.0
    a = 0.147
    ln = math.log(1 - y * y)
    t = 2 / (math.pi * a) + ln / 2
    x = math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), y)
    for _ in range(4):
        err = math.erf(x) - y
        x -= err / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _lgamma(x: float) -> float:
    if x != x:
        return x
    if not math.isfinite(x) or (x <= 0 and x == math.floor(x)):
        return _INF  # lgamma(+-inf) = inf; poles at non-positive integers
    return _safe(math.lgamma)(x)


# B_2k / (2k) for k = 1..8: digamma(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k)
_DIGAMMA_ASYM = tuple(
    b / (2 * k)
    for k, b in enumerate(
        (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510), 1
    )
)


def _digamma(x: float) -> float:
    if x != x or x == -_INF:
        return _NAN
    if x <= 0 and x == math.floor(x):
        return _NAN
    r = 0.0
    if x < 0:  # reflection
        # (tan has period pi: its argument reduced exactly, so poles keep their precision)
        return _digamma(1 - x) - math.pi / math.tan(math.pi * (x - round(x)))
    while x < 10:  # (shifted past 10, 8 terms of the asymptotic series reach float64's eps)
        r -= 1 / x
        x += 1
    f = 1 / (x * x)
    tail = 0.0
    for c in reversed(_DIGAMMA_ASYM):
        tail = tail * f + c
    return r + math.log(x) - 0.5 / x - f * tail


def _nextafter(a: float, b: float) -> float:
    return math.nextafter(a, b)


def _cbrt(x: float) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    y = math.copysign(abs(x) ** (1 / 3), x)
    return y - (y * y * y - x) / (3 * y * y)  # one Newton step: correctly rounded in practice


FLOAT_FNS: dict[Op, Callable[..., float]] = {
    Op.NEG: lambda a: -a,
    Op.ABS: abs,
    Op.SIGN: _sign,
    Op.SQRT: _sqrt,
    Op.RSQRT: lambda a: _div(1.0, _sqrt(a)),
    Op.CBRT: _cbrt,
    Op.EXP: _exp,
    Op.EXP2: lambda a: _pow(2.0, a),
    Op.EXPM1: _expm1,
    Op.LOG: _log,
    Op.LOG1P: _log1p,
    Op.SIN: _safe(math.sin),
    Op.COS: _safe(math.cos),
    Op.TAN: _safe(math.tan),
    Op.ASIN: _safe(math.asin),
    Op.ACOS: _safe(math.acos),
    Op.ATAN: math.atan,
    Op.SINH: lambda a: math.copysign(_INF, a) if abs(a) > 710 else math.sinh(a),
    Op.COSH: _safe(math.cosh),
    Op.TANH: math.tanh,
    Op.ASINH: math.asinh,
    Op.ACOSH: _safe(math.acosh),
    Op.ATANH: lambda a: math.copysign(_INF, a) if abs(a) == 1 else _safe(math.atanh)(a),
    Op.LOGISTIC: _logistic,
    Op.ERF: math.erf,
    Op.ERFC: math.erfc,
    Op.ERF_INV: _erf_inv,
    Op.LGAMMA: lambda a: _lgamma(a),
    Op.DIGAMMA: _digamma,
    Op.FLOOR: lambda a: math.copysign(float(math.floor(a)), a) if math.isfinite(a) else a,
    Op.CEIL: lambda a: math.copysign(float(math.ceil(a)), a) if math.isfinite(a) else a,
    Op.ROUND: _round_half_even,
    Op.ISFINITE: math.isfinite,
    Op.ADD: lambda a, b: a + b,
    Op.SUB: lambda a, b: a - b,
    Op.MUL: lambda a, b: a * b,
    Op.DIV: _div,
    Op.MOD: _fmod,
    Op.MAX: _fmax,
    Op.MIN: _fmin,
    Op.POW: _pow,
    Op.ATAN2: math.atan2,
    Op.NEXTAFTER: _nextafter,
    Op.CMPLT: lambda a, b: a < b,
    Op.CMPLE: lambda a, b: a <= b,
    Op.CMPEQ: lambda a, b: a == b,
    Op.CMPNE: lambda a, b: a != b,
}


# ---- integer ops (operands already wrapped to the dtype; results wrapped by the caller) ---------
def _idiv(a: int, b: int) -> int:
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _imod(a: int, b: int) -> int:
    if b == 0:
        return a
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


INT_FNS: dict[Op, Callable[..., int]] = {
    Op.NEG: lambda a: -a,
    Op.NOT: lambda a: ~a,
    Op.ABS: abs,
    Op.SIGN: lambda a: (a > 0) - (a < 0),
    Op.ADD: lambda a, b: a + b,
    Op.SUB: lambda a, b: a - b,
    Op.MUL: lambda a, b: a * b,
    Op.DIV: _idiv,
    Op.MOD: _imod,
    Op.MAX: max,
    Op.MIN: min,
    Op.AND: lambda a, b: a & b,
    Op.OR: lambda a, b: a | b,
    Op.XOR: lambda a, b: a ^ b,
    Op.CMPLT: lambda a, b: a < b,
    Op.CMPLE: lambda a, b: a <= b,
    Op.CMPEQ: lambda a, b: a == b,
    Op.CMPNE: lambda a, b: a != b,
}

BOOL_FNS: dict[Op, Callable[..., bool]] = {
    Op.NOT: lambda a: not a,
    Op.AND: lambda a, b: a and b,
    Op.OR: lambda a, b: a or b,
    Op.XOR: lambda a, b: a != b,
    Op.MAX: lambda a, b: a or b,
    Op.MIN: lambda a, b: a and b,
    Op.ADD: lambda a, b: a or b,
    Op.MUL: lambda a, b: a and b,
    Op.CMPLT: lambda a, b: (not a) and b,
    Op.CMPLE: lambda a, b: (not a) or b,
    Op.CMPEQ: lambda a, b: a == b,
    Op.CMPNE: lambda a, b: a != b,
}


def _shift(op: Op, dtype: DType, a: int, s: int) -> int:
    bits = dtype.bits
    if op is Op.SHL:
        return 0 if s < 0 or s >= bits else a << s
    ua = a & ((1 << bits) - 1)
    if op is Op.SHRL or dtype.kind == "u":
        return 0 if s < 0 or s >= bits else ua >> s
    return (-1 if a < 0 else 0) if s < 0 or s >= bits else a >> s


def _nextafter_narrow(dtype: DType, a: float, b: float) -> float:
    """nextafter stepping one unit in the last place of `dtype` (not of float64)."""
    if a != a or b != b:
        return _NAN
    if a == b:
        return b
    bits_t = {2: "<H", 4: "<I"}[dtype.itemsize]
    fmt = {"float32": "<f", "float16": "<e"}.get(dtype.name)
    if fmt is None:  # bfloat16: upper half of a float32
        (u,) = struct.unpack("<I", struct.pack("<f", a))
        u >>= 16
    else:
        (u,) = struct.unpack(bits_t, struct.pack(fmt, a))
    sign_bit = 1 << (dtype.bits - 1)
    if a == 0:
        u = 1 | (sign_bit if b < 0 else 0)
    elif (a < b) == (a > 0):
        u += 1
    else:
        u -= 1
    if fmt is None:
        return struct.unpack("<f", struct.pack("<I", u << 16))[0]
    return struct.unpack(fmt, struct.pack(bits_t, u))[0]


def apply(op: Op, dtype: DType, args: tuple[Any, ...], src_dtype: DType | None = None) -> Any:
    """Evaluate `op` on already-normalized scalars; `dtype` is the result dtype.

    `src_dtype` is the operand dtype (needed for CAST, BITCAST and comparisons).
    """
    sd = src_dtype or dtype
    if op is Op.CAST:
        return cast(args[0], sd, dtype)
    if op is Op.BITCAST:
        return bitcast(args[0], sd, dtype)
    if op is Op.WHERE:
        return args[1] if args[0] else args[2]
    if sd.kind == "f":
        if op is Op.NEXTAFTER and sd is not dt.float64:
            return _nextafter_narrow(sd, *args)
        return normalize(dtype, FLOAT_FNS[op](*args))
    if sd.kind == "b":
        if op not in BOOL_FNS:
            raise TypeError(f"{op.value} is not defined on bool")
        return bool(BOOL_FNS[op](*args))
    if op in (Op.SHL, Op.SHR, Op.SHRL):
        return ROUND[dtype](_shift(op, sd, args[0], args[1]))
    if op is Op.POPCNT:
        return bin(args[0] & ((1 << sd.bits) - 1)).count("1")
    if op is Op.CLZ:
        return sd.bits - (args[0] & ((1 << sd.bits) - 1)).bit_length()
    if op not in INT_FNS:
        raise TypeError(f"{op.value} is not defined on {sd.name}")
    r = INT_FNS[op](*args)
    return r if dtype.kind == "b" else ROUND[dtype](r)


def identity(op: Op, dtype: DType) -> Any:
    """The identity element of a REDUCE combiner."""
    if op is Op.ADD:
        return normalize(dtype, 0)
    if op is Op.MUL:
        return normalize(dtype, 1)
    if op in (Op.OR, Op.XOR):
        return normalize(dtype, 0)
    if op is Op.AND:
        return True if dtype.kind == "b" else normalize(dtype, -1)
    if dtype.kind == "f":
        return -_INF if op is Op.MAX else _INF
    if dtype.kind == "b":
        return op is Op.MIN
    lo, hi = dt.iinfo_bounds(dtype)
    return lo if op is Op.MAX else hi
