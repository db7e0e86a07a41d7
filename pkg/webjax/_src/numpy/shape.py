"""Shape manipulation: reshape, transpose, axes moves, flips and rolls, stacking and splitting,
tiling and repeating, broadcasting. All views or copies built from lax slice/concatenate/
reshape/transpose/broadcast_in_dim, so they differentiate and batch for free."""

from __future__ import annotations

import builtins
import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

from .. import core, dtypes
from ..lax import lax, slicing, windowed
from . import extended_dtypes, util
from .ufuncs import not_equal, subtract


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


@extended_dtypes.moves_elements
def reshape(
    a: Any,
    shape: Any = None,
    order: str = "C",
    *,
    newshape: Any = None,
    copy: Any = None,
    out_sharding: Any = None,
) -> Any:
    """`a` in a new shape, its elements read and written in row-major ("C") or column-major
    ("F") order. `out_sharding` names the result's layout; on one device the values are the
    same."""
    util.check_arraylike("reshape", a)
    if shape is None:
        shape = newshape
    a = util.ensure_array(a)
    av = util.aval(a)
    dims = _resolve_shape(shape, av.size)
    if order == "C":
        return lax.reshape(a, dims)
    if order == "F":  # the reversed axes' row-major order is the column-major one
        return lax.transpose(
            lax.reshape(a, dims[::-1], tuple(range(av.ndim))[::-1]), tuple(range(len(dims)))[::-1]
        )
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


@extended_dtypes.moves_elements
def ravel(a: Any, order: str = "C") -> Any:
    util.check_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (-1,), order)


@extended_dtypes.moves_elements
def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    util.check_arraylike("transpose", a)
    a = util.ensure_array(a)
    nd = util.aval(a).ndim
    perm = (
        tuple(range(nd))[::-1] if axes is None else tuple(util.canonical_axis(x, nd) for x in axes)
    )
    if len(perm) != nd or sorted(perm) != list(range(nd)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got permutation "
            f"{perm} for operand shape {util.aval(a).shape}."
        )
    return lax.transpose(a, perm)


def matrix_transpose(x: Any, /) -> Any:
    util.check_arraylike("matrix_transpose", x)
    x = util.ensure_array(x)
    nd = util.aval(x).ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got {nd=}")
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


@extended_dtypes.moves_elements
def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    a = util.ensure_array(a)
    nd = util.aval(a).ndim
    perm = list(range(nd))
    i, j = util.canonical_axis(axis1, nd), util.canonical_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


@extended_dtypes.moves_elements
def squeeze(a: Any, axis: Any = None) -> Any:
    util.check_arraylike("squeeze", a)
    a = util.ensure_array(a)
    av = util.aval(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(av.shape) if d == 1)
    else:
        axes = util.canonical_axes(axis, av.ndim)
    return lax.squeeze(a, axes)


@extended_dtypes.moves_elements
def expand_dims(a: Any, axis: Any) -> Any:
    util.check_arraylike("expand_dims", a)
    a = util.ensure_array(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = util.aval(a).ndim + len(axes)
    canonical = [util.canonical_axis(x, nd) for x in axes]
    if len(set(canonical)) != len(canonical):  # (2, -3) of a rank-5 result are one axis
        raise ValueError(f"repeated axis in lax.expand_dims: {canonical}")
    return lax.expand_dims(a, canonical)


@extended_dtypes.moves_elements
def broadcast_to(a: Any, shape: Any) -> Any:
    util.check_arraylike("broadcast_to", a)
    return util.broadcast_to(a, core.canonicalize_shape(shape))


def _atleast(arys: tuple[Any, ...], fix: Any) -> Any:
    out = [fix(util.ensure_array(a), util.aval(util.ensure_array(a)).shape) for a in arys]
    return out[0] if len(out) == 1 else out


@extended_dtypes.moves_elements
def atleast_1d(*arys: Any) -> Any:
    util.check_arraylike("atleast_1d", *arys)
    return _atleast(arys, lambda a, s: a if len(s) >= 1 else lax.reshape(a, (1,)))


@extended_dtypes.moves_elements
def atleast_2d(*arys: Any) -> Any:
    util.check_arraylike("atleast_2d", *arys)
    return _atleast(
        arys, lambda a, s: a if len(s) >= 2 else lax.reshape(a, (1,) * (2 - len(s)) + s)
    )


@extended_dtypes.moves_elements
def atleast_3d(*arys: Any) -> Any:
    util.check_arraylike("atleast_3d", *arys)

    def fix(a: Any, s: tuple[int, ...]) -> Any:
        if len(s) >= 3:
            return a
        return lax.reshape(a, {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)])

    return _atleast(arys, fix)


@extended_dtypes.moves_elements
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


@extended_dtypes.moves_elements
def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    util.check_arraylike("concatenate", *arrays)
    arrays = util.promote_dtypes(*[util.ensure_array(a) for a in arrays])
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    nd = util.aval(arrays[0]).ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    return lax.concatenate(arrays, util.canonical_axis(axis, nd))


def permute_dims(a: Any, /, axes: tuple[int, ...]) -> Any:
    util.check_arraylike("permute_dims", a)
    return transpose(a, axes)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    util.check_arraylike("concat", *arrays)
    return concatenate(arrays, axis)


@extended_dtypes.moves_elements
def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    util.check_arraylike("moveaxis", a)
    a = util.ensure_array(a)
    nd = util.aval(a).ndim
    src = util.canonical_axes(source if isinstance(source, (tuple, list)) else [source], nd)
    dst = util.canonical_axes(
        destination if isinstance(destination, (tuple, list)) else [destination], nd
    )
    if len(src) != len(dst):
        raise ValueError(
            "Inconsistent number of elements: {} vs {}".format(len(src), len(dst))  # noqa: UP032
        )
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax.transpose(a, perm)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    util.check_arraylike("rollaxis", a)
    nd = util.aval(util.ensure_array(a)).ndim
    axis = util.canonical_axis(axis, nd)
    start = start + nd if start < 0 else start
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


@extended_dtypes.moves_elements
def flip(m: Any, axis: Any = None) -> Any:
    util.check_arraylike("flip", m)
    m = util.ensure_array(m)
    ndim = util.aval(m).ndim
    if isinstance(axis, (tuple, list)):  # each normalized; a repeat is lax.rev's TypeError
        dims = tuple(util.canonical_axis(a, ndim) for a in axis)
        if len(set(dims)) != len(dims):
            raise TypeError(f"rev dimensions must be unique, got {dims}.")
        return lax.rev(m, dims)
    return lax.rev(m, util.canonical_axes(axis, ndim))


def fliplr(m: Any) -> Any:
    util.check_arraylike("fliplr", m)
    if util.aval(util.ensure_array(m)).ndim < 2:
        raise ValueError("fliplr requires an array of at least 2 dimensions")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    util.check_arraylike("flipud", m)
    if util.aval(util.ensure_array(m)).ndim < 1:
        raise ValueError("flipud requires an array of at least 1 dimension")
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    util.check_arraylike("rot90", m)
    m = util.ensure_array(m)
    ax1, ax2 = util.canonical_axes(axes, util.aval(m).ndim)
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (ax1, ax2))
    perm = list(range(util.aval(m).ndim))
    perm[ax1], perm[ax2] = ax2, ax1
    if k == 1:
        return lax.transpose(flip(m, ax2), perm)
    return flip(lax.transpose(m, perm), ax2)


def _roll_static(a: Any, shift: int, axis: int) -> Any:
    n = util.aval(a).shape[axis]
    if n == 0:
        return a
    shift %= n
    if shift == 0:
        return a
    return lax.concatenate(
        [_take_range(a, axis, n - shift, n), _take_range(a, axis, 0, n - shift)], axis
    )


def _take_range(a: Any, axis: int, start: int, stop: int) -> Any:
    shape = util.aval(a).shape
    lo, hi = [0] * len(shape), list(shape)
    lo[axis], hi[axis] = start, stop
    return lax.slice(a, lo, hi)


def _roll_dynamic(a: Any, shift: Any, axis: int) -> Any:
    # rolled[i] = a[(i - shift) mod n]: a dynamic slice of the array concatenated with itself
    n = util.aval(a).shape[axis]
    if n == 0:
        return a
    s = lax.convert_element_type(util.ensure_array(shift), dtypes.int32)
    nn = lax.full((), n, dtypes.int32)
    start = lax.rem(lax.sub(nn, lax.rem(s, nn)), nn)
    start = lax.select(
        lax.lt(start, lax.full((), 0, dtypes.int32)),
        lax.add(start, lax.full((), n, dtypes.int32)),
        start,
    )
    doubled = lax.concatenate([a, a], axis)
    starts: list[Any] = [0] * util.aval(a).ndim
    starts[axis] = start
    return lax.dynamic_slice(doubled, starts, util.aval(a).shape)


@extended_dtypes.moves_elements
def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    util.check_arraylike("roll", a)
    a = util.ensure_array(a)
    if axis is None:
        return lax.reshape(roll(ravel(a), shift, 0), util.aval(a).shape)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        shifts = tuple(shifts) * len(axes) if len(shifts) == 1 else shifts
    if len(shifts) != len(axes):
        raise ValueError("Inconsistent shape between shift and axis")
    for s, ax in zip(shifts, axes):
        ax = util.canonical_axis(ax, util.aval(a).ndim)
        if isinstance(s, int) or (not isinstance(s, core.Tracer) and hasattr(s, "__index__")):
            a = _roll_static(a, operator.index(s), ax)
        else:
            a = _roll_dynamic(a, s, ax)
    return a


@extended_dtypes.moves_elements
def tile(A: Any, reps: Any) -> Any:
    util.check_arraylike("tile", A)
    A = util.ensure_array(A)
    reps = (reps,) if isinstance(reps, int) or hasattr(reps, "__index__") else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    shape = util.aval(A).shape
    nd = builtins.max(len(shape), len(reps))
    shape = (1,) * (nd - len(shape)) + shape
    reps = (1,) * (nd - len(reps)) + reps
    A = lax.reshape(A, shape)
    # broadcast each axis d to (r, d), then merge: the tiled copies are contiguous blocks
    big = tuple(x for r, d in zip(reps, shape) for x in (r, d))
    out = lax.broadcast_in_dim(A, big, tuple(range(1, 2 * nd, 2)))
    return lax.reshape(out, tuple(r * d for r, d in zip(reps, shape)))


@extended_dtypes.moves_elements
def repeat(a: Any, repeats: Any, axis: Any = None, *, total_repeat_length: Any = None) -> Any:
    util.check_arraylike("repeat", a)
    a = util.ensure_array(a)
    if isinstance(repeats, (list, tuple)):
        raise TypeError(
            f"repeat requires ndarray or scalar arguments, got {type(repeats)} at position 1."
        )
    if axis is None or not util.aval(a).shape:  # (a 0-d array is repeated as 1-d, any axis)
        a, axis = ravel(a), 0
    ax = util.canonical_axis(axis, util.aval(a).ndim)
    shape = util.aval(a).shape
    if total_repeat_length is not None:
        return _repeat_to_length(a, repeats, ax, operator.index(total_repeat_length))
    if not isinstance(repeats, int):
        repeats = util.concrete_array(
            repeats,
            "The error occurred because of argument 'repeats' of jnp.repeat. To avoid this "
            "error, pass a static `total_repeat_length`.",
        )
        if util.aval(repeats).dtype.kind not in "iub":
            raise TypeError(f"jnp.repeat: repeats must be integers, got {util.aval(repeats).dtype}")
    reps = _host_ints(repeats)
    if any(r < 0 for r in reps):
        raise TypeError(f"jnp.repeat: repeats must be non-negative, got {reps}")
    if len(reps) == 1:
        out = _repeat_one(a, reps[0], ax)
    else:
        if len(reps) != shape[ax]:
            raise ValueError(
                f"repeats shape {(len(reps),)} does not match the dimension "
                f"{shape[ax]} of axis {ax}"
            )
        parts = [_repeat_one(_take_range(a, ax, i, i + 1), r, ax) for i, r in enumerate(reps) if r]
        if not parts:
            return lax.full(shape[:ax] + (0,) + shape[ax + 1 :], 0, util.aval(a).dtype)
        out = lax.concatenate(parts, ax)
    return out


def _repeat_to_length(a: Any, repeats: Any, ax: int, length: int) -> Any:
    """repeat with a static result length (repeats may be traced): output j reads source
    element idx[j] = (number of blocks starting at or before j) - 1, where block i starts at
    the sum of the repeats before it (starts index as `.at[]` does: negative ones from the end,
    others past the end dropped). Past the repeats' total the last element repeats; short of
    it the result is cut."""
    n = util.aval(a).shape[ax]
    reps = util.ensure_array(repeats)
    if util.aval(reps).dtype.kind not in "iub":
        raise TypeError(f"jnp.repeat: repeats must be integers, got {util.aval(reps).dtype}")
    reps = lax.convert_element_type(reps, dtypes.int32)
    if util.aval(reps).shape not in ((), (1,), (n,)):
        raise ValueError(
            f"Incompatible types for broadcasting: input type=int32{list(util.aval(reps).shape)}"
            f" and requested type=int32[{n}]"
        )
    reps = util.broadcast_to(lax.reshape(reps, (util.aval(reps).size,)), (n,))
    if length == 0 or n == 0:
        out_shape = list(util.aval(a).shape)
        out_shape[ax] = length
        if n == 0 and length:
            raise ValueError(f"jnp.repeat: cannot repeat an empty axis to length {length}")
        return lax.full(tuple(out_shape), 0, util.aval(a).dtype)
    inclusive = windowed.cumsum(reps, 0)
    starts = lax.sub(inclusive, reps)
    starts = lax.select(
        lax.lt(starts, lax.full((n,), 0, dtypes.int32)),
        lax.add(starts, lax.full((n,), length, dtypes.int32)),
        starts,
    )
    dn = slicing.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    ones = lax.full((n,), 1, dtypes.int32)
    counts = slicing.scatter_add(
        lax.full((length,), 0, dtypes.int32), lax.reshape(starts, (n, 1)), ones, dn, mode="drop"
    )
    idx = lax.sub(windowed.cumsum(counts, 0), lax.full((length,), 1, dtypes.int32))
    taken = slicing.index_take(a, [idx], (ax,))  # the taken axis first
    return moveaxis(taken, 0, ax)


def _repeat_one(a: Any, r: int, ax: int) -> Any:
    shape = util.aval(a).shape
    big = shape[: ax + 1] + (r,) + shape[ax + 1 :]
    dims = tuple(i for i in range(len(shape) + 1) if i != ax + 1)
    out = lax.broadcast_in_dim(a, big, dims)
    return lax.reshape(out, shape[:ax] + (shape[ax] * r,) + shape[ax + 1 :])


def _host_ints(v: Any) -> list[int]:
    if isinstance(v, int):
        return [v]
    if isinstance(v, (list, tuple)):
        return [operator.index(x) for x in v]
    val = core.to_concrete(v)
    lst = val.tolist() if hasattr(val, "tolist") else val
    return [int(x) for x in lst] if isinstance(lst, list) else [int(lst)]


def _split_points(n: int, indices_or_sections: Any, exact: bool) -> list[int]:
    if isinstance(indices_or_sections, int) or (
        hasattr(indices_or_sections, "shape") and util.aval(indices_or_sections).ndim == 0
    ):
        k = operator.index(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if exact and n % k:
            raise ValueError("array split does not result in an equal division")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        return [builtins.sum(sizes[:i]) for i in range(1, k)]
    return _host_ints(indices_or_sections)


def _split(ary: Any, indices_or_sections: Any, axis: int, exact: bool) -> list[Any]:
    ary = util.ensure_array(ary)
    ax = util.canonical_axis(axis, util.aval(ary).ndim)
    n = util.aval(ary).shape[ax]
    points = _split_points(n, indices_or_sections, exact)
    # As JAX (unlike NumPy), split points are taken literally: negative ones are not counted
    # from the end, and points out of order or past the end are an error.
    bounds = [0, *points, n]
    sizes = [hi - lo for lo, hi in itertools.pairwise(bounds)]
    if builtins.any(sz < 0 for sz in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {sizes}")
    return [_take_range(ary, ax, lo, hi) for lo, hi in itertools.pairwise(bounds)]


@extended_dtypes.moves_elements
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    util.check_arraylike("split", ary)
    return _split(ary, indices_or_sections, axis, True)


@extended_dtypes.moves_elements
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    util.check_arraylike("array_split", ary)
    return _split(ary, indices_or_sections, axis, False)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    util.check_arraylike("hsplit", ary)
    nd = util.aval(util.ensure_array(ary)).ndim
    return split(ary, indices_or_sections, 1 if nd > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    util.check_arraylike("vsplit", ary)
    return split(ary, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    util.check_arraylike("dsplit", ary)
    return split(ary, indices_or_sections, 2)


@extended_dtypes.moves_elements
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    util.check_arraylike("unstack", x)
    x = util.ensure_array(x)
    ax = util.canonical_axis(axis, util.aval(x).ndim)
    return tuple(
        lax.squeeze(_take_range(x, ax, i, i + 1), (ax,)) for i in range(util.aval(x).shape[ax])
    )


@extended_dtypes.moves_elements
def hstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    arrs = atleast_1d(*tup) if len(tup) != 1 else [atleast_1d(*tup)]
    return concatenate(arrs, axis=0 if util.aval(arrs[0]).ndim == 1 else 1, dtype=dtype)


@extended_dtypes.moves_elements
def vstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    arrs = atleast_2d(*tup) if len(tup) != 1 else [atleast_2d(*tup)]
    return concatenate(arrs, axis=0, dtype=dtype)


row_stack = vstack


@extended_dtypes.moves_elements
def dstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    arrs = atleast_3d(*tup) if len(tup) != 1 else [atleast_3d(*tup)]
    return concatenate(arrs, axis=2, dtype=dtype)


@extended_dtypes.moves_elements
def column_stack(tup: Sequence[Any]) -> Any:
    arrs = []
    for a in tup:
        a = util.ensure_array(a)
        s = util.aval(a).shape
        arrs.append(lax.reshape(a, (s[0] if s else 1, 1)) if len(s) < 2 else a)
    return concatenate(arrs, axis=1)


@extended_dtypes.moves_elements
def append(arr: Any, values: Any, axis: Any = None) -> Any:
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def broadcast_arrays(*args: Any) -> list[Any]:
    util.check_arraylike("broadcast_arrays", *args)
    arrs = [util.ensure_array(a) for a in args]
    shape = util.broadcast_shapes(*(util.aval(a).shape for a in arrs))
    return [util.broadcast_to(a, shape) for a in arrs]


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Any]:
    util.check_arraylike("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    arrs = [util.ensure_array(x) for x in xi]
    for a in arrs:
        if util.aval(a).ndim != 1:
            raise ValueError(
                f"Arguments to jax.numpy.meshgrid must be 1D, got shape {util.aval(a).shape}"
            )
    n = len(arrs)
    sizes = [util.aval(a).shape[0] for a in arrs]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrs):
        dim = {0: 1, 1: 0}.get(i, i) if indexing == "xy" and n >= 2 else i
        shape = (
            tuple(sizes) if not sparse else tuple(s if j == dim else 1 for j, s in enumerate(sizes))
        )
        out.append(lax.broadcast_in_dim(a, shape, (dim,)))
    return out


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    util.check_arraylike("diff", a)
    a = util.ensure_array(a)
    n, axis = operator.index(n), operator.index(axis)  # JAX's TypeError: a non-integer n, axis
    if n == 0:  # the input itself, whatever the axis (JAX bounds-checks it only for n > 0)
        return a
    ax = util.canonical_axis(axis, util.aval(a).ndim)
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        e = util.ensure_array(extra)
        if extra is not a and util.aval(e).ndim == 0:
            s = list(util.aval(a).shape)
            s[ax] = 1
            e = util.broadcast_to(e, s)
        parts.append(e)
    if len(parts) > 1:
        a = concatenate(parts, ax)
    for _ in range(n):
        m = util.aval(a).shape[ax]
        hi = _take_range(a, ax, builtins.min(1, m), m)  # (an empty axis stays empty)
        lo = _take_range(a, ax, 0, builtins.max(m - 1, 0))
        a = not_equal(hi, lo) if util.aval(a).dtype.kind == "b" else subtract(hi, lo)
    return a


def resize(a: Any, new_shape: Any) -> Any:
    util.check_arraylike("resize", a)
    a = util.ensure_array(a)
    shape = (
        (new_shape,)
        if isinstance(new_shape, int) or hasattr(new_shape, "__index__")
        else (tuple(new_shape))
    )
    shape = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = ravel(a)
    size, new = util.aval(flat).shape[0], math.prod(shape)
    if size == 0 or new == 0:
        return lax.full(shape, 0, util.aval(a).dtype)
    reps = -(-new // size)
    out = _take_range(tile(flat, reps), 0, 0, new)
    return lax.reshape(out, shape)


def block(arrays: Any) -> Any:
    def rec(xs: Any) -> tuple[Any, int]:
        if isinstance(xs, tuple):
            raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
        if isinstance(xs, list):
            if not xs:
                raise ValueError("jax.numpy.block does not allow empty list arguments")
            parts, depths = zip(*(rec(x) for x in xs))
            if any(d != depths[0] for d in depths):
                raise ValueError("Mismatched list depths in jax.numpy.block")
            rank = builtins.max(depths[0], *(util.aval(p).ndim for p in parts))
            parts = tuple(
                lax.reshape(p, (1,) * (rank - util.aval(p).ndim) + util.aval(p).shape)
                for p in parts
            )
            return concatenate(parts, axis=-depths[0]), depths[0] + 1
        return (
            util.ensure_array(xs)
            if not util.is_scalar(xs)
            else util.convert(xs, *util.result_type(xs))
        ), 1

    return rec(arrays)[0]


# ---- bits ----------------------------------------------------------------------------------------
def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    util.check_arraylike("packbits", a)
    a = util.ensure_array(a)
    if util.aval(a).dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = lax.convert_element_type(lax.ne(a, lax.full((), 0, util.aval(a).dtype)), dtypes.uint8)
    if axis is None:
        bits, axis = ravel(bits), 0
    ax = util.canonical_axis(axis, util.aval(bits).ndim)
    bits = swapaxes(bits, ax, -1)
    shape = util.aval(bits).shape
    r = shape[-1] % 8
    if r:
        cfg = [(0, 0, 0)] * (len(shape) - 1) + [(0, 8 - r, 0)]
        bits = lax.pad(bits, lax.full((), 0, dtypes.uint8), cfg)
    shape = util.aval(bits).shape
    grouped = lax.reshape(bits, (*shape[:-1], shape[-1] // 8, 8))
    shifts = lax.iota(dtypes.uint8, 8)
    if bitorder == "big":
        shifts = lax.rev(shifts, (0,))
    gshape = util.aval(grouped).shape
    sh = lax.broadcast_in_dim(shifts, gshape, (len(gshape) - 1,))
    packed = lax.reduce_sum(lax.shift_left(grouped, sh), (len(gshape) - 1,))
    return swapaxes(packed, ax, -1)


def unpackbits(
    a: Any, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Any:
    util.check_arraylike("unpackbits", a)
    a = util.ensure_array(a)
    if util.aval(a).dtype != dtypes.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if axis is None or not util.aval(a).shape:  # (a 0-d array is repeated as 1-d, any axis)
        a, axis = ravel(a), 0
    ax = util.canonical_axis(axis, util.aval(a).ndim)
    a = swapaxes(a, ax, -1)
    shape = util.aval(a).shape
    big = (*shape, 8)
    shifts = lax.iota(dtypes.uint8, 8)
    if bitorder == "big":
        shifts = lax.rev(shifts, (0,))
    bits = lax.bitwise_and(
        lax.shift_right_logical(
            lax.broadcast_in_dim(a, big, tuple(range(len(shape)))),
            lax.broadcast_in_dim(shifts, big, (len(shape),)),
        ),
        lax.full((), 1, dtypes.uint8),
    )
    bits = lax.reshape(bits, (*shape[:-1], shape[-1] * 8))
    if count is not None:
        n = shape[-1] * 8
        if count > n:
            cfg = [(0, 0, 0)] * (len(shape) - 1) + [(0, count - n, 0)]
            bits = lax.pad(bits, lax.full((), 0, dtypes.uint8), cfg)
        else:
            bits = _take_range(bits, len(shape) - 1, 0, builtins.max(count, 0))
    return swapaxes(bits, ax, -1)
