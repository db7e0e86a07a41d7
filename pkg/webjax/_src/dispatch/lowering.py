"""Lowering: each lax primitive as a kernel-IR expression, and eager dispatch.

The meeting point of the two stacks. A lowering rule maps input expressions (each over its own
flat index IDX) to the output expression over the output's IDX; movement primitives only
re-index. `apply_primitive` is the eval-trace `impl` of every lowered primitive.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..config import config
from ..core import Primitive, ShapedArray
from ..dtypes import DType
from ..ir import exp as E
from ..ir import view
from ..ir.exp import Exp
from ..ir.ops import Op
from ..lax import ad_rules, lax
from ..runtime import backend as rt
from ..runtime.backend import Device
from . import array as array_mod
from . import lazy
from .array import Array

Rule = Callable[..., Exp]
LOWERINGS: dict[Primitive, Rule] = {}

# ---- devices ------------------------------------------------------------------------------------
_default_device_stack: list[Device] = []


def default_device() -> Device:
    if _default_device_stack:
        return _default_device_stack[-1]
    configured = config.read("jax_default_device")
    if configured is not None:
        return configured if isinstance(configured, Device) else rt.device(str(configured))
    return rt.device(rt.default_platform())


def _pick_device(args: Sequence[Any]) -> Device:
    """JAX's placement rule: committed arrays decide (and must agree); otherwise the first
    array's device. Uncommitted arrays elsewhere are moved."""
    arrays = [a for a in args if isinstance(a, Array)]
    committed = {a._device for a in arrays if a._committed}
    if len(committed) > 1:
        raise ValueError(
            "Received incompatible devices for jitted computation. Got argument devices "
            + ", ".join(sorted(str(d) for d in committed))
            + ". Move arrays to one device with jax.device_put first."
        )
    if committed:
        return committed.pop()
    for a in arrays:
        if not _is_constant(a):
            return a._device
    return arrays[0]._device if arrays else default_device()


def _is_constant(x: Array) -> bool:
    e = x._exp
    return e is None or not e.info[1]


def _input_exp(x: Any, aval: ShapedArray, device: Device) -> Exp:
    if isinstance(x, Array):
        e = array_mod.exp_of(x)
        if e is None:  # empty array: never read
            return E.const(0, aval.dtype)
        if x._device != device and not _is_constant(x):
            e = array_mod.exp_of(transfer(x, device))
        assert e is not None
        return e
    return array_mod.const_exp(x, aval.dtype, aval.size)  # a Python scalar


def transfer(x: Array, device: Device) -> Array:
    """A copy of `x` on `device` (bytes through the host)."""
    lb = x._buffer()
    if lb is None:
        return Array(x.aval, device, None)
    out = array_mod.from_host_bytes(lazy.read_bytes(lb), x.shape, x.dtype, device)
    out.aval = x.aval
    return out


def apply_primitive(prim: Primitive, *args: Any, **params: Any) -> Any:
    avals = [core.get_aval(a) for a in args]
    assert prim.abstract_eval is not None
    out_aval = prim.abstract_eval(*avals, **params)
    device = _pick_device(args)
    if out_aval.size == 0:
        return Array(out_aval, device, None)
    if not device.backend.supports_dtype(array_mod.storage(out_aval)[0]):
        raise TypeError(
            f"The {device.platform} backend does not support dtype {out_aval.dtype.name} "
            f"(needed by '{prim.name}')."
        )
    is_complex = out_aval.dtype.kind == "c" or any(av.dtype.kind == "c" for av in avals)
    if is_complex and prim.name in COMPONENTWISE:
        return _componentwise(prim, args, avals, params)
    rule = COMPLEX_LOWERINGS.get(prim) if is_complex else LOWERINGS[prim]
    if rule is None:
        raise NotImplementedError(
            f"webjax does not implement '{prim.name}' for complex dtypes "
            f"({', '.join(av.dtype.name for av in avals)})."
        )
    store = [_storage_aval(av) for av in avals]  # what kernels see
    exps = [_input_exp(a, av, device) for a, av in zip(args, avals, strict=True)]
    exps = _fit_buffer_limit(exps, store, device)
    if lazy.fuse_epilogues:  # (complex rules read the parts of an input separately)
        exps = _one_reduction(prim, exps, store, _storage_aval(out_aval), device, is_complex)
    if prim.name in _MATERIALIZE_OPERANDS:
        exps = [_materialized(e, av, device) for e, av in zip(exps, store, strict=True)]
    if is_complex:
        out = rule(exps, avals, out_aval, device=device, **params)
    else:
        out = rule(exps, avals, out_aval, **params)
    return array_mod.from_exp(out, out_aval, device)


def _storage_aval(aval: ShapedArray) -> ShapedArray:
    """The real aval kernels see: a complex array is its parts along a last axis of 2."""
    if aval.dtype.kind != "c":
        return aval
    return ShapedArray((*aval.shape, 2), dtypes.component(aval.dtype))


# Complex lowerings take the storage expressions of the inputs and return the output's (see
# array.storage); lowering_complex.py fills the table.
COMPLEX_LOWERINGS: dict[Primitive, Callable[..., Exp]] = {}
# Primitives that act on the real and imaginary parts independently (movement, sums, selection):
# on complex operands they apply to each part and the parts are recombined. The parts and the
# recombination are index rewrites, so this fuses like the real primitive.
COMPONENTWISE = frozenset({
    "neg", "add", "sub", "add_any", "select_n", "broadcast_in_dim", "reshape", "squeeze",
    "stop_gradient", "transpose", "concatenate", "slice", "pad", "rev", "dynamic_slice",
    "dynamic_update_slice", "gather", "scatter", "scatter-add", "reduce_sum", "cumsum",
    "reduce_window_sum", "window_gather", "window_scatter_add", "copy", "copy_p",
})  # fmt: skip


def _componentwise(prim: Primitive, args: Sequence[Any], avals: list[ShapedArray],
                   params: dict[str, Any]) -> Any:  # fmt: skip
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


def _one_reduction(prim: Primitive, exps: list[Exp], avals: list[ShapedArray],
                   out: ShapedArray, device: Device, none: bool = False) -> list[Exp]:  # fmt: skip
    """Keep a reduction inside an input expression only where this primitive reads it
    elementwise at the same index and nothing else brings a reduction (with `none`, nowhere):
    a kernel holds one REDUCE, and re-indexing one would recompute it per read."""
    kept = none
    out_exps = []
    for e, av in zip(exps, avals, strict=True):
        if e.info[2]:
            fusable = prim.name in ELEMENTWISE and av.shape == out.shape and not kept
            if fusable:
                kept = True
            else:
                e = lazy.load_all(lazy.schedule(e, av.size, device))
        out_exps.append(e)
    return out_exps


# Contractions read each operand element many times: computing an elementwise expression
# once into a buffer beats recomputing it inside the reduction for every output.
_MATERIALIZE_OPERANDS = frozenset({"dot_general", "conv_general_dilated"})


def _materialized(e: Exp, aval: ShapedArray, device: Device) -> Exp:
    if e.op in (Op.LOAD, Op.CONST) or not e.info[1]:
        return e
    if e.op is Op.LOAD or all(n.op in (Op.LOAD, Op.CONST, Op.IDX) or n.dtype.kind in "iu"
                              for n in e.toposort() if n.op is not Op.LOAD):  # fmt: skip
        return e  # only re-indexing (a view): nothing to recompute
    return lazy.load_all(lazy.schedule(e, aval.size, device))


def _fit_buffer_limit(exps: list[Exp], avals: list[ShapedArray], device: Device) -> list[Exp]:
    """Materialize inputs until together they read no more buffers than one kernel may (an
    input inside a reduction body could not be split later)."""
    limit = device.backend.max_args
    if limit >= (1 << 20) or sum(len(lazy._buffers(e)) for e in exps) <= limit:
        return exps  # (the sum bounds the union)
    while len(set().union(*(lazy._buffers(e) for e in exps))) > limit:
        sizes = [len(lazy._buffers(e)) for e in exps]
        k = max(range(len(exps)), key=lambda i: sizes[i])
        if sizes[k] <= 1:
            break  # each input is one buffer: the output expression is split when scheduled
        exps[k] = lazy.load_all(lazy.schedule(exps[k], avals[k].size, device))
    return exps


def register(prim: Primitive, rule: Rule) -> None:
    LOWERINGS[prim] = rule
    prim.def_impl(lambda *args, **params: apply_primitive(prim, *args, **params))


# ---- helpers ------------------------------------------------------------------------------------
def _at(x: Exp, aval: ShapedArray, out_aval: ShapedArray) -> Exp:
    """Read an operand of an elementwise op at the output index (rank-0 operands broadcast)."""
    if aval.shape == out_aval.shape:
        return x
    return view.reindex(x, aval.size, E.i32(0))


def _idx(aval: ShapedArray) -> Exp:
    return E.idx(aval.size)


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
# Primitives that read every input at the output's own index (epilogues may fuse into them).
ELEMENTWISE = frozenset(
    {*UNARY_OPS, *BINARY_OPS, *SWAPPED, "convert_element_type", "integer_pow", "select_n",
     "clamp", "add_any", "stop_gradient", "bitcast_convert_type"}
)  # fmt: skip

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
        a, b = (_at(x, av, out) for x, av in zip(ins, avals, strict=True))
        if swap:
            a, b = b, a
        if op is Op.NEXTAFTER:  # a step in the operands' own format: never widened
            return E.binary(op, a, b)
        return _widened(lambda x, y: E.binary(op, x, y), [a, b], out.dtype)

    return rule


for _name, _op in UNARY_OPS.items():
    register(lax.prims[_name], _unary_rule(_op))
for _name, _op in BINARY_OPS.items():
    register(lax.prims[_name], _binary_rule(_op))

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


register(lax.prims["erf_inv"], _erf_inv_rule)
for _name, _op in SWAPPED.items():
    register(lax.prims[_name], _binary_rule(_op, swap=True))


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
    which = _at(ins[0], avals[0], out)
    cases = [_at(c, av, out) for c, av in zip(ins[1:], avals[1:], strict=True)]
    if which.dtype is dtypes.bool_:
        return cases[0] if len(cases) == 1 else E.where(which, cases[1], cases[0])
    result = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        result = E.where(E.binary(Op.CMPEQ, which, E.const(k, which.dtype)), cases[k], result)
    return result


def _clamp(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray) -> Exp:
    lo, x, hi = (_at(e, av, out) for e, av in zip(ins, avals, strict=True))
    return _widened(lambda a, b, c: E.binary(Op.MIN, E.binary(Op.MAX, b, a), c), [lo, x, hi],
                    out.dtype)  # fmt: skip


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
    i = view.unravel(_idx(out), shape)[dimension]
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
    index = view.broadcast_index(_idx(out), avals[0].shape, shape, broadcast_dimensions)
    return view.reindex(ins[0], avals[0].size, index)


def _reshape(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, **_: Any) -> Exp:
    return ins[0]  # row-major reshape keeps the flat index (and sizes are equal)


def _transpose(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, permutation: tuple[int, ...]
) -> Exp:
    index = view.transpose_index(_idx(out), avals[0].shape, permutation)
    return view.reindex(ins[0], avals[0].size, index)


def _concatenate(
    ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, dimension: int
) -> Exp:
    o = view.unravel(_idx(out), out.shape)
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
    o = view.unravel(_idx(out), out.shape)
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
    o = view.unravel(_idx(out), out.shape)
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


def _rev(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *,
         dimensions: tuple[int, ...]) -> Exp:  # fmt: skip
    o = view.unravel(_idx(out), out.shape)
    index = [
        E.binary(Op.SUB, E.i32(d - 1), i) if a in dimensions else i
        for a, (i, d) in enumerate(zip(o, out.shape, strict=True))
    ]
    return view.reindex(ins[0], avals[0].size, view.ravel(index, out.shape))


def _clamped_starts(starts: list[Exp], start_avals: list[ShapedArray], shape: Sequence[int],
                    sizes: Sequence[int]) -> list[Exp]:  # fmt: skip
    """Scalar start indices read inside the kernel, clamped like XLA to keep slices in range."""
    out = []
    for s, av, d, n in zip(starts, start_avals, shape, sizes, strict=True):
        s = E.cast(view.reindex(s, av.size, E.i32(0)), dtypes.int32)
        s = E.binary(Op.MIN, E.binary(Op.MAX, s, E.i32(0)), E.i32(d - n))
        out.append(s)
    return out


def _dynamic_slice(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *,
                   slice_sizes: tuple[int, ...]) -> Exp:  # fmt: skip
    x_aval = avals[0]
    starts = _clamped_starts(ins[1:], avals[1:], x_aval.shape, slice_sizes)
    o = view.unravel(_idx(out), out.shape)
    index = [E.add(i, s) for i, s in zip(o, starts, strict=True)]
    return view.reindex(ins[0], x_aval.size, view.ravel(index, x_aval.shape))


def _dynamic_update_slice(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray) -> Exp:
    x_aval, u_aval = avals[0], avals[1]
    starts = _clamped_starts(ins[2:], avals[2:], x_aval.shape, u_aval.shape)
    o = view.unravel(_idx(out), out.shape)
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


def _dot_general(ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *,
                 dimension_numbers: Any, precision: Any = None,
                 preferred_element_type: Any = None, out_sharding: Any = None) -> Exp:  # fmt: skip
    (lc, rc), (lb, rb) = dimension_numbers
    la, ra = avals
    lfree = lax._dot_free(la.ndim, lc, lb)
    rfree = lax._dot_free(ra.ndim, rc, rb)
    csizes = [la.shape[i] for i in lc]
    rsize = math.prod(csizes)
    o = view.unravel(_idx(out), out.shape)
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
        index = view.reduce_index(_idx(out), E.ridx(rsize), shape, axes)
        body = view.reindex(ins[0], avals[0].size, index)
        if body.dtype in _WIDEN and op in (Op.ADD, Op.MUL):  # accumulate 16-bit floats in f32
            return E.cast(E.reduce(op, E.cast(body, dtypes.float32), rsize), body.dtype)
        return E.reduce(op, body, rsize)

    return rule


register(lax.convert_element_type_p, _convert)
register(lax.bitcast_convert_type_p, _bitcast)
register(lax.integer_pow_p, _integer_pow)
register(lax.select_n_p, _select_n)
register(lax.clamp_p, _clamp)
register(lax.iota_p, _iota)
register(lax.broadcast_in_dim_p, _broadcast_in_dim)
register(lax.reshape_p, _reshape)
register(lax.squeeze_p, _reshape)
register(lax.stop_gradient_p, _reshape)
register(lax.transpose_p, _transpose)
register(lax.concatenate_p, _concatenate)
register(lax.slice_p, _slice)
register(lax.dot_general_p, _dot_general)
register(lax.rev_p, _rev)
register(lax.dynamic_slice_p, _dynamic_slice)
register(lax.dynamic_update_slice_p, _dynamic_update_slice)
register(ad_rules.add_any_p, _binary_rule(Op.ADD))
register(lax.pad_p, _pad)
for _name, _op in _REDUCE_OPS.items():
    register(lax.prims[_name], _reduce_rule(_op))


# ---- constants --------------------------------------------------------------------------------
def _full(shape: tuple[int, ...], value: Any, dtype: DType, weak_type: bool) -> Array:
    from ..ir import scalar

    v = scalar.normalize(dtype, value)
    return array_mod.from_flat([v], shape, dtype, default_device(), weak_type)


lax._full_impl = _full


class using_device:
    """`jax.default_device(device)`: a context manager (also accepts a platform name)."""

    def __init__(self, device: Device | str | None) -> None:
        if isinstance(device, str):
            device = rt.device(device)
        self.device = device

    def __enter__(self) -> Device | None:
        if self.device is not None:
            _default_device_stack.append(self.device)
        return self.device

    def __exit__(self, *exc: Any) -> None:
        if self.device is not None:
            _default_device_stack.pop()


from ..lax import complex_lowering as lowering_complex  # noqa: E402, F401  (fills COMPLEX_LOWERINGS)
