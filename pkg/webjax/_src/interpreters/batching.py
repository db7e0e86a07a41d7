"""Vectorization (vmap): a trace whose tracers carry a value with one extra, mapped axis.

A `BatchTracer` stands for `axis_size` per-example values stacked along `batch_dim` of `val`
(or one value shared by all examples when `batch_dim` is `not_mapped`). Each primitive has a
rule `(vals, dims, **params) -> (out, out_dim)` computing the batched result in the parent
trace. The idea is Autodidax's vmap part, with JAX's context-based dispatch: a trace knows its
parent, and nested vmaps tell their tracers apart by `tracer._trace is self`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import core
from ..core import Primitive, ShapedArray, Trace, Tracer

# `not_mapped` marks a value that is the same for every example (JAX's name).
not_mapped = None
BatchDim = int | None

# rule(vals, dims, **params) -> (out, out_dim), or (outs, out_dims) for multiple_results.
primitive_batchers: dict[Primitive, Callable[..., Any]] = {}

# Collective primitives need a named axis; webjax's vmap does not support them yet.
COLLECTIVES = frozenset({
    "psum", "pmax", "pmin", "pmean", "all_gather", "all_to_all", "axis_index", "ppermute",
    "psum_scatter", "pbroadcast", "pgather",
})  # fmt: skip

# Array operations filled by the lax layer (this layer sits below lax).
transpose_fn: Callable[[Any, tuple[int, ...]], Any] = None  # type: ignore[assignment]
broadcast_in_dim_fn: Callable[[Any, tuple[int, ...], tuple[int, ...]], Any] = None  # type: ignore[assignment]


# ---- tracers and the trace -----------------------------------------------------------------------
class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim", "aval")

    def __init__(self, trace: BatchTrace, val: Any, batch_dim: BatchDim) -> None:
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self.aval = _unbatched_aval(core.get_aval(val), batch_dim)

    def __repr__(self) -> str:
        return f"BatchTracer(val={self.val!r}, batch_dim={self.batch_dim})"


def _unbatched_aval(aval: ShapedArray, dim: BatchDim) -> ShapedArray:
    if dim is not_mapped:
        return aval
    return aval.update(shape=aval.shape[:dim] + aval.shape[dim + 1 :])


class BatchTrace(Trace):
    """Maps every primitive over an axis of size `axis_size`."""

    def __init__(self, parent: Trace, axis_size: int, axis_name: Any = None) -> None:
        self.parent = parent
        self.axis_size = axis_size
        self.axis_name = axis_name

    def lift(self, x: Any) -> tuple[Any, BatchDim]:
        """(value, batch dim) of `x`; foreign values (constants, outer tracers) are unbatched."""
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        if primitive.name in COLLECTIVES:
            raise _collective_error(primitive, params, self.axis_name)
        vals, dims = _unzip([self.lift(a) for a in args])
        with core.set_current_trace(self.parent):
            if all(d is not_mapped for d in dims):
                return self._wrap(primitive, primitive.bind(*vals, **params), None)
            rule = primitive_batchers.get(primitive)
            if rule is None:
                raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
            out, out_dim = rule(vals, dims, **params)
        return self._wrap(primitive, out, out_dim)

    def _wrap(self, primitive: Primitive, out: Any, out_dim: Any) -> Any:
        if not primitive.multiple_results:
            return BatchTracer(self, out, out_dim)
        dims = out_dim if out_dim is not None else [not_mapped] * len(out)
        return [BatchTracer(self, o, d) for o, d in zip(out, dims, strict=True)]


def _unzip(pairs: list[tuple[Any, BatchDim]]) -> tuple[list[Any], list[BatchDim]]:
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _collective_error(primitive: Primitive, params: dict, axis_name: Any) -> Exception:
    name = params.get("axis_name", params.get("axes", axis_name))
    return NotImplementedError(
        f"Collective '{primitive.name}' over the named axis {name!r} is not supported by "
        f"webjax's vmap (vmap axis_name={axis_name!r})."
    )


# ---- helpers for rules ---------------------------------------------------------------------------
def moveaxis(x: Any, src: int, dst: int) -> Any:
    """Move axis `src` of `x` to position `dst` (both non-negative)."""
    if src == dst:
        return x
    perm = [i for i in range(core.get_aval(x).ndim) if i != src]
    perm.insert(dst, src)
    return transpose_fn(x, tuple(perm))


def broadcast(x: Any, size: int, axis: int) -> Any:
    """An unbatched value repeated `size` times along a new axis at position `axis`."""
    shape = list(core.get_aval(x).shape)
    dims = tuple(i if i < axis else i + 1 for i in range(len(shape)))
    shape.insert(axis, size)
    return broadcast_in_dim_fn(x, tuple(shape), dims)


def bdim_at_front(x: Any, dim: BatchDim, size: int) -> Any:
    """`x` with its batch axis first, broadcasting it there if it is unbatched."""
    if dim is not_mapped:
        return broadcast(x, size, 0)
    return moveaxis(x, dim, 0)


def matchaxis(x: Any, src: BatchDim, dst: int, size: int) -> Any:
    """`x` with its batch axis at `dst`, broadcasting it there if it is unbatched."""
    if src is not_mapped:
        return broadcast(x, size, dst)
    return moveaxis(x, src, dst)


# ---- the transformation --------------------------------------------------------------------------
def batch_flat(
    fun: Callable[..., Sequence[Any]],
    args: Sequence[Any],
    in_dims: Sequence[BatchDim],
    axis_size: int,
    axis_name: Any = None,
) -> tuple[list[Any], list[BatchDim]]:
    """Run `fun` on per-example views of `args`; return the batched outputs and their batch
    dims as they come (not_mapped for outputs that do not depend on a mapped input)."""
    trace = BatchTrace(core.find_cur_trace(), axis_size, axis_name)
    tracers = [
        a if d is not_mapped else BatchTracer(trace, a, d)
        for a, d in zip(args, in_dims, strict=True)
    ]
    with core.set_current_trace(trace):
        outs = list(fun(*tracers))
    return _unzip([trace.lift(o) for o in outs])


def vmap_flat(
    fun: Callable[..., Sequence[Any]],
    args: Sequence[Any],
    in_dims: Sequence[BatchDim],
    out_dims: Sequence[BatchDim] | Callable[[], Sequence[BatchDim]],
    axis_size: int,
    axis_name: Any = None,
) -> list[Any]:
    """Map `fun` (flat lists in and out) over axis `in_dims[i]` of each argument; put the mapped
    axis of each output at `out_dims[j]` (a callable is asked after `fun` ran, when the output
    structure is known). Unmapped outputs are broadcast, or left alone where out_dim is None."""
    outs, dims = batch_flat(fun, args, in_dims, axis_size, axis_name)
    targets = list(out_dims() if callable(out_dims) else out_dims)
    return [_to_out_dim(o, d, t, axis_size) for o, d, t in zip(outs, dims, targets, strict=True)]


def _to_out_dim(x: Any, src: BatchDim, dst: BatchDim, size: int) -> Any:
    if dst is None:
        if src is not_mapped:
            return x
        raise ValueError(
            f"at vmap out_axes, got axis spec None but output was batched on axis {src}"
        )
    ndim = core.get_aval(x).ndim + (1 if src is not_mapped else 0)
    if not -ndim <= dst < ndim:
        raise ValueError(f"axis {dst} is out of bounds for array of dimension {ndim}")
    return matchaxis(x, src, dst % ndim, size)
