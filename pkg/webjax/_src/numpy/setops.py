"""Set operations: unique (and the array-API unique_*), isin, union1d, intersect1d, setdiff1d,
setxor1d.

Outputs whose length depends on the data take JAX's static `size=` (padded with `fill_value`,
truncated when too small). Without `size=` the length is read from the data, which needs
concrete values: eager calls (and `grad`, whose primal values stay concrete) work, `jit` and
`vmap` raise ConcretizationTypeError as JAX does. The work is a stable sort, neighbour
compares, a running count and one-hot gathers, so every backend runs it.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .. import dtypes
from ..lax import lax, sorting
from . import util
from .indexing import _one_hot_gather, nonzero
from .reductions import cumsum
from .shape import concatenate, moveaxis, ravel
from .sorting import lexsort

_SIZE_HINT = (
    "To make jnp.{0}() compatible with jit and other transformations, pass a static `size` "
    "argument, which determines the output size."
)


def _size_arg(size: Any, name: str) -> int | None:
    if size is None:
        return None
    n = util.concrete_int(size, f"The error arose for the size argument of jnp.{name}().")
    if n < 0:
        raise ValueError(f"jnp.{name}: size must be non-negative, got {n}")
    return n


def _need_concrete(x: Any, name: str) -> None:
    util.concrete_array(
        x, f"The error arose for the input of jnp.{name}(). " + _SIZE_HINT.format(name)
    )


def _count(mask: Any) -> Any:
    return lax.reduce_sum(lax.convert_element_type(mask, dtypes.int32), (0,))


def _static_count(count: Any, name: str) -> int:
    value = util.concrete_array(
        count, f"The error arose in jnp.{name}(). " + _SIZE_HINT.format(name)
    )
    return int(value.item())


def _iota(n: int) -> Any:
    return lax.iota(dtypes.int32, n)


def _gather(x: Any, idx: Any) -> Any:
    """x[idx] along axis 0 (in-bounds indices)."""
    return _one_hot_gather(x, lax.convert_element_type(idx, dtypes.int32), 0)


def _first(x: Any, n: int) -> Any:
    """x[:n] along axis 0, repeating the last element when x is shorter (then masked)."""
    m = util.aval(x).shape[0]
    if n <= m:
        return _slice0(x, 0, n)
    return _gather(x, lax.min(_iota(n), lax.full((), m - 1, dtypes.int32)))


def _slice0(x: Any, start: int, stop: int) -> Any:
    shape = util.aval(x).shape
    return lax.slice(x, (start,) + (0,) * (len(shape) - 1), (stop,) + shape[1:])


def _select_rows(valid: Any, x: Any, fill: Any) -> Any:
    """where(valid[:, None, ...], x, fill) with `fill` converted to x's dtype."""
    av = util.aval(x)
    fill = util.convert(fill, av.dtype, av.weak_type) if util.is_scalar(fill) else fill
    fill = util.broadcast_to(
        util.convert(util.ensure_array(fill), av.dtype, av.weak_type), av.shape
    )
    return lax.select(lax.broadcast_in_dim(valid, av.shape, (0,)), x, fill)


# ---- unique --------------------------------------------------------------------------------------
def _sorted_mask(ar: Any, axis: int, equal_nan: bool) -> tuple[Any, Any, Any]:
    """(aux, mask, perm): the slices of `ar` along `axis` (moved to the front) sorted
    lexicographically, mask[i] true where aux[i] starts a new unique slice, perm the order."""
    aux = moveaxis(ar, axis, 0)
    shape = util.aval(aux).shape
    n, rest = shape[0], math.prod(shape[1:])
    if n == 0:
        return aux, lax.full((0,), False, dtypes.bool_), _iota(0)
    if rest == 0:  # empty slices are all equal
        return aux, lax.eq(_iota(n), lax.full((), 0, dtypes.int32)), _iota(n)
    if util.aval(aux).dtype.kind == "c" and equal_nan:  # every NaN-holding value is nan+0j
        aux = lax.select(
            lax.ne(aux, aux), lax.full(shape, complex(math.nan, 0.0), util.aval(aux).dtype), aux
        )
    flat = lax.reshape(aux, (n, rest))
    keys = [lax.reshape(lax.slice(flat, (0, j), (n, j + 1)), (n,)) for j in reversed(range(rest))]
    perm = lexsort(keys)
    aux = _gather(aux, perm)
    hi, lo = _slice0(aux, 1, n), _slice0(aux, 0, n - 1)
    neq = lax.ne(hi, lo)
    if util.aval(aux).dtype.kind in "fc" and equal_nan:
        both_nan = lax.bitwise_and(lax.ne(hi, hi), lax.ne(lo, lo))
        neq = lax.bitwise_and(neq, lax.bitwise_not(both_nan))
    if len(shape) > 1:
        neq = lax.reduce_or(neq, tuple(range(1, len(shape))))
    mask = lax.concatenate([lax.full((1,), True, dtypes.bool_), neq], 0)
    return aux, mask, perm


def _unique(
    ar: Any,
    axis: int,
    return_index: bool,
    return_inverse: bool,
    return_counts: bool,
    equal_nan: bool,
    size: int | None,
    fill_value: Any,
    name: str = "unique",
    return_count: bool = False,
) -> list[Any]:
    n = util.aval(ar).shape[axis]
    if n == 0 and size and fill_value is None:
        raise ValueError(
            f"jnp.{name}: for zero-sized input with nonzero size argument, "
            "fill_value must be specified"
        )
    aux, mask, perm = _sorted_mask(ar, axis, equal_nan)
    count = _count(mask)
    if size is None:
        size = _static_count(count, name)
    rest = util.aval(aux).shape[1:]
    dint = dtypes.default_int()
    if n == 0:
        result = (
            lax.full((size, *rest), 0 if fill_value is None else fill_value, util.aval(aux).dtype)
            if size
            else aux
        )
        outs = [moveaxis(result, 0, axis)]
        empty = lax.full((0,), 0, dint)
        outs += [empty] * (return_index + return_inverse + return_counts)
        return outs + [count] if return_count else outs
    ind = nonzero(mask, size=size)[0]  # padded with 0: the smallest slice
    result = _gather(aux, ind)
    if fill_value is not None:
        result = _select_rows(lax.lt(_iota(size), count), result, fill_value)
    outs = [moveaxis(result, 0, axis)]
    if return_index:
        outs.append(lax.convert_element_type(_gather(perm, ind), dint))
    if return_inverse:
        rank = lax.sub(cumsum(mask), lax.full((), 1, dint))
        outs.append(sorting.sort((perm, rank), 0, True, 1)[1])  # rank[perm^-1]
    if return_counts:
        starts = nonzero(mask, size=size + 1)[0]
        nxt = _slice0(starts, 1, size + 1)
        nxt = lax.select(lax.ne(nxt, lax.full((), 0, dint)), nxt, lax.full((size,), n, dint))
        bounds = lax.concatenate([_slice0(starts, 0, 1), nxt], 0)  # padding: n, n, ...
        outs.append(lax.sub(nxt, _slice0(bounds, 0, size)))
    return outs + [count] if return_count else outs


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value: Any = None,
    sorted: bool = True,
) -> Any:
    util.check_arraylike("unique", ar)
    arr = util.ensure_array(ar)
    size = _size_arg(size, "unique")
    if size is None:
        _need_concrete(arr, "unique")
    shape = util.aval(arr).shape
    if axis is None:
        arr, ax = ravel(arr), 0
    else:
        ax = util.canonical_axis(axis, len(shape))
    outs = _unique(
        arr, ax, return_index, return_inverse, return_counts, equal_nan, size, fill_value
    )
    if return_inverse and axis is None:
        k = 1 + return_index
        outs[k] = lax.reshape(outs[k], shape)
    return outs[0] if len(outs) == 1 else tuple(outs)


class _UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class _UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> _UniqueAllResult:
    util.check_arraylike("unique_all", x)
    out = unique(x, True, True, True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueAllResult(*out)


def unique_counts(
    x: Any, /, *, size: int | None = None, fill_value: Any = None
) -> _UniqueCountsResult:
    util.check_arraylike("unique_counts", x)
    out = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueCountsResult(*out)


def unique_inverse(
    x: Any, /, *, size: int | None = None, fill_value: Any = None
) -> _UniqueInverseResult:
    util.check_arraylike("unique_inverse", x)
    out = unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueInverseResult(*out)


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    util.check_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# ---- membership --------------------------------------------------------------------------------
def _pairs_equal(a: Any, b: Any) -> Any:
    """(len(a), len(b)) matrix of a[i] == b[j] for 1-D a, b of one dtype."""
    big = (util.aval(a).shape[0], util.aval(b).shape[0])
    return lax.eq(lax.broadcast_in_dim(a, big, (0,)), lax.broadcast_in_dim(b, big, (1,)))


def isin(
    element: Any,
    test_elements: Any,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    method: str = "auto",
) -> Any:
    util.check_arraylike("isin", element, test_elements)
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(
            f"method={method!r} is not implemented; options are 'compare_all', "
            "'binary_search', 'sort', and 'auto'"
        )
    e, t = (util.ensure_array(v) for v in (element, test_elements))
    e, t = util.promote_dtypes(e, t)
    shape = util.aval(e).shape
    ef, tf = ravel(e), ravel(t)
    if util.aval(ef).size == 0 or util.aval(tf).size == 0:
        return lax.full(shape, bool(invert), dtypes.bool_)
    hit = lax.reduce_or(_pairs_equal(ef, tf), (1,))
    if invert:
        hit = lax.bitwise_not(hit)
    return lax.reshape(hit, shape)


# ---- set operations on 1-D arrays ----------------------------------------------------------------
def _unique_1d(x: Any) -> tuple[Any, Any, Any]:
    """(values padded to len(x), index of each first occurrence, number of unique values)."""
    vals, index, count = _unique(
        x, 0, True, False, False, True, util.aval(x).shape[0], None, return_count=True
    )
    return vals, index, count


def _valid(n: int, count: Any) -> Any:
    return lax.lt(_iota(n), count)


def _min_or_zero(vals: Any, count: Any) -> Any:
    """The fill JAX uses by default: the first (smallest) result, or 0 when there is none."""
    dt = util.aval(vals).dtype
    first = _first(vals, 1) if util.aval(vals).shape[0] else lax.full((1,), 0, dt)
    first = lax.reshape(first, ())
    return lax.select(lax.gt(count, lax.full((), 0, dtypes.int32)), first, lax.full((), 0, dt))


def setdiff1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    util.check_arraylike("setdiff1d", ar1, ar2)
    a1, a2 = ravel(util.ensure_array(ar1)), ravel(util.ensure_array(ar2))
    size = _size_arg(size, "setdiff1d")
    if size is None:
        _need_concrete(a1, "setdiff1d")
    av = util.aval(a1)
    fill = 0 if fill_value is None else fill_value
    n1 = av.shape[0]
    if n1 == 0:
        return lax.full((size or 0,), fill, av.dtype)
    if assume_unique:
        u, count = a1, lax.full((), n1, dtypes.int32)
    else:
        u, _, count = _unique_1d(a1)
    mask = lax.bitwise_and(_valid(n1, count), isin(u, a2, invert=True))
    k = _count(mask)
    if size is None:
        size = _static_count(k, "setdiff1d")
    vals = _gather(u, nonzero(mask, size=size)[0])
    return _select_rows(_valid(size, k), vals, fill)


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    util.check_arraylike("union1d", ar1, ar2)
    a1, a2 = util.ensure_array(ar1), util.ensure_array(ar2)
    size = _size_arg(size, "union1d")
    if size is None:
        _need_concrete(a1, "union1d")
        _need_concrete(a2, "union1d")
    return unique(concatenate((a1, a2), axis=None), size=size, fill_value=fill_value)


def _both_unique(name: str, ar1: Any, ar2: Any, size: Any) -> tuple[Any, Any, int | None]:
    a1, a2 = (ravel(util.ensure_array(a)) for a in (ar1, ar2))
    a1, a2 = util.promote_dtypes(a1, a2)
    size = _size_arg(size, name)
    if size is None:
        _need_concrete(a1, name)
        _need_concrete(a2, name)
    return a1, a2, size


def setxor1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    util.check_arraylike("setxor1d", ar1, ar2)
    a1, a2, size = _both_unique("setxor1d", ar1, ar2, size)
    n1, n2 = util.aval(a1).shape[0], util.aval(a2).shape[0]
    u1, _, c1 = _unique_1d(a1)
    u2, _, c2 = _unique_1d(a2)
    v1, v2 = _valid(n1, c1), _valid(n2, c2)
    # valid values of one array that are absent from the valid values of the other
    in2 = lax.reduce_or(
        lax.bitwise_and(_pairs_equal(u1, u2), lax.broadcast_in_dim(v2, (n1, n2), (1,))), (1,)
    )
    in1 = lax.reduce_or(
        lax.bitwise_and(_pairs_equal(u2, u1), lax.broadcast_in_dim(v1, (n2, n1), (1,))), (1,)
    )
    mask = lax.concatenate(
        [lax.bitwise_and(v1, lax.bitwise_not(in2)), lax.bitwise_and(v2, lax.bitwise_not(in1))], 0
    )
    cand = lax.concatenate([u1, u2], 0)
    k = _count(mask)
    if size is None:
        size = _static_count(k, "setxor1d")
    dt = util.aval(cand).dtype
    if n1 + n2 == 0:
        return lax.full((size,), 0 if fill_value is None else fill_value, dt)
    # the selected values first, in sorted order
    _, ordered = sorting.sort(
        (lax.convert_element_type(lax.bitwise_not(mask), dtypes.int32), cand), 0, True, 2
    )
    vals = _first(ordered, size)
    fill = _min_or_zero(ordered, k) if fill_value is None else fill_value
    return _select_rows(_valid(size, k), vals, fill)


def intersect1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    return_indices: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    util.check_arraylike("intersect1d", ar1, ar2)
    a1, a2, size = _both_unique("intersect1d", ar1, ar2, size)
    n1, n2 = util.aval(a1).shape[0], util.aval(a2).shape[0]
    dt = util.aval(a1).dtype
    dint = dtypes.default_int()
    if n1 == 0 or n2 == 0:
        n = size or 0
        vals = lax.full((n,), 0 if fill_value is None else fill_value, dt)
        if not return_indices:
            return vals
        return vals, lax.full((n,), n1, dint), lax.full((n,), n2, dint)
    u1, i1, c1 = _unique_1d(a1)
    u2, i2, c2 = _unique_1d(a2)
    v1, v2 = _valid(n1, c1), _valid(n2, c2)
    big = (n1, n2)
    eq = lax.bitwise_and(
        _pairs_equal(u1, u2),
        lax.bitwise_and(lax.broadcast_in_dim(v1, big, (0,)), lax.broadcast_in_dim(v2, big, (1,))),
    )
    mask = lax.reduce_or(eq, (1,))
    k = _count(mask)
    if size is None:
        size = _static_count(k, "intersect1d")
    sel = nonzero(mask, size=size)[0]
    valid = _valid(size, k)
    vals = _gather(u1, sel)
    fill = _min_or_zero(vals, k) if fill_value is None else fill_value
    vals = _select_rows(valid, vals, fill)
    if not return_indices:
        return vals
    # where each selected value sits in u2 (at most one match: u2 is unique)
    pos2 = lax.reduce_sum(
        lax.select(eq, lax.broadcasted_iota(dtypes.int32, big, 1), lax.full(big, 0, dtypes.int32)),
        (1,),
    )
    idx1 = _select_rows(valid, _gather(i1, sel), n1)
    idx2 = _select_rows(valid, _gather(i2, _gather(pos2, sel)), n2)
    return vals, idx1, idx2
