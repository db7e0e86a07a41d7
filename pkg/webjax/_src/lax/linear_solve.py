"""custom_linear_solve and custom_root: solves whose derivatives come from the implicit function
theorem at the solution, not from differentiating the solver's iterations (which may be a
while_loop, not differentiable in reverse mode).

`linear_solve_p` holds four closed jaxprs, matvec, vecmat (the transposed map), solve and
transpose_solve, each taking its captured values as leading operands (`const_lengths` says how
many). For x = A^-1 b: dx = A^-1 (db - dA x) (jvp, a second linear_solve), and the cotangent of
b is A^-T ct (transpose: the same primitive with the roles of the two maps and the two solves
swapped). custom_root is a custom_jvp whose tangent is -(df/dx)^-1 (df/dtheta) dtheta, with
(df/dx)^-1 given by the user's tangent_solve.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .. import core
from ..core import ClosedJaxpr, ShapedArray
from ..custom_derivatives import custom_jvp
from ..interpreters import ad, batching
from ..interpreters import partial_eval as pe
from ..interpreters.ad import Zero, is_undefined
from ..tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten
from . import lax
from .lax import to_array as _to_array


class _SolveJaxprs(NamedTuple):
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> _SolveJaxprs:
        return _SolveJaxprs(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _trace(fun: Callable[..., Any], avals: list[ShapedArray]) -> tuple[ClosedJaxpr, list, Any]:
    """Trace `fun` (flat arrays -> pytree); the captured values become leading invars.
    Returns the jaxpr, the captured values and the output tree."""
    box: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        leaves, tree = tree_flatten(fun(*xs))
        box[:] = [tree]
        return [_to_array(x) for x in leaves]

    jaxpr, consts, _ = pe.trace_to_jaxpr(flat, avals)
    return ClosedJaxpr(pe.convert_constvars_jaxpr(jaxpr), []), list(consts), box[0]


def _call(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _shapes(xs: list[Any]) -> list[tuple[int, ...]]:
    return [tuple(core.get_aval(_to_array(x)).shape) for x in xs]


def _check_tree(name: str, expected_name: str, actual: Any, expected: Any) -> None:
    if actual != expected:
        raise TypeError(
            f"{name}() output pytree structure must match {expected_name}, "
            f"got {actual} and {expected}."
        )


def _checked(
    fun: Callable[..., Any],
    name: str,
    tree: Any,
    b_leaves: list,
    aux: bool,
    box: list | None = None,
) -> Any:
    """fun on flat leaves of b's structure, its output's shapes checked against b's (and the
    structure of the solution, without aux, put in `box`)."""

    def f(*xs: Any) -> Any:
        out = fun(tree_unflatten(tree, list(xs)))
        y = out[0] if aux else out
        if box is not None:
            box[:] = [tree_structure(y)]
        if _shapes(tree_leaves(y)) != _shapes(b_leaves):
            raise ValueError(
                f"{name}() output shapes must match b, got {_shapes(tree_leaves(y))} and "
                f"{_shapes(b_leaves)}"
            )
        return out

    return f


def _as_fun(closed: ClosedJaxpr, consts: list[Any], tree: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        leaves, t = tree_flatten(x)
        if t != tree:
            raise TypeError(f"expected an argument of structure {tree}, got {t}")
        return tree_unflatten(tree, _call(closed, *consts, *[_to_array(v) for v in leaves]))

    return f


# ============================================================================================
# custom_linear_solve
# ============================================================================================
linear_solve_p = core.Primitive("custom_linear_solve")  # JAX's name
linear_solve_p.multiple_results = True


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """x = solve(matvec, b), differentiated as the solution of matvec(x) == b: derivatives
    flow to b and to the values `matvec` closes over, never through `solve`'s steps.
    `transpose_solve(vecmat, b)` (vecmat: matvec's transpose, derived automatically) is needed
    for reverse mode; with `symmetric=True` it defaults to `solve`. With `has_aux`, the solves
    return (x, aux) and aux comes back undifferentiated."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_flatten(b)
    b_leaves = [_to_array(x) for x in b_leaves]
    avals = [core.get_aval(x) for x in b_leaves]

    matvec_j, matvec_c, out_tree = _trace(_checked(matvec, "matvec", tree, b_leaves, False), avals)
    _check_tree("matvec", "b", out_tree, tree)
    matvec_fn = _as_fun(matvec_j, matvec_c, tree)

    def solve_tree(s: Callable[..., Any], op: Callable[[Any], Any], name: str) -> Any:
        box: list[Any] = []
        j, c, t = _trace(_checked(lambda x: s(op, x), name, tree, b_leaves, has_aux, box), avals)
        _check_tree(name, "b", box[0], tree)
        return j, c, t

    solve_j, solve_c, solve_tree_out = solve_tree(solve, matvec_fn, "solve")
    if transpose_solve is None:
        vecmat_j = tsolve_j = None
        vecmat_c: list[Any] = []
        tsolve_c: list[Any] = []
    else:
        if symmetric:
            vecmat_j, vecmat_c = matvec_j, matvec_c
        else:
            transposed = ad.linear_transpose_flat(lambda *x: _call(matvec_j, *matvec_c, *x), avals)
            vecmat_j, vecmat_c, _ = _trace(lambda *ct: transposed(*ct), avals)
        vecmat_fn = _as_fun(vecmat_j, vecmat_c, tree)
        tsolve_j, tsolve_c, _ = solve_tree(transpose_solve, vecmat_fn, "transpose_solve")
    jaxprs = _SolveJaxprs(matvec_j, vecmat_j, solve_j, tsolve_j)
    lengths = (len(matvec_c), len(vecmat_c), len(solve_c), len(tsolve_c))
    outs = linear_solve_p.bind(
        *matvec_c, *vecmat_c, *solve_c, *tsolve_c, *b_leaves, const_lengths=lengths, jaxprs=jaxprs
    )
    return tree_unflatten(solve_tree_out, outs)


def _split(args: Any, lengths: tuple[int, ...]) -> tuple[list[list[Any]], list[Any]]:
    groups, k = [], 0
    for n in lengths:
        groups.append(list(args[k : k + n]))
        k += n
    return groups, list(args[k:])


@linear_solve_p.def_abstract_eval
def _linear_solve_abstract(*avals: ShapedArray, const_lengths: Any, jaxprs: Any) -> list:
    return list(jaxprs.solve.out_avals)


@linear_solve_p.def_impl
def _linear_solve_impl(*args: Any, const_lengths: Any, jaxprs: Any) -> list[Any]:
    (_, _, solve_c, _), b = _split(args, const_lengths)
    return _call(jaxprs.solve, *solve_c, *b)


def _linear_solve_jvp(
    primals: list[Any], tangents: list[Any], *, const_lengths: Any, jaxprs: Any
) -> tuple[list[Any], list[Any]]:
    params = {"const_lengths": const_lengths, "jaxprs": jaxprs}
    outs = linear_solve_p.bind(*primals, **params)
    (mv_c, _, _, _), b = _split(primals, const_lengths)
    (mv_dot, _, _, _), b_dot = _split(tangents, const_lengths)
    x = outs[: len(b)]
    rhs = list(b_dot)
    if not all(isinstance(t, Zero) for t in mv_dot):
        # dA x: the tangent of matvec at the solution with respect to its captured values
        x_zero = [Zero(ad.tangent_aval(core.get_aval(v))) for v in x]
        _, dax = ad.jvp_flat(lambda *a: _call(jaxprs.matvec, *a), [*mv_c, *x], [*mv_dot, *x_zero])
        rhs = [
            ad.add_maybe_zero(r, lax.neg(d)) if not isinstance(d, Zero) else r
            for r, d in zip(rhs, dax, strict=True)
        ]
    aux_zero = [Zero(ad.tangent_aval(a)) for a in jaxprs.solve.out_avals[len(b) :]]
    if all(isinstance(r, Zero) for r in rhs):
        return outs, [Zero(ad.tangent_aval(core.get_aval(v))) for v in x] + aux_zero
    rhs = [ad.instantiate(r) for r in rhs]
    n_c = sum(const_lengths)
    x_dot = linear_solve_p.bind(*primals[:n_c], *rhs, **params)[: len(b)]
    return outs, [*x_dot, *aux_zero]


ad.primitive_jvps[linear_solve_p] = _linear_solve_jvp


def _linear_solve_transpose(
    cts: list[Any], *args: Any, const_lengths: Any, jaxprs: Any
) -> list[Any]:
    if jaxprs.transpose_solve is None:
        raise TypeError(
            "transpose_solve required for backwards mode automatic differentiation of "
            "custom_linear_solve"
        )
    n_c = sum(const_lengths)
    consts, b = args[:n_c], args[n_c:]
    if any(is_undefined(c) for c in consts):
        raise NotImplementedError(
            "custom_linear_solve: transposing with respect to the linear map's captured values "
            "(only the right-hand side b is linear)"
        )
    x_avals = jaxprs.solve.out_avals[: len(b)]
    cts_x = [
        lax.full(a.shape, 0, a.dtype) if isinstance(c, Zero) else c
        for c, a in zip(cts[: len(b)], x_avals, strict=True)
    ]
    m, v, s, t = _split(consts, const_lengths)[0]
    ct_b = linear_solve_p.bind(
        *v,
        *m,
        *t,
        *s,
        *cts_x,
        const_lengths=(const_lengths[1], const_lengths[0], const_lengths[3], const_lengths[2]),
        jaxprs=jaxprs.transpose(),
    )[: len(b)]
    return [None] * n_c + list(ct_b)


ad.primitive_transposes[linear_solve_p] = _linear_solve_transpose


def _batch_jaxpr(closed: Any, dims: list[Any], size: int) -> Any:
    """`closed` mapped over axis 0 of the operands whose dim is not None (all outputs at 0)."""
    if closed is None:
        return None
    avals = list(closed.in_avals)
    b_avals = [
        a if d is None else ShapedArray((size, *a.shape), a.dtype, a.weak_type)
        for a, d in zip(avals, dims, strict=True)
    ]
    n_out = len(closed.out_avals)
    return pe.trace_to_closed_jaxpr(
        lambda *xs: batching.vmap_flat(lambda *ys: _call(closed, *ys), xs, dims, [0] * n_out, size),
        b_avals,
    )


def _linear_solve_batch(
    args: list[Any], dims: list[Any], *, const_lengths: Any, jaxprs: Any
) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    moved = [
        batching.bdim_at_front(a, d, size) if d is not None else a
        for a, d in zip(args, dims, strict=True)
    ]
    n_c = sum(const_lengths)
    consts = moved[:n_c]
    # the right-hand side (and so x) is batched whenever anything is
    b = [
        a if d is not None else batching.broadcast(a, size, 0)
        for a, d in zip(moved[n_c:], dims[n_c:], strict=True)
    ]
    c_dims = [0 if d is not None else None for d in dims[:n_c]]
    (mv_d, vm_d, s_d, t_d), _ = _split(c_dims, const_lengths)
    nb = len(b)
    new = _SolveJaxprs(
        _batch_jaxpr(jaxprs.matvec, [*mv_d, *[0] * nb], size),
        _batch_jaxpr(jaxprs.vecmat, [*vm_d, *[0] * nb], size),
        _batch_jaxpr(jaxprs.solve, [*s_d, *[0] * nb], size),
        _batch_jaxpr(jaxprs.transpose_solve, [*t_d, *[0] * nb], size),
    )
    outs = linear_solve_p.bind(*consts, *b, const_lengths=const_lengths, jaxprs=new)
    return outs, [0] * len(outs)


batching.primitive_batchers[linear_solve_p] = _linear_solve_batch


# ============================================================================================
# custom_root
# ============================================================================================
class _RootSpec(NamedTuple):
    lengths: tuple[int, int, int]
    f: ClosedJaxpr
    solve: ClosedJaxpr
    lin_solve: ClosedJaxpr
    n_sol: int


def _root_fun(spec: _RootSpec, *args: Any) -> list[Any]:
    (_, solve_c, _), guess = _split(args, spec.lengths)
    return _call(spec.solve, *solve_c, *guess)


def _root_jvp(spec: _RootSpec, primals: tuple, tangents: tuple) -> tuple[list, list]:
    outs = _root(spec, *primals)
    (f_c, _, ls_c), _ = _split(primals, spec.lengths)
    (f_dot, _, _), _ = _split(tangents, spec.lengths)
    sol, aux = outs[: spec.n_sol], outs[spec.n_sol :]
    if f_c:
        _, rhs = ad.jvp_flat(lambda *c: _call(spec.f, *c, *sol), f_c, f_dot)
        rhs = [ad.instantiate(r) for r in rhs]
    else:
        rhs = [lax.full(core.get_aval(s).shape, 0, core.get_aval(s).dtype) for s in sol]
    sol_dot = [lax.neg(_to_array(v)) for v in _call(spec.lin_solve, *ls_c, *sol, *rhs)]
    aux_dot = [lax.full(core.get_aval(a).shape, 0, core.get_aval(a).dtype) for a in aux]
    return outs, [*sol_dot, *aux_dot]


_root = custom_jvp(_root_fun, nondiff_argnums=(0,))
_root.defjvp(_root_jvp)


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
    has_aux: bool = False,
) -> Any:
    """A root of `f` found by `solve(f, initial_guess)`, differentiated with respect to the
    values `f` closes over by the implicit function theorem: `tangent_solve(g, y)` must solve
    g(x) = y for the linearization g of f at the root (e.g. `lambda g, y: y / g(1.0)` for a
    scalar). With `has_aux`, solve returns (root, aux), aux undifferentiated."""
    guess, tree = tree_flatten(initial_guess)
    guess = [_to_array(x) for x in guess]
    avals = [core.get_aval(x) for x in guess]

    def unflat(xs: Any) -> Any:
        return tree_unflatten(tree, list(xs))

    f_j, f_c, f_tree = _trace(lambda *x: f(unflat(x)), avals)
    _check_tree("f", "initial_guess", f_tree, tree)
    f_fn = _as_fun(f_j, f_c, tree)
    box: list[Any] = []

    def solve_flat(*x: Any) -> Any:
        out = solve(f_fn, unflat(x))
        box[:] = [tree_structure(out[0] if has_aux else out)]
        return out

    solve_j, solve_c, s_tree = _trace(solve_flat, avals)
    _check_tree("solve", "initial_guess", box[0], tree)

    def lin_solve(*xb: Any) -> Any:
        x, b = list(xb[: len(avals)]), unflat(xb[len(avals) :])

        def g(t: Any) -> Any:
            leaves, _ = tree_flatten(t)
            t_arr = [
                lax.convert_element_type(_to_array(v), a.dtype)
                for v, a in zip(leaves, avals, strict=True)
            ]
            _, out = ad.jvp_flat(lambda *y: _call(f_j, *f_c, *y), x, t_arr)
            return unflat(out)

        return tangent_solve(g, b)

    ls_j, ls_c, ls_tree = _trace(lin_solve, [*avals, *avals])
    _check_tree("tangent_solve", "x", ls_tree, tree)
    spec = _RootSpec((len(f_c), len(solve_c), len(ls_c)), f_j, solve_j, ls_j, len(guess))
    outs = _root(spec, *f_c, *solve_c, *ls_c, *guess)
    return tree_unflatten(s_tree, outs)
