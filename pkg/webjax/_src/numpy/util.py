"""Shared helpers of the numpy layer: promotion and broadcasting on top of lax.

The bottom of the numpy package: it imports none of its siblings. Host values become arrays
through dispatch.array.asarray, which is jnp.asarray once creation has installed it."""

from __future__ import annotations

import builtins
import operator
import warnings
from collections.abc import Sequence
from typing import Any

from .. import config as _config
from .. import core, dtypes
from ..core import ShapedArray
from ..dispatch import array as array_mod  # its asarray is jnp.asarray, installed by creation
from ..dtypes import DType
from ..lax import lax


def aval(x: Any) -> ShapedArray:
    try:
        return core.get_aval(x)
    except TypeError:
        return core.get_aval(array_mod.asarray(x))


def is_scalar(x: Any) -> bool:
    return type(x) in (builtins.bool, builtins.int, builtins.float, builtins.complex)


_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex, str)


def _arraylike(x: Any) -> bool:
    return (
        isinstance(x, (core.Tracer, *_SCALARS))
        or hasattr(x, "__array__")
        or hasattr(x, "__jax_array__")
        or (hasattr(x, "aval") and hasattr(x, "_exp"))
    )


def check_arraylike(name: str, *args: Any) -> None:
    """JAX's input strictness: arrays and scalars only (a list or tuple is ambiguous: JAX asks
    for an explicit jnp.asarray)."""
    for pos, x in enumerate(args):
        if not _arraylike(x):
            raise TypeError(
                f"{name} requires ndarray or scalar arguments, got {type(x)} at position {pos}."
            )


def check_arraylike_or_none(name: str, *args: Any) -> None:
    for pos, x in enumerate(args):
        if x is not None and not _arraylike(x):
            raise TypeError(
                f"{name} requires ndarray, scalar, or None arguments, got {type(x)} at "
                f"position {pos}."
            )


def ensure_array(x: Any) -> Any:
    """Arrays and tracers pass through; anything else becomes an array."""
    if isinstance(x, core.Tracer) or (hasattr(x, "aval") and hasattr(x, "_exp")):
        return x
    return array_mod.asarray(x)


def result_type(*args: Any) -> tuple[DType, bool]:
    pairs = []
    for a in args:
        if isinstance(a, (DType, dtypes.ScalarType, str, type)):
            pairs.append((dtypes.canonicalize(dtypes.dtype(a)), False))
        elif type(a) is builtins.int:  # a weak Python int must fit the default integer type
            lo, hi = dtypes.iinfo_bounds(dtypes.default_int())
            if not lo <= a <= hi:
                raise OverflowError(
                    "An overflow was encountered while parsing an argument to a jitted "
                    f"computation. Got {type(a)} with value {a}"
                )
            pairs.append((dtypes.default_int(), True))
        else:
            av = aval(a)
            pairs.append((av.dtype, av.weak_type))
    return dtypes.result_type(*pairs)


def promote_dtypes(*args: Any) -> list[Any]:
    """Convert arguments to their common JAX type (weak if every input was weak)."""
    dt, weak = result_type(*args)
    return [convert(a, dt, weak) for a in args]


def convert(x: Any, dt: DType, weak: bool = False) -> Any:
    if is_scalar(x):
        return lax.full((), x, dt, weak_type=weak)
    x = ensure_array(x)
    av = aval(x)
    if av.dtype is dt and av.weak_type == weak:
        return x
    if dt is dtypes.bool_ and av.dtype.kind == "c":  # truth of a complex number: z != 0 (the
        return lax.ne(x, lax.full((), 0, av.dtype))  # lax conversion reads the real part)
    return lax.convert_element_type(x, dt, weak_type=weak)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        dims = {s[i - nd + len(s)] for s in shapes if i - nd + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ValueError(
                "Incompatible shapes for broadcasting: shapes=" + str([tuple(s) for s in shapes])
            )
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    shape = tuple(shape)
    x = ensure_array(x)
    s = aval(x).shape
    if s == shape:
        return x
    if len(s) > len(shape) or broadcast_shapes(s, shape) != shape:
        raise ValueError(f"Incompatible shapes for broadcasting: {s} and requested shape {shape}")
    lead = len(shape) - len(s)
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


# jnp function -> the lax primitive whose shape check JAX reports for it
_LAX_NAMES = {
    "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
    "floor_divide": "rem", "remainder": "rem", "mod": "rem", "fmod": "rem", "maximum": "max",
    "minimum": "min", "equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
    "greater": "gt", "greater_equal": "ge", "power": "pow", "float_power": "pow",
    "arctan2": "atan2", "logical_and": "and", "logical_or": "or", "logical_xor": "xor",
    "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor", "left_shift": "shift_left",
    "right_shift": "shift_right_arithmetic", "hypot": "or", "logaddexp": "max", "fmax": "gt",
    "fmin": "lt", "ldexp": "add",
}  # fmt: skip


_BROADCAST_FIRST = frozenset({"copysign", "heaviside", "gcd", "lcm"})


def promote_args(name: str, *args: Any) -> list[Any]:
    """Promote dtypes then broadcast shapes, as every jnp binary function does."""
    check_arraylike(name, *args)
    args = tuple(ensure_array(a) if not is_scalar(a) else a for a in args)
    first = getattr(args[0], "aval", None) if args else None
    if type(first) is ShapedArray and all(getattr(a, "aval", None) == first for a in args):
        return list(args)  # one type and shape already (`y + x` in a loop): nothing to do
    promoted = promote_dtypes(*args)
    shapes = [aval(a).shape for a in promoted]
    if len({len(s) for s in shapes if s}) > 1 and _config.numpy_rank_promotion.value != "allow":
        _rank_promotion(name, shapes)
    try:
        shape = broadcast_shapes(*shapes)
    except ValueError:
        if name in _BROADCAST_FIRST:  # JAX broadcasts these before any lax call
            raise ValueError(
                f"Incompatible shapes for broadcasting: shapes={list(shapes)}"
            ) from None
        prim = _LAX_NAMES.get(name, name)  # JAX reports the lax primitive that failed
        raise TypeError(
            f"{prim} got incompatible shapes for broadcasting: " + ", ".join(map(str, shapes)) + "."
        ) from None
    return [
        a if aval(a).shape == shape or not aval(a).shape else broadcast_to(a, shape)
        for a in promoted
    ]


def _rank_promotion(name: str, shapes: list[tuple[int, ...]]) -> None:
    """jax_numpy_rank_promotion 'warn' / 'raise': operands of different ranks broadcast."""
    msg = "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
    on = " ".join(map(str, shapes))
    if _config.numpy_rank_promotion.value == "warn":
        warnings.warn(
            f"Following NumPy automatic rank promotion for {name} on shapes {on}. Set the "
            "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for "
            f"more information, see {msg}",
            stacklevel=4,
        )
    else:
        raise ValueError(
            f"Operands could not be broadcast together for {name} on shapes {on} and with the "
            f"config option jax_numpy_rank_promotion='raise'. For more information, see {msg}"
        )


def where(condition: Any, x: Any, y: Any) -> Any:
    """The three-argument jnp.where: x where `condition` holds, else y (promoted, broadcast)."""
    x, y = promote_dtypes(*(a if is_scalar(a) else ensure_array(a) for a in (x, y)))
    cond = convert(condition, dtypes.bool_)
    shape = broadcast_shapes(*(aval(a).shape for a in (cond, x, y)))
    cond, x, y = (broadcast_to(a, shape) for a in (cond, x, y))
    return lax.select(cond, x, y)


def canonical_axis(axis: int, ndim: int) -> int:
    a = int(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim if ndim else 0


def canonical_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonical_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {axis}")
        return axes
    return (canonical_axis(axis, ndim),)


def lax_const(v: Any, like: Any) -> Any:
    """A 0-d constant of like's dtype, as JAX's library code makes them: weak only when `like`
    is a weak 0-d value of the dtype Python scalars of its kind take (then the constant is a
    Python scalar there), so weak scalars keep giving weak results and arrays strong ones."""
    av = aval(like)
    default = {"f": dtypes.default_float, "c": dtypes.default_complex, "i": dtypes.default_int}
    kind_default = default.get(av.dtype.kind)
    weak = av.weak_type and av.ndim == 0 and kind_default is not None and av.dtype is kind_default()
    return lax.full((), v, av.dtype, weak_type=weak)


def with_weak_type_of(out: Any, x: Any) -> Any:
    """`out` carrying x's weak_type (selects against fresh constants lose it otherwise)."""
    w = aval(x).weak_type
    if aval(out).weak_type == w:
        return out
    return lax.convert_element_type(out, aval(out).dtype, weak_type=w)


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """promote_dtypes, then integer/bool results become a float (dtypes.to_inexact; weakness
    kept)."""
    dt, weak = result_type(*args)
    dt = dtypes.to_inexact(dt)
    return [convert(a, dt, weak) for a in args]


def concrete_array(x: Any, context: str) -> Any:
    """`x` as a concrete array (tracers with a known value included), else JAX's
    ConcretizationTypeError naming `context`."""
    v = core.to_concrete(x)
    if v is None or isinstance(v, core.Tracer):
        raise core.ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected. " + context
        )
    return ensure_array(v)


def concrete_int(x: Any, context: str) -> int:
    """operator.index of a static integer argument (a concrete 0-d array is accepted)."""
    if isinstance(x, core.Tracer):
        x = concrete_array(x, context)
    if hasattr(x, "_exp") or hasattr(x, "__array_interface__"):
        return operator.index(x.item())
    return operator.index(x)


def slice_axis(x: Any, axis: int, start: int, stop: int, step: int = 1) -> Any:
    """x[..., start:stop:step, ...] along `axis` (static, non-negative bounds)."""
    shape = aval(x).shape
    lo, hi, st = [0] * len(shape), list(shape), [1] * len(shape)
    lo[axis], hi[axis], st[axis] = start, builtins.max(start, stop), step
    if (lo[axis], hi[axis], step) == (0, shape[axis], 1):
        return x
    return lax.slice(x, lo, hi, st)
