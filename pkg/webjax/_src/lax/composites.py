"""Composite jax.lax functions that JAX defines in `jax/_src/lax/lax.py`, written on the
primitives of lax.py: the `Precision` enum, small elementwise and shape functions (square,
full_like, tile, collapse, stack, ...), `batch_matmul`, `reduce_precision` (rounding the bits of
the float) and `optimization_barrier`. They belong in lax.py, as in JAX.
"""

from __future__ import annotations

import builtins
import enum
import math
from collections.abc import Sequence
from typing import Any

from .. import core, dtypes
from ..core import ShapedArray
from ..tree_util import tree_map
from . import lax


# ---- types --------------------------------------------------------------------------------------
class Precision(enum.Enum):
    """Matmul precision (accepted everywhere JAX takes `precision=`; webjax computes in the
    operands' dtype on every backend, so all three behave as HIGHEST)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        return _PRECISION_NAMES.get(value) if isinstance(value, str) else None

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_NAMES = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST, "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
}  # fmt: skip

PrecisionLike = None | str | Precision | tuple[str, str] | tuple[Precision, Precision]
DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]


# ---- helpers ------------------------------------------------------------------------------------
def _aval(x: Any) -> ShapedArray:
    return core.get_aval(x)


def _arr(x: Any) -> Any:
    return lax.to_array(x)


def _axis(axis: int, ndim: int, what: str = "axis") -> int:
    a = int(axis)
    if not -ndim <= a < builtins.max(ndim, 1):
        raise ValueError(f"{what} {a} is out of bounds for array of dimension {ndim}")
    return a % ndim if ndim else 0


# ---- elementwise and shape functions ------------------------------------------------------------
def square(x: Any) -> Any:
    """x * x, elementwise."""
    return lax.integer_pow(_arr(x), 2)


def reciprocal(x: Any) -> Any:
    """1 / x, elementwise."""
    return lax.integer_pow(_arr(x), -1)


def full_like(
    x: Any, fill_value: Any, dtype: Any = None, shape: Any = None, sharding: Any = None
) -> Any:
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`."""
    if not (isinstance(x, core.Tracer) or hasattr(x, "_exp")) and hasattr(x, "dtype"):
        aval = ShapedArray(tuple(x.shape), dtypes.canonicalize(dtypes.dtype(x.dtype)))
    else:
        aval = _aval(_arr(x))
    fill_shape = aval.shape if shape is None else core.canonicalize_shape(shape)
    weak = dtype is None and aval.weak_type
    dt = aval.dtype if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype))
    return lax.full(fill_shape, fill_value, dt, weak_type=weak)


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of `shape` and `dtype` (zeros: JAX's contents are unspecified)."""
    return lax.full(shape, 0, dtype)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of `shapes` (ValueError when they are incompatible)."""
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        sizes = {int(s[len(s) - nd + i]) for s in shapes if len(s) - nd + i >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(
                f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}"
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """`x` with leading 1s added until it has rank `rank`."""
    x = _arr(x)
    nd = _aval(x).ndim
    if nd == rank:
        return x
    return lax.broadcast(x, (1,) * (rank - nd))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge dimensions [start_dimension, stop_dimension) into one."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    nd = len(shape)
    lo = _axis(start_dimension, nd + 1, "start_dimension") if nd else 0
    hi = nd if stop_dimension is None else int(stop_dimension)
    if hi < 0:
        hi += nd
    if not 0 <= lo <= hi <= nd:
        raise ValueError(
            f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) for shape {shape}"
        )
    new = (*shape[:lo], math.prod(shape[lo:hi]), *shape[hi:])
    return lax.reshape(operand, new)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """`operand` repeated `reps[i]` times along each axis i."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise ValueError(
            f"len(reps) must equal operand.ndim, got reps={reps} for operand shape {shape}"
        )
    inter = tuple(x for r, d in zip(reps, shape) for x in (r, d))
    dims = tuple(range(1, 2 * len(shape), 2))
    b = lax.broadcast_in_dim(operand, inter, dims)
    return lax.reshape(b, tuple(r * d for r, d in zip(reps, shape)))


# ---- stacking and unstacking --------------------------------------------------------------------
def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Stack arrays of one shape along a new axis."""
    operands = [_arr(x) for x in operands]
    if not operands:
        raise ValueError("stack requires at least one operand")
    nd = _aval(operands[0]).ndim
    axis = _axis(axis, nd + 1)
    return lax.concatenate([lax.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of `x` along `axis`, as a tuple."""
    x = _arr(x)
    shape = _aval(x).shape
    axis = _axis(axis, len(shape))
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


# ---- contractions -------------------------------------------------------------------------------
def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Batched matrix product over all leading dimensions (equal in lhs and rhs)."""
    lhs, rhs = _arr(lhs), _arr(rhs)
    ls, rs = _aval(lhs).shape, _aval(rhs).shape
    if len(ls) < 2 or len(rs) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {ls}, {rs}")
    if len(ls) != len(rs):
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {len(ls)}, {len(rs)}")
    batch = tuple(range(len(ls) - 2))
    dn = (((len(ls) - 1,), (len(rs) - 2,)), (batch, batch))
    return lax.dot_general(lhs, rhs, dn, precision=precision)


# ---- barriers and precision ---------------------------------------------------------------------
def optimization_barrier(operand: Any, /) -> Any:
    """Identity on a pytree (webjax does not reorder across it either way)."""
    return tree_map(lambda x: x, operand)


_FLOAT_LAYOUT = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}
_UINT_OF = {16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round `operand` to a float with `exponent_bits` and `mantissa_bits` (to nearest even;
    overflow to inf, values at or below the smallest normal exponent to signed zero), keeping
    its dtype, as XLA's ReducePrecision."""
    x = _arr(operand) if not isinstance(operand, float) else lax.full((), operand, dtypes.float32)
    dt = _aval(x).dtype
    if dt.kind != "f":
        raise TypeError(f"reduce_precision does not accept dtype {dt.name}")
    ebits, mbits = int(exponent_bits), int(mantissa_bits)
    if ebits < 1 or mbits < 0:
        raise ValueError(
            f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got "
            f"{exponent_bits} and {mantissa_bits}"
        )
    src_e, src_m = _FLOAT_LAYOUT[dt.name]
    nbits = 1 + src_e + src_m
    ut = _UINT_OF[nbits]
    u = lambda v: lax.full((), v, ut)
    bits = lax.bitcast_convert_type(x, ut)
    if mbits < src_m:
        shift = src_m - mbits
        last = 1 << shift
        last_bit = lax.shift_right_logical(lax.bitwise_and(bits, u(last)), u(shift))
        bias = lax.add(last_bit, u((last >> 1) - 1))
        bits = lax.bitwise_and(lax.add(bits, bias), u(~(last - 1) & (2**nbits - 1)))
    if ebits < src_e:
        sign_mask = 1 << (nbits - 1)
        exp_mask = ((1 << src_e) - 1) << src_m
        bias_src = (1 << (src_e - 1)) - 1
        bias_dst = (1 << (ebits - 1)) - 1
        max_exp = (bias_src + bias_dst) << src_m
        min_exp = (bias_src - bias_dst) << src_m
        exponent = lax.bitwise_and(bits, u(exp_mask))
        signed_zero = lax.bitwise_and(bits, u(sign_mask))
        signed_inf = lax.bitwise_or(signed_zero, u(exp_mask))
        bits = lax.select(
            lax.gt(exponent, u(max_exp)),
            signed_inf,
            lax.select(lax.le(exponent, u(min_exp)), signed_zero, bits),
        )
    out = lax.bitcast_convert_type(bits, dt)
    if mbits < src_m or ebits < src_e:
        out = lax.select(lax.ne(x, x), x, out)  # NaNs pass through
    return out
