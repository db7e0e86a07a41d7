"""Sparse-aware grad, value_and_grad, jacfwd and jacrev, as jax.experimental.sparse's: with
respect to a BCOO argument, the derivative lives on its sparsity pattern (its data), and comes
back as a BCOO with the argument's indices.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from ... import numpy as jnp
from ... import transformations as tr
from ...tree_util import tree_flatten, tree_unflatten
from .bcoo import BCOO


def _is_sparse(x: Any) -> bool:
    return isinstance(x, BCOO)


def _argnums(argnums: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(argnums, int):
        return (operator.index(argnums),)
    return tuple(sorted({operator.index(a) for a in argnums}))  # gradients come in argument order


def _flatten_for_sparse_ad(fun: Callable[..., Any], argnums: tuple[int, ...], args: tuple) -> Any:
    """fun on a flat list of buffers (a BCOO gives data and indices), the flat positions to
    differentiate (a BCOO's data only), the buffers, and the map from flat gradients back to
    the arguments' structure."""
    if not all(0 <= a < len(args) for a in argnums):
        raise ValueError(f"argnums {argnums} out of bounds for a function of {len(args)} arguments")
    per_arg = [tree_flatten(a, is_leaf=_is_sparse) for a in args]
    leaves = [leaf for flat, _ in per_arg for leaf in flat]
    owner = [i for i, (flat, _) in enumerate(per_arg) for _ in flat]
    bufs: list[Any] = []
    starts: list[int] = []
    for leaf in leaves:
        starts.append(len(bufs))
        bufs += [leaf.data, leaf.indices] if _is_sparse(leaf) else [leaf]
    diff = tuple(starts[k] for k, o in enumerate(owner) if o in argnums)
    tree = tree_flatten(args, is_leaf=_is_sparse)[1]

    def fun_flat(*flat: Any, **kwargs: Any) -> Any:
        rebuilt = [
            BCOO(
                (flat[s], flat[s + 1]),
                shape=leaf.shape,
                indices_sorted=leaf.indices_sorted,
                unique_indices=leaf.unique_indices,
            )
            if _is_sparse(leaf)
            else flat[s]
            for leaf, s in zip(leaves, starts, strict=True)
        ]
        return fun(*tree_unflatten(tree, rebuilt), **kwargs)

    def postprocess(grads: Sequence[Any]) -> Any:
        it = iter(grads)
        out = []
        for i in argnums:
            flat, t = per_arg[i]
            out.append(tree_unflatten(t, [_as_grad(leaf, next(it)) for leaf in flat]))
        return out[0] if len(out) == 1 else tuple(out)

    return fun_flat, diff, bufs, postprocess


def _as_grad(leaf: Any, g: Any) -> Any:
    """A BCOO argument's gradient: its indices with the data's gradient (leading axes of a
    Jacobian become batch axes)."""
    if not _is_sparse(leaf):
        return g
    extra = g.ndim - leaf.data.ndim
    lead = tuple(g.shape[:extra])
    indices = jnp.broadcast_to(leaf.indices, lead + tuple(leaf.indices.shape))
    return BCOO(
        (g, indices),
        shape=lead + leaf.shape,
        indices_sorted=leaf.indices_sorted,
        unique_indices=leaf.unique_indices,
    )


def _sparse_transform(transform: Callable[..., Any], name: str) -> Callable[..., Any]:
    def make(
        fun: Callable[..., Any],
        argnums: int | Sequence[int] = 0,
        has_aux: bool = False,
        **kwargs: Any,
    ) -> Callable[..., Any]:
        nums = _argnums(argnums)

        @functools.wraps(fun)
        def wrapped(*args: Any, **kw: Any) -> Any:
            fun_flat, diff, bufs, post = _flatten_for_sparse_ad(fun, nums, args)
            flat_fun = functools.partial(fun_flat, **kw) if kw else fun_flat
            out = transform(flat_fun, argnums=diff, has_aux=has_aux, **kwargs)(*bufs)
            if name == "value_and_grad":
                value, grads = out
                return value, post(grads)
            if has_aux:
                return post(out[0]), out[1]
            return post(out)

        return wrapped

    make.__name__ = name
    make.__doc__ = (
        f"Sparse-aware {name}: with respect to a BCOO argument, the derivative on its "
        "sparsity pattern, as a BCOO with the same indices."
    )
    return make


grad = _sparse_transform(tr.grad, "grad")
value_and_grad = _sparse_transform(tr.value_and_grad, "value_and_grad")
jacfwd = _sparse_transform(tr.jacfwd, "jacfwd")
jacrev = _sparse_transform(tr.jacrev, "jacrev")
jacobian = jacrev
