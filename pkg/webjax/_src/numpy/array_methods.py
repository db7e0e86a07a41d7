"""Operators and methods of `Array` and of tracers, attached here as in JAX (the array layer
does not depend on the numpy layer)."""

from __future__ import annotations

from typing import Any

from .. import core
from ..array import Array
from . import contractions, creation, indexing, matrices, reductions, shape, ufuncs, util


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
    from .. import dtypes

    return util.convert(self, dtypes.canonicalize(dtypes.dtype(dtype)))


def _reshape(self: Any, *args: Any, order: str = "C", **kw: Any) -> Any:
    if len(args) == 1:
        args = args[0]
    elif not args:
        args = kw.pop("shape")
    return shape.reshape(self, args, order)


def _transpose(self: Any, *axes: Any) -> Any:
    perm: Any = axes
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        perm = axes[0]
    return shape.transpose(self, perm or None)


def _getitem(self: Any, idx: Any) -> Any:
    return indexing.getitem(self, idx)


def _sort(self: Any, axis: Any = -1, **kwargs: Any) -> Any:
    from .sorting import sort

    return sort(self, axis, **kwargs)


def _argsort(self: Any, axis: Any = -1, **kwargs: Any) -> Any:
    from .sorting import argsort

    return argsort(self, axis, **kwargs)


def _repeat(self: Any, repeats: Any, axis: Any = None, *, total_repeat_length: Any = None) -> Any:
    return shape.repeat(self, repeats, axis, total_repeat_length=total_repeat_length)


def _nonzero(self: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    return indexing.nonzero(self, size=size, fill_value=fill_value)


def _flatten(self: Any, order: str = "C") -> Any:
    return shape.ravel(self, order)


def _copy(self: Any) -> Any:
    return creation.array(self, copy=True)


METHODS: dict[str, Any] = {
    "astype": _astype,
    "__getitem__": _getitem,
    "reshape": _reshape,
    "transpose": _transpose,
    "ravel": shape.ravel,
    "flatten": _flatten,
    "copy": _copy,
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
    }
    for name, fn in extra.items():
        setattr(cls, name, fn)
    for name, fn in METHODS.items():
        setattr(cls, name, fn)
    for name, fn in PROPERTIES.items():
        setattr(cls, name, property(fn))


_install(Array)
_install(core.Tracer)
