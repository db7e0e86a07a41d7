"""Kernel-IR lowering rules of lax.py's primitives: elementwise math, conversions, movement
(views that only re-index), `dot_general` and the reductions.

Each rule maps the operands' expressions (each over its own flat index) to the output's; eager
dispatch (webjax._src.dispatch.lowering) applies them, and jit programs reuse them by running the
jaxpr eagerly on placeholder buffers. 16-bit floats compute in float32 and round back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes
from ..core import ShapedArray
from ..dispatch import lowering
from ..dispatch.lowering import Rule
from ..dtypes import DType
from ..ir import exp as E
from ..ir import view
from ..ir.exp import Exp
from ..ir.ops import Op
from . import ad_rules, lax

# ---- elementwise --------------------------------------------------------------------------------
UNARY_OPS = {
    "neg": Op.NEG, "sign": Op.SIGN, "floor": Op.FLOOR, "ceil": Op.CEIL, "round": Op.ROUND,
    "is_finite": Op.ISFINITE, "exp": Op.EXP, "exp2": Op.EXP2, "log": Op.LOG,
    "log1p": Op.LOG1P, "expm1": Op.EXPM1, "tanh": Op.TANH, "logistic": Op.LOGISTIC,
    "sin": Op.SIN, "cos": Op.COS, "tan": Op.TAN, "asin": Op.ASIN, "acos": Op.ACOS,
    "atan": Op.ATAN, "sinh": Op.SINH, "cosh": Op.COSH, "asinh": Op.ASINH, "acosh": Op.ACOSH,
    "atanh": Op.ATANH, "sqrt": Op.SQRT, "rsqrt": Op.RSQRT, "cbrt": Op.CBRT, "abs": Op.ABS,
    "not": Op.NOT, "erf": Op.ERF, "erfc": Op.ERFC, "erf_inv": Op.ERF_INV, "lgamma": Op.LGAMMA,
    "digamma": Op.DIGAMMA, "population_count": Op.POPCNT, "clz": Op.CLZ,
}  # fmt: skip
BINARY_OPS = {
    "add": Op.ADD, "sub": Op.SUB, "mul": Op.MUL, "div": Op.DIV, "rem": Op.MOD, "pow": Op.POW,
    "max": Op.MAX, "min": Op.MIN, "atan2": Op.ATAN2, "nextafter": Op.NEXTAFTER, "and": Op.AND,
    "or": Op.OR, "xor": Op.XOR, "shift_left": Op.SHL, "shift_right_arithmetic": Op.SHR,
    "shift_right_logical": Op.SHRL, "eq": Op.CMPEQ, "ne": Op.CMPNE, "lt": Op.CMPLT,
    "le": Op.CMPLE,
}  # fmt: skip
SWAPPED = {"gt": Op.CMPLT, "ge": Op.CMPLE}
# 16-bit floats compute in float32 (exact for the basic ops after rounding back, and how the
# backends evaluate them anyway).
_WIDEN = {dtypes.float16, dtypes.bfloat16}


def _widened(op_fn: Callable[..., Exp], args: list[Exp], out: DType) -> Exp:
    if args[0].dtype in _WIDEN:
        wide = [E.cast(a, dtypes.float32) for a in args]
        r = op_fn(*wide)
        return r if r.dtype is dtypes.bool_ else E.cast(r, out)
    return op_fn(*args)


def _unary_rule(op: Op) -> Rule:
    def rule(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray) -> Exp:
        return _widened(lambda a: E.unary(op, a), ins, out.dtype)

    return rule


def _binary_rule(op: Op, swap: bool = False) -> Rule:
    def rule(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray) -> Exp:
        a, b = (lowering._at(x, av, out) for x, av in zip(ins, avals, strict=True))
        if swap:
            a, b = b, a
        if op is Op.NEXTAFTER:  # a step in the operands' own format: never widened
            return E.binary(op, a, b)
        return _widened(lambda x, y: E.binary(op, x, y), [a, b], out.dtype)

    return rule


for _name, _op in UNARY_OPS.items():
    lowering.register(lax.prims[_name], _unary_rule(_op), elementwise=True)
for _name, _op in BINARY_OPS.items():
    lowering.register(lax.prims[_name], _binary_rule(_op), elementwise=True)

# float32 erf_inv as XLA computes it: Giles' single-precision polynomials in w = -log1p(-x^2)
# ("Approximating the erfinv function", GPU Computing Gems, 2011), with erf_inv(+-1) = +-inf.
# Plain float32 ops, so it vectorizes on every backend (the generic ERF_INV op refines in
# float64 and stays for float64 inputs).
_ERFINV_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # fmt: skip


def _erf_inv_f32(x: Exp) -> Exp:
    f32 = dtypes.float32

    def c(v: float) -> Exp:
        return E.const(v, f32)

    def horner(coefs: tuple[float, ...], w: Exp) -> Exp:
        p = c(coefs[0])
        for k in coefs[1:]:
            p = E.binary(Op.ADD, c(k), E.binary(Op.MUL, p, w))
        return p

    one = c(1.0)
    w = E.unary(Op.NEG, E.unary(Op.LOG1P, E.unary(Op.NEG, E.binary(Op.MUL, x, x))))
    central = horner(_ERFINV_CENTRAL, E.binary(Op.SUB, w, c(2.5)))
    tail = horner(_ERFINV_TAIL, E.binary(Op.SUB, E.unary(Op.SQRT, w), c(3.0)))
    p = E.where(E.binary(Op.CMPLT, w, c(5.0)), central, tail)
    edge = E.binary(Op.CMPEQ, E.unary(Op.ABS, x), one)
    return E.where(edge, E.binary(Op.MUL, x, c(math.inf)), E.binary(Op.MUL, p, x))


def _erf_inv_rule(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray) -> Exp:
    if ins[0].dtype is dtypes.float64:
        return E.unary(Op.ERF_INV, ins[0])
    return _widened(_erf_inv_f32, ins, out.dtype)


lowering.register(lax.prims["erf_inv"], _erf_inv_rule, elementwise=True)
for _name, _op in SWAPPED.items():
    lowering.register(lax.prims[_name], _binary_rule(_op, swap=True), elementwise=True)


def _convert(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
    return E.cast(ins[0], out.dtype)


def _bitcast(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
    return E.bitcast(ins[0], out.dtype)


def _integer_pow(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, y: int) -> Exp:
    x = ins[0]
    if y < 0 and out.dtype.kind != "f":
        raise TypeError("Integers cannot be raised to negative powers.")

    def power(b: Exp) -> Exp:
        acc: Exp | None = None
        n = abs(y)
        while n:
            if n & 1:
                acc = b if acc is None else E.binary(Op.MUL, acc, b)
            n >>= 1
            if n:
                b = E.binary(Op.MUL, b, b)
        r = acc if acc is not None else E.const(1, b.dtype)
        return E.binary(Op.DIV, E.const(1, r.dtype), r) if y < 0 else r

    return _widened(power, [x], out.dtype)


def _select_n(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray) -> Exp:
    which = lowering._at(ins[0], avals[0], out)
    cases = [lowering._at(c, av, out) for c, av in zip(ins[1:], avals[1:], strict=True)]
    if which.dtype is dtypes.bool_:
        return cases[0] if len(cases) == 1 else E.where(which, cases[1], cases[0])
    result = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        result = E.where(E.binary(Op.CMPEQ, which, E.const(k, which.dtype)), cases[k], result)
    return result


def _clamp(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray) -> Exp:
    lo, x, hi = (lowering._at(e, av, out) for e, av in zip(ins, avals, strict=True))
    return _widened(
        lambda a, b, c: E.binary(Op.MIN, E.binary(Op.MAX, b, a), c), [lo, x, hi], out.dtype
    )


def _iota(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    dtype: DType,
    shape: tuple[int, ...],
    dimension: int,
    sharding: Any = None,
) -> Exp:
    i = view.unravel(lowering._idx(out), shape)[dimension]
    return E.cast(i, dtype)


def _broadcast_in_dim(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    shape: tuple[int, ...],
    broadcast_dimensions: tuple[int, ...],
    sharding: Any = None,
) -> Exp:
    index = view.broadcast_index(lowering._idx(out), avals[0].shape, shape, broadcast_dimensions)
    return view.reindex(ins[0], avals[0].size, index)


def _reshape(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
    return ins[0]  # row-major reshape keeps the flat index (and sizes are equal)


def _transpose(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, permutation: tuple[int, ...]
) -> Exp:
    index = view.transpose_index(lowering._idx(out), avals[0].shape, permutation)
    return view.reindex(ins[0], avals[0].size, index)


def _concatenate(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, dimension: int
) -> Exp:
    o = view.unravel(lowering._idx(out), out.shape)
    k = o[dimension]
    result: Exp | None = None
    offset = out.shape[dimension]
    for x, av in reversed(list(zip(ins, avals, strict=True))):
        offset -= av.shape[dimension]
        if av.size == 0:
            continue
        index = list(o)
        index[dimension] = E.add(k, -offset)
        value = view.reindex(x, av.size, view.ravel(index, av.shape))
        result = (
            value
            if result is None
            else E.where(E.binary(Op.CMPLT, k, E.i32(offset + av.shape[dimension])), value, result)
        )
    assert result is not None
    return result


def _slice(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> Exp:
    st = strides or (1,) * len(start_indices)
    o = view.unravel(lowering._idx(out), out.shape)
    index = [E.add(E.mul(i, s), lo) for i, s, lo in zip(o, st, start_indices, strict=True)]
    return view.reindex(ins[0], avals[0].size, view.ravel(index, avals[0].shape))


def _pad(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    padding_config: tuple[tuple[int, int, int], ...],
) -> Exp:
    x_aval = avals[0]
    pad_value = view.reindex(ins[1], avals[1].size, E.i32(0))
    if x_aval.size == 0:
        return pad_value
    o = view.unravel(lowering._idx(out), out.shape)
    valid: Exp | None = None
    index = []
    for i, d, (lo, _hi, interior) in zip(o, x_aval.shape, padding_config, strict=True):
        shifted = E.add(i, -lo)
        step = interior + 1
        # shifted may be negative: offset before dividing so idiv/mod act on non-negatives
        bias = step * (lo // step + 1) if lo > 0 else 0
        q = E.add(E.idiv(E.add(shifted, bias), step), -(bias // step))
        conds = [E.binary(Op.CMPLE, E.i32(0), shifted), E.binary(Op.CMPLT, q, E.i32(d))]
        if step > 1:
            conds.append(E.binary(Op.CMPEQ, E.mod(E.add(shifted, bias), step), E.i32(0)))
        for c in conds:
            valid = c if valid is None else E.binary(Op.AND, valid, c)
        index.append(q)
    value = view.reindex(ins[0], x_aval.size, view.ravel(index, x_aval.shape))
    return value if valid is None else E.where(valid, value, pad_value)


def _rev(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, dimensions: tuple[int, ...]
) -> Exp:
    o = view.unravel(lowering._idx(out), out.shape)
    index = [
        E.binary(Op.SUB, E.i32(d - 1), i) if a in dimensions else i
        for a, (i, d) in enumerate(zip(o, out.shape, strict=True))
    ]
    return view.reindex(ins[0], avals[0].size, view.ravel(index, out.shape))


def _clamped_starts(
    starts: list[Exp], start_avals: list[ShapedArray], shape: Sequence[int], sizes: Sequence[int]
) -> list[Exp]:
    """Scalar start indices read inside the kernel, clamped like XLA to keep slices in range."""
    out = []
    for s, av, d, n in zip(starts, start_avals, shape, sizes, strict=True):
        s = E.cast(view.reindex(s, av.size, E.i32(0)), dtypes.int32)
        s = E.binary(Op.MIN, E.binary(Op.MAX, s, E.i32(0)), E.i32(d - n))
        out.append(s)
    return out


def _dynamic_slice(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, slice_sizes: tuple[int, ...]
) -> Exp:
    x_aval = avals[0]
    starts = _clamped_starts(ins[1:], avals[1:], x_aval.shape, slice_sizes)
    o = view.unravel(lowering._idx(out), out.shape)
    index = [E.add(i, s) for i, s in zip(o, starts, strict=True)]
    return view.reindex(ins[0], x_aval.size, view.ravel(index, x_aval.shape))


def _dynamic_update_slice(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray) -> Exp:
    x_aval, u_aval = avals[0], avals[1]
    starts = _clamped_starts(ins[2:], avals[2:], x_aval.shape, u_aval.shape)
    o = view.unravel(lowering._idx(out), out.shape)
    inside: Exp | None = None
    rel = []
    for i, s, n in zip(o, starts, u_aval.shape, strict=True):
        r = E.binary(Op.SUB, i, s)
        rel.append(r)
        c = E.binary(Op.AND, E.binary(Op.CMPLE, E.i32(0), r), E.binary(Op.CMPLT, r, E.i32(n)))
        inside = c if inside is None else E.binary(Op.AND, inside, c)
    if u_aval.size == 0 or inside is None:
        return ins[0]
    upd = view.reindex(ins[1], u_aval.size, view.ravel(rel, u_aval.shape))
    return E.where(inside, upd, ins[0])


def _dot_general(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Exp:
    (lc, rc), (lb, rb) = dimension_numbers
    la, ra = avals
    lfree = lax._dot_free(la.ndim, lc, lb)
    rfree = lax._dot_free(ra.ndim, rc, rb)
    csizes = [la.shape[i] for i in lc]
    rsize = math.prod(csizes)
    o = view.unravel(lowering._idx(out), out.shape)
    r = view.unravel(E.ridx(rsize), csizes)
    nb, nl = len(lb), len(lfree)
    li: list[Exp] = [E.i32(0)] * la.ndim
    ri: list[Exp] = [E.i32(0)] * ra.ndim
    for k, (a, b) in enumerate(zip(lb, rb, strict=True)):
        li[a], ri[b] = o[k], o[k]
    for k, a in enumerate(lfree):
        li[a] = o[nb + k]
    for k, b in enumerate(rfree):
        ri[b] = o[nb + nl + k]
    for k, (a, b) in enumerate(zip(lc, rc, strict=True)):
        li[a], ri[b] = r[k], r[k]
    lhs = view.reindex(ins[0], la.size, view.ravel(li, la.shape))
    rhs = view.reindex(ins[1], ra.size, view.ravel(ri, ra.shape))
    acc = out.dtype
    if acc in _WIDEN:
        acc = dtypes.float32
    lhs, rhs = E.cast(lhs, acc), E.cast(rhs, acc)
    if acc is dtypes.bool_:
        prod = E.binary(Op.AND, lhs, rhs)
        return E.cast(E.reduce(Op.OR, prod, rsize), out.dtype)
    return E.cast(E.reduce(Op.ADD, E.binary(Op.MUL, lhs, rhs), rsize), out.dtype)


_REDUCE_OPS = {
    "reduce_sum": Op.ADD, "reduce_prod": Op.MUL, "reduce_max": Op.MAX, "reduce_min": Op.MIN,
    "reduce_and": Op.AND, "reduce_or": Op.OR, "reduce_xor": Op.XOR,
}  # fmt: skip


def _reduce_rule(op: Op) -> Rule:
    def rule(
        ins: list[Exp],
        avals: list[ShapedArray],
        out: ShapedArray,
        *,
        axes: tuple[int, ...],
        out_sharding: Any = None,
    ) -> Exp:
        shape = avals[0].shape
        rsize = math.prod(shape[a] for a in axes)
        index = view.reduce_index(lowering._idx(out), E.ridx(rsize), shape, axes)
        body = view.reindex(ins[0], avals[0].size, index)
        if body.dtype in _WIDEN and op in (Op.ADD, Op.MUL):  # accumulate 16-bit floats in f32
            return E.cast(E.reduce(op, E.cast(body, dtypes.float32), rsize), body.dtype)
        return E.reduce(op, body, rsize)

    return rule


lowering.register(lax.convert_element_type_p, _convert, elementwise=True)
lowering.register(lax.bitcast_convert_type_p, _bitcast, elementwise=True)
lowering.register(lax.integer_pow_p, _integer_pow, elementwise=True)
lowering.register(lax.select_n_p, _select_n, elementwise=True)
lowering.register(lax.clamp_p, _clamp, elementwise=True)
lowering.register(lax.iota_p, _iota)
lowering.register(lax.broadcast_in_dim_p, _broadcast_in_dim)
lowering.register(lax.reshape_p, _reshape)
lowering.register(lax.squeeze_p, _reshape)
lowering.register(lax.stop_gradient_p, _reshape, elementwise=True)
lowering.register(lax.transpose_p, _transpose)
lowering.register(lax.concatenate_p, _concatenate)
lowering.register(lax.slice_p, _slice)
lowering.register(lax.dot_general_p, _dot_general)
lowering.register(lax.rev_p, _rev)
lowering.register(lax.dynamic_slice_p, _dynamic_slice)
lowering.register(lax.dynamic_update_slice_p, _dynamic_update_slice)
lowering.register(ad_rules.add_any_p, _binary_rule(Op.ADD), elementwise=True)
lowering.register(lax.pad_p, _pad)
for _name, _op in _REDUCE_OPS.items():
    lowering.register(lax.prims[_name], _reduce_rule(_op))
