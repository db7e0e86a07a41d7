"""`jax.scipy.ndimage`: `map_coordinates` with nearest (order 0) and linear (order 1)
interpolation: per axis, the integer nodes around each coordinate and their weights; the result
is the weighted sum over every combination of nodes (2^ndim gathers for linear), with indices
outside the input folded back by the boundary mode ('constant' masks them with `cval`).

Modes follow JAX (which follows SciPy's documentation rather than its code): 'wrap' is SciPy's
'grid-wrap' and 'constant' SciPy's 'grid-constant'.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes
from .. import numpy as jnp
from ..jit import eager_jit
from ..lax import lax
from ..numpy import util


def _mirror(index: Any, size: int) -> Any:
    # a triangle wave of period 2 (size - 1): ..., 1, 0, 1, ..., size - 1, size - 2, ...
    half = size - 1
    return jnp.abs(jnp.remainder(index + half, 2 * half) - half)


def _reflect(index: Any, size: int) -> Any:
    # mirror on the half-integer grid: ..., 1, 0, 0, 1, ..., size - 1, size - 1, ...
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_FIXERS: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: jnp.remainder(index, size),
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x: Any) -> Any:
    return x if dtypes.is_int(util.aval(x).dtype) else lax.round(x)


def _nearest_nodes(c: Any) -> list[tuple[Any, Any]]:
    index = lax.convert_element_type(_round_half_away(c), dtypes.int32)
    return [(index, lax.full((), 1, util.aval(c).dtype))]


def _linear_nodes(c: Any) -> list[tuple[Any, Any]]:
    lower = jnp.floor(c)
    upper_w = c - lower
    lower_w = 1 - upper_w
    index = lax.convert_element_type(lower, dtypes.int32)
    return [(index, lower_w), (index + 1, upper_w)]


def map_coordinates(
    input: Any, coordinates: Sequence[Any], order: int, mode: str = "constant", cval: Any = 0.0
) -> Any:
    """Interpolate `input` at `coordinates` (one array per input axis, broadcast together);
    order 0 (nearest) or 1 (linear); modes 'constant', 'nearest', 'wrap', 'mirror',
    'reflect'."""
    return _map_coordinates(input, list(coordinates), order, mode, cval)


@eager_jit(static_argnames=("order", "mode"))
def _map_coordinates(input: Any, coordinates: list[Any], order: int, mode: str, cval: Any) -> Any:
    x = util.ensure_array(input)
    coords = [util.ensure_array(c) for c in coordinates]
    dt = util.aval(x).dtype
    cval = util.convert(cval, dt) if util.is_scalar(cval) else jnp.asarray(cval, dtype=dt)
    shape = util.aval(x).shape
    if len(coords) != len(shape):
        raise ValueError(
            "coordinates must be a sequence of length input.ndim, but "
            f"{len(coords)} != {len(shape)}"
        )
    fixer = _FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_FIXERS)}."
        )
    if order == 0:
        nodes_of = _nearest_nodes
    elif order == 1:
        nodes_of = _linear_nodes
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

    per_axis = []
    for c, size in zip(coords, shape):
        axis_nodes = []
        for index, weight in nodes_of(c):
            valid = (index >= 0) & (index < size) if mode == "constant" else None
            axis_nodes.append((fixer(index, size), valid, weight))
        per_axis.append(axis_nodes)

    terms = []
    for combo in itertools.product(*per_axis):
        indices = tuple(n[0] for n in combo)
        valids = [n[1] for n in combo if n[1] is not None]
        weight = functools.reduce(operator.mul, [n[2] for n in combo])
        value = x[indices]
        if valids:
            value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
        terms.append(weight * value)
    result = functools.reduce(operator.add, terms)
    if dtypes.is_int(dt):
        result = _round_half_away(result)
    return result.astype(dt)
