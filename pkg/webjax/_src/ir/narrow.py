"""ml_dtypes' narrow types as kernel-IR expressions over their compute types.

Kernels never hold a narrow type: a narrow float is a float32 value of the format, a narrow int
an int32 (int8/uint8 in buffers) of its range. `round_float` rounds a float32 expression to a
narrow float format exactly as ml_dtypes converts (to nearest, ties to even; inf, NaN or the
largest value past it; no -0 in the fnuz formats; e8m0fnu's powers of two), with integer
bit arithmetic and multiplications by powers of two only, so every backend gives the same bits.
`wrap_int` wraps an int32 expression to a narrow int's width (two's complement).
"""

from __future__ import annotations

import math

from .. import dtypes as dt
from . import exp as E
from .exp import Exp
from .ops import Op

_F32, _I32 = dt.float32, dt.int32


def _i(v: int) -> Exp:
    return E.const(v, _I32)


def _pow2(e: Exp) -> Exp:
    """2**e as a float32, for an int32 expression -126 <= e <= 127."""
    return E.bitcast(E.binary(Op.SHL, E.binary(Op.ADD, e, _i(127)), _i(23)), _F32)


def round_float(x: Exp, f: dt.NarrowFloat) -> Exp:
    """The float32 expression `x` rounded to the narrow format `f` (a float32 of its values)."""
    if x.dtype is not _F32:
        x = E.cast(x, _F32)
    bits = E.bitcast(x, _I32)
    if f.unsigned:
        return _round_e8m0(x, bits, f)
    a = E.unary(Op.ABS, x)
    abits = E.binary(Op.AND, bits, _i(0x7FFFFFFF))
    e = E.binary(Op.SUB, E.binary(Op.SHR, abits, _i(23)), _i(127))  # -127 for zero/subnormal
    e = E.binary(Op.MIN, E.binary(Op.MAX, e, _i(f.minexp)), _i(f.maxexp))
    qe = E.binary(Op.SUB, e, _i(f.nmant))  # the exponent of one unit in the last place
    # a / 2**qe is exact and below 2**(nmant + 1) (inf stays inf): ROUND ties to even
    units = E.unary(Op.ROUND, E.binary(Op.MUL, a, _pow2(E.unary(Op.NEG, qe))))
    r = E.binary(Op.MUL, units, _pow2(qe))
    over = {"inf": math.inf, "nan": math.nan, "sat": f.max}[f.overflow]
    r = E.where(E.binary(Op.CMPLT, E.const(f.max, _F32), r), E.const(over, _F32), r)
    sign = E.binary(Op.AND, bits, _i(-0x80000000))
    if not f.signed_zero:  # no -0: a negative value rounding to zero is +0
        sign = E.where(E.binary(Op.CMPEQ, r, E.const(0.0, _F32)), _i(0), sign)
    r = E.bitcast(E.binary(Op.OR, E.bitcast(r, _I32), sign), _F32)
    nan = E.const(-0.0 if f.overflow == "sat" else math.nan, _F32)  # float4: NaN is -0
    return E.where(E.binary(Op.CMPNE, x, x), nan, r)


def _round_e8m0(x: Exp, bits: Exp, f: dt.NarrowFloat) -> Exp:
    """e8m0fnu: a power of two, the float32 mantissa rounding half up into the exponent; zero,
    negatives, inf, NaN and values past 2**127 are NaN; below 2**-127, 2**-127."""
    code = E.binary(Op.SHR, E.binary(Op.ADD, bits, _i(0x400000)), _i(23))
    # below 2**-126 (float32 subnormals): 2**-127 up to 1.5 * 2**-127, 2**-126 from there
    sub = E.where(E.binary(Op.CMPLT, bits, _i(0x600000)), _i(0), _i(1))
    code = E.where(E.binary(Op.CMPLT, bits, _i(0x800000)), sub, code)
    # 2**-127 is a float32 subnormal: made from its bits, and the code 0 shifted left is 0, so
    # the result is the bits of code << 23 or 0x400000; integer tests throughout, as devices
    # that flush subnormals would take a float32 subnormal input for zero
    bits_out = E.where(
        E.binary(Op.CMPEQ, code, _i(0)), _i(0x400000), E.binary(Op.SHL, code, _i(23))
    )
    finite = E.binary(Op.CMPLT, bits, _i(0x7F800000))  # (and positive: NaN, inf are not)
    ok = E.binary(Op.AND, E.binary(Op.CMPLT, _i(0), bits), finite)
    ok = E.binary(Op.AND, ok, E.binary(Op.CMPLT, code, _i(255)))
    return E.bitcast(E.where(ok, bits_out, _i(0x7FC00000)), _F32)


def wrap_int(x: Exp, d: dt.DType) -> Exp:
    """The int32 expression `x` wrapped to the narrow int type `d` (as an int32)."""
    if x.dtype is not _I32:
        x = E.cast(x, _I32)
    b = d.bits
    if d.kind == "u":
        return E.binary(Op.AND, x, _i((1 << b) - 1))
    return E.binary(Op.SHR, E.binary(Op.SHL, x, _i(32 - b)), _i(32 - b))


def clamp_int(x: Exp, d: dt.DType) -> Exp:
    """The int32 expression `x` saturated to the range of the narrow int type `d`."""
    lo, hi = dt.iinfo_bounds(d)
    return E.binary(Op.MIN, E.binary(Op.MAX, x, _i(lo)), _i(hi))


def narrow(x: Exp, d: dt.DType) -> Exp:
    """A compute-type expression as values of the narrow type `d`, in its carrier type."""
    if d.kind == "f":
        return round_float(x, dt.NARROW_FLOATS[d.name])
    return E.cast(wrap_int(x, d), dt.carrier(d))
