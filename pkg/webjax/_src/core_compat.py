"""The names of `jax.core` that JAX programs still use (`jax.core.AbstractValue`, `eval_jaxpr`,
`eval_context`, the shape-polymorphism predicates, ...), over webjax's tracing core. webjax
shapes are static, so every dimension is a constant.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import callback, checkpoint, core, custom_derivatives, debugging, jit
from .core import ClosedJaxpr, Jaxpr, JaxprEqn, Primitive, ShapedArray, Var
from .core import eval_context as eval_context
from .core import jaxprs_in_params as jaxprs_in_params
from .dispatch.array import Array
from .interpreters import batching
from .interpreters import partial_eval as pe
from .lax import (
    control_flow,
    convolution,
    eig,
    fft,
    linalg,
    linear_solve,
    parallel,
    primitive_names,
    slicing,
    sorting,
    windowed,
)
from .lax import lax as lax_ops
from .sharding import AbstractMesh, NamedSharding, PartitionSpec

# webjax has one kind of abstract value: the base class JAX programs test against is it.
AbstractValue = core.ShapedArray
DropVar = core._DropVar
InconclusiveDimensionOperation = core.ConcretizationTypeError
ParamDict = dict[str, Any]
Value = Any


def eval_jaxpr(
    jaxpr: core.Jaxpr, consts: Any, *args: Any, propagate_source_info: bool = True
) -> Any:
    """Evaluate `jaxpr` on `args` (its constants given as `consts`): the list of outputs."""
    del propagate_source_info
    return core.eval_jaxpr(jaxpr, consts, *args)


def is_constant_dim(d: Any) -> bool:
    """webjax shapes are static: every dimension is a constant."""
    return isinstance(d, int)


def is_constant_shape(s: Any) -> bool:
    return all(is_constant_dim(d) for d in s)


def max_dim(d1: Any, d2: Any) -> Any:
    return max(d1, d2)


def min_dim(d1: Any, d2: Any) -> Any:
    return min(d1, d2)


@functools.cache
def _unsharded(ndim: int) -> NamedSharding:
    return NamedSharding(AbstractMesh((), ()), PartitionSpec(*[None] * ndim))


core.unsharded = _unsharded


def shaped_abstractify(x: Any) -> ShapedArray:
    """The abstract value of `x` (arrays, tracers, Python and NumPy scalars)."""
    return core.get_aval(x)


def raise_to_shaped(aval: Any, weak_type: Any = None) -> ShapedArray:
    """webjax's abstract values are all shaped already."""
    return aval if weak_type is None else aval.update(weak_type=weak_type)


# ---- traces --------------------------------------------------------------------------------------
def find_top_trace(_: Any = None) -> core.Trace:
    """The current trace (dispatch is by context: the arguments do not matter)."""
    return core.find_cur_trace()


class OpaqueTraceState:
    """An identity token of the trace current when it was taken: equal tokens mean the same
    trace, so a library can tell whether it still runs at the level it started at."""

    __slots__ = ("_trace",)

    def __init__(self, trace: core.Trace) -> None:
        self._trace = trace

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueTraceState) and other._trace is self._trace

    def __hash__(self) -> int:
        return id(self._trace)


def get_opaque_trace_state(convention: Any = None) -> OpaqueTraceState:
    del convention
    return OpaqueTraceState(core.find_cur_trace())


@contextlib.contextmanager
def take_current_trace() -> Iterator[core.Trace]:
    """The current trace, with the eval trace current inside the block."""
    trace = core.find_cur_trace()
    with core.set_current_trace(core.eval_trace):
        yield trace


set_current_trace = core.set_current_trace


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    return any(isinstance(t, pe.JaxprTrace) and not t.partial for t in core._current_trace)


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    return any(isinstance(t, batching.BatchTrace) for t in core._current_trace)


def unsafe_get_axis_names_DO_NOT_USE() -> list[Any]:
    return [f.name for f in batching._axis_env]


def nonempty_axis_env_DO_NOT_USE() -> bool:
    return bool(batching._axis_env)


class TraceTag:
    """An identity shared by the traces of one transformation."""

    __slots__ = ()


# ---- avals ---------------------------------------------------------------------------------------
def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """`aval` without its mapped axis `axis` (of length `size`)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(
            f"axis {axis} of {aval.str_short()} has size {aval.shape[axis]}, not {size}"
        )
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1 :])


def unmapped_aval(
    size: int, axis: int | None, aval: ShapedArray, explicit_mesh_axis: Any = None
) -> ShapedArray:
    """`aval` with a mapped axis of length `size` inserted at `axis`."""
    del explicit_mesh_axis
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def primal_dtype_to_tangent_dtype(primal_dtype: Any) -> Any:
    """float0 for integer and boolean values, the dtype itself otherwise."""
    dt = core.dtypes.dtype(primal_dtype)
    return core.dtypes.float0() if dt.kind in "biu" else dt


class AbstractToken:
    """The abstract value of an ordering token (webjax orders effects itself)."""

    def str_short(self, short_dtypes: bool = False) -> str:
        return "Tok"

    def __repr__(self) -> str:
        return "AbstractToken()"


abstract_token = AbstractToken()


class Token:
    """An ordering token value."""

    def __init__(self, buf: Any = None) -> None:
        self._buf = buf

    @property
    def aval(self) -> AbstractToken:
        return abstract_token

    def block_until_ready(self) -> Token:
        return self


class Effect:
    """The base class of side-effect kinds a primitive may declare."""


Effects = frozenset
no_effects: frozenset = frozenset()
array_types: set[type] = {Array}


# ---- jaxprs --------------------------------------------------------------------------------------
def gensym(suffix: str = "") -> Callable[[ShapedArray], Var]:
    """A maker of fresh jaxpr variables of a given aval."""
    del suffix
    return Var


def new_jaxpr_eqn(
    invars: Sequence[Any],
    outvars: Sequence[Var],
    primitive: Primitive,
    params: dict[str, Any],
    effects: Any = no_effects,
    source_info: Any = None,
    ctx: Any = None,
) -> JaxprEqn:
    del effects, source_info, ctx
    return JaxprEqn(primitive, list(invars), list(outvars), dict(params))


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The jaxprs directly inside `jaxpr`'s equations."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr, *args: Any) -> Any:
    """Evaluate `closed_jaxpr` on `args` (a list of outputs); without `args`, that function."""
    if not args:
        return core.jaxpr_as_fun(closed_jaxpr)
    return core.eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)


def call_impl(f: Any, *args: Any, **params: Any) -> Any:
    """Evaluate the wrapped function `f` on `args` (a call primitive's evaluation)."""
    del params
    return f.call_wrapped(*args)


class CallPrimitive(Primitive):
    """A primitive whose first operand is a wrapped function it calls: webjax inlines the call
    in the current trace (a call's jvp, batching and staging are those of its body)."""

    multiple_results = True

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.def_impl(call_impl)

    def bind(self, fun: Any, *args: Any, **params: Any) -> Any:  # type: ignore[override]
        return fun.call_wrapped(*args)


_PRIMITIVE_MODULES = (
    lax_ops, primitive_names, control_flow, convolution, eig, fft, linalg, linear_solve,
    parallel, slicing, sorting, windowed, jit, custom_derivatives, checkpoint, callback,
    debugging,
)  # fmt: skip


def primitives_by_name() -> dict[str, Primitive]:
    """Every primitive of lax and of the higher-order layers by its Python name (`add_p`,
    `jit_p`, ...; `remat_p` is `checkpoint_p`)."""
    out = {}
    for mod in _PRIMITIVE_MODULES:
        for n, v in vars(mod).items():
            if n.endswith("_p") and isinstance(v, Primitive):
                out[n] = v
    if "checkpoint_p" in out:
        out["remat_p"] = out["checkpoint_p"]
    return out
