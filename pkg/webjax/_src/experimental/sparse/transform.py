"""`sparsify`: run a function written for dense arrays on BCOO arguments, as JAX's sparsify.

The function is staged to a jaxpr with each BCOO standing in as a dense value of its shape and
dtype; the jaxpr is then evaluated equation by equation, where an equation with a BCOO input
runs its sparse rule (a bcoo_* operation) and the others bind as usual. A primitive without a
rule raises JAX's NotImplementedError. Only a few rules exist (see _RULES); JAX has more.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from ... import core
from ... import numpy as jnp
from ...interpreters import partial_eval as pe
from ...lax import lax as lax_mod
from ...tree_util import tree_flatten, tree_unflatten
from .bcoo import (
    BCOO,
    _broadcast_batch,
    _nfold_vmap,
    bcoo_dot_general,
    bcoo_extract,
    bcoo_reduce_sum,
    bcoo_transpose,
)
from .bcoo_layout import (
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_squeeze,
    bcoo_sum_duplicates,
    bcoo_update_layout,
)


def todense(arr: Any) -> Any:
    """A BCOO as a dense array; a dense array passes through."""
    return arr.todense() if isinstance(arr, BCOO) else arr


def bcoo_multiply_dense(sp_mat: BCOO, v: Any) -> Any:
    """The data of the elementwise product of a BCOO and a dense array that broadcasts to its
    shape (the product keeps sp_mat's indices)."""
    v = jnp.asarray(v)
    if v.ndim == 0:
        return sp_mat.data * v
    shape = sp_mat.shape
    if jnp.broadcast_shapes(v.shape, shape) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases where the "
            f"output shape matches the sparse matrix shape. Got shape={shape}, v.shape={v.shape}"
        )
    full = jnp.broadcast_to(v, shape)
    return sp_mat.data * bcoo_extract(sp_mat, full, assume_unique=True).data


def _props(x: BCOO) -> str:
    return (
        f"BCOOProperties(n_batch={x.n_batch}, n_sparse={x.n_sparse}, n_dense={x.n_dense}, "
        f"nse={x.nse})"
    )


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """The elementwise product of two BCOOs: per batch element, every pair of entries whose
    indices agree (on axes where neither has size 1) gives one entry; nse = lhs.nse * rhs.nse,
    unmatched slots padded."""
    if lhs.ndim != rhs.ndim:
        raise TypeError(
            "bcoo_multiply_sparse: arrays must have same number of dimensions, got "
            f"{lhs.shape}, {rhs.shape}"
        )
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError(
            "bcoo_multiply_sparse: arrays with differing numbers of dense dimensions: "
            f"{_props(lhs)}, {_props(rhs)}"
        )
    out_shape = jnp.broadcast_shapes(lhs.shape, rhs.shape)
    nb = min(lhs.n_batch, rhs.n_batch)
    lhs, rhs = (bcoo_update_layout(x, n_batch=nb) if x.n_batch > nb else x for x in (lhs, rhs))
    batch = out_shape[:nb]
    (ld, li), (rd, ri) = (_broadcast_batch(x) for x in (lhs, rhs))
    ld, li, rd, ri = (jnp.broadcast_to(b, batch + tuple(b.shape[nb:])) for b in (ld, li, rd, ri))
    l_shape, r_shape = lhs.shape[nb:], rhs.shape[nb:]
    ns = lhs.n_sparse
    dims = np.asarray([i for i in range(ns) if l_shape[i] != 1 and r_shape[i] != 1], np.int32)
    nse = lhs.nse * rhs.nse
    l_fill, r_fill = max(l_shape, default=0), max(r_shape, default=0)

    def one(ld: Any, li: Any, rd: Any, ri: Any) -> tuple[Any, Any]:
        match = jnp.all(li[:, None, dims] == ri[None, :, dims], axis=-1)
        il, ir = jnp.nonzero(match, size=nse, fill_value=(li.shape[0], ri.shape[0]))
        data = ld.at[il].get(mode="fill", fill_value=0) * rd.at[ir].get(mode="fill", fill_value=0)
        indices = jnp.maximum(
            li.at[il].get(mode="fill", fill_value=l_fill),
            ri.at[ir].get(mode="fill", fill_value=r_fill),
        )
        return data, indices

    data, indices = _nfold_vmap(one, nb)(ld, li, rd, ri)
    return BCOO((data, indices), shape=out_shape)


def sparsify(f: Callable[..., Any], use_tracer: bool = False) -> Callable[..., Any]:
    """`f` on BCOO arguments: its primitives evaluated by their sparse rules where a BCOO
    reaches them."""
    if use_tracer:
        raise NotImplementedError("sparsify(use_tracer=True): webjax has only the jaxpr form")

    @functools.wraps(f)
    def wrapped(*args: Any, **params: Any) -> Any:
        leaves, tree = tree_flatten(args, is_leaf=lambda x: isinstance(x, BCOO))
        # each BCOO argument is its own index buffer, even where one object is passed twice
        vals = [_fresh_ref(x) if isinstance(x, BCOO) else jnp.asarray(x) for x in leaves]
        avals = [
            core.ShapedArray(x.shape, x.dtype) if isinstance(x, BCOO) else core.get_aval(x)
            for x in vals
        ]
        out_tree: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            out_leaves, t = tree_flatten(f(*tree_unflatten(tree, xs), **params))
            out_tree[:] = [t]
            return out_leaves

        jaxpr, consts, _ = pe.trace_to_jaxpr(flat, avals)
        return tree_unflatten(out_tree[0], _eval_sparse(jaxpr, consts, vals))

    return wrapped


def _eval_sparse(jaxpr: core.Jaxpr, consts: list[Any], args: list[Any]) -> list[Any]:
    env: dict[core.Var, Any] = {}

    def read(x: Any) -> Any:
        return x.val if isinstance(x, core.Literal) else env[x]

    env.update(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))
    for eqn in jaxpr.eqns:
        vals = [read(x) for x in eqn.invars]
        name = eqn.primitive.name
        if any(isinstance(v, BCOO) for v in vals):
            rule = _RULES.get(name)
            if rule is None:
                _raise_unimplemented(name)
            outs = [rule(*vals, **eqn.params)]
            if isinstance(outs[0], BCOO) and _ref(outs[0]) is None:
                outs = [_fresh_ref(outs[0])]
        else:
            outs = eqn.primitive.bind(*vals, **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


_DENSIFYING = {"acos", "acosh", "bessel_i0e", "cos", "cosh", "eq", "exp", "ge", "gt", "le"}
_DENSIFYING |= {"lt", "log", "ne", "xor"}


def _raise_unimplemented(name: str) -> NoReturn:
    if name in _DENSIFYING:
        raise NotImplementedError(
            f"sparse rule for {name} is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments to "
            "dense matrices."
        )
    raise NotImplementedError(f"sparse rule for {name} is not implemented.")


# Values that share an index buffer (JAX's indices_ref): one sparsify argument and the
# elementwise results computed from it. Sums and products of those combine data alone.
def _ref(x: BCOO) -> Any:
    return getattr(x, "_sparsify_ref", None)


def _fresh_ref(x: BCOO, ref: Any = None) -> BCOO:
    out = BCOO(
        (x.data, x.indices),
        shape=x.shape,
        indices_sorted=x.indices_sorted,
        unique_indices=x.unique_indices,
    )
    out._sparsify_ref = object() if ref is None else ref  # type: ignore[attr-defined]
    return out


def _same_indices(x: BCOO, y: BCOO) -> bool:
    return _ref(x) is not None and _ref(x) is _ref(y)


def _with_data(x: BCOO, data: Any, unique: bool | None = None) -> BCOO:
    out = BCOO(
        (data, x.indices),
        shape=x.shape,
        indices_sorted=x.indices_sorted,
        unique_indices=x.unique_indices if unique is None else unique,
    )
    if _ref(x) is not None:
        out._sparsify_ref = _ref(x)  # type: ignore[attr-defined]
    return out


def _unary(name: str, linear: bool) -> Callable[..., Any]:
    """A zero-preserving elementwise primitive on the data (nonlinear ones need one entry per
    index first)."""

    def rule(x: BCOO, **params: Any) -> BCOO:
        if not linear and not x.unique_indices:
            x = bcoo_sum_duplicates(x, nse=x.nse)
        prim = _PRIMITIVES[name]
        return _with_data(x, prim.bind(x.data, **params))

    return rule


def _dot_general(lhs: Any, rhs: Any, *, dimension_numbers: Any, **params: Any) -> Any:
    return bcoo_dot_general(
        lhs,
        rhs,
        dimension_numbers=dimension_numbers,
        preferred_element_type=params.get("preferred_element_type"),
    )


def _add(x: Any, y: Any) -> Any:
    out_shape = jnp.broadcast_shapes(x.shape, y.shape)
    if isinstance(x, BCOO) and isinstance(y, BCOO):
        if x.shape != y.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if _same_indices(x, y):
            return _with_data(x, x.data + y.data)
        if x.indices.ndim != y.indices.ndim or x.data.ndim != y.data.ndim:
            raise NotImplementedError(
                "Addition between sparse matrices with different batch/dense dimensions."
            )
        (xd, xi), (yd, yi) = _broadcast_batch(x), _broadcast_batch(y)
        axis = x.n_batch
        return BCOO(
            (jnp.concatenate([xd, yd], axis=axis), jnp.concatenate([xi, yi], axis=axis)),
            shape=x.shape,
        )
    if isinstance(y, BCOO):
        x, y = y, x
    if y.shape != out_shape:
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when the "
            "output shape is larger than Y.shape. This is to prevent silent densification of a "
            "large sparse array. If this is your intent, you can explicitly cast the sparse "
            "array to a dense matrix."
        )
    return x.todense() + y


def _sub(x: Any, y: Any) -> Any:
    if isinstance(x, BCOO) and isinstance(y, BCOO):
        return _add(x, _with_data(y, -y.data))
    raise NotImplementedError("Subtraction between sparse and dense array.")


def _mul(x: Any, y: Any, **params: Any) -> Any:
    if isinstance(x, BCOO) and isinstance(y, BCOO):
        if _same_indices(x, y) and x.unique_indices:
            return _with_data(x, x.data * y.data, unique=True)
        return bcoo_multiply_sparse(x, y)
    if isinstance(y, BCOO):
        x, y = y, x
    return _with_data(x, bcoo_multiply_dense(x, y))


def _div(x: Any, y: Any) -> Any:
    if isinstance(y, BCOO):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments to a "
            "dense array."
        )
    return _with_data(x, bcoo_multiply_dense(x, 1.0 / jnp.asarray(y)))


def _reduce_sum(x: BCOO, *, axes: Any, **params: Any) -> Any:
    out = bcoo_reduce_sum(x, axes=axes)
    return out.data.sum() if out.shape == () else out


def _reshape(x: BCOO, *, new_sizes: Any, dimensions: Any = None, **_: Any) -> BCOO:
    """A reshape that only adds or drops size-1 axes (what webjax's x[None] and expand_dims
    stage): a squeeze, then a broadcast_in_dim."""
    new_sizes = tuple(int(d) for d in new_sizes)
    kept_old = [i for i, n in enumerate(x.shape) if n != 1]
    kept_new = [i for i, n in enumerate(new_sizes) if n != 1]
    if dimensions is not None or [x.shape[i] for i in kept_old] != [new_sizes[i] for i in kept_new]:
        raise NotImplementedError(
            f"sparse rule for reshape of a BCOO from {x.shape} to {new_sizes}: only size-1 axes "
            "may be added or removed"
        )
    squeezed = bcoo_squeeze(x, dimensions=[i for i, n in enumerate(x.shape) if n == 1])
    return bcoo_broadcast_in_dim(squeezed, shape=new_sizes, broadcast_dimensions=kept_new)


def _concatenate(*operands: Any, dimension: int) -> BCOO:
    if not all(isinstance(op, BCOO) for op in operands):
        raise NotImplementedError("sparse rule for concatenate of sparse and dense arrays")
    return bcoo_concatenate(operands, dimension=dimension)


def _integer_pow(x: BCOO, *, y: int) -> BCOO:
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for integer_pow with non-positive exponent {y} is not implemented "
            "because it would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your argument to a dense array."
        )
    return _unary("integer_pow", linear=False)(x, y=y)


# zero-preserving elementwise primitives: f(0) == 0, so f applies to the stored data alone
_NONLINEAR = ["abs", "asin", "asinh", "atan", "atanh", "expm1", "log1p", "sign", "sin", "sinh"]
_NONLINEAR += ["sqrt", "square", "tan", "tanh", "convert_element_type"]
_LINEAR = ["neg", "real", "copy"]
_PRIMITIVES = {
    n: lax_mod.prims[n] for n in [*_NONLINEAR, *_LINEAR, "integer_pow"] if n in lax_mod.prims
}

_RULES: dict[str, Callable[..., Any]] = {
    "dot_general": _dot_general,
    "transpose": lambda x, *, permutation: bcoo_transpose(x, permutation=permutation),
    "add": _add,
    "sub": _sub,
    "mul": _mul,
    "div": _div,
    "reduce_sum": _reduce_sum,
    "squeeze": lambda x, *, dimensions: bcoo_squeeze(x, dimensions=dimensions),
    "concatenate": _concatenate,
    "reshape": _reshape,
    "broadcast_in_dim": lambda x, *, shape, broadcast_dimensions, **_: bcoo_broadcast_in_dim(
        x, shape=shape, broadcast_dimensions=broadcast_dimensions
    ),
    "integer_pow": _integer_pow,
    **{n: _unary(n, linear=False) for n in _NONLINEAR if n in _PRIMITIVES},
    **{n: _unary(n, linear=True) for n in _LINEAR if n in _PRIMITIVES},
}


# ---- BCOO's arithmetic methods, as JAX defines them: the jnp function, sparsified
def _swap(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda a, b: f(b, a)


def _astype(self: BCOO, *args: Any, **kwargs: Any) -> BCOO:
    return sparsify(lambda x: x.astype(*args, **kwargs))(self)


_METHODS: dict[str, Callable[..., Any]] = {
    "astype": _astype,
    "__abs__": sparsify(jnp.abs),
    "__neg__": sparsify(jnp.negative),
    "__pos__": sparsify(jnp.positive),
    "__mul__": sparsify(jnp.multiply),
    "__rmul__": sparsify(_swap(jnp.multiply)),
    "__truediv__": sparsify(jnp.divide),
    "__rtruediv__": sparsify(_swap(jnp.divide)),
    "__add__": sparsify(jnp.add),
    "__radd__": sparsify(_swap(jnp.add)),
    "__sub__": sparsify(jnp.subtract),
    "__rsub__": sparsify(_swap(jnp.subtract)),
}
for _name, _impl in _METHODS.items():
    setattr(BCOO, _name, _impl)
