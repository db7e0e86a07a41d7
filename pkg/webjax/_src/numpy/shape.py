"""Shape manipulation: reshape, transpose, ravel, squeeze, expand_dims, stack, broadcast_to."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from .. import core
from ..lax import lax
from . import util


def _resolve_shape(newshape: Any, size: int) -> tuple[int, ...]:
    if isinstance(newshape, int) or hasattr(newshape, "__index__"):
        newshape = (newshape,)
    dims = [operator.index(d) for d in newshape]
    if dims.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
        dims[dims.index(-1)] = size // known
    return tuple(dims)


def reshape(
    a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None, copy: Any = None
) -> Any:
    if shape is None:
        shape = newshape
    if order != "C":
        raise NotImplementedError("jnp.reshape only supports order='C'")
    a = util.ensure_array(a)
    av = util.aval(a)
    return lax.reshape(a, _resolve_shape(shape, av.size))


def ravel(a: Any, order: str = "C") -> Any:
    return reshape(a, (-1,), order)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    a = util.ensure_array(a)
    nd = util.aval(a).ndim
    perm = (
        tuple(range(nd))[::-1] if axes is None else tuple(util.canonical_axis(x, nd) for x in axes)
    )
    if len(perm) != nd or sorted(perm) != list(range(nd)):
        raise ValueError("axes don't match array")
    return lax.transpose(a, perm)


def matrix_transpose(x: Any, /) -> Any:
    x = util.ensure_array(x)
    nd = util.aval(x).ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got {nd=}")
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    a = util.ensure_array(a)
    nd = util.aval(a).ndim
    perm = list(range(nd))
    i, j = util.canonical_axis(axis1, nd), util.canonical_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


def squeeze(a: Any, axis: Any = None) -> Any:
    a = util.ensure_array(a)
    av = util.aval(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(av.shape) if d == 1)
    else:
        axes = util.canonical_axes(axis, av.ndim)
    return lax.squeeze(a, axes)


def expand_dims(a: Any, axis: Any) -> Any:
    a = util.ensure_array(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = util.aval(a).ndim + len(axes)
    return lax.expand_dims(a, [util.canonical_axis(x, nd) for x in axes])


def broadcast_to(a: Any, shape: Any) -> Any:
    return util.broadcast_to(a, core.canonicalize_shape(shape))


def atleast_1d(*arys: Any) -> Any:
    out = [
        reshape(a, (1,)) if util.aval(util.ensure_array(a)).ndim == 0 else util.ensure_array(a)
        for a in arys
    ]
    return out[0] if len(out) == 1 else out


def stack(arrays: Sequence[Any], axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    arrays = util.promote_dtypes(*[util.ensure_array(a) for a in arrays])
    shapes = {util.aval(a).shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError("All input arrays must have the same shape.")
    nd = util.aval(arrays[0]).ndim + 1
    ax = util.canonical_axis(axis, nd)
    parts = [lax.expand_dims(a, [ax]) for a in arrays]
    return concatenate(parts, axis=ax)


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    arrays = util.promote_dtypes(*[util.ensure_array(a) for a in arrays])
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    nd = util.aval(arrays[0]).ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    return lax.concatenate(arrays, util.canonical_axis(axis, nd))
