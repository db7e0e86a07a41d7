"""`jax.scipy.stats`' statistics of samples: `sem`, `mode` and `rankdata`, with JAX's results
(its dtypes, its NaN policies and errors), jit- and vmap-friendly (fixed output shapes).

`mode` and `rankdata` work on sorted copies: equal values sit in runs, and a run's start and end
positions (running maxima of the start indices, running minima of the end indices from the
right) give each element its run's length and its min/max rank without any data-dependent
shape.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .. import dtypes
from .. import numpy as jnp
from ..lax import lax, windowed
from ..numpy import util
from ..vmap import vmap

_POLICIES = ("propagate", "omit", "raise")


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _check_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in _POLICIES:
        raise ValueError(
            f"Illegal nan_policy value {nan_policy!r}; expected one of "
            "{'propagate', 'omit', 'raise'}"
        )
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
            f"Please check if nans exist in `x` outside of the `{name}` function."
        )


def sem(
    a: Any,
    axis: int | None = 0,
    ddof: int = 1,
    nan_policy: str = "propagate",
    *,
    keepdims: bool = False,
) -> Any:
    """The standard error of the mean: std(a, ddof) / sqrt(n) along `axis` (the whole array
    for None); `nan_policy="omit"` leaves NaNs out of both."""
    util.check_arraylike("sem", a)
    (b,) = util.promote_dtypes_inexact(util.ensure_array(a))
    dt = util.aval(b).dtype
    if nan_policy == "propagate":
        shape = util.aval(b).shape
        n = math.prod(shape) if axis is None else shape[axis]
        spread = jnp.std(b, axis, ddof=ddof, keepdims=keepdims)
        return lax.div(spread, lax.convert_element_type(jnp.sqrt(n), dt))
    if nan_policy == "omit":
        count = jnp.sum(jnp.logical_not(jnp.isnan(b)), axis, keepdims=keepdims)
        spread = jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
        return lax.div(spread, lax.convert_element_type(jnp.sqrt(count), dt))
    raise ValueError(f"{nan_policy} is not supported")


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def _runs(s: Any) -> tuple[Any, Any]:
    """For a sorted vector: each position's run start and run end (inclusive)."""
    n = util.aval(s).shape[0]
    idx = jnp.arange(n)
    differs = s[1:] != s[:-1]
    starts = jnp.concatenate([jnp.array([True]), differs])
    ends = jnp.concatenate([differs, jnp.array([True])])
    first = windowed.cummax(jnp.where(starts, idx, 0), axis=0)
    last = windowed.cummin(jnp.where(ends, idx, n - 1), axis=0, reverse=True)
    return first, last


def _mode_of(column: Any) -> tuple[Any, Any]:
    s = jnp.sort(column)
    first, last = _runs(s)
    length = last - first + 1
    best = jnp.argmax(length)  # the first longest run: the smallest of the most common values
    return s[best], length[best]


def mode(
    a: Any, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False
) -> ModeResult:
    """The most common value along `axis` (the smallest of them on ties) and its count."""
    util.check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_policy("mode", nan_policy)
    shape = util.aval(x).shape
    if axis is not None:
        axis = _axis(axis, len(shape))
    if axis is None:
        out_shape = tuple(1 for _ in shape) if keepdims else ()
        x, axis = jnp.ravel(x), 0
    else:
        out_shape = tuple(
            1 if i == axis else d for i, d in enumerate(shape) if keepdims or i != axis
        )
    x = jnp.moveaxis(x, axis, 0)
    length = util.aval(x).shape[0]
    columns = jnp.reshape(x, (length, math.prod(util.aval(x).shape[1:])))
    if length == 0:
        nan = jnp.full((util.aval(columns).shape[1],), math.nan, dtypes.default_float())
        vals, counts = nan, jnp.zeros_like(nan)
    else:
        vals, counts = vmap(_mode_of, in_axes=1)(columns)
    return ModeResult(jnp.reshape(vals, out_shape), jnp.reshape(counts, out_shape))


def _ranks(v: Any, method: str) -> Any:
    out = dtypes.default_float()
    n = util.aval(v).shape[0]
    order = jnp.argsort(v, stable=True)
    where = jnp.zeros(n, order.dtype).at[order].set(jnp.arange(n, dtype=order.dtype))
    if method == "ordinal":
        ranks = where + 1
    else:
        s = v[order]
        if method == "dense":
            differs = jnp.concatenate([jnp.array([True]), s[1:] != s[:-1]])
            ranks = jnp.cumsum(differs)[where]
        else:
            first, last = _runs(s)
            low, high = (first + 1)[where], (last + 1)[where]
            if method == "min":
                ranks = low
            elif method == "max":
                ranks = high
            else:  # average
                ranks = lax.mul(
                    lax.add(low.astype(out), high.astype(out)), util.lax_const(0.5, low.astype(out))
                )
    ranks = jnp.asarray(ranks).astype(out)
    return jnp.where(jnp.any(jnp.isnan(v)), math.nan, ranks).astype(out)


def rankdata(
    a: Any, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate"
) -> Any:
    """Ranks from 1, ties resolved by `method` (average, min, max, dense, ordinal), in the
    default float type; all NaN where the data has a NaN. With `axis`, along each 1-D slice."""
    util.check_arraylike("rankdata", a)
    _check_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    x = util.ensure_array(a)
    if axis is None:
        return _ranks(jnp.ravel(x), method)
    axis = _axis(axis, util.aval(x).ndim)
    moved = jnp.moveaxis(x, axis, -1)
    lead = util.aval(moved).shape[:-1]
    flat = jnp.reshape(moved, (-1, util.aval(moved).shape[-1]))
    ranked = vmap(lambda v: _ranks(v, method))(flat)
    return jnp.moveaxis(jnp.reshape(ranked, (*lead, util.aval(moved).shape[-1])), -1, axis)
