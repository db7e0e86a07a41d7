"""NumPy indexing on lax: `x[...]` and `x.at[...]` for basic indices.

Basic indices (ints, slices with any step, None, Ellipsis) become slice/rev/reshape, which
are views (no kernel). Integer scalars that are traced become dynamic_slice. Boolean masks
need concrete values (as in JAX). Integer-array (advanced) indexing needs gather, which is not
implemented yet and says so.
"""

from __future__ import annotations

import operator
from typing import Any

from .. import core, dtypes
from ..lax import lax
from . import util


def _is_int_scalar(i: Any) -> bool:
    if isinstance(i, bool):
        return False
    if isinstance(i, int):
        return True
    if hasattr(i, "__index__") and not hasattr(i, "shape"):
        return True
    av = _maybe_aval(i)
    return av is not None and av.shape == () and av.dtype.kind in "iu"


def _maybe_aval(i: Any) -> core.ShapedArray | None:
    if isinstance(i, core.Tracer) or hasattr(i, "_exp"):
        return core.get_aval(i)
    if hasattr(i, "dtype") and hasattr(i, "shape"):
        from .creation import asarray

        return core.get_aval(asarray(i))
    return None


def _expand(idx: Any, ndim: int) -> list[Any]:
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis and not _is_bool_mask(i))
    n_real += sum(_mask_ndim(i) for i in idx if _is_bool_mask(i))
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(
            f"Too many indices: {ndim}-dimensional array indexed with {n_real} regular indices."
        )
    out: list[Any] = []
    for i in idx:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - n_real))
        else:
            out.append(i)
    if Ellipsis not in idx:
        out.extend([slice(None)] * (ndim - n_real))
    return out


def _is_bool_mask(i: Any) -> bool:
    if isinstance(i, list) and i and all(isinstance(v, bool) for v in i):
        return True
    av = _maybe_aval(i)
    return av is not None and av.dtype is dtypes.bool_ and av.ndim > 0


def _mask_ndim(i: Any) -> int:
    if isinstance(i, list):
        return 1
    av = _maybe_aval(i)
    return av.ndim if av is not None else 1


def _check_advanced(i: Any) -> None:
    if isinstance(i, (list, tuple)) or (
        (av := _maybe_aval(i)) is not None and av.ndim > 0 and av.dtype.kind in "iu"
    ):
        raise NotImplementedError(
            "Indexing with integer arrays (advanced indexing / gather) is not supported by "
            "webjax yet; use basic indices (ints, slices, None, ...) or lax.dynamic_slice."
        )
    if isinstance(i, float) or ((av := _maybe_aval(i)) is not None and av.dtype.kind == "f"):
        raise TypeError(
            f"Indexer must have integer or boolean type, got indexer with type {type(i).__name__}"
        )


def _static_int(i: Any) -> int | None:
    if isinstance(i, int):
        return i
    if isinstance(i, core.Tracer):
        v = i.to_concrete_value()
        return None if v is None else int(v)
    try:
        return operator.index(i)
    except TypeError:
        return None


def getitem(x: Any, idx: Any) -> Any:
    x = util.ensure_array(x)
    if _has_bool_mask(idx):
        return _mask_getitem(x, idx)
    shape = util.aval(x).shape
    entries = _expand(idx, len(shape))
    out = x
    axis = 0  # axis of `out` the next entry applies to
    squeeze_axes: list[int] = []
    new_axes: list[int] = []
    result_axis = 0
    for i in entries:
        if i is None:
            new_axes.append(result_axis)
            result_axis += 1
            continue
        _check_advanced(i)
        d = util.aval(out).shape[axis]
        if isinstance(i, slice):
            out = _apply_slice(out, axis, i, d)
            axis += 1
            result_axis += 1
            continue
        if not _is_int_scalar(i):
            raise TypeError(f"Unsupported index type: {type(i).__name__}")
        s = _static_int(i)
        if s is not None:
            if not -d <= s < d:
                raise IndexError(f"index {s} is out of bounds for axis {axis} with size {d}")
            s %= d
            out = _slice_axis(out, axis, s, s + 1, 1)
        else:
            out = _dynamic_index(out, axis, i, d)
        squeeze_axes.append(axis)
        axis += 1
    if squeeze_axes:
        out = lax.squeeze(out, squeeze_axes)
    if new_axes:
        out = lax.expand_dims(out, new_axes)
    return out


def _apply_slice(x: Any, axis: int, s: slice, d: int) -> Any:
    for part in (s.start, s.stop, s.step):
        if part is not None and _static_int(part) is None:
            raise IndexError(
                "Array slice indices must have static start/stop/step to be used with NumPy "
                "indexing syntax. Found slice with a traced value; use lax.dynamic_slice instead."
            )
    start, stop, step = slice(
        *(None if p is None else _static_int(p) for p in (s.start, s.stop, s.step))
    ).indices(d)
    if step > 0:
        return _slice_axis(x, axis, start, max(start, stop), step)
    # negative step: reverse, then slice forward
    x = lax.rev(x, (axis,))
    r_start, r_stop = d - 1 - start, d - 1 - stop
    return _slice_axis(x, axis, r_start, max(r_start, r_stop), -step)


def _slice_axis(x: Any, axis: int, start: int, stop: int, step: int) -> Any:
    shape = util.aval(x).shape
    if (start, stop, step) == (0, shape[axis], 1):
        return x
    lo = [0] * len(shape)
    hi = list(shape)
    st = [1] * len(shape)
    lo[axis], hi[axis], st[axis] = start, stop, step
    return lax.slice(x, lo, hi, st)


def _dynamic_index(x: Any, axis: int, i: Any, d: int) -> Any:
    i = util.ensure_array(i)
    i = lax.convert_element_type(i, dtypes.int32)
    zero = lax.full((), 0, dtypes.int32)
    i = lax.select(lax.lt(i, zero), lax.add(i, lax.full((), d, dtypes.int32)), i)
    return lax.dynamic_index_in_dim(x, i, axis, keepdims=True)


def _has_bool_mask(idx: Any) -> bool:
    items = idx if isinstance(idx, tuple) else (idx,)
    return any(_is_bool_mask(i) for i in items)


def _mask_getitem(x: Any, idx: Any) -> Any:
    items = idx if isinstance(idx, tuple) else (idx,)
    if len(items) != 1:
        raise NotImplementedError("boolean masks combined with other indices are not supported")
    mask = items[0]
    mval = core.to_concrete(mask)
    if mval is None or isinstance(mval, core.Tracer):
        raise core.ConcretizationTypeError(
            "Array boolean indices must be concrete; got a traced boolean mask. Use "
            "jnp.where(mask, x, fill) or the size= argument of jnp.nonzero instead."
        )
    from .creation import asarray

    mask_arr = asarray(mval)
    flat_mask = [bool(v) for v in _flatten_list(mask_arr.tolist())]
    mshape = util.aval(mask_arr).shape
    xshape = util.aval(x).shape
    if xshape[: len(mshape)] != mshape:
        raise IndexError(
            f"boolean index did not match shape of indexed array in index 0: got {mshape}, "
            f"expected {xshape[: len(mshape)]}"
        )
    import math

    rest = xshape[len(mshape) :]
    flat = lax.reshape(x, (math.prod(mshape), *rest))
    picks = [
        lax.squeeze(_slice_axis(flat, 0, k, k + 1, 1), (0,)) for k, m in enumerate(flat_mask) if m
    ]
    if not picks:
        return lax.full((0, *rest), 0, util.aval(x).dtype)
    return lax.concatenate([lax.expand_dims(p, (0,)) for p in picks], 0)


def _flatten_list(v: Any) -> list[Any]:
    if isinstance(v, list):
        return [y for e in v for y in _flatten_list(e)]
    return [v]


# ---- x.at[...] ---------------------------------------------------------------------------------
class _IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, idx: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, idx)


class _IndexUpdateRef:
    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def get(self, **_: Any) -> Any:
        return getitem(self.array, self.index)

    def set(self, values: Any, **_: Any) -> Any:
        return _update(self.array, self.index, values, lambda old, new: new)

    def add(self, values: Any, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.add)

    def subtract(self, values: Any, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.sub)

    def multiply(self, values: Any, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.mul)

    mul = multiply

    def divide(self, values: Any, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.div)

    def min(self, values: Any, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.min)

    def max(self, values: Any, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.max)

    def power(self, values: Any, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.pow)


def _update(x: Any, idx: Any, values: Any, combine: Any) -> Any:
    """Basic-index updates as a dynamic_update_slice of the (contiguous) indexed block."""
    x = util.ensure_array(x)
    shape = util.aval(x).shape
    dt = util.aval(x).dtype
    entries = [i for i in _expand(idx, len(shape)) if i is not None]
    starts: list[Any] = []
    sizes: list[int] = []
    for axis, i in enumerate(entries):
        d = shape[axis]
        _check_advanced(i)
        if isinstance(i, slice):
            start, stop, step = slice(
                *(None if p is None else _static_int(p) for p in (i.start, i.stop, i.step))
            ).indices(d)
            if step != 1:
                raise NotImplementedError(
                    "x.at[...] with strided slices needs scatter, not supported yet"
                )
            starts.append(start)
            sizes.append(max(stop - start, 0))
            continue
        s = _static_int(i)
        if s is not None:
            if not -d <= s < d:
                # JAX drops out-of-bounds updates by default
                return x
            starts.append(s % d)
        else:
            iv = lax.convert_element_type(util.ensure_array(i), dtypes.int32)
            zero = lax.full((), 0, dtypes.int32)
            starts.append(
                lax.select(lax.lt(iv, zero), lax.add(iv, lax.full((), d, dtypes.int32)), iv)
            )
        sizes.append(1)
    if 0 in sizes:
        return x
    old = lax.dynamic_slice(x, starts, sizes)
    block_shape = getitem(x, idx)
    values = util.convert(values, dt) if util.is_scalar(values) else values
    values = lax.convert_element_type(util.ensure_array(values), dt)
    values = util.broadcast_to(values, util.aval(block_shape).shape)
    values = lax.reshape(values, sizes)
    return lax.dynamic_update_slice(x, combine(old, values), starts)
