"""Operators and methods of `Array` and of tracers, attached here as in JAX (the array layer
does not depend on the numpy layer)."""

from __future__ import annotations

from typing import Any

from .. import core, dtypes
from ..dispatch import devices, dlpack
from ..dispatch.array import Array
from ..lax import lax
from . import (
    array_api_metadata,
    contractions,
    creation,
    indexing,
    matrices,
    reductions,
    shape,
    ufuncs,
    util,
)
from .sorting import argsort, sort


def _swap(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


def _guard(fn: Any) -> Any:
    """Binary operators return NotImplemented for foreign operands (numpy-style)."""

    def op(self: Any, other: Any) -> Any:
        if not (
            util.is_scalar(other)
            or isinstance(other, (Array, core.Tracer, list, tuple))
            or hasattr(other, "__array__")
            or hasattr(other, "__jax_array__")
        ):
            return NotImplemented
        return fn(self, other)

    return op


_BINARY = {
    "add": ufuncs.add, "sub": ufuncs.subtract, "mul": ufuncs.multiply,
    "truediv": ufuncs.true_divide, "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder,
    "pow": ufuncs.power, "and": ufuncs.bitwise_and, "or": ufuncs.bitwise_or,
    "xor": ufuncs.bitwise_xor, "lshift": ufuncs.left_shift, "rshift": ufuncs.right_shift,
    "matmul": contractions.matmul, "divmod": ufuncs.divmod,
}  # fmt: skip
_COMPARE = {
    "eq": ufuncs.equal, "ne": ufuncs.not_equal, "lt": ufuncs.less, "le": ufuncs.less_equal,
    "gt": ufuncs.greater, "ge": ufuncs.greater_equal,
}  # fmt: skip


def _astype(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    return devices.placed(util.convert(self, dtypes.canonicalize_user(dtype, "astype")), device)


def _to_device(self: Any, device: Any, *, stream: Any = None) -> Any:
    """`Array.to_device`: the array committed to `device` (a Device or a one-device
    Sharding), as JAX's."""
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device()")
    return devices.placed(self, device)


def _setitem(self: Any, i: Any, x: Any) -> None:
    raise TypeError(
        "JAX arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
    )


def _reshape(self: Any, *args: Any, order: str = "C", out_sharding: Any = None, **kw: Any) -> Any:
    if len(args) == 1:
        args = args[0]
    elif not args:
        args = kw.pop("shape")
    if kw:
        raise TypeError(f"reshape() got an unexpected keyword argument {next(iter(kw))!r}")
    return shape.reshape(self, args, order, out_sharding=out_sharding)


def _transpose(self: Any, *axes: Any) -> Any:
    perm: Any = axes
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        perm = axes[0]
    return shape.transpose(self, perm or None)


def _getitem(self: Any, idx: Any) -> Any:
    indexing._check_not_list(idx)
    return indexing.getitem(self, idx)


def _sort(self: Any, axis: Any = -1, **kwargs: Any) -> Any:
    return sort(self, axis, **kwargs)


def _argsort(self: Any, axis: Any = -1, **kwargs: Any) -> Any:
    return argsort(self, axis, **kwargs)


def _repeat(self: Any, repeats: Any, axis: Any = None, *, total_repeat_length: Any = None) -> Any:
    return shape.repeat(self, repeats, axis, total_repeat_length=total_repeat_length)


def _nonzero(self: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    return indexing.nonzero(self, size=size, fill_value=fill_value)


def _flatten(self: Any, order: str = "C") -> Any:
    return shape.ravel(self, order)


def _copy(self: Any) -> Any:
    return creation.array(self, copy=True)


def _round(self: Any, ndigits: Any = None) -> Any:
    """round(x): to an integer array (the real part of complex numbers) without ndigits, as
    JAX's operator."""
    out = ufuncs.round(self, ndigits or 0)
    return _astype(out, int) if ndigits is None else out


def _view(self: Any, dtype: Any = None, type: Any = None) -> Any:
    """The same bytes as another dtype: a complex array is its interleaved (real, imaginary)
    parts, so complex <-> float views change the last axis by a factor of two; views between
    types of one width reinterpret the bits."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    src, dst = util.aval(self).dtype, dtypes.canonicalize(dtypes.dtype(dtype))
    shape = util.aval(self).shape
    if src is dst:
        return self
    if src.kind == "c":  # (..., n) complex -> (..., 2n) parts
        nd = len(shape)
        halves = [lax.expand_dims(p, (nd,)) for p in (lax.real(self), lax.imag(self))]
        parts = lax.concatenate(halves, nd)
        flat = lax.reshape(parts, (*shape[:-1], 2 * shape[-1]) if shape else (2,))
        return _view(flat, dst)
    if dst.kind == "c":  # (..., 2n) -> (..., n) complex
        comp = dtypes.component(dst)
        x = _view(self, comp)
        if not shape or shape[-1] % 2:
            raise ValueError(
                "When changing to a larger dtype, its size must be a divisor of "
                "the total size in bytes of the last axis of the array."
            )
        pairs = lax.reshape(x, (*shape[:-1], shape[-1] // 2, 2))
        nd = len(shape)
        re, im = (lax.squeeze(util.slice_axis(pairs, nd, k, k + 1), (nd,)) for k in (0, 1))
        return lax.complex(re, im)
    if src.itemsize != dst.itemsize:
        raise NotImplementedError(
            f"array.view from {src.name} to {dst.name} (different widths) "
            "is not supported by webjax"
        )
    return lax.bitcast_convert_type(self, dst)


METHODS: dict[str, Any] = {
    "astype": _astype,
    "__getitem__": _getitem,
    "reshape": _reshape,
    "transpose": _transpose,
    "ravel": shape.ravel,
    "flatten": _flatten,
    "copy": _copy,
    "view": _view,
    "dot": contractions.dot,
    "clip": ufuncs.clip,
    "round": ufuncs.round,
    "conj": ufuncs.conjugate,
    "conjugate": ufuncs.conjugate,
    "argmax": reductions.argmax,
    "argmin": reductions.argmin,
    "cumsum": reductions.cumsum,
    "cumprod": reductions.cumprod,
    "var": reductions.var,
    "std": reductions.std,
    "ptp": reductions.ptp,
    "trace": matrices.trace,
    "diagonal": matrices.diagonal,
    "repeat": _repeat,
    "take": indexing.take,
    "nonzero": _nonzero,
    "sort": _sort,
    "argsort": _argsort,
    "squeeze": shape.squeeze,
    "swapaxes": shape.swapaxes,
    "sum": reductions.sum,
    "prod": reductions.prod,
    "max": reductions.max,
    "min": reductions.min,
    "mean": reductions.mean,
    "all": reductions.all,
    "any": reductions.any,
}
PROPERTIES: dict[str, Any] = {
    "at": indexing._IndexUpdateHelper,
    "T": lambda self: shape.transpose(self),
    "mT": shape.matrix_transpose,
    "real": ufuncs.real,
    "imag": ufuncs.imag,
}


def _install(cls: type) -> None:
    for name, fn in _BINARY.items():
        setattr(cls, f"__{name}__", _guard(fn))
        setattr(cls, f"__r{name}__", _guard(_swap(fn)))
    for name, fn in _COMPARE.items():
        setattr(cls, f"__{name}__", _guard(fn))
    extra = {
        "__neg__": ufuncs.negative,
        "__pos__": ufuncs.positive,
        "__abs__": ufuncs.absolute,
        "__invert__": ufuncs.invert,
        "__round__": _round,
        "__array_namespace__": array_api_metadata.__array_namespace__,
        "__setitem__": _setitem,
        "to_device": _to_device,
    }
    for name, fn in extra.items():
        setattr(cls, name, fn)
    for name, fn in METHODS.items():
        setattr(cls, name, fn)
    for name, fn in PROPERTIES.items():
        setattr(cls, name, property(fn))


_install(Array)
_install(core.Tracer)
Array.__dlpack__ = dlpack.to_dlpack  # type: ignore[attr-defined]  # concrete arrays only
Array.__dlpack_device__ = dlpack.dlpack_device  # type: ignore[attr-defined]
