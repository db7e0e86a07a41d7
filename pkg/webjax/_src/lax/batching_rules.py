"""Batching (vmap) rules for the lax primitives, written only with lax operations.

A rule gets the operands with their batch dims (`None` = unbatched) and returns the result
with its batch dim. Rules avoid data movement where they can: elementwise ops keep the batch
axis where an operand already has it; transposes, squeezes and reductions renumber axes; only
unbatched operands that must match a batched shape are broadcast (a view, never a kernel).
Imported for its side effects: it fills `batching.primitive_batchers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import core
from ..core import Primitive
from ..interpreters import batching
from ..interpreters.batching import BatchDim, not_mapped, primitive_batchers
from . import lax
from .ad_rules import add_any_p

Dims = Sequence[BatchDim]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _logical_shape(x: Any, d: BatchDim) -> tuple[int, ...]:
    s = _shape(x)
    return s if d is not_mapped else s[:d] + s[d + 1 :]


def _axis_size(vals: Sequence[Any], dims: Dims) -> int:
    return next(_shape(x)[d] for x, d in zip(vals, dims) if d is not not_mapped)


def _phys(axis: int, d: int) -> int:
    """The physical axis of logical axis `axis` of a value batched at `d`."""
    return axis if axis < d else axis + 1


def _broadcast_in_dim(x: Any, shape: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    if lax._is_python_scalar(x):  # e.g. a constant returned by a vmapped function
        return lax.full(shape, x)
    return lax.broadcast_in_dim(x, shape, dims)


batching.transpose_fn = lax.transpose
batching.broadcast_in_dim_fn = _broadcast_in_dim


# ---- elementwise ---------------------------------------------------------------------------------
def _unary_batcher(prim: Primitive) -> Any:
    def rule(vals: Sequence[Any], dims: Dims, **params: Any) -> tuple[Any, BatchDim]:
        return prim.bind(*vals, **params), dims[0]

    return rule


def _align(
    x: Any, d: BatchDim, out_shape: tuple[int, ...], size: int, target: int, keep_scalar: bool
) -> Any:
    """Operand `x` of an elementwise op, batched at `target` with the full logical shape.
    lax lets a rank-0 operand meet an array: an unbatched scalar may stay as it is."""
    if d is not_mapped:
        if keep_scalar and not _shape(x):
            return x
        if _shape(x) != out_shape:  # a scalar `which` of select_n meets array cases
            x = _broadcast_in_dim(x, out_shape, ())
        return batching.broadcast(x, size, target)
    if len(_logical_shape(x, d)) < len(out_shape):  # a batched scalar meets an array
        full = out_shape[:target] + (size,) + out_shape[target:]
        return lax.broadcast_in_dim(x, full, (target,))
    return batching.moveaxis(x, d, target)


def _align_all(vals: Sequence[Any], dims: Dims, scalar_ok: Sequence[bool]) -> tuple[list, int]:
    """Bring elementwise operands to a common batched layout; returns them and the batch dim."""
    size = _axis_size(vals, dims)
    out_shape = max((_logical_shape(x, d) for x, d in zip(vals, dims)), key=len)
    full_rank = [
        d for x, d in zip(vals, dims) if d is not None and _logical_shape(x, d) == out_shape
    ]
    target = full_rank[0] if full_rank else 0
    out = [
        _align(x, d, out_shape, size, target, ok)
        for x, d, ok in zip(vals, dims, scalar_ok, strict=True)
    ]
    return out, target


def _nary_batcher(prim: Primitive) -> Any:
    def rule(vals: Sequence[Any], dims: Dims, **params: Any) -> tuple[Any, BatchDim]:
        shapes = {_logical_shape(x, d) for x, d in zip(vals, dims) if _logical_shape(x, d)}
        if len(shapes) > 1:
            return prim.bind(*_broadcast_batched(prim.name, vals, dims), **params), 0
        aligned, target = _align_all(vals, dims, [True] * len(vals))
        return prim.bind(*aligned, **params), target

    return rule


def _broadcast_batched(name: str, vals: Sequence[Any], dims: Dims) -> list[Any]:
    """Operands of a lax binary op whose examples differ in shape, as JAX's batching brings
    them together: each (but a scalar) batched at the front, an unbatched one with a size-1
    batch dimension; a batched operand of lower rank gains trailing size-1 dimensions (so a
    per-example scalar meets an array); then size-1 dimensions broadcast, as the op's own do."""
    size = _axis_size(vals, dims)
    moved = []
    for x, d in zip(vals, dims, strict=True):
        shape = _shape(x)
        if not shape:
            moved.append(x)
        elif d is not_mapped:
            moved.append(lax.broadcast_in_dim(x, (1, *shape), tuple(range(1, len(shape) + 1))))
        else:
            moved.append(batching.moveaxis(x, d, 0))
    rank = max(len(_shape(x)) for x in moved)
    for i, (x, d) in enumerate(zip(moved, dims, strict=True)):
        shape = _shape(x)
        if d is not not_mapped and shape and len(shape) < rank:
            full = shape + (1,) * (rank - len(shape))
            moved[i] = lax.broadcast_in_dim(x, full, tuple(range(len(shape))))
    ranks = {len(_shape(x)) for x in moved if _shape(x)}
    if len(ranks) > 1:
        raise TypeError(
            f"{name}: arrays must have the same number of dimensions, got {sorted(ranks)}"
        )
    arrays = [_shape(x) for x in moved if _shape(x)]
    out = []
    for k in range(rank):
        sizes = {s[k] for s in arrays} - {1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {arrays}.")
        out.append(sizes.pop() if sizes else (size if k == 0 else 1))
    target = tuple(out)
    return [
        x
        if not _shape(x) or _shape(x) == target
        else lax.broadcast_in_dim(x, target, tuple(range(rank)))
        for x in moved
    ]


def _add_any_batcher(vals: Sequence[Any], dims: Dims) -> tuple[Any, BatchDim]:
    # add_any (the tangent sum) has no rank-0 broadcasting: operands match exactly.
    aligned, target = _align_all(vals, dims, [False, False])
    return add_any_p.bind(*aligned), target


def _select_n_batcher(vals: Sequence[Any], dims: Dims) -> tuple[Any, BatchDim]:
    # `which` may stay a scalar when unbatched; the cases must all share one shape.
    aligned, target = _align_all(vals, dims, [True] + [False] * (len(vals) - 1))
    return lax.select_n(*aligned), target


# ---- shape operations ----------------------------------------------------------------------------
def _broadcast_in_dim_batcher(
    vals: Sequence[Any],
    dims: Dims,
    *,
    shape: tuple[int, ...],
    broadcast_dimensions: tuple[int, ...],
    sharding: Any = None,
) -> tuple[Any, BatchDim]:
    # Put the output's batch axis right after the output axis of the operand axis before it,
    # so broadcast_dimensions stay increasing and the operand needs no transpose.
    (x,), (d,) = vals, dims
    assert d is not None
    size = _shape(x)[d]
    out_d = broadcast_dimensions[d - 1] + 1 if d > 0 else 0
    new_dims = [b if b < out_d else b + 1 for b in broadcast_dimensions]
    new_dims.insert(d, out_d)
    new_shape = shape[:out_d] + (size,) + shape[out_d:]
    return lax.broadcast_in_dim(x, new_shape, new_dims), out_d


def _reshape_batcher(
    vals: Sequence[Any],
    dims: Dims,
    *,
    new_sizes: tuple[int, ...],
    dimensions: Any = None,
    sharding: Any = None,
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    assert d is not None
    x = batching.moveaxis(x, d, 0)
    perm = None if dimensions is None else (0, *(p + 1 for p in dimensions))
    return lax.reshape(x, (_shape(x)[0], *new_sizes), perm), 0


def _transpose_batcher(
    vals: Sequence[Any], dims: Dims, *, permutation: tuple[int, ...]
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    assert d is not None
    return lax.transpose(x, (d, *(_phys(p, d) for p in permutation))), 0


def _squeeze_batcher(
    vals: Sequence[Any], dims: Dims, *, dimensions: tuple[int, ...]
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    assert d is not None
    phys = tuple(_phys(a, d) for a in dimensions)
    return lax.squeeze(x, phys), d - sum(a < d for a in phys)


def _concatenate_batcher(
    vals: Sequence[Any], dims: Dims, *, dimension: int
) -> tuple[Any, BatchDim]:
    size = _axis_size(vals, dims)
    xs = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
    return lax.concatenate(xs, dimension + 1), 0


def _slice_batcher(
    vals: Sequence[Any],
    dims: Dims,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    assert d is not None
    size = _shape(x)[d]
    start = start_indices[:d] + (0,) + start_indices[d:]
    limit = limit_indices[:d] + (size,) + limit_indices[d:]
    st = None if strides is None else strides[:d] + (1,) + strides[d:]
    return lax.slice(x, start, limit, st), d


def _pad_batcher(
    vals: Sequence[Any], dims: Dims, *, padding_config: tuple[tuple[int, int, int], ...]
) -> tuple[Any, BatchDim]:
    (x, pad_value), (d, pd) = vals, dims
    if pd is not_mapped:
        assert d is not None
        config = padding_config[:d] + ((0, 0, 0),) + padding_config[d:]
        return lax.pad(x, pad_value, config), d
    # A batched padding value: pad with anything, then select it where the mask says "padding".
    size = _axis_size(vals, dims)
    x = batching.bdim_at_front(x, d, size)
    aval = core.get_aval(x)
    padded = lax.pad(x, lax.full((), 0, aval.dtype), ((0, 0, 0), *padding_config))
    inside = lax.pad(lax.full(aval.shape[1:], True), lax.full((), False), padding_config)
    out_shape = core.get_aval(padded).shape
    inside = lax.broadcast_in_dim(inside, out_shape, tuple(range(1, len(out_shape))))
    fill = lax.broadcast_in_dim(batching.moveaxis(pad_value, pd, 0), out_shape, (0,))
    return lax.select_n(inside, fill, padded), 0


def _rev_batcher(vals: Sequence[Any], dims: Dims, *, dimensions: tuple[int, ...]) -> Any:
    (x,), (d,) = vals, dims
    assert d is not None
    return lax.rev(x, tuple(_phys(a, d) for a in dimensions)), d


# ---- dynamic slicing ----------------------------------------------------------------------------
# With unbatched start indices the batch axis is one more full-size axis. With batched starts
# each example reads another window: lacking a gather primitive, read it with a one-hot select
# and a sum per sliced axis (exact: the other terms are -0.0, which leaves every value alone).
def _dynamic_slice_batcher(
    vals: Sequence[Any], dims: Dims, *, slice_sizes: tuple[int, ...]
) -> tuple[Any, BatchDim]:
    (x, *starts), (d, *sdims) = vals, dims
    if all(sd is not_mapped for sd in sdims):
        assert d is not None
        zero = lax.full((), 0, core.get_aval(starts[0]).dtype) if starts else 0
        sizes = slice_sizes[:d] + (_shape(x)[d],) + slice_sizes[d:]
        return lax.dynamic_slice(x, [*starts[:d], zero, *starts[d:]], sizes), d
    size = _axis_size(vals, dims)
    x = batching.bdim_at_front(x, d, size)
    for axis, (s, sd) in enumerate(zip(starts, sdims)):
        limit = _shape(x)[axis + 1] - slice_sizes[axis]
        x = _onehot_take(x, axis + 1, _batched_start(s, sd, size, limit), slice_sizes[axis])
    return x, 0


def _dynamic_update_slice_batcher(vals: Sequence[Any], dims: Dims) -> tuple[Any, BatchDim]:
    (x, update, *starts), (d, ud, *sdims) = vals, dims
    size = _axis_size(vals, dims)
    x, update = batching.bdim_at_front(x, d, size), batching.bdim_at_front(update, ud, size)
    if all(sd is not_mapped for sd in sdims):
        zero = lax.full((), 0, core.get_aval(starts[0]).dtype) if starts else 0
        return lax.dynamic_update_slice(x, update, [zero, *starts]), 0
    shape, window = _shape(x), None
    for axis, (s, sd) in enumerate(zip(starts, sdims)):
        n, m = shape[axis + 1], _shape(update)[axis + 1]
        start = _batched_start(s, sd, size, n - m)
        update = _onehot_take(update, axis + 1, lax.neg(start), n)  # update[k - start]
        inside = _in_window(start, m, shape, axis + 1)
        window = inside if window is None else lax.bitwise_and(window, inside)
    return lax.select_n(window, x, update), 0


def _in_window(start: Any, m: int, shape: tuple[int, ...], axis: int) -> Any:
    """Mask of the positions start[b] <= k < start[b] + m along `axis`."""
    pos = lax.broadcasted_iota("int32", shape, axis)
    lo = lax.broadcast_in_dim(start, shape, (0,))
    return lax.bitwise_and(lax.ge(pos, lo), lax.lt(pos, lax.add(lo, m)))


def _batched_start(s: Any, sd: BatchDim, size: int, limit: int) -> Any:
    """Start indices as an int32 vector over the batch, clamped like lax's (to [0, limit])."""
    s = lax.convert_element_type(s, "int32")
    s = batching.bdim_at_front(s, sd, size)
    return lax.min(lax.max(s, lax.full((), 0, "int32")), lax.full((), limit, "int32"))


def _onehot_take(x: Any, axis: int, start: Any, length: int) -> Any:
    """y[b, ..., j, ...] = x[b, ..., start[b] + j, ...] along `axis`; out of range reads 0."""
    shape = _shape(x)
    x = batching.moveaxis(x, axis, len(shape) - 1)  # (b, rest..., n)
    size, n, rest = shape[0], shape[axis], _shape(x)[1:-1]
    grid = (size, length, n)
    src = lax.broadcasted_iota("int32", grid, 2)
    want = lax.add(lax.broadcast_in_dim(start, grid, (0,)), lax.broadcasted_iota("int32", grid, 1))
    full = (size, *rest, length, n)
    mask = lax.broadcast_in_dim(lax.eq(src, want), full, (0, len(full) - 2, len(full) - 1))
    vals = lax.broadcast_in_dim(x, full, (*range(len(full) - 2), len(full) - 1))
    dtype = core.get_aval(x).dtype
    if dtype.kind == "b":
        out = lax.reduce_or(lax.bitwise_and(mask, vals), (len(full) - 1,))
    else:
        fill = lax.full(full, -0.0 if dtype.kind == "f" else 0, dtype)
        out = lax.reduce_sum(lax.select_n(mask, fill, vals), (len(full) - 1,))
    return batching.moveaxis(out, len(full) - 2, axis)


def _iota_batcher(vals: Sequence[Any], dims: Dims, **params: Any) -> tuple[Any, BatchDim]:
    # iota has no operands, so BatchTrace never calls this; it exists for coverage.
    return lax.iota_p.bind(**params), not_mapped


# ---- reductions ----------------------------------------------------------------------------------
def _reduce_batcher(prim: Primitive) -> Any:
    def rule(
        vals: Sequence[Any], dims: Dims, *, axes: tuple[int, ...], **params: Any
    ) -> tuple[Any, BatchDim]:
        (x,), (d,) = vals, dims
        assert d is not None
        phys = tuple(_phys(a, d) for a in axes)
        return prim.bind(x, axes=phys, **params), d - sum(a < d for a in phys)

    return rule


# ---- registration --------------------------------------------------------------------------------
for _name in lax.UNARY_PRIMS:
    primitive_batchers[lax.prims[_name]] = _unary_batcher(lax.prims[_name])
for _name in lax.BINARY_PRIMS:
    primitive_batchers[lax.prims[_name]] = _nary_batcher(lax.prims[_name])
for _name in lax.REDUCTIONS:
    primitive_batchers[lax.prims[_name]] = _reduce_batcher(lax.prims[_name])
for _p in (
    lax.convert_element_type_p,
    lax.integer_pow_p,
    lax.stop_gradient_p,
    lax.real_p,
    lax.imag_p,
    lax.conj_p,
):
    primitive_batchers[_p] = _unary_batcher(_p)
primitive_batchers[lax.complex_p] = _nary_batcher(lax.complex_p)
primitive_batchers[add_any_p] = _add_any_batcher
primitive_batchers[lax.select_n_p] = _select_n_batcher
primitive_batchers[lax.broadcast_in_dim_p] = _broadcast_in_dim_batcher
primitive_batchers[lax.reshape_p] = _reshape_batcher
primitive_batchers[lax.transpose_p] = _transpose_batcher
primitive_batchers[lax.squeeze_p] = _squeeze_batcher
primitive_batchers[lax.concatenate_p] = _concatenate_batcher
primitive_batchers[lax.slice_p] = _slice_batcher
primitive_batchers[lax.pad_p] = _pad_batcher
primitive_batchers[lax.rev_p] = _rev_batcher
primitive_batchers[lax.dynamic_slice_p] = _dynamic_slice_batcher
primitive_batchers[lax.dynamic_update_slice_p] = _dynamic_update_slice_batcher
primitive_batchers[lax.iota_p] = _iota_batcher
primitive_batchers[lax.bitcast_convert_type_p] = _unary_batcher(lax.bitcast_convert_type_p)


def _dot_general_batcher(
    vals: Sequence[Any], dims: Dims, *, dimension_numbers: Any, **params: Any
) -> tuple[Any, BatchDim]:
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = vals
    dx, dy = dims
    size = _axis_size(vals, dims)

    def shift(axes: Sequence[int], d: int) -> tuple[int, ...]:
        return tuple(a + 1 if a >= d else a for a in axes)

    if dx is not not_mapped and dy is not not_mapped:
        dn = ((shift(lc, dx), shift(rc, dy)), ((dx, *shift(lb, dx)), (dy, *shift(rb, dy))))
        return lax.dot_general_p.bind(x, y, dimension_numbers=dn, **params), 0
    if dx is not not_mapped:
        dn = ((shift(lc, dx), rc), (shift(lb, dx), rb))
        lfree = lax._dot_free(len(_shape(x)), dn[0][0], dn[1][0])
        out = lax.dot_general_p.bind(x, y, dimension_numbers=dn, **params)
        return out, len(lb) + lfree.index(dx)
    assert dy is not not_mapped
    dn = ((lc, shift(rc, dy)), (lb, shift(rb, dy)))
    rfree = lax._dot_free(len(_shape(y)), dn[0][1], dn[1][1])
    x_nd = len(_shape(x))
    n_lfree = x_nd - len(lc) - len(lb)
    out = lax.dot_general_p.bind(x, y, dimension_numbers=dn, **params)
    del size
    return out, len(lb) + n_lfree + rfree.index(dy)


primitive_batchers[lax.dot_general_p] = _dot_general_batcher


def _clamp_batcher(vals: Sequence[Any], dims: Dims) -> tuple[Any, BatchDim]:
    """Bring everything to the operand's batched shape (scalar bounds stay scalar if
    unbatched)."""
    lo, x, hi = vals
    dlo, dx, dhi = dims
    size = _axis_size(vals, dims)
    x = (
        batching.bdim_at_front(x, dx, size)
        if dx is not not_mapped
        else batching.broadcast(x, size, 0)
    )
    shape = _shape(x)

    def fit(b: Any, d: BatchDim) -> Any:
        if d is not_mapped and not _shape(b):
            return b
        b = batching.bdim_at_front(b, d, size) if d is not not_mapped else b
        bs = _shape(b)
        if d is not_mapped:
            return lax.broadcast_in_dim(b, shape, tuple(range(1, len(shape))))
        if len(bs) == 1:  # a batched scalar bound
            return lax.broadcast_in_dim(b, shape, (0,))
        return b

    return lax.clamp_p.bind(fit(lo, dlo), x, fit(hi, dhi)), 0


primitive_batchers[lax.clamp_p] = _clamp_batcher


def missing_batching_rules() -> list[str]:
    """Names of lax primitives that vmap cannot batch yet (the coverage table's gaps)."""
    return sorted(name for name, p in lax.prims.items() if p not in primitive_batchers)
