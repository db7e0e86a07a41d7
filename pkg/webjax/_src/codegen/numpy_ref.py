"""NumPy evaluator of kernels: the cpu backend's fast path where `import numpy` works.

A kernel's expression DAG is evaluated on whole arrays instead of element by element, with
exactly the reference semantics of `ir.scalar` (bit for bit; any NaN equals any NaN):

- Values live in "carrier" arrays: the dtype itself, except bfloat16 (float32 arrays holding
  bfloat16 values, re-rounded after every op: f32 -> bf16 round-half-even on the bits, as
  `scalar._bf16`). bool/bf16 storage is converted after the gather, so big inputs are not
  converted whole for a small read.
- IDX is an int32 `arange` (int32 math wraps in NumPy as in the reference); LOAD gathers with
  out-of-range indices reading 0 (skipped when range analysis proves the index in bounds, and a
  plain slice when the index is IDX itself).
- Float +, -, *, /, sqrt run in the carrier dtype (correctly rounded, as "compute in double and
  round": double rounding is innocuous for these). Transcendentals: NumPy's float64 functions
  are not libm's (SIMD variants differ by an ulp), so
    * float64: NumPy's function only when a probe at first use finds it identical to `math`
      (sin/cos on common builds), else `math` through `np.frompyfunc` (exact, ~0.1 us/elem);
    * float32/float16/bfloat16: NumPy in float64, rounded to the dtype; elements whose rounding
      could change under a 64-ulp float64 perturbation (and zeros, infinities, NaNs) are
      recomputed with the scalar reference, so results equal the reference exactly.
  erf/erfc/erf_inv/lgamma/digamma always use the scalar reference through `np.frompyfunc`.
- REDUCE evaluates its body on a 2-D grid (output rows x reduction chunk, at most `_GRID`
  elements) by broadcasting: nodes that depend only on IDX stay one row/column. Float ADD/MUL
  combine in the reference's sequential order (a Python loop over the reduction index,
  vectorized across outputs, when there are many outputs; `ufunc.accumulate` otherwise — both
  sequential, unlike NumPy's pairwise `add.reduce`); integer/bool combiners and float MAX/MIN
  (NaN-propagating, -0.0 < +0.0) use order-independent `ufunc.reduce`.

`compile_kernel` raises `Unsupported` for anything it does not handle (the caller falls back to
the pure-Python reference codegen). This module imports NumPy at import time: import it lazily.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import numpy

from .. import dtypes as dt
from ..dtypes import DType
from ..ir import scalar
from ..ir.exp import Exp
from ..ir.kernel import Kernel
from ..ir.ops import Op

np: Any = numpy  # typed dynamically on purpose: carrier dtypes vary per kernel node


class Unsupported(NotImplementedError):
    """The kernel uses an (op, dtype) combination this evaluator does not implement."""


_GRID = 1 << 22  # elements of a reduction grid chunk (32 MB of float64)
_CHUNK = 1 << 20  # output elements per chunk of an elementwise kernel
_LOOP_ROWS = 192  # sequential float reductions loop over r when a chunk has this many rows
_ULPS = 64.0  # float64 ulps NumPy's transcendentals may differ from libm's

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)

CARRIER: dict[str, Any] = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "float16": _F16,
    "bfloat16": _F32,
    "float32": _F32,
    "float64": _F64,
}
# storage dtypes in buffers (bool bytes are normalized with != 0; bfloat16 is raw bits)
STORAGE: dict[str, Any] = {**CARRIER, "bool": np.dtype(np.uint8), "bfloat16": np.dtype(np.uint16)}
_UINT = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}


def carrier(d: DType) -> Any:
    try:
        return CARRIER[d.name]
    except KeyError:
        raise Unsupported(f"dtype {d.name}") from None


# ---- rounding -----------------------------------------------------------------------------------
def _bf16_round(f: Any) -> Any:
    """float32 array -> float32 array of bfloat16 values (round half to even; NaN kept)."""
    f = np.asarray(f, _F32)
    b = f.view(np.uint32)
    r = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return np.where(f != f, f, r.view(np.float32))


def rounder(d: DType) -> Callable[[Any], Any]:
    """Float array (float64 or narrower) -> carrier array of d, as `scalar.ROUND[d]`."""
    name = d.name
    if name == "float64":
        return lambda x: np.asarray(x, _F64)
    if name == "float32":
        return lambda x: np.asarray(x, _F32)
    if name == "float16":
        return lambda x: np.asarray(x, _F16)
    if name == "bfloat16":
        return lambda x: _bf16_round(np.asarray(x, _F32))
    raise Unsupported(f"rounding to {name}")


def _bits(x: Any) -> Any:
    x = np.asarray(x)
    return x.view(_UINT[x.dtype.itemsize])


# ---- the scalar reference, vectorized element by element (exact, slow-ish) ---------------------
def _pyfunc(fn: Callable[..., float], nin: int) -> Callable[..., Any]:
    uf = np.frompyfunc(fn, nin, 1)

    def f(*xs: Any) -> Any:
        return np.asarray(uf(*[np.asarray(x, _F64) for x in xs]), dtype=_F64)

    return f


def _np_logistic(x: Any) -> Any:
    pos = 1.0 / (1.0 + np.exp(-x))
    e = np.exp(x)
    return np.where(x >= 0, pos, e / (1.0 + e))


def _np_cbrt(x: Any) -> Any:
    y = np.copysign(np.power(np.abs(x), 1 / 3), x)
    y = y - (y * y * y - x) / (3 * y * y)
    return np.where((x == 0) | ~np.isfinite(x), x, y)


_NP_FNS: dict[Op, Callable[..., Any]] = {
    Op.EXP: np.exp,
    Op.EXP2: lambda x: np.power(2.0, x),
    Op.EXPM1: np.expm1,
    Op.LOG: np.log,
    Op.LOG1P: np.log1p,
    Op.SIN: np.sin,
    Op.COS: np.cos,
    Op.TAN: np.tan,
    Op.ASIN: np.arcsin,
    Op.ACOS: np.arccos,
    Op.ATAN: np.arctan,
    Op.SINH: np.sinh,
    Op.COSH: np.cosh,
    Op.TANH: np.tanh,
    Op.ASINH: np.arcsinh,
    Op.ACOSH: np.arccosh,
    Op.ATANH: np.arctanh,
    Op.LOGISTIC: _np_logistic,
    Op.CBRT: _np_cbrt,
    Op.POW: np.power,
    Op.ATAN2: np.arctan2,
}
SCALAR_ONLY = frozenset({Op.ERF, Op.ERFC, Op.ERF_INV, Op.LGAMMA, Op.DIGAMMA})
_TRUST: dict[Op, bool] = {}
_SPECIALS = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1e-300, -1e-300, 5e-324, 1e300,
    -1e300, 700.0, 710.0, 711.0, -745.0, -746.0, math.inf, -math.inf, math.nan,
]  # fmt: skip


def _equal_f64(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, _F64), np.asarray(b, _F64)
    return bool(np.all((_bits(a) == _bits(b)) | (np.isnan(a) & np.isnan(b))))


def numpy_is_libm(op: Op) -> bool:
    """Whether NumPy's float64 function gives exactly the reference (probed once per process)."""
    if op not in _TRUST:
        fn, ref = _NP_FNS[op], scalar.FLOAT_FNS[op]
        rng = random.Random(12345)
        vals = list(_SPECIALS)
        for _ in range(4000):
            vals.append(rng.uniform(-10, 10))
            vals.append(rng.uniform(-1, 1))
            vals.append(math.ldexp(rng.random(), rng.randint(-80, 80)) * rng.choice((-1, 1)))
        vals.extend(rng.uniform(-1e6, 1e6) for _ in range(1000))
        if op in (Op.POW, Op.ATAN2):
            ys = [rng.choice([rng.uniform(-5, 5), float(rng.randint(-6, 6)), 0.5]) for _ in vals]
            xs = [abs(v) if op is Op.POW and rng.random() < 0.7 else v for v in vals]
            args: tuple[list[float], ...] = (xs, ys)
        else:
            args = (vals,)
        with np.errstate(all="ignore"):
            got = fn(*[np.array(a, _F64) for a in args])
        want = [ref(*t) for t in zip(*args, strict=True)]
        _TRUST[op] = _equal_f64(got, want)
    return _TRUST[op]


def _stable(y: Any, d: DType, round_: Callable[[Any], Any]) -> Any:
    """Elements where any float64 within _ULPS ulps of y rounds to the same value of d."""
    sp = np.spacing(np.abs(y)) * _ULPS
    lo, hi = round_(y - sp), round_(y + sp)
    return (_bits(lo) == _bits(hi)) & np.isfinite(y) & (y != 0)


def _fixup(r: Any, bad: Any, fn: Callable[..., float], xs: list[Any], round_: Any) -> Any:
    """Recompute the `bad` elements of r with the scalar reference fn."""
    shape = np.broadcast_shapes(np.shape(bad), *[np.shape(x) for x in xs])
    flat = np.flatnonzero(np.broadcast_to(bad, shape))
    if flat.size == 0:
        return r
    cols = [np.broadcast_to(x, shape).reshape(-1)[flat].tolist() for x in xs]
    vals = [fn(*t) for t in zip(*cols, strict=True)]
    out = np.array(np.broadcast_to(r, shape))
    out.reshape(-1)[flat] = round_(np.array(vals, _F64))
    return out


def _transcendental(op: Op, d: DType) -> Callable[..., Any]:
    ref = scalar.FLOAT_FNS[op]
    nin = 2 if op in (Op.POW, Op.ATAN2) else 1
    round_ = rounder(d)
    if op in SCALAR_ONLY:
        py = _pyfunc(ref, nin)
        return lambda *a: round_(py(*a))
    npf = _NP_FNS[op]
    if d is dt.float64:
        if numpy_is_libm(op):
            return lambda *a: npf(*[np.asarray(x, _F64) for x in a])
        return _pyfunc(ref, nin)
    # narrow floats: NumPy in float64, exact rounding checked, the rest by the reference
    if nin == 1:
        p0, m0, pinf, minf = (round_(np.float64(ref(v))) for v in (0.0, -0.0, math.inf, -math.inf))

    def unary(a: Any) -> Any:
        x = np.asarray(a, _F64)
        y = npf(x)
        r = round_(y)
        sp = ~np.isfinite(x) | (x == 0)
        bad = ~_stable(y, d, round_) & ~sp
        if sp.any():
            neg = np.signbit(x)
            r = np.where(x == 0, np.where(neg, m0, p0), r)
            r = np.where(np.isinf(x), np.where(neg, minf, pinf), r)
            r = np.where(x != x, x.astype(r.dtype), r)
        if bad.any():
            r = _fixup(r, bad, ref, [x], round_)
        return r

    def binary(a: Any, b: Any) -> Any:
        x, z = np.asarray(a, _F64), np.asarray(b, _F64)
        y = npf(x, z)
        r = round_(y)
        bad = ~_stable(y, d, round_) | ~np.isfinite(x) | ~np.isfinite(z) | (x == 0) | (z == 0)
        if bad.any():
            r = _fixup(r, bad, ref, [x, z], round_)
        return r

    return binary if nin == 2 else unary


# ---- float ops ----------------------------------------------------------------------------------
def _fmax(a: Any, b: Any) -> Any:
    r = np.where(a > b, a, b)
    r = np.where(a == b, np.where(np.signbit(a), b, a), r)
    return np.where(a != a, a, r)


def _fmin(a: Any, b: Any) -> Any:
    r = np.where(a < b, a, b)
    r = np.where(a == b, np.where(np.signbit(a), a, b), r)
    return np.where(a != a, a, r)


def _sign(a: Any) -> Any:
    one = np.ones((), a.dtype if hasattr(a, "dtype") else _F64)
    return np.where(a > 0, one, np.where(a < 0, -one, a))


def _nextafter_narrow(d: DType) -> Callable[[Any, Any], Any]:
    c = carrier(d)
    width = d.bits
    sign = 1 << (width - 1)
    ut = _UINT[d.itemsize]

    def f(a: Any, b: Any) -> Any:
        a, b = np.asarray(a, c), np.asarray(b, c)
        if d is dt.bfloat16:
            u = (a.view(np.uint32) >> np.uint32(16)).astype(ut)
        else:
            u = a.view(ut)
        one = ut.type(1)
        step = np.where((a < b) == (a > 0), u + one, u - one)
        zero_step = np.where(b < 0, ut.type(1 | sign), one)
        u2 = np.where(a == 0, zero_step, step).astype(ut)
        if d is dt.bfloat16:
            v = (u2.astype(np.uint32) << np.uint32(16)).view(np.float32)
        else:
            v = u2.view(c)
        v = np.where(a == b, b, v)
        return np.where((a != a) | (b != b), np.array(np.nan, c), v)

    return f


def _float_op(op: Op, d: DType) -> Callable[..., Any]:
    c = carrier(d)
    bf = d is dt.bfloat16
    fin: Callable[[Any], Any] = _bf16_round if bf else (lambda x: x)
    native = {Op.ADD: np.add, Op.SUB: np.subtract, Op.MUL: np.multiply, Op.DIV: np.divide}
    if op in native:
        f = native[op]
        return lambda a, b: fin(f(a, b))
    if op is Op.SQRT:
        return lambda a: fin(np.sqrt(a))
    if op is Op.NEG:
        return np.negative
    if op is Op.ABS:
        return np.abs
    if op is Op.SIGN:
        return _sign
    if op is Op.FLOOR:
        return np.floor
    if op is Op.CEIL:
        return np.ceil
    if op is Op.ROUND:
        return np.rint
    if op is Op.ISFINITE:
        return np.isfinite
    if op is Op.RSQRT:
        round_ = rounder(d)
        return lambda a: round_(1.0 / np.sqrt(np.asarray(a, _F64)))
    if op is Op.MOD:
        return lambda a, b: np.fmod(np.asarray(a, _F64), np.asarray(b, _F64)).astype(c)
    if op is Op.MAX:
        return _fmax
    if op is Op.MIN:
        return _fmin
    if op is Op.NEXTAFTER:
        return np.nextafter if d is dt.float64 else _nextafter_narrow(d)
    cmp = {Op.CMPLT: np.less, Op.CMPLE: np.less_equal, Op.CMPEQ: np.equal, Op.CMPNE: np.not_equal}
    if op in cmp:
        return cmp[op]
    if op in _NP_FNS or op in SCALAR_ONLY:
        return _transcendental(op, d)
    raise Unsupported(f"{op.value} on {d.name}")


# ---- integer and bool ops ------------------------------------------------------------------------
def _int_op(op: Op, d: DType) -> Callable[..., Any]:
    c = carrier(d)
    signed = d.kind == "i"
    bits = d.bits
    lo, hi = dt.iinfo_bounds(d)
    zero, one, allones = c.type(0), c.type(1), c.type(-1 if signed else hi)
    simple = {
        Op.NEG: np.negative, Op.NOT: np.invert, Op.ADD: np.add, Op.SUB: np.subtract,
        Op.MUL: np.multiply, Op.MAX: np.maximum, Op.MIN: np.minimum, Op.AND: np.bitwise_and,
        Op.OR: np.bitwise_or, Op.XOR: np.bitwise_xor, Op.CMPLT: np.less, Op.CMPLE: np.less_equal,
        Op.CMPEQ: np.equal, Op.CMPNE: np.not_equal,
    }  # fmt: skip
    if op in simple:
        return simple[op]
    if op is Op.ABS:
        return np.abs if signed else (lambda a: a)
    if op is Op.SIGN:
        return lambda a: np.sign(a).astype(c)
    if op is Op.DIV:
        if signed:

            def sdiv(a: Any, b: Any) -> Any:
                bad = (b == 0) | ((a == lo) & (b == -1))
                bs = np.where(bad, one, b)
                rem = np.fmod(a, bs)
                q = np.floor_divide(a - rem, bs)
                return np.where(b == 0, allones, q)  # INT_MIN / -1 -> a / 1 = INT_MIN

            return sdiv
        return lambda a, b: np.where(b == 0, allones, np.floor_divide(a, np.where(b == 0, one, b)))
    if op is Op.MOD:
        if signed:
            return lambda a, b: np.where(
                b == 0, a, np.fmod(a, np.where((b == 0) | (b == -1), one, b))
            )
        return lambda a, b: np.where(b == 0, a, np.remainder(a, np.where(b == 0, one, b)))
    if op in (Op.SHL, Op.SHR, Op.SHRL):
        ut = _UINT[d.itemsize]
        width = c.type(bits)

        def shift(a: Any, s: Any) -> Any:
            valid = (s < width) & (s >= zero) if signed else (s < width)
            s0 = np.where(valid, s, zero)
            if op is Op.SHL:
                return np.where(valid, np.left_shift(a, s0), zero)
            if op is Op.SHR or not signed:
                r = np.right_shift(a, s0)
                if signed:
                    return np.where(valid, r, np.where(a < 0, allones, zero))
                return np.where(valid, r, zero)
            ua = np.asarray(a).astype(ut)
            r = np.right_shift(ua, np.asarray(s0).astype(ut)).astype(c)
            return np.where(valid, r, zero)

        return shift
    if op is Op.POPCNT:
        ut = _UINT[d.itemsize]
        if hasattr(np, "bitwise_count"):
            return lambda a: np.bitwise_count(np.asarray(a).astype(ut)).astype(c)
        table = np.array([bin(i).count("1") for i in range(256)], np.uint8)

        def popcnt(a: Any) -> Any:
            u = np.ascontiguousarray(np.asarray(a).astype(ut))
            by = u.view(np.uint8).reshape(u.shape + (d.itemsize,))
            return table[by].sum(axis=-1, dtype=np.int64).astype(c)

        return popcnt
    if op is Op.CLZ:
        ut = _UINT[d.itemsize]

        def clz(a: Any) -> Any:
            x = np.asarray(a).astype(ut)
            n = np.zeros(x.shape, np.int64)
            s = bits // 2
            while s:
                y = x >> ut.type(s)
                nz = y != 0
                n += np.where(nz, s, 0)
                x = np.where(nz, y, x)
                s //= 2
            n += (x != 0).astype(np.int64)
            return (bits - n).astype(c)

        return clz
    raise Unsupported(f"{op.value} on {d.name}")


def _bool_op(op: Op) -> Callable[..., Any]:
    table: dict[Op, Callable[..., Any]] = {
        Op.NOT: np.logical_not, Op.AND: np.logical_and, Op.OR: np.logical_or,
        Op.XOR: np.not_equal, Op.MAX: np.logical_or, Op.MIN: np.logical_and,
        Op.ADD: np.logical_or, Op.MUL: np.logical_and,
        Op.CMPLT: lambda a, b: np.logical_and(np.logical_not(a), b),
        Op.CMPLE: lambda a, b: np.logical_or(np.logical_not(a), b),
        Op.CMPEQ: np.equal, Op.CMPNE: np.not_equal,
    }  # fmt: skip
    if op not in table:
        raise Unsupported(f"{op.value} on bool")
    return table[op]


# ---- casts --------------------------------------------------------------------------------------
def _cast(src: DType, dst: DType) -> Callable[[Any], Any]:
    sc, dc = carrier(src), carrier(dst)
    if dst.kind == "b":
        return lambda a: np.not_equal(a, 0)
    if dst.kind == "f":
        round_ = rounder(dst)
        return lambda a: round_(np.asarray(a).astype(_F64))
    if src.kind == "f":
        lo, hi = dt.iinfo_bounds(dst)
        flo, fhi = float(lo), float(hi)  # exact as comparison bounds over doubles

        def f2i(a: Any) -> Any:
            x = np.asarray(a).astype(_F64)
            inside = (x > flo) & (x < fhi)  # False for NaN
            t = np.trunc(np.where(inside, x, 0.0)).astype(dc)
            return np.where(x <= flo, dc.type(lo), np.where(x >= fhi, dc.type(hi), t))

        return f2i
    del sc
    return lambda a: np.asarray(a).astype(dc)


def _bitcast(src: DType, dst: DType) -> Callable[[Any], Any]:
    if src.itemsize != dst.itemsize:
        raise Unsupported("bitcast changes width")
    dc = carrier(dst)
    u = _UINT[src.itemsize]

    def to_bits(a: Any) -> Any:
        a = np.asarray(a)
        if src is dt.bfloat16:
            return (np.asarray(a, _F32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        if src.kind == "b":
            return a.astype(np.uint8)
        return a.view(u)

    def from_bits(b: Any) -> Any:
        if dst is dt.bfloat16:
            return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)
        if dst.kind == "b":
            return b != 0
        return b.view(dc)

    return lambda a: from_bits(to_bits(a))


# ---- node evaluators ---------------------------------------------------------------------------
def op_fn(node: Exp) -> Callable[..., Any]:
    """The vectorized function of an arithmetic node (not a leaf, LOAD or REDUCE)."""
    op = node.op
    if op is Op.WHERE:
        return np.where
    sd = node.src[0].dtype
    if op is Op.CAST:
        return _cast(sd, node.dtype)
    if op is Op.BITCAST:
        return _bitcast(sd, node.dtype)
    carrier(sd)
    carrier(node.dtype)
    if sd.kind == "f":
        return _float_op(op, sd)
    if sd.kind == "b":
        return _bool_op(op)
    return _int_op(op, sd)


def _reduce_combiner(op: Op, d: DType) -> tuple[str, Any]:
    """(kind, ufunc or fn) for a REDUCE combiner on dtype d."""
    if d.kind == "b":
        uf = {
            Op.ADD: np.logical_or,
            Op.MUL: np.logical_and,
            Op.MAX: np.logical_or,
            Op.MIN: np.logical_and,
            Op.AND: np.logical_and,
            Op.OR: np.logical_or,
            Op.XOR: np.logical_xor,
        }[op]
        return "reduce", uf
    if d.kind in "iu":
        uf = {
            Op.ADD: np.add,
            Op.MUL: np.multiply,
            Op.MAX: np.maximum,
            Op.MIN: np.minimum,
            Op.AND: np.bitwise_and,
            Op.OR: np.bitwise_or,
            Op.XOR: np.bitwise_xor,
        }[op]
        return "reduce", uf
    if op in (Op.MAX, Op.MIN):
        return "maxmin", op
    if op in (Op.ADD, Op.MUL):
        return ("loop_bf16" if d is dt.bfloat16 else "seq"), (
            np.add if op is Op.ADD else np.multiply
        )
    raise Unsupported(f"reduce {op.value} on {d.name}")


class NumpyKernel:
    """A compiled kernel: `fn(output, inputs)` over bytearray-like buffers."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        order = kernel.exp.toposort()
        self.n = len(order)
        pos = {id(n): k for k, n in enumerate(order)}
        red = kernel.reduction
        self.red = red
        inner: set[int] = set()
        if red is not None:
            uses: dict[int, bool] = {}
            for n in red.src[0].toposort():
                uses[id(n)] = n.op is Op.RIDX or any(uses[id(s)] for s in n.src)
            inner = {k for k, v in uses.items() if v}
        self.outer: list[tuple[int, str, Any, tuple[int, ...], Exp]] = []
        self.inner: list[tuple[int, str, Any, tuple[int, ...], Exp]] = []
        for node in order:
            step = (pos[id(node)], *self._compile(node), tuple(pos[id(s)] for s in node.src), node)
            (self.inner if id(node) in inner else self.outer).append(step)  # type: ignore[arg-type]
        self.root = pos[id(kernel.exp)]
        for d in (kernel.out_dtype, *kernel.arg_dtypes):
            carrier(d)
        self.out_storage = STORAGE[kernel.out_dtype.name]
        self.in_storage = [STORAGE[d.name] for d in kernel.arg_dtypes]
        size = kernel.size
        if red is None:
            self.rows = min(size, _CHUNK) or 1
            self.axis = -1
        else:
            combine, rsize = red.arg
            self.rsize = rsize
            self.body = pos[id(red.src[0])]
            self.kind, self.comb = _reduce_combiner(combine, red.dtype)
            self.ident = np.asarray(scalar.identity(combine, red.dtype), carrier(red.dtype))
            self.rows = max(1, min(size, _GRID // rsize))
            self.rchunk = max(1, min(rsize, _GRID // self.rows))
            sequential = self.kind in ("seq", "loop_bf16")
            # axis of the reduction in the grid: 0 = (r, rows), loops over r vectorize rows
            self.axis = (
                0 if (not sequential or self.rows >= _LOOP_ROWS or self.kind == "loop_bf16") else 1
            )
            if not sequential and self.rows < self.rchunk:
                self.axis = 1
        self.source = f"# numpy evaluator ({len(order)} nodes, chunk {self.rows} rows)\n"

    def _compile(self, node: Exp) -> tuple[str, Any]:
        op = node.op
        if op is Op.CONST:
            return "const", np.asarray(node.arg, carrier(node.dtype))
        if op is Op.IDX:
            return "idx", None
        if op is Op.RIDX:
            return "ridx", None
        if op is Op.LOAD:
            carrier(node.dtype)
            return "load", (node.arg, node.dtype, node.src[0])
        if op is Op.REDUCE:
            return "reduce", None
        return "op", op_fn(node)

    # -- running ---------------------------------------------------------------------------------
    def __call__(self, output: Any, inputs: list[Any]) -> None:
        k = self.kernel
        raws = [
            np.frombuffer(buf, dtype=st, count=len(buf) // st.itemsize)
            for buf, st in zip(inputs, self.in_storage, strict=True)
        ]
        out = np.frombuffer(output, dtype=self.out_storage, count=k.size)
        with np.errstate(all="ignore"):
            for start in range(0, k.size, self.rows):
                stop = min(k.size, start + self.rows)
                out[start:stop] = self._store(self._chunk(raws, start, stop), stop - start)

    def _store(self, res: Any, n: int) -> Any:
        d = self.kernel.out_dtype
        res = np.broadcast_to(np.asarray(res), self._shape(n)).reshape(-1)
        if d is dt.bfloat16:
            return (np.ascontiguousarray(res, _F32).view(np.uint32) >> np.uint32(16)).astype(
                np.uint16
            )
        if d.kind == "b":
            return res.astype(np.uint8)
        return res

    def _shape(self, n: int, r: int = 1) -> tuple[int, ...]:
        if self.axis < 0:
            return (n,)
        return (r, n) if self.axis == 0 else (n, r)

    def _chunk(self, raws: list[Any], start: int, stop: int) -> Any:
        vals: list[Any] = [None] * self.n
        idx = np.arange(start, stop, dtype=np.int32).reshape(self._shape(stop - start))
        ctx = (raws, idx, start, stop)
        for k, kind, data, srcs, node in self.outer:
            vals[k] = self._eval(kind, data, srcs, node, vals, ctx)
        return vals[self.root]

    def _eval(
        self, kind: str, data: Any, srcs: tuple[int, ...], node: Exp, vals: list[Any], ctx: Any
    ) -> Any:
        if kind == "op":
            return data(*[vals[s] for s in srcs])
        if kind == "const":
            return data
        if kind == "idx":
            return ctx[1]
        if kind == "ridx":
            return ctx[4]
        if kind == "load":
            return self._load(data, vals[srcs[0]], ctx)
        return self._reduce(vals, ctx)

    def _load(self, data: Any, index: Any, ctx: Any) -> Any:
        slot, d, iexp = data
        raw = ctx[0][slot]
        n = raw.shape[0]
        if iexp.op is Op.IDX and n >= ctx[3]:
            v = raw[ctx[2] : ctx[3]].reshape(np.shape(index))
        else:
            rng = iexp.vrange
            if n and rng is not None and rng[0] >= 0 and rng[1] < n:
                v = raw[index]
            elif n == 0:
                v = np.zeros(np.shape(index), raw.dtype)
            else:
                m = (index >= 0) & (index < n)
                v = np.where(m, raw[np.where(m, index, 0)], raw.dtype.type(0))
        v = np.asarray(v)
        if d is dt.bfloat16:
            return (v.astype(np.uint32) << np.uint32(16)).view(np.float32)
        if d.kind == "b":
            return v != 0
        return v

    def _reduce(self, vals: list[Any], ctx: Any) -> Any:
        raws, idx, start, stop = ctx
        rows = stop - start
        axis, kind, comb = self.axis, self.kind, self.comb
        acc = np.broadcast_to(self.ident, self._shape(rows))
        for r0 in range(0, self.rsize, self.rchunk):
            r1 = min(self.rsize, r0 + self.rchunk)
            ridx = np.arange(r0, r1, dtype=np.int32)
            ridx = ridx.reshape((r1 - r0, 1) if axis == 0 else (1, r1 - r0))
            ictx = (raws, idx, start, stop, ridx)
            for k, kd, data, srcs, node in self.inner:
                vals[k] = self._eval(kd, data, srcs, node, vals, ictx)
            g = np.broadcast_to(vals[self.body], self._shape(rows, r1 - r0))
            acc = self._combine(acc, g, kind, comb, axis)
        return acc

    @staticmethod
    def _combine(acc: Any, g: Any, kind: str, comb: Any, axis: int) -> Any:
        if kind == "reduce":
            return comb(acc, comb.reduce(g, axis=axis, keepdims=True, dtype=g.dtype))
        if kind == "maxmin":
            is_max = comb is Op.MAX
            m = (np.maximum if is_max else np.minimum).reduce(g, axis=axis, keepdims=True)
            zr = m == 0
            if zr.any():
                z = g == 0
                if is_max:
                    pos = np.any(z & ~np.signbit(g), axis=axis, keepdims=True)
                    m = np.where(zr, np.where(pos, m.dtype.type(0.0), m.dtype.type(-0.0)), m)
                else:
                    neg = np.any(z & np.signbit(g), axis=axis, keepdims=True)
                    m = np.where(zr, np.where(neg, m.dtype.type(-0.0), m.dtype.type(0.0)), m)
            return (_fmax if is_max else _fmin)(acc, m)
        if kind == "loop_bf16":
            n = g.shape[axis]
            for r in range(n):
                col = g[r : r + 1] if axis == 0 else g[:, r : r + 1]
                acc = _bf16_round(comb(acc, col))
            return acc
        # sequential float ADD/MUL in the carrier dtype
        if axis == 0:
            for r in range(g.shape[0]):
                acc = comb(acc, g[r : r + 1])
            return acc
        tmp = np.concatenate([np.broadcast_to(acc, (g.shape[0], 1)), g], axis=1)
        comb.accumulate(tmp, axis=1, out=tmp)
        return tmp[:, -1:]


def compile_kernel(kernel: Kernel) -> NumpyKernel:
    """Compile `kernel` for NumPy evaluation; raises Unsupported if it cannot."""
    return NumpyKernel(kernel)
