"""`jax.pure_callback`: call a host Python function on concrete values, also under transforms.

`pure_callback` is a primitive (JAX's `pure_callback_p`): its shape rule is the declared
`result_shape_dtypes`; evaluating it calls the Python function on concrete arrays. Under `jit`
it is staged like any primitive; a program that contains it reads the values while running, so
it runs eagerly (the compiler stops when the callback reads an argument). Unused callbacks are
dropped, as JAX may do for a pure function. vmap follows `vmap_method` (JAX's semantics:
'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized';
None raises NotImplementedError); differentiation raises, as in JAX.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from . import core, dtypes
from .core import ShapedArray
from .dispatch import array as array_mod
from .dispatch.array import to_array as _to_array
from .dispatch.lazy import NeedsValues
from .interpreters import ad, batching
from .lax import control_flow, lax
from .tree_util import tree_flatten, tree_map, tree_unflatten

pure_callback_p = core.Primitive("pure_callback")
pure_callback_p.multiple_results = True

_VMAP_METHODS = (
    "sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized",
    None,
)  # fmt: skip


@pure_callback_p.def_abstract_eval
def _abstract(*avals: ShapedArray, result_avals: tuple[ShapedArray, ...], **_: Any) -> list:
    return list(result_avals)


def _to_result(value: Any, aval: ShapedArray, name: str) -> Any:
    out = array_mod.asarray(value, dtype=aval.dtype)
    got = core.get_aval(out)
    if tuple(got.shape) != tuple(aval.shape):
        raise RuntimeError(
            f"pure_callback: Callback func {name} returned a value of shape {got.shape}, "
            f"expected shape {aval.shape} (from result_shape_dtypes)"
        )
    return out


@pure_callback_p.def_impl
def _impl(
    *args: Any,
    callback: Callable[..., Any],
    in_tree: Any,
    result_avals: tuple[ShapedArray, ...],
    out_tree: Any,
    kind: str = "pure_callback",
    **_: Any,
) -> list[Any]:
    a, kw = tree_unflatten(in_tree, list(args))
    out = _run_callback(callback, a, kw, kind)
    flat, tree = tree_flatten(out)
    name = getattr(callback, "__name__", repr(callback))
    if tree != out_tree:
        raise TypeError(
            f"pure_callback: Callback func {name} returned a result with pytree structure "
            f"{tree}, expected {out_tree} (from result_shape_dtypes)"
        )
    return [_to_result(v, av, name) for v, av in zip(flat, result_avals, strict=True)]


_log = logging.getLogger("jax._src.callback")  # JAX's logger (libraries filter it by name)


def _run_callback(callback: Callable[..., Any], args: Any, kwargs: Any, kind: str) -> Any:
    """Call the host function; an exception it raises is logged and surfaces as JAX's
    JaxRuntimeError, whose message ends with the callback's traceback."""
    try:
        return callback(*args, **kwargs)
    except NeedsValues:  # the jit compiler's signal that this program runs eagerly
        raise
    except Exception as e:
        _log.exception("jax.%s failed", kind)
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        raise core.JaxRuntimeError(f"INTERNAL: CpuCallback error calling callback: {tb}") from e


def _jvp(primals: list[Any], tangents: list[Any], **params: Any) -> Any:
    raise ValueError(
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while "
        "taking gradients."
    )


def _transpose(cts: Any, *args: Any, **params: Any) -> Any:
    raise ValueError(
        "Pure callbacks do not support transpose. Please use `jax.custom_vjp` to use callbacks "
        "while taking gradients."
    )


def _batch(
    vals: list[Any], dims: list[Any], *, vmap_method: Any, result_avals: Any, **params: Any
) -> tuple[list, list]:
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    vals = [
        batching.bdim_at_front(v, d, size) if d is not None else v
        for v, d in zip(vals, dims, strict=True)
    ]
    batched = tuple(ShapedArray((size, *a.shape), a.dtype, a.weak_type) for a in result_avals)
    n_out = len(result_avals)
    if vmap_method == "legacy_vectorized":
        outs = pure_callback_p.bind(*vals, vmap_method=vmap_method, result_avals=batched, **params)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        k = size if vmap_method == "broadcast_all" else 1
        args = [lax.broadcast(v, (k,)) if d is None else v for v, d in zip(vals, dims, strict=True)]
        outs = pure_callback_p.bind(*args, vmap_method=vmap_method, result_avals=batched, **params)
    elif vmap_method in ("sequential", "sequential_unrolled"):
        mapped = [d is not None for d in dims]
        fixed = [v for v, m in zip(vals, mapped, strict=True) if not m]
        xs = [v for v, m in zip(vals, mapped, strict=True) if m]

        def body(carry: Any, row: Any) -> Any:
            it_f, it_r = iter(fixed), iter(row)
            merged = [next(it_r) if m else next(it_f) for m in mapped]
            return carry, pure_callback_p.bind(
                *merged, vmap_method=vmap_method, result_avals=result_avals, **params
            )

        _, outs = control_flow.scan(body, (), xs)
    else:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}."
        )
    return list(outs), [0] * n_out


ad.primitive_jvps[pure_callback_p] = _jvp
ad.primitive_transposes[pure_callback_p] = _transpose
batching.primitive_batchers[pure_callback_p] = _batch


def _result_aval(x: Any) -> ShapedArray:
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        raise ValueError(
            "result_shape_dtypes must be a pytree of objects with `shape` and `dtype` attributes "
            f"(e.g. jax.ShapeDtypeStruct), got {x!r}"
        )
    return ShapedArray(tuple(x.shape), dtypes.canonicalize(dtypes.dtype(x.dtype)))


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """Call the pure host function `callback(*args, **kwargs)` on concrete arrays; its results
    must match `result_shape_dtypes` (a pytree of objects with `shape` and `dtype`)."""
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {list(_VMAP_METHODS)}, but got: "
            f"{vmap_method}"
        )
    flat, in_tree = tree_flatten((args, kwargs))
    flat = [_to_array(x) for x in flat]
    result_avals = tree_map(_result_aval, result_shape_dtypes)
    flat_avals, out_tree = tree_flatten(result_avals)
    outs = pure_callback_p.bind(
        *flat,
        callback=callback,
        in_tree=in_tree,
        out_tree=out_tree,
        result_avals=tuple(flat_avals),
        sharding=sharding,
        vmap_method=vmap_method,
    )
    return tree_unflatten(out_tree, list(outs))


# ---- io_callback: a callback with side effects ---------------------------------------------------
# Never dropped from a jaxpr (partial_eval keeps effectful equations); every call runs, in
# program order (webjax runs a program that contains one eagerly, equation by equation).
io_callback_p = core.Primitive("io_callback")
io_callback_p.multiple_results = True
io_callback_p.def_abstract_eval(_abstract)


@io_callback_p.def_impl
def _io_impl(*args: Any, ordered: bool, **params: Any) -> list[Any]:
    return _impl(*args, kind="io_callback", **params)


def _io_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> Any:
    raise ValueError("IO callbacks do not support JVP.")


def _io_batch(vals: list[Any], dims: list[Any], *, ordered: bool, **params: Any) -> Any:
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    result_avals = params["result_avals"]
    mapped = [d is not None for d in dims]
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    xs = [batching.moveaxis(v, d, 0) for v, d in zip(vals, dims, strict=True) if d is not None]
    fixed = [v for v, m in zip(vals, mapped, strict=True) if not m]

    def body(carry: Any, row: Any) -> Any:
        it_f, it_r = iter(fixed), iter(row)
        merged = [next(it_r) if m else next(it_f) for m in mapped]
        return carry, io_callback_p.bind(*merged, ordered=False, **params)

    _, outs = control_flow.scan(body, (), xs, length=size)
    return list(outs), [0] * len(result_avals)


ad.primitive_jvps[io_callback_p] = _io_jvp
batching.primitive_batchers[io_callback_p] = _io_batch


def io_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    ordered: bool = False,
    **kwargs: Any,
) -> Any:
    """Call the host function `callback(*args, **kwargs)`, which may have side effects, on
    concrete arrays: it runs once per call, also under jit (never dropped); `ordered=True` keeps
    calls in program order and forbids vmap, as in JAX."""
    flat, in_tree = tree_flatten((args, kwargs))
    flat = [_to_array(x) for x in flat]
    flat_avals, out_tree = tree_flatten(tree_map(_result_aval, result_shape_dtypes))
    outs = io_callback_p.bind(
        *flat,
        callback=callback,
        in_tree=in_tree,
        out_tree=out_tree,
        result_avals=tuple(flat_avals),
        sharding=sharding,
        ordered=bool(ordered),
    )
    return tree_unflatten(out_tree, list(outs))


__all__ = ["io_callback", "io_callback_p", "pure_callback", "pure_callback_p"]
