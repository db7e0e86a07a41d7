"""Staging: traces that build jaxprs (make_jaxpr, jit) and partial evaluation (linearize).

`JaxprTrace` records every primitive applied to its tracers as a jaxpr equation. Values that
are not its own tracers (concrete arrays, Python scalars, tracers of outer traces) enter the
jaxpr as literals (scalar constants) or constvars (closed-over values).

With `partial=True` it is JAX's partial evaluator: an application whose inputs are all *known*
(not this trace's tracers) is not staged but evaluated in the parent trace; only work that
depends on the unknown inputs is recorded. Linearize is jvp under such a trace, with the
tangents unknown (Autodidax's idea; JAX's `JaxprTrace`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import core
from ..core import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    Var,
)

# Rules for primitives that need special handling while staging partially
# (e.g. cond/scan split into known and unknown parts). Signature:
# rule(trace, *args, **params) -> outputs
partial_eval_rules: dict[Primitive, Callable[..., Any]] = {}


class JaxprTracer(Tracer):
    __slots__ = ("aval",)

    def __init__(self, trace: JaxprTrace, aval: ShapedArray) -> None:
        self._trace = trace
        self.aval = aval

    def __repr__(self) -> str:
        return f"JitTracer({self.aval})"


class JaxprTrace(Trace):
    def __init__(self, parent: Trace | None = None, partial: bool = False) -> None:
        self.parent = parent if parent is not None else core.find_cur_trace()
        self.partial = partial
        self.eqns: list[JaxprEqn] = []
        self.vars: dict[int, Var] = {}  # id(tracer) -> var
        self.tracers: list[JaxprTracer] = []  # keeps ids stable
        self.const_vars: dict[int, Var] = {}  # id(value) -> constvar
        self.consts: list[tuple[Var, Any]] = []
        self.invars: list[Var] = []

    # ---- tracers and atoms -----------------------------------------------------------------
    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        t = self._new_tracer(aval)
        self.invars.append(self.vars[id(t)])
        return t

    def _new_tracer(self, aval: ShapedArray) -> JaxprTracer:
        t = JaxprTracer(self, aval)
        self.tracers.append(t)
        self.vars[id(t)] = Var(aval)
        return t

    def is_own(self, x: Any) -> bool:
        return isinstance(x, JaxprTracer) and x._trace is self

    def to_atom(self, x: Any) -> core.Atom:
        if self.is_own(x):
            return self.vars[id(x)]
        lit = literal_value(x)
        if lit is not None:
            return lit
        return self.const_var(x)

    def const_var(self, x: Any) -> Var:
        v = self.const_vars.get(id(x))
        if v is None:
            v = self.const_vars[id(x)] = Var(core.get_aval(x))
            self.consts.append((v, x))
        return v

    # ---- primitives ------------------------------------------------------------------------
    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        if core.constant_folding() and not any(isinstance(a, Tracer) for a in args):
            with core.set_current_trace(core.eval_trace):  # ensure_compile_time_eval
                return primitive.bind(*args, **params)
        if self.partial and not any(self.is_own(a) for a in args):
            with core.set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        if self.partial and primitive in partial_eval_rules:
            return partial_eval_rules[primitive](self, *args, **params)
        return self.stage(primitive, args, params)

    def stage(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        atoms = [self.to_atom(a) for a in args]
        if primitive.abstract_eval is None:
            raise NotImplementedError(
                f"primitive '{primitive.name}' cannot be staged (no shape rule)"
            )
        out = primitive.abstract_eval(*[a.aval for a in atoms], **params)
        out_avals = out if primitive.multiple_results else [out]
        tracers = [self._new_tracer(a) for a in out_avals]
        self.eqns.append(
            JaxprEqn(primitive, atoms, [self.vars[id(t)] for t in tracers], dict(params))
        )
        return tracers if primitive.multiple_results else tracers[0]

    # ---- results -----------------------------------------------------------------------------
    def to_jaxpr(self, outs: Sequence[Any], hoist_consts: bool = False) -> tuple[Jaxpr, list[Any]]:
        """The recorded jaxpr returning `outs`, and the values of its constvars."""
        outvars = [self.to_atom(o) for o in outs]
        constvars = [v for v, _ in self.consts]
        consts = [c for _, c in self.consts]
        jaxpr = Jaxpr(constvars, list(self.invars), outvars, list(self.eqns))
        jaxpr = _dce(jaxpr)
        kept = {id(v) for v in jaxpr.constvars}
        consts = [c for v, c in zip(constvars, consts, strict=True) if id(v) in kept]
        core.check_jaxpr(jaxpr)
        return jaxpr, consts


def literal_value(x: Any) -> Literal | None:
    """Python scalars and concrete 0-d constants become jaxpr literals."""
    if type(x) in (bool, int, float):
        return Literal(x, core.get_aval(x))
    const = getattr(x, "_literal_value", None)
    if const is not None and const() is not None:
        return Literal(x, x.aval)  # the array itself: evaluating the jaxpr gives it back
    return None


def has_effects(eqn: JaxprEqn) -> bool:
    """Whether `eqn` has side effects: an effectful primitive, or one whose sub-jaxprs (a cond's
    branches, a loop's body, a call's callee) hold one."""
    prim = eqn.primitive
    if prim.name in _EFFECTFUL or prim.effectful:
        return True
    return any(has_effects(e) for j in core.jaxprs_in_params(eqn.params) for e in j.eqns)


def _dce(jaxpr: Jaxpr) -> Jaxpr:
    """Drop equations whose outputs are unused (all but the effectful ones are pure)."""
    live = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(id(v) in live for v in eqn.outvars) or has_effects(eqn):
            eqns.append(eqn)
            live.update(id(v) for v in eqn.invars if isinstance(v, Var))
    eqns.reverse()
    constvars = [v for v in jaxpr.constvars if id(v) in live]
    return Jaxpr(constvars, jaxpr.invars, jaxpr.outvars, eqns)


_EFFECTFUL: set[str] = {"debug_callback", "io_callback"}


def trace_to_jaxpr(
    fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray]
) -> tuple[Jaxpr, list[Any], list[Any]]:
    """Stage `fun` (flat args -> flat list of outputs) into a jaxpr.

    Returns the jaxpr (constvars first), the constants, and the raw outputs (for inspection).
    """
    trace = JaxprTrace()
    args = [trace.new_arg(a) for a in in_avals]
    with core.set_current_trace(trace):
        outs = list(fun(*args))
    jaxpr, consts = trace.to_jaxpr(outs)
    return jaxpr, consts, outs


def trace_to_closed_jaxpr(
    fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray]
) -> ClosedJaxpr:
    jaxpr, consts, _ = trace_to_jaxpr(fun, in_avals)
    return ClosedJaxpr(jaxpr, consts)


def convert_constvars_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """Turn constvars into leading invars (closure conversion)."""
    return Jaxpr([], [*jaxpr.constvars, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns)


def partial_eval_jaxpr(
    closed: ClosedJaxpr, unknowns: Sequence[bool], instantiate: Sequence[bool]
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]:
    """Split a jaxpr into a known part and an unknown part.

    known:   (known inputs) -> (known outputs, residuals)
    unknown: (residuals, unknown inputs) -> (unknown outputs)
    Returns (known, unknown, out_unknowns, num_residuals). Outputs flagged in `instantiate`
    are made unknown even when they could be computed from known inputs alone.
    """
    known_trace = JaxprTrace()
    pe = JaxprTrace(parent=known_trace, partial=True)
    args = [
        pe.new_arg(a) if u else known_trace.new_arg(a)
        for a, u in zip(closed.in_avals, unknowns, strict=True)
    ]
    with core.set_current_trace(pe):
        outs = core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    out_unknowns = [pe.is_own(o) or bool(inst) for o, inst in zip(outs, instantiate, strict=True)]
    # Residuals: known values the unknown part closes over.
    unknown_outs = [o for o, u in zip(outs, out_unknowns, strict=True) if u]
    for o in unknown_outs:
        if not pe.is_own(o):
            pe.to_atom(o)  # a known output that must be unknown: passes as a residual
    pe_jaxpr, residuals = pe.to_jaxpr(unknown_outs)
    unknown_jaxpr = convert_constvars_jaxpr(pe_jaxpr)
    known_outs = [o for o, u in zip(outs, out_unknowns, strict=True) if not u]
    k_jaxpr, k_consts = known_trace.to_jaxpr([*known_outs, *residuals])
    return (
        ClosedJaxpr(k_jaxpr, k_consts),
        ClosedJaxpr(unknown_jaxpr, []),
        out_unknowns,
        len(residuals),
    )


# ---- the `jax.interpreters.partial_eval` API libraries call --------------------------------------
class PartialVal(tuple):
    """A value known (`(None, const)`) or unknown, standing for an abstract value
    (`(aval, None)`), as the partial evaluator's inputs and outputs."""

    def __new__(cls, xs: tuple[Any, Any]) -> PartialVal:
        pv, const = xs
        if pv is not None and const is not None:
            raise ValueError("a PartialVal is either known or unknown")
        return tuple.__new__(cls, (pv, const))

    @classmethod
    def known(cls, const: Any) -> PartialVal:
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval: ShapedArray) -> PartialVal:
        return PartialVal((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        return self[1] if self[0] is None else None

    def get_aval(self) -> ShapedArray:
        return core.get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(
    fun: Any, pvals: Sequence[PartialVal], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Partially evaluate the wrapped function `fun` (`fun.call_wrapped(*flat_args)`): known
    inputs compute, unknown ones are staged. Returns the jaxpr of the unknown part (its inputs
    the unknown inputs, its constvars the known values it reads), the outputs as PartialVals
    and the constants."""
    trace = JaxprTrace(partial=True)
    args = [pv.get_known() if pv.is_known() else trace.new_arg(pv.get_aval()) for pv in pvals]
    with core.set_current_trace(trace):
        outs = list(fun.call_wrapped(*args))
    insts = [instantiate] * len(outs) if isinstance(instantiate, bool) else list(instantiate)
    out_pvals, staged = [], []
    for o, inst in zip(outs, insts, strict=True):
        if trace.is_own(o) or inst:
            staged.append(o)
            out_pvals.append(PartialVal.unknown(core.get_aval(o)))
        else:
            out_pvals.append(PartialVal.known(o))
    jaxpr, consts = trace.to_jaxpr(staged)
    return jaxpr, out_pvals, consts


def trace_to_jaxpr_dynamic(
    fun: Any, in_avals: Sequence[ShapedArray], **_: Any
) -> tuple[Jaxpr, list[ShapedArray], list[Any]]:
    """Stage the wrapped function `fun` on arguments of `in_avals`: (jaxpr, out avals, consts)."""
    jaxpr, consts, _outs = trace_to_jaxpr(lambda *a: fun.call_wrapped(*a), in_avals)
    return jaxpr, [v.aval for v in jaxpr.outvars], consts


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: Sequence[bool], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[bool]]:
    """`jaxpr` with only the outputs flagged in `used_outputs` and the equations they need;
    also which inputs are still used (inputs flagged in `instantiate` are kept)."""
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs, strict=True) if u]
    pruned = _dce(Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, jaxpr.eqns))
    live = {id(v) for v in pruned.outvars if isinstance(v, Var)}
    for eqn in pruned.eqns:
        live.update(id(v) for v in eqn.invars if isinstance(v, Var))
    insts = (
        [instantiate] * len(jaxpr.invars) if isinstance(instantiate, bool) else list(instantiate)
    )
    used_inputs = [id(v) in live or bool(i) for v, i in zip(jaxpr.invars, insts, strict=True)]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs, strict=True) if u]
    return Jaxpr(pruned.constvars, invars, pruned.outvars, pruned.eqns), used_inputs
