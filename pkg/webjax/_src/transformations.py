"""The public transformation API over pytrees: jvp, linearize, vjp, grad, value_and_grad,
jacfwd, jacrev, hessian, make_jaxpr, eval_shape, linear_transpose, stop_gradient, checkpoint.

Each wrapper flattens pytrees, checks arguments the way JAX does (same exception types), and
calls the flat interpreter in `interpreters/`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from . import core, dtypes
from .core import ShapedArray
from .dispatch.array import to_array as _to_array
from .interpreters import ad, batching
from .interpreters import partial_eval as pe
from .interpreters.ad import Zero
from .lax import lax
from .tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten
from .vmap import vmap


class _Outs:
    """Output bookkeeping of a flattened function: tree, and aux leaves carried as outputs."""

    def __init__(self) -> None:
        self.tree: Any = None
        self.n_main = 0
        self.aux_tree: Any = None
        self.aux_static: dict[int, Any] = {}

    def split(self, outs: Sequence[Any]) -> tuple[list[Any], Any]:
        main, aux_dyn = list(outs[: self.n_main]), iter(outs[self.n_main :])
        if self.aux_tree is None:
            return main, None
        n_aux = self.aux_tree.num_leaves
        leaves = [
            self.aux_static[i] if i in self.aux_static else next(aux_dyn) for i in range(n_aux)
        ]
        return main, tree_unflatten(self.aux_tree, leaves)


def _flat_fun(
    fun: Callable[..., Any], in_tree: Any, store: _Outs, has_aux: bool = False
) -> Callable[..., list]:
    """`fun` on flat arguments returning flat outputs; with has_aux the aux leaves that are
    arrays come after the main outputs (so transformations return them concrete)."""

    def flat(*args: Any) -> list[Any]:
        a, kw = tree_unflatten(in_tree, args)
        out = fun(*a, **kw)
        aux_leaves: list[Any] = []
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise ValueError(
                    "has_aux=True requires fun to return a pair (output, auxiliary data), got "
                    f"{type(out).__name__}"
                )
            out, aux = out
            leaves_aux, store.aux_tree = tree_flatten(aux)
            store.aux_static = {}
            for i, leaf in enumerate(leaves_aux):
                if core.is_valid_jaxtype(leaf):
                    aux_leaves.append(_to_array(leaf))
                else:
                    store.aux_static[i] = leaf
        leaves, store.tree = tree_flatten(out)
        store.n_main = len(leaves)
        return [_to_array(x) for x in leaves] + aux_leaves

    return flat


# ---- jvp / linearize ----------------------------------------------------------------------------
def _check_tangent(p: Any, t: Any) -> None:
    pa, ta = core.get_aval(p), core.get_aval(t)
    if pa.shape != ta.shape:
        raise ValueError(
            "jvp called with different primal and tangent shapes;"
            f"Got primal shape {pa.shape} and tangent shape as {ta.shape}"
        )
    expected = pa.dtype if pa.dtype.kind in "fc" else "float0"
    if pa.dtype.kind in "fc" and ta.dtype is not pa.dtype:
        raise TypeError(
            "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
            "case of int/bool primal dtype the tangent dtype must be float0.Got primal dtype "
            f"{pa.dtype.name} and so expected tangent dtype {expected}, but got tangent dtype "
            f"{ta.dtype.name} instead."
        )


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> Any:
    if not isinstance(primals, (tuple, list)):
        raise TypeError(
            f"primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    if not isinstance(tangents, (tuple, list)):
        raise TypeError(
            f"primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_flat, p_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; primals "
            f"have tree structure {p_tree} whereas tangents have tree structure {t_tree}."
        )
    p_flat = [_to_array(p) for p in p_flat]
    t_flat = [_to_array(t) for t in t_flat]
    for p, t in zip(p_flat, t_flat, strict=True):
        _check_tangent(p, t)
    store = _Outs()
    flat = _flat_fun(fun, tree_structure((tuple(primals), {})), store, has_aux)
    t_in = [t if _is_float(t) else Zero(core.get_aval(t)) for t in t_flat]
    primal_outs, tangent_outs = ad.jvp_flat(flat, p_flat, t_in)
    main, aux = store.split(primal_outs)
    tangent_outs = [ad.instantiate(t) for t in tangent_outs[: store.n_main]]
    po = tree_unflatten(store.tree, main)
    to = tree_unflatten(store.tree, tangent_outs)
    return (po, to, aux) if has_aux else (po, to)


def _is_float(x: Any) -> bool:
    return core.get_aval(x).dtype.kind in "fc"


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    p_flat, in_tree = tree_flatten((primals, {}))
    p_flat = [_to_array(p) for p in p_flat]
    store = _Outs()
    flat = _flat_fun(fun, in_tree, store, has_aux)
    primal_outs, lin = ad.linearize_flat(flat, p_flat)
    main, aux = store.split(primal_outs)

    def f_jvp(*tangents: Any) -> Any:
        t_flat, _ = tree_flatten(tangents)
        outs = lin(*[_to_array(t) for t in t_flat])[: store.n_main]
        return tree_unflatten(store.tree, [ad.instantiate(o) for o in outs])

    po = tree_unflatten(store.tree, main)
    return (po, f_jvp, aux) if has_aux else (po, f_jvp)


# ---- reverse mode -------------------------------------------------------------------------------
def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    p_flat, in_tree = tree_flatten((primals, {}))
    p_flat = [_to_array(p) for p in p_flat]
    store = _Outs()
    flat = _flat_fun(fun, in_tree, store, has_aux)
    primal_outs, pullback = ad.vjp_flat(flat, p_flat)
    main, aux = store.split(primal_outs)
    out_avals = [core.get_aval(o) for o in main]
    aux_zeros = [Zero(core.get_aval(o)) for o in primal_outs[store.n_main :]]
    p_tree = tree_structure(primals)
    in_avals = [core.get_aval(p) for p in p_flat]

    def vjp_fun(ct: Any) -> tuple[Any, ...]:
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != store.tree:
            raise ValueError(
                "Tree structure of cotangent input "
                f"{ct_tree}, does not match structure of primal output {store.tree}."
            )
        cts = []
        for c, a in zip(ct_flat, out_avals, strict=True):
            c = _to_array(c)
            ca = core.get_aval(c)
            if ca.shape != a.shape:
                raise ValueError(
                    f"Shape of cotangent input to vjp pullback function {ca.shape} must be the "
                    f"same as the shape of corresponding primal input {a.shape}."
                )
            cts.append(c)
        res = pullback(*cts, *aux_zeros)
        res = [_zero_ct(r, a) for r, a in zip(res, in_avals, strict=True)]
        return tuple(tree_unflatten(p_tree, res))

    po = tree_unflatten(store.tree, main)
    return (po, vjp_fun, aux) if has_aux else (po, vjp_fun)


def _zero_ct(r: Any, aval: ShapedArray) -> Any:
    """A cotangent shaped like its primal: zeros where none flowed, JAX's weak type kept.

    Integer and bool primals get JAX's `float0` zeros (a NumPy array of the empty void type,
    when NumPy is installed)."""
    if aval.dtype.kind in "iub":
        return _float0_zeros(aval.shape)
    if isinstance(r, Zero) or r is None:
        return ad.zeros_like_aval(aval)
    ra = core.get_aval(r)
    if aval.weak_type and not ra.weak_type and ra.dtype is aval.dtype:
        return lax.convert_element_type(r, aval.dtype, weak_type=True)
    return r


def _float0_zeros(shape: tuple[int, ...]) -> Any:
    try:
        import numpy as np
    except ImportError:  # Pyodide without NumPy: the closest thing is a boolean zero array
        return lax.full(shape, False, dtypes.bool_)
    return np.zeros(shape, dtype=dtypes.float0())


def _argnums(argnums: Any, nargs: int) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, int):
        nums, single = (argnums,), True
    else:
        nums, single = tuple(argnums), False
    for i in nums:
        if not -nargs <= i < nargs:
            raise TypeError(
                f"Differentiating with respect to argnums={argnums} requires at least {i + 1} "
                f"positional arguments to be passed by the caller, but got only {nargs} "
                "positional arguments."
            )
    return tuple(i % nargs for i in nums), single


Split = tuple[tuple[int, ...], bool, tuple[Any, ...], Callable[..., Any]]


def _split_argnums(
    fun: Callable[..., Any],
    argnums: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    allow_int: bool,
    fname: str,
) -> Split:
    """The differentiated arguments (checked) and `fun` as a function of them alone.

    Returns (argnums, single, dynamic args, partial function)."""
    nums, single = _argnums(argnums, len(args))
    args = tuple(tree_map(_to_array, a) if i in nums else a for i, a in enumerate(args))
    dyn = tuple(args[i] for i in nums)
    for leaf in tree_flatten(dyn)[0]:
        _check_input_dtype(leaf, allow_int, fname)

    def f_partial(*diff: Any) -> Any:
        full = list(args)
        for i, d in zip(nums, diff, strict=True):
            full[i] = d
        return fun(*full, **kwargs)

    return nums, single, dyn, f_partial


def _check_input_dtype(x: Any, allow_int: bool, fname: str) -> None:
    dt = core.get_aval(x).dtype
    if dt.kind not in "fc" and not allow_int:
        raise TypeError(
            f"{fname} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
            f"of np.inexact), but got {dt.name}. If you want to use Boolean- or integer-valued "
            "inputs, use vjp or set allow_int to True."
        )


def value_and_grad(
    fun: Callable[..., Any],
    argnums: Any = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Any = (),
) -> Callable[..., Any]:
    @functools.wraps(fun)
    def vg(*args: Any, **kwargs: Any) -> Any:
        _, single, dyn, f_partial = _split_argnums(fun, argnums, args, kwargs, allow_int, "grad")
        if holomorphic:
            for leaf in tree_flatten(dyn)[0]:
                dt = core.get_aval(_to_array(leaf)).dtype
                if dt.kind != "c":
                    raise TypeError(
                        "grad with holomorphic=True requires inputs with complex "
                        f"dtype, but got {dt.name}."
                    )
        res = vjp(f_partial, *dyn, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_leaves = tree_flatten(out)[0]
        if len(out_leaves) != 1 or core.get_aval(_to_array(out_leaves[0])).shape != ():
            shape = core.get_aval(_to_array(out_leaves[0])).shape if out_leaves else None
            raise TypeError(
                "Gradient only defined for scalar-output functions. Output "
                + (f"had shape: {shape}." if len(out_leaves) == 1 else "was a pytree.")
            )
        out_aval = core.get_aval(_to_array(out_leaves[0]))
        if holomorphic and out_aval.dtype.kind != "c":
            raise TypeError(
                "grad with holomorphic=True requires outputs with complex dtype, "
                f"but got {out_aval.dtype.name}."
            )
        if out_aval.dtype.kind != "f" and not holomorphic:
            raise TypeError(
                "grad requires real-valued outputs (output dtype that is a sub-dtype of "
                f"np.floating), but got {out_aval.dtype.name}. For holomorphic differentiation, "
                "pass holomorphic=True. For differentiation of non-holomorphic functions "
                "involving complex outputs, use jax.vjp directly."
            )
        seed = tree_unflatten(tree_structure(out), [lax.full((), 1.0, out_aval.dtype)])
        grads = pullback(seed)
        g = grads[0] if single else tuple(grads)
        if has_aux:
            return (out, res[2]), g
        return out, g

    return vg


def grad(
    fun: Callable[..., Any],
    argnums: Any = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Any = (),
) -> Callable[..., Any]:
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def g(*args: Any, **kwargs: Any) -> Any:
        (value, grads) = vg(*args, **kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return g


# ---- jacobians ----------------------------------------------------------------------------------
def _check_jac_dtypes(leaves: list[Any], fname: str, holomorphic: bool, what: str) -> None:
    """JAX's dtype rules of jacfwd/jacrev: holomorphic=True needs complex inputs and outputs;
    otherwise jacfwd needs real inputs and jacrev real outputs."""
    for leaf in leaves:
        dt = core.get_aval(_to_array(leaf)).dtype
        if holomorphic:
            if dt.kind != "c":
                raise TypeError(
                    f"{fname} with holomorphic=True requires {what}s with complex "
                    f"dtype, but got {dt.name}."
                )
        elif dt.kind == "c" and (fname, what) in (("jacfwd", "input"), ("jacrev", "output")):
            use = "jax.jvp" if fname == "jacfwd" else "jax.vjp"
            detail = "complex inputs or integer inputs" if fname == "jacfwd" else "complex outputs"
            raise TypeError(
                f"{fname} requires real-valued {what}s ({what} dtype that is a sub-dtype of "
                f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
                f"holomorphic=True. For differentiation of non-holomorphic functions involving "
                f"{detail}, use {use} directly."
            )


def _std_basis(flat: list[Any]) -> tuple[Any, int]:
    """An identity matrix covering all flat inputs (rows: basis directions)."""
    sizes = [math.prod(core.get_aval(x).shape) for x in flat]
    n = sum(sizes)
    dt = dtypes.result_type(*[(core.get_aval(x).dtype, False) for x in flat])[0]
    if dt.kind not in "fc":
        dt = dtypes.default_float()
    eye = lax.convert_element_type(
        lax.eq(
            lax.broadcasted_iota(dtypes.int32, (n, n), 0),
            lax.broadcasted_iota(dtypes.int32, (n, n), 1),
        ),
        dt,
    )
    return eye, n


def _split_basis(eye: Any, flat: list[Any]) -> list[Any]:
    out, start = [], 0
    n = core.get_aval(eye).shape[0]
    for x in flat:
        a = core.get_aval(x)
        size = math.prod(a.shape)
        piece = lax.slice(eye, (0, start), (n, start + size))
        out.append(lax.convert_element_type(lax.reshape(piece, (n, *a.shape)), a.dtype))
        start += size
    return out


def jacfwd(
    fun: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    @functools.wraps(fun)
    def jac(*args: Any, **kwargs: Any) -> Any:
        _, single, dyn, f_partial = _split_argnums(fun, argnums, args, kwargs, False, "jacfwd")
        d_flat, d_tree = tree_flatten(dyn)
        _check_jac_dtypes(d_flat, "jacfwd", holomorphic, "input")

        eye, _ = _std_basis(d_flat)
        basis = _split_basis(eye, d_flat)

        def push(*t_flat: Any) -> Any:
            tangents = tree_unflatten(d_tree, list(t_flat))
            res = jvp(f_partial, dyn, tangents, has_aux=has_aux)
            return (res[1], res[2]) if has_aux else res[1]

        out = vmap(push, in_axes=0, out_axes=-1)(*basis)
        y = out[0] if has_aux else out
        if holomorphic:
            _check_jac_dtypes(tree_flatten(y)[0], "jacfwd", True, "output")
        # reshape trailing basis axis into the input shapes
        jac_tree = tree_map(lambda leaf: _unflatten_last(leaf, d_flat, single, d_tree), y)
        if has_aux:
            aux = tree_map(lambda a: _take_first_along_last(a), out[1])
            return jac_tree, aux
        return jac_tree

    return jac


def _unflatten_last(leaf: Any, d_flat: list[Any], single: bool, d_tree: Any) -> Any:
    a = core.get_aval(leaf)
    lead = a.shape[:-1]
    pieces, start = [], 0
    for x in d_flat:
        xs = core.get_aval(x).shape
        size = math.prod(xs)
        nd = len(a.shape)
        sl = lax.slice(leaf, (0,) * (nd - 1) + (start,), lead + (start + size,))
        pieces.append(lax.reshape(sl, lead + xs))
        start += size
    tree = tree_unflatten(d_tree, pieces)
    return tree[0] if single else tree


def _take_first_along_last(a: Any) -> Any:
    av = core.get_aval(a)
    sl = lax.slice(a, (0,) * av.ndim, av.shape[:-1] + (1,))
    return lax.reshape(sl, av.shape[:-1])


def jacrev(
    fun: Callable[..., Any],
    argnums: Any = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    @functools.wraps(fun)
    def jac(*args: Any, **kwargs: Any) -> Any:
        _, single, dyn, f_partial = _split_argnums(fun, argnums, args, kwargs, allow_int, "jacrev")
        if holomorphic:
            _check_jac_dtypes(tree_flatten(dyn)[0], "jacrev", True, "input")

        res = vjp(f_partial, *dyn, has_aux=has_aux)
        y, pullback = res[0], res[1]
        y_flat, y_tree = tree_flatten(y)
        y_flat = [_to_array(v) for v in y_flat]
        _check_jac_dtypes(y_flat, "jacrev", holomorphic, "output")
        eye, _ = _std_basis(y_flat)
        basis = _split_basis(eye, y_flat)

        def pull(*ct_flat: Any) -> Any:
            return pullback(tree_unflatten(y_tree, list(ct_flat)))

        cts = vmap(pull, in_axes=0, out_axes=0)(*basis)  # tuple over dyn args, leading axis n

        # cts: per input leaf, shape (n, *in_shape) -> per output leaf (*out_shape, *in_shape)
        def per_output(ct_leaf: Any) -> list[Any]:
            a = core.get_aval(ct_leaf)
            parts, start = [], 0
            for yv in y_flat:
                ys = core.get_aval(yv).shape
                size = math.prod(ys)
                sl = lax.slice(
                    ct_leaf, (start,) + (0,) * (a.ndim - 1), (start + size,) + a.shape[1:]
                )
                parts.append(lax.reshape(sl, ys + a.shape[1:]))
                start += size
            return parts

        in_flat, in_tree = tree_flatten(cts if not single else cts[0])
        split = [per_output(c) for c in in_flat]  # [input leaf][output leaf]
        out_leaves = []
        for j in range(len(y_flat)):
            out_leaves.append(tree_unflatten(in_tree, [s[j] for s in split]))
        result = tree_unflatten(y_tree, out_leaves)
        return (result, res[2]) if has_aux else result

    return jac


jacobian = jacrev


def hessian(
    fun: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


# ---- staging utilities --------------------------------------------------------------------------
class ShapeDtypeStruct:
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(
        self, shape: Sequence[int], dtype: Any, *, sharding: Any = None, weak_type: bool = False
    ) -> None:
        self.shape = tuple(shape)
        self.dtype = dtypes.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type) == (
            other.shape,
            other.dtype,
            other.weak_type,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


core.pytype_aval_mappings[ShapeDtypeStruct] = lambda s: ShapedArray(s.shape, s.dtype, s.weak_type)


def _abstractify(x: Any) -> ShapedArray:
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return core.get_aval(_to_array(x))


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: Any = (),
    axis_env: Any = None,
    return_shape: bool = False,
    abstracted_axes: Any = None,
) -> Callable[..., Any]:
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def make(*args: Any, **kwargs: Any) -> Any:
        dyn = [a for i, a in enumerate(args) if i not in static]
        flat, in_tree = tree_flatten((dyn, kwargs))
        avals = [_abstractify(x) for x in flat]
        out_tree: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            d, kw = tree_unflatten(in_tree, xs)
            it = iter(d)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            out = fun(*full, **kw)
            leaves, tree = tree_flatten(out)
            out_tree[:] = [tree]
            return [_to_array(x) for x in leaves]

        with batching.extend_axis_env(axis_env or ()):  # names collectives may use
            closed = pe.trace_to_closed_jaxpr(flat_fun, avals)
        if return_shape:
            shapes = [
                ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals
            ]
            return closed, tree_unflatten(out_tree[0], shapes)
        return closed

    return make


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    flat, in_tree = tree_flatten((args, kwargs))
    avals = [_abstractify(x) for x in flat]
    store = _Outs()
    closed = pe.trace_to_closed_jaxpr(_flat_fun(fun, in_tree, store), avals)
    shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals]
    return tree_unflatten(store.tree, shapes)


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes: Any = ()) -> Callable:
    flat, in_tree = tree_flatten((primals, {}))
    avals = [_abstractify(x) for x in flat]
    transposed = ad.linear_transpose_flat(_flat_fun(fun, in_tree, _Outs()), avals)
    p_tree = tree_structure(primals)

    def f_t(*cts: Any) -> Any:
        ct_flat, _ = tree_flatten(cts[0] if len(cts) == 1 else cts)
        res = transposed(*[_to_array(c) for c in ct_flat])
        res = [_zero_ct(r, a) for r, a in zip(res, avals, strict=True)]
        return tuple(tree_unflatten(p_tree, res))

    return f_t
