"""Collectives over named axes, as JAX's `lax.psum` & co. use them inside `vmap`/`pmap`.

A named axis is bound by `vmap(..., axis_name=...)` (and `pmap`, which maps with vmap). The
collectives are primitives with JAX's names and parameters (so jaxprs read like JAX's), shape
rules and derivative rules like any other; what makes them collective is their batching rule.
The BatchTrace of the named axis runs it even on unbatched operands (`batching.collective_axes`)
and it computes *across* the batch dimension: psum reduces over it (leaving JAX's positional
`psum[axes=(0,)]`), all_gather moves it into the value, axis_index is an iota along it, and so
on. BatchTraces of other axes pass the collective to their parent with the batch dimension
carried along (positional axes renumbered). A named collective that reaches evaluation was
bound outside any vmap of that name: JAX's NameError.

A constant operand of `psum` (no tracer: Python scalars, closed-over arrays) is scaled by the
axis size from the axis env, as in JAX, so `psum(1, 'i')` is the axis size as a Python int.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..core import Primitive, ShapedArray
from ..interpreters import ad, batching
from ..interpreters.ad import Zero
from ..interpreters.batching import BatchDim, not_mapped
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from . import lax
from .ad_rules import deflinear

AxisName = Any

_GROUPS_IN_VMAP = (
    "axis_index_groups not supported in vmap collectives. Please open a feature request!"
)


# ---- axis names ----------------------------------------------------------------------------------
def _as_names(axis_name: AxisName) -> tuple[Any, ...]:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _is_pos(axis: Any) -> bool:
    """Positional (integer) entries of psum's `axes` reduce array axes, not named ones."""
    return isinstance(axis, int) and not isinstance(axis, bool)


def _named(axes: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(a for a in axes if not _is_pos(a))


def _unbound(name: Any, api_name: str) -> NameError:
    return NameError(
        f"Found an unbound axis name: {name}. To fix this, please call {api_name} under "
        "`jax.shard_map`."
    )


def _check_bound(names: Sequence[Any], api_name: str) -> None:
    for name in _named(names):
        if not batching.axis_is_bound(name):
            raise _unbound(name, api_name)


def _group_size(names: Sequence[Any], groups: Any = None) -> int:
    """The number of participants: the product of the named axes' sizes (or a group's)."""
    if groups is not None:
        return len(groups[0])
    return math.prod(batching.axis_size(n) for n in _named(names))


def _canonical_groups(groups: Any) -> tuple[tuple[int, ...], ...] | None:
    if groups is None:
        return None
    return tuple(tuple(int(i) for i in g) for g in groups)


def _validate_groups(groups: Any) -> None:
    if groups is None:
        return
    covered = sorted(i for g in groups for i in g)
    if covered != list(range(len(covered))):
        raise ValueError("axis_index_groups must cover all indices exactly once")


def _canonicalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _ndim(x: Any) -> int:
    return core.get_aval(x).ndim


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


# ---- array helpers for the rules -----------------------------------------------------------------
def _phys(axis: int, d: int) -> int:
    """The physical axis of logical axis `axis` of a value batched at `d`."""
    return axis if axis < d else axis + 1


def _merge(x: Any, axis: int) -> Any:
    """Merge axes `axis` and `axis + 1` (row-major: `axis` the major one)."""
    s = _shape(x)
    return lax.reshape(x, s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2 :])


def _split(x: Any, axis: int, n: int) -> Any:
    """Split axis `axis` into (n, size // n)."""
    s = _shape(x)
    return lax.reshape(x, s[:axis] + (n, s[axis] // n) + s[axis + 1 :])


def _batched_at(x: Any, d: BatchDim, size: int, dst: int) -> Any:
    return batching.matchaxis(x, d, dst, size)


def _scale(x: Any, n: int) -> Any:
    """`x * n` in the dtype (and weak type) of `x`."""
    if lax._is_python_scalar(x):
        return type(x)(n) * x
    x = lax.to_array(x)
    aval = core.get_aval(x)
    return lax.mul(x, lax.full((), n, aval.dtype, weak_type=aval.weak_type))


# ---- psum, pmax, pmin ----------------------------------------------------------------------------
psum_p = lax._prim("psum")
pmax_p = lax._prim("pmax")
pmin_p = lax._prim("pmin")
_REDUCERS = {psum_p: lax.reduce_sum, pmax_p: lax.reduce_max, pmin_p: lax.reduce_min}


def _reduction_abstract(
    x: ShapedArray, *, axes: tuple[Any, ...], axis_index_groups: Any
) -> ShapedArray:
    _check_bound(axes, "psum")
    pos = {a for a in axes if _is_pos(a)}
    if axis_index_groups is not None and pos:
        raise ValueError(
            f"axis_index_groups can only be used with reductions over named axes, but got: {axes}"
        )
    for a in pos:
        if not 0 <= a < x.ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {x.ndim}")
    return ShapedArray(tuple(n for i, n in enumerate(x.shape) if i not in pos), x.dtype)


def _reduction_impl(prim: Primitive) -> Callable[..., Any]:
    def impl(x: Any, *, axes: tuple[Any, ...], axis_index_groups: Any) -> Any:
        named = _named(axes)
        if named:  # no vmap of that name handled it
            raise _unbound(named[0], "psum")
        x = lax.to_array(x)
        out = _REDUCERS[prim](x, axes) if axes else x
        aval = core.get_aval(out)
        return lax.convert_element_type(out, aval.dtype) if aval.weak_type else out

    return impl


def _reduction_batcher(prim: Primitive, on_unmapped: Callable[[Any, int], Any]) -> Any:
    def rule(
        vals: Sequence[Any],
        dims: Sequence[BatchDim],
        *,
        axes: tuple[Any, ...],
        axis_index_groups: Any,
    ) -> tuple[Any, BatchDim]:
        (x,), (d,) = vals, dims
        frame = batching.current_axis()
        own = frame.name is not None and frame.name in _named(axes)
        if own and axis_index_groups is not None:
            raise NotImplementedError(_GROUPS_IN_VMAP)
        if d is not_mapped:
            if not own:
                return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), None
            rest = tuple(a for a in axes if a != frame.name)
            if rest:
                x = prim.bind(x, axes=rest, axis_index_groups=axis_index_groups)
            return on_unmapped(x, frame.size), None
        # Reduce the batch axis too when the axis is ours: the result is the same everywhere.
        new_axes = tuple(
            _phys(a, d) if _is_pos(a) else (d if own and a == frame.name else a) for a in axes
        )
        out = prim.bind(x, axes=new_axes, axis_index_groups=axis_index_groups)
        if own:
            return out, None
        return out, d - sum(1 for a in new_axes if _is_pos(a) and a < d)

    return rule


def _psum_transpose(ct: Any, x: Any, *, axes: tuple[Any, ...], axis_index_groups: Any) -> list[Any]:
    """psum is psum-then-broadcast: its transpose sums the cotangent over the named axes
    again (JAX's rule) and broadcasts it back over the positional ones."""
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    pos = {a for a in axes if _is_pos(a)}
    if pos:
        shape = x.aval.shape
        ct = lax.broadcast_in_dim(ct, shape, tuple(i for i in range(len(shape)) if i not in pos))
    named = _named(axes)
    if named:
        ct = psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)
    return [ct]


def _not_differentiable(name: str) -> Callable[..., Any]:
    def jvp(primals: list[Any], tangents: list[Any], **params: Any) -> Any:
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")

    return jvp


for _p, _unmapped in (
    (psum_p, _scale),
    (pmax_p, lambda x, n: x),
    (pmin_p, lambda x, n: x),
):
    _p.def_abstract_eval(_reduction_abstract)
    _p.def_impl(_reduction_impl(_p))
    batching.primitive_batchers[_p] = _reduction_batcher(_p, _unmapped)
    batching.collective_axes[_p] = lambda params: _named(params["axes"])
deflinear(psum_p, _psum_transpose)
# JAX defines no derivative for pmax/pmin: differentiating through them raises its error.
ad.primitive_jvps[pmax_p] = _not_differentiable("pmax")
ad.primitive_jvps[pmin_p] = _not_differentiable("pmin")


# ---- all_gather and reduce_scatter (psum_scatter) ------------------------------------------------
all_gather_p = lax._prim("all_gather")
reduce_scatter_p = lax._prim("reduce_scatter")


@all_gather_p.def_abstract_eval
def _all_gather_abstract(
    x: ShapedArray,
    *,
    all_gather_dimension: int,
    axis_name: tuple,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> ShapedArray:
    _check_bound(axis_name, "all_gather")
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(shape, x.dtype, x.weak_type)


@reduce_scatter_p.def_abstract_eval
def _reduce_scatter_abstract(
    x: ShapedArray,
    *,
    scatter_dimension: int,
    axis_name: tuple,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> ShapedArray:
    _check_bound(axis_name, "reduce_scatter")
    return ShapedArray(
        _scattered_shape(x.shape, scatter_dimension, axis_size, tiled), x.dtype, x.weak_type
    )


def _scattered_shape(shape: tuple[int, ...], dim: int, size: int, tiled: bool) -> list[int]:
    out = list(shape)
    if tiled:
        if shape[dim] % size:
            raise ValueError(
                f"tiled reduce_scatter operand scatter dimension size {shape[dim]} must be "
                f"divisible by shard_count {size}"
            )
        out[dim] = shape[dim] // size
    else:
        if shape[dim] != size:
            raise ValueError(
                f"reduce_scatter operand scatter dimension size {shape[dim]} must match shard "
                f"count {size}"
            )
        del out[dim]
    return out


def _unhandled(api_name: str, key: str) -> Callable[..., Any]:
    """Evaluation of a named collective no vmap handled: its axis is unbound."""

    def impl(*args: Any, **params: Any) -> Any:
        raise _unbound(_as_names(params[key])[0], api_name)

    return impl


all_gather_p.def_impl(_unhandled("all_gather", "axis_name"))
reduce_scatter_p.def_impl(_unhandled("reduce_scatter", "axis_name"))


def _others(names: tuple[Any, ...], own: Any) -> tuple[tuple[Any, ...], int, int]:
    """The names besides `own`, and the sizes of those before and after it in `names`."""
    pos = names.index(own)
    before = math.prod(batching.axis_size(n) for n in names[:pos])
    after = math.prod(batching.axis_size(n) for n in names[pos + 1 :])
    return names[:pos] + names[pos + 1 :], before, after


def _all_gather_batcher(
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    all_gather_dimension: int,
    axis_name: tuple,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    frame = batching.current_axis()
    a = all_gather_dimension
    params = {"axis_index_groups": axis_index_groups, "axis_size": axis_size, "tiled": tiled}
    if frame.name is None or frame.name not in axis_name:
        if d is not_mapped:
            return all_gather_p.bind(x, all_gather_dimension=a, axis_name=axis_name, **params), None
        pa = _phys(a, d) if tiled else (a if a <= d else a + 1)
        out = all_gather_p.bind(x, all_gather_dimension=pa, axis_name=axis_name, **params)
        return out, (d if tiled or a > d else d + 1)
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")
    # The examples, stacked along a new axis `a`, are this axis' part of the gathered value.
    y = _batched_at(x, d, frame.size, a)
    others, before, after = _others(axis_name, frame.name)
    if others:  # gather the other axes in front, then order the axes as `axis_name` lists them
        y = all_gather_p.bind(
            y,
            all_gather_dimension=a,
            axis_name=others,
            axis_index_groups=None,
            axis_size=before * after,
            tiled=False,
        )
        y = _split(y, a, before)  # (before, after, own) at a
        perm = list(range(_ndim(y)))
        perm[a + 1], perm[a + 2] = a + 2, a + 1
        y = _merge(_merge(lax.transpose(y, perm), a), a)
    return (_merge(y, a) if tiled else y), None


def _reduce_scatter_batcher(
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    scatter_dimension: int,
    axis_name: tuple,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    frame = batching.current_axis()
    s = scatter_dimension
    params = {"axis_index_groups": axis_index_groups, "axis_size": axis_size, "tiled": tiled}
    if frame.name is None or frame.name not in axis_name:
        if d is not_mapped:
            return reduce_scatter_p.bind(
                x, scatter_dimension=s, axis_name=axis_name, **params
            ), None
        ps = _phys(s, d)
        out = reduce_scatter_p.bind(x, scatter_dimension=ps, axis_name=axis_name, **params)
        return out, (d if tiled or ps > d else d - 1)
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")
    total = _shape(x)[_phys(s, d) if d is not not_mapped else s]
    _scattered_shape((total,), 0, axis_size, tiled)  # JAX's shape errors
    summed = _scale(x, frame.size) if d is not_mapped else lax.reduce_sum(x, (d,))
    others, before, after = _others(axis_name, frame.name)
    # Axis s of the sum holds (before, own, after * chunk): own's index picks the example.
    y = lax.reshape(
        summed,
        _shape(summed)[:s]
        + (before, frame.size, total // before // frame.size)
        + _shape(summed)[s + 1 :],
    )
    perm = list(range(_ndim(y)))
    perm[s], perm[s + 1] = s + 1, s
    y = _merge(lax.transpose(y, perm), s + 1)  # batched at s: (own, before * after * chunk)
    if others:
        y = reduce_scatter_p.bind(
            y,
            scatter_dimension=s + 1,
            axis_name=others,
            axis_index_groups=None,
            axis_size=before * after,
            tiled=True,
        )
    return (y if tiled else lax.squeeze(y, (s + 1,))), s


def _all_gather_transpose(
    ct: Any,
    x: Any,
    *,
    all_gather_dimension: int,
    axis_name: tuple,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [
        reduce_scatter_p.bind(
            ct,
            scatter_dimension=all_gather_dimension,
            axis_name=axis_name,
            axis_index_groups=axis_index_groups,
            axis_size=axis_size,
            tiled=tiled,
        )
    ]


def _reduce_scatter_transpose(
    ct: Any,
    x: Any,
    *,
    scatter_dimension: int,
    axis_name: tuple,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [
        all_gather_p.bind(
            ct,
            all_gather_dimension=scatter_dimension,
            axis_name=axis_name,
            axis_index_groups=axis_index_groups,
            axis_size=axis_size,
            tiled=tiled,
        )
    ]


batching.primitive_batchers[all_gather_p] = _all_gather_batcher
batching.primitive_batchers[reduce_scatter_p] = _reduce_scatter_batcher
deflinear(all_gather_p, _all_gather_transpose)
deflinear(reduce_scatter_p, _reduce_scatter_transpose)
for _p in (all_gather_p, reduce_scatter_p):
    batching.collective_axes[_p] = lambda params: _as_names(params["axis_name"])


# ---- axis_index ----------------------------------------------------------------------------------
axis_index_p = lax._prim("axis_index")


@axis_index_p.def_abstract_eval
def _axis_index_abstract(*, axis_name: Any) -> ShapedArray:
    _check_bound(_as_names(axis_name), "axis_index")
    return ShapedArray((), dtypes.int32)


def _axis_index_batcher(
    vals: Sequence[Any], dims: Sequence[BatchDim], *, axis_name: Any
) -> tuple[Any, BatchDim]:
    frame = batching.current_axis()
    if frame.name is not None and frame.name in _as_names(axis_name):
        return lax.iota(dtypes.int32, frame.size), 0
    return axis_index_p.bind(axis_name=axis_name), None


axis_index_p.def_impl(_unhandled("axis_index", "axis_name"))
batching.primitive_batchers[axis_index_p] = _axis_index_batcher
batching.collective_axes[axis_index_p] = lambda params: _as_names(params["axis_name"])
ad.nondifferentiable.add(axis_index_p)


# ---- ppermute ------------------------------------------------------------------------------------
ppermute_p = lax._prim("ppermute")


@ppermute_p.def_abstract_eval
def _ppermute_abstract(x: ShapedArray, *, axis_name: tuple, perm: tuple) -> ShapedArray:
    _check_bound(axis_name, "ppermute")
    return x


@ppermute_p.def_impl
def _ppermute_impl(x: Any, *, axis_name: tuple, perm: tuple) -> Any:
    raise NotImplementedError("Evaluation rule for 'ppermute' not implemented")  # JAX's error


def _check_perm(perm: tuple, size: int) -> None:
    srcs, dsts = [p[0] for p in perm], [p[1] for p in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if not all(0 <= i < size for i in srcs + dsts):
        raise ValueError(f"ppermute indices must lie in [0, {size}) (the axis size), got {perm}.")


def _ppermute_batcher(
    vals: Sequence[Any], dims: Sequence[BatchDim], *, axis_name: tuple, perm: tuple
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    frame = batching.current_axis()
    if frame.name is None or frame.name not in axis_name:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    if len(axis_name) > 1:
        raise NotImplementedError("ppermute over several named axes inside vmap")
    n = frame.size
    _check_perm(perm, n)
    src_of = {dst: src for src, dst in perm}
    if d is not_mapped:
        if len(src_of) == n:  # every example receives the same unbatched value
            return x, None
        x, d = batching.broadcast(x, n, 0), 0
    # Example k receives example src_of[k] (zeros where nothing is sent): runs of consecutive
    # sources become one slice each.
    pieces: list[Any] = []
    k = 0
    while k < n:
        src = src_of.get(k)
        run = 1
        while k + run < n and (src_of.get(k + run) == (None if src is None else src + run)):
            run += 1
        if src is None:
            shape = list(_shape(x))
            shape[d] = run
            pieces.append(lax.full(shape, 0, core.get_aval(x).dtype))
        else:
            lo, hi = [0] * _ndim(x), list(_shape(x))
            lo[d], hi[d] = src, src + run
            pieces.append(lax.slice(x, lo, hi))
        k += run
    return lax.concatenate(pieces, d), d


def _ppermute_transpose(ct: Any, x: Any, *, axis_name: tuple, perm: tuple) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    inverse = tuple((dst, src) for src, dst in perm)
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


batching.primitive_batchers[ppermute_p] = _ppermute_batcher
batching.collective_axes[ppermute_p] = lambda params: _as_names(params["axis_name"])
deflinear(ppermute_p, _ppermute_transpose)


# ---- all_to_all ----------------------------------------------------------------------------------
all_to_all_p = lax._prim("all_to_all")


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract(
    x: ShapedArray,
    *,
    axis_name: Any,
    split_axis: int,
    concat_axis: int,
    axis_index_groups: Any,
    tiled: bool,
) -> ShapedArray:
    names = _as_names(axis_name)
    _check_bound(names, "all_to_all")
    size = _group_size(names, axis_index_groups)
    shape = list(x.shape)
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return ShapedArray(shape, x.dtype)


def _all_to_all_batcher(
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    axis_name: Any,
    split_axis: int,
    concat_axis: int,
    axis_index_groups: Any,
    tiled: bool,
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    frame = batching.current_axis()
    names = _as_names(axis_name)
    params = {"axis_name": axis_name, "axis_index_groups": axis_index_groups, "tiled": tiled}
    if frame.name is None or frame.name not in names:
        if d is not_mapped:
            return all_to_all_p.bind(
                x, split_axis=split_axis, concat_axis=concat_axis, **params
            ), None
        out = all_to_all_p.bind(
            x, split_axis=_phys(split_axis, d), concat_axis=_phys(concat_axis, d), **params
        )
        return out, d
    if axis_index_groups is not None:
        raise NotImplementedError("Please open a feature request!")
    if len(names) > 1:
        raise NotImplementedError("all_to_all over several named axes inside vmap")
    n = frame.size
    x = _batched_at(x, d, n, 0)  # (source example j, *shape)
    shape = _shape(x)[1:]
    sa, ca = split_axis, concat_axis
    chunk = shape[sa] // n
    # Split axis sa into (destination example k, chunk); k becomes the batch axis, and the
    # sources j are concatenated along axis ca.
    x = lax.reshape(x, (n, *shape[:sa], n, chunk, *shape[sa + 1 :]))
    perm, out_shape = [1 + sa], [n]
    for i, size in enumerate(shape):
        axis = 1 + i if i < sa else 2 + i
        if i == sa == ca:
            perm += [0, 2 + sa]
            out_shape.append(n * chunk)
        elif i == ca:
            perm += [0, axis]
            out_shape.append(n * size)
        elif i == sa:
            perm.append(2 + sa)
            out_shape.append(chunk)
        else:
            perm.append(axis)
            out_shape.append(size)
    return lax.reshape(lax.transpose(x, perm), out_shape), 0


def _all_to_all_transpose(
    ct: Any,
    x: Any,
    *,
    axis_name: Any,
    split_axis: int,
    concat_axis: int,
    axis_index_groups: Any,
    tiled: bool,
) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [
        all_to_all_p.bind(
            ct,
            axis_name=axis_name,
            split_axis=concat_axis,
            concat_axis=split_axis,
            axis_index_groups=axis_index_groups,
            tiled=tiled,
        )
    ]


all_to_all_p.def_impl(_unhandled("all_to_all", "axis_name"))
batching.primitive_batchers[all_to_all_p] = _all_to_all_batcher
batching.collective_axes[all_to_all_p] = lambda params: _as_names(params["axis_name"])
deflinear(all_to_all_p, _all_to_all_transpose)


# ---- the API -------------------------------------------------------------------------------------
def _reduce_checks(names: tuple[Any, ...], axis_index_groups: Any) -> Any:
    if any(_is_pos(a) for a in names) and axis_index_groups is not None:
        raise ValueError("axis_index_groups only supported for sums over just named axes")
    _validate_groups(axis_index_groups)
    return _canonical_groups(axis_index_groups)


def _axes_for(names: tuple[Any, ...], leaf: Any) -> tuple[Any, ...]:
    nd = _ndim(leaf)
    return tuple(_canonicalize_axis(a, nd) if _is_pos(a) else a for a in names)


def psum(x: Any, axis_name: AxisName, *, axis_index_groups: Any = None) -> Any:
    """Sum `x` (a pytree) over the named axis (or tuple of axes) `axis_name`, like JAX."""
    names = _as_names(axis_name)
    if not names:
        return x
    groups = _reduce_checks(names, axis_index_groups)
    leaves, tree = tree_flatten(x)
    leaves = [
        lax.convert_element_type(leaf, dtypes.int32)
        if core.get_aval(leaf).dtype is dtypes.bool_
        else leaf
        for leaf in leaves
    ]
    if not any(isinstance(leaf, core.Tracer) for leaf in leaves):
        # Constants are the same for every example: scale them by the number of examples.
        size = _group_size(names, groups)
        pos = [a for a in names if _is_pos(a)]
        outs = [
            _scale(
                lax.reduce_sum(lax.to_array(leaf), _axes_for(tuple(pos), leaf)) if pos else leaf,
                size,
            )
            for leaf in leaves
        ]
    else:
        outs = [
            psum_p.bind(leaf, axes=_axes_for(names, leaf), axis_index_groups=groups)
            for leaf in leaves
        ]
    return tree_unflatten(tree, outs)


def pmean(x: Any, axis_name: AxisName, *, axis_index_groups: Any = None) -> Any:
    """The mean of `x` over the named axis `axis_name` (psum divided by the axis size)."""
    x = psum(x, axis_name, axis_index_groups=axis_index_groups)
    n = psum(1, axis_name, axis_index_groups=axis_index_groups)
    return tree_map(lambda v: v / n, x)


def _pminmax(prim: Primitive) -> Callable[..., Any]:
    def fn(x: Any, axis_name: AxisName, *, axis_index_groups: Any = None) -> Any:
        names = _as_names(axis_name)
        groups = _reduce_checks(names, axis_index_groups)
        return tree_map(
            lambda leaf: prim.bind(leaf, axes=_axes_for(names, leaf), axis_index_groups=groups),
            x,
        )

    fn.__name__ = prim.name
    fn.__doc__ = f"All-reduce {prim.name[1:]} of `x` (a pytree) over the named axis `axis_name`."
    return fn


pmax = _pminmax(pmax_p)
pmin = _pminmax(pmin_p)


def axis_size(axis_name: AxisName) -> int:
    """The size of the named axis (the product of sizes for a tuple), as a Python int."""
    return _group_size(_as_names(axis_name))


def axis_index(axis_name: AxisName) -> Any:
    """This example's index along the named axis (row-major over a tuple of axes)."""
    if not isinstance(axis_name, (tuple, list)):
        return axis_index_p.bind(axis_name=axis_name)
    index: Any = lax.full((), 0, dtypes.int32, weak_type=True)
    inner = 1
    for name in reversed(axis_name):
        index = lax.add(index, lax.mul(axis_index(name), inner))
        inner *= axis_size(name)
    return index


def all_gather(
    x: Any,
    axis_name: AxisName,
    *,
    axis_index_groups: Any = None,
    axis: int = 0,
    tiled: bool = False,
    to: str = "varying",
) -> Any:
    """Gather `x` from every example along the named axis into a new axis `axis` (or, tiled,
    concatenated along the existing axis `axis`)."""
    allowed = {"varying", "reduced", "invarying"}
    if to not in allowed:
        raise ValueError(
            "Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are: "
            f"{allowed}"
        )
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not names:
        return x
    groups = _canonical_groups(axis_index_groups)
    size = _group_size(names, groups)

    def bind(leaf: Any) -> Any:
        nd = _ndim(leaf)
        dim = _canonicalize_axis(axis, nd if tiled else nd + 1)
        return all_gather_p.bind(
            leaf,
            all_gather_dimension=dim,
            axis_name=names,
            axis_index_groups=groups,
            axis_size=size,
            tiled=tiled,
        )

    return tree_map(bind, x)


def psum_scatter(
    x: Any,
    axis_name: AxisName,
    *,
    scatter_dimension: int = 0,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """Like `psum(x, axis_name)`, each example keeping only its slice along
    `scatter_dimension` (removed unless `tiled`)."""
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not names:
        return x
    size = _group_size(names, axis_index_groups)
    groups = _canonical_groups(axis_index_groups)

    def bind(leaf: Any) -> Any:
        _scattered_shape(_shape(leaf), scatter_dimension, size, tiled)
        return reduce_scatter_p.bind(
            leaf,
            scatter_dimension=scatter_dimension,
            axis_name=names,
            axis_index_groups=groups,
            axis_size=size,
            tiled=tiled,
        )

    return tree_map(bind, x)


def ppermute(x: Any, axis_name: AxisName, perm: Sequence[tuple[int, int]]) -> Any:
    """Send each example's `x` to another along the named axis: `perm` lists (source,
    destination) pairs; destinations nobody sends to receive zeros."""
    names = _as_names(axis_name)
    perm_t = tuple((int(s), int(d)) for s, d in perm)
    return tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=names, perm=perm_t), x)


def pshuffle(x: Any, axis_name: AxisName, perm: Sequence[int]) -> Any:
    """Example i receives example perm[i]'s `x` (a permutation of the axis)."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def all_to_all(
    x: Any,
    axis_name: AxisName,
    split_axis: int,
    concat_axis: int,
    *,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """Split axis `split_axis` of `x` into chunks sent to the examples along the named axis;
    the chunks received are concatenated (stacked, unless `tiled`) at `concat_axis`."""
    groups = _canonical_groups(axis_index_groups)

    def bind(leaf: Any) -> Any:
        size = _group_size(_as_names(axis_name), groups)
        sa, ca = split_axis, concat_axis
        shape = _shape(leaf)
        if tiled:
            if shape[sa] % size:
                raise ValueError(
                    f"The size of all_to_all split_axis ({shape[sa]}) has to be divisible by "
                    f"the size of the named axis {axis_name} ({size})"
                )
        else:
            if size != shape[sa]:
                raise ValueError(
                    "all_to_all requires the size of the mapped axis axis_name to equal "
                    f"x.shape[split_axis], but they are {size} and {shape[sa]} respectively."
                )
            if sa < ca:
                ca += 1  # concat_axis counts positions after split_axis is removed
                leaf = lax.expand_dims(leaf, (ca,))
            elif ca < sa:
                leaf = lax.expand_dims(leaf, (ca,))
                sa += 1
        out = all_to_all_p.bind(
            leaf,
            axis_name=axis_name,
            split_axis=sa,
            concat_axis=ca,
            axis_index_groups=groups,
            tiled=tiled,
        )
        if not tiled and sa != ca:
            out = lax.squeeze(out, (sa,))
        return out

    return tree_map(bind, x)


def pswapaxes(x: Any, axis_name: AxisName, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the named axis with the positional axis `axis` (all_to_all with both at `axis`)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


__all__ = [
    "all_gather",
    "all_gather_p",
    "all_to_all",
    "all_to_all_p",
    "axis_index",
    "axis_index_p",
    "axis_size",
    "pmax",
    "pmax_p",
    "pmean",
    "pmin",
    "pmin_p",
    "ppermute",
    "ppermute_p",
    "pshuffle",
    "psum",
    "psum_p",
    "psum_scatter",
    "pswapaxes",
    "reduce_scatter_p",
]
