"""Structured control flow: cond/switch, while_loop/fori_loop, scan/map.

Each is a higher-order primitive holding closed jaxprs (closure-converted: captured values are
explicit operands), with JAX's names and params (`cond[branches]`, `while[cond_jaxpr
body_jaxpr ...]`, `scan[jaxpr length num_consts num_carry reverse ...]`), and rules for every
transformation: jvp, partial evaluation (so reverse mode keeps primal values concrete),
transpose (cond, scan) and batching.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..core import ClosedJaxpr, Jaxpr, ShapedArray
from ..dispatch import devices, program
from ..dispatch.array import Array
from ..dispatch.lazy import NeedsValues
from ..interpreters import ad, batching
from ..interpreters import partial_eval as pe
from ..interpreters.ad import UndefinedPrimal, Zero, is_undefined
from ..tree_util import (
    _keys_of,
    _node_for,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
    treedef_tuple,
)
from ..vmap import vmap
from . import lax
from .lax import to_array as _to_array

# ---- tracing helpers --------------------------------------------------------------------------


def _trace_fun(
    fun: Callable[..., Any], in_tree: Any, avals: Sequence[ShapedArray]
) -> tuple[ClosedJaxpr, list[Any], Any]:
    """Trace `fun` on abstract pytree args.

    Returns the jaxpr with its constants as leading invars, the constants, and the out tree."""
    out_tree: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        args = tree_unflatten(in_tree, xs)
        out = fun(*args)
        leaves, tree = tree_flatten(out)
        out_tree[:] = [tree]
        return [_to_array(x) for x in leaves]

    jaxpr, consts, _ = pe.trace_to_jaxpr(flat, avals)
    return ClosedJaxpr(pe.convert_constvars_jaxpr(jaxpr), []), consts, out_tree[0]


def _avals(xs: Sequence[Any]) -> list[ShapedArray]:
    return [core.get_aval(x) for x in xs]


def _types_str(avals: Sequence[ShapedArray]) -> str:
    return "[" + ", ".join(a.str_short(True) for a in avals) + "]"


def _leaf_paths(tree: Any) -> list[str]:
    """keystr of each leaf path of a treedef ('' for all when the tree cannot be rebuilt)."""
    try:
        leaves, _ = tree_flatten_with_path(tree_unflatten(tree, range(tree.num_leaves)))
        return [keystr(p) for p, _ in leaves]
    except Exception:
        return [""] * tree.num_leaves


class _Leaf:
    """A placeholder leaf for rebuilding a treedef into a comparable tree."""


def _structure_differences(a: Any, b: Any) -> list[tuple[str, str, str, str]]:
    """(path, what a is, what b is, why) for each place two treedefs differ, as JAX words it."""
    out: list[tuple[str, str, str, str]] = []
    leaf = str(ShapedArray)

    def children(n: int) -> str:
        return f"{n} child{'ren' if n > 1 else ''}"

    def walk(path: tuple[Any, ...], x: Any, y: Any) -> None:
        nx, ny = _node_for(x), _node_for(y)
        if nx is None and ny is None:
            return
        tx = leaf if nx is None else str(type(x))
        ty = leaf if ny is None else str(type(y))
        p = keystr(path)
        if nx is None or ny is None or type(x) is not type(y):
            out.append((p, tx, ty, "their Python types differ"))
            return
        if isinstance(x, (list, tuple)) and len(x) != len(y):
            n = type(x).__name__
            out.append(
                (
                    p,
                    f"{n} of length {len(x)}",
                    f"{n} of length {len(y)}",
                    "the lengths do not match",
                )
            )
            return
        (kx, ax), (ky, ay) = nx[1].to_iter(x), ny[1].to_iter(y)
        kx, ky = list(kx), list(ky)
        if len(kx) != len(ky):
            why = "the numbers of children do not match"
            out.append((p, f"{tx} with {children(len(kx))}", f"{ty} with {children(len(ky))}", why))
            return
        if ax != ay:
            why = "the pytree node metadata does not match"
            out.append(
                (p, f"{tx} with pytree metadata {ax}", f"{ty} with pytree metadata {ay}", why)
            )
            return
        for k, cx, cy in zip(_keys_of(x, type(x)), kx, ky, strict=True):
            walk((*path, k), cx, cy)

    walk(
        (), tree_unflatten(a, [_Leaf()] * a.num_leaves), tree_unflatten(b, [_Leaf()] * b.num_leaves)
    )
    return out


def _mismatch_why(a: ShapedArray, b: ShapedArray) -> str:
    why = [
        f"the {w} do not match"
        for w, bad in (("dtypes", a.dtype is not b.dtype), ("shapes", a.shape != b.shape))
        if bad
    ]
    return ", so " + ", and ".join(why)


def _fun_info(fun: Any) -> str:
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", type(fun).__name__)
    if code is None:
        return str(name)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def _bullets(diffs: list[str], capitalize: bool = True) -> str:
    if len(diffs) == 1:
        return (diffs[0][:1].upper() if capitalize else diffs[0][:1]) + diffs[0][1:] + ".\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def _carry_type_error(
    name: str,
    body_fun: Any,
    in_tree: Any,
    out_tree: Any,
    in_avals: Sequence[ShapedArray],
    out_avals: Sequence[ShapedArray],
) -> TypeError:
    """JAX's error for a loop body whose carry output differs from its carry input."""
    try:
        import inspect

        carry_name = next(iter(inspect.signature(body_fun).parameters), "")
    except (ValueError, TypeError):
        carry_name = ""

    def component(path: str) -> str:
        if carry_name:
            return (
                f"the input carry component {carry_name}{path}"
                if path
                else (f"the input carry {carry_name}")
            )
        return f"the input carry at path {path}" if path else "the input carry"

    if in_tree != out_tree:
        struct = [
            f"{component(p)} is a {x} but the corresponding component of the carry output is "
            f"a {y}, so {why}"
            for p, x, y, why in _structure_differences(in_tree, out_tree)
        ]
        detail = (
            _bullets(struct)
            if struct
            else f"the input tree structure is:\n{in_tree}\nthe output tree structure is:\n"
            f"{out_tree}\n"
        )
        return TypeError(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\n{detail}\nRevise the function so that the carry "
            "output has the same pytree structure as the carry input."
        )
    diffs = []
    for path, a, b in zip(_leaf_paths(in_tree), in_avals, out_avals, strict=True):
        if a.shape == b.shape and a.dtype is b.dtype:
            continue
        diffs.append(
            f"{component(path)} has type {a.str_short(False)} but the corresponding output carry "
            f"component has type {b.str_short(False)}{_mismatch_why(a, b)}"
        )
    return TypeError(
        f"{name} function carry input and carry output must have equal types, but they "
        f"differ:\n\n{_bullets(diffs)}\nRevise the function so that all output types match "
        "the corresponding input types."
    )


def _same_types(a: Sequence[ShapedArray], b: Sequence[ShapedArray]) -> bool:
    return len(a) == len(b) and all(
        x.shape == y.shape and x.dtype is y.dtype for x, y in zip(a, b, strict=True)
    )


def _call(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _trace_flat(fun: Callable[..., Sequence[Any]], avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """Trace a flat function; constants become leading invars? No: kept as consts."""
    return pe.trace_to_closed_jaxpr(fun, avals)


def _promote_weak_inputs(
    vals: list[Any], in_avals: list[ShapedArray], out_avals: Sequence[ShapedArray]
) -> tuple[list[Any], bool]:
    """Promote weakly typed loop inputs whose type the body's output changes (JAX's rule: a
    Python-scalar `0` carry that the body turns into float32 becomes a float32 carry)."""
    if len(vals) != len(out_avals):
        return vals, False
    changed = False
    out = list(vals)
    for k, (a, b) in enumerate(zip(in_avals, out_avals, strict=True)):
        if a.weak_type and (a.shape != b.shape or a.dtype is not b.dtype):
            dt, _ = dtypes.result_type((a.dtype, True), (b.dtype, b.weak_type))
            out[k] = lax.convert_element_type(vals[k], dt, False)
            changed = True
    return out, changed


def _weak_join(carry_in: list[ShapedArray], carry_out: list[ShapedArray]) -> list[ShapedArray]:
    return [
        a.update(weak_type=a.weak_type and b.weak_type)
        for a, b in zip(carry_in, carry_out, strict=True)
    ]


# ============================================================================================
# cond / switch
# ============================================================================================
cond_p = core.Primitive("cond")
cond_p.multiple_results = True


@cond_p.def_abstract_eval
def _cond_abstract(
    index: ShapedArray, *ops: ShapedArray, branches: tuple[ClosedJaxpr, ...]
) -> list[ShapedArray]:
    return list(branches[0].out_avals)


# A cond inside a program being compiled whose index is only known when the program runs
# evaluates every branch and selects the taken one's outputs (as a GPU runs both sides of a
# branch), so the program stays compiled, where reading the index would make the whole program
# run eagerly, op by op: 1.2 ms a step of Optax's mechanize(sgd), 30,000 steps a test. Branches
# costing more than this many element operations together keep the eager fallback (their
# untaken side's work would outweigh it).
_SELECTED_BRANCH_COST = 1 << 22


def _cost(jaxpr: Jaxpr) -> int:
    """Element operations of `jaxpr`: its equations' output sizes, nested bodies included (a
    scan's times its length)."""
    total = 0
    for eqn in jaxpr.eqns:
        total += sum(v.aval.size for v in eqn.outvars if hasattr(v.aval, "size"))
        times = int(eqn.params.get("length", 1)) if eqn.primitive.name == "scan" else 1
        for v in eqn.params.values():
            for sub in v if isinstance(v, tuple) else (v,):
                inner = getattr(sub, "jaxpr", sub)
                if isinstance(inner, Jaxpr):
                    total += times * _cost(inner)
    return total


def _cond_selected(index: Any, ops: tuple[Any, ...], branches: tuple[ClosedJaxpr, ...]) -> list:
    if sum(_cost(b.jaxpr) for b in branches) > _SELECTED_BRANCH_COST:
        raise NeedsValues("a cond's branches are too costly to evaluate both")
    outs = [_call(b, *ops) for b in branches]
    which = lax.clamp(0, lax.convert_element_type(index, dtypes.int32), len(branches) - 1)
    if len(branches) == 2:
        which = lax.convert_element_type(which, dtypes.bool_)
    try:
        return [lax.select_n(which, *vals) for vals in zip(*outs, strict=True)]
    except TypeError as e:  # outputs select_n does not take (keys): run the program eagerly
        raise NeedsValues(f"a cond's outputs cannot be selected: {e}") from None


@cond_p.def_impl
def _cond_impl(index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    try:
        i = int(index)
    except NeedsValues:  # inside a program being compiled, known only when it runs
        return _cond_selected(index, ops, branches)
    i = min(max(i, 0), len(branches) - 1)
    return _call(branches[i], *ops)


def _join_branches(
    funs: Sequence[Callable[..., Any]], operands: tuple[Any, ...], kind: str
) -> tuple[tuple[ClosedJaxpr, ...], list[Any], Any]:
    ops_flat, in_tree = tree_flatten(operands)
    ops_flat = [_to_array(x) for x in ops_flat]
    avals = _avals(ops_flat)
    traced = [_trace_fun(f, in_tree, avals) for f in funs]
    out_trees = [t[2] for t in traced]
    out_avals = [t[0].out_avals for t in traced]
    for k in range(1, len(funs)):
        if out_trees[k] != out_trees[0] or not _same_types(out_avals[k], out_avals[0]):
            raise _branch_error(kind, funs, k, out_trees, out_avals)
    # every branch takes every branch's constants (each ignores the others'); outputs are weak
    # only where every branch's is (JAX joins the branch types)
    weak = [all(o[i].weak_type for o in out_avals) for i in range(len(out_avals[0]))]
    all_consts = [c for t in traced for c in t[1]]
    const_avals = _avals(all_consts)
    branches = []
    offset = 0
    for closed, consts, _ in traced:
        n = len(consts)
        lo, hi = offset, offset + n
        offset = hi

        def call(*args: Any, _c: ClosedJaxpr = closed, _lo: int = lo, _hi: int = hi) -> list:
            cs, ops = args[: len(const_avals)], args[len(const_avals) :]
            outs = _call(_c, *cs[_lo:_hi], *ops)
            return [
                lax.convert_element_type(o, a.dtype, False) if a.weak_type and not w else o
                for o, a, w in zip(outs, _c.out_avals, weak, strict=True)
            ]

        branches.append(_trace_flat(call, [*const_avals, *avals]))
    return tuple(branches), [*all_consts, *ops_flat], out_trees[0]


def _branch_error(
    kind: str,
    funs: Sequence[Callable[..., Any]],
    k: int,
    out_trees: list[Any],
    out_avals: Sequence[Sequence[ShapedArray]],
) -> TypeError:
    """JAX's error for cond/switch branches whose outputs differ (branch 0 against branch k)."""
    if kind == "cond":  # funs are [false_fun, true_fun]; JAX reports true_fun first
        a, b, names = 1, 0, ("true_fun", "false_fun")
    else:
        a, b, names = 0, k, ("branch 0", f"branch{k}")
    header = f"{names[0]} is {_fun_info(funs[a])}\n{names[1]} is {_fun_info(funs[b])}\n\n"
    if out_trees[a] != out_trees[b]:
        struct = [
            f"{names[0]} output{p} is a {x} but {names[1]} output{p} is a {y}, so {why}"
            for p, x, y, why in _structure_differences(out_trees[a], out_trees[b])
        ] or [f"{names[0]} output is {out_trees[a]} but {names[1]} output is {out_trees[b]}"]
        return TypeError(
            f"{kind} branch outputs must have the same pytree structure, but they differ:\n\n"
            f"{header}{_bullets(struct, False)}\nRevise {names[0]} and/or {names[1]} so that they "
            "have the same pytree structure."
        )
    paths = _leaf_paths(out_trees[a])
    diffs = [
        f"the output of {names[0]}{f' at path {p}' if p else ''} has type "
        f"{x.str_short(False)} but the corresponding output of {names[1]} has type "
        f"{y.str_short(False)}{_mismatch_why(x, y)}"
        for p, x, y in zip(paths, out_avals[a], out_avals[b], strict=True)
        if x.shape != y.shape or x.dtype is not y.dtype
    ]
    return TypeError(
        f"{kind} branches must have equal output types but they differ.\n\n{header}"
        f"{_bullets(diffs)}\nRevise {names[0]} and/or {names[1]} so that all output types match."
    )


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    if not branches:
        raise ValueError("Empty branch sequence")
    idx = _to_array(index)
    ia = core.get_aval(idx)
    if ia.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {ia.shape}.")
    if ia.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {ia.dtype.name}")
    idx = lax.convert_element_type(idx, dtypes.int32)
    n = len(branches)
    if n == 1:
        return branches[0](*operands)
    idx = lax.clamp(lax.full((), 0, dtypes.int32), idx, lax.full((), n - 1, dtypes.int32))
    jaxprs, args, out_tree = _join_branches(branches, operands, "switch")
    return tree_unflatten(out_tree, cond_p.bind(idx, *args, branches=jaxprs))


_NO_OPERAND = object()


def cond(
    pred: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    *operands: Any,
    operand: Any = _NO_OPERAND,
) -> Any:
    if operand is not _NO_OPERAND:  # JAX's deprecated keyword: one operand, None included
        if operands:
            raise TypeError(
                "if 'operand' keyword is passed then no positional operands can be passed, got "
                f"operand={operand!r} and positional operands {operands!r}"
            )
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, (list, tuple)):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    p = _to_array(pred)
    pa = core.get_aval(p)
    if pa.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {pa.shape}.")
    if pa.dtype.kind not in "biuf":
        raise TypeError(f"Pred type must be either boolean or number, got {pa.dtype.name}.")
    if pa.dtype is not dtypes.bool_:
        p = lax.ne(p, lax.full((), 0, pa.dtype))
    idx = lax.convert_element_type(p, dtypes.int32)
    jaxprs, args, out_tree = _join_branches([false_fun, true_fun], operands, "cond")
    return tree_unflatten(out_tree, cond_p.bind(idx, *args, branches=jaxprs))


def _cond_jvp(
    primals: list[Any], tangents: list[Any], *, branches: tuple[ClosedJaxpr, ...]
) -> tuple[list[Any], list[Any]]:

    index, *ops = primals
    nonzero = tuple(not isinstance(t, Zero) for t in tangents[1:])
    outs_nz = [False] * len(branches[0].out_avals)
    for b in branches:
        _, nz = ad.jvp_jaxpr(b, nonzero, None)
        outs_nz = [x or y for x, y in zip(outs_nz, nz, strict=True)]
    jbranches = tuple(ad.jvp_jaxpr(b, nonzero, outs_nz)[0] for b in branches)
    t_args = [t for t in tangents[1:] if not isinstance(t, Zero)]
    outs = cond_p.bind(index, *ops, *t_args, branches=jbranches)
    n = len(branches[0].out_avals)
    p_out, t_it = outs[:n], iter(outs[n:])
    t_out = [
        next(t_it) if nz else Zero(ad.tangent_aval(a))
        for nz, a in zip(outs_nz, branches[0].out_avals, strict=True)
    ]
    return p_out, t_out


ad.primitive_jvps[cond_p] = _cond_jvp


def _cond_partial_eval(
    trace: pe.JaxprTrace, index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]
) -> list[Any]:
    i = core.to_concrete(index)
    if i is not None and not isinstance(i, core.Tracer) and not trace.is_own(index):
        k = min(max(int(i), 0), len(branches) - 1)
        return _call(branches[k], *ops)  # the branch is known: evaluate it under this trace
    if trace.is_own(index):
        return trace.stage(cond_p, [index, *ops], {"branches": branches})
    unknowns = [trace.is_own(o) for o in ops]
    n_out = len(branches[0].out_avals)
    out_uk = [False] * n_out
    for b in branches:
        _, _, uk, _ = pe.partial_eval_jaxpr(b, unknowns, [False] * n_out)
        out_uk = [x or y for x, y in zip(out_uk, uk, strict=True)]
    splits = [pe.partial_eval_jaxpr(b, unknowns, out_uk) for b in branches]
    res_avals = [s[0].out_avals[len(s[0].out_avals) - s[3] :] for s in splits]
    all_res = [a for r in res_avals for a in r]
    known_ops = [o for o, u in zip(ops, unknowns, strict=True) if not u]
    known_branches = []
    offset = 0
    for known, _, _, n_res in splits:
        lo = offset
        offset += n_res

        def kf(*xs: Any, _k: ClosedJaxpr = known, _lo: int = lo, _n: int = n_res) -> list:
            outs = _call(_k, *xs)
            vals, res = outs[: len(outs) - _n], outs[len(outs) - _n :]
            pads = [lax.full(a.shape, 0, a.dtype) for a in all_res]
            pads[_lo : _lo + _n] = res
            return [*vals, *pads]

        known_branches.append(_trace_flat(kf, _avals(known_ops)))
    with core.set_current_trace(trace.parent):
        k_outs = cond_p.bind(index, *known_ops, branches=tuple(known_branches))
    n_known = len(k_outs) - len(all_res)
    k_vals, residuals = k_outs[:n_known], k_outs[n_known:]
    unknown_ops = [o for o, u in zip(ops, unknowns, strict=True) if u]
    u_avals = [core.get_aval(o) for o in unknown_ops]
    unknown_branches = []
    offset = 0
    for _, unknown, _, n_res in splits:
        lo = offset
        offset += n_res

        def uf(*xs: Any, _u: ClosedJaxpr = unknown, _lo: int = lo, _n: int = n_res) -> list:
            res, rest = xs[: len(all_res)], xs[len(all_res) :]
            return _call(_u, *res[_lo : _lo + _n], *rest)

        unknown_branches.append(_trace_flat(uf, [*all_res, *u_avals]))
    staged = trace.stage(
        cond_p, [index, *residuals, *unknown_ops], {"branches": tuple(unknown_branches)}
    )
    k_it, u_it = iter(k_vals), iter(staged)
    return [next(u_it) if u else next(k_it) for u in out_uk]


pe.partial_eval_rules[cond_p] = _cond_partial_eval


def _cond_transpose(
    cts: list[Any], index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]
) -> list[Any]:
    if is_undefined(index):
        raise ValueError("cond is not linear in its index")
    undefined = [is_undefined(o) for o in ops]
    defined = [o for o in ops if not is_undefined(o)]
    d_avals = _avals(defined)
    ct_nz = [not isinstance(c, Zero) for c in cts]
    ct_avals = [a for a, nz in zip(branches[0].out_avals, ct_nz, strict=True) if nz]
    u_avals = [o.aval for o in ops if is_undefined(o)]

    def transposer(b: ClosedJaxpr) -> ClosedJaxpr:
        def f(*xs: Any) -> list[Any]:
            d_it = iter(xs[: len(d_avals)])
            c_it = iter(xs[len(d_avals) :])
            args = [
                UndefinedPrimal(o.aval) if u else next(d_it)
                for o, u in zip(ops, undefined, strict=True)
            ]
            cts_full = [
                next(c_it) if nz else Zero(a) for nz, a in zip(ct_nz, b.out_avals, strict=True)
            ]
            res = ad.backward_pass(b.jaxpr, b.consts, args, cts_full)
            out = [r for r, u in zip(res, undefined, strict=True) if u]
            return [
                ad.instantiate(r) if isinstance(r, Zero) else r
                for r, a in zip(out, u_avals, strict=True)
            ]

        return _trace_flat(f, [*d_avals, *ct_avals])

    t_branches = tuple(transposer(b) for b in branches)
    outs = iter(
        cond_p.bind(
            index, *defined, *[c for c in cts if not isinstance(c, Zero)], branches=t_branches
        )
    )
    return [None] + [next(outs) if u else None for u in undefined]


ad.primitive_transposes[cond_p] = _cond_transpose


def _cond_batch(
    args: list[Any], dims: list[Any], *, branches: tuple[ClosedJaxpr, ...]
) -> tuple[list[Any], list[Any]]:
    index, *ops = args
    idim, *odims = dims
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    ops = [
        batching.bdim_at_front(o, d, size) if d is not None else o
        for o, d in zip(ops, odims, strict=True)
    ]
    in_dims = [0 if d is not None else None for d in odims]
    n_out = len(branches[0].out_avals)
    if idim is None:
        avals = _avals(ops)
        bb = tuple(
            _trace_flat(
                lambda *xs, _b=b: batching.vmap_flat(
                    lambda *ys: _call(_b, *ys), xs, in_dims, [0] * n_out, size
                ),
                avals,
            )
            for b in branches
        )
        outs = cond_p.bind(index, *ops, branches=bb)
        return outs, [0] * len(outs)
    # a batched predicate: evaluate every branch and select per example
    index = batching.bdim_at_front(index, idim, size)
    results = [
        batching.vmap_flat(lambda *ys, _b=b: _call(_b, *ys), ops, in_dims, [0] * n_out, size)
        for b in branches
    ]
    clamped = lax.clamp(
        lax.full((), 0, dtypes.int32), index, lax.full((), len(branches) - 1, dtypes.int32)
    )
    outs = []
    for k in range(n_out):
        shape = core.get_aval(results[0][k]).shape
        which = lax.broadcast_in_dim(clamped, shape, (0,))
        outs.append(lax.select_n(which, *[r[k] for r in results]))
    return outs, [0] * n_out


batching.primitive_batchers[cond_p] = _cond_batch


# ============================================================================================
# while_loop / fori_loop
# ============================================================================================
while_p = core.Primitive("while")
while_p.multiple_results = True


@while_p.def_abstract_eval
def _while_abstract(
    *args: ShapedArray,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[ShapedArray]:
    return list(body_jaxpr.out_avals)


@while_p.def_impl
def _while_impl(
    *args: Any,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[Any]:
    cc, bc = args[:cond_nconsts], args[cond_nconsts : cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts :])
    while bool(_call(cond_jaxpr, *cc, *carry)[0]):
        carry = _call(body_jaxpr, *bc, *carry)
    return carry


def while_loop(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    init_flat, in_tree = tree_flatten(init_val)
    init_flat = [_to_array(x) for x in init_flat]
    avals = _avals(init_flat)
    cond_closed, cond_consts, cond_tree = _trace_fun(cond_fun, _single(in_tree), avals)
    co = cond_closed.out_avals
    if (
        cond_tree != tree_structure(True)
        or len(co) != 1
        or co[0].shape != ()
        or co[0].dtype is not dtypes.bool_
    ):
        raise TypeError(
            f"cond_fun must return a boolean scalar, but got output type(s) {list(co)}."
        )
    body_closed, body_consts, body_tree = _trace_fun(body_fun, _single(in_tree), avals)
    if body_tree == in_tree:
        init_flat, changed = _promote_weak_inputs(init_flat, avals, body_closed.out_avals)
        if changed:
            avals = _avals(init_flat)
            cond_closed, cond_consts, _ = _trace_fun(cond_fun, _single(in_tree), avals)
            body_closed, body_consts, body_tree = _trace_fun(body_fun, _single(in_tree), avals)
    if body_tree != in_tree or not _same_types(body_closed.out_avals, avals):
        raise _carry_type_error(
            "while_loop body", body_fun, in_tree, body_tree, avals, body_closed.out_avals
        )
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *init_flat,
        cond_jaxpr=cond_closed,
        body_jaxpr=body_closed,
        cond_nconsts=len(cond_consts),
        body_nconsts=len(body_consts),
    )
    return tree_unflatten(in_tree, outs)


def _single(in_tree: Any) -> Any:
    return treedef_tuple([in_tree])


def fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, Any], Any],
    init_val: Any,
    *,
    unroll: Any = None,
) -> Any:
    lower_a, upper_a = _to_array(lower), _to_array(upper)
    la, ua = core.get_aval(lower_a), core.get_aval(upper_a)
    dt: dtypes.DType | None = la.dtype
    if la.dtype is not ua.dtype:
        # a weakly typed signed-integer bound (e.g. a Python int) adopts the other's dtype
        dt = None
        if la.dtype.kind == "i" and ua.dtype.kind == "i" and la.weak_type != ua.weak_type:
            dt = ua.dtype if la.weak_type else la.dtype
        if dt is None:
            raise TypeError(
                "lower and upper arguments to fori_loop must have equal types, got "
                f"{la.dtype.name} and {ua.dtype.name}"
            )
    lo_c, hi_c = core.to_concrete(lower), core.to_concrete(upper)
    bounds: tuple[int, int] | None = None
    if lo_c is not None and hi_c is not None:
        try:
            bounds = (int(lo_c), int(hi_c))
        except (TypeError, core.ConcretizationTypeError):
            bounds = None
    if bounds is not None:
        # known trip count: a scan (reverse-differentiable); the index starts as a Python int,
        # so it is weakly typed int32, as in JAX
        lo, hi = bounds

        def scan_body(loop_carry: Any, _: Any) -> tuple[Any, None]:
            i, x = loop_carry
            return (i + 1, body_fun(i, x)), None

        (_, out), _ = scan(
            scan_body,
            (lo, init_val),
            None,
            length=max(hi - lo, 0),
            unroll=1 if unroll is None or unroll is False else unroll,
        )
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are statically known."
        )
    if la.dtype is not dt:
        lower_a = lax.convert_element_type(lower_a, dt)
    if ua.dtype is not dt:
        upper_a = lax.convert_element_type(upper_a, dt)

    def w_cond(c: Any) -> Any:
        return lax.lt(c[0], c[1])

    def w_body(loop_carry: Any) -> Any:
        i, hi, x = loop_carry
        return (i + 1, hi, body_fun(i, x))

    return while_loop(w_cond, w_body, (lower_a, upper_a, init_val))[2]


def _while_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[list[Any], list[Any]]:

    nc, nb = cond_nconsts, body_nconsts
    cc, bc, init = primals[:nc], primals[nc : nc + nb], primals[nc + nb :]
    bct, init_t = tangents[nc : nc + nb], tangents[nc + nb :]
    bc_nz = [not isinstance(t, Zero) for t in bct]
    carry_nz = [not isinstance(t, Zero) for t in init_t]
    while True:
        _, out_nz = ad.jvp_jaxpr(body_jaxpr, tuple(bc_nz + carry_nz), None)
        new = [a or b for a, b in zip(carry_nz, out_nz, strict=True)]
        if new == carry_nz:
            break
        carry_nz = new
    jbody, _ = ad.jvp_jaxpr(body_jaxpr, tuple(bc_nz + carry_nz), carry_nz)
    n_carry = len(init)
    t_avals = [ad.tangent_aval(a) for a, nz in zip(_avals(init), carry_nz, strict=True) if nz]

    # body over (bconsts, bconst tangents, carry, carry tangents) in while_p's layout
    n_bct = sum(bc_nz)

    def body(*xs: Any) -> list[Any]:
        consts, ctangs = xs[:nb], xs[nb : nb + n_bct]
        carry, ctan = xs[nb + n_bct : nb + n_bct + n_carry], xs[nb + n_bct + n_carry :]
        return _call(jbody, *consts, *carry, *ctangs, *ctan)

    b_avals = [
        *_avals(bc),
        *[core.get_aval(t) for t in bct if not isinstance(t, Zero)],
        *_avals(init),
        *t_avals,
    ]
    new_body = _trace_flat(body, b_avals)

    def cnd(*xs: Any) -> list[Any]:
        return _call(cond_jaxpr, *xs[:nc], *xs[nc : nc + n_carry])

    new_cond = _trace_flat(cnd, [*_avals(cc), *_avals(init), *t_avals])
    init_tangents = [ad.instantiate(t) for t, nz in zip(init_t, carry_nz, strict=True) if nz]
    outs = while_p.bind(
        *cc,
        *bc,
        *[t for t in bct if not isinstance(t, Zero)],
        *init,
        *init_tangents,
        cond_jaxpr=new_cond,
        body_jaxpr=new_body,
        cond_nconsts=nc,
        body_nconsts=nb + n_bct,
    )
    p_out, t_it = outs[:n_carry], iter(outs[n_carry:])
    t_out = [
        next(t_it) if nz else Zero(ad.tangent_aval(a))
        for nz, a in zip(carry_nz, _avals(init), strict=True)
    ]
    return p_out, t_out


ad.primitive_jvps[while_p] = _while_jvp


def _while_partial_eval(
    trace: pe.JaxprTrace,
    *args: Any,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[Any]:
    """Known carries (e.g. primals under linearize) are computed by a loop over them alone, so
    they stay concrete; the unknown ones are staged with the whole loop."""
    params = {
        "cond_jaxpr": cond_jaxpr,
        "body_jaxpr": body_jaxpr,
        "cond_nconsts": cond_nconsts,
        "body_nconsts": body_nconsts,
    }
    nc, nb = cond_nconsts, body_nconsts
    unknowns = [trace.is_own(a) for a in args]
    n = len(args) - nc - nb
    carry_uk = unknowns[nc + nb :]
    while True:
        _, _, out_uk, _ = pe.partial_eval_jaxpr(
            body_jaxpr, unknowns[nc : nc + nb] + carry_uk, [False] * n
        )
        new = [a or b for a, b in zip(carry_uk, out_uk, strict=True)]
        if new == carry_uk:
            break
        carry_uk = new
    c_known, _, c_uk, _ = pe.partial_eval_jaxpr(cond_jaxpr, unknowns[:nc] + carry_uk, [False])
    staged = trace.stage(while_p, list(args), params)
    if c_uk[0] or all(carry_uk):
        return staged
    b_known, _, _, _ = pe.partial_eval_jaxpr(
        body_jaxpr, unknowns[nc : nc + nb] + carry_uk, carry_uk
    )
    kc = [a for a, u in zip(args[:nc], unknowns[:nc], strict=True) if not u]
    kb = [a for a, u in zip(args[nc : nc + nb], unknowns[nc : nc + nb], strict=True) if not u]
    kk = [a for a, u in zip(args[nc + nb :], carry_uk, strict=True) if not u]
    n_kk = len(kk)
    k_cond = _trace_flat(lambda *xs: _call(c_known, *xs)[:1], _avals([*kc, *kk]))
    k_body = _trace_flat(lambda *xs: _call(b_known, *xs)[:n_kk], _avals([*kb, *kk]))
    with core.set_current_trace(trace.parent):
        known_out = while_p.bind(
            *kc,
            *kb,
            *kk,
            cond_jaxpr=k_cond,
            body_jaxpr=k_body,
            cond_nconsts=len(kc),
            body_nconsts=len(kb),
        )
    k_it = iter(known_out)
    return [s if u else next(k_it) for s, u in zip(staged, carry_uk, strict=True)]


pe.partial_eval_rules[while_p] = _while_partial_eval


def _while_batch(
    args: list[Any],
    dims: list[Any],
    *,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    args = [
        batching.bdim_at_front(a, d, size) if d is not None else a
        for a, d in zip(args, dims, strict=True)
    ]
    nc, nb = cond_nconsts, body_nconsts
    cc, bc, init = args[:nc], args[nc : nc + nb], args[nc + nb :]
    cdims = [0 if d is not None else None for d in dims[:nc]]
    bdims = [0 if d is not None else None for d in dims[nc : nc + nb]]
    # carries are batched when their input is, or the body makes them so: broadcast them all
    init = [
        a if d is not None else batching.broadcast(a, size, 0)
        for a, d in zip(init, dims[nc + nb :], strict=True)
    ]
    n = len(init)

    def pred_b(*xs: Any) -> Any:
        return batching.vmap_flat(
            lambda *ys: _call(cond_jaxpr, *ys), xs, cdims + [0] * n, [0], size
        )[0]

    def any_cond(*xs: Any) -> list[Any]:
        return [lax.reduce_or(pred_b(*xs), (0,))]

    def body(*xs: Any) -> list[Any]:
        c_consts, b_consts, carry = xs[:nc], xs[nc : nc + nb], xs[nc + nb :]
        p = pred_b(*c_consts, *carry)
        new = batching.vmap_flat(
            lambda *ys: _call(body_jaxpr, *ys), [*b_consts, *carry], bdims + [0] * n, [0] * n, size
        )
        outs = []
        for old, nw in zip(carry, new, strict=True):
            shape = core.get_aval(old).shape
            outs.append(lax.select(lax.broadcast_in_dim(p, shape, (0,)), nw, old))
        return outs

    c_avals = [*_avals(cc), *_avals(init)]
    new_cond = _trace_flat(any_cond, c_avals)
    new_body = _trace_flat(body, [*_avals(cc), *_avals(bc), *_avals(init)])
    outs = while_p.bind(
        *cc,
        *cc,
        *bc,
        *init,
        cond_jaxpr=new_cond,
        body_jaxpr=new_body,
        cond_nconsts=nc,
        body_nconsts=nc + nb,
    )
    return outs, [0] * n


batching.primitive_batchers[while_p] = _while_batch


# ============================================================================================
# scan / map
# ============================================================================================
scan_p = core.Primitive("scan")
scan_p.multiple_results = True


@scan_p.def_abstract_eval
def _scan_abstract(
    *args: ShapedArray,
    jaxpr: ClosedJaxpr,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
    linear: Any = None,
    unroll: int = 1,
    _split_transpose: bool = False,
) -> list[ShapedArray]:
    outs = jaxpr.out_avals
    carry = list(outs[:num_carry])
    ys = [a.update(shape=(length, *a.shape)) for a in outs[num_carry:]]
    return carry + ys


def _index(x: Any, i: int) -> Any:
    a = core.get_aval(x)
    return lax.squeeze(lax.slice(x, (i, *[0] * (a.ndim - 1)), (i + 1, *a.shape[1:])), (0,))


def stack_pieces(pieces: list[Any], aval: ShapedArray, length: int) -> Any:
    """Stack per-iteration values along a new leading axis (in groups, bounding kernel size)."""
    if length == 0:
        return lax.full((0, *aval.shape), 0, aval.dtype)
    rows = [lax.expand_dims(p, (0,)) for p in pieces]
    while len(rows) > 1:
        rows = [
            lax.concatenate(rows[k : k + 8], 0) if len(rows[k : k + 8]) > 1 else rows[k]
            for k in range(0, len(rows), 8)
        ]
    return rows[0]


def _unroll_count(unroll: Any, length: int) -> int:
    """JAX's `unroll`: True is the whole loop, False one iteration; else a non-negative int."""
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return unroll


def _loop_boundary(x: Any) -> Any:
    """End of a loop body's `unroll` iterations (JAX's loop boundary): a pending expression of
    the carry or of the block's outputs becomes its own buffer, so each block of iterations
    lowers to the same kernels (compiled once) instead of one expression fusing across the
    whole loop."""
    if isinstance(x, Array):
        x._buffer()
    return x


# A scan inside a program being compiled is unrolled into it: the program's kernels repeat per
# iteration (fast to run, with the iterations' kernels fused across the carry). Past this many
# equations unrolled, compiling costs more than it saves (seconds of lowering, and every
# iteration's buffers in one program: gigabytes for a 464 x 464 eigh's 6,000 Jacobi rounds),
# so the enclosing program runs eagerly and the loop runs its body's own compiled program per
# iteration.
_UNROLLED_EQUATIONS = 20_000
# Eager loops at least this long run their body as a compiled program (cached per body).
_COMPILED_BODY_ITERATIONS = 256


def _scan_body(jaxpr: ClosedJaxpr, length: int) -> Callable[..., list[Any]]:
    """How each iteration of a scan runs: its body's compiled program on concrete arrays (one
    compile, then no lowering per iteration), else its equations one by one."""
    if program.compiling():
        if length * len(jaxpr.jaxpr.eqns) > _UNROLLED_EQUATIONS:
            raise NeedsValues(f"a scan of {length} iterations is too long to unroll")
        return functools.partial(_call, jaxpr)
    if length < _COMPILED_BODY_ITERATIONS:  # a short loop: its body's program is not worth
        return functools.partial(_call, jaxpr)  # compiling (nor keeping: programs are cached)

    def run(*args: Any) -> list[Any]:
        outs = program.run_jaxpr(jaxpr, list(args), name="scan body")
        return outs if outs is not None else _call(jaxpr, *args)

    return run


@scan_p.def_impl
def _scan_impl(
    *args: Any,
    jaxpr: ClosedJaxpr,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
    linear: Any = None,
    unroll: int = 1,
    _split_transpose: bool = False,
) -> list[Any]:
    consts = args[:num_consts]
    carry = list(args[num_consts : num_consts + num_carry])
    xs = args[num_consts + num_carry :]
    y_avals = jaxpr.out_avals[num_carry:]
    ys: list[list[Any]] = [[] for _ in y_avals]
    order = range(length - 1, -1, -1) if reverse else range(length)
    every = max(1, int(unroll))
    body = _scan_body(jaxpr, length)
    for n, i in enumerate(order):
        outs = body(*consts, *carry, *[_index(x, i) for x in xs])
        carry = outs[:num_carry]
        for k, y in enumerate(outs[num_carry:]):
            ys[k].append(y)
        if (n + 1) % every == 0 or n + 1 == length:
            carry = [_loop_boundary(c) for c in carry]
            for pieces in ys:  # the block's outputs too: stacking them recomputes nothing
                for y in pieces[-every:]:
                    _loop_boundary(y)
    if reverse:
        ys = [list(reversed(y)) for y in ys]
    outs = carry + [stack_pieces(y, a, length) for y, a in zip(ys, y_avals, strict=True)]
    # iterations may differ in weak types (a weak initial carry); give the declared types
    avals = _scan_abstract(
        *[core.get_aval(a) for a in args],
        jaxpr=jaxpr,
        length=length,
        reverse=reverse,
        num_consts=num_consts,
        num_carry=num_carry,
    )
    return [
        lax.convert_element_type(o, a.dtype, a.weak_type)
        if core.get_aval(o).weak_type != a.weak_type
        else o
        for o, a in zip(outs, avals, strict=True)
    ]


def scan(
    f: Callable[[Any, Any], Any],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: Any = 1,
    _split_transpose: bool = False,
) -> Any:
    xs_flat, xs_tree = tree_flatten(xs)
    xs_flat = [_to_array(x) for x in xs_flat]
    lengths = {core.get_aval(x).shape[0] for x in xs_flat if core.get_aval(x).shape}
    for x in xs_flat:
        if not core.get_aval(x).shape:
            short = core.get_aval(x).str_short(True)
            raise ValueError(f"scan got value with no leading axis to scan over: {short}")
    if length is not None:
        length = int(length)
        if lengths and lengths != {length}:
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading axis "
                f"sizes {sorted(lengths)}."
            )
    elif len(lengths) > 1:
        raise ValueError(
            "scan got values with different leading axis sizes: "
            + ", ".join(str(s) for s in sorted(lengths))
            + "."
        )
    elif not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    else:
        length = lengths.pop()
    init_flat, init_tree = tree_flatten(init)
    init_flat = [_to_array(x) for x in init_flat]
    carry_avals = _avals(init_flat)
    x_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in xs_flat]

    arg_tree = treedef_tuple([init_tree, xs_tree])
    closed, consts, out_tree = _trace_fun(f, arg_tree, [*carry_avals, *x_avals])
    outs = closed.out_avals
    if out_tree.kind is not tuple or len(out_tree.children) != 2:
        raise TypeError("scan body output must be a pair, got " + str(out_tree) + ".")
    carry_tree, ys_tree = out_tree.children
    n_carry = len(init_flat)
    if carry_tree != init_tree:
        raise _carry_type_error("scan body", f, init_tree, carry_tree, carry_avals, outs[:n_carry])
    init_flat, changed = _promote_weak_inputs(init_flat, carry_avals, outs[:n_carry])
    if changed:
        carry_avals = _avals(init_flat)
        closed, consts, out_tree = _trace_fun(f, arg_tree, [*carry_avals, *x_avals])
        outs = closed.out_avals
        if out_tree.kind is not tuple or len(out_tree.children) != 2:
            raise TypeError("scan body output must be a pair, got " + str(out_tree) + ".")
        carry_tree, ys_tree = out_tree.children
    if not _same_types(outs[:n_carry], carry_avals):
        raise _carry_type_error("scan body", f, init_tree, carry_tree, carry_avals, outs[:n_carry])
    res = scan_p.bind(
        *consts,
        *init_flat,
        *xs_flat,
        jaxpr=closed,
        length=length,
        reverse=bool(reverse),
        num_consts=len(consts),
        num_carry=n_carry,
        linear=(False,) * (len(consts) + n_carry + len(xs_flat)),
        unroll=_unroll_count(unroll, length),
        _split_transpose=False,
    )
    carry_out = tree_unflatten(init_tree, res[:n_carry])
    ys = tree_unflatten(ys_tree, res[n_carry:])
    return carry_out, ys


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    if batch_size is not None:
        return _map_batched(f, xs, batch_size)
    _, ys = scan(lambda c, x: (c, f(x)), None, xs)
    return ys


def _map_batched(f: Callable[[Any], Any], xs: Any, batch_size: int) -> Any:
    """`batch_size` elements per step (vmapped), then the remainder in one vmapped call."""
    leaves, tree = tree_flatten(xs)
    n = core.get_aval(leaves[0]).shape[0]
    num_batches, rem = divmod(n, batch_size)
    done = num_batches * batch_size

    def part(x: Any, lo: int, hi: int) -> Any:
        shape = core.get_aval(x).shape
        return lax.slice(x, (lo, *[0] * (len(shape) - 1)), (hi, *shape[1:]))

    outs: list[tuple[list[Any], Any]] = []
    if num_batches:
        reshaped = [
            lax.reshape(part(x, 0, done), (num_batches, batch_size, *core.get_aval(x).shape[1:]))
            for x in leaves
        ]
        ys = map(vmap(f), tree_unflatten(tree, reshaped))
        y_leaves, y_tree = tree_flatten(ys)
        flat = [lax.reshape(y, (done, *core.get_aval(y).shape[2:])) for y in y_leaves]
        outs.append((flat, y_tree))
    if rem:
        ys = vmap(f)(tree_unflatten(tree, [part(x, done, n) for x in leaves]))
        outs.append(tree_flatten(ys))
    if len(outs) == 1:
        return tree_unflatten(outs[0][1], outs[0][0])
    (a, a_tree), (b, _) = outs
    return tree_unflatten(a_tree, [lax.concatenate([x, y], 0) for x, y in zip(a, b, strict=True)])


def _scan_params(
    jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int, num_carry: int, n_xs: int
) -> dict[str, Any]:
    return {
        "jaxpr": jaxpr,
        "length": length,
        "reverse": reverse,
        "num_consts": num_consts,
        "num_carry": num_carry,
        "linear": (False,) * (num_consts + num_carry + n_xs),
        "unroll": 1,
        "_split_transpose": False,
    }


def _scan_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    jaxpr: ClosedJaxpr,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
    **_: Any,
) -> tuple[list[Any], list[Any]]:

    nc, nk = num_consts, num_carry
    consts, init, xs = primals[:nc], primals[nc : nc + nk], primals[nc + nk :]
    ct, it, xt = tangents[:nc], tangents[nc : nc + nk], tangents[nc + nk :]
    const_nz = [not isinstance(t, Zero) for t in ct]
    carry_nz = [not isinstance(t, Zero) for t in it]
    xs_nz = [not isinstance(t, Zero) for t in xt]
    while True:
        _jaxpr, out_nz = ad.jvp_jaxpr(jaxpr, tuple(const_nz + carry_nz + xs_nz), None)
        new = [a or b for a, b in zip(carry_nz, out_nz[:nk], strict=True)]
        if new == carry_nz:
            break
        carry_nz = new
    n_y = len(jaxpr.out_avals) - nk
    inst = carry_nz + [None] * n_y  # ys tangents: whatever the body gives
    jbody, out_nz = ad.jvp_jaxpr(jaxpr, tuple(const_nz + carry_nz + xs_nz), inst)
    ys_nz = out_nz[nk:]
    n_ct, n_cart, n_xt = sum(const_nz), sum(carry_nz), sum(xs_nz)

    # reorder (consts, carry, xs, const_t, carry_t, xs_t) -> scan layout
    def body(*a: Any) -> list[Any]:
        c, c_t = a[:nc], a[nc : nc + n_ct]
        k, k_t = a[nc + n_ct : nc + n_ct + nk], a[nc + n_ct + nk : nc + n_ct + nk + n_cart]
        x = a[nc + n_ct + nk + n_cart : nc + n_ct + nk + n_cart + len(xs)]
        x_t = a[nc + n_ct + nk + n_cart + len(xs) :]
        outs = _call(jbody, *c, *k, *x, *c_t, *k_t, *x_t)
        p = outs[: nk + n_y]
        t = outs[nk + n_y :]
        t_carry, t_ys = t[:n_cart], t[n_cart:]
        return [*p[:nk], *t_carry, *p[nk:], *t_ys]

    x_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in xs]
    xt_avals = [ad.tangent_aval(a) for a, nz in zip(x_avals, xs_nz, strict=True) if nz]
    c_t_vals = [t for t in ct if not isinstance(t, Zero)]
    k_t_vals = [ad.instantiate(t) for t, nz in zip(it, carry_nz, strict=True) if nz]
    x_t_vals = [t for t in xt if not isinstance(t, Zero)]
    b_avals = [
        *_avals(consts),
        *_avals(c_t_vals),
        *_avals(init),
        *_avals(k_t_vals),
        *x_avals,
        *xt_avals,
    ]
    new_body = _trace_flat(body, b_avals)
    outs = scan_p.bind(
        *consts,
        *c_t_vals,
        *init,
        *k_t_vals,
        *xs,
        *x_t_vals,
        **_scan_params(new_body, length, reverse, nc + n_ct, nk + n_cart, len(xs) + n_xt),
    )
    p_carry, t_carry = outs[:nk], iter(outs[nk : nk + n_cart])
    ys_all = outs[nk + n_cart :]
    p_ys, t_ys = ys_all[:n_y], iter(ys_all[n_y:])
    c_avals = _avals(init)
    y_avals = _scan_abstract(
        *[], jaxpr=jaxpr, length=length, reverse=reverse, num_consts=nc, num_carry=nk
    )[nk:]
    t_out = [
        next(t_carry) if nz else Zero(ad.tangent_aval(a))
        for nz, a in zip(carry_nz, c_avals, strict=True)
    ]
    t_out += [
        next(t_ys) if nz else Zero(ad.tangent_aval(a)) for nz, a in zip(ys_nz, y_avals, strict=True)
    ]
    return [*p_carry, *p_ys], t_out


ad.primitive_jvps[scan_p] = _scan_jvp


def _scan_partial_eval(
    trace: pe.JaxprTrace,
    *args: Any,
    jaxpr: ClosedJaxpr,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
    **params: Any,
) -> list[Any]:
    nc, nk = num_consts, num_carry
    unknowns = [trace.is_own(a) for a in args]
    carry_uk = unknowns[nc : nc + nk]
    n_out = len(jaxpr.out_avals)
    while True:
        _, _, out_uk, _ = pe.partial_eval_jaxpr(
            jaxpr, unknowns[:nc] + carry_uk + unknowns[nc + nk :], [False] * n_out
        )
        new = [a or b for a, b in zip(carry_uk, out_uk[:nk], strict=True)]
        if new == carry_uk:
            break
        carry_uk = new
    in_uk = unknowns[:nc] + carry_uk + unknowns[nc + nk :]
    known, unknown, out_uk, n_res = pe.partial_eval_jaxpr(
        jaxpr, in_uk, carry_uk + [False] * (n_out - nk)
    )
    consts, init, xs = args[:nc], args[nc : nc + nk], args[nc + nk :]
    k_consts = [c for c, u in zip(consts, in_uk[:nc], strict=True) if not u]
    k_init = [c for c, u in zip(init, carry_uk, strict=True) if not u]
    k_xs = [c for c, u in zip(xs, in_uk[nc + nk :], strict=True) if not u]
    n_kcarry = len(k_init)
    n_ky = sum(1 for u in out_uk[nk:] if not u)
    with core.set_current_trace(trace.parent):
        k_outs = scan_p.bind(
            *k_consts,
            *k_init,
            *k_xs,
            **_scan_params(known, length, reverse, len(k_consts), n_kcarry, len(k_xs)),
        )
    k_carry = k_outs[:n_kcarry]
    k_ys = k_outs[n_kcarry : n_kcarry + n_ky]
    residuals = k_outs[n_kcarry + n_ky :]  # stacked per iteration
    # unknown body: (residuals, unknown consts, unknown carry, unknown xs) in pe order; make it
    # a scan body with consts = unknown consts, carry = unknown carry, xs = residuals + xs
    u_consts = [c for c, u in zip(consts, in_uk[:nc], strict=True) if u]
    u_init = [c for c, u in zip(init, carry_uk, strict=True) if u]
    u_xs = [c for c, u in zip(xs, in_uk[nc + nk :], strict=True) if u]
    res_avals = unknown.in_avals[:n_res]
    nuc, nuk = len(u_consts), len(u_init)

    def ubody(*a: Any) -> list[Any]:
        c, k = a[:nuc], a[nuc : nuc + nuk]
        r, x = a[nuc + nuk : nuc + nuk + n_res], a[nuc + nuk + n_res :]
        return _call(unknown, *r, *c, *k, *x)

    u_in_avals = [
        *unknown.in_avals[n_res : n_res + nuc + nuk],
        *res_avals,
        *unknown.in_avals[n_res + nuc + nuk :],
    ]
    u_closed = _trace_flat(ubody, u_in_avals)
    staged = trace.stage(
        scan_p,
        [*u_consts, *u_init, *residuals, *u_xs],
        _scan_params(u_closed, length, reverse, nuc, nuk, n_res + len(u_xs)),
    )
    u_carry, u_ys = staged[:nuk], staged[nuk:]
    kc, uc, ky, uy = iter(k_carry), iter(u_carry), iter(k_ys), iter(u_ys)
    out = [next(uc) if u else next(kc) for u in carry_uk]
    out += [next(uy) if u else next(ky) for u in out_uk[nk:]]
    return out


pe.partial_eval_rules[scan_p] = _scan_partial_eval


def _scan_transpose(
    cts: list[Any],
    *args: Any,
    jaxpr: ClosedJaxpr,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
    **_: Any,
) -> list[Any]:
    nc, nk = num_consts, num_carry
    consts, init, xs = args[:nc], args[nc : nc + nk], args[nc + nk :]
    # After partial evaluation every carry is linear; a defined one is an instantiated zero
    # tangent whose cotangent nobody needs.
    c_undef = [is_undefined(c) for c in consts]
    x_undef = [is_undefined(x) for x in xs]
    d_consts = [c for c in consts if not is_undefined(c)]
    d_xs = [x for x in xs if not is_undefined(x)]
    ct_carry = [ad.instantiate(c) if isinstance(c, Zero) else c for c in cts[:nk]]
    ct_ys = cts[nk:]
    ys_nz = [not isinstance(c, Zero) for c in ct_ys]
    carry_avals = [c.aval if is_undefined(c) else core.get_aval(c) for c in init]
    uc_avals = [c.aval for c in consts if is_undefined(c)]
    ux_avals = [x.aval.update(shape=x.aval.shape[1:]) for x in xs if is_undefined(x)]
    dx_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in d_xs]
    y_avals = jaxpr.out_avals[nk:]
    nzy_avals = [a for a, nz in zip(y_avals, ys_nz, strict=True) if nz]
    n_dc, n_uc = len(d_consts), len(uc_avals)

    # transposed body: consts = defined consts; carry = (ct of undefined consts, ct carry);
    # xs = (defined xs, ct ys)
    def tbody(*a: Any) -> list[Any]:
        dc = a[:n_dc]
        acc = a[n_dc : n_dc + n_uc]
        ck = a[n_dc + n_uc : n_dc + n_uc + nk]
        dx = a[n_dc + n_uc + nk : n_dc + n_uc + nk + len(d_xs)]
        cy = iter(a[n_dc + n_uc + nk + len(d_xs) :])
        dc_it, dx_it = iter(dc), iter(dx)
        body_args = [
            UndefinedPrimal(c.aval) if u else next(dc_it)
            for c, u in zip(consts, c_undef, strict=True)
        ]
        body_args += [UndefinedPrimal(a_) for a_ in carry_avals]
        body_args += [
            UndefinedPrimal(x.aval.update(shape=x.aval.shape[1:])) if u else next(dx_it)
            for x, u in zip(xs, x_undef, strict=True)
        ]
        out_cts = list(ck) + [
            next(cy) if nz else Zero(a_) for nz, a_ in zip(ys_nz, y_avals, strict=True)
        ]
        res = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, body_args, out_cts)
        rc = [r for r, u in zip(res[:nc], c_undef, strict=True) if u]
        new_acc = [ad.add_maybe_zero(a_, r) for a_, r in zip(acc, rc, strict=True)]
        new_acc = [ad.instantiate(v) if isinstance(v, Zero) else v for v in new_acc]
        rk = [ad.instantiate(r) if isinstance(r, Zero) else r for r in res[nc : nc + nk]]
        rx = [
            ad.instantiate(r) if isinstance(r, Zero) else r
            for r, u in zip(res[nc + nk :], x_undef, strict=True)
            if u
        ]
        return [*new_acc, *rk, *rx]

    t_avals = [*_avals(d_consts), *uc_avals, *carry_avals, *dx_avals, *nzy_avals]
    t_closed = _trace_flat(tbody, t_avals)
    acc0 = [lax.full(a.shape, 0, a.dtype) for a in uc_avals]
    nz_ct_ys = [c for c in ct_ys if not isinstance(c, Zero)]
    outs = scan_p.bind(
        *d_consts,
        *acc0,
        *ct_carry,
        *d_xs,
        *nz_ct_ys,
        **_scan_params(t_closed, length, not reverse, n_dc, n_uc + nk, len(d_xs) + len(nz_ct_ys)),
    )
    ct_consts = iter(outs[:n_uc])
    ct_init = outs[n_uc : n_uc + nk]
    ct_xs = iter(outs[n_uc + nk :])
    res_c = [next(ct_consts) if u else None for u in c_undef]
    res_x = [next(ct_xs) if u else None for u in x_undef]
    del ux_avals
    res_k = [c if is_undefined(k) else None for c, k in zip(ct_init, init, strict=True)]
    return [*res_c, *res_k, *res_x]


ad.primitive_transposes[scan_p] = _scan_transpose


def _scan_batch(
    args: list[Any],
    dims: list[Any],
    *,
    jaxpr: ClosedJaxpr,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
    **_: Any,
) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    nc, nk = num_consts, num_carry
    consts, init, xs = args[:nc], args[nc : nc + nk], args[nc + nk :]
    cdims, kdims, xdims = dims[:nc], dims[nc : nc + nk], dims[nc + nk :]
    consts = [
        batching.bdim_at_front(c, d, size) if d is not None else c
        for c, d in zip(consts, cdims, strict=True)
    ]
    init = [
        batching.bdim_at_front(c, d, size) if d is not None else batching.broadcast(c, size, 0)
        for c, d in zip(init, kdims, strict=True)
    ]
    # xs: batch axis goes to position 1 (after the scanned axis)
    xs = [
        batching.moveaxis(x, d, 1) if d is not None else x for x, d in zip(xs, xdims, strict=True)
    ]
    c_in = [0 if d is not None else None for d in cdims]
    x_in = [0 if d is not None else None for d in xdims]
    n_out = len(jaxpr.out_avals)

    def body(*a: Any) -> list[Any]:
        return batching.vmap_flat(
            lambda *ys: _call(jaxpr, *ys), a, c_in + [0] * nk + x_in, [0] * n_out, size
        )

    x_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in xs]
    b_closed = _trace_flat(body, [*_avals(consts), *_avals(init), *x_avals])
    outs = scan_p.bind(
        *consts, *init, *xs, **_scan_params(b_closed, length, reverse, nc, nk, len(xs))
    )
    return outs, [0] * nk + [1] * (n_out - nk)


batching.primitive_batchers[scan_p] = _scan_batch


# ---- lowering (eager evaluation) --------------------------------------------------------------
def _unused_jaxpr(j: Jaxpr) -> None:
    return None


# ============================================================================================
# platform_dependent
# ============================================================================================
def platform_dependent(
    *args: Any, default: Callable[..., Any] | None = None, **per_platform: Callable[..., Any]
) -> Any:
    """`per_platform[platform](*args)` for the platform of the default device ('cpu', 'wasm',
    'webgpu', 'webgl'), else `default(*args)`. The branch is picked when the function is traced
    (each device gets its own trace under jit), so only that branch is staged."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    platform = devices.default_device().platform
    chosen = per_platform.get(platform, default)
    if chosen is None:
        raise ValueError(
            f"lax.platform_dependent: no branch for platform '{platform}' (branches: "
            f"{sorted(per_platform)}) and no default"
        )
    return chosen(*args)
