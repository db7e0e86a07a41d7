"""jax.debug: print and callback that work under jit, grad and vmap.

`debug_callback` is a primitive with no outputs whose evaluation calls the Python callback on
concrete values; staging keeps it (it is effectful, so dead-code elimination leaves it),
differentiation passes it through, vmap calls it with the batched values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import core
from .dispatch.array import to_array as _to_array
from .interpreters import ad, batching
from .lax import lax
from .tree_util import tree_flatten, tree_unflatten

debug_callback_p = core.Primitive("debug_callback")
debug_callback_p.multiple_results = True
debug_callback_p.def_abstract_eval(lambda *avals, **params: [])


@debug_callback_p.def_impl
def _impl(*args: Any, callback: Callable[..., Any], in_tree: Any, **_: Any) -> list[Any]:
    a, kw = tree_unflatten(in_tree, list(args))
    callback(*a, **kw)
    return []


def _jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[list, list]:
    debug_callback_p.bind(*primals, **params)
    return [], []


def _batch(vals: list[Any], dims: list[Any], **params: Any) -> tuple[list, list]:
    """One call per batch element, in order (as JAX does for debug callbacks)."""
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    vals = [
        batching.bdim_at_front(v, d, size) if d is not None else v
        for v, d in zip(vals, dims, strict=True)
    ]
    for i in range(size):
        row = [
            lax.index_in_dim(v, i) if d is not None else v for v, d in zip(vals, dims, strict=True)
        ]
        debug_callback_p.bind(*row, **params)
    return [], []


ad.primitive_jvps[debug_callback_p] = _jvp
batching.primitive_batchers[debug_callback_p] = _batch


def callback(fn: Callable[..., Any], *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """Call `fn(*args, **kwargs)` with concrete values, also from inside transformations."""
    flat, in_tree = tree_flatten((args, kwargs))
    flat = [_to_array(x) if core.is_valid_jaxtype(x) else x for x in flat]
    statics = {i: x for i, x in enumerate(flat) if not core.is_valid_jaxtype(x)}
    dyn = [x for i, x in enumerate(flat) if i not in statics]

    def call(*a: Any, **kw: Any) -> None:
        fn(*a, **kw)

    def rebuild(*dyn_vals: Any) -> None:
        it = iter(dyn_vals)
        full = [statics[i] if i in statics else next(it) for i in range(len(flat))]
        a, kw = tree_unflatten(in_tree, full)
        call(*a, **kw)

    dyn_tree = tree_flatten((tuple(dyn), {}))[1]
    debug_callback_p.bind(*dyn, callback=lambda *a: rebuild(*a), in_tree=dyn_tree, ordered=ordered)


def debug_print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """`print(fmt.format(*args, **kwargs))` with the runtime values of traced arrays."""
    callback(lambda *a, **kw: print(fmt.format(*a, **kw)), *args, ordered=ordered, **kwargs)
