"""Slicing: slices along one axis and dynamic slices (on lax.py's slice and dynamic_slice
primitives), gather and scatter with XLA's general dimension numbers, and their rules.

Lowering: a gather is a re-indexing (each output element reads the operand at a position
computed from the index array, inside the same kernel). A scatter is, for each operand
element, a reduction over all update positions whose target it is: O(operand x updates) work
in one fused kernel, correct for duplicate indices; replacement (`scatter`) picks the last
update in row-major order. Hand-written routines can replace these for large problems.
"""

from __future__ import annotations

import builtins
import enum
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .. import core, dtypes
from ..core import ShapedArray
from ..dispatch import array as array_mod
from ..dispatch import devices, lazy, lowering
from ..dispatch.array import Array
from ..interpreters import ad, batching
from ..interpreters.ad import Zero, is_undefined
from ..ir import exp as E
from ..ir import scalar, view
from ..ir.exp import Exp
from ..ir.ops import Op
from ..jit import jit
from . import bitonic, control_flow, lax
from .lax import _arr, _aval, _axis


class GatherScatterMode(enum.Enum):
    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2
    ONE_HOT = 3

    @staticmethod
    def from_any(s: Any) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        if s is None or s == "clip":
            return GatherScatterMode.CLIP if s == "clip" else GatherScatterMode.FILL_OR_DROP
        if s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f"Unknown gather mode {s!r}")


class GatherDimensionNumbers(NamedTuple):
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


def _tuple(x: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in x)


# ---- slices along one axis, dynamic slices with negative indices --------------------------------
def slice_in_dim(
    operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0
) -> Any:
    """operand[..., start:limit:stride, ...] along `axis` (negative indices count from the end)."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    n = shape[axis]
    lo = 0 if start_index is None else int(start_index)
    hi = n if limit_index is None else int(limit_index)
    lo = lo + n if lo < 0 else lo
    hi = hi + n if hi < 0 else hi
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = lo, hi, int(stride)
    return lax.slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """operand[..., index, ...] along `axis` for a static index (negative counts from the end),
    kept as a size-1 axis by default, as JAX's lax.index_in_dim."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    n = shape[axis]
    i = operator.index(index)
    i = i + n if i < 0 else i
    if not 0 <= i < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    return lax.index_in_dim(operand, i, axis, keepdims)


def _wrap_index(index: Any, size: int, allow_negative: bool) -> Any:
    """An int32 scalar index; negative ones count from the end when `allow_negative`."""
    if isinstance(index, builtins.bool):
        index = int(index)
    if isinstance(index, int):
        return index + size if allow_negative and index < 0 else index
    index = _arr(index)
    aval = _aval(index)
    if aval.shape:
        raise TypeError(f"index must be a scalar, got shape {aval.shape}")
    if aval.dtype.kind not in "iu":
        raise TypeError(f"index must be an integer, got dtype {aval.dtype.name}")
    if not allow_negative or aval.dtype.kind == "u":
        return index
    return lax.select(
        lax.lt(index, lax.full((), 0, aval.dtype)),
        lax.add(index, lax.full((), size, aval.dtype)),
        index,
    )


def _starts(
    operand_shape: tuple[int, ...], start_indices: Sequence[Any], allow_negative: Any
) -> list[Any]:
    if hasattr(start_indices, "shape") and not isinstance(start_indices, (list, tuple)):
        arr = _arr(start_indices)
        if _aval(arr).ndim != 1:
            raise TypeError("start_indices must be a sequence or a rank-1 array")
        start_indices = [lax.index_in_dim(arr, i) for i in range(_aval(arr).shape[0])]
    if len(start_indices) != len(operand_shape):
        raise TypeError(
            f"dynamic_slice start_indices must have one entry per operand dimension; got "
            f"{len(start_indices)} for operand shape {operand_shape}"
        )
    flags = (
        [bool(allow_negative)] * len(operand_shape)
        if isinstance(allow_negative, builtins.bool)
        else [bool(f) for f in allow_negative]
    )
    return [_wrap_index(s, n, f) for s, n, f in zip(start_indices, operand_shape, flags)]


def dynamic_slice(
    operand: Any,
    start_indices: Any,
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Any:
    """operand[start:start + size] per axis for traced starts (clamped into range, as XLA)."""
    operand = _arr(operand)
    starts = _starts(_aval(operand).shape, start_indices, allow_negative_indices)
    return lax.dynamic_slice(operand, starts, slice_sizes)


def dynamic_update_slice(
    operand: Any,
    update: Any,
    start_indices: Any,
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Any:
    """`operand` with `update` written at the (clamped) start indices."""
    operand = _arr(operand)
    starts = _starts(_aval(operand).shape, start_indices, allow_negative_indices)
    return lax.dynamic_update_slice(operand, _arr(update), starts)


def dynamic_slice_in_dim(
    operand: Any,
    start_index: Any,
    slice_size: int,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """operand[..., start:start + slice_size, ...] along `axis` for a traced start."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    starts: list[Any] = [0] * len(shape)
    sizes = list(shape)
    starts[axis] = _wrap_index(start_index, shape[axis], allow_negative_indices)
    sizes[axis] = int(slice_size)
    return lax.dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(
    operand: Any,
    index: Any,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """operand[..., index, ...] along `axis` for a traced index (kept as size 1 by default)."""
    operand = _arr(operand)
    axis = _axis(axis, _aval(operand).ndim)
    out = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    return out if keepdims else lax.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(
    operand: Any,
    update: Any,
    start_index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """`operand` with `update` written from `start_index` along `axis`."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    starts: list[Any] = [0] * len(shape)
    starts[axis] = _wrap_index(start_index, shape[axis], allow_negative_indices)
    return lax.dynamic_update_slice(operand, _arr(update), starts)


def dynamic_update_index_in_dim(
    operand: Any,
    update: Any,
    index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """`operand` with `update` (of rank ndim or ndim - 1) written at `index` along `axis`."""
    operand = _arr(operand)
    update = _arr(update)
    nd = _aval(operand).ndim
    axis = _axis(axis, nd)
    if _aval(update).ndim == nd - 1:
        update = lax.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """Consecutive pieces of `operand` along `axis` with the given sizes."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {shape[axis]} of the operand "
            f"shape {shape} at axis {axis}"
        )
    out, lo = [], 0
    for s in sizes:
        out.append(slice_in_dim(operand, lo, lo + s, 1, axis))
        lo += s
    return out


# ---- gather ------------------------------------------------------------------------------------
gather_p = lax._prim("gather")


def _gather_shape(
    operand: ShapedArray,
    indices: ShapedArray,
    dn: GatherDimensionNumbers,
    slice_sizes: tuple[int, ...],
) -> tuple[int, ...]:
    batch_shape = indices.shape[:-1]
    skip = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sizes = [s for d, s in enumerate(slice_sizes) if d not in skip]
    rank = len(batch_shape) + len(offset_sizes)
    out, b, o = [], iter(batch_shape), iter(offset_sizes)
    for i in range(rank):
        out.append(next(o) if i in dn.offset_dims else next(b))
    return tuple(out)


@gather_p.def_abstract_eval
def _gather_abstract(
    operand: ShapedArray,
    indices: ShapedArray,
    *,
    dimension_numbers: Any,
    slice_sizes: tuple[int, ...],
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: Any,
    fill_value: Any,
) -> ShapedArray:
    dn = dimension_numbers
    if indices.dtype.kind not in "iu":
        raise TypeError(f"gather indices must be of integer type, got {indices.dtype.name}")
    if not indices.shape or indices.shape[-1] != len(dn.start_index_map):
        raise TypeError(
            "Gather op has index vector of size "
            f"{indices.shape[-1] if indices.shape else 0} but start_index_map has size "
            f"{len(dn.start_index_map)}"
        )
    if len(slice_sizes) != operand.ndim:
        raise TypeError(
            f"Gather op must have one slice size for every input dimension; got "
            f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim}"
        )
    for d, s in enumerate(slice_sizes):
        if not 0 <= s <= operand.shape[d]:
            raise TypeError(
                f"Slice size at index {d} in gather op is out of range, must be within [0, "
                f"{operand.shape[d]} + 1), got {s}."
            )
    for d in dn.collapsed_slice_dims:
        if slice_sizes[d] > 1:
            raise TypeError(
                f"Gather op can only collapse slice dims with bound 1, but bound is "
                f"{slice_sizes[d]} for index {d} at position 0."
            )
    return ShapedArray(
        _gather_shape(operand, indices, dn, slice_sizes), operand.dtype, operand.weak_type
    )


def gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: Any = None,
    fill_value: Any = None,
) -> Any:
    dn = GatherDimensionNumbers(*[_tuple(f) for f in dimension_numbers])
    return gather_p.bind(
        operand,
        start_indices,
        dimension_numbers=dn,
        slice_sizes=_tuple(slice_sizes),
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=GatherScatterMode.from_any(mode),
        fill_value=fill_value,
    )


def _fill(dtype: dtypes.DType, fill_value: Any) -> Any:
    if fill_value is not None:
        return fill_value
    if dtype.kind == "f":
        return math.nan
    if dtype.kind == "b":
        return True
    lo, hi = dtypes.iinfo_bounds(dtype)
    return lo if dtype.kind == "i" else hi


def _gather_lowering(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    dimension_numbers: Any,
    slice_sizes: tuple[int, ...],
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: Any,
    fill_value: Any,
) -> Exp:
    dn = dimension_numbers
    op_aval, idx_aval = avals
    o = view.unravel(E.idx(out.size), out.shape)
    batch = [o[i] for i in range(out.ndim) if i not in dn.offset_dims]
    offsets = iter(o[i] for i in dn.offset_dims)
    nvec = idx_aval.shape[-1]
    valid: Exp | None = None
    pos: list[Exp] = []
    starts: dict[int, Exp] = {}
    for k, d in enumerate(dn.start_index_map):
        ix = view.reindex(ins[1], idx_aval.size, view.ravel([*batch, E.i32(k)], idx_aval.shape))
        s = E.cast(ix, dtypes.int32)
        hi = op_aval.shape[d] - slice_sizes[d]
        if mode is GatherScatterMode.FILL_OR_DROP:
            ok = E.binary(Op.AND, E.binary(Op.CMPLE, E.i32(0), s), E.binary(Op.CMPLE, s, E.i32(hi)))
            valid = ok if valid is None else E.binary(Op.AND, valid, ok)
        starts[d] = E.binary(Op.MIN, E.binary(Op.MAX, s, E.i32(0)), E.i32(hi))
    del nvec
    bmap = dict(zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True))
    for d in range(op_aval.ndim):
        if d in bmap:
            pos.append(batch[bmap[d]])
            continue
        base = starts.get(d, E.i32(0))
        off = E.i32(0) if d in dn.collapsed_slice_dims else next(offsets)
        pos.append(E.add(base, off))
    value = view.reindex(ins[0], op_aval.size, view.ravel(pos, op_aval.shape))
    if valid is not None:
        value = E.where(valid, value, E.const(_fill(out.dtype, fill_value), out.dtype))
    return value


lowering.register(gather_p, _gather_lowering)


# ---- scatter -----------------------------------------------------------------------------------
SCATTERS = ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max")
scatter_prims = {name: lax._prim(name) for name in SCATTERS}
scatter_p = scatter_prims["scatter"]
scatter_add_p = scatter_prims["scatter-add"]
scatter_mul_p = scatter_prims["scatter-mul"]
scatter_min_p = scatter_prims["scatter-min"]
scatter_max_p = scatter_prims["scatter-max"]
_COMBINE = {
    "scatter-add": Op.ADD,
    "scatter-mul": Op.MUL,
    "scatter-min": Op.MIN,
    "scatter-max": Op.MAX,
}


def _scatter_abstract(
    operand: ShapedArray,
    indices: ShapedArray,
    updates: ShapedArray,
    *,
    dimension_numbers: Any,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: Any,
    update_jaxpr: Any = None,
    update_consts: Any = None,
) -> ShapedArray:
    dn = dimension_numbers
    if indices.dtype.kind not in "iu":
        raise TypeError(f"scatter indices must be of integer type, got {indices.dtype.name}")
    if updates.dtype is not operand.dtype:
        raise TypeError(
            f"scatter updates must have the operand's dtype, got {updates.dtype.name} and "
            f"{operand.dtype.name}"
        )
    if not indices.shape or indices.shape[-1] != len(dn.scatter_dims_to_operand_dims):
        raise TypeError("scatter index vector size must match scatter_dims_to_operand_dims")
    n_scatter = len(indices.shape) - 1
    if updates.ndim != n_scatter + len(dn.update_window_dims):
        raise TypeError(
            f"Updates tensor must be of rank {n_scatter + len(dn.update_window_dims)}; got "
            f"{updates.ndim}."
        )
    return operand


def _arith_scatter_abstract(op: str) -> Any:
    def rule(operand: ShapedArray, *args: ShapedArray, **params: Any) -> ShapedArray:
        if operand.dtype.kind == "b":
            raise TypeError(
                f"{op} does not accept dtype bool at position 0. Accepted dtypes at position 0 "
                "are subtypes of integer, floating, complexfloating."
            )
        return _scatter_abstract(operand, *args, **params)

    return rule


for _name, _p in scatter_prims.items():
    _arith = {"scatter-add": "add", "scatter-mul": "mul"}.get(_name)
    _p.def_abstract_eval(_scatter_abstract if _arith is None else _arith_scatter_abstract(_arith))


def _scatter_bind(
    p: core.Primitive,
    operand: Any,
    indices: Any,
    updates: Any,
    dn: Any,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: Any,
) -> Any:
    dn = ScatterDimensionNumbers(*[_tuple(f) for f in dn])
    return p.bind(
        operand,
        indices,
        updates,
        dimension_numbers=dn,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=GatherScatterMode.from_any(mode),
        update_jaxpr=None,
        update_consts=(),
    )


def _make_scatter(p: core.Primitive) -> Any:
    def fn(
        operand: Any,
        scatter_indices: Any,
        updates: Any,
        dimension_numbers: ScatterDimensionNumbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
    ) -> Any:
        return _scatter_bind(
            p,
            operand,
            scatter_indices,
            updates,
            dimension_numbers,
            indices_are_sorted,
            unique_indices,
            mode,
        )

    fn.__name__ = p.name.replace("-", "_")
    return fn


scatter = _make_scatter(scatter_p)
scatter_add = _make_scatter(scatter_add_p)
scatter_mul = _make_scatter(scatter_mul_p)
scatter_min = _make_scatter(scatter_min_p)
scatter_max = _make_scatter(scatter_max_p)


def scatter_sub(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    """`operand` with `updates` subtracted at the scattered indices (scatter-add of -updates)."""
    return scatter_add(
        operand,
        scatter_indices,
        lax.neg(_arr(updates)),
        dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )


def scatter_apply(
    operand: Any,
    scatter_indices: Any,
    func: Callable[[Any], Any],
    dimension_numbers: Any,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    """`operand` with the elementwise `func` applied at the scattered indices (once per time an
    index is hit, as XLA's scatter applies it per update)."""
    operand = _arr(operand)
    aval = _aval(operand)
    i32 = dtypes.int32
    hits = scatter_add(
        lax.full(aval.shape, 0, i32),
        scatter_indices,
        lax.full(tuple(update_shape), 1, i32),
        dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )
    zero = lax.full(aval.shape, 0, i32)
    once = lax.select(lax.gt(hits, zero), func(operand), operand)
    if unique_indices:
        return once
    left = lax.sub(hits, lax.full(aval.shape, 1, i32))

    def cond(state: Any) -> Any:
        k, _ = state
        nd = _aval(k).ndim
        return lax.reduce_or(lax.gt(k, zero), tuple(range(nd))) if nd else lax.gt(k, zero)

    def body(state: Any) -> Any:
        k, x = state
        more = lax.gt(k, zero)
        return lax.sub(k, lax.convert_element_type(more, i32)), lax.select(more, func(x), x)

    return control_flow.while_loop(cond, body, (left, once))[1]


def _scatter_targets(
    ins: list[Exp], avals: list[ShapedArray], dn: ScatterDimensionNumbers, mode: Any, r: Exp
) -> tuple[list[Exp], Exp | None]:
    """For update element r: the operand multi-index it lands on, and whether it is in bounds
    (None: always; out-of-bounds updates are dropped unless the mode clips)."""
    op_aval, idx_aval, upd_aval = avals
    u = view.unravel(r, upd_aval.shape)
    scatter_pos = [u[i] for i in range(upd_aval.ndim) if i not in dn.update_window_dims]
    window_pos = [u[i] for i in dn.update_window_dims]
    starts: dict[int, Exp] = {}
    in_bounds: Exp | None = None
    window_sizes = [upd_aval.shape[i] for i in dn.update_window_dims]
    skip = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_operand_dims = [d for d in range(op_aval.ndim) if d not in skip]
    wsize = dict(zip(window_operand_dims, window_sizes, strict=True))
    for k, d in enumerate(dn.scatter_dims_to_operand_dims):
        ix = view.reindex(
            ins[1], idx_aval.size, view.ravel([*scatter_pos, E.i32(k)], idx_aval.shape)
        )
        s = E.cast(ix, dtypes.int32)
        hi = op_aval.shape[d] - wsize.get(d, 1)
        if mode is GatherScatterMode.CLIP:
            s = E.binary(Op.MIN, E.binary(Op.MAX, s, E.i32(0)), E.i32(hi))
        else:  # out-of-bounds updates are dropped
            ok = E.binary(Op.AND, E.binary(Op.CMPLE, E.i32(0), s), E.binary(Op.CMPLE, s, E.i32(hi)))
            in_bounds = ok if in_bounds is None else E.binary(Op.AND, in_bounds, ok)
        starts[d] = s
    bmap = dict(zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, strict=True))
    w_it = iter(window_pos)
    targets = []
    for d in range(op_aval.ndim):
        if d in bmap:
            targets.append(scatter_pos[bmap[d]])
        elif d in dn.inserted_window_dims:
            targets.append(starts.get(d, E.i32(0)))
        else:
            targets.append(E.add(starts.get(d, E.i32(0)), next(w_it)))
    return targets, in_bounds


def _scatter_match(
    ins: list[Exp],
    avals: list[ShapedArray],
    dn: ScatterDimensionNumbers,
    mode: Any,
    r: Exp,
    rsize: int,
) -> tuple[Exp, Exp]:
    """For operand element IDX and update element r: (does r land on IDX?, update value)."""
    op_aval, _, upd_aval = avals
    p = view.unravel(E.idx(op_aval.size), op_aval.shape)
    targets, in_bounds = _scatter_targets(ins, avals, dn, mode, r)
    match: Exp = E.const(True, dtypes.bool_) if in_bounds is None else in_bounds
    for d in range(op_aval.ndim):
        match = E.binary(Op.AND, match, E.binary(Op.CMPEQ, p[d], targets[d]))
    upd = view.reindex(ins[2], upd_aval.size, r)
    return match, upd


def _scatter_combine_lowering(name: str) -> Any:
    combine = _COMBINE[name]

    def rule(
        ins: list[Exp],
        avals: list[ShapedArray],
        out: ShapedArray,
        *,
        dimension_numbers: Any,
        mode: Any,
        **_: Any,
    ) -> Exp:
        n = avals[2].size
        r = E.ridx(n)
        match, upd = _scatter_match(ins, avals, dimension_numbers, mode, r, n)
        ident = E.const(scalar.identity(combine, out.dtype), out.dtype)
        body = E.where(match, upd, ident)
        return E.binary(combine, ins[0], E.reduce(combine, body, n))

    return rule


for _name in _COMBINE:
    lowering.register(scatter_prims[_name], _scatter_combine_lowering(_name))


def _scatter_winner(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    dimension_numbers: Any,
    mode: Any,
    **_: Any,
) -> Exp:
    """scatter (replace): the last matching update wins; -1 keeps the operand value."""
    n = avals[2].size
    r = E.ridx(n)
    match, _upd = _scatter_match(ins, avals, dimension_numbers, mode, r, n)
    return E.reduce(Op.MAX, E.where(match, r, E.i32(-1)), n)


def _scatter_impl(operand: Any, indices: Any, updates: Any, **params: Any) -> Any:
    avals = [core.get_aval(x) for x in (operand, indices, updates)]
    out = avals[0]
    device = devices.pick_device([operand, indices, updates])
    if out.size == 0:
        return Array(out, device, None)
    exps = [
        lowering._input_exp(x, a, device)
        for x, a in zip((operand, indices, updates), avals, strict=True)
    ]
    win_aval = ShapedArray(out.shape, dtypes.int32)
    winner = array_mod.from_exp(_scatter_winner(exps, avals, win_aval, **params), win_aval, device)
    w = lowering._input_exp(winner, win_aval, device)
    if avals[2].size == 0:
        return operand
    upd = view.reindex(exps[2], avals[2].size, E.binary(Op.MAX, w, E.i32(0)))
    value = E.where(E.binary(Op.CMPLE, E.i32(0), w), upd, exps[0])
    return array_mod.from_exp(value, out, device)


scatter_p.def_impl(_scatter_impl)


# ---- sorted scatters (many updates) ------------------------------------------------------------
# A scatter kernel reduces over every update for every operand element: O(operand x updates).
# Past this much work the updates are sorted by target instead (the bitonic network), combined
# per target with a segmented scan (log2(updates) passes), and each operand element finds its
# segment's end by binary search: O(updates log^2 updates + operand log updates).
SORTED_SCATTER_MIN_WORK = 1 << 22


def _scatter_sorted(
    name: str,
    exps: list[Exp],
    avals: list[ShapedArray],
    device: Any,
    dimension_numbers: Any,
    mode: Any,
) -> Exp:
    op_aval, _, upd_aval = avals
    size, n = op_aval.size, upd_aval.size
    r = E.idx(n)
    targets, in_bounds = _scatter_targets(exps, avals, dimension_numbers, mode, r)
    flat = view.ravel(targets, op_aval.shape)
    if in_bounds is not None:
        flat = E.where(in_bounds, flat, E.i32(size))  # dropped: past every operand element
    n_aval = ShapedArray((n,), dtypes.int32)

    def buffer(e: Exp, m: int = n) -> Exp:
        return lazy.load_all(lazy.as_buffer(e, m, device))

    src_b, big = bitonic.bitonic_source([flat], n_aval, 0, device)
    src, _ = bitonic.bitonic_first(src_b, n_aval, 0, big, n)
    src = buffer(src)  # update positions, sorted by target (stable)
    tgt = buffer(view.reindex(flat, n, src))  # their targets, ascending
    i = E.idx(size)
    pos = E.i32(0)  # #{j : tgt[j] <= i}, by binary search
    step = 1 << (n.bit_length() - 1)
    while step:
        cand = E.add(pos, step)
        at = E.binary(Op.MIN, E.add(cand, -1), E.i32(n - 1))
        ok = E.binary(
            Op.AND,
            E.binary(Op.CMPLE, cand, E.i32(n)),
            E.binary(Op.CMPLE, view.reindex(tgt, n, at), i),
        )
        pos = E.where(ok, cand, pos)
        step //= 2
    last = buffer(E.add(pos, -1), size)  # the segment's last sorted position, or -1
    safe = E.binary(Op.MAX, last, E.i32(0))
    has = E.binary(
        Op.AND,
        E.binary(Op.CMPLE, E.i32(0), last),
        E.binary(Op.CMPEQ, view.reindex(tgt, n, safe), i),
    )
    upd = view.reindex(exps[2], n, src)
    if name == "scatter":
        return E.where(has, view.reindex(upd, n, safe), exps[0])
    combine = _COMBINE[name]
    acc = buffer(upd)
    d = 1
    while d < n:  # segmented inclusive scan over equal targets, earlier updates first
        back = E.binary(Op.MAX, E.add(r, -d), E.i32(0))
        same = E.binary(
            Op.AND,
            E.binary(Op.CMPLE, E.i32(d), r),
            E.binary(Op.CMPEQ, view.reindex(tgt, n, back), tgt),
        )
        acc = buffer(E.where(same, E.binary(combine, view.reindex(acc, n, back), acc), acc))
        d *= 2
    return E.where(has, E.binary(combine, exps[0], view.reindex(acc, n, safe)), exps[0])


def _scatter_any_impl(name: str) -> Any:
    def impl(operand: Any, indices: Any, updates: Any, **params: Any) -> Any:
        avals = [core.get_aval(x) for x in (operand, indices, updates)]
        out, n = avals[0], avals[2].size
        if out.size * n < SORTED_SCATTER_MIN_WORK or n < 2 or out.size >= 2**31 - 1:
            small = _small_impl[name]
            assert small is not None
            return small(operand, indices, updates, **params)
        if not lazy.fuse_epilogues:  # eager: run the passes as one cached program
            return _sorted_program(operand, indices, updates, name=name, **params)
        device = devices.pick_device([operand, indices, updates])
        exps = [
            lowering._input_exp(x, a, device)
            for x, a in zip((operand, indices, updates), avals, strict=True)
        ]
        value = _scatter_sorted(
            name, exps, avals, device, params["dimension_numbers"], params["mode"]
        )
        return array_mod.from_exp(value, out, device)

    return impl


def _sorted_program_fn(
    operand: Any, indices: Any, updates: Any, *, name: str, **params: Any
) -> Any:
    return scatter_prims[name].bind(operand, indices, updates, **params)


_sorted_program = jit(
    _sorted_program_fn,
    static_argnames=(
        "name",
        "dimension_numbers",
        "indices_are_sorted",
        "unique_indices",
        "mode",
        "update_jaxpr",
        "update_consts",
    ),
)
_small_impl = {name: scatter_prims[name].impl for name in SCATTERS}
for _name in SCATTERS:
    scatter_prims[_name].def_impl(_scatter_any_impl(_name))


# ---- derivatives ---------------------------------------------------------------------------------
def _gather_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    operand, indices = primals
    out = gather_p.bind(operand, indices, **params)
    if isinstance(tangents[0], Zero):
        return out, Zero(ad.tangent_aval(core.get_aval(out)))
    p = dict(params)
    if p["mode"] is GatherScatterMode.FILL_OR_DROP:
        p["fill_value"] = 0
    return out, gather_p.bind(tangents[0], indices, **p)


def _gather_transpose(
    ct: Any,
    operand: Any,
    indices: Any,
    *,
    dimension_numbers: Any,
    slice_sizes: tuple[int, ...],
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: Any,
    fill_value: Any,
) -> list[Any]:
    aval = operand.aval
    if isinstance(ct, Zero):
        return [Zero(aval), None]
    dn = dimension_numbers
    sdn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )
    zeros = lax.full(aval.shape, 0, aval.dtype)
    smode = (
        GatherScatterMode.FILL_OR_DROP
        if mode is GatherScatterMode.FILL_OR_DROP
        else (GatherScatterMode.CLIP)
    )
    return [
        _scatter_bind(
            scatter_add_p, zeros, indices, ct, sdn, indices_are_sorted, unique_indices, smode
        ),
        None,
    ]


ad.primitive_jvps[gather_p] = _gather_jvp
ad.primitive_transposes[gather_p] = _gather_transpose


def _scatter_to_gather(
    dn: ScatterDimensionNumbers, upd_aval: ShapedArray, op_aval: ShapedArray
) -> tuple[GatherDimensionNumbers, tuple[int, ...]]:
    gdn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )
    sizes = []
    w = iter(upd_aval.shape[i] for i in dn.update_window_dims)
    for d in range(op_aval.ndim):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(next(w))
    return gdn, tuple(sizes)


def _linear_scatter_jvp(p: core.Primitive) -> Any:
    """scatter-add, and scatter (replacement, once the winning updates are fixed), are linear
    in (operand, updates) jointly: the tangent is the same scatter of the tangents."""

    def rule(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        out = p.bind(operand, indices, updates, **params)
        t_op, t_up = tangents[0], tangents[2]
        if isinstance(t_op, Zero) and isinstance(t_up, Zero):
            return out, Zero(ad.tangent_aval(core.get_aval(out)))
        return out, p.bind(ad.instantiate(t_op), indices, ad.instantiate(t_up), **params)

    return rule


def _linear_scatter_transpose(replace: bool) -> Any:
    def rule(
        ct: Any,
        operand: Any,
        indices: Any,
        updates: Any,
        *,
        dimension_numbers: Any,
        mode: Any,
        indices_are_sorted: bool,
        unique_indices: bool,
        **params: Any,
    ) -> list[Any]:
        u_aval = updates.aval if is_undefined(updates) else core.get_aval(updates)
        op_aval = operand.aval if is_undefined(operand) else core.get_aval(operand)
        if isinstance(ct, Zero):
            return [
                Zero(op_aval) if is_undefined(operand) else None,
                None,
                Zero(u_aval) if is_undefined(updates) else None,
            ]
        ct_op = None
        if is_undefined(operand):
            # with replacement, positions overwritten by an update get no cotangent
            ct_op = (
                scatter_p.bind(
                    ct,
                    indices,
                    lax.full(u_aval.shape, 0, u_aval.dtype),
                    dimension_numbers=dimension_numbers,
                    mode=mode,
                    indices_are_sorted=indices_are_sorted,
                    unique_indices=unique_indices,
                    **params,
                )
                if replace
                else ct
            )
        ct_up = None
        if is_undefined(updates):
            # each update's cotangent is the cotangent at its target (for replacement exact
            # with unique indices; with duplicates JAX's result is implementation-defined too)
            gdn, sizes = _scatter_to_gather(dimension_numbers, u_aval, op_aval)
            drop = mode is GatherScatterMode.FILL_OR_DROP
            gmode = GatherScatterMode.FILL_OR_DROP if drop else GatherScatterMode.CLIP
            ct_up = gather_p.bind(
                ct,
                indices,
                dimension_numbers=gdn,
                slice_sizes=sizes,
                mode=gmode,
                fill_value=0,
                indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices,
            )
        return [ct_op, None, ct_up]

    return rule


ad.primitive_jvps[scatter_add_p] = _linear_scatter_jvp(scatter_add_p)
ad.primitive_transposes[scatter_add_p] = _linear_scatter_transpose(replace=False)
ad.primitive_jvps[scatter_p] = _linear_scatter_jvp(scatter_p)
ad.primitive_transposes[scatter_p] = _linear_scatter_transpose(replace=True)


def _scatter_extremum_jvp(name: str) -> Any:
    p = scatter_prims[name]

    def rule(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        out = p.bind(operand, indices, updates, **params)
        t_op, t_up = tangents[0], tangents[2]
        if isinstance(t_op, Zero) and isinstance(t_up, Zero):
            return out, Zero(ad.tangent_aval(core.get_aval(out)))
        if name == "scatter-mul":
            if not params.get("unique_indices", False):
                raise NotImplementedError(
                    "scatter_mul gradients are only implemented if `unique_indices=True`"
                )
            oa = core.get_aval(out)
            ones = lax.full(oa.shape, 1, oa.dtype)
            zeros = lax.full(oa.shape, 0, oa.dtype)
            scale = scatter_mul_p.bind(ones, indices, updates, **params)
            t = lax.mul(ad.instantiate(t_op), scale)
            if not isinstance(t_up, Zero):
                hit_t = scatter_p.bind(zeros, indices, t_up, **params)
                t = lax.add(t, lax.mul(operand, hit_t))
            return out, t
        # the tangent is the mean of the tangents of every value that attains the result: the
        # operand where it equals the result, and each update equal to its target's result
        t_op = ad.instantiate(t_op)
        t_up = ad.instantiate(t_up)
        oa, ua = core.get_aval(out), core.get_aval(updates)
        if oa.dtype.kind != "f":
            return out, t_op
        gdn, sizes = _scatter_to_gather(params["dimension_numbers"], ua, oa)
        drop = params["mode"] is GatherScatterMode.FILL_OR_DROP
        at_target = gather_p.bind(
            out,
            indices,
            dimension_numbers=gdn,
            slice_sizes=sizes,
            mode=GatherScatterMode.FILL_OR_DROP if drop else GatherScatterMode.CLIP,
            fill_value=None,
            indices_are_sorted=params["indices_are_sorted"],
            unique_indices=params["unique_indices"],
        )
        won = lax.eq(updates, at_target)
        kept = lax.eq(operand, out)
        zeros_u, zeros_o = lax.full(ua.shape, 0, ua.dtype), lax.full(oa.shape, 0, oa.dtype)
        ones_u, ones_o = lax.full(ua.shape, 1, ua.dtype), lax.full(oa.shape, 1, oa.dtype)
        count = scatter_add_p.bind(
            lax.select(kept, ones_o, zeros_o), indices, lax.select(won, ones_u, zeros_u), **params
        )
        total = scatter_add_p.bind(
            lax.select(kept, t_op, zeros_o), indices, lax.select(won, t_up, zeros_u), **params
        )
        return out, lax.div(total, lax.max(count, ones_o))

    return rule


for _name in ("scatter-min", "scatter-max", "scatter-mul"):
    ad.primitive_jvps[scatter_prims[_name]] = _scatter_extremum_jvp(_name)


# ---- batching ------------------------------------------------------------------------------------
def _gather_batch(
    vals: list[Any],
    dims: list[Any],
    *,
    dimension_numbers: Any,
    slice_sizes: tuple[int, ...],
    **params: Any,
) -> tuple[Any, Any]:
    operand, indices = vals
    od, idim = dims
    dn = dimension_numbers
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    operand = batching.bdim_at_front(operand, od, size) if od is not None else operand
    indices = batching.bdim_at_front(indices, idim, size) if idim is not None else indices

    def sh(t: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(i + 1 for i in t)

    if od is not None and idim is not None:
        ndn = GatherDimensionNumbers(
            offset_dims=sh(dn.offset_dims),
            collapsed_slice_dims=sh(dn.collapsed_slice_dims),
            start_index_map=sh(dn.start_index_map),
            operand_batching_dims=(0, *sh(dn.operand_batching_dims)),
            start_indices_batching_dims=(0, *sh(dn.start_indices_batching_dims)),
        )
        batch_slice = min(1, size)  # 0 in an empty batch, as the shape rule wants
        out = gather_p.bind(
            operand,
            indices,
            dimension_numbers=ndn,
            slice_sizes=(batch_slice, *slice_sizes),
            **params,
        )
        return out, 0
    if od is not None:  # the batch axis is a full-size offset dim at the front of the output
        ndn = GatherDimensionNumbers(
            offset_dims=(0, *sh(dn.offset_dims)),
            collapsed_slice_dims=sh(dn.collapsed_slice_dims),
            start_index_map=sh(dn.start_index_map),
            operand_batching_dims=sh(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        out = gather_p.bind(
            operand, indices, dimension_numbers=ndn, slice_sizes=(size, *slice_sizes), **params
        )
        return out, 0
    # only indices batched: their leading axis is a new batch axis of the output
    ndn = GatherDimensionNumbers(
        offset_dims=sh(dn.offset_dims),
        collapsed_slice_dims=dn.collapsed_slice_dims,
        start_index_map=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=sh(dn.start_indices_batching_dims),
    )
    out = gather_p.bind(operand, indices, dimension_numbers=ndn, slice_sizes=slice_sizes, **params)
    out_batch_pos = [i for i in range(core.get_aval(out).ndim) if i not in ndn.offset_dims]
    return out, out_batch_pos[0]


batching.primitive_batchers[gather_p] = _gather_batch


def _scatter_batch(p: core.Primitive) -> Any:
    def rule(
        vals: list[Any], dims: list[Any], *, dimension_numbers: Any, **params: Any
    ) -> tuple[Any, Any]:
        operand, indices, updates = vals
        size = next(
            core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None
        )
        operand, indices, updates = (
            batching.bdim_at_front(v, d, size) if d is not None else batching.broadcast(v, size, 0)
            for v, d in zip(vals, dims, strict=True)
        )
        dn = dimension_numbers

        def sh(t: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(i + 1 for i in t)

        ndn = ScatterDimensionNumbers(
            update_window_dims=sh(dn.update_window_dims),
            inserted_window_dims=sh(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=sh(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *sh(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *sh(dn.scatter_indices_batching_dims)),
        )
        return p.bind(operand, indices, updates, dimension_numbers=ndn, **params), 0

    return rule


for _p in scatter_prims.values():
    batching.primitive_batchers[_p] = _scatter_batch(_p)


def index_take(src: Any, idxs: Any, axes: Sequence[int]) -> Any:
    """src gathered at index arrays `idxs`, one per axis of `axes` (all of one length n): an
    array of shape (n, *the other axes of src)."""
    src = lax.to_array(src)
    nd = core.get_aval(src).ndim
    axes = tuple(int(a) % nd for a in axes)
    idxs = [lax.to_array(i) for i in idxs]
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    cols = [lax.reshape(i, (*core.get_aval(i).shape, 1)) for i in idxs]
    indices = lax.concatenate(cols, len(core.get_aval(cols[0]).shape) - 1)
    rest = tuple(d for d in range(nd) if d not in axes)
    dn = GatherDimensionNumbers(
        offset_dims=tuple(range(1, 1 + len(rest))),
        collapsed_slice_dims=tuple(sorted(axes)),
        start_index_map=axes,
    )
    shape = core.get_aval(src).shape
    sizes = tuple(1 if d in axes else shape[d] for d in range(nd))
    return gather(src, indices, dn, sizes)
