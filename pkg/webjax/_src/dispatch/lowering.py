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
from ..ir import view
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
    if e.op is Op.LOAD and not _affine_view(e, aval):
        # a view whose reads are not affine in the operand's coordinates (a transpose merged
        # into a reshape, say): the tiled matrix products need affine operands, so copy it
        return lazy.load_all(lazy.schedule(e, aval.size, device))
    if e.op in (Op.LOAD, Op.CONST) or not e.info[1]:
        return e
    if e.op is Op.LOAD or all(
        n.op in (Op.LOAD, Op.CONST, Op.IDX) or n.dtype.kind in "iu"
        for n in e.toposort()
        if n.op is not Op.LOAD
    ):
        return e  # only re-indexing (a view): nothing to recompute
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
