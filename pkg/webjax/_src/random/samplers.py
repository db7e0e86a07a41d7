"""jax.random's samplers: bits, uniform, normal, discrete and gamma-family draws from the
threefry bits of a key (`keys`), bit-exact with JAX.

Bits come from `prng` (threefry2x32, partitionable counters). Each sampler follows the
algorithm JAX documents for it (uniform: mantissa bits of [1, 2) minus one; normal: inverse erf
of a uniform; randint: two draws reduced modulo the span; gamma: Marsaglia-Tsang with one key
per element; ...), so the same key, shape and dtype give the same values as JAX. Samplers are
jitted with static shape and dtype, as in JAX.

Where we differ from JAX on purpose: uniform builds its [0, 1) values as `k * 2**-nmant` instead
of bit-casting `k | bits(1.0)` and subtracting one; both are exact, so the values are identical.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import config, core, dtypes
from ..dtypes import DType
from ..jit import jit
from ..lax import control_flow, lax, sorting
from ..numpy import creation
from ..numpy.indexing import _one_hot_gather
from ..vmap import vmap
from . import threefry as prng
from .keys import _U32, _asarray, _single_key, _split_data, _split_jit, _words

_UINT = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}
# dtype name -> (bits, mantissa bits, smallest normal); JAX's finfo values.
_FINFO = {
    "float16": (16, 10, 2.0**-14),
    "bfloat16": (16, 7, 2.0**-126),
    "float32": (32, 23, 2.0**-126),
    "float64": (64, 52, 2.0**-1022),
}


# ---- bits ---------------------------------------------------------------------------------------
def _bits_data(data: Any, nbits: int, shape: tuple[int, ...]) -> Any:
    """`nbits` random bits per element, as the unsigned dtype of that width."""
    k0, k1 = _words(data)
    if nbits == 64:
        hi, lo = prng.bits64_words(k0, k1, shape)
        u64 = dtypes.uint64
        hi64 = lax.shift_left(lax.convert_element_type(hi, u64), lax.full((), 32, u64))
        return lax.bitwise_or(hi64, lax.convert_element_type(lo, u64))
    out = prng.bits32(k0, k1, shape)
    return out if nbits == 32 else lax.convert_element_type(out, _UINT[nbits])


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random bits of an unsigned dtype (uint32 by default)."""
    data, _ = _single_key("bits", key)
    dt = _canonical(dtype if dtype is not None else _U32)
    if dt.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt.name}")
    return _bits_jit(data, dt.bits, core.canonicalize_shape(shape))


_bits_jit = jit(_bits_data, static_argnums=(1, 2))


# ---- dtypes, constants and shapes of parameters ------------------------------------------------
def _canonical(dtype: Any) -> DType:
    return dtypes.canonicalize(dtypes.dtype(dtype))


def _float_dtype(name: str, dtype: Any) -> DType:
    dt = _canonical(dtype)
    if dt.kind != "f":
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt.name}")
    return dt


def _const(v: Any, dt: DType) -> Any:
    """A 0-d constant of dtype `dt` that survives being a jaxpr literal (see `prng.u32`)."""
    if dt in (dtypes.float32, dtypes.int32, dtypes.bool_):
        return lax.full((), v, dt)
    if dt is _U32:
        return prng.u32(int(v))
    src = dtypes.default_float() if dt.kind == "f" else dtypes.default_int()
    if dt.kind in "iu":
        v = int(v)
    if dt.bits == 64:  # x64: Python scalars are 64-bit already
        return lax.full((), v, dt)
    return lax.convert_element_type_p.bind(lax.full((), v, src), new_dtype=dt, weak_type=False)


def _full(shape: tuple[int, ...], v: Any, dt: DType) -> Any:
    return lax.broadcast(_const(v, dt), shape)


def _to(x: Any, dt: DType, shape: tuple[int, ...]) -> Any:
    """`x` converted to `dt` and broadcast (numpy-style, trailing axes) to `shape`."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return _full(shape, x, dt)
    x = lax.convert_element_type(_asarray(x), dt)
    xs = core.get_aval(x).shape
    if xs == shape:
        return x
    if len(xs) > len(shape):
        raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested {shape}")
    lead = len(shape) - len(xs)
    squeeze = tuple(i for i, n in enumerate(xs) if n == 1 and shape[lead + i] != 1)
    x = lax.reshape(x, tuple(n for i, n in enumerate(xs) if i not in squeeze))
    dims = tuple(lead + i for i in range(len(xs)) if i not in squeeze)
    for i, d in zip(range(len(xs)), range(lead, len(shape))):
        if i not in squeeze and xs[i] != shape[d]:
            raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested {shape}")
    return lax.broadcast_in_dim(x, shape, dims)


def _shape_of(x: Any) -> tuple[int, ...]:
    if isinstance(x, (int, float, bool)):
        return ()
    return tuple(core.get_aval(_asarray(x)).shape)


def _broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        sizes = {s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: {shapes}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if param_shapes:
        joint = _broadcast_shapes(shape, *param_shapes)
        if joint != shape:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
                f"the result of broadcasting the shapes must equal the shape argument, but got "
                f"result {joint} for shape argument {shape}."
            )


# ---- continuous samplers ------------------------------------------------------------------------
def _uniform01(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    """Uniform [0, 1): the top `nmant` of the random bits, scaled by 2**-nmant (exact)."""
    nbits, nmant, _ = _FINFO[dt.name]
    rng_bits = nbits if nmant >= 8 else 8  # JAX draws a byte for bfloat16
    if rng_bits == 64:
        k0, k1 = _words(data)
        hi, lo = prng.bits64_words(k0, k1, shape)  # 52 bits = hi * 2**20 + lo >> 12
        top = lax.add(
            lax.mul(lax.convert_element_type(hi, dt), _const(2.0**20, dt)),
            lax.convert_element_type(lax.shift_right_logical(lo, prng.u32(12)), dt),
        )
        return lax.mul(top, _const(2.0**-52, dt))
    k0, k1 = _words(data)
    b = prng.bits32(k0, k1, shape)
    if rng_bits < 32:
        b = lax.bitwise_and(b, prng.u32(2**rng_bits - 1))
    m = lax.shift_right_logical(b, prng.u32(rng_bits - nmant))
    return lax.mul(lax.convert_element_type(m, dt), _const(2.0**-nmant, dt))


def _split12(x: Any) -> tuple[Any, Any]:
    """Veltkamp's split of a float32 into two halves of at most 12 significant bits."""
    t = lax.mul(x, _full(core.get_aval(x).shape, 4097.0, dtypes.float32))
    hi = lax.sub(t, lax.sub(t, x))
    return hi, lax.sub(x, hi)


def _fma32(a: Any, b: Any, c: Any) -> Any:
    """a * b + c rounded once (to nearest except in rare near-ties), in plain float32 ops.

    XLA's CPU and GPU compilers contract JAX's `floats * (maxval - minval) + minval` into a
    fused multiply-add, so matching JAX's values needs one. Dekker's exact product
    (p + e == a * b) and Knuth's two-sum (s + r == p + c) leave s + (r + e).
    """
    p = lax.mul(a, b)
    (ah, al), (bh, bl) = _split12(a), _split12(b)
    e = lax.add(lax.sub(lax.mul(ah, bh), p), lax.mul(ah, bl))
    e = lax.add(lax.add(e, lax.mul(al, bh)), lax.mul(al, bl))
    s = lax.add(p, c)
    bb = lax.sub(s, p)
    r = lax.add(lax.sub(p, lax.sub(s, bb)), lax.sub(c, bb))
    fused = lax.add(s, lax.add(r, e))
    return lax.select(lax.is_finite(fused), fused, s)  # inf/nan: the plain result


def _is_number(v: Any, x: float) -> bool:
    """Whether `v` is the Python number `x` (not an array: a traced bound is data)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == x


def _uniform_impl(data: Any, shape: tuple[int, ...], dt: DType, minval: Any, maxval: Any) -> Any:
    floats = _uniform01(data, shape, dt)
    if _is_number(minval, 0) and _is_number(maxval, 1):
        return floats  # u * 1 + 0 is u, exactly (XLA folds the constant bounds away too)
    lo, hi = _to(minval, dt, shape), _to(maxval, dt, shape)
    span = lax.sub(hi, lo)
    if dt is dtypes.float32:
        scaled = _fma32(floats, span, lo)
    else:  # 16-bit floats compute in float32, where their product is exact
        scaled = lax.add(lax.mul(floats, span), lo)
    return lax.max(lo, scaled)


_uniform_jit = jit(_uniform_impl, static_argnums=(1, 2))


def uniform(
    key: Any, shape: Sequence[int] = (), dtype: Any = float, minval: Any = 0.0, maxval: Any = 1.0
) -> Any:
    """Uniform floats in [minval, maxval)."""
    data, _ = _single_key("uniform", key)
    dt = _float_dtype("uniform", dtype)
    shape = core.canonicalize_shape(shape)
    _check_shape("uniform", shape, _shape_of(minval), _shape_of(maxval))
    return _uniform_jit(data, shape, dt, minval, maxval)


def _normal_impl(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    _, nmant, _ = _FINFO[dt.name]
    lo = -1.0 + 2.0 ** -(nmant + 1)  # nextafter(-1, 0): the open interval keeps erf_inv finite
    u = _uniform_impl(data, shape, dt, lo, 1.0)
    return lax.mul(_const(math.sqrt(2), dt), lax.erf_inv(u))


_normal_jit = jit(_normal_impl, static_argnums=(1, 2))


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = float) -> Any:
    """Standard normal floats: sqrt(2) * erf_inv(u) for u uniform in (-1, 1)."""
    data, _ = _single_key("normal", key)
    shape = core.canonicalize_shape(shape)
    cdt = _canonical(dtype)
    if cdt.kind == "c":  # real and imaginary parts from two subkeys, each of variance 1/2
        dt = dtypes.component(cdt)
        keys = _split_jit(data, (2,))
        re = _normal_jit(keys[0], shape, dt)
        im = _normal_jit(keys[1], shape, dt)
        scale = lax.full((), 1.0 / math.sqrt(2.0), dt)
        return lax.complex(lax.mul(re, scale), lax.mul(im, scale))
    dt = _float_dtype("normal", dtype)
    return _normal_jit(data, shape, dt)


def _truncated_normal_impl(
    data: Any, lower: Any, upper: Any, shape: tuple[int, ...], dt: DType
) -> Any:
    sqrt2 = _const(math.sqrt(2), dt)
    lower, upper = _to(lower, dt, shape), _to(upper, dt, shape)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    out = lax.mul(sqrt2, lax.erf_inv(_uniform_impl(data, shape, dt, a, b)))
    # Clamp to the open interval: rounding (or u == a) must not reach the bounds.
    lo = lax.nextafter(lax.stop_gradient(lower), _full(shape, math.inf, dt))
    hi = lax.nextafter(lax.stop_gradient(upper), _full(shape, -math.inf, dt))
    return lax.min(lax.max(out, lo), hi)


_truncated_normal_jit = jit(_truncated_normal_impl, static_argnums=(3, 4))


def truncated_normal(
    key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None, dtype: Any = float
) -> Any:
    """Standard normal floats truncated to (lower, upper), by inverting the CDF."""
    data, _ = _single_key("truncated_normal", key)
    dt = _float_dtype("truncated_normal", dtype)
    pshapes = (_shape_of(lower), _shape_of(upper))
    if shape is None:
        shape = _broadcast_shapes(*pshapes)
    else:
        shape = core.canonicalize_shape(shape)
        _check_shape("truncated_normal", shape, *pshapes)
    return _truncated_normal_jit(data, lower, upper, shape, dt)


def _tiny_uniform(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    """Uniform [tiny, 1), as XLA computes JAX's uniform(minval=tiny, maxval=1) with constant
    bounds: the span 1 - tiny rounds to 1, and u * 1 + tiny reassociates to the mantissa's
    (1 + u) - 1 (tiny is lost), so the draw is max(tiny, u). Visible in float16, where tiny is
    6.1e-5 and u a multiple of 2**-10."""
    return lax.max(_const(_FINFO[dt.name][2], dt), _uniform01(data, shape, dt))


def _gumbel_impl(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    return lax.neg(lax.log(lax.neg(lax.log(_tiny_uniform(data, shape, dt)))))


def _exponential_impl(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    return lax.neg(lax.log1p(lax.neg(_uniform_impl(data, shape, dt, 0.0, 1.0))))


def _laplace_impl(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    epsneg = 2.0 ** -(_FINFO[dt.name][1] + 1)
    u = _uniform_impl(data, shape, dt, -1.0 + epsneg, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic_impl(data: Any, shape: tuple[int, ...], dt: DType) -> Any:
    x = _tiny_uniform(data, shape, dt)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


_gumbel_jit = jit(_gumbel_impl, static_argnums=(1, 2))
_exponential_jit = jit(_exponential_impl, static_argnums=(1, 2))
_laplace_jit = jit(_laplace_impl, static_argnums=(1, 2))
_logistic_jit = jit(_logistic_impl, static_argnums=(1, 2))


def _simple(name: str, impl: Any, doc: str) -> Any:
    def sampler(key: Any, shape: Sequence[int] = (), dtype: Any = float, **kw: Any) -> Any:
        if kw.get("mode", "low") not in (None, "low"):
            raise NotImplementedError(f"{name} mode={kw['mode']!r} (webjax has mode='low')")
        data, _ = _single_key(name, key)
        return impl(data, core.canonicalize_shape(shape), _float_dtype(name, dtype))

    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = doc
    return sampler


gumbel = _simple("gumbel", _gumbel_jit, "Standard Gumbel floats: -log(-log(u)).")
exponential = _simple("exponential", _exponential_jit, "Exponential(1) floats: -log1p(-u).")
laplace = _simple("laplace", _laplace_jit, "Standard Laplace floats: sign(u) log1p(-|u|).")
logistic = _simple("logistic", _logistic_jit, "Standard logistic floats: log(u / (1 - u)).")


# ---- discrete samplers --------------------------------------------------------------------------
def _int_range(dt: DType) -> tuple[int, int]:
    if dt.kind == "b":
        return 0, 1
    if dt.kind == "u":
        return 0, 2**dt.bits - 1
    return -(2 ** (dt.bits - 1)), 2 ** (dt.bits - 1) - 1


def _convert_and_clip(x: Any, dt: DType) -> Any:
    """Convert integers to `dt`, saturating at the range both dtypes share."""
    src = core.get_aval(x).dtype
    (slo, shi), (tlo, thi) = _int_range(src), _int_range(dt)
    lo, hi = max(slo, tlo), min(shi, thi)
    if (lo, hi) != (slo, shi):
        x = lax.min(lax.max(x, _const(lo, src)), _const(hi, src))
    return lax.convert_element_type(x, dt)


def _int_operand(x: Any) -> Any:
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, int):
        if not -(2**31) <= x < 2**31 and not config.x64_enabled():
            raise OverflowError(f"Python int {x} too large to convert to int32")
        return _const(x, dtypes.default_int())
    x = _asarray(x)
    if core.get_aval(x).dtype.kind not in "iu":
        x = lax.convert_element_type(x, dtypes.default_int())
    return x


def _randint_impl(data: Any, shape: tuple[int, ...], minval: Any, maxval: Any, dt: DType) -> Any:
    nbits = dt.bits
    udt = _UINT[nbits]
    maxval_src = core.get_aval(maxval).dtype
    too_big = lax.gt(maxval, _convert_and_clip(_const(_int_range(dt)[1], dt), maxval_src))
    lo = _to(_convert_and_clip(minval, dt), dt, shape)
    hi = _to(_convert_and_clip(maxval, dt), dt, shape)
    too_big = _to(too_big, dtypes.bool_, shape)
    keys = _split_data(data, (2,))
    hi_bits = _bits_data(lax.reshape(lax.slice(keys, (0, 0), (1, 2)), (2,)), nbits, shape)
    lo_bits = _bits_data(lax.reshape(lax.slice(keys, (1, 0), (2, 2)), (2,)), nbits, shape)
    one = _full(shape, 1, udt)
    span = lax.convert_element_type(lax.sub(hi, lo), udt)
    span = lax.select(lax.le(hi, lo), one, span)  # an empty range always gives minval
    # a maxval beyond the dtype means the span is one larger (wrapping to 0 means "all values")
    span = lax.select(lax.bitwise_and(too_big, lax.gt(hi, lo)), lax.add(span, one), span)
    # (hi_bits * 2**(nbits) + lo_bits) mod span, without a wider type
    mult = lax.rem(_full(shape, 2 ** (nbits // 2), udt), span)
    mult = lax.rem(lax.mul(mult, mult), span)
    offset = lax.add(lax.mul(lax.rem(hi_bits, span), mult), lax.rem(lo_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(lo, lax.convert_element_type(offset, dt))


_randint_jit = jit(_randint_impl, static_argnums=(1, 4))


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = int) -> Any:
    """Integers uniform in [minval, maxval) (slightly biased when the span is not 2**k, as JAX)."""
    data, _ = _single_key("randint", key)
    dt = _canonical(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"randint only accepts integer dtypes, got {dt.name}")
    shape = core.canonicalize_shape(shape)
    _check_shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    lo, hi = _int_operand(minval), _int_operand(maxval)
    if dt.bits >= 32:
        return _randint_jit(data, shape, lo, hi, dt)
    # As JAX: 8- and 16-bit integers are drawn as int32 (less modulo bias), then cast.
    tlo, thi = _int_range(dt)
    i32 = dtypes.int32
    c = lambda v: lax.full((), v, i32)
    lo = lax.clamp(c(tlo), lax.convert_element_type(lo, i32), c(thi))
    hi = lax.clamp(c(tlo), lax.convert_element_type(hi, i32), c(thi + 1))
    return lax.convert_element_type(_randint_jit(data, shape, lo, hi, i32), dt)


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None, mode: str = "low") -> Any:
    """Booleans that are True with probability p: uniform(shape) < p."""
    data, _ = _single_key("bernoulli", key)
    if mode != "low":
        raise NotImplementedError(f"bernoulli mode={mode!r} (webjax has mode='low')")
    if isinstance(p, (int, float)) and not isinstance(p, bool):
        dt = dtypes.default_float()
    else:
        dt = _canonical(core.get_aval(_asarray(p)).dtype)
        if dt.kind != "f":
            raise ValueError(f"bernoulli probability `p` must have a floating dtype, got {dt.name}")
    pshape = _shape_of(p)
    if shape is None:
        shape = pshape
    else:
        shape = core.canonicalize_shape(shape)
        _check_shape("bernoulli", shape, pshape)
    return _bernoulli_jit(data, p, shape, dt)


def _bernoulli_impl(data: Any, p: Any, shape: tuple[int, ...], dt: DType) -> Any:
    return lax.lt(_uniform_impl(data, shape, dt, 0.0, 1.0), _to(p, dt, shape))


_bernoulli_jit = jit(_bernoulli_impl, static_argnums=(2, 3))


def _argmax(x: Any, axis: int) -> Any:
    """First index of the maximum along `axis` (NaN counts as the maximum, as in JAX)."""
    aval = core.get_aval(x)
    n = aval.shape[axis]
    keep = tuple(i for i in range(aval.ndim) if i != axis)
    nan = lax.ne(x, x)
    m = lax.reduce_max(x, (axis,))
    hit = lax.bitwise_or(lax.eq(x, lax.broadcast_in_dim(m, aval.shape, keep)), nan)
    any_nan = lax.reduce_or(nan, (axis,))
    hit = lax.select(lax.broadcast_in_dim(any_nan, aval.shape, keep), nan, hit)
    idx = lax.broadcasted_iota(dtypes.int32, aval.shape, axis)
    return lax.reduce_min(lax.select(hit, idx, _full(aval.shape, n, dtypes.int32)), (axis,))


def _categorical_impl(data: Any, logits: Any, axis: int, shape: tuple[int, ...]) -> Any:
    la = core.get_aval(logits)
    nb = la.ndim - 1
    prefix, tail = shape[: len(shape) - nb], list(shape[len(shape) - nb :])
    tail.insert(axis, la.shape[axis])
    full_shape = (*prefix, *tail)
    g = _gumbel_impl(data, full_shape, la.dtype)
    out = _argmax(lax.add(g, _to(logits, la.dtype, full_shape)), len(prefix) + axis)
    return lax.convert_element_type(out, dtypes.default_int())  # int64 under x64, as JAX


_categorical_jit = jit(_categorical_impl, static_argnums=(2, 3))


def categorical(
    key: Any,
    logits: Any,
    axis: int = -1,
    shape: Sequence[int] | None = None,
    replace: bool = True,
    mode: str | None = None,
) -> Any:
    """Indices drawn from softmax(logits) along `axis` (Gumbel-max)."""
    data, _ = _single_key("categorical", key)
    if not replace:
        raise NotImplementedError("random.categorical(replace=False) is not supported yet")
    if mode not in (None, "low"):
        raise NotImplementedError(f"categorical mode={mode!r} (webjax has mode='low')")
    logits = _asarray(logits)
    la = core.get_aval(logits)
    if la.dtype.kind != "f":  # JAX draws the Gumbel noise in the logits' dtype
        raise ValueError(f"dtype argument to `gumbel` must be a float dtype, got {la.dtype.name}")
    if not -la.ndim <= axis < la.ndim:
        raise ValueError(f"axis {axis} is out of bounds for logits of rank {la.ndim}")
    axis %= la.ndim
    if la.shape[axis] == 0:  # no category to draw (JAX's argmax error)
        raise ValueError("attempt to get argmax of an empty sequence")
    batch = tuple(n for i, n in enumerate(la.shape) if i != axis)
    if shape is None:
        shape = batch
    else:
        shape = core.canonicalize_shape(shape)
        _check_shape("categorical", shape, batch)
    return _categorical_jit(data, logits, axis, shape)


def _take(arr: Any, ind: Any, axis: int) -> Any:
    """arr.take(ind, axis) for in-range indices (a gather; nothing to gather when empty)."""
    if 0 in core.get_aval(arr).shape:
        shape = core.get_aval(arr).shape
        out = (*shape[:axis], *core.get_aval(ind).shape, *shape[axis + 1 :])
        return lax.full(out, 0, core.get_aval(arr).dtype)
    return _one_hot_gather(arr, lax.convert_element_type(ind, dtypes.int32), axis)


_SCAN_BLOCK = 16


def _cumsum(x: Any) -> Any:
    """Prefix sum of a 1-d float array, rounding exactly as XLA's CPU `cumsum` does.

    XLA rewrites a long cumulative reduce_window into blocks of 16: a sequential scan inside
    each block, the same scheme recursively over the block totals, then each block adds the
    total before it. (Checked against JAX 0.10 up to 70000 elements.)
    """
    (n,) = core.get_aval(x).shape
    dt = core.get_aval(x).dtype
    if n <= _SCAN_BLOCK:
        return _sequential_scan(x, 0)
    nb = -(-n // _SCAN_BLOCK)
    padded = lax.pad(x, _const(0.0, dt), ((0, nb * _SCAN_BLOCK - n, 0),))
    inner = _sequential_scan(lax.reshape(padded, (nb, _SCAN_BLOCK)), 1)
    last = _SCAN_BLOCK - 1
    totals = _cumsum(lax.reshape(lax.slice(inner, (0, last), (nb, _SCAN_BLOCK)), (nb,)))
    before = lax.pad(lax.slice(totals, (0,), (nb - 1,)), _const(0.0, dt), ((1, 0, 0),))
    out = lax.add(inner, lax.broadcast_in_dim(before, (nb, _SCAN_BLOCK), (0,)))
    return lax.slice(lax.reshape(out, (nb * _SCAN_BLOCK,)), (0,), (n,))


def _sequential_scan(x: Any, axis: int) -> Any:
    """((x0 + x1) + x2) + ... along `axis`, one add per position."""
    shape = core.get_aval(x).shape
    parts: list[Any] = []
    for j in range(shape[axis]):
        lo, hi = [0] * len(shape), list(shape)
        lo[axis], hi[axis] = j, j + 1
        v = lax.slice(x, lo, hi)
        parts.append(v if not parts else lax.add(parts[-1], v))
    return lax.concatenate(parts, axis)


def choice(
    key: Any,
    a: Any,
    shape: Sequence[int] = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
    mode: str | None = None,
) -> Any:
    """Samples of `a` (or of range(a) for an integer a) along `axis`."""
    data, _ = _single_key("choice", key)
    shape = core.canonicalize_shape(shape)
    if isinstance(a, int):
        arr, n = None, int(a)
    else:
        arr = _asarray(a)
        av = core.get_aval(arr)
        if av.ndim == 0:
            n, arr = int(arr), None
        else:
            axis %= av.ndim
            n = av.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return creation.zeros(shape, dtype=dtypes.default_int() if arr is None else av.dtype)
    if n <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n}) when "
            "'replace=False'"
        )
    if not replace:
        if p is None:
            ind = lax.reshape(lax.slice(permutation(key, n), (0,), (n_draws,)), shape)
        else:
            pa = _asarray(p)
            g = lax.add(_gumbel_jit(data, (n,), core.get_aval(pa).dtype), lax.log(pa))
            ind = lax.reshape(sorting.top_k(g, n_draws)[1], shape)
        if arr is None:
            return lax.convert_element_type(ind, dtypes.default_int())
        return _take(arr, ind, axis)
    if p is None:
        ind = randint(key, shape, 0, n)
    else:
        pa = _asarray(p)
        if core.get_aval(pa).shape != (n,):
            raise ValueError(
                f"p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {core.get_aval(pa).shape} and a.shape[axis] is {n}."
            )
        ind = _choice_p_jit(data, pa, shape)
    if arr is None:
        return ind
    return _take(arr, ind, axis)


def _choice_p_impl(data: Any, p: Any, shape: tuple[int, ...]) -> Any:
    pdt = core.get_aval(p).dtype
    cum = _cumsum(p)
    n = core.get_aval(cum).shape[0]
    total = lax.reshape(lax.slice(cum, (n - 1,), (n,)), ())
    u = _uniform_impl(data, shape, pdt, 0.0, 1.0)
    r = lax.mul(lax.broadcast(total, shape), lax.sub(_full(shape, 1.0, pdt), u))
    # searchsorted(cum, r, side="left") is the count of entries below r
    both = (*shape, n)
    below = lax.lt(
        lax.broadcast_in_dim(cum, both, (len(shape),)),
        lax.broadcast_in_dim(r, both, tuple(range(len(shape)))),
    )
    return lax.reduce_sum(lax.convert_element_type(below, dtypes.int32), (len(shape),))


_choice_p_jit = jit(_choice_p_impl, static_argnums=(2,))


def _shuffle(data: Any, x: Any, axis: int) -> Any:
    """JAX's shuffle: a few rounds of stable sorts by fresh random 32-bit keys (enough rounds
    that key collisions are negligible: 3 * log(size) / log(2**32 - 1), rounded up)."""
    size = math.prod(core.get_aval(x).shape)
    rounds = math.ceil(3 * math.log(max(1, size)) / math.log(2**32 - 1))
    for _ in range(rounds):
        pair = _split_jit(data, (2,))
        data, sub = lax.index_in_dim(pair, 0), lax.index_in_dim(pair, 1)
        sort_keys = _bits_jit(sub, 32, core.get_aval(x).shape)
        _, x = sorting.sort_key_val(sort_keys, x, axis)
    return x


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of `x` along `axis` (or of range(x) for an integer x)."""
    data, _ = _single_key("permutation", key)
    if isinstance(x, int) or (hasattr(x, "shape") and not core.get_aval(_asarray(x)).shape):
        n = core.concrete_or_error(
            int, x, "The x argument of random.permutation must be concrete when it is an integer."
        )
        return _shuffle(data, lax.iota(dtypes.default_int(), n), 0)
    arr = _asarray(x)
    av = core.get_aval(arr)
    axis %= av.ndim
    if independent or av.ndim == 1:
        return _shuffle(data, arr, axis)
    ind = _shuffle(data, lax.iota(dtypes.default_int(), av.shape[axis]), 0)
    return _take(arr, ind, axis)


# ---- gamma family -------------------------------------------------------------------------------
def _gamma_one(data: Any, alpha: Any, log_space: bool) -> Any:
    """One Gamma(alpha) draw: Marsaglia & Tsang (2000), boosting alpha < 1 by a uniform power."""
    dt = core.get_aval(alpha).dtype
    c_ = lambda v: _const(v, dt)
    one, zero = c_(1.0), c_(0.0)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, c_(1.0 / 3.0))
    c = lax.div(c_(1.0 / 3.0), lax.sqrt(d))

    def rejected(state: Any) -> Any:
        _, x, v, u = state
        squeeze_ok = lax.ge(u, lax.sub(one, lax.mul(c_(0.0331), lax.mul(x, x))))
        log_ok = lax.ge(
            lax.log(u),
            lax.add(lax.mul(x, c_(0.5)), lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))),
        )
        return lax.bitwise_and(squeeze_ok, log_ok)

    def next_xv(state: Any) -> Any:
        k, _, _ = state
        ks = _split_data(k, (2,))
        k, sub = _row(ks, 0), _row(ks, 1)
        x = _normal_impl(sub, (), dt)
        return k, x, _fma(x, c, one)  # XLA contracts 1 + x * c

    def propose(state: Any) -> Any:
        ks = _split_data(state[0], (3,))
        k, xk, uk = _row(ks, 0), _row(ks, 1), _row(ks, 2)
        _, x, v = control_flow.while_loop(
            lambda s: lax.le(s[2], zero), next_xv, (xk, zero, c_(-1.0))
        )
        u = _uniform_impl(uk, (), dt, 0.0, 1.0)
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    ks = _split_data(data, (2,))
    k, sub = _row(ks, 0), _row(ks, 1)
    _, _, v, _ = control_flow.while_loop(rejected, propose, (k, zero, one, c_(2.0)))
    if log_space:
        log_u = lax.neg(_exponential_impl(sub, (), dt))
        skip = lax.bitwise_or(boost_mask, lax.eq(log_u, zero))
        log_boost = lax.select(skip, zero, lax.mul(log_u, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    u = lax.sub(one, _uniform_impl(sub, (), dt, 0.0, 1.0))
    boost = lax.select(boost_mask, one, lax.pow(u, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _row(keys: Any, i: int) -> Any:
    return lax.reshape(lax.slice(keys, (i, 0), (i + 1, 2)), (2,))


def _gamma_impl(data: Any, a: Any, shape: tuple[int, ...], dt: DType, log_space: bool) -> Any:
    alphas = lax.reshape(_to(a, dt, shape), (math.prod(shape),))
    keys = _split_data(data, (math.prod(shape),))
    # One batched rejection loop (JAX's vmap path; its lax.map path gives the same values).
    samples = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, alphas)
    return lax.reshape(samples, shape)


_gamma_jit = jit(_gamma_impl, static_argnums=(2, 3, 4))


def _param_shape(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    pshapes = tuple(_shape_of(p) for p in params)
    if shape is None:
        return _broadcast_shapes(*pshapes)
    shape = core.canonicalize_shape(shape)
    _check_shape(name, shape, *pshapes)
    return shape


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = float) -> Any:
    """Gamma(a, 1) floats (Marsaglia-Tsang rejection, one split key per element)."""
    data, _ = _single_key("gamma", key)
    dt = _float_dtype("gamma", dtype)
    shape = _param_shape("gamma", shape, a)
    if math.prod(shape) == 0:
        return _full(shape, 0.0, dt)
    return _gamma_jit(data, a, shape, dt, False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = float) -> Any:
    """log of Gamma(a, 1) floats, accurate for small a."""
    data, _ = _single_key("loggamma", key)
    dt = _float_dtype("loggamma", dtype)
    shape = _param_shape("loggamma", shape, a)
    return _gamma_jit(data, a, shape, dt, True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = float) -> Any:
    """Beta(a, b) floats as a ratio of log-gamma draws."""
    data, _ = _single_key("beta", key)
    dt = _float_dtype("beta", dtype)
    shape = _param_shape("beta", shape, a, b)
    return _beta_jit(data, a, b, shape, dt)


def _beta_impl(data: Any, a: Any, b: Any, shape: tuple[int, ...], dt: DType) -> Any:
    ks = _split_data(data, (2,))
    log_x = _gamma_impl(_row(ks, 0), a, shape, dt, True)
    log_y = _gamma_impl(_row(ks, 1), b, shape, dt, True)
    # x / (x + y) from log-space draws, both scaled by the larger one so nothing overflows
    m = lax.max(log_x, log_y)
    x, y = lax.exp(lax.sub(log_x, m)), lax.exp(lax.sub(log_y, m))
    return lax.div(x, lax.add(x, y))


_beta_jit = jit(_beta_impl, static_argnums=(3, 4))


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = float) -> Any:
    """Dirichlet(alpha) vectors: normalized gamma draws, in log space."""
    data, _ = _single_key("dirichlet", key)
    dt = _float_dtype("dirichlet", dtype)
    ashape = _shape_of(alpha)
    if len(ashape) < 1:
        raise ValueError(f"The alpha parameter must be at least 1-dimensional, got {ashape}")
    if shape is None:
        shape = ashape[:-1]
    else:
        shape = core.canonicalize_shape(shape)
        _check_shape("dirichlet", shape, ashape[:-1])
    return _dirichlet_jit(data, alpha, (*shape, ashape[-1]), dt)


def _dirichlet_impl(data: Any, alpha: Any, shape: tuple[int, ...], dt: DType) -> Any:
    log_g = _gamma_impl(data, alpha, shape, dt, True)
    last = len(shape) - 1
    keep = tuple(range(last))
    m = lax.broadcast_in_dim(lax.reduce_max(log_g, (last,)), shape, keep)
    log_g = lax.sub(log_g, m)
    unnormalized = lax.exp(log_g)
    s = lax.broadcast_in_dim(lax.reduce_sum(unnormalized, (last,)), shape, keep)
    return lax.div(unnormalized, s)


_dirichlet_jit = jit(_dirichlet_impl, static_argnums=(2, 3))


def _fma(a: Any, b: Any, c: Any) -> Any:
    """a * b + c as XLA computes it after contracting the multiply-add (see `_fma32`)."""
    if core.get_aval(a).dtype is dtypes.float32:
        return _fma32(a, b, c)
    return lax.add(lax.mul(a, b), c)


def _any(pred: Any) -> Any:
    nd = core.get_aval(pred).ndim
    return lax.reduce_or(pred, tuple(range(nd))) if nd else pred


def _poisson_knuth(data: Any, lam: Any, shape: tuple[int, ...], dt: DType) -> Any:
    """Knuth: count uniforms until their product drops below exp(-lam) (for lam < 10)."""
    f32 = dtypes.float32
    neg_lam = lax.neg(lam)
    max_iters = _const(_int_range(dt)[1], dt)

    def cond(state: Any) -> Any:
        i, _, _, log_prod = state
        return lax.bitwise_and(_any(lax.gt(log_prod, neg_lam)), lax.lt(i, max_iters))

    def body(state: Any) -> Any:
        i, k, rng, log_prod = state
        ks = _split_data(rng, (2,))
        k = lax.select(lax.gt(log_prod, neg_lam), lax.add(k, _full(shape, 1, dt)), k)
        u = _uniform_impl(_row(ks, 1), shape, f32, 0.0, 1.0)
        return lax.add(i, _const(1, dt)), k, _row(ks, 0), lax.add(log_prod, lax.log(u))

    init = (_const(0, dt), _full(shape, 0, dt), data, _full(shape, 0.0, f32))
    k = control_flow.while_loop(cond, body, init)[1]
    return lax.sub(k, _full(shape, 1, dt))


def _poisson_rejection(data: Any, lam: Any, shape: tuple[int, ...], dt: DType) -> Any:
    """Hormann's transformed rejection with squeeze (PTRS, 1993), for lam >= 10."""
    f32 = dtypes.float32
    c = lambda v: _full(shape, v, f32)
    log_lam = lax.log(lam)
    b = _fma(c(2.53), lax.sqrt(lam), c(0.931))
    a = _fma(c(0.02483), b, c(-0.059))
    inv_alpha = lax.add(c(1.1239), lax.div(c(1.1328), lax.sub(b, c(3.4))))
    v_r = lax.sub(c(0.9277), lax.div(c(3.6224), lax.sub(b, c(2.0))))
    max_iters = _const(_int_range(dt)[1], dt)

    def cond(state: Any) -> Any:
        i, _, accepted, _ = state
        return lax.bitwise_and(_any(lax.bitwise_not(accepted)), lax.lt(i, max_iters))

    def body(state: Any) -> Any:
        i, k_out, accepted, rng = state
        ks = _split_data(rng, (3,))
        u = lax.sub(_uniform_impl(_row(ks, 1), shape, f32, 0.0, 1.0), c(0.5))
        v = _uniform_impl(_row(ks, 2), shape, f32, 0.0, 1.0)
        us = lax.sub(c(0.5), lax.abs(u))
        slope = lax.add(lax.div(lax.mul(c(2.0), a), us), b)
        k = lax.floor(lax.add(_fma(slope, u, lam), c(0.43)))
        s = lax.log(lax.div(lax.mul(v, inv_alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        t = lax.sub(_fma(k, log_lam, lax.neg(lam)), lax.lgamma(lax.add(k, c(1.0))))
        accept1 = lax.bitwise_and(lax.ge(us, c(0.07)), lax.le(v, v_r))
        squeeze = lax.bitwise_and(lax.lt(us, c(0.013)), lax.gt(v, us))
        reject = lax.bitwise_or(lax.lt(k, c(0.0)), squeeze)
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, t)))
        k_out = lax.select(accept, k, k_out)
        return lax.add(i, _const(1, dt)), k_out, lax.bitwise_or(accepted, accept), _row(ks, 0)

    init = (_const(0, dt), c(-1.0), _full(shape, False, dtypes.bool_), data)
    k = control_flow.while_loop(cond, body, init)[1]
    return lax.convert_element_type(k, dt)


def _poisson_impl(data: Any, lam: Any, shape: tuple[int, ...], dt: DType) -> Any:
    lam = _to(lam, dtypes.float32, shape)
    zero = _full(shape, 0.0, dtypes.float32)
    use_knuth = lax.bitwise_or(lax.ne(lam, lam), lax.lt(lam, _full(shape, 10.0, dtypes.float32)))
    lam_knuth = lax.select(use_knuth, lam, zero)
    lam_rejection = lax.select(use_knuth, _full(shape, 100000.0, dtypes.float32), lam)
    result = lax.select(
        use_knuth,
        _poisson_knuth(data, lam_knuth, shape, dt),
        _poisson_rejection(data, lam_rejection, shape, dt),
    )
    return lax.select(lax.eq(lam, zero), _full(shape, 0, dt), result)


_poisson_jit = jit(_poisson_impl, static_argnums=(2, 3))


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Poisson(lam) integers: Knuth's product of uniforms below lam = 10, PTRS above.

    Both loops run on the whole array (every element draws from the same key sequence), as JAX.
    """
    data, _ = _single_key("poisson", key)
    dt = _canonical(int if dtype is None else dtype)
    if dt.kind not in "iu":
        raise TypeError(f"poisson dtype must be an integer dtype, got {dt.name}")
    shape = _shape_of(lam) if shape is None else core.canonicalize_shape(shape)
    return _poisson_jit(data, lam, shape, dt)


__all__ = [
    "bits", "uniform", "normal", "truncated_normal", "gumbel", "exponential", "laplace",
    "logistic", "randint", "bernoulli", "categorical", "choice", "permutation", "gamma",
    "loggamma", "beta", "dirichlet", "poisson",
]  # fmt: skip
