"""Array creation: array/asarray from Python data (and NumPy when present), constants, ranges."""

from __future__ import annotations

import builtins
import math
import operator
import struct
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from .. import core, dtypes
from ..dispatch import array as array_mod
from ..dispatch import dlpack as _dlpack
from ..dispatch.array import Array, from_flat, from_host_bytes
from ..dispatch.devices import default_device, placed
from ..dtypes import DType
from ..ir import scalar
from ..lax import lax
from . import extended_dtypes, util
from .shape import stack
from .ufuncs import power


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array with the values of `x`, any object with `__dlpack__` and `__dlpack_device__`
    (a NumPy array, another library's tensor), copied onto `device` (default: the default
    device, uncommitted)."""
    return _dlpack.from_dlpack(x, device, copy)


def _shape_and_leaves(obj: Any) -> tuple[tuple[int, ...], list[Any]]:
    if isinstance(obj, (list, tuple)):
        if not obj:
            return (0,), []
        parts = [_shape_and_leaves(o) for o in obj]
        shape = parts[0][0]
        if any(p[0] != shape for p in parts):
            raise ValueError(
                "setting an array element with a sequence. The requested array has an "
                "inhomogeneous shape."
            )
        return (len(obj),) + shape, [leaf for p in parts for leaf in p[1]]
    return (), [obj]


def _numpy_like(obj: Any) -> bool:
    return hasattr(obj, "__array_interface__") or type(obj).__module__ == "numpy"


def _from_numpy(obj: Any, dtype: DType | None) -> Array:
    import numpy as np

    a = np.asarray(obj)
    src = dtypes.dtype(a.dtype.name) if a.dtype.name in dtypes.DType._by_name else None
    if src is None:
        raise TypeError(f"JAX does not support NumPy arrays of dtype {a.dtype}")
    dt = dtypes.canonicalize(dtype or src)
    if dt.name == "bfloat16" or (dt in dtypes.NARROW and src is not dt):
        values = [scalar.normalize(dt, v) for v in a.ravel().tolist()]  # rounded, as JAX
        return from_flat(values, a.shape, dt, default_device())
    shape = tuple(a.shape)  # ascontiguousarray would make 0-d arrays 1-d
    if dt in dtypes.NARROW:  # an ml_dtypes array: its values, exactly, in the carrier type
        data = np.ascontiguousarray(a.astype(dtypes.carrier(dt).name)).tobytes()
        return from_host_bytes(data, shape, dt, default_device())
    data = np.ascontiguousarray(a.astype(dt.name, copy=False)).tobytes()
    return from_host_bytes(data, shape, dt, default_device())


def asarray(
    a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None, device: Any = None
) -> Any:
    if extended_dtypes.is_extended(a):  # a key array is its own array
        return _extended_as(a, dtype)
    dt = None if dtype is None else dtypes.canonicalize_user(dtype, "asarray")
    if device is not None:
        return placed(asarray(a, dtype), device)
    if isinstance(a, (Array, core.Tracer)):
        if dt is dtypes.bool_ and util.aval(a).dtype.kind == "c":  # the real part, as JAX
            return lax.convert_element_type(a, dt)
        return a if dt is None else util.convert(a, dt, False)
    if hasattr(a, "__jax_array__"):
        return asarray(a.__jax_array__(), dtype)
    if util.is_scalar(a):
        weak = dt is None and type(a) is not builtins.bool
        _check_int_range(a, dt or dtypes.python_scalar_dtype(a), dt is not None)
        dt = dt or dtypes.python_scalar_dtype(a)
        return from_flat([scalar.normalize(dt, a)], (), dt, default_device(), weak)
    if _numpy_like(a):
        return _from_numpy(a, dt)
    if isinstance(a, (list, tuple)):
        return _from_sequence(a, dt)
    raise TypeError(f"Value {a!r} of type {type(a).__name__} is not a valid JAX type")


def _extended_as(a: Any, dtype: Any) -> Any:
    if dtype is None or dtype == a.dtype:
        return a
    raise ValueError(f"Cannot convert_element_type from {a.dtype} to {dtypes.dtype(dtype)}")


dtypes._array_constructor = asarray
array_mod.install_asarray(asarray)


def _from_sequence(a: Sequence[Any], dt: DType | None) -> Any:
    flat_arrays = _contains_arrays(a)
    if flat_arrays:
        return stack([asarray(x, dt) for x in a])
    shape, leaves = _shape_and_leaves(a)
    explicit = dt is not None
    if dt is None:
        if not leaves:
            dt = dtypes.default_float()
        else:
            pairs = []
            for v in leaves:
                if _numpy_like(v):
                    v = v.item()
                pairs.append((dtypes.python_scalar_dtype(v), False))
            dt, _ = dtypes.result_type(*pairs)
    for v in leaves:
        _check_int_range(v, dt, explicit)
    values = [scalar.normalize(dt, v.item() if _numpy_like(v) else v) for v in leaves]
    if len(values) == 1 and shape == ():
        return from_flat(values, (), dt, default_device())
    if len(values) == 1:
        values = values  # a 1-element array is still uploaded lazily as a constant
    return from_flat(values, shape, dt, default_device())


def _check_int_range(v: Any, dt: DType, explicit: bool) -> None:
    """JAX's OverflowError for a Python int that the integer type `dt` cannot hold (instead
    of wrapping around)."""
    if type(v) is not int or dt.kind not in "iu":
        return
    lo, hi = dtypes.iinfo_bounds(dt)
    if not lo <= v <= hi:
        if explicit:
            raise OverflowError(f"Python integer {v} out of bounds for {dt.name}")
        raise OverflowError(f"Python int {v} too large to convert to {dt.name}")


def _contains_arrays(a: Any) -> bool:
    if isinstance(a, (list, tuple)):
        return any(_contains_arrays(x) for x in a)
    return isinstance(a, (Array, core.Tracer)) or (_numpy_like(a) and getattr(a, "ndim", 0) > 0)


def array(
    object: Any,
    dtype: Any = None,
    copy: bool = True,
    order: Any = None,
    ndmin: int = 0,
    *,
    device: Any = None,
) -> Any:
    if extended_dtypes.is_extended(object) and not ndmin:
        return _extended_as(object, dtype)
    if dtype is not None:
        dtype = dtypes.canonicalize_user(dtype, "array")
    if isinstance(object, (list, tuple)) and _contains_arrays(object):
        # mixed nested sequences of arrays and scalars: build each level, then stack
        object = [array(o, dtype, ndmin=0) if isinstance(o, (list, tuple)) else o for o in object]
    out = asarray(object, dtype, device=device)
    if util.aval(out).weak_type and isinstance(object, (list, tuple)):
        out = util.convert(out, util.aval(out).dtype)  # sequences give strongly typed arrays
    nd = util.aval(out).ndim
    if ndmin > nd:
        out = lax.reshape(out, (1,) * (ndmin - nd) + util.aval(out).shape)
    return out


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    util.check_arraylike("full", fill_value)
    shape = core.canonicalize_shape(shape)
    if dtype is not None:
        dtype = dtypes.canonicalize_user(dtype, "full")
    if not util.is_scalar(fill_value):
        fill = asarray(fill_value, dtype)
        return placed(util.broadcast_to(fill, shape), device)
    return placed(lax.full(shape, fill_value, dtype), device)


def zeros(shape: Any, dtype: Any = None, *, device: Any = None, _name: str = "zeros") -> Any:
    dt = dtypes.canonicalize_user(dtype, _name) if dtype is not None else dtypes.default_float()
    return placed(lax.full(core.canonicalize_shape(shape), 0, dt), device)


def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    dt = dtypes.canonicalize_user(dtype, "ones") if dtype is not None else dtypes.default_float()
    return placed(lax.full(core.canonicalize_shape(shape), 1, dt), device)


def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    return zeros(shape, dtype, device=device, _name="empty")


def _like(x: Any, dtype: Any, shape: Any, name: str) -> tuple[tuple[int, ...], DType]:
    av = util.aval(x)
    dt = dtypes.canonicalize_user(dtype, name) if dtype is not None else av.dtype
    return (av.shape if shape is None else core.canonicalize_shape(shape)), dt


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    if not (hasattr(a, "dtype") and hasattr(a, "shape")):  # duck-typed, as in JAX
        util.check_arraylike("zeros_like", a)
    s, dt = _like(a, dtype, shape, "zeros_like")
    return placed(lax.full(s, 0, dt), device)


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    if not (hasattr(a, "dtype") and hasattr(a, "shape")):  # duck-typed, as in JAX
        util.check_arraylike("ones_like", a)
    s, dt = _like(a, dtype, shape, "ones_like")
    return placed(lax.full(s, 1, dt), device)


def full_like(
    a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *, device: Any = None
) -> Any:
    if hasattr(a, "dtype") and hasattr(a, "shape"):  # duck-typed, as in JAX
        util.check_arraylike("full_like", 0, fill_value)
    else:
        util.check_arraylike("full_like", a, fill_value)
    s, dt = _like(a, dtype, shape, "full_like")
    return placed(lax.full(s, fill_value, dt), device)


def arange(
    start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *, device: Any = None
) -> Any:
    return placed(_arange(start, stop, step, dtype), device)


def _arange(start: Any, stop: Any, step: Any, dtype: Any) -> Any:
    util.check_arraylike_or_none("arange", start, stop, step)
    for v in (start, stop, step):
        if isinstance(v, core.Tracer):
            raise core.ConcretizationTypeError(
                "jax.numpy.arange requires concrete (non-traced) start, stop and step values."
            )
    start, stop, step = (None if v is None else _host_scalar(v) for v in (start, stop, step))
    if any(isinstance(v, complex) for v in (start, stop, step)):
        raise ValueError(
            "Passing complex start/stop/step to jnp.arange is no longer supported "
            "starting in JAX v0.10.0."
        )
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ValueError("arange: step cannot be zero")
    if dtype is None:
        pairs = [(dtypes.python_scalar_dtype(v), False) for v in (start, stop, step)]
        dt, _ = dtypes.result_type(*pairs)
    else:
        dt = dtypes.canonicalize_user(dtype, "arange")
    n = builtins.max(0, math.ceil((stop - start) / step))
    if dt.kind == "c":  # the real range, then complex
        return util.convert(_arange(start, stop, step, dtypes.component(dt)), dt)
    if all(isinstance(v, int) for v in (start, step)) or dt.kind in "iu":
        # exact: a lazy iota, scaled and shifted in the target dtype
        out = lax.iota(dt, n)
        if step != 1:
            out = lax.mul(out, lax.full((), step, dt))
        if start != 0:
            out = lax.add(out, lax.full((), start, dt))
        return out
    # JAX's float arange: start + step * i, each operation rounded to the working dtype
    # (float32 for the narrow floats), then converted
    wt = dtypes.float32 if dt.kind == "f" and dt.itemsize < 4 else dt
    w0, ws = scalar.normalize(wt, start), scalar.normalize(wt, step)
    values = [
        scalar.cast(scalar.normalize(wt, w0 + scalar.normalize(wt, ws * i)), wt, dt)
        for i in range(n)
    ]
    return from_flat(values, (n,), dt, default_device())


def _host_scalar(v: Any) -> Any:
    if isinstance(v, Array):
        return v.item()
    if _numpy_like(v):
        return v.item()
    return v


def _linspace_dtypes(name: str, start: Any, stop: Any, dtype: Any) -> tuple[DType, DType]:
    """(result dtype, computation dtype): the inexact type of the bounds unless given."""
    if dtype is None:
        dt, _ = util.result_type(start, stop)
        dt = dtypes.to_inexact(dt)
    else:
        dt = dtypes.canonicalize_user(dtype, name)
    return dt, dtypes.to_inexact(dt)


def _real_part_dtype(dt: DType) -> DType:
    if dt.kind != "c":
        return dt
    return dtypes.float64 if dt.itemsize == 16 else dtypes.float32


def _round_f32(x: Fraction) -> float:
    """x rounded to the nearest float32 (ties to even), from the exact value."""
    c = scalar.normalize(dtypes.float32, float(x))
    if not math.isfinite(c):
        return c
    bits = struct.unpack("<i", struct.pack("<f", c))[0]
    best, best_err = c, abs(Fraction(c) - x)
    for nb in (bits - 1, bits + 1):
        v = struct.unpack("<f", struct.pack("<i", nb))[0]
        if not math.isfinite(v):
            continue
        err = abs(Fraction(v) - x)
        if err < best_err or (err == best_err and nb % 2 == 0):
            best, best_err = v, err
    return best


def _fma_f32(x: float, y: float, z: float) -> float:
    """x * y + z rounded once to float32 (x, y, z float32 values)."""
    p = x * y  # exact in float64: 24 + 24 significant bits
    s = p + z
    if not math.isfinite(s):
        return scalar.normalize(dtypes.float32, s)
    if (s - p) - z == 0 and s - (s - p) == p:  # the float64 sum is exact: one rounding
        return scalar.normalize(dtypes.float32, s)
    return _round_f32(Fraction(p) + Fraction(z))


def _xla_cpu_linspace_f32(a: float, b: float, div: int) -> list[float]:
    """The div samples JAX gives for float32 scalar bounds, as XLA's CPU compiler evaluates
    start * (1 - t) + stop * t, t = iota / div: the division becomes a multiplication by
    r = 1 / div, stop * (iota * r) is reassociated to (stop * r) * iota, and the sum is
    contracted into a fused multiply-add, fma(stop * r, i, start * (1 - i * r)); in the
    unrolled form it takes for div <= 32, sample 1 (where the multiplication by i = 1 folds
    away) is fma(start, 1 - r, stop * r) instead. Checked against JAX 0.10 on CPU over a grid
    of bounds and sizes (tests/test_linspace_bits.py)."""
    f32 = dtypes.float32

    def r(v: float) -> float:
        return scalar.normalize(f32, v)

    rec = r(1.0 / div)
    br = r(b * rec)
    out = []
    for i in range(div):
        if i == 0:
            out.append(_fma_f32(br, 0.0, a))
        elif i == 1 and div <= 32:
            out.append(_fma_f32(a, r(1.0 - rec), br))
        else:
            out.append(_fma_f32(br, float(i), r(a * r(1.0 - r(i * rec)))))
    return out


def _host_linspace(start: Any, stop: Any, num: int, endpoint: bool, cdt: DType) -> list[Any]:
    """The samples as JAX computes them, each operation rounded to the computation dtype:
    start * (1 - t) + stop * t with t = i / div in the real dtype (the ends come out exact),
    then stop itself as the last sample with `endpoint`. Complex bounds: part by part."""
    if cdt.kind == "c":
        rdt = _real_part_dtype(cdt)
        re = _host_linspace(complex(start).real, complex(stop).real, num, endpoint, rdt)
        im = _host_linspace(complex(start).imag, complex(stop).imag, num, endpoint, rdt)
        return [complex(r, i) for r, i in zip(re, im, strict=True)]

    def r(v: float) -> float:
        return scalar.normalize(cdt, v)

    a, b = r(start), r(stop)
    if num == 1:
        return [a]
    div = num - 1 if endpoint else num
    if cdt is dtypes.float32 and div > 0:
        return [*_xla_cpu_linspace_f32(a, b, div), *([b] if endpoint else [])]
    d = r(div)
    out = []
    for i in range(div):
        t = r(r(i) / d)
        out.append(r(r(a * r(1.0 - t)) + r(b * t)))
    return [*out, b] if endpoint else out


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Any:
    out = _linspace(start, stop, num, endpoint, retstep, dtype, axis)
    return (placed(out[0], device), out[1]) if retstep else placed(out, device)


def _linspace(
    start: Any, stop: Any, num: int, endpoint: bool, retstep: bool, dtype: Any, axis: int
) -> Any:
    util.check_arraylike("linspace", start, stop)
    num = core.concrete_or_error(operator.index, num, "'num' argument of jnp.linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dt, cdt = _linspace_dtypes("linspace", start, stop, dtype)
    div = (num - 1) if endpoint else num
    scalars = all(
        not isinstance(v, core.Tracer) and util.aval(v).shape == () for v in (start, stop)
    )
    hs, he = (_host_scalar(start), _host_scalar(stop)) if scalars else (None, None)
    if isinstance(hs, (int, float, complex)) and isinstance(he, (int, float, complex)):
        values = _host_linspace(hs, he, num, endpoint, cdt)
        if dt.kind in "iub":
            values = [math.floor(v) for v in values]
        conv = scalar.normalize if dt.kind in "fc" else (lambda d, v: scalar.cast(v, cdt, d))
        out = from_flat([conv(dt, v) for v in values], (num,), dt, default_device())
        a, b = scalar.normalize(cdt, hs), scalar.normalize(cdt, he)
        if num > 1:
            width = scalar.normalize(cdt, b - a)
            delta: Any = scalar.normalize(cdt, width / scalar.normalize(cdt, div))
        else:
            delta = math.nan if endpoint or num == 0 else scalar.normalize(cdt, b - a)
        return (out, lax.full((), delta, cdt)) if retstep else out
    out, delta = _array_linspace(start, stop, num, endpoint, div, axis, cdt)
    if dt.kind in "iub":
        out = lax.floor(out)
    out = lax.convert_element_type(out, dt)
    return (out, delta) if retstep else out


def _array_linspace(
    start: Any, stop: Any, num: int, endpoint: bool, div: int, axis: int, cdt: DType
) -> tuple[Any, Any]:
    """linspace of array bounds (samples along a new `axis`), with lax in the computation
    dtype, operation for operation as the host path."""
    start = util.convert(util.ensure_array(start), cdt)
    stop = util.convert(util.ensure_array(stop), cdt)
    shape = list(util.broadcast_shapes(util.aval(start).shape, util.aval(stop).shape))
    start, stop = util.broadcast_to(start, shape), util.broadcast_to(stop, shape)
    axis = axis + len(shape) + 1 if axis < 0 else axis
    bshape = [*shape[:axis], 1, *shape[axis:]]
    start, stop = lax.reshape(start, tuple(bshape)), lax.reshape(stop, tuple(bshape))
    if num == 0:
        out_shape = tuple(bshape[:axis] + [0] + bshape[axis + 1 :])
        return lax.full(out_shape, 0, cdt), lax.full((), math.nan, cdt)
    if num == 1:
        nan_or_width = lax.full((), math.nan, cdt) if endpoint else lax.sub(stop, start)
        return start, nan_or_width
    rdt = _real_part_dtype(cdt)
    t = lax.div(lax.convert_element_type(lax.iota(dtypes.int32, div), rdt), lax.full((), div, rdt))
    tshape = [1] * len(bshape)
    tshape[axis] = div
    t = lax.convert_element_type(lax.reshape(t, tuple(tshape)), cdt)
    full = [*bshape[:axis], div, *bshape[axis + 1 :]]
    t = util.broadcast_to(t, full)
    one = lax.full((), 1, cdt)
    out = lax.add(
        lax.mul(util.broadcast_to(start, full), lax.sub(one, t)),
        lax.mul(util.broadcast_to(stop, full), t),
    )
    if endpoint:
        out = lax.concatenate([out, stop], axis)
    delta = lax.div(lax.sub(stop, start), lax.full((), div, cdt))
    return out, lax.squeeze(delta, (axis,))


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None, *, device: Any = None) -> Any:
    return placed(_eye(N, M, k, dtype, "eye"), device)


def _eye(N: int, M: int | None, k: int, dtype: Any, _name: str) -> Any:
    util.check_arraylike(_name, N)
    M = N if M is None else M
    dt = dtypes.canonicalize_user(dtype, _name) if dtype is not None else dtypes.default_float()
    rows = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    if k:
        rows = lax.add(rows, lax.full((), k, dtypes.int32))
    return lax.convert_element_type(lax.eq(rows, cols), dt)


def identity(n: int, dtype: Any = None) -> Any:
    return _eye(n, None, 0, dtype, "identity")


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    exps = linspace(start, stop, num, endpoint, dtype=None if dtype is None else dtype)
    dt = util.aval(exps).dtype
    out = power(lax.full((), _host_scalar(base), dt if dt.kind in "fc" else None), exps)
    return util.convert(out, dtypes.canonicalize(dtypes.dtype(dtype))) if dtype is not None else out


def geomspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0
) -> Any:
    import cmath

    start, stop = _host_scalar(start), _host_scalar(stop)
    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    # both real parts negative: the sequence of the negated ends, negated (NumPy's convention)
    sign = -1.0 if complex(start).real < 0 and complex(stop).real < 0 else 1.0
    if isinstance(start, complex) or isinstance(stop, complex):
        lo, hi = (cmath.log10(sign * complex(v)) for v in (start, stop))
        if dtype is None:
            dtype = dtypes.default_complex()
    else:
        lo, hi = (math.log10(abs(v)) for v in (start, stop))
    out = logspace(lo, hi, num, endpoint, 10.0, dtype)
    return lax.mul(out, lax.full((), sign, util.aval(out).dtype)) if sign < 0 else out


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    if extended_dtypes.is_extended(x):
        return _extended_as(x, dtype)
    util.check_arraylike("astype", x)
    x = util.ensure_array(x)
    if dtype is None:
        dtype = dtypes.default_float()
    return placed(util.convert(x, dtypes.canonicalize_user(dtype, "astype")), device)


@extended_dtypes.moves_elements
def copy(a: Any, order: Any = None) -> Any:
    util.check_arraylike("copy", a)
    return array(a, copy=True)


def size(a: Any, axis: int | None = None) -> int:
    shape = util.aval(a).shape
    return math.prod(shape) if axis is None else shape[util.canonical_axis(axis, len(shape))]


def shape(a: Any) -> tuple[int, ...]:
    return util.aval(a).shape


def ndim(a: Any) -> int:
    return util.aval(a).ndim


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    if not (
        hasattr(prototype, "dtype") and hasattr(prototype, "shape")
    ):  # JAX reports ones_like here
        util.check_arraylike("ones_like", prototype)
    return zeros_like(prototype, dtype, shape, device=device)


# ---- from bytes, text and iterators ------------------------------------------------------------
# bfloat16 is read as its 16 bits (the top half of a float32) and widened below.
_STRUCT_CODES = {**dtypes.STRUCT_FORMATS, "bfloat16": "H"}


def _host_dtype(dtype: Any) -> DType:
    """The dtype NumPy reads: Python's float and int mean 64-bit (canonicalized afterwards)."""
    if dtype is builtins.float:
        return dtypes.float64
    if dtype is builtins.int:
        return dtypes.int64
    return dtypes.dtype(dtype)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """Elements of `dtype` (little-endian, before canonicalization: float means 8-byte
    float64 even without x64, as NumPy reads it) from a bytes-like object."""
    import struct

    src = _host_dtype(dtype)
    data = memoryview(buffer).cast("B")
    if offset < 0 or offset > len(data):
        raise ValueError(
            f"offset must be non-negative and no greater than buffer length ({len(data)})"
        )
    data = data[offset:]
    size = src.itemsize
    if count < 0:
        if len(data) % size:
            raise ValueError("buffer size must be a multiple of element size")
        count = len(data) // size
    elif count * size > len(data):
        raise ValueError("buffer is smaller than requested size")
    if src.kind == "c":  # (real, imaginary) pairs
        code = "d" if src is dtypes.complex128 else "f"
        parts = struct.unpack(f"<{2 * count}{code}", bytes(data[: count * size]))
        raw: tuple[Any, ...] = tuple(
            complex(parts[i], parts[i + 1]) for i in range(0, 2 * count, 2)
        )
    else:
        raw = struct.unpack(f"<{count}{_STRUCT_CODES[src.name]}", bytes(data[: count * size]))
    values: list[Any] = list(raw)
    if src.name == "bfloat16":  # the top half of a float32
        values = [struct.unpack("<f", struct.pack("<I", v << 16))[0] for v in values]
    dt = dtypes.canonicalize(src)
    return from_flat([scalar.normalize(dt, v) for v in values], (count,), dt, default_device())


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """Numbers in text separated by `sep` (any whitespace when `sep` is blank)."""
    if sep == "":
        raise ValueError("The binary mode of fromstring is removed, use frombuffer instead")
    src = _host_dtype(dtype)
    parts = string.split() if not sep.strip() else string.split(sep.strip())
    tokens = [p.strip() for p in parts]
    if tokens and tokens[-1] == "":
        tokens.pop()
    values: list[Any] = []
    for t in tokens:
        if count >= 0 and len(values) == count:
            break
        try:
            values.append(
                builtins.bool(int(t))
                if src.kind == "b"
                else int(t)
                if src.kind in "iu"
                else float(t)
            )
        except ValueError:
            raise ValueError(
                f"string {string!r} could not be parsed as {src.name} values separated by {sep!r}"
            ) from None
    if count >= 0 and len(values) < count:
        raise ValueError("string is smaller than requested size")
    dt = dtypes.canonicalize(src)
    return from_flat(
        [scalar.normalize(dt, v) for v in values], (len(values),), dt, default_device()
    )


def fromiter(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other JAX transformations. Consider using jnp.asarray(list(...)) instead."
    )


def fromfile(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other JAX transformations. Read the bytes and use jnp.frombuffer instead."
    )
