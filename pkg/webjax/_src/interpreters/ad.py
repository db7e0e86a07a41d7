"""Automatic differentiation: forward mode (jvp), linearize, transposition and reverse mode.

Forward mode is a trace whose tracers carry (primal, tangent). Reverse mode is Autodidax's
recipe: linearize = jvp under a partial evaluator with the tangents unknown, giving a linear
jaxpr; vjp = transpose that jaxpr by walking it backwards with each primitive's transpose rule.
Tangents may be symbolic zeros (`Zero`) so untouched inputs cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import core
from ..core import Jaxpr, Literal, Primitive, ShapedArray, Trace, Tracer, Var
from . import partial_eval as pe

primitive_jvps: dict[Primitive, Callable[..., Any]] = {}
primitive_transposes: dict[Primitive, Callable[..., Any]] = {}
# Primitives with no derivative information (integer-valued outputs): tangents are zero.
nondifferentiable: set[Primitive] = set()

# Filled by the lax layer (these need array operations).
zeros_like_aval: Callable[[ShapedArray], Any] = None  # type: ignore[assignment]
add_tangents: Callable[[Any, Any], Any] = None  # type: ignore[assignment]


class Zero:
    """A symbolic zero tangent/cotangent of a given abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval})"


def instantiate(t: Any) -> Any:
    return zeros_like_aval(t.aval) if isinstance(t, Zero) else t


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    return aval.strip_weak_type()


def add_maybe_zero(a: Any, b: Any) -> Any:
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    return add_tangents(a, b)


# ---- forward mode -------------------------------------------------------------------------------
class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "aval")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self.aval = core.get_aval(primal)

    def __repr__(self) -> str:
        primal = repr(self.primal) if isinstance(self.primal, Tracer) else str(self.primal)
        t = self.tangent
        if isinstance(t, pe.JaxprTracer) and t._trace.partial:
            # a tangent staged by linearize: JAX shows reverse-mode tracers as GradTracer
            return f"GradTracer(primal={primal}, typeof(tangent)={t.aval.str_short(True)})"
        tangent = repr(t) if isinstance(t, Tracer) else str(t)
        return f"JVPTracer(primal={primal}, tangent={tangent})"

    def to_concrete_value(self) -> Any:
        return core.to_concrete(self.primal)


class JVPTrace(Trace):
    def __init__(self, parent: Trace) -> None:
        self.parent = parent

    def lift(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero(tangent_aval(core.get_aval(x)))

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        primals, tangents = zip(*(self.lift(a) for a in args), strict=True) if args else ((), ())
        with core.set_current_trace(self.parent):
            if all(isinstance(t, Zero) for t in tangents) or primitive in nondifferentiable:
                out = primitive.bind(*primals, **params)
                if primitive.multiple_results:
                    return [self.pure(o) for o in out]
                return self.pure(out)
            rule = primitive_jvps.get(primitive)
            if rule is None:
                raise NotImplementedError(
                    f"Differentiation rule for '{primitive.name}' not implemented"
                )
            primal_out, tangent_out = rule(list(primals), list(tangents), **params)
        if primitive.multiple_results:
            return [self.make(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.make(primal_out, tangent_out)

    def pure(self, x: Any) -> Any:
        return JVPTracer(self, x, Zero(tangent_aval(core.get_aval(x))))

    def make(self, primal: Any, tangent: Any) -> JVPTracer:
        return JVPTracer(self, primal, tangent)


def jvp_flat(
    fun: Callable[..., Sequence[Any]], primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """Push tangents through `fun` (flat lists in and out)."""
    trace = JVPTrace(core.find_cur_trace())
    in_tracers = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents, strict=True)]
    with core.set_current_trace(trace):
        outs = list(fun(*in_tracers))
    primal_outs, tangent_outs = [], []
    for o in outs:
        p, t = trace.lift(o)
        primal_outs.append(p)
        tangent_outs.append(t)
    return primal_outs, tangent_outs


# ---- linearize ----------------------------------------------------------------------------------
class LinearFunction:
    """The linear map `tangents -> tangents` that linearize returns, as a jaxpr."""

    def __init__(self, jaxpr: Jaxpr, consts: list[Any], out_zeros: list[Any]) -> None:
        self.jaxpr = jaxpr
        self.consts = consts
        self.out_zeros = out_zeros  # Zero for outputs known to be zero, else None

    def __call__(self, *tangents: Any) -> list[Any]:
        outs = iter(core.eval_jaxpr(self.jaxpr, self.consts, *tangents))
        return [z if z is not None else next(outs) for z in self.out_zeros]


def jvp_jaxpr(
    closed: core.ClosedJaxpr, nonzero: tuple[bool, ...], instantiate_outs: Any
) -> tuple[core.ClosedJaxpr, list[bool]]:
    """The jvp of `closed` as a jaxpr: (primals, nonzero tangents) -> (primals, tangents).

    Output tangents flagged in `instantiate_outs` are materialized (as zeros if need be); others
    are dropped when symbolically zero. Returns the jaxpr and which output tangents it has."""
    avals = closed.in_avals
    t_avals = [tangent_aval(a) for a, nz in zip(avals, nonzero, strict=True) if nz]
    out_nonzero: list[bool] = []

    def fun(*args: Any) -> list[Any]:
        primals = args[: len(avals)]
        it = iter(args[len(avals) :])
        tangents = [
            next(it) if nz else Zero(tangent_aval(a)) for nz, a in zip(nonzero, avals, strict=True)
        ]
        p_out, t_out = jvp_flat(
            lambda *a: core.eval_jaxpr(closed.jaxpr, closed.consts, *a), primals, tangents
        )
        if instantiate_outs is not None:
            t_out = [
                instantiate(t) if inst else t
                for t, inst in zip(t_out, instantiate_outs, strict=True)
            ]
        out_nonzero[:] = [not isinstance(t, Zero) for t in t_out]
        return [*p_out, *[t for t in t_out if not isinstance(t, Zero)]]

    return pe.trace_to_closed_jaxpr(fun, [*avals, *t_avals]), out_nonzero


def linearize_flat(
    fun: Callable[..., Sequence[Any]], primals: Sequence[Any]
) -> tuple[list[Any], LinearFunction]:
    partial = pe.JaxprTrace(partial=True)
    tangent_args = [partial.new_arg(tangent_aval(core.get_aval(p))) for p in primals]
    with core.set_current_trace(partial):
        primal_outs, tangent_outs = jvp_flat(fun, primals, tangent_args)
    out_zeros: list[Any] = []
    staged = []
    for t in tangent_outs:
        if isinstance(t, Zero):
            out_zeros.append(t)
        else:
            out_zeros.append(None)
            staged.append(t)
    jaxpr, consts = partial.to_jaxpr(staged)
    return primal_outs, LinearFunction(jaxpr, consts, out_zeros)


# ---- transposition ------------------------------------------------------------------------------
class UndefinedPrimal:
    """A linear input of an equation being transposed (its value is what we solve for)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short(True)})"


def is_undefined(x: Any) -> bool:
    return isinstance(x, UndefinedPrimal)


def backward_pass(
    jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], cotangents: Sequence[Any]
) -> list[Any]:
    """Transpose `jaxpr` in its `UndefinedPrimal` arguments, applied to output cotangents.

    Equations that do not depend on undefined inputs are evaluated forwards first (they are
    the non-linear parts, e.g. residual computations). Returns one cotangent per argument
    (Zero where none flows, None for defined arguments)."""
    primal_env: dict[int, Any] = {}
    ct_env: dict[int, Any] = {}
    linear_vars: set[int] = set()

    for v, c in zip(jaxpr.constvars, consts, strict=True):
        primal_env[id(v)] = c
    for v, a in zip(jaxpr.invars, args, strict=True):
        if is_undefined(a):
            linear_vars.add(id(v))
        else:
            primal_env[id(v)] = a
    lin_eqns = []
    for eqn in jaxpr.eqns:
        if any(isinstance(x, Var) and id(x) in linear_vars for x in eqn.invars):
            linear_vars.update(id(v) for v in eqn.outvars)
            lin_eqns.append(eqn)
            continue
        ins = [x.val if isinstance(x, Literal) else primal_env[id(x)] for x in eqn.invars]
        outs = eqn.primitive.bind(*ins, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        for v, o in zip(eqn.outvars, outs, strict=True):
            primal_env[id(v)] = o

    def read_primal(x: core.Atom) -> Any:
        if isinstance(x, Literal):
            return x.val
        if id(x) in linear_vars:
            return UndefinedPrimal(x.aval)
        return primal_env[id(x)]

    def write_ct(v: core.Atom, ct: Any) -> None:
        if isinstance(v, Var) and id(v) in linear_vars and ct is not None:
            if isinstance(ct, Zero):
                return
            ct_env[id(v)] = add_maybe_zero(ct_env.get(id(v), Zero(v.aval)), ct)

    for out_atom, ct in zip(jaxpr.outvars, cotangents, strict=True):
        write_ct(out_atom, ct)
    for eqn in reversed(lin_eqns):
        cts_out = [ct_env.pop(id(v), Zero(v.aval)) for v in eqn.outvars]
        if all(isinstance(c, Zero) for c in cts_out):
            continue
        rule = primitive_transposes.get(eqn.primitive)
        if rule is None:
            if eqn.primitive.name == "while":
                raise ValueError(
                    "Reverse-mode differentiation does not work for lax.while_loop or "
                    "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                    "using fori_loop with static start/stop."
                )
            raise NotImplementedError(f"Transpose rule for '{eqn.primitive.name}' not implemented")
        ins = [read_primal(x) for x in eqn.invars]
        ct_arg = cts_out if eqn.primitive.multiple_results else cts_out[0]
        cts_in = rule(ct_arg, *ins, **eqn.params)
        for x, ct in zip(eqn.invars, cts_in, strict=True):
            write_ct(x, ct)
    return [
        ct_env.pop(id(v), Zero(v.aval)) if is_undefined(a) else None
        for v, a in zip(jaxpr.invars, args, strict=True)
    ]


def vjp_flat(
    fun: Callable[..., Sequence[Any]], primals: Sequence[Any]
) -> tuple[list[Any], Callable[..., list[Any]]]:
    primal_outs, lin = linearize_flat(fun, primals)
    in_avals = [tangent_aval(core.get_aval(p)) for p in primals]

    def pullback(*cts: Any) -> list[Any]:
        staged_cts = [ct for ct, z in zip(cts, lin.out_zeros, strict=True) if z is None]
        undefined = [UndefinedPrimal(a) for a in in_avals]
        return backward_pass(lin.jaxpr, lin.consts, undefined, staged_cts)

    return primal_outs, pullback


def linear_transpose_flat(
    fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray]
) -> Callable[..., list[Any]]:
    jaxpr, consts, _ = pe.trace_to_jaxpr(fun, in_avals)

    def transposed(*cts: Any) -> list[Any]:
        return backward_pass(jaxpr, consts, [UndefinedPrimal(a) for a in in_avals], cts)

    return transposed


# ---- rule builders (the `jax.interpreters.ad` API for user primitives) ---------------------------
def instantiate_zeros(tangent: Any) -> Any:
    """A symbolic zero as an array of zeros; anything else as it is."""
    return instantiate(tangent)


def is_undefined_primal(x: Any) -> bool:
    return isinstance(x, UndefinedPrimal)


def get_primitive_transpose(p: Primitive) -> Callable[..., Any]:
    try:
        return primitive_transposes[p]
    except KeyError as err:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{p}' not implemented"
        ) from err


def add_jaxvals(x: Any, y: Any) -> Any:
    return add_tangents(x, y)


def _sum_tangents(terms: list[Any], aval: ShapedArray) -> Any:
    out: Any = Zero(tangent_aval(aval))
    for t in terms:
        out = add_maybe_zero(out, t)
    return out


def defjvp(primitive: Primitive, *jvprules: Callable[..., Any] | None) -> None:
    """The jvp of `primitive` as one rule per operand, `rule(g, *primals, **params)` giving
    that operand's contribution (None: the operand has no effect on the output); the output
    tangent is their sum."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = primitive.bind(*primals, **params)
        terms = [
            rule(t, *primals, **params)
            for rule, t in zip(jvprules, tangents, strict=True)
            if rule is not None and not isinstance(t, Zero)
        ]
        return out, _sum_tangents(terms, core.get_aval(out))

    primitive_jvps[primitive] = jvp


def defjvp2(primitive: Primitive, *jvprules: Callable[..., Any] | None) -> None:
    """As `defjvp`, each rule also given the primal output: `rule(g, ans, *primals, **params)`."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = primitive.bind(*primals, **params)
        terms = [
            rule(t, out, *primals, **params)
            for rule, t in zip(jvprules, tangents, strict=True)
            if rule is not None and not isinstance(t, Zero)
        ]
        return out, _sum_tangents(terms, core.get_aval(out))

    primitive_jvps[primitive] = jvp


def deflinear(primitive: Primitive, transpose_rule: Callable[..., Any]) -> None:
    """`primitive` is linear in all its operands: its jvp applies it to the tangents, and
    `transpose_rule(ct, **params)` gives the operands' cotangents."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = primitive.bind(*primals, **params)
        return out, primitive.bind(*map(instantiate, tangents), **params)

    def transpose(ct: Any, *args: Any, **params: Any) -> list[Any]:
        if isinstance(ct, Zero):
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return list(transpose_rule(ct, **params))

    primitive_jvps[primitive] = jvp
    primitive_transposes[primitive] = transpose


def deflinear2(primitive: Primitive, transpose_rule: Callable[..., Any]) -> None:
    """As `deflinear`, `transpose_rule(ct, *operands, **params)` also seeing the operands
    (UndefinedPrimal for the linear ones)."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = primitive.bind(*primals, **params)
        return out, primitive.bind(*map(instantiate, tangents), **params)

    def transpose(ct: Any, *args: Any, **params: Any) -> list[Any]:
        if isinstance(ct, Zero):
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return list(transpose_rule(ct, *args, **params))

    primitive_jvps[primitive] = jvp
    primitive_transposes[primitive] = transpose


def defbilinear(
    prim: Primitive, lhs_rule: Callable[..., Any], rhs_rule: Callable[..., Any]
) -> None:
    """`prim(lhs, rhs)` is linear in each operand: jvp `prim(dl, r) + prim(l, dr)`; the
    transpose of the undefined operand is `lhs_rule(ct, lhs, rhs, **params)` (or rhs_rule)."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        lhs, rhs = primals
        dl, dr = tangents
        out = prim.bind(lhs, rhs, **params)
        terms = []
        if not isinstance(dl, Zero):
            terms.append(prim.bind(dl, rhs, **params))
        if not isinstance(dr, Zero):
            terms.append(prim.bind(lhs, dr, **params))
        return out, _sum_tangents(terms, core.get_aval(out))

    def transpose(ct: Any, lhs: Any, rhs: Any, **params: Any) -> list[Any]:
        if is_undefined_primal(lhs):
            g = Zero(lhs.aval) if isinstance(ct, Zero) else lhs_rule(ct, lhs, rhs, **params)
            return [g, None]
        g = Zero(rhs.aval) if isinstance(ct, Zero) else rhs_rule(ct, lhs, rhs, **params)
        return [None, g]

    primitive_jvps[prim] = jvp
    primitive_transposes[prim] = transpose
