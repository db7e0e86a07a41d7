"""Reductions: sum, prod, max, min, mean, all, any (with axis, dtype, keepdims)."""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..lax import lax
from . import util


def _reduction(
    x: Any, axis: Any, keepdims: bool, dtype: Any, name: str, lax_fn: Any, upcast_small_ints: bool
) -> Any:
    x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
    av = util.aval(x)
    axes = util.canonical_axes(axis, av.ndim)
    if dtype is not None:
        x = util.convert(x, dtypes.canonicalize(dtypes.dtype(dtype)))
    elif upcast_small_ints and av.dtype.kind in "biu" and av.dtype.itemsize < 4:
        target = (
            dtypes.default_int()
            if av.dtype.kind in "bi"
            else dtypes.canonicalize(
                dtypes.uint64 if dtypes.default_int().itemsize == 8 else dtypes.uint32
            )
        )
        x = util.convert(x, target)
    elif upcast_small_ints and av.dtype.kind == "b":
        x = util.convert(x, dtypes.default_int())
    out = lax_fn(x, axes)
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
        out = lax.reshape(out, shape)
    return out


def sum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    _unsupported(out, initial, where, "sum")
    return _reduction(a, axis, keepdims, dtype, "sum", lax.reduce_sum, True)


def prod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    _unsupported(out, initial, where, "prod")
    return _reduction(a, axis, keepdims, dtype, "prod", lax.reduce_prod, True)


def max(
    a: Any,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    _unsupported(out, initial, where, "max")
    _check_nonempty(a, axis, "max")
    return _reduction(a, axis, keepdims, None, "max", lax.reduce_max, False)


def min(
    a: Any,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    _unsupported(out, initial, where, "min")
    _check_nonempty(a, axis, "min")
    return _reduction(a, axis, keepdims, None, "min", lax.reduce_min, False)


def all(
    a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = None
) -> Any:
    a = util.convert(util.ensure_array(a), dtypes.bool_)
    return _reduction(a, axis, keepdims, None, "all", lax.reduce_and, False)


def any(
    a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = None
) -> Any:
    a = util.convert(util.ensure_array(a), dtypes.bool_)
    return _reduction(a, axis, keepdims, None, "any", lax.reduce_or, False)


def mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: Any = None,
) -> Any:
    _unsupported(out, None, where, "mean")
    a = util.ensure_array(a) if not util.is_scalar(a) else util.convert(a, *util.result_type(a))
    av = util.aval(a)
    axes = util.canonical_axes(axis, av.ndim)
    n = math.prod(av.shape[i] for i in axes)
    if dtype is None:
        dt = av.dtype if av.dtype.kind == "f" else dtypes.default_float()
    else:
        dt = dtypes.canonicalize(dtypes.dtype(dtype))
    s = sum(util.convert(a, dt), axis=axis, keepdims=keepdims)
    return lax.div(s, lax.full((), n, dt))


def _unsupported(out: Any, initial: Any, where: Any, name: str) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    if initial is not None or where is not None:
        raise NotImplementedError(f"jnp.{name} with initial= or where= is not supported yet")


def _check_nonempty(a: Any, axis: Any, name: str) -> None:
    av = util.aval(a)
    axes = util.canonical_axes(axis, av.ndim)
    if 0 in [av.shape[i] for i in axes]:
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
