"""Index construction and index-based updates: mgrid, ogrid, r_, c_, s_, index_exp, indices,
ix_, diag_indices(_from), tril/triu_indices(_from), mask_indices, fill_diagonal.

Index sets whose size depends only on static arguments (tril_indices, diag_indices, ...) are
built on the host; everything that reads array values is traceable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..lax import lax
from . import util
from .creation import arange, array, asarray, linspace
from .indexing import _update, nonzero
from .shape import concatenate, meshgrid, ravel, stack, tile


def _static(v: Any, what: str) -> Any:
    if isinstance(v, core.Tracer):
        return util.concrete_array(v, f"The error arose for the {what}.").item()
    return v.item() if hasattr(v, "_exp") else v


def _grid_1d(s: slice, name: str) -> Any:
    start = _static(s.start, f"slice start of jnp.{name}") or 0
    stop = _static(s.stop, f"slice stop of jnp.{name}")
    step = _static(s.step, f"slice step of jnp.{name}") or 1
    if isinstance(step, complex):  # an imaginary step is a number of points, endpoint included
        return linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


class _Mgrid:
    """`jnp.mgrid[a:b:s, ...]`: dense coordinate grids stacked on a new first axis."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _grid_1d(key, "mgrid")
        grids = util.promote_dtypes(*(_grid_1d(k, "mgrid") for k in key)) if key else []
        if not grids:
            return arange(0)
        return stack(meshgrid(*grids, indexing="ij", sparse=False), 0)


class _Ogrid:
    """`jnp.ogrid[a:b:s, ...]`: open (broadcastable) coordinate grids."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _grid_1d(key, "ogrid")
        grids = util.promote_dtypes(*(_grid_1d(k, "ogrid") for k in key)) if key else []
        return meshgrid(*grids, indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
    """NumPy's `r_`/`c_`: concatenate slices (as ranges), scalars and arrays along an axis; a
    leading string directive sets 'axis,ndmin,trans1d' or asks for a row ('r') or column ('c')
    matrix."""

    axis = 0
    ndmin = 1
    trans1d = -1
    name = "r_"

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec: list[Any] = directive.split(",")
                vec = vec + params[len(vec) :] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        parts = []
        for item in items:
            if isinstance(item, slice):
                obj, item_ndim = _grid_1d(item, self.name), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                obj = array(item)
                item_ndim = util.aval(obj).ndim
            obj = array(obj, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                obj = lax.transpose(obj, order[shift:] + order[:shift])
            parts.append(obj)
        out = concatenate(tuple(parts), axis=axis)
        if matrix != -1 and util.aval(out).ndim == 1:
            out = lax.expand_dims(out, (matrix,))
        return out

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    pass


class CClass(_AxisConcat):
    axis = -1
    ndmin = 2
    trans1d = 0
    name = "c_"


r_ = RClass()
c_ = CClass()


class _IndexExpression:
    """`s_[...]` returns the index itself, `index_exp[...]` always a tuple (NumPy's)."""

    def __init__(self, maketuple: bool) -> None:
        self.maketuple = maketuple

    def __getitem__(self, item: Any) -> Any:
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(maketuple=False)
index_exp = _IndexExpression(maketuple=True)


# ---- index arrays ------------------------------------------------------------------------------
def _int_dtype(dtype: Any) -> Any:
    return dtypes.default_int() if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype))


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    dt = _int_dtype(dtype)
    dims = tuple(util.concrete_int(d, "dimensions argument of jnp.indices") for d in dimensions)
    out = []
    for i, d in enumerate(dims):
        shape = tuple(d if j == i else 1 for j in range(len(dims))) if sparse else dims
        out.append(lax.broadcast_in_dim(lax.iota(dt, d), shape, (i,)))
    if sparse:
        return tuple(out)
    return stack(out, 0) if out else lax.full((0,), 0, dt)


def ix_(*args: Any) -> tuple[Any, ...]:
    util.check_arraylike("ix", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = util.ensure_array(a) if not isinstance(a, (list, tuple)) else asarray(a)
        av = util.aval(a)
        if av.ndim != 1:
            raise ValueError(
                f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {av.shape}"
            )
        if av.dtype.kind == "b":
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = tuple(av.shape[0] if j == i else 1 for j in range(n))
        if av.size == 0:
            out.append(lax.full(shape, 0, dtypes.default_int()))
        else:
            out.append(lax.broadcast_in_dim(a, shape, (i,)))
    return tuple(out)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    n = util.concrete_int(n, "'n' argument of jnp.diag_indices()")
    ndim = util.concrete_int(ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(dtypes.default_int(), n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    util.check_arraylike("diag_indices_from", arr)
    shape = util.aval(util.ensure_array(arr)).shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def _pairs(rows: list[int], cols: list[int]) -> tuple[Any, Any]:
    dt = dtypes.default_int()
    if not rows:
        return lax.full((0,), 0, dt), lax.full((0,), 0, dt)
    return asarray(rows, dtype=dt), asarray(cols, dtype=dt)


def _tri_indices(n: Any, k: Any, m: Any, lower: bool, name: str) -> tuple[Any, Any]:
    n = util.concrete_int(n, f"n argument of jnp.{name}")
    k = util.concrete_int(k, f"k argument of jnp.{name}")
    m = n if m is None else util.concrete_int(m, f"m argument of jnp.{name}")
    cells = [
        (i, j) for i in range(n) for j in range(m) if ((j - i <= k) if lower else (j - i >= k))
    ]
    return _pairs([c[0] for c in cells], [c[1] for c in cells])


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _tri_indices(n, k, m, True, "tril_indices")


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _tri_indices(n, k, m, False, "triu_indices")


def _shape_2d(arr: Any, name: str) -> tuple[int, ...]:
    shape = tuple(arr.shape) if hasattr(arr, "shape") else util.aval(util.ensure_array(arr)).shape
    if len(shape) != 2:
        raise ValueError(f"jnp.{name} requires a 2-dimensional input, got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    util.check_arraylike("tril_indices_from", arr)
    n, m = _shape_2d(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    util.check_arraylike("triu_indices_from", arr)
    n, m = _shape_2d(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def mask_indices(
    n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *, size: int | None = None
) -> tuple[Any, Any]:
    mask = mask_func(lax.full((n, n), 1, dtypes.default_float()), k)
    i, j = nonzero(mask, size=size)
    return i, j


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    a = util.ensure_array(a)
    shape = util.aval(a).shape
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(shape)
    v = util.ensure_array(val) if not util.is_scalar(val) else val
    if not util.is_scalar(v) and util.aval(v).ndim:
        flat = ravel(v)
        size = util.aval(flat).shape[0]
        if size == 0:
            raise ValueError("fill_diagonal: val must not be empty")
        v = util.slice_axis(tile(flat, -(-n // size)), 0, 0, n)
    return _update(a, diag_indices(n, len(shape)), v, lambda old, new: new, "set")
