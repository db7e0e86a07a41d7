"""custom_jvp and custom_vjp: user-defined derivative rules that survive every transformation.

`custom_jvp_call` holds the primal function as a jaxpr and the user's jvp rule as a Python
callable; its jvp rule calls the user's. `custom_vjp_call` runs the user's forward function
under differentiation and emits `custom_lin`, a linear primitive whose transpose is the user's
backward function (forward-mode use of it raises, as in JAX). `custom_gradient` is a custom_vjp
whose backward function `closure_convert` hoists out of the forward pass.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from . import core
from .core import ClosedJaxpr, ShapedArray
from .dispatch import array as array_mod
from .dispatch import devices
from .dispatch.array import to_array as _to_array
from .interpreters import ad, batching
from .interpreters import partial_eval as pe
from .interpreters.ad import Zero
from .tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_structure,
    tree_unflatten,
)


def _trace(
    fun: Callable[..., Any], in_tree: Any, avals: Sequence[ShapedArray]
) -> tuple[ClosedJaxpr, list[Any], Any]:
    out_tree: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        out = fun(*tree_unflatten(in_tree, xs))
        leaves, tree = tree_flatten(out)
        out_tree[:] = [tree]
        return [_to_array(v) for v in leaves]

    jaxpr, consts, _ = pe.trace_to_jaxpr(flat, avals)
    return ClosedJaxpr(pe.convert_constvars_jaxpr(jaxpr), []), consts, out_tree[0]


def _call(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _resolve_argnums(nondiff_argnums: Sequence[int], nargs: int) -> tuple[int, ...]:
    return tuple(sorted(i % nargs for i in nondiff_argnums))


def _split_args(args: tuple[Any, ...], nondiff_argnums: Sequence[int]) -> tuple[Any, ...]:
    """Static (nondiff) args by position, the dynamic ones, their flat arrays and tree, and a
    function rebuilding the full argument list from new dynamic values."""
    nargs = len(args)
    nondiff = _resolve_argnums(nondiff_argnums, nargs) if nargs else ()
    static = {i: args[i] for i in nondiff}
    dyn = [a for i, a in enumerate(args) if i not in static]
    flat, in_tree = tree_flatten(tuple(dyn))
    flat = [_to_array(x) for x in flat]

    def full_args(dyn_vals: Sequence[Any]) -> list[Any]:
        it = iter(dyn_vals)
        return [static[i] if i in static else next(it) for i in range(nargs)]

    return static, dyn, flat, in_tree, full_args


# ============================================================================================
# custom_jvp
# ============================================================================================


# ---- symbolic zeros (custom rules defined with symbolic_zeros=True) ----------------------------
class SymbolicZero(Zero):
    """A tangent or cotangent known to be zero, handed to (and accepted from) custom rules
    defined with `symbolic_zeros=True`; it stands for zeros of its abstract value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SymbolicZero"

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> Any:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    @staticmethod
    def from_primal_value(val: Any) -> SymbolicZero:
        return SymbolicZero(ad.tangent_aval(core.get_aval(_to_array(val))))


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents for the pytree `val`: SymbolicZeros, or arrays of zeros."""

    def one(x: Any) -> Any:
        z = SymbolicZero.from_primal_value(x)
        return z if symbolic_zeros else ad.instantiate(z)

    return tree_map(one, val)


class CustomVJPPrimal:
    """A primal argument of a custom_vjp fwd rule defined with `symbolic_zeros=True`: its
    value, and whether its tangent may be nonzero."""

    __slots__ = ("value", "perturbed")

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """The tree of CustomVJPPrimal records with each replaced by its value."""

    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_map(value, tree)


def _from_rule(v: Any) -> Any:
    """A custom rule's (co)tangent output as an array (symbolic zeros made concrete)."""
    return ad.instantiate(v) if isinstance(v, Zero) else _to_array(v)


custom_jvp_call_p = core.Primitive("custom_jvp_call")
custom_jvp_call_p.multiple_results = True


@custom_jvp_call_p.def_abstract_eval
def _cjvp_abstract(*avals: ShapedArray, call_jaxpr: ClosedJaxpr, **_: Any) -> list:
    return list(call_jaxpr.out_avals)


@custom_jvp_call_p.def_impl
def _cjvp_impl(*args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return _call(call_jaxpr, *args)


def _cjvp_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    jvp_jaxpr_fun: Callable[..., Any],
    num_consts: int,
    symbolic_zeros: bool,
) -> tuple[list[Any], list[Any]]:
    consts, args = primals[:num_consts], primals[num_consts:]
    if symbolic_zeros:  # the rule sees which tangents are zero
        tangs = [SymbolicZero(t.aval) if isinstance(t, Zero) else t for t in tangents[num_consts:]]
    else:
        tangs = [ad.instantiate(t) for t in tangents[num_consts:]]
    p_out, t_out = jvp_jaxpr_fun(consts, args, tangs)
    return p_out, t_out


ad.primitive_jvps[custom_jvp_call_p] = _cjvp_jvp


def _cjvp_partial_eval(trace: pe.JaxprTrace, *args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> Any:
    # Partial evaluation with unknown inputs builds linear maps (tangents of linearize, the
    # linear part of a solve's derivative): the custom rule is not needed there, and inlining
    # the function keeps the map transposable (JAX's behaviour).
    return _call(call_jaxpr, *args)


pe.partial_eval_rules[custom_jvp_call_p] = _cjvp_partial_eval


def _cjvp_batch(
    args: list[Any],
    dims: list[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    jvp_jaxpr_fun: Callable[..., Any],
    num_consts: int,
    symbolic_zeros: bool,
) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    axis = batching.rule_axis_name(size)  # the closures below batch later, over the same axis
    args = [
        batching.bdim_at_front(a, d, size) if d is not None else a
        for a, d in zip(args, dims, strict=True)
    ]
    in_dims = [0 if d is not None else None for d in dims]
    n_out = len(call_jaxpr.out_avals)
    avals = [core.get_aval(a) for a in args]

    def batched_call(*xs: Any) -> list[Any]:
        return batching.vmap_flat(
            lambda *ys: _call(call_jaxpr, *ys), xs, in_dims, [0] * n_out, size
        )

    b_closed = pe.trace_to_closed_jaxpr(batched_call, avals)

    def batched_jvp(consts: list[Any], xs: list[Any], ts: list[Any]) -> tuple[list, list]:
        nc = len(consts)
        ts = [ad.instantiate(t) for t in ts]  # mapped as arrays
        c_dims, x_dims = in_dims[:nc], in_dims[nc:]

        def one(*flat: Any) -> list[Any]:
            c, x, t = flat[:nc], flat[nc : nc + len(xs)], flat[nc + len(xs) :]
            p_out, t_out = jvp_jaxpr_fun(list(c), list(x), list(t))
            return [*p_out, *[ad.instantiate(v) for v in t_out]]

        outs = batching.vmap_flat(
            one, [*consts, *xs, *ts], [*c_dims, *x_dims, *x_dims], [0] * (2 * n_out), size, axis
        )
        return outs[:n_out], outs[n_out:]

    outs = custom_jvp_call_p.bind(
        *args,
        call_jaxpr=b_closed,
        jvp_jaxpr_fun=batched_jvp,
        num_consts=num_consts,
        symbolic_zeros=symbolic_zeros,
    )
    return outs, [0] * n_out


batching.primitive_batchers[custom_jvp_call_p] = _cjvp_batch


def _check_jvp_types(primals: list[Any], tangents: list[Any]) -> None:
    """JAX's check that each tangent has its primal's tangent type (shape, float dtype)."""
    bad = []
    for p, t in zip(primals, tangents, strict=True):
        pa, ta = core.get_aval(p), core.get_aval(t)
        if pa.shape != ta.shape or (pa.dtype.kind in "fc" and pa.dtype is not ta.dtype):
            bad.append((pa, ta))
    if not bad:
        return
    if len(primals) == 1:
        (pa, ta), s = bad[0], lambda a: a.str_short(False)
        raise TypeError(
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes "
            f"and dtypes. Expected {s(pa)} (tangent type of {s(pa)}) but got {s(ta)}."
        )
    raise TypeError(
        "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
        "dtypes, but got:\n"
        + "\n".join(
            f"  primal {pa.str_short(False)} with tangent {ta.str_short(False)}, expecting "
            f"tangent {pa.str_short(False)}"
            for pa, ta in bad
        )
    )


def _resolve_kwargs(fun: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> tuple:
    """Arguments as positions by the function's signature, defaults filled in (as JAX does)."""
    import inspect

    try:
        sig = inspect.signature(fun)
    except (ValueError, TypeError):
        if kwargs:
            raise TypeError("keyword arguments could not be resolved to positions") from None
        return args
    ba = sig.bind(*args, **kwargs)
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError("keyword arguments could not be resolved to positions")
    return ba.args


class custom_jvp:
    """Define a custom jvp rule for a function (`@jax.custom_jvp`, then `.defjvp`)."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One function per argument: jvp_i(tangent_i, primal_out, *primals)."""

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
            out = self(*primals)
            acc: Any = None
            for rule, t in zip(jvps, tangents, strict=False):
                if rule is None:
                    continue
                contrib = rule(t, out, *primals)
                acc = contrib if acc is None else tree_map(lambda a, b: a + b, acc, contrib)
            if acc is None:
                acc = tree_map(lambda o: _zeros_like(o), out)
            return out, acc

        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = _resolve_kwargs(self.fun, args, kwargs)
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {getattr(self.fun, '__name__', '')} "
                "using defjvp."
            )
        static, _dyn, flat, in_tree, full_args = _split_args(args, self.nondiff_argnums)

        def primal(*d: Any) -> Any:
            return self.fun(*full_args(d))

        closed, consts, out_tree = _trace(primal, in_tree, [core.get_aval(x) for x in flat])
        user_jvp = self.jvp

        def jvp_fun(cs: list[Any], xs: list[Any], ts: list[Any]) -> tuple[list, list]:
            p_tree = tree_unflatten(in_tree, xs)
            t_tree = tree_unflatten(in_tree, ts)
            static_vals = [static[i] for i in sorted(static)]
            p_out, t_out = user_jvp(*static_vals, tuple(p_tree), tuple(t_tree))
            p_flat, p_tree_out = tree_flatten(p_out)
            t_flat, t_tree_out = tree_flatten(t_out)
            if p_tree_out != out_tree or t_tree_out != out_tree:
                raise TypeError(
                    "Custom JVP rule must produce primal and tangent outputs with equal "
                    f"container (pytree) structures and the primal function's, but got "
                    f"{p_tree_out} and {t_tree_out} (expected {out_tree})."
                )
            p_flat = [_to_array(v) for v in p_flat]
            t_flat = [_from_rule(v) for v in t_flat]
            _check_jvp_types(p_flat, t_flat)
            return p_flat, t_flat

        outs = custom_jvp_call_p.bind(
            *consts,
            *flat,
            call_jaxpr=closed,
            jvp_jaxpr_fun=jvp_fun,
            num_consts=len(consts),
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_unflatten(out_tree, outs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)


def _zeros_like(x: Any) -> Any:
    a = core.get_aval(_to_array(x))
    return array_mod.full(a.shape, 0, a.dtype, False, devices.default_device())


# ============================================================================================
# custom_vjp
# ============================================================================================
custom_vjp_call_p = core.Primitive("custom_vjp_call")
custom_vjp_call_p.multiple_results = True


@custom_vjp_call_p.def_abstract_eval
def _cvjp_abstract(*avals: ShapedArray, call_jaxpr: ClosedJaxpr, **_: Any) -> list:
    return list(call_jaxpr.out_avals)


@custom_vjp_call_p.def_impl
def _cvjp_impl(*args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return _call(call_jaxpr, *args)


custom_lin_p = core.Primitive("custom_lin")
custom_lin_p.multiple_results = True


@custom_lin_p.def_abstract_eval
def _lin_abstract(*avals: ShapedArray, num_res: int, bwd: Any, out_avals: Any) -> list:
    return list(out_avals)


@custom_lin_p.def_impl
def _lin_impl(*args: Any, **params: Any) -> list[Any]:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _lin_transpose(cts: list[Any], *args: Any, num_res: int, bwd: Any, out_avals: Any) -> list[Any]:
    res = args[:num_res]
    cts = [ad.instantiate(c) if isinstance(c, Zero) else c for c in cts]
    in_cts = bwd(list(res), cts)
    return [None] * num_res + list(in_cts)


ad.primitive_transposes[custom_lin_p] = _lin_transpose


def _lin_batch(args: list[Any], dims: list[Any], **params: Any) -> Any:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


batching.primitive_batchers[custom_lin_p] = _lin_batch


def _cvjp_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    fwd: Callable[..., Any],
    bwd: Callable[..., Any],
    num_consts: int,
    **_: Any,
) -> tuple[list[Any], list[Any]]:
    consts, args = primals[:num_consts], primals[num_consts:]
    perturbed = [not isinstance(t, Zero) for t in tangents[num_consts:]]
    p_out, residuals = fwd(consts, args, perturbed)
    out_avals = [ad.tangent_aval(core.get_aval(o)) for o in p_out]
    tangs = [ad.instantiate(t) for t in tangents[num_consts:]]
    t_out = custom_lin_p.bind(
        *residuals, *tangs, num_res=len(residuals), bwd=bwd, out_avals=tuple(out_avals)
    )
    return p_out, t_out


ad.primitive_jvps[custom_vjp_call_p] = _cvjp_jvp


def _cvjp_batch(
    args: list[Any],
    dims: list[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    fwd: Callable[..., Any],
    bwd: Callable[..., Any],
    num_consts: int,
    **params: Any,
) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    axis = batching.rule_axis_name(size)  # b_fwd/b_bwd batch later, over the same axis
    args = [
        batching.bdim_at_front(a, d, size) if d is not None else a
        for a, d in zip(args, dims, strict=True)
    ]
    in_dims = [0 if d is not None else None for d in dims]
    n_out = len(call_jaxpr.out_avals)
    avals = [core.get_aval(a) for a in args]
    b_closed = pe.trace_to_closed_jaxpr(
        lambda *xs: batching.vmap_flat(
            lambda *ys: _call(call_jaxpr, *ys), xs, in_dims, [0] * n_out, size
        ),
        avals,
    )
    nc = num_consts
    n_res_box: list[int] = []

    def b_fwd(
        consts: list[Any], xs: list[Any], perturbed: list[bool] | None = None
    ) -> tuple[list, list]:
        def one(*flat: Any) -> list[Any]:
            p, r = fwd(list(flat[:nc]), list(flat[nc:]), perturbed)
            n_res_box[:] = [len(r)]
            return [*p, *r]

        outs = batching.vmap_flat(
            one, [*consts, *xs], in_dims, lambda: [0] * (n_out + n_res_box[0]), size, axis
        )
        return outs[:n_out], outs[n_out:]

    def b_bwd(res: list[Any], cts: list[Any]) -> list[Any]:
        def one(*flat: Any) -> list[Any]:
            r, c = flat[: len(res)], flat[len(res) :]
            return [ad.instantiate(v) if isinstance(v, Zero) else v for v in bwd(list(r), list(c))]

        n_in = len(in_dims) - nc
        return batching.vmap_flat(
            one, [*res, *cts], [0] * (len(res) + len(cts)), [0] * n_in, size, axis
        )

    outs = custom_vjp_call_p.bind(
        *args, call_jaxpr=b_closed, fwd=b_fwd, bwd=b_bwd, num_consts=nc, **params
    )
    return outs, [0] * n_out


batching.primitive_batchers[custom_vjp_call_p] = _cvjp_batch


class custom_vjp:
    """Define a custom vjp (`@jax.custom_vjp`, then `.defvjp(fwd, bwd)`)."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = _resolve_kwargs(self.fun, args, kwargs)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {getattr(self.fun, '__name__', '')} "
                "using defvjp."
            )
        static, dyn, flat, in_tree, full_args = _split_args(args, self.nondiff_argnums)
        static_vals = [static[i] for i in sorted(static)]

        closed, consts, out_tree = _trace(
            lambda *d: self.fun(*full_args(d)), in_tree, [core.get_aval(x) for x in flat]
        )
        user_fwd, user_bwd = self.fwd, self.bwd
        res_tree_box: list[Any] = []
        in_avals = [core.get_aval(x) for x in flat]

        symbolic = self.symbolic_zeros

        def fwd_fun(
            cs: list[Any], xs: list[Any], perturbed: list[bool] | None = None
        ) -> tuple[list, list]:
            if symbolic:  # which inputs have nonzero tangents
                flags = [True] * len(xs) if perturbed is None else perturbed
                xs = [CustomVJPPrimal(x, f) for x, f in zip(xs, flags, strict=True)]
            out = user_fwd(*full_args(tree_unflatten(in_tree, xs)))
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                fwd_name = getattr(user_fwd, "__name__", str(user_fwd))
                name = getattr(self.fun, "__name__", str(self.fun))
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
                    "(list or tuple of length two) where the first element represents the "
                    f"primal output (equal to those of the custom_vjp-decorated function {name}) "
                    "and the second element represents residuals (i.e. values stored from the "
                    "forward pass for use on the backward pass), but instead of a pair the fwd "
                    f"rule {fwd_name} produced {out}."
                )
            p_flat, p_tree = tree_flatten(out[0])
            if p_tree != out_tree:
                raise TypeError(
                    "Custom VJP fwd rule must produce an output with the same container (pytree) "
                    f"structure as the primal function, got {p_tree} and {out_tree}."
                )
            r_flat, r_tree = tree_flatten(out[1])
            res_tree_box[:] = [r_tree]
            # Python scalars among the residuals reach bwd as they are (staged as literals)
            res = [v if type(v) in (bool, int, float) else _to_array(v) for v in r_flat]
            return [_to_array(v) for v in p_flat], res

        def bwd_fun(res: list[Any], cts: list[Any]) -> list[Any]:
            r = tree_unflatten(res_tree_box[0], res)
            ct = tree_unflatten(out_tree, cts)
            got = user_bwd(*static_vals, r, ct)
            leaves: list[Any] = []
            ok = isinstance(got, (tuple, list)) and len(got) == len(dyn)
            for g, d in zip(got if ok else (), dyn, strict=False):
                d_flat, d_tree = tree_flatten(d)
                if g is None:
                    leaves.extend(_zeros_like(v) for v in d_flat)
                    continue
                g_flat, g_tree = tree_flatten(g)
                if g_tree != d_tree:
                    ok = False
                    break
                leaves.extend(_from_rule(v) for v in g_flat)
            if not ok:
                raise TypeError(
                    "Custom VJP bwd rule must produce an output with the same container "
                    "(pytree) structure as the args tuple of the primal function, and in "
                    "particular must produce a tuple of length equal to the number of arguments "
                    "to the primal function, but got bwd output structure "
                    f"{tree_structure(got)} for primal input structure "
                    f"{tree_structure(tuple(dyn))}."
                )
            paths = [keystr(p) for p, _ in tree_flatten_with_path(tuple(dyn))[0]]
            for v, a, path in zip(leaves, in_avals, paths, strict=True):
                b = core.get_aval(v)
                if b.shape != a.shape:
                    raise ValueError(
                        "Custom VJP bwd rule must produce an output with the same type as the "
                        f"args tuple of the primal function, but at output{path} the bwd rule "
                        f"produced an output of type {b.str_short(False)} corresponding to an "
                        f"input of type {a.str_short(False)}, so the shapes do not match"
                    )
            return leaves

        outs = custom_vjp_call_p.bind(
            *consts, *flat, call_jaxpr=closed, fwd=fwd_fun, bwd=bwd_fun, num_consts=len(consts)
        )
        return tree_unflatten(out_tree, outs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)


# ---- closure conversion and custom_gradient -----------------------------------------------------
def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable, list[Any]]:
    """(converted, consts): `converted(*args, *consts)` computes `fun(*args)`, with the traced
    values `fun` closes over hoisted out as `consts` (so they can be passed explicitly)."""
    flat, in_tree = tree_flatten(example_args)
    avals = [core.get_aval(_to_array(x)) for x in flat]
    out_tree_box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        out, tree = tree_flatten(fun(*tree_unflatten(in_tree, list(xs))))
        out_tree_box.append(tree)
        return [_to_array(o) for o in out]

    jaxpr, consts, _ = pe.trace_to_jaxpr(flat_fun, avals)
    hoist = [isinstance(c, core.Tracer) for c in consts]
    closed = [c for c, h in zip(consts, hoist) if not h]
    hoisted = [c for c, h in zip(consts, hoist) if h]
    out_tree = out_tree_box[0]

    def converted(*args_and_consts: Any) -> Any:
        n = len(args_and_consts) - len(hoisted)
        args, hc = args_and_consts[:n], list(args_and_consts[n:])
        it_c, it_h = iter(closed), iter(hc)
        all_consts = [next(it_h) if h else next(it_c) for h in hoist]
        flat_args, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(
                f"closure_convert: the converted function was called with argument structure "
                f"{tree}, expected {in_tree}"
            )
        return tree_unflatten(out_tree, core.eval_jaxpr(jaxpr, all_consts, *flat_args))

    return converted, hoisted


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """`fun` returns (value, vjp) with vjp(g) a tuple of cotangents, one per positional
    argument; differentiating the result uses that vjp."""

    @functools.wraps(fun)
    def wrapper(*args: Any) -> Any:
        box: list[Any] = []

        def primal(*a: Any) -> Any:
            return fun(*a)[0]

        def fwd(*a: Any) -> Any:
            ans, rule = fun(*a)
            converted, consts = closure_convert(rule, ans)
            box[:] = [converted]
            return ans, consts

        def bwd(consts: Any, g: Any) -> Any:
            cts = box[0](g, *consts)
            if not isinstance(cts, (tuple, list)):
                raise TypeError(
                    "custom_gradient: the vjp function must return a tuple with one cotangent "
                    f"per positional argument, got {type(cts).__name__}"
                )
            return tuple(cts)

        f = custom_vjp(primal)
        f.defvjp(fwd, bwd)
        return f(*args)

    return wrapper
