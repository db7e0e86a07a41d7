"""The kernel IR op catalogue: the scalar operations every codegen must render.

A kernel computes one scalar expression per output element. Expressions are trees of `Exp`
nodes (see exp.py) whose ops come from this short list. Semantics are those of the reference
executor (scalar.py); codegens must match it. Integer arithmetic wraps (two's complement);
integer DIV/MOD are C-style (truncate toward zero, remainder takes the dividend's sign).
"""

from __future__ import annotations

from enum import Enum


class Op(Enum):
    # -- leaves -----------------------------------------------------------------------------
    CONST = "const"  # arg = Python scalar of `dtype`
    IDX = "idx"  # flat output index, int32; arg = size, 0 <= IDX < size
    RIDX = "ridx"  # reduction index inside REDUCE, int32; arg = size
    LOAD = "load"  # src = (index,); arg = input slot (int) or, before canonicalization, a buffer
    # -- unary: dtype in == dtype out --------------------------------------------------------
    NEG = "neg"
    NOT = "not"  # bitwise not on ints, logical not on bool
    ABS = "abs"
    SIGN = "sign"  # -1, 0, 1 (NaN stays NaN)
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    CBRT = "cbrt"
    EXP = "exp"
    EXP2 = "exp2"
    EXPM1 = "expm1"
    LOG = "log"
    LOG1P = "log1p"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    ASIN = "asin"
    ACOS = "acos"
    ATAN = "atan"
    SINH = "sinh"
    COSH = "cosh"
    TANH = "tanh"
    ASINH = "asinh"
    ACOSH = "acosh"
    ATANH = "atanh"
    LOGISTIC = "logistic"  # 1 / (1 + exp(-x))
    ERF = "erf"
    ERFC = "erfc"
    ERF_INV = "erf_inv"
    LGAMMA = "lgamma"
    DIGAMMA = "digamma"
    FLOOR = "floor"
    CEIL = "ceil"
    ROUND = "round"  # half to even
    ISFINITE = "is_finite"  # float -> bool
    POPCNT = "population_count"
    CLZ = "clz"
    CAST = "cast"  # value conversion to `dtype`; float->int saturates, NaN -> 0
    BITCAST = "bitcast"  # reinterpret bits (same width)
    # -- binary ------------------------------------------------------------------------------
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"  # float: IEEE; int: truncating, x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN
    MOD = "rem"  # float: fmod; int: C remainder, x%0 = x
    MAX = "max"  # NaN-propagating for floats
    MIN = "min"
    POW = "pow"
    ATAN2 = "atan2"
    NEXTAFTER = "nextafter"
    AND = "and"  # bitwise (logical on bool)
    OR = "or"
    XOR = "xor"
    SHL = "shift_left"  # shifts >= bit width give 0 (or -1 for SHR of negative signed)
    SHR = "shift_right"  # arithmetic for signed, logical for unsigned
    SHRL = "shift_right_logical"
    CMPLT = "lt"  # comparisons output bool; NaN compares false (CMPNE true)
    CMPLE = "le"
    CMPEQ = "eq"
    CMPNE = "ne"
    # -- ternary -----------------------------------------------------------------------------
    WHERE = "select"  # src = (cond: bool, if_true, if_false)
    # -- reduction ---------------------------------------------------------------------------
    REDUCE = "reduce"  # arg = (combine Op, size); src = (body,), body may use RIDX(size)

    # Members are singletons compared by identity: identity hashing (C speed; Enum's own hash
    # is a Python call, and every interned expression key hashes an Op).
    __hash__ = object.__hash__


UNARY = frozenset(
    {
        Op.NEG, Op.NOT, Op.ABS, Op.SIGN, Op.SQRT, Op.RSQRT, Op.CBRT, Op.EXP, Op.EXP2, Op.EXPM1,
        Op.LOG, Op.LOG1P, Op.SIN, Op.COS, Op.TAN, Op.ASIN, Op.ACOS, Op.ATAN, Op.SINH, Op.COSH,
        Op.TANH, Op.ASINH, Op.ACOSH, Op.ATANH, Op.LOGISTIC, Op.ERF, Op.ERFC, Op.ERF_INV,
        Op.LGAMMA, Op.DIGAMMA, Op.FLOOR, Op.CEIL, Op.ROUND, Op.ISFINITE, Op.POPCNT, Op.CLZ,
        Op.CAST, Op.BITCAST,
    }
)  # fmt: skip
BINARY = frozenset(
    {
        Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.MIN, Op.POW, Op.ATAN2, Op.NEXTAFTER,
        Op.AND, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.SHRL, Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE,
    }
)  # fmt: skip
COMPARE = frozenset({Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE})
COMMUTATIVE = frozenset({Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR, Op.CMPEQ, Op.CMPNE})
# Ops whose result is not of the operand dtype.
TO_BOOL = COMPARE | {Op.ISFINITE}
# Combiners allowed in REDUCE, with their identity element chosen per dtype in scalar.py.
REDUCERS = frozenset({Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR})
# Transcendental float-only ops.
FLOAT_ONLY = frozenset(
    {
        Op.SQRT, Op.RSQRT, Op.CBRT, Op.EXP, Op.EXP2, Op.EXPM1, Op.LOG, Op.LOG1P, Op.SIN, Op.COS,
        Op.TAN, Op.ASIN, Op.ACOS, Op.ATAN, Op.SINH, Op.COSH, Op.TANH, Op.ASINH, Op.ACOSH,
        Op.ATANH, Op.LOGISTIC, Op.ERF, Op.ERFC, Op.ERF_INV, Op.LGAMMA, Op.DIGAMMA, Op.FLOOR,
        Op.CEIL, Op.ROUND, Op.ISFINITE, Op.POW, Op.ATAN2, Op.NEXTAFTER,
    }
)  # fmt: skip
