"""NumPy indexing on lax: `x[...]` and `x.at[...]` for basic indices.

Basic indices (ints, slices with any step, None, Ellipsis) become slice/rev/reshape, which
are views (no kernel). Integer scalars that are traced become dynamic_slice. Boolean masks
need concrete values (as in JAX). Integer-array (advanced) indexing, take and take_along_axis
are one-hot gathers until a gather primitive exists (see `_one_hot_gather`).

Also the functions that compute or consume indices: nonzero, where, select, choose, compress,
place, put, unravel_index, ravel_multi_index.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

from .. import core, dtypes
from ..lax import control_flow, lax, slicing
from . import extended_dtypes, util
from .creation import asarray
from .reductions import cumsum
from .shape import moveaxis, ravel, tile
from .ufuncs import add, clip, multiply, power, remainder, true_divide
from .ufuncs import divmod as _divmod


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
    if not any(i is Ellipsis for i in idx):
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


def _scalar_bool(i: Any) -> bool:
    """A scalar boolean index: a Python or NumPy bool, or a 0-d bool array."""
    if isinstance(i, bool):
        return True
    av = _maybe_aval(i) if not isinstance(i, (list, tuple, slice)) and i is not None else None
    return av is not None and av.dtype is dtypes.bool_ and av.ndim == 0


def _lower_scalar_bools(idx: Any, ndim: int) -> tuple[Any, int | None]:
    """Scalar boolean indices, as in JAX (and NumPy): together they add one new axis, of
    length 1 when all are True and 0 otherwise. Returns the index with the first of them as
    None (the others removed) and, when the new axis is empty, its position in the result."""
    items = idx if isinstance(idx, tuple) else (idx,)
    where = [k for k, i in enumerate(items) if _scalar_bool(i)]
    if not where:
        return idx, None
    values = []
    for k in where:
        v = items[k] if isinstance(items[k], bool) else core.to_concrete(items[k])
        if v is None or isinstance(v, core.Tracer):
            raise core.NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {util.aval(items[k]).str_short(True)}"
            )
        values.append(bool(v))
    rest = [i for k, i in enumerate(items) if k not in where]
    if any(_is_advanced(i) for i in rest):  # a 0-d mask broadcast against index arrays
        if not all(values):
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together")
        return tuple(rest), None
    first = where[0]
    out = tuple(
        None if k == first else i for k, i in enumerate(items) if k == first or k not in where
    )
    if all(values):
        return out, None
    # the position of the new axis among the result's axes
    n_real = sum(1 for i in out if i is not None and i is not Ellipsis)
    pos = 0
    for i in out[:first]:
        if i is Ellipsis:
            pos += ndim - n_real
        elif i is None or isinstance(i, slice):
            pos += 1
    return out, pos


def getitem(x: Any, idx: Any) -> Any:
    x = util.ensure_array(x)
    idx, empty_axis = _lower_scalar_bools(idx, util.aval(x).ndim)
    if empty_axis is not None:
        return util.slice_axis(getitem(x, idx), empty_axis, 0, 0)
    idx = _lower_bool_masks(idx, util.aval(x).shape)
    if _has_advanced(idx):
        return _advanced_getitem(x, idx)
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
            if d == 0:
                raise IndexError(f"index {s} is out of bounds for axis {axis} with size 0")
            s = min(max(s + d if s < 0 else s, 0), d - 1)  # out of bounds clamps, as in JAX
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


def _lower_bool_masks(idx: Any, shape: tuple[int, ...]) -> Any:
    """Replace each boolean mask in `idx` by the integer arrays of its nonzero positions (one per
    mask dimension), which index the same elements. Masks need concrete values, as in JAX."""
    if not _has_bool_mask(idx):
        return idx
    items = idx if isinstance(idx, tuple) else (idx,)
    _expand(items, len(shape))  # JAX's "too many indices" check, counting masks by their ndim

    def dims(i: Any) -> int:
        return _mask_ndim(i) if _is_bool_mask(i) else int(i is not None and i is not Ellipsis)

    out: list[Any] = []
    axis = 0  # the axis of x the next index applies to
    for pos, i in enumerate(items):
        if i is Ellipsis:
            axis = len(shape) - sum(dims(j) for j in items[pos + 1 :])
        if not _is_bool_mask(i):
            out.append(i)
            axis += dims(i)
            continue
        mval = core.to_concrete(i) if not isinstance(i, list) else i
        if mval is None or isinstance(mval, core.Tracer):
            raise core.NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {util.aval(i).str_short(True)}. Use "
                "jnp.where(mask, x, fill) or the size= argument of jnp.nonzero instead."
            )
        mask = asarray(mval)
        mshape = util.aval(mask).shape
        if shape[axis : axis + len(mshape)] != mshape:
            raise IndexError(
                f"boolean index did not match shape of indexed array in index "
                f"{axis}: got {mshape}, expected "
                f"{shape[axis : axis + len(mshape)]}"
            )
        axis += len(mshape)
        flat = _flatten_list(mask.tolist())
        hits = [k for k, m in enumerate(flat) if m]
        coords: list[list[int]] = [[] for _ in mshape]
        for k in hits:
            for ax in range(len(mshape) - 1, -1, -1):
                k, c = divmod(k, mshape[ax])
                coords[ax].append(c)
        out.extend(asarray(c, dtype=dtypes.int32) for c in coords)
    return tuple(out)


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
        _check_not_list(idx)
        return _IndexUpdateRef(self.array, idx)


def _check_not_list(idx: Any) -> None:
    """JAX rejects a bare list as a whole index (`x[[0, 1]]`), as ambiguous with a tuple."""
    if isinstance(idx, list):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/"
            "4564 for more information."
        )


class _IndexUpdateRef:
    """`x.at[idx]`: the keyword arguments indices_are_sorted, unique_indices and
    wrap_negative_indices=True (the only behaviour) are accepted as performance hints."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def get(self, *, mode: Any = None, fill_value: Any = None, **_: Any) -> Any:
        x = util.ensure_array(self.array)
        _check_mode(mode)
        shape, dt = util.aval(x).shape, util.aval(x).dtype
        idx = _lower_bool_masks(self.index, shape)
        if mode in (None, "clip", "promise_in_bounds") or not _has_int_index(idx, len(shape)):
            return getitem(x, idx)  # clamps, as JAX's default does
        pos = _flat_positions(shape, idx, drop=True)
        flat = lax.reshape(x, (math.prod(shape),))
        got = _one_hot_gather(flat, lax.max(pos, lax.full((), 0, dtypes.int32)), 0)
        fill = _default_fill(dt) if fill_value is None else fill_value
        out = lax.select(
            lax.lt(pos, lax.full((), 0, dtypes.int32)),
            lax.full(util.aval(pos).shape, fill, dt),
            got,
        )
        return util.with_weak_type_of(out, x)

    def set(self, values: Any, *, mode: Any = None, **_: Any) -> Any:
        return _update(self.array, self.index, values, lambda old, new: new, "set", mode)

    def add(self, values: Any, *, mode: Any = None, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.add, "add", mode)

    def subtract(self, values: Any, *, mode: Any = None, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.sub, "subtract", mode)

    def multiply(self, values: Any, *, mode: Any = None, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.mul, "multiply", mode)

    mul = multiply

    def divide(self, values: Any, *, mode: Any = None, **_: Any) -> Any:
        """x / (ones with the values multiplied in at idx): a true division, as in JAX."""
        return true_divide(self.array, self._ones_times(values, mode))

    def power(self, values: Any, *, mode: Any = None, **_: Any) -> Any:
        """x ** (ones with the values multiplied in at idx), as in JAX."""
        return power(self.array, self._ones_times(values, mode))

    def _ones_times(self, values: Any, mode: Any) -> Any:
        x = util.ensure_array(self.array)
        av = util.aval(x)
        if av.dtype.kind == "b":
            raise TypeError(
                "mul does not accept dtype bool at position 0. Accepted dtypes at position 0 "
                "are subtypes of integer, floating, complexfloating."
            )
        ones = lax.full(av.shape, 1, av.dtype, weak_type=av.weak_type)
        return _update(ones, self.index, values, lax.mul, "multiply", mode)

    def min(self, values: Any, *, mode: Any = None, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.min, "min", mode)

    def max(self, values: Any, *, mode: Any = None, **_: Any) -> Any:
        return _update(self.array, self.index, values, lax.max, "max", mode)

    def apply(self, func: Any, *, mode: Any = None, **_: Any) -> Any:
        """func applied at the indexed elements, once per occurrence of an index (func is
        elementwise, a unary ufunc)."""
        x = util.ensure_array(self.array)
        av = util.aval(x)
        counts = _update(lax.full(av.shape, 0, dtypes.int32), self.index, 1, lax.add, "add", mode)
        if not _has_advanced(_lower_bool_masks(self.index, av.shape)):  # each element once
            fx = lax.convert_element_type(func(x), av.dtype, av.weak_type)
            return lax.select(lax.gt(counts, lax.full((), 0, dtypes.int32)), fx, x)
        # apply func as many times as the most repeated index, each element its own count
        limit = lax.reduce_max(counts, tuple(range(av.ndim))) if av.ndim else counts

        def body(carry: Any) -> Any:
            k, y = carry
            fy = lax.convert_element_type(func(y), av.dtype, av.weak_type)
            return lax.add(k, lax.full((), 1, dtypes.int32)), lax.select(lax.lt(k, counts), fy, y)

        def cond(carry: Any) -> Any:
            return lax.lt(carry[0], limit)

        return control_flow.while_loop(cond, body, (lax.full((), 0, dtypes.int32), x))[1]


def _has_int_index(idx: Any, ndim: int) -> bool:
    """Whether any entry of `idx` is an integer (scalar or array), i.e. can be out of bounds."""
    return any(
        _is_advanced(i) or _is_int_scalar(i)
        for i in _expand(idx, ndim)
        if i is not None and not isinstance(i, slice)
    )


def _is_basic(idx: Any, ndim: int) -> bool:
    """Ints, unit-step slices, None and Ellipsis: the indexed block is contiguous per axis."""
    if _has_advanced(idx) or _has_bool_mask(idx):
        return False
    return not any(isinstance(i, slice) and i.step not in (None, 1) for i in _expand(idx, ndim))


_MODES = ("clip", "drop", "fill", "promise_in_bounds")


def _check_mode(mode: Any) -> None:
    if mode not in (None, *_MODES):
        raise ValueError(f"Invalid mode value: {mode!r}; expected one of {_MODES}")


def _flat_positions(shape: tuple[int, ...], idx: Any, drop: bool) -> Any:
    """The flat position of every element `idx` selects (indexing an iota the same way). With
    `drop`, integer indices out of bounds (after wrapping negatives) give -1: the iota is
    bordered by -1 on each axis an integer index addresses and indices are shifted onto it."""
    iota = lax.reshape(lax.iota(dtypes.int32, math.prod(shape)), shape)
    idx = _lower_bool_masks(idx, shape)
    if not drop or not _has_int_index(idx, len(shape)):
        return getitem(iota, idx)
    entries = _expand(idx, len(shape))
    padding = [(0, 0, 0)] * len(shape)
    shifted: list[Any] = []
    axis = 0
    for i in entries:
        if i is None or isinstance(i, slice):
            shifted.append(i)
            axis += i is not None
            continue
        d = shape[axis]
        iv = _normalize(_as_index_array(i), d)
        lo, hi = lax.full((), 0, dtypes.int32), lax.full((), d + 1, dtypes.int32)
        shifted.append(lax.clamp(lo, lax.add(iv, lax.full((), 1, dtypes.int32)), hi))
        padding[axis] = (1, 1, 0)
        axis += 1
    bordered = lax.pad(iota, lax.full((), -1, dtypes.int32), padding)
    return getitem(bordered, tuple(shifted))


def _scatter_update(x: Any, idx: Any, values: Any, kind: str, mode: Any = None) -> Any:
    """Any index: find the flat position of every indexed element, then scatter the values
    into the flattened array. JAX's default mode drops out-of-bounds updates."""
    _check_mode(mode)
    shape = util.aval(x).shape
    dt = util.aval(x).dtype
    size = math.prod(shape)
    drop = mode in (None, "drop", "fill")
    positions = _flat_positions(shape, idx, drop)
    pshape = util.aval(positions).shape
    values = lax.convert_element_type(util.ensure_array(values), dt)
    values = util.broadcast_to(values, pshape)
    n = math.prod(pshape)
    flat_pos = lax.reshape(positions, (n, 1))
    flat_vals = lax.reshape(values, (n,))
    if kind == "subtract":
        flat_vals, kind = lax.neg(flat_vals), "add"
    if kind == "divide":
        flat_vals, kind = lax.div(lax.full((), 1, dt), flat_vals), "multiply"
    fns = {"set": slicing.scatter, "add": slicing.scatter_add, "multiply": slicing.scatter_mul,
           "min": slicing.scatter_min, "max": slicing.scatter_max}  # fmt: skip
    if kind not in fns:
        raise NotImplementedError(f"x.at[...].{kind}() with advanced indices is not supported")
    dn = slicing.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    scatter_mode = "drop" if drop else "clip"
    out = fns[kind](lax.reshape(x, (size,)), flat_pos, flat_vals, dn, mode=scatter_mode)
    return lax.reshape(out, shape)


def _update(x: Any, idx: Any, values: Any, combine: Any, kind: str, mode: Any = None) -> Any:
    """Basic-index updates as a dynamic_update_slice of the (contiguous) indexed block;
    anything else as a scatter. Out-of-bounds integer indices drop the update (JAX's default,
    also for mode='drop' or 'fill') or clamp (mode='clip')."""
    x = util.ensure_array(x)
    _check_mode(mode)
    shape = util.aval(x).shape
    dt = util.aval(x).dtype
    arith = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "power": "pow"}
    if dt.kind == "b" and kind in arith:
        raise TypeError(
            f"{arith[kind]} does not accept dtype bool at position 0. Accepted dtypes at "
            "position 0 are subtypes of integer, floating, complexfloating."
        )
    values = _scatter_values(values, x)
    idx, empty_axis = _lower_scalar_bools(idx, len(shape))
    if empty_axis is not None:  # a False scalar index selects nothing
        return x
    idx = _lower_bool_masks(idx, shape)
    if not _is_basic(idx, len(shape)):
        return _scatter_update(x, idx, values, kind, mode)
    drop = mode in (None, "drop", "fill")
    entries = [i for i in _expand(idx, len(shape)) if i is not None]
    starts: list[Any] = []
    sizes: list[int] = []
    in_bounds: list[Any] = []  # traced indices that may be out of bounds (with drop)
    for axis, i in enumerate(entries):
        d = shape[axis]
        _check_advanced(i)
        if isinstance(i, slice):
            start, stop, _ = slice(
                *(None if p is None else _static_int(p) for p in (i.start, i.stop, i.step))
            ).indices(d)
            starts.append(start)
            sizes.append(max(stop - start, 0))
            continue
        s = _static_int(i)
        if s is not None:
            s = s + d if s < 0 else s
            if not 0 <= s < d:
                if drop or mode == "promise_in_bounds" or d == 0:
                    return x
                s = min(max(s, 0), d - 1)
            starts.append(s)
        else:
            iv = _normalize(lax.convert_element_type(util.ensure_array(i), dtypes.int32), d)
            if drop:
                lo_ok = lax.ge(iv, lax.full((), 0, dtypes.int32))
                in_bounds.append(lax.bitwise_and(lo_ok, lax.lt(iv, lax.full((), d, dtypes.int32))))
            starts.append(iv)
        sizes.append(1)
    if 0 in sizes:
        return x
    old = lax.dynamic_slice(x, starts, sizes)
    block_shape = getitem(x, idx)
    values = util.broadcast_to(values, util.aval(block_shape).shape)
    values = lax.reshape(values, sizes)
    new = combine(old, values)
    if in_bounds:
        ok = in_bounds[0]
        for b in in_bounds[1:]:
            ok = lax.bitwise_and(ok, b)
        new = lax.select(lax.broadcast_in_dim(ok, sizes, ()), new, old)
    return lax.dynamic_update_slice(x, new, starts)


def _scatter_values(values: Any, x: Any) -> Any:
    """The update values in x's dtype, with JAX's FutureWarning when the cast is unsafe (e.g.
    float values into an integer array)."""
    import warnings

    dt = util.aval(x).dtype
    vdt = util.result_type(values)[0]
    if util.is_scalar(values) and type(values) is int and dt.kind in "iu":
        lo, hi = dtypes.iinfo_bounds(dt)
        if lo <= values <= hi:
            vdt = dt
    if vdt is not dt and util.result_type(values, dt)[0] is not dt:
        warnings.warn(
            "scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={vdt.name} to dtype={dt.name} with jax_numpy_dtype_promotion=standard. In "
            "future JAX releases this will result in an error.",
            FutureWarning,
            stacklevel=4,
        )
    values = util.convert(values, dt) if util.is_scalar(values) else values
    return lax.convert_element_type(util.ensure_array(values), dt)


# ---- gathers -----------------------------------------------------------------------------------
def _one_hot_gather(x: Any, idx: Any, axis: int) -> Any:
    """x[..., idx, ...] along `axis` for in-bounds int32 `idx` of any shape (a lax.gather)."""
    xs = util.aval(x).shape
    k = len(util.aval(idx).shape)
    rest = len(xs) - 1
    offset_dims = (*range(axis), *range(axis + k, rest + k))
    dn = slicing.GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=(axis,), start_index_map=(axis,)
    )
    ishape = util.aval(idx).shape
    if xs[axis] == 0 and math.prod(ishape) == 0:  # nothing taken from an empty axis
        out_shape = (*xs[:axis], *ishape, *xs[axis + 1 :])
        return util.with_weak_type_of(lax.full(out_shape, 0, util.aval(x).dtype), x)
    sizes = tuple(1 if d == axis else n for d, n in enumerate(xs))
    out = slicing.gather(x, lax.expand_dims(idx, (k,)), dn, sizes, mode="clip")
    return util.with_weak_type_of(out, x)


def _as_index_array(i: Any) -> Any:
    arr = asarray(i) if not (isinstance(i, core.Tracer) or hasattr(i, "_exp")) else i
    av = util.aval(arr)
    if av.dtype.kind not in "iu":
        if av.size == 0 and av.dtype.kind == "f":  # `x[[]]` is an empty integer index
            return lax.convert_element_type(arr, dtypes.int32)
        raise TypeError(
            f"Indexer must have integer or boolean type, got indexer with type {av.dtype.name}"
        )
    return lax.convert_element_type(arr, dtypes.int32)


def _normalize(idx: Any, n: int) -> Any:
    zero = lax.full((), 0, dtypes.int32)
    return lax.select(lax.lt(idx, zero), lax.add(idx, lax.full((), n, dtypes.int32)), idx)


def _clip_index(idx: Any, n: int) -> Any:
    return lax.clamp(lax.full((), 0, dtypes.int32), idx, lax.full((), max(n - 1, 0), dtypes.int32))


def _default_fill(dt: Any) -> Any:
    if dt.kind == "c":  # NaN converted to complex, as JAX: NaN + 0j
        return complex(float("nan"), 0.0)
    if dt.kind == "f":
        return float("nan")
    if dt.kind == "b":
        return True
    lo, hi = dtypes.iinfo_bounds(dt)
    return lo if dt.kind == "i" else hi


def _gather_mode(x: Any, idx: Any, axis: int, mode: Any, fill_value: Any, name: str) -> Any:
    n = util.aval(x).shape[axis]
    mode = "fill" if mode is None else mode
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{name} is not supported.")
    if mode == "wrap":
        nn = lax.full((), max(n, 1), dtypes.int32)
        return _one_hot_gather(x, _normalize(lax.rem(idx, nn), n), axis)
    if mode == "clip":  # JAX clamps the indices as given: a negative one takes element 0
        return _one_hot_gather(x, _clip_index(idx, n), axis)
    idx = _normalize(idx, n)
    if mode not in ("fill", "drop", "promise_in_bounds"):
        raise ValueError(f"Invalid mode value: {mode!r}")
    out = _one_hot_gather(x, idx, axis)
    if mode == "promise_in_bounds":
        return out
    dt = util.aval(x).dtype
    oob = lax.bitwise_or(
        lax.lt(idx, lax.full((), 0, dtypes.int32)), lax.ge(idx, lax.full((), n, dtypes.int32))
    )
    ishape = util.aval(idx).shape
    out_shape = util.aval(out).shape
    oob = lax.broadcast_in_dim(oob, out_shape, tuple(range(axis, axis + len(ishape))))
    fill = _default_fill(dt) if fill_value is None else fill_value
    return util.with_weak_type_of(lax.select(oob, lax.full(out_shape, fill, dt), out), x)


@extended_dtypes.moves_elements
def take(
    a: Any,
    indices: Any,
    axis: Any = None,
    out: None = None,
    mode: Any = None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value: Any = None,
) -> Any:
    util.check_arraylike("take", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a = util.ensure_array(a)
    if axis is None:
        a, axis = lax.reshape(a, (util.aval(a).size,)), 0
    ax = util.canonical_axis(axis, util.aval(a).ndim)
    idx = _as_index_array(indices)
    if util.aval(a).shape[ax] == 0:
        if util.aval(idx).size:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a  # JAX's answer for empty indices into an empty axis: the array as given
    return _gather_mode(a, idx, ax, mode, fill_value, "take")


def take_along_axis(
    arr: Any, indices: Any, axis: Any = -1, mode: Any = None, fill_value: Any = None
) -> Any:
    util.check_arraylike("take_along_axis", arr, indices)
    arr = util.ensure_array(arr)
    idx = _as_index_array(indices)
    if axis is None:
        arr, idx = (
            lax.reshape(arr, (util.aval(arr).size,)),
            lax.reshape(idx, (util.aval(idx).size,)),
        )
        axis = 0
    nd = util.aval(arr).ndim
    if util.aval(idx).ndim != nd:
        raise ValueError(
            "indices and arr must have the same number of dimensions; "
            f"{util.aval(idx).ndim} vs. {nd}"
        )
    ax = util.canonical_axis(axis, nd)
    sa, si = util.aval(arr).shape, util.aval(idx).shape
    other = util.broadcast_shapes(sa[:ax] + sa[ax + 1 :], si[:ax] + si[ax + 1 :])
    arr = util.broadcast_to(arr, other[:ax] + (sa[ax],) + other[ax:])
    idx = util.broadcast_to(idx, other[:ax] + (si[ax],) + other[ax:])
    # a gather: the index along `axis`, the position itself along the others (O(outputs),
    # where a one-hot over the axis was O(outputs x axis length))
    n = sa[ax]
    out_shape = util.aval(idx).shape
    mode = "fill" if mode is None else mode
    if mode not in ("fill", "drop", "clip", "promise_in_bounds"):
        raise ValueError(f'Unknown gather mode "{mode}"')
    norm = _normalize(idx, n)
    if mode == "clip":
        norm = _clip_index(norm, n)
    dt = util.aval(arr).dtype
    if n == 0 or 0 in out_shape:  # (an empty output needs no gather, nor fits one)
        out = lax.full(out_shape, False if dt.kind == "b" else 0, dt)
    else:
        iota = functools.partial(lax.broadcasted_iota, dtypes.int32, out_shape)
        where = [_clip_index(norm, n) if d == ax else iota(d) for d in range(nd)]
        out = _advanced_getitem(arr, tuple(where))
    if mode in ("fill", "drop"):
        oob = lax.bitwise_or(
            lax.lt(norm, lax.full((), 0, dtypes.int32)), lax.ge(norm, lax.full((), n, dtypes.int32))
        )
        fill = _default_fill(dt) if fill_value is None else fill_value
        out = lax.select(oob, lax.full(util.aval(out).shape, fill, dt), out)
    return util.with_weak_type_of(out, arr)


def _is_advanced(i: Any) -> bool:
    if isinstance(i, (list, tuple)):
        return True
    av = _maybe_aval(i)
    return av is not None and av.ndim > 0 and av.dtype.kind in "iu"


def _has_advanced(idx: Any) -> bool:
    items = idx if isinstance(idx, tuple) else (idx,)
    return any(_is_advanced(i) for i in items)


def _advanced_getitem(x: Any, idx: Any) -> Any:
    """Integer-array indexing with NumPy's placement rules; out-of-bounds indices clamp (JAX)."""
    if _has_bool_mask(idx):
        raise NotImplementedError("boolean masks combined with integer arrays are not supported")
    shape = util.aval(x).shape
    entries = _expand(idx, len(shape))
    # ints count as advanced indices here: they broadcast with the arrays (NumPy's rule)
    kinds = []
    for e in entries:
        if e is None:
            kinds.append("new")
        elif isinstance(e, slice):
            kinds.append("slice")
        elif _is_advanced(e) or _is_int_scalar(e):
            kinds.append("adv")
        else:
            _check_advanced(e)
            raise TypeError(f"Unsupported index type: {type(e).__name__}")
    axis = 0
    adv_axes, adv_arrays = [], []
    for e, kind in zip(entries, kinds):
        if kind == "new":
            continue
        if kind == "slice":
            x = _apply_slice(x, axis, e, util.aval(x).shape[axis])
        else:
            d = util.aval(x).shape[axis]
            adv_axes.append(axis)
            adv_arrays.append(_clip_index(_normalize(_as_index_array(e), d), d))
        axis += 1
    bshape = util.broadcast_shapes(*(util.aval(a).shape for a in adv_arrays))
    adv_arrays = [util.broadcast_to(a, bshape) for a in adv_arrays]
    xs = util.aval(x).shape
    rest_axes = [i for i in range(len(xs)) if i not in adv_axes]
    # flatten the indexed axes into one, and the index arrays into one linear index
    x = lax.transpose(x, (*adv_axes, *rest_axes))
    sizes = [xs[i] for i in adv_axes]
    x = lax.reshape(x, (math.prod(sizes), *(xs[i] for i in rest_axes)))
    linear = adv_arrays[-1]
    stride = 1
    for a, d_next in zip(reversed(adv_arrays[:-1]), reversed(sizes[1:])):
        stride *= d_next
        linear = lax.add(linear, lax.mul(a, lax.full((), stride, dtypes.int32)))
    out = _one_hot_gather(x, linear, 0)  # shape: bshape + rest
    nb = len(bshape)
    adv_pos = [k for k, kind in enumerate(kinds) if kind == "adv"]
    contiguous = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1))
    order: list[Any] = [] if contiguous else ["B"]
    for k, kind in enumerate(kinds):
        if kind == "adv":
            if contiguous and k == adv_pos[0]:
                order.append("B")
        else:
            order.append(kind)
    perm: list[int] = []
    new_axes: list[int] = []
    pos = r = 0
    for tok in order:
        if tok == "B":
            perm.extend(range(nb))
            pos += nb
        elif tok == "slice":
            perm.append(nb + r)
            r += 1
            pos += 1
        else:
            new_axes.append(pos)
            pos += 1
    out = lax.transpose(out, perm)
    return lax.expand_dims(out, new_axes) if new_axes else out


# ---- nonzero -----------------------------------------------------------------------------------
def nonzero(a: Any, *, size: Any = None, fill_value: Any = None) -> tuple[Any, ...]:
    util.check_arraylike("nonzero", a)
    a = util.ensure_array(a)
    av = util.aval(a)
    if av.ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar)"
            ".nonzero() instead."
        )
    mask = lax.ne(util.convert(a, dtypes.bool_), lax.full((), False, dtypes.bool_))
    flat = lax.reshape(mask, (av.size,))
    if size is None:
        val = core.to_concrete(flat)
        if val is None or isinstance(val, core.Tracer):
            raise core.ConcretizationTypeError(
                "The size argument of jnp.nonzero must be statically specified to use "
                "jnp.nonzero within JAX transformations."
            )
        size = sum(1 for v in val.tolist() if v)
    size = operator.index(size)
    ints = lax.convert_element_type(flat, dtypes.int32)
    # the k-th true element is the one whose running count is k + 1
    rank = lax.sub(cumsum(ints), lax.full((), 1, dtypes.int32))
    big = (size, av.size)
    hit = lax.bitwise_and(
        lax.broadcast_in_dim(flat, big, (1,)),
        lax.eq(lax.broadcast_in_dim(rank, big, (1,)), lax.broadcasted_iota(dtypes.int32, big, 0)),
    )
    pos = lax.broadcasted_iota(dtypes.int32, big, 1)
    flat_idx = lax.reduce_sum(lax.select(hit, pos, lax.full(big, 0, dtypes.int32)), (1,))
    valid = lax.reduce_or(hit, (1,))
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * av.ndim
    if len(fills) != av.ndim:
        raise ValueError(
            f"fill_value must be a scalar or a tuple of length {av.ndim}; got {fill_value}"
        )
    out = []
    stride = av.size
    for d, fv in zip(av.shape, fills):
        stride //= d if d else 1
        coord = lax.div(flat_idx, lax.full((), max(stride, 1), dtypes.int32))
        coord = lax.rem(coord, lax.full((), max(d, 1), dtypes.int32))
        fill = lax.full((size,), 0 if fv is None else fv, dtypes.int32)
        out.append(lax.convert_element_type(lax.select(valid, coord, fill), dtypes.default_int()))
    return tuple(out)


def flatnonzero(a: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    util.check_arraylike("ravel", a)
    a = util.ensure_array(a)
    return nonzero(lax.reshape(a, (util.aval(a).size,)), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    util.check_arraylike("argwhere", a)
    a = util.ensure_array(a)
    if util.aval(a).ndim == 0:
        a = lax.reshape(a, (1,))
        coords = nonzero(a, size=size, fill_value=fill_value)
        return lax.reshape(coords[0], (util.aval(coords[0]).shape[0], 0))
    coords = nonzero(a, size=size, fill_value=fill_value)
    return lax.concatenate([lax.expand_dims(c, (1,)) for c in coords], 1)


# ---- selection by conditions and indices --------------------------------------------------------
@extended_dtypes.selects_elements
def where(
    condition: Any, x: Any = None, y: Any = None, /, *, size: Any = None, fill_value: Any = None
) -> Any:
    util.check_arraylike("where", condition)
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TypeError(
            "where requires ndarray or scalar arguments, got <class 'NoneType'> at "
            f"position {1 if x is None else 2}."
        )
    if size is not None or fill_value is not None:
        raise ValueError(
            "size and fill_value arguments cannot be used in three-term where function."
        )
    return util.where(condition, x, y)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """The choice of the first true condition, elementwise (later ones are masked)."""
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})"
        )
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    choices = [c if util.is_scalar(c) else util.ensure_array(c) for c in choicelist]
    dflt = default if util.is_scalar(default) else util.ensure_array(default)
    dflt, *choices = util.promote_dtypes(dflt, *choices)
    conds = [util.convert(c, dtypes.bool_) for c in condlist]
    shape = util.broadcast_shapes(*(util.aval(x).shape for x in (dflt, *choices, *conds)))
    out = util.broadcast_to(dflt, shape)
    for cond, choice in zip(reversed(conds), reversed(choices)):
        out = where(cond, choice, out)
    return out


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    util.check_arraylike("choose", a, *choices)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = util.ensure_array(a) if not util.is_scalar(a) else util.convert(a, *util.result_type(a))
    if util.aval(a).dtype.kind not in "iu":
        raise ValueError("`a` array must be integer typed")
    if hasattr(choices, "shape") and not isinstance(choices, (list, tuple)):
        choices = [getitem(choices, i) for i in range(util.aval(choices).shape[0])]
    cs = [c if util.is_scalar(c) else util.ensure_array(c) for c in choices]
    n = len(cs)
    if mode == "raise":
        vals = util.concrete_array(
            a,
            "The error occurred because jnp.choose was jit-compiled "
            "with mode='raise'. Use mode='wrap' or mode='clip' "
            "instead.",
        )
        flat = _flatten_list(vals.tolist()) if util.aval(vals).ndim else [vals.item()]
        if any(v < 0 or v >= n for v in flat):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    cs = util.promote_dtypes(*cs)
    shape = util.broadcast_shapes(util.aval(a).shape, *(util.aval(c).shape for c in cs))
    res = util.broadcast_to(cs[0], shape)
    for k in range(1, n):
        res = where(lax.eq(a, lax.full((), k, util.aval(a).dtype)), cs[k], res)
    return res


def compress(
    condition: Any,
    a: Any,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value: Any = 0,
    out: None = None,
) -> Any:
    util.check_arraylike("compress", condition, a, fill_value)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    cond = util.convert(util.ensure_array(condition), dtypes.bool_)
    if util.aval(cond).ndim != 1:
        raise ValueError("condition must be a 1D array")
    arr = util.ensure_array(a)
    if axis is None:
        arr, axis = ravel(arr), 0
    else:
        arr = moveaxis(arr, axis, 0)
    n, m = util.aval(arr).shape[0], util.aval(cond).shape[0]
    if size is None:
        flags = util.concrete_array(
            cond, "jnp.compress of a traced condition needs a static `size` argument."
        ).tolist()
        if any(flags[n:]):
            raise ValueError("condition contains entries that are out of bounds")
        size = sum(1 for f in flags[:n] if f)
    cond = util.slice_axis(cond, 0, 0, min(n, m))
    arr = util.slice_axis(arr, 0, 0, min(n, m))
    k = util.aval(cond).shape[0]
    count = lax.reduce_sum(lax.convert_element_type(cond, dtypes.int32), (0,))
    size = util.concrete_int(size, "The size argument of jnp.compress must be static.")
    if not 0 <= size <= k:
        raise ValueError(
            "size must be positive and not greater than the size of the array "
            f"axis; got size={size} for a.shape[axis]={k}"
        )
    idx = nonzero(cond, size=size)[0] if k else lax.full((size,), 0, dtypes.int32)
    res = _one_hot_gather(arr, lax.convert_element_type(idx, dtypes.int32), 0) if k else arr
    av = util.aval(res)
    valid = lax.broadcast_in_dim(lax.lt(lax.iota(dtypes.int32, size), count), av.shape, (0,))
    fill = util.broadcast_to(util.convert(fill_value, av.dtype, av.weak_type), av.shape)
    res = lax.select(valid, res, fill)
    return moveaxis(res, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    util.check_arraylike("extreact", condition, arr, fill_value)
    return compress(
        ravel(util.ensure_array(condition)),
        ravel(util.ensure_array(arr)),
        size=size,
        fill_value=fill_value,
    )


def _tile_to(v: Any, n: int) -> Any:
    """The first n elements of v repeated (v is 1-D and non-empty)."""
    m = util.aval(v).shape[0]
    if m == n:
        return v
    return util.slice_axis(tile(v, -(-n // m)), 0, 0, n)


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    util.check_arraylike("place", arr, mask, vals)
    if inplace:
        raise ValueError(
            "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    data = util.ensure_array(arr)
    m = ravel(util.convert(util.ensure_array(mask), dtypes.bool_))
    v = ravel(
        util.ensure_array(vals)
        if not util.is_scalar(vals)
        else util.convert(vals, *util.result_type(vals))
    )
    n = util.aval(data).size
    if n != util.aval(m).shape[0]:
        raise ValueError("place: arr and mask must be the same size")
    if util.aval(v).shape[0] == 0:
        raise ValueError("Cannot place values from an empty array")
    if n == 0:
        return data
    # the k-th masked position takes vals[k % len(vals)]
    rank = lax.sub(cumsum(lax.convert_element_type(m, dtypes.int32)), lax.full((), 1, dtypes.int32))
    rank = lax.max(rank, lax.full((), 0, dtypes.int32))
    picked = _one_hot_gather(_tile_to(util.convert(v, util.aval(data).dtype), n), rank, 0)
    flat = ravel(data)
    return lax.reshape(lax.select(m, picked, flat), util.aval(data).shape)


# ---- flat <-> multi-dimensional indices ----------------------------------------------------------
def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """Coordinates of flat indices; out-of-range indices clamp to the first/last element (JAX's
    behaviour; negative indices down to -size count from the end)."""
    util.check_arraylike("unravel_index", indices)
    idx = util.ensure_array(indices) if not util.is_scalar(indices) else asarray(indices)
    if util.aval(idx).dtype.kind not in "iu":
        raise TypeError("only int indices permitted")
    try:
        dims = [operator.index(d) for d in shape]
    except TypeError:
        dims = [operator.index(shape)]
    out: list[Any] = [0] * len(dims)
    for i in reversed(range(len(dims))):
        idx, out[i] = _divmod(idx, dims[i])
    above = lax.gt(idx, lax.full((), 0, util.aval(idx).dtype))
    if util.aval(idx).dtype.kind == "u":
        below = lax.full(util.aval(idx).shape, False, dtypes.bool_)
    else:
        below = lax.lt(idx, lax.full((), -1, util.aval(idx).dtype))
    return tuple(where(above, d - 1, where(below, 0, c)) for d, c in zip(dims, out))


def ravel_multi_index(
    multi_index: Sequence[Any],
    dims: Sequence[int],
    mode: str = "raise",
    order: str = "C",
    *,
    dtype: Any = None,
) -> Any:
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(util.concrete_int(d, "in `dims` argument of ravel_multi_index().") for d in dims)
    arrs = [util.ensure_array(i) if not util.is_scalar(i) else asarray(i) for i in multi_index]
    dt = (
        util.result_type(dtypes.default_int(), *arrs)[0]
        if dtype is None
        else (dtypes.canonicalize(dtypes.dtype(dtype)))
    )
    if dt.kind not in "iu":
        raise ValueError(f"dtype={dtype!r} is not an integer type.")
    if math.prod(dims) - 1 > dtypes.iinfo_bounds(dt)[1]:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dt} not large enough to hold flattened "
            f"index for dims={dims}. Use the dtype argument to pass a suitable "
            "dtype."
        )
    for a in arrs:
        if util.aval(a).dtype.kind not in "iu":
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for a, d in zip(arrs, dims):
            vals = util.concrete_array(
                a,
                "The error occurred because ravel_multi_index was "
                "jit-compiled with mode='raise'. Use mode='wrap' or "
                "mode='clip' instead.",
            )
            flat = vals.tolist()
            flat = flat if isinstance(flat, list) else [flat]
            while flat and isinstance(flat[0], list):
                flat = [v for row in flat for v in row]
            if any(v < 0 or v >= d for v in flat):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        arrs = [clip(a, 0, d - 1) for a, d in zip(arrs, dims)]
    elif mode == "wrap":
        arrs = [remainder(a, d) for a, d in zip(arrs, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "C":
        strides = [math.prod(dims[i + 1 :]) for i in range(len(dims))]
    elif order == "F":
        strides = [math.prod(dims[:i]) for i in range(len(dims))]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    out = lax.full((), 0, dt)
    for a, s in zip(arrs, strides):
        out = add(out, multiply(util.convert(a, dt), s))
    return out


# ---- put ---------------------------------------------------------------------------------------
def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    if inplace:
        raise ValueError(
            "jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    arr = util.ensure_array(a)
    idx = ravel(_as_index_array(ind))
    vals = ravel(
        util.ensure_array(v) if not util.is_scalar(v) else util.convert(v, *util.result_type(v))
    )
    n = util.aval(arr).size
    k = util.aval(idx).shape[0]
    if n == 0 or k == 0 or util.aval(vals).shape[0] == 0:
        return arr
    vals = _tile_to(vals, k)
    if mode is None:
        # JAX clamps far out-of-range indices to the first/last element (unravel_index)
        shape = util.aval(arr).shape
        idx = ravel_multi_index(unravel_index(idx, shape), shape, mode="ignore") if shape else idx
        scatter_mode = "drop"
    elif mode == "clip":
        idx, scatter_mode = _clip_index(idx, n), "promise_in_bounds"
    elif mode == "wrap":
        idx, scatter_mode = remainder(idx, n), "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    flat = _update(ravel(arr), idx, vals, lambda old, new: new, "set", scatter_mode)
    return lax.reshape(flat, util.aval(arr).shape)


def put_along_axis(
    arr: Any,
    indices: Any,
    values: Any,
    axis: int | None,
    inplace: bool = True,
    *,
    mode: str | None = None,
) -> Any:
    if inplace:
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
            "arrays are immutable. Pass inplace=False to instead return an updated "
            "array."
        )
    a = util.ensure_array(arr)
    idx = _as_index_array(indices)
    if axis is None:
        a_flat = ravel(a)
        out = put_along_axis(a_flat, ravel(idx), values, 0, False, mode=mode)
        return lax.reshape(out, util.aval(a).shape)
    nd = util.aval(a).ndim
    if util.aval(idx).ndim != nd:
        raise ValueError(
            "indices and arr must have the same number of dimensions; "
            f"{util.aval(idx).ndim} vs. {nd}"
        )
    ax = util.canonical_axis(axis, nd)
    ishape = util.aval(idx).shape
    full_idx = []
    for d in range(nd):
        if d == ax:
            full_idx.append(idx)
        else:
            shape = tuple(ishape[d] if j == d else 1 for j in range(nd))
            full_idx.append(lax.broadcast_in_dim(lax.iota(dtypes.int32, ishape[d]), shape, (d,)))
    return _update(a, tuple(full_idx), values, lambda old, new: new, "set", mode)
