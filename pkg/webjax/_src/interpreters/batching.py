"""Vectorization (vmap): a trace whose tracers carry a value with one extra, mapped axis.

A `BatchTracer` stands for `axis_size` per-example values stacked along `batch_dim` of `val`
(or one value shared by all examples when `batch_dim` is `not_mapped`). Each primitive has a
rule `(vals, dims, **params) -> (out, out_dim)` computing the batched result in the parent
trace. The idea is Autodidax's vmap part, with JAX's context-based dispatch: a trace knows its
parent, and nested vmaps tell their tracers apart by `tracer._trace is self`.

Named axes: `vmap(axis_name=...)` binds the name (with its size) in an axis env while the
function is traced, and its BatchTrace handles the collectives over that name (their rules run
even on unbatched operands and read the axis with `current_axis()`); other traces pass them on.
Rules of higher-order primitives re-batch their bodies over the same named axis (the default
of `batch_flat`), so collectives inside `jit`, `cond`, `scan`, ... reach the right trace.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from .. import core
from ..core import Primitive, ShapedArray, Trace, Tracer

# `not_mapped` marks a value that is the same for every example (JAX's name).
not_mapped = None
BatchDim = int | None

# rule(vals, dims, **params) -> (out, out_dim), or (outs, out_dims) for multiple_results.
primitive_batchers: dict[Primitive, Callable[..., Any]] = {}

# Collectives (primitives over named axes) registered by the lax layer: primitive -> a function
# of its params giving the axis names it refers to. Their batching rules run even when no operand
# is batched (a collective over the mapped axis acts on unbatched values too) and read the axis
# being mapped with `current_axis()`.
collective_axes: dict[Primitive, Callable[[dict], tuple[Any, ...]]] = {}

# JAX collectives webjax does not implement: batching them names the gap.
COLLECTIVES = frozenset({
    "psum", "pmax", "pmin", "pmean", "all_gather", "all_to_all", "axis_index", "ppermute",
    "psum_scatter", "reduce_scatter", "pbroadcast", "pgather",
})  # fmt: skip

# Array operations filled by the lax layer (this layer sits below lax).
transpose_fn: Callable[[Any, tuple[int, ...]], Any] = None  # type: ignore[assignment]
broadcast_in_dim_fn: Callable[[Any, tuple[int, ...], tuple[int, ...]], Any] = None  # type: ignore[assignment]


# ---- named axes ----------------------------------------------------------------------------------
class AxisData(NamedTuple):
    """The axis a BatchTrace maps: its name (None when unnamed) and size."""

    name: Any
    size: int


# The named axes bound while a vmapped function is traced (innermost last), as JAX's axis env:
# collectives look up sizes here, and staging checks that the names they use are bound.
_axis_env: list[AxisData] = []
# The axes of the BatchTraces whose rules are running (innermost last): rules of higher-order
# primitives re-batch their bodies over the same named axis (`batch_flat`'s default).
_rule_axes: list[AxisData] = []


@contextlib.contextmanager
def extend_axis_env(frames: Sequence[tuple[Any, int]]) -> Iterator[None]:
    """Bind the named axes `frames` ((name, size) pairs; None names nothing) for the duration
    of the block."""
    n = len(_axis_env)
    _axis_env.extend(AxisData(name, int(size)) for name, size in frames if name is not None)
    try:
        yield
    finally:
        del _axis_env[n:]


def axis_is_bound(name: Any) -> bool:
    return any(f.name == name for f in _axis_env)


def axis_size(name: Any) -> int:
    """The size of the innermost axis bound as `name` (JAX's NameError when none is)."""
    for frame in reversed(_axis_env):
        if frame.name == name:
            return frame.size
    raise NameError(f"unbound axis name: {name}")


def axis_env_key() -> tuple[AxisData, ...]:
    """The bound axes, for caches of traces that may depend on them (jit)."""
    return tuple(_axis_env)


def current_axis() -> AxisData:
    """The axis of the BatchTrace whose rule is running (for collective rules)."""
    return _rule_axes[-1]


def uses_axis(params: dict, name: Any) -> bool:
    """Whether a collective over `name` occurs in the sub-jaxprs among `params`."""
    return any(_jaxpr_uses_axis(j, name) for j in core.jaxprs_in_params(params))


def _jaxpr_uses_axis(jaxpr: core.Jaxpr, name: Any) -> bool:
    for eqn in jaxpr.eqns:
        names = collective_axes.get(eqn.primitive)
        if names is not None and name in names(eqn.params):
            return True
        if any(_jaxpr_uses_axis(j, name) for j in core.jaxprs_in_params(eqn.params)):
            return True
    return False


# ---- tracers and the trace -----------------------------------------------------------------------
class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim", "aval")

    def __init__(self, trace: BatchTrace, val: Any, batch_dim: BatchDim) -> None:
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self.aval = _unbatched_aval(core.get_aval(val), batch_dim)

    def __repr__(self) -> str:
        return f"VmapTracer(aval={self.aval}, batched={core.get_aval(self.val)})"


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
        self.axis_data = AxisData(axis_name, axis_size)

    def lift(self, x: Any) -> tuple[Any, BatchDim]:
        """(value, batch dim) of `x`; foreign values (constants, outer tracers) are unbatched."""
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        collective = primitive in collective_axes
        if not collective and primitive.name in COLLECTIVES:
            raise _collective_error(primitive, params, self.axis_name)
        vals, dims = _unzip([self.lift(a) for a in args])
        if not collective and all(d is not_mapped for d in dims):
            if self.axis_name is None or not uses_axis(params, self.axis_name):
                with core.set_current_trace(self.parent):
                    return self._wrap(primitive, primitive.bind(*vals, **params), None)
            if not vals:  # a call without operands (jit of a nullary function): inline it
                closed = params.get("jaxpr")
                if isinstance(closed, core.ClosedJaxpr) and primitive.multiple_results:
                    return core.eval_jaxpr(closed.jaxpr, closed.consts)
                raise NotImplementedError(
                    f"'{primitive.name}' without operands, over the named axis "
                    f"{self.axis_name!r} inside vmap"
                )
            # The body uses this named axis: batch it (on one operand made batched).
            with core.set_current_trace(self.parent):
                vals[-1], dims[-1] = broadcast(vals[-1], self.axis_size, 0), 0
        rule = primitive_batchers.get(primitive)
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
        _rule_axes.append(self.axis_data)
        try:
            with core.set_current_trace(self.parent):
                out, out_dim = rule(vals, dims, **params)
        finally:
            _rule_axes.pop()
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
class _Inherit:
    """`batch_flat`'s default axis name: that of the BatchTrace whose rule is running."""

    def __repr__(self) -> str:
        return "INHERIT"


INHERIT: Any = _Inherit()


def rule_axis_name(axis_size: int) -> Any:
    """The name of the axis a running batching rule maps (None outside rules, or when it maps
    an axis of another size): rules that batch a body later (closures) capture it here."""
    if _rule_axes and _rule_axes[-1].size == axis_size:
        return _rule_axes[-1].name
    return None


def batch_flat(
    fun: Callable[..., Sequence[Any]],
    args: Sequence[Any],
    in_dims: Sequence[BatchDim],
    axis_size: int,
    axis_name: Any = INHERIT,
) -> tuple[list[Any], list[BatchDim]]:
    """Run `fun` on per-example views of `args`; return the batched outputs and their batch
    dims as they come (not_mapped for outputs that do not depend on a mapped input).

    `axis_name` names the mapped axis for collectives; by default a batching rule's body is
    mapped over the named axis of the trace running the rule (so `vmap(jit(f), axis_name=...)`
    reaches the collectives inside `f`)."""
    if axis_name is INHERIT:
        axis_name = rule_axis_name(axis_size)
    trace = BatchTrace(core.find_cur_trace(), axis_size, axis_name)
    tracers = [
        a if d is not_mapped else BatchTracer(trace, a, d)
        for a, d in zip(args, in_dims, strict=True)
    ]
    frames = [] if axis_name is None else [(axis_name, axis_size)]
    with core.set_current_trace(trace), extend_axis_env(frames):
        outs = list(fun(*tracers))
    return _unzip([trace.lift(o) for o in outs])


def vmap_flat(
    fun: Callable[..., Sequence[Any]],
    args: Sequence[Any],
    in_dims: Sequence[BatchDim],
    out_dims: Sequence[BatchDim] | Callable[[], Sequence[BatchDim]],
    axis_size: int,
    axis_name: Any = INHERIT,
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


# ---- rule builders (the `jax.interpreters.batching` API for user primitives) ---------------------
# Rules that also receive the axis being mapped: rule(axis_data, vals, dims, **params). JAX keeps
# these apart; here they are wrapped into `primitive_batchers` entries on registration.
class _AxisRuleTable(dict):
    def __setitem__(self, primitive: Primitive, rule: Callable[..., Any]) -> None:
        super().__setitem__(primitive, rule)

        def batcher(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> Any:
            return rule(current_axis(), vals, dims, **params)

        primitive_batchers[primitive] = batcher


axis_primitive_batchers: dict[Primitive, Callable[..., Any]] = _AxisRuleTable()
fancy_primitive_batchers: dict[Primitive, Callable[..., Any]] = axis_primitive_batchers


def _same_dim(primitive: Primitive, dims: Sequence[BatchDim]) -> BatchDim:
    mapped = {d for d in dims if d is not not_mapped}
    if len(mapped) > 1:
        raise ValueError(
            f"vectorized batching rule of '{primitive.name}' got operands batched along "
            f"different axes {tuple(dims)}"
        )
    return mapped.pop() if mapped else not_mapped


def defvectorized(prim: Primitive) -> None:
    """`prim` acts on each element independently of the others and of its shape: batched
    operands (all along the same axis) go through as they are."""

    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> Any:
        out = prim.bind(*vals, **params)
        dim = _same_dim(prim, dims)
        return out, ([dim] * len(out) if prim.multiple_results else dim)

    primitive_batchers[prim] = rule


def defbroadcasting(prim: Primitive) -> None:
    """`prim` is elementwise with NumPy broadcasting: batch axes move to the front, operands
    of lower rank get unit axes after it."""

    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any) -> Any:
        avals = [core.get_aval(v) for v in vals]
        if all(d == dims[0] for d in dims) and len({a.shape for a in avals}) == 1:
            out = prim.bind(*vals, **params)
            return out, ([dims[0]] * len(out) if prim.multiple_results else dims[0])
        rank = max(a.ndim - (d is not not_mapped) for a, d in zip(avals, dims, strict=True))
        moved = []
        for v, a, d in zip(vals, avals, dims, strict=True):
            if d is not_mapped:
                moved.append(v)
                continue
            v = moveaxis(v, d, 0)
            missing = rank - (a.ndim - 1)
            if missing:
                shape = (a.shape[d], *(1,) * missing, *(s for i, s in enumerate(a.shape) if i != d))
                keep = (0, *range(1 + missing, len(shape)))
                v = broadcast_in_dim_fn(v, shape, keep)
            moved.append(v)
        out = prim.bind(*moved, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)

    primitive_batchers[prim] = rule


def defreducer(prim: Primitive) -> None:
    """`prim` reduces its operand over the `axes` parameter: the axes shift past the batch
    axis, which stays mapped."""

    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], *, axes: Any, **params: Any) -> Any:
        (x,), (d,) = vals, dims
        if d is not_mapped:
            return prim.bind(x, axes=axes, **params), not_mapped
        new_axes = tuple(a if a < d else a + 1 for a in axes)
        out_dim = d - sum(1 for a in axes if a < d)
        if "input_shape" in params:
            params = {**params, "input_shape": core.get_aval(x).shape}
        return prim.bind(x, axes=new_axes, **params), out_dim

    primitive_batchers[prim] = rule


def register_vmappable(*args: Any, **kwargs: Any) -> None:
    raise NotImplementedError(
        "batching.register_vmappable (custom vmappable container types) is not supported by "
        "webjax's vmap"
    )


def unregister_vmappable(data_type: type) -> None:
    raise NotImplementedError("batching.unregister_vmappable: webjax has no vmappable types")
