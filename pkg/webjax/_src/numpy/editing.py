"""Editing an array along an axis: delete and insert entries, trim_zeros. Positions are
gathered with one-hot matrices (indexing), so traced indices work where JAX allows them."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..lax import lax, sorting
from . import util
from .creation import array, asarray
from .indexing import _one_hot_gather, getitem
from .shape import _take_range, moveaxis, ravel
from .sorting import argsort


def _take_axis(a: Any, idx: Any, axis: int) -> Any:
    return _one_hot_gather(a, lax.convert_element_type(idx, dtypes.int32), axis)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    util.check_arraylike("trim_zeros", filt)
    filt = util.ensure_array(filt)
    val = util.concrete_array(filt, "Error arose in the `filt` argument of trim_zeros()")
    nd = util.aval(filt).ndim
    axes = set(util.canonical_axes(axis, nd))
    t = trim.lower()
    if not axes or ("f" not in t and "b" not in t):
        return filt
    nonzero = lax.ne(util.convert(val, dtypes.bool_), lax.full((), False, dtypes.bool_))
    index: list[Any] = []
    for ax in range(nd):
        if ax not in axes:
            index.append(slice(None))
            continue
        others = tuple(i for i in range(nd) if i != ax)
        flags = [bool(v) for v in _flat(lax.reduce_or(nonzero, others).tolist())]
        if not any(flags):
            index.append(slice(0, 0))
            continue
        start = flags.index(True) if "f" in t else None
        stop = len(flags) - flags[::-1].index(True) if "b" in t else None
        index.append(slice(start, stop))
    return getitem(filt, tuple(index))


def _flat(v: Any) -> list[Any]:
    return [y for e in v for y in _flat(e)] if isinstance(v, list) else [v]


def delete(
    arr: Any, obj: Any, axis: int | None = None, *, assume_unique_indices: bool = False
) -> Any:
    util.check_arraylike("delete", arr)
    a = util.ensure_array(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = util.canonical_axis(axis, util.aval(a).ndim)
    n = util.aval(a).shape[ax]
    if isinstance(obj, slice):
        keep = sorted(set(range(n)) - set(range(n)[obj]))
        return _take_axis(a, lax.full((0,), 0, dtypes.int32) if not keep else _int_array(keep), ax)
    try:
        i = operator.index(obj)
    except TypeError:  # a sequence or an array of indices (or a traced index)
        pass
    else:
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
        i %= n
        return lax.concatenate([_take_range(a, ax, 0, i), _take_range(a, ax, i + 1, n)], ax)
    if isinstance(obj, (list, tuple)) and not obj:
        idx = lax.full((0,), 0, dtypes.int32)
    else:
        idx = asarray(obj)
    kind = util.aval(idx).dtype.kind
    if kind in "iu" and assume_unique_indices:
        # the j-th kept index is j plus the number of (sorted, shifted) deleted indices <= it
        flat = lax.convert_element_type(ravel(idx), dtypes.int32)
        k = util.aval(flat).shape[0]
        flat = lax.select(
            lax.lt(flat, lax.full((), 0, dtypes.int32)),
            lax.add(flat, lax.full((), n, dtypes.int32)),
            flat,
        )
        flat = lax.clamp(lax.full((), 0, dtypes.int32), flat, lax.full((), n, dtypes.int32))
        shifted = lax.sub(sorting.sort(flat, 0, True), lax.iota(dtypes.int32, k))
        j = lax.iota(dtypes.int32, n - k)
        big = (n - k, k)
        before = lax.ge(
            lax.broadcast_in_dim(j, big, (0,)), lax.broadcast_in_dim(shifted, big, (1,))
        )
        j = lax.add(j, lax.reduce_sum(lax.convert_element_type(before, dtypes.int32), (1,)))
        return _take_axis(a, j, ax)
    val = util.concrete_array(
        idx,
        "'obj' array argument of jnp.delete(); pass "
        "assume_unique_indices=True to delete traced indices.",
    )
    flags = _flat(val.tolist()) if util.aval(val).ndim else [val.item()]
    if kind == "b":
        if util.aval(val).shape != (n,):
            raise ValueError(
                "np.delete(arr, obj): for boolean indices, obj must be "
                "one-dimensional with length matching specified axis."
            )
        keep = [i for i, f in enumerate(flags) if not f]
    elif kind in "iu" or not flags:
        drop = set()
        for i in flags:
            i = int(i)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
            drop.add(i % n)
        keep = [i for i in range(n) if i not in drop]
    else:
        raise ValueError(
            f"np.delete(arr, obj): got obj.dtype={util.aval(val).dtype}; must be integer or bool."
        )
    return _take_axis(a, _int_array(keep) if keep else lax.full((0,), 0, dtypes.int32), ax)


def _int_array(values: Sequence[int]) -> Any:
    return asarray(list(values), dtype=dtypes.int32)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    util.check_arraylike("insert", arr, values)
    a = util.ensure_array(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = util.canonical_axis(
        util.concrete_int(axis, "axis argument of jnp.insert()"), util.aval(a).ndim
    )
    n = util.aval(a).shape[ax]
    if isinstance(obj, slice):
        idx = _int_array(list(range(n)[obj])) if range(n)[obj] else lax.full((0,), 0, dtypes.int32)
    else:
        idx = (
            util.ensure_array(obj)
            if not isinstance(obj, (list, tuple)) or obj
            else (lax.full((0,), 0, dtypes.int32))
        )
    if util.aval(idx).ndim > 1:
        raise ValueError(
            f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}"
        )
    if util.aval(idx).dtype.kind not in "iu":
        if util.aval(idx).size == 0:
            idx = lax.convert_element_type(idx, dtypes.int32)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    dt = util.aval(a).dtype
    vals = array(
        values if util.is_scalar(values) else util.ensure_array(values),
        dtype=dt,
        ndmin=util.aval(a).ndim,
    )
    idx = lax.convert_element_type(idx, dtypes.int32)
    if util.aval(idx).size == 1:
        scalar_obj = util.aval(idx).ndim == 0
        idx = lax.reshape(idx, ())
        if scalar_obj:
            vals = moveaxis(vals, 0, ax)
        idx = lax.broadcast_in_dim(idx, (util.aval(vals).shape[ax],), ())
    k = util.broadcast_shapes(util.aval(idx).shape, (util.aval(vals).shape[ax],))[0]
    idx = util.broadcast_to(idx, (k,))
    vshape = list(util.aval(a).shape)
    vshape[ax] = k
    vals = util.broadcast_to(vals, vshape)
    # where each inserted value lands: its clipped index plus the number inserted before it
    idx = lax.select(
        lax.lt(idx, lax.full((), 0, dtypes.int32)), lax.add(idx, lax.full((), n, dtypes.int32)), idx
    )
    idx = lax.clamp(lax.full((), 0, dtypes.int32), idx, lax.full((), n, dtypes.int32))
    order = argsort(idx)
    rank = _take_axis(lax.iota(dtypes.int32, k), argsort(order), 0)  # position in sorted order
    dest = lax.add(idx, rank)
    m = n + k
    big = (m, k)
    hit = lax.eq(lax.broadcasted_iota(dtypes.int32, big, 0), lax.broadcast_in_dim(dest, big, (1,)))
    is_val = lax.reduce_or(hit, (1,))
    which = lax.reduce_sum(
        lax.select(hit, lax.broadcasted_iota(dtypes.int32, big, 1), lax.full(big, 0, dtypes.int32)),
        (1,),
    )
    before = lax.reduce_sum(
        lax.convert_element_type(
            lax.lt(
                lax.broadcast_in_dim(dest, big, (1,)), lax.broadcasted_iota(dtypes.int32, big, 0)
            ),
            dtypes.int32,
        ),
        (1,),
    )
    src = lax.clamp(
        lax.full((), 0, dtypes.int32),
        lax.sub(lax.iota(dtypes.int32, m), before),
        lax.full((), max(n - 1, 0), dtypes.int32),
    )
    from_vals = _take_axis(vals, which, ax) if k else None
    from_arr = _take_axis(a, src, ax) if n else None
    if from_vals is None:
        return from_arr
    if from_arr is None:
        return from_vals
    oshape = util.aval(from_arr).shape
    return lax.select(lax.broadcast_in_dim(is_val, oshape, (ax,)), from_vals, from_arr)
