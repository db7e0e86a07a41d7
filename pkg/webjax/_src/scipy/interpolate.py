"""`jax.scipy.interpolate`: `RegularGridInterpolator` (linear and nearest) on a rectilinear
grid of strictly increasing axes: `searchsorted` finds each query's cell per axis (clamped to
the outer cells, so points outside extrapolate linearly unless `fill_value` masks them), and
linear interpolation sums the 2^ndim cell corners with products of per-axis weights. It is a
pytree (grid, values and fill_value are its leaves), so it crosses `jit` and `vmap`.
"""

from __future__ import annotations

import functools
import itertools
import operator
from typing import Any

from .. import dtypes
from .. import numpy as jnp
from ..numpy import util
from ..tree_util import register_pytree_node
from .signal import check_arraylike


def _ndim_coords_from_arrays(points: Any, ndim: int) -> Any:
    """Query points as an (..., ndim) array: a tuple of coordinate arrays (broadcast together)
    or one array (a 1-d array is a list of points)."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        parts = jnp.broadcast_arrays(*points)
        dt = dtypes.default_float()
        return jnp.stack([jnp.asarray(p).astype(dt) for p in parts], axis=-1)
    check_arraylike("_ndim_coords_from_arrays", points)
    points = util.ensure_array(points)
    if points.ndim == 1:
        points = points.reshape(-1, ndim)
    return points


class RegularGridInterpolator:
    """Interpolate on a regular (rectilinear) grid, as scipy.interpolate.RegularGridInterpolator
    with JAX's restrictions: methods "linear" and "nearest", `bounds_error=False` only (it
    cannot be checked under jit), axes strictly increasing. Points outside the grid get
    `fill_value` (NaN by default; None extrapolates)."""

    def __init__(
        self,
        points: Any,
        values: Any,
        method: str = "linear",
        bounds_error: bool = False,
        fill_value: Any = float("nan"),
    ) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        values = util.ensure_array(values)
        if len(points) > values.ndim:
            raise ValueError(
                f"there are {len(points)} point arrays, but values has {values.ndim} dimensions"
            )
        (values,) = util.promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not jnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError(
                    "fill_value must be either 'None' or of a type compatible with values"
                )
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _ndim_coords_from_arrays(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(
                f"the requested sample points xi have dimension {xi.shape[1]}, but this "
                f"RegularGridInterpolator has dimension {ndim}"
            )
        xi_shape = xi.shape
        xi = xi.reshape(-1, xi_shape[-1])
        indices, distances, outside = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, distances)
        else:
            result = self._evaluate_nearest(indices, distances)
        if self.fill_value is not None:
            mask = outside.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
            result = jnp.where(mask, self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _find_indices(self, xi: Any) -> tuple[list[Any], list[Any], Any]:
        """Per axis, the lower corner of each point's cell and the point's fractional position
        in it; and whether the point lies outside the grid."""
        indices, distances = [], []
        outside = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.searchsorted(g, x) - 1
            i = jnp.where(i < 0, 0, i)
            i = jnp.where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, distances, outside

    def _evaluate_linear(self, indices: list[Any], distances: list[Any]) -> Any:
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        total: Any = jnp.asarray(0.0)
        # every corner of the cell: lower (weight 1 - t) or upper (weight t) along each axis
        for corner in itertools.product((False, True), repeat=len(indices)):
            weight = functools.reduce(
                operator.mul,
                [t if up else 1 - t for up, t in zip(corner, distances)],
                jnp.asarray(1.0),
            )
            idx = tuple(i + 1 if up else i for up, i in zip(corner, indices))
            total = total + self.values[idx] * weight[trailing]
        return total

    def _evaluate_nearest(self, indices: list[Any], distances: list[Any]) -> Any:
        idx = tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(indices, distances))
        return self.values[idx]


def _flatten(obj: RegularGridInterpolator) -> tuple[tuple[Any, ...], tuple[str, bool]]:
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux: tuple[str, bool], children: Any) -> RegularGridInterpolator:
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
