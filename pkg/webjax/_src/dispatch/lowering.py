"""Eager dispatch: a primitive applied to concrete arrays becomes a kernel-IR expression.

The meeting point of the two stacks. `apply_primitive` is the eval-trace `impl` of every lowered
primitive: it picks the device (`devices.pick_device`), turns the operands into expressions,
applies the primitive's lowering rule, and wraps the result as a lazy `Array`. A lowering rule
maps input expressions (each over its own flat index IDX) to the output expression over the
output's IDX; movement primitives only re-index. The rules are registered from above, next to
their primitives (webjax._src.lax: lowering.py for lax.py's primitives, complex_lowering.py for
complex operands, and the routine modules for theirs).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any

from .. import config as _config
from .. import core, dtypes
from ..core import Primitive, ShapedArray
from ..ir import exp as E
from ..ir import narrow, scalar, view
from ..ir.exp import Exp
from ..ir.ops import Op
from ..runtime.backend import Device
from . import array as array_mod
from . import devices, lazy
from .array import Array

Rule = Callable[..., Exp]
LOWERINGS: dict[Primitive, Rule] = {}


def _input_exp(x: Any, aval: ShapedArray, device: Device) -> Exp:
    if isinstance(x, Array):
        e = array_mod.exp_of(x)
        if e is None:  # empty array: never read
            return E.const(0, aval.dtype)
        if x._device != device and not devices.is_constant(x):
            e = array_mod.exp_of(devices.transfer(x, device))
        assert e is not None
        return e
    return array_mod.const_exp(x, aval.dtype, aval.size)  # a Python scalar


def apply_primitive(prim: Primitive, *args: Any, **params: Any) -> Any:
    avals = [core.get_aval(a) for a in args]
    assert prim.abstract_eval is not None
    out_aval = prim.abstract_eval(*avals, **params)
    device = devices.pick_device(args)
    if out_aval.size == 0:
        return Array(out_aval, device, None)
    if not device.backend.supports_dtype(array_mod.storage(out_aval)[0]):
        raise TypeError(
            f"The {device.platform} backend does not support dtype {out_aval.dtype.name} "
            f"(needed by '{prim.name}')."
        )
    if out_aval.dtype in dtypes.NARROW or any(av.dtype in dtypes.NARROW for av in avals):
        return _apply_narrow(prim, args, avals, out_aval, params, device)
    is_complex = out_aval.dtype.kind == "c" or any(av.dtype.kind == "c" for av in avals)
    if is_complex and (by_parts := COMPONENTWISE.get(prim.name)) is not None:
        return by_parts(prim, args, avals, params)
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
    if prim.name in MATERIALIZE_OPERANDS:
        exps = [_materialized(e, av, device) for e, av in zip(exps, store, strict=True)]
    if is_complex:
        out = rule(exps, avals, out_aval, device=device, **params)
    else:
        out = rule(exps, avals, out_aval, **params)
    return array_mod.from_exp(out, out_aval, device)


# ---- ml_dtypes' narrow types --------------------------------------------------------------------
# Kernels know no narrow type: an array of one is held in its carrier type (array.storage). A
# primitive that only moves or selects values applies to the held values as they are; any other
# computes in float16/int32 (float32 for e8m0fnu; dtypes.compute_type, as XLA does) and its result
# is rounded (floats, as ml_dtypes
# converts) or wrapped (ints) back to the narrow type; a float converted to a narrow int
# saturates, as XLA's conversions do.
_NARROW_MOVES = frozenset({
    "reshape", "broadcast_in_dim", "transpose", "squeeze", "expand_dims", "slice",
    "dynamic_slice", "dynamic_update_slice", "concatenate", "pad", "rev", "gather", "select_n",
    "copy", "copy_p", "reduce_max", "reduce_min", "max", "min", "argmax", "argmin", "scatter",
    "clamp", "device_put", "optimization_barrier",
})  # fmt: skip
_NARROW_FLOATS = frozenset(d for d in dtypes.NARROW if d.kind == "f")
_SIGNED = {"uint2": dtypes.dtype("int2"), "uint4": dtypes.dtype("int4")}
# Bitwise primitives that read a signed narrow int's own bits (its int32 is sign-extended).
_NARROW_BITWISE = frozenset({"shift_right_logical", "population_count", "clz"})
# Primitives whose meaning depends on the narrow type's own bits or steps.
_NARROW_UNSUPPORTED = frozenset({"bitcast_convert_type", "nextafter", "reduce_precision"})


def _narrow_name(avals: list[ShapedArray], out: ShapedArray) -> str:
    return next(av.dtype.name for av in (*avals, out) if av.dtype in dtypes.NARROW)


def _apply_narrow(
    prim: Primitive,
    args: tuple[Any, ...],
    avals: list[ShapedArray],
    out_aval: ShapedArray,
    params: dict[str, Any],
    device: Device,
) -> Array:
    rule = LOWERINGS.get(prim)
    complex_ = any(av.dtype.kind == "c" for av in (*avals, out_aval))
    if rule is None or complex_ or prim.name in _NARROW_UNSUPPORTED:
        raise NotImplementedError(
            f"webjax does not implement '{prim.name}' for {_narrow_name(avals, out_aval)} "
            f"(ml_dtypes' narrow type; operands {', '.join(av.dtype.name for av in avals)})."
        )
    exps = [_input_exp(a, av, device) for a, av in zip(args, avals, strict=True)]
    moves = prim.name in _NARROW_MOVES

    def kernel_aval(av: ShapedArray) -> ShapedArray:
        held = dtypes.carrier(av.dtype) if moves else dtypes.compute_type(av.dtype)
        return av if held is av.dtype else ShapedArray(av.shape, held, av.weak_type)

    store = [kernel_aval(av) for av in avals]
    out_k = kernel_aval(out_aval)
    if not moves:
        exps = [e if e.dtype is av.dtype else E.cast(e, av.dtype) for e, av in zip(exps, store)]
        params = {
            k: dtypes.compute_type(v) if isinstance(v, dtypes.DType) else v
            for k, v in params.items()
        }
        if prim.name == "convert_element_type" and out_aval.dtype in _NARROW_FLOATS:
            params["new_dtype"] = dtypes.float32  # one rounding, from the value itself
            out_k = ShapedArray(out_aval.shape, dtypes.float32, out_aval.weak_type)
        if prim.name in _NARROW_BITWISE and avals[0].dtype.kind == "i":
            # the int's own bits, not the sign-extended int32's; XLA (and so JAX) counts an
            # int4's population in its sign-extended byte (int2's in its own two bits)
            bits = avals[0].dtype.bits
            if prim.name == "population_count" and bits == 4:
                bits = 8
            exps[0] = E.binary(Op.AND, exps[0], E.i32((1 << bits) - 1))
        if prim.name == "shift_right_arithmetic" and avals[0].dtype.kind == "u":
            # XLA shifts an unsigned narrow int's bits as a signed one's (sign-extended)
            exps[0] = narrow.wrap_int(exps[0], _SIGNED[avals[0].dtype.name])
    exps = _fit_buffer_limit(exps, store, device)
    if lazy.fuse_epilogues:
        exps = _one_reduction(prim, exps, store, out_k, device)
    if prim.name in MATERIALIZE_OPERANDS:
        exps = [_materialized(e, av, device) for e, av in zip(exps, store, strict=True)]
    d = out_aval.dtype
    if d in _NARROW_FLOATS and prim.name in _NARROW_SEQUENTIAL:
        out = _narrow_sequential(prim.name, exps[0], store[0], out_aval, d, params, device)
        return array_mod.from_exp(out, out_aval, device)
    if d in _NARROW_FLOATS and prim.name in _NARROW_SCANS:
        raise NotImplementedError(
            f"webjax does not implement {prim.name} for {d.name}: XLA accumulates narrow "
            "floats one element at a time, rounding each partial result"
        )
    if d.name == "float8_e8m0fnu" and prim.name in ("reduce_max", "reduce_min"):
        # XLA's initial value (-inf/+inf) is NaN in e8m0fnu, and NaN propagates
        return array_mod.from_exp(E.const(math.nan, dtypes.float32), out_aval, device)
    if prim.name == "logistic":  # XLA expands it first: 1 / (1 + exp(-x)), each op rounded
        return array_mod.from_exp(_narrow_logistic(exps[0], d), out_aval, device)
    out = rule(exps, store, out_k, **params)
    src = avals[0].dtype if avals else d
    if prim.name == "convert_element_type" and src in _NARROW_FLOATS and d.kind in "iu":
        # XLA saturates where the value reaches the int's bounds rounded to the narrow type
        # (so float4_e2m1fn's 6.0 becomes int8's 127)
        lo, hi = dtypes.iinfo_bounds(d)
        fmt = dtypes.NARROW_FLOATS[src.name]
        x, kt = exps[0], out.dtype
        at_hi = E.binary(Op.CMPLE, E.const(scalar.narrow_float(float(hi), fmt), x.dtype), x)
        at_lo = E.binary(Op.CMPLE, x, E.const(scalar.narrow_float(float(lo), fmt), x.dtype))
        out = E.where(at_hi, E.const(hi, kt), E.where(at_lo, E.const(lo, kt), out))
    if prim.name == "clz" and d in dtypes.NARROW:  # leading zeros within the narrow width
        out = E.binary(Op.SUB, out, E.i32(32 - d.bits))
    if not moves and d in dtypes.NARROW:
        if prim.name == "convert_element_type" and d.kind in "iu" and src.kind == "f":
            out = E.cast(narrow.clamp_int(out, d), dtypes.carrier(d))  # saturates
        else:
            out = narrow.narrow(out, d)
    return array_mod.from_exp(out, out_aval, device)


# Sums and products of narrow floats: XLA's CPU loop adds one element at a time, each partial
# result rounded to the narrow type (from its initial value, 0 or 1: NaN in e8m0fnu), so
# webjax does the same, in row-major order over the reduced axes, a kernel every few steps.
# Past 32 elements XLA's order is another (a sum of 33 float8_e4m3fn ones is 32, not 16):
# webjax raises there rather than round differently.
_NARROW_SEQUENTIAL = {"reduce_sum": (Op.ADD, 0.0), "reduce_prod": (Op.MUL, 1.0)}
_NARROW_SCANS = frozenset({"cumsum", "cumprod", "cumlogsumexp"})
_SEQUENTIAL_STEPS = 8  # steps fused per kernel
_SEQUENTIAL_MAX = 32


def _narrow_sequential(
    name: str,
    x: Exp,
    aval: ShapedArray,
    out: ShapedArray,
    d: dtypes.DType,
    params: dict[str, Any],
    device: Device,
) -> Exp:
    op, init = _NARROW_SEQUENTIAL[name]
    axes = tuple(params["axes"])
    f32, ct = dtypes.float32, dtypes.compute_type(d)
    n = math.prod(aval.shape[a] for a in axes)
    if n > _SEQUENTIAL_MAX:
        raise NotImplementedError(
            f"webjax does not implement {name} of more than {_SEQUENTIAL_MAX} {d.name} elements "
            f"(here {n}): XLA's CPU rounds each partial result in an order of its own past "
            f"that; sum in float32 instead (x.astype(jnp.float32).sum(), or dtype=jnp.float32)"
        )
    acc = narrow.narrow(E.const(init, ct), d)
    for k in range(n):
        index = view.reduce_index(E.idx(out.size), E.i32(k), aval.shape, axes)
        elem = E.cast(view.reindex(x, aval.size, index), f32)
        acc = narrow.narrow(E.cast(E.binary(op, E.cast(acc, f32), elem), ct), d)
        if k % _SEQUENTIAL_STEPS == _SEQUENTIAL_STEPS - 1 and k < n - 1:
            acc = lazy.load_all(lazy.schedule(acc, out.size, device))
    return acc


def _narrow_logistic(x: Exp, d: dtypes.DType) -> Exp:
    f32, ct = dtypes.float32, dtypes.compute_type(d)

    def step(op: Op, *args: Exp) -> Exp:  # one op of the compute type, rounded to `d`
        wide = [E.cast(a, f32) for a in args]
        r = E.unary(op, *wide) if len(wide) == 1 else E.binary(op, *wide)
        return narrow.narrow(E.cast(r, ct), d)

    one = E.const(1.0, f32)
    return step(Op.DIV, one, step(Op.ADD, one, step(Op.EXP, step(Op.NEG, x))))


def _storage_aval(aval: ShapedArray) -> ShapedArray:
    """The real aval kernels see: a complex array is its parts along a last axis of 2."""
    if aval.dtype.kind != "c":
        return aval
    return ShapedArray((*aval.shape, 2), dtypes.component(aval.dtype))


# Complex operands. Kernels only know real types (array.storage): a rule in COMPLEX_LOWERINGS maps
# the inputs' storage expressions to the output's; a primitive named in COMPONENTWISE acts on the
# real and imaginary parts independently, and its entry applies it once per part (the parts and
# their recombination are index rewrites, so this fuses like the real primitive). Both tables are
# filled by webjax._src.lax.complex_lowering.
COMPLEX_LOWERINGS: dict[Primitive, Callable[..., Exp]] = {}
COMPONENTWISE: dict[str, Callable[..., Any]] = {}
# Primitives that read every input at the output's own index (epilogues may fuse into them):
# `register(..., elementwise=True)` adds them.
ELEMENTWISE: set[str] = set()
# Movement ops that read each input element exactly once (a permutation of the flat index): a
# reduction re-indexed through one is computed once per output all the same, so an epilogue
# after one fuses too (the transpose after a gradient's dot_general, XLA's output layout).
PERMUTATIONS = frozenset({"transpose", "reshape", "squeeze"})


def _one_reduction(
    prim: Primitive,
    exps: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    device: Device,
    none: bool = False,
) -> list[Exp]:
    """Keep a reduction inside an input expression only where this primitive reads it
    elementwise at the same index and nothing else brings a reduction (with `none`, nowhere):
    a kernel holds one REDUCE, and re-indexing one would recompute it per read."""
    kept = none
    out_exps = []
    for e, av in zip(exps, avals, strict=True):
        if e.info[2]:
            same_index = prim.name in ELEMENTWISE and av.shape == out.shape
            fusable = (same_index or prim.name in PERMUTATIONS) and not kept
            if fusable:
                kept = True
            else:
                e = lazy.load_all(lazy.schedule(e, av.size, device))
        out_exps.append(e)
    return out_exps


# Contractions (and windowed reductions) read each operand element many times: computing an
# elementwise expression once into a buffer beats recomputing it inside the reduction for every
# output.
MATERIALIZE_OPERANDS = frozenset(
    {
        "dot_general",
        "conv_general_dilated",
        "reduce_window_max",
        "reduce_window_min",
        "reduce_window_sum",
    }
)


def is_view(e: Exp) -> bool:
    """Whether `e` only re-indexes buffers (or reads none): nothing in it to recompute."""
    if e.op in (Op.LOAD, Op.CONST) or not e.info[1]:
        return True
    return all(
        n.op in (Op.LOAD, Op.CONST, Op.IDX) or n.dtype.kind in "iu"
        for n in e.toposort()
        if n.op is not Op.LOAD
    )


def _materialized(e: Exp, aval: ShapedArray, device: Device) -> Exp:
    if e.op is Op.LOAD and not _affine_view(e, aval):
        # a view whose reads are not affine in the operand's coordinates (a transpose merged
        # into a reshape, say): the tiled matrix products need affine operands, so copy it
        return lazy.load_all(lazy.schedule(e, aval.size, device))
    if is_view(e):
        return e
    return lazy.load_all(lazy.schedule(e, aval.size, device))


def _affine_view(load: Exp, aval: ShapedArray) -> bool:
    """Whether the buffer index a LOAD reads at is affine in the coordinates of `aval`'s shape
    (base + sum of coordinate * stride), checked at the corners and the middle: a view that
    fails (a reshape of a transpose that splits a dimension) is not one strided matrix."""
    shape = aval.shape
    if len(shape) == 0 or aval.size < 2:
        return True
    index = load.src[0]
    known = _AFFINE_VIEWS.setdefault(index, {})  # interned: the same view, the same node
    if shape not in known:
        known[shape] = _affine_in(index, aval)
    return known[shape]


# index expression -> {operand shape: affine?}; weak, so the cache keeps no expression alive
_AFFINE_VIEWS: weakref.WeakKeyDictionary[Exp, dict[tuple[int, ...], bool]] = (
    weakref.WeakKeyDictionary()
)


def _affine_in(index: Exp, aval: ShapedArray) -> bool:
    shape = aval.shape

    def at(coord: list[int]) -> int | None:
        flat = sum(c * s for c, s in zip(coord, view.strides(shape), strict=True))
        r = E.replace(index, {E.idx(aval.size): E.i32(flat)})
        return int(r.arg) if r.is_const else None

    origin = at([0] * len(shape))
    if origin is None:
        return True  # reads that depend on more than the index: not a plain view
    steps = []
    for k, d in enumerate(shape):
        unit = [0] * len(shape)
        unit[k] = 1 if d > 1 else 0
        v = at(unit)
        if v is None:
            return True
        steps.append(v - origin)
    probes = [
        [d - 1 for d in shape],
        [d // 2 for d in shape],
        [(d - 1) * (k % 2) for k, d in enumerate(shape)],
        [(d - 1) * ((k + 1) % 2) for k, d in enumerate(shape)],
    ]
    for coord in probes:
        want = origin + sum(c * s for c, s in zip(coord, steps, strict=True))
        if at(coord) != want:
            return False
    return True


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


# ---- jax_debug_nans / jax_debug_infs ------------------------------------------------------------
def special_value(outs: list[Any]) -> str | None:
    """'nan' or 'inf' when an output array holds one the debug flags look for, else None
    (this reads the values: only done while a flag is on)."""
    nans, infs = _config.debug_nans.value, _config.debug_infs.value
    for o in outs:
        if not isinstance(o, Array) or o.dtype.kind not in "fc" or o._deleted:
            continue
        vals = o._flat_values()
        if o.dtype.kind == "c":
            vals = [p for v in vals for p in (v.real, v.imag)]
        if nans and any(v != v for v in vals):
            return "nan"
        if infs and any(v in (math.inf, -math.inf) for v in vals):
            return "inf"
    return None


def _check_outputs(prim: Primitive, out: Any) -> None:
    # programs being compiled hold no values; `jit` checks its own outputs (and re-runs op
    # by op to find the primitive)
    if lazy.fuse_epilogues or prim.name == "jit":
        return
    kind = special_value(list(out) if prim.multiple_results else [out])
    if kind is not None:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {prim.name}")


core.check_outputs[0] = _check_outputs


def register(prim: Primitive, rule: Rule, *, elementwise: bool = False) -> None:
    """Lower `prim` with `rule` and make eager dispatch its implementation."""
    LOWERINGS[prim] = rule
    if elementwise:
        ELEMENTWISE.add(prim.name)
    prim.def_impl(lambda *args, **params: apply_primitive(prim, *args, **params))


# ---- helpers ------------------------------------------------------------------------------------
def _at(x: Exp, aval: ShapedArray, out_aval: ShapedArray) -> Exp:
    """Read an operand of an elementwise op at the output index (rank-0 operands broadcast)."""
    if aval.shape == out_aval.shape:
        return x
    return view.reindex(x, aval.size, E.i32(0))


def _idx(aval: ShapedArray) -> Exp:
    return E.idx(aval.size)
