"""More of `jax.lax`: composite functions on the existing primitives, with JAX's signatures.

Nothing here is a primitive of its own: argmax/argmin are a max (or min) reduction plus a
first-index search, `reduce` maps monoid computations onto the reduce primitives,
`associative_scan` is the parallel prefix (odd/even recursion) over slices, `reduce_precision`
rounds the bits of the float, `conv_general_dilated_patches` convolves with a one-hot kernel.
The `*_p` names are webjax's primitive objects under JAX's public names.
"""

from __future__ import annotations

import builtins
import enum
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..core import ShapedArray
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from . import control_flow, convolution, lax, slicing, sorting, windowed


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
ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | convolution.ConvDimensionNumbers | None


# ---- small helpers ------------------------------------------------------------------------------
def _aval(x: Any) -> ShapedArray:
    return core.get_aval(x)


def _arr(x: Any) -> Any:
    return lax.to_array(x)


def _axis(axis: int, ndim: int, what: str = "axis") -> int:
    a = int(axis)
    if not -ndim <= a < builtins.max(ndim, 1):
        raise ValueError(f"{what} {a} is out of bounds for array of dimension {ndim}")
    return a % ndim if ndim else 0


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


# ---- slicing ------------------------------------------------------------------------------------
def slice_in_dim(
    operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0
) -> Any:
    """operand[..., start:limit:stride, ...] along `axis` (negative indices count from the end)."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    n = shape[axis]
    lo = 0 if start_index is None else int(start_index)
    hi = n if limit_index is None else int(limit_index)
    lo = lo + n if lo < 0 else lo
    hi = hi + n if hi < 0 else hi
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = lo, hi, int(stride)
    return lax.slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """operand[..., index, ...] along `axis` for a static index (negative counts from the end),
    kept as a size-1 axis by default, as JAX's lax.index_in_dim."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    n = shape[axis]
    i = operator.index(index)
    i = i + n if i < 0 else i
    if not 0 <= i < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    return lax.index_in_dim(operand, i, axis, keepdims)


def _wrap_index(index: Any, size: int, allow_negative: bool) -> Any:
    """An int32 scalar index; negative ones count from the end when `allow_negative`."""
    if isinstance(index, builtins.bool):
        index = int(index)
    if isinstance(index, int):
        return index + size if allow_negative and index < 0 else index
    index = _arr(index)
    aval = _aval(index)
    if aval.shape:
        raise TypeError(f"index must be a scalar, got shape {aval.shape}")
    if aval.dtype.kind not in "iu":
        raise TypeError(f"index must be an integer, got dtype {aval.dtype.name}")
    if not allow_negative or aval.dtype.kind == "u":
        return index
    return lax.select(
        lax.lt(index, lax.full((), 0, aval.dtype)),
        lax.add(index, lax.full((), size, aval.dtype)),
        index,
    )


def _starts(
    operand_shape: tuple[int, ...], start_indices: Sequence[Any], allow_negative: Any
) -> list[Any]:
    if hasattr(start_indices, "shape") and not isinstance(start_indices, (list, tuple)):
        arr = _arr(start_indices)
        if _aval(arr).ndim != 1:
            raise TypeError("start_indices must be a sequence or a rank-1 array")
        start_indices = [lax.index_in_dim(arr, i) for i in range(_aval(arr).shape[0])]
    if len(start_indices) != len(operand_shape):
        raise TypeError(
            f"dynamic_slice start_indices must have one entry per operand dimension; got "
            f"{len(start_indices)} for operand shape {operand_shape}"
        )
    flags = (
        [bool(allow_negative)] * len(operand_shape)
        if isinstance(allow_negative, builtins.bool)
        else [bool(f) for f in allow_negative]
    )
    return [_wrap_index(s, n, f) for s, n, f in zip(start_indices, operand_shape, flags)]


def dynamic_slice(
    operand: Any,
    start_indices: Any,
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Any:
    """operand[start:start + size] per axis for traced starts (clamped into range, as XLA)."""
    operand = _arr(operand)
    starts = _starts(_aval(operand).shape, start_indices, allow_negative_indices)
    return lax.dynamic_slice(operand, starts, slice_sizes)


def dynamic_update_slice(
    operand: Any,
    update: Any,
    start_indices: Any,
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Any:
    """`operand` with `update` written at the (clamped) start indices."""
    operand = _arr(operand)
    starts = _starts(_aval(operand).shape, start_indices, allow_negative_indices)
    return lax.dynamic_update_slice(operand, _arr(update), starts)


def dynamic_slice_in_dim(
    operand: Any,
    start_index: Any,
    slice_size: int,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """operand[..., start:start + slice_size, ...] along `axis` for a traced start."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    starts: list[Any] = [0] * len(shape)
    sizes = list(shape)
    starts[axis] = _wrap_index(start_index, shape[axis], allow_negative_indices)
    sizes[axis] = int(slice_size)
    return lax.dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(
    operand: Any,
    index: Any,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """operand[..., index, ...] along `axis` for a traced index (kept as size 1 by default)."""
    operand = _arr(operand)
    axis = _axis(axis, _aval(operand).ndim)
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)  # fmt: skip
    return out if keepdims else lax.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(
    operand: Any,
    update: Any,
    start_index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """`operand` with `update` written from `start_index` along `axis`."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    starts: list[Any] = [0] * len(shape)
    starts[axis] = _wrap_index(start_index, shape[axis], allow_negative_indices)
    return lax.dynamic_update_slice(operand, _arr(update), starts)


def dynamic_update_index_in_dim(
    operand: Any,
    update: Any,
    index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """`operand` with `update` (of rank ndim or ndim - 1) written at `index` along `axis`."""
    operand = _arr(operand)
    update = _arr(update)
    nd = _aval(operand).ndim
    axis = _axis(axis, nd)
    if _aval(update).ndim == nd - 1:
        update = lax.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)  # fmt: skip


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """Consecutive pieces of `operand` along `axis` with the given sizes."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape))
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {shape[axis]} of the operand "
            f"shape {shape} at axis {axis}"
        )
    out, lo = [], 0
    for s in sizes:
        out.append(slice_in_dim(operand, lo, lo + s, 1, axis))
        lo += s
    return out


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


def conv_general_dilated_patches(
    lhs: Any,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The patches `conv_general_dilated` would see, flattened into the output feature
    dimension as (input feature, *filter positions in rhs-spec order)."""
    lhs = _arr(lhs)
    filter_shape = tuple(int(n) for n in filter_shape)
    lshape = _aval(lhs).shape
    dn = convolution.conv_dimension_numbers(lshape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    k = math.prod(filter_shape)
    channels = lshape[lhs_spec[1]]
    dt = _aval(lhs).dtype
    eye = lax.convert_element_type(
        lax.eq(lax.broadcasted_iota(dtypes.int32, (k, k), 0),
               lax.broadcasted_iota(dtypes.int32, (k, k), 1)), dt)  # fmt: skip
    kernel = lax.broadcast_in_dim(eye, (channels, k, k), (1, 2))
    kernel = lax.reshape(kernel, (channels * k, 1, *filter_shape))
    # axes 0 and 1 (out, in features) move to rhs_spec[0] and rhs_spec[1]; spatial keep order
    nd = len(filter_shape) + 2
    rest = iter(range(2, nd))
    src = [0 if d == rhs_spec[0] else 1 if d == rhs_spec[1] else next(rest) for d in range(nd)]
    kernel = lax.transpose(kernel, src)
    return convolution.conv_general_dilated(
        lhs, kernel, window_strides, padding, lhs_dilation, rhs_dilation, dn,
        feature_group_count=channels, precision=precision,
        preferred_element_type=preferred_element_type,
    )  # fmt: skip


# ---- argmax / argmin ----------------------------------------------------------------------------
def _arg_extremum(name: str, reducer: Callable[[Any, Sequence[int]], Any]) -> Any:
    def fn(operand: Any, axis: int, index_dtype: Any) -> Any:
        operand = _arr(operand)
        aval = _aval(operand)
        if not isinstance(axis, int) or isinstance(axis, builtins.bool):
            raise TypeError(f"{name} axis must be an int, got {axis!r}")
        if not 0 <= axis < aval.ndim:
            raise ValueError(f"Invalid axis {axis} for operand shape {aval.shape}")
        if aval.dtype.kind == "c":  # no order on complex numbers here, as JAX's
            raise TypeError(f"{'gt' if name == 'argmax' else 'lt'} does not accept dtype "
                            f"{aval.dtype.name}.")  # fmt: skip
        idt = dtypes.canonicalize(dtypes.dtype(index_dtype))
        if idt.kind not in "iu":
            raise TypeError(f"index_dtype must be an integer type, but got {idt.name}")
        n = aval.shape[axis]
        if n == 0:
            raise ValueError(f"{name} requires a non-empty reduction axis, got shape {aval.shape}")
        keep = tuple(i for i in range(aval.ndim) if i != axis)
        ext = lax.broadcast_in_dim(reducer(operand, (axis,)), aval.shape, keep)
        hit = lax.eq(operand, ext)
        if aval.dtype.kind == "f":  # NaN is the extremum (the first one wins), as in JAX
            nan = lax.ne(operand, operand)
            any_nan = lax.broadcast_in_dim(lax.reduce_or(nan, (axis,)), aval.shape, keep)
            hit = lax.select(any_nan, nan, hit)
        idx = lax.broadcasted_iota(idt, aval.shape, axis)
        big = lax.full(aval.shape, n, idt)
        return lax.reduce_min(lax.select(hit, idx, big), (axis,))

    fn.__name__ = name
    fn.__doc__ = f"Index of the first {name[3:]}imum of `operand` along `axis` (NaN wins)."
    return fn


argmax = _arg_extremum("argmax", lax.reduce_max)
argmin = _arg_extremum("argmin", lax.reduce_min)


# ---- reduce -------------------------------------------------------------------------------------
_MONOIDS: dict[str, Callable[[Any, Sequence[int]], Any]] = {
    "add": lax.reduce_sum, "mul": lax.reduce_prod, "max": lax.reduce_max,
    "min": lax.reduce_min, "and": lax.reduce_and, "or": lax.reduce_or, "xor": lax.reduce_xor,
}  # fmt: skip
_COMBINE: dict[str, Callable[[Any, Any], Any]] = {
    "add": lax.add, "mul": lax.mul, "max": lax.max, "min": lax.min,
    "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
}  # fmt: skip


def _monoids(computation: Callable[..., Any], in_tree: Any, avals: list[ShapedArray]) -> list[str]:
    """The monoid of each output when `computation` combines operand i only with operand i by
    one of add/mul/max/min/and/or/xor (traced on scalars); NotImplementedError otherwise."""
    from ..interpreters import partial_eval as pe

    n = len(avals)

    def flat(*xs: Any) -> list[Any]:
        a = tree_unflatten(in_tree, list(xs[:n]))
        b = tree_unflatten(in_tree, list(xs[n:]))
        return [_arr(o) for o in tree_flatten(computation(a, b))[0]]

    jaxpr, consts, _ = pe.trace_to_jaxpr(flat, avals + avals)
    name = getattr(computation, "__name__", repr(computation))
    ops = [e.primitive.name for e in jaxpr.eqns]
    unsupported = NotImplementedError(
        f"lax.reduce: webjax maps only the monoid computations add, mul, max, min, and, or "
        f"(each output combining one operand with itself) onto its reduce primitives; the "
        f"computation {name!r} traces to {ops or 'no operation'}"
    )
    if consts or len(jaxpr.outvars) != n or len(jaxpr.eqns) != n:
        raise unsupported
    producer = {id(o): e for e in jaxpr.eqns for o in e.outvars}
    out = []
    for i, v in enumerate(jaxpr.outvars):
        eqn = producer.get(id(v))
        if eqn is None or eqn.primitive.name not in _MONOIDS or len(eqn.invars) != 2:
            raise unsupported
        pair = {id(jaxpr.invars[i]), id(jaxpr.invars[n + i])}
        if {id(x) for x in eqn.invars} != pair:
            raise unsupported
        out.append(eqn.primitive.name)
    return out


def reduce(
    operands: Any,
    init_values: Any,
    computation: Callable[[Any, Any], Any],
    dimensions: Sequence[int],
    out_sharding: Any = None,
) -> Any:
    """Reduce `operands` over `dimensions` with `computation`, starting from `init_values`.

    `computation` is traced on scalars; monoids (lax.add, mul, max, min, and, or, xor and their
    jnp/operator equivalents, elementwise over tuples of operands) map onto webjax's reduce
    primitives. Other computations raise NotImplementedError."""
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(
            "reduce: operands and init_values must have the same tree structure, got "
            f"{tree} and {init_tree}"
        )
    flat_ops = [_arr(x) for x in flat_ops]
    shapes = {_aval(x).shape for x in flat_ops}
    if len(shapes) > 1:
        raise ValueError(f"reduce: operands must have the same shape, got {sorted(shapes)}")
    avals = [ShapedArray((), _aval(x).dtype) for x in flat_ops]
    kinds = _monoids(computation, tree, avals)
    nd = _aval(flat_ops[0]).ndim if flat_ops else 0
    dims = tuple(sorted({_axis(d, nd, "dimension") for d in dimensions}))
    outs = []
    for x, init, kind in zip(flat_ops, flat_init, kinds):
        dt = _aval(x).dtype
        r = _MONOIDS[kind](x, dims) if dims else x
        if not lax._is_python_scalar(init):
            init = _arr(init)
        init = lax.convert_element_type(init, dt)
        if not _is_identity(init, kind, dt):
            r = _COMBINE[kind](lax.broadcast(init, _aval(r).shape), r)
        outs.append(r)
    return tree_unflatten(tree, outs)


def _is_identity(init: Any, kind: str, dt: Any) -> bool:
    if isinstance(init, core.Tracer):
        return False
    try:
        v = init.item() if hasattr(init, "item") else init
    except Exception:
        return False
    if kind == "add" or kind in ("or", "xor"):
        return bool(v == 0) and not (dt.kind == "f" and math.copysign(1.0, float(v)) < 0)
    if kind == "mul":
        return bool(v == 1)
    if kind == "and":
        return bool(v == (True if dt.kind == "b" else -1 if dt.kind == "i" else 2**dt.bits - 1))
    if dt.kind == "f":
        return bool(v == (-math.inf if kind == "max" else math.inf))
    if dt.kind == "b":
        return bool(v == (kind == "min"))
    lo, hi = (
        (0, 2**dt.bits - 1) if dt.kind == "u" else (-(2 ** (dt.bits - 1)), 2 ** (dt.bits - 1) - 1)
    )
    return bool(v == (lo if kind == "max" else hi))


# ---- associative_scan ---------------------------------------------------------------------------
def _interleave(a: Any, b: Any, axis: int) -> Any:
    """[a0, b0, a1, b1, ...] along `axis` (len(a) == len(b) or len(b) + 1)."""
    shape = _aval(a).shape
    na, nb = shape[axis], _aval(b).shape[axis]
    n = na + nb
    dt = _aval(a).dtype
    zero = lax.full((), 0, dt)
    cfg_a = [(0, 0, 0)] * len(shape)
    cfg_b = [(0, 0, 0)] * len(shape)
    cfg_a[axis] = (0, n - (2 * na - 1), 1)
    cfg_b[axis] = (1, n - 2 * nb, 1)
    pa, pb = lax.pad(a, zero, cfg_a), lax.pad(b, zero, cfg_b)
    out_shape = _aval(pa).shape
    even = lax.eq(
        lax.rem(lax.broadcasted_iota(dtypes.int32, out_shape, axis), lax.full((), 2, dtypes.int32)),
        lax.full((), 0, dtypes.int32),
    )
    return lax.select(even, pa, pb)


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:  # fmt: skip
    """Inclusive prefix scan of the associative `fn` along `axis` (parallel odd/even
    recursion: O(log n) depth), over a pytree of arrays with equal lengths along `axis`."""
    flat, tree = tree_flatten(elems)
    flat = [_arr(x) for x in flat]
    if not flat:
        return elems
    nd = _aval(flat[0]).ndim
    axis = _axis(axis, nd)
    n = _aval(flat[0]).shape[axis]
    if any(_aval(x).ndim <= axis or _aval(x).shape[axis] != n for x in flat):
        raise ValueError(
            "Array inputs to associative_scan must have the same first dimension. (saw: "
            f"{[_aval(x).shape for x in flat]})"
        )
    if reverse:
        flat = [lax.rev(x, (axis,)) for x in flat]

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(
                f"associative_scan: fn must return the structure of its inputs ({tree}), got "
                f"{out_tree}"
            )
        return [_arr(o) for o in out]

    def sl(xs: list[Any], lo: int, hi: int | None, stride: int = 1) -> list[Any]:
        return [slice_in_dim(x, lo, hi, stride, axis) for x in xs]

    def scan(xs: list[Any]) -> list[Any]:
        m = _aval(xs[0]).shape[axis]
        if m < 2:
            return xs
        pairs = combine(sl(xs, 0, m - 1, 2), sl(xs, 1, None, 2))  # x0+x1, x2+x3, ...
        odd = scan(pairs)  # prefixes ending at 1, 3, 5, ...
        if m % 2 == 0:
            even = combine(sl(odd, 0, _aval(odd[0]).shape[axis] - 1), sl(xs, 2, None, 2))
        else:
            even = combine(odd, sl(xs, 2, None, 2))
        even = [lax.concatenate([slice_in_dim(x, 0, 1, 1, axis), e], axis)
                for x, e in zip(xs, even)]  # fmt: skip
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(flat)
    if reverse:
        out = [lax.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


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
        bits = lax.select(lax.gt(exponent, u(max_exp)), signed_inf,
                          lax.select(lax.le(exponent, u(min_exp)), signed_zero, bits))  # fmt: skip
    out = lax.bitcast_convert_type(bits, dt)
    if mbits < src_m or ebits < src_e:
        out = lax.select(lax.ne(x, x), x, out)  # NaNs pass through
    return out


# ---- scatters -----------------------------------------------------------------------------------
def scatter_sub(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    """`operand` with `updates` subtracted at the scattered indices (scatter-add of -updates)."""
    return slicing.scatter_add(
        operand, scatter_indices, lax.neg(_arr(updates)), dimension_numbers,
        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
    )  # fmt: skip


def scatter_apply(
    operand: Any,
    scatter_indices: Any,
    func: Callable[[Any], Any],
    dimension_numbers: Any,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    """`operand` with the elementwise `func` applied at the scattered indices (once per time an
    index is hit, as XLA's scatter applies it per update)."""
    operand = _arr(operand)
    aval = _aval(operand)
    i32 = dtypes.int32
    hits = slicing.scatter_add(
        lax.full(aval.shape, 0, i32), scatter_indices, lax.full(tuple(update_shape), 1, i32),
        dimension_numbers, indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices, mode=mode,
    )  # fmt: skip
    zero = lax.full(aval.shape, 0, i32)
    once = lax.select(lax.gt(hits, zero), func(operand), operand)
    if unique_indices:
        return once
    left = lax.sub(hits, lax.full(aval.shape, 1, i32))

    def cond(state: Any) -> Any:
        k, _ = state
        nd = _aval(k).ndim
        return lax.reduce_or(lax.gt(k, zero), tuple(range(nd))) if nd else lax.gt(k, zero)

    def body(state: Any) -> Any:
        k, x = state
        more = lax.gt(k, zero)
        return lax.sub(k, lax.convert_element_type(more, i32)), lax.select(more, func(x), x)

    return control_flow.while_loop(cond, body, (left, once))[1]


# ---- JAX's public primitive names ---------------------------------------------------------------
_P = lax.prims
abs_p = _P["abs"]
acos_p = _P["acos"]
acosh_p = _P["acosh"]
add_p = _P["add"]
and_p = _P["and"]
asin_p = _P["asin"]
asinh_p = _P["asinh"]
atan2_p = _P["atan2"]
atan_p = _P["atan"]
atanh_p = _P["atanh"]
bitcast_convert_type_p = _P["bitcast_convert_type"]
broadcast_in_dim_p = _P["broadcast_in_dim"]
cbrt_p = _P["cbrt"]
ceil_p = _P["ceil"]
clamp_p = _P["clamp"]
clz_p = _P["clz"]
concatenate_p = _P["concatenate"]
convert_element_type_p = _P["convert_element_type"]
cos_p = _P["cos"]
cosh_p = _P["cosh"]
digamma_p = _P["digamma"]
div_p = _P["div"]
dot_general_p = _P["dot_general"]
dynamic_slice_p = _P["dynamic_slice"]
dynamic_update_slice_p = _P["dynamic_update_slice"]
eq_p = _P["eq"]
erf_inv_p = _P["erf_inv"]
erf_p = _P["erf"]
erfc_p = _P["erfc"]
exp2_p = _P["exp2"]
exp_p = _P["exp"]
expm1_p = _P["expm1"]
floor_p = _P["floor"]
ge_p = _P["ge"]
gt_p = _P["gt"]
integer_pow_p = _P["integer_pow"]
iota_p = _P["iota"]
is_finite_p = _P["is_finite"]
le_p = _P["le"]
lgamma_p = _P["lgamma"]
log1p_p = _P["log1p"]
log_p = _P["log"]
logistic_p = _P["logistic"]
lt_p = _P["lt"]
max_p = _P["max"]
min_p = _P["min"]
mul_p = _P["mul"]
ne_p = _P["ne"]
neg_p = _P["neg"]
nextafter_p = _P["nextafter"]
not_p = _P["not"]
or_p = _P["or"]
pad_p = _P["pad"]
population_count_p = _P["population_count"]
pow_p = _P["pow"]
reduce_and_p = _P["reduce_and"]
reduce_max_p = _P["reduce_max"]
reduce_min_p = _P["reduce_min"]
reduce_or_p = _P["reduce_or"]
reduce_prod_p = _P["reduce_prod"]
reduce_sum_p = _P["reduce_sum"]
reduce_xor_p = _P["reduce_xor"]
rem_p = _P["rem"]
reshape_p = _P["reshape"]
rev_p = _P["rev"]
round_p = _P["round"]
rsqrt_p = _P["rsqrt"]
select_n_p = _P["select_n"]
shift_left_p = _P["shift_left"]
shift_right_arithmetic_p = _P["shift_right_arithmetic"]
shift_right_logical_p = _P["shift_right_logical"]
sign_p = _P["sign"]
sin_p = _P["sin"]
sinh_p = _P["sinh"]
slice_p = _P["slice"]
sqrt_p = _P["sqrt"]
squeeze_p = _P["squeeze"]
stop_gradient_p = _P["stop_gradient"]
sub_p = _P["sub"]
tan_p = _P["tan"]
tanh_p = _P["tanh"]
transpose_p = _P["transpose"]
xor_p = _P["xor"]
gather_p, scatter_p, scatter_add_p = slicing.gather_p, slicing.scatter_p, slicing.scatter_add_p
scatter_mul_p, scatter_min_p = slicing.scatter_mul_p, slicing.scatter_min_p
scatter_max_p = slicing.scatter_max_p
sort_p, top_k_p = sorting.sort_p, sorting.top_k_p
cond_p, while_p, scan_p = control_flow.cond_p, control_flow.while_p, control_flow.scan_p
conv_general_dilated_p = convolution.conv_general_dilated_p
reduce_window_sum_p = windowed.reduce_window_sum_p
reduce_window_max_p = windowed.reduce_window_max_p
reduce_window_min_p = windowed.reduce_window_min_p
select_and_gather_add_p = windowed.select_and_gather_add_p
select_and_scatter_add_p = windowed.select_and_scatter_add_p
cumsum_p, cumprod_p, cummax_p = windowed.cumsum_p, windowed.cumprod_p, windowed.cummax_p
cummin_p, cumlogsumexp_p = windowed.cummin_p, windowed.cumlogsumexp_p
