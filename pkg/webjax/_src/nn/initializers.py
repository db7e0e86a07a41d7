"""jax.nn.initializers: functions (key, shape, dtype) -> array, with JAX's formulas.

Each initializer is a random sampler scaled by a constant computed in the target dtype the way
JAX computes it (e.g. `sqrt(3 * float32(scale / fan))`), so with the same key the arrays are
identical to JAX's. `orthogonal` and `delta_orthogonal` build on `random.orthogonal` (the Q of a
normal matrix's QR factorization).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..dtypes import DType
from ..lax import lax
from ..random import distributions, keys
from ..random import samplers as jrandom

Initializer = Callable[..., Any]
AxisSpec = int | Sequence[int]


def _dtype(dtype: Any) -> DType:
    return dtypes.default_float() if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype))


def _scaled(x: Any, s: Any) -> Any:
    """x * s for a 0-d s of x's dtype (broadcast as a view)."""
    return lax.mul(x, lax.broadcast(s, core.get_aval(x).shape))


def _scalar(v: Any, dt: DType) -> Any:
    return lax.full((), v, dt)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    return lax.full(core.canonicalize_shape(shape), 0, _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    return lax.full(core.canonicalize_shape(shape), 1, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        return lax.full(core.canonicalize_shape(shape), value, _dtype(dtype))

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """U[0, scale)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dt = _dtype(dtype)
        return _scaled(jrandom.uniform(key, shape, dt), _scalar(scale, dt))

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """N(0, stddev**2)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dt = _dtype(dtype)
        return _scaled(jrandom.normal(key, shape, dt), _scalar(stddev, dt))

    return init


def truncated_normal(
    stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0
) -> Initializer:
    """stddev * (a standard normal truncated to (lower, upper))."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dt = _dtype(dtype)
        x = jrandom.truncated_normal(key, lower, upper, shape, dt)
        return _scaled(x, _scalar(stddev, dt))

    return init


def _size(shape: tuple[int, ...], axes: AxisSpec) -> int:
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _compute_fans(
    shape: tuple[int, ...],
    in_axis: AxisSpec = -2,
    out_axis: AxisSpec = -1,
    batch_axis: AxisSpec = (),
) -> tuple[float, float]:
    """(fan_in, fan_out): the in/out sizes times the receptive field (all other axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly."
        )
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive, out_size * receptive


# 1 / stddev of a standard normal truncated to (-2, 2)
_TRUNC_STD = 0.87962566103423978
# the normalizing constant JAX divides complex truncated-normal samples by
_TRUNC_STD_COMPLEX = 0.95311164380491208


def variance_scaling(
    scale: Any,
    mode: str,
    distribution: str,
    in_axis: AxisSpec = -2,
    out_axis: AxisSpec = -1,
    batch_axis: AxisSpec = (),
    dtype: Any = None,
) -> Initializer:
    """Samples with variance scale / fan (fan_in, fan_out, their mean or geometric mean)."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = core.canonicalize_shape(shape)
        dt = _dtype(dtype)
        if dt.kind not in "fc":
            raise NotImplementedError(f"variance_scaling for dtype {dt.name}")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {
            "fan_in": fan_in,
            "fan_out": fan_out,
            "fan_avg": (fan_in + fan_out) / 2,
            "fan_geo_avg": (fan_in * fan_out) ** 0.5,
        }[mode]
        variance = _scalar(scale / denominator, dt)  # rounded to dt first, as JAX
        if dt.kind == "c":
            return _complex_variance_scaling(key, shape, dt, variance, distribution)
        if distribution == "truncated_normal":
            stddev = lax.div(lax.sqrt(variance), _scalar(_TRUNC_STD, dt))
            return _scaled(jrandom.truncated_normal(key, -2, 2, shape, dt), stddev)
        if distribution == "normal":
            return _scaled(jrandom.normal(key, shape, dt), lax.sqrt(variance))
        factor = lax.sqrt(lax.mul(_scalar(3, dt), variance))
        return _scaled(jrandom.uniform(key, shape, dt, -1), factor)

    return init


def _polar_sample(key: Any, shape: tuple[int, ...], dt: DType, radius: Any) -> Any:
    """radius(u1) * e^(i 2 pi u2) for independent uniforms u1, u2 (keys split in that order),
    computed in the complex dtype as JAX does, so samples agree bit for bit."""
    key_r, key_theta = keys.split(key)
    rdt = dtypes.component(dt)
    r = lax.convert_element_type(radius(jrandom.uniform(key_r, shape, rdt)), dt)
    u2 = lax.convert_element_type(jrandom.uniform(key_theta, shape, rdt), dt)
    theta = lax.mul(_scalar(2 * math.pi, dt), u2)
    return lax.mul(r, lax.exp(lax.mul(_scalar(1j, dt), theta)))


def _complex_variance_scaling(
    key: Any, shape: tuple[int, ...], dt: DType, variance: Any, distribution: str
) -> Any:
    """Complex samples with E|z|^2 = variance: a complex normal, a disc-uniform modulus and
    phase, or a modulus whose square is an exponential truncated at 4, with a uniform phase."""
    rdt = dtypes.component(dt)
    if distribution == "normal":
        return _scaled(jrandom.normal(key, shape, dt), lax.sqrt(variance))
    if distribution == "uniform":
        two = _scalar(2, rdt)
        z = _polar_sample(key, shape, dt, lambda u: lax.sqrt(lax.mul(two, u)))
        return _scaled(z, lax.sqrt(variance))
    stddev = lax.div(lax.sqrt(variance), _scalar(_TRUNC_STD_COMPLEX, dt))
    # |z|^2 ~ Exp(1) truncated to [0, upper^2] (upper = 2) by inverse-CDF sampling
    mass = lax.sub(_scalar(1, dt), lax.exp(_scalar(-4.0, dt)))

    def radius(u: Any) -> Any:
        t = lax.mul(mass, lax.convert_element_type(u, dt))
        return lax.sqrt(lax.neg(lax.log(lax.sub(_scalar(1, dt), t))))

    return _scaled(_polar_sample(key, shape, dt, radius), stddev)


def _preset(scale: float, mode: str, distribution: str, name: str) -> Callable[..., Initializer]:
    def make(
        in_axis: AxisSpec = -2,
        out_axis: AxisSpec = -1,
        batch_axis: AxisSpec = (),
        dtype: Any = None,
    ) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"variance_scaling({scale}, {mode!r}, {distribution!r})."
    return make


glorot_uniform = xavier_uniform = _preset(1.0, "fan_avg", "uniform", "glorot_uniform")
glorot_normal = xavier_normal = _preset(1.0, "fan_avg", "truncated_normal", "glorot_normal")
lecun_uniform = _preset(1.0, "fan_in", "uniform", "lecun_uniform")
lecun_normal = _preset(1.0, "fan_in", "truncated_normal", "lecun_normal")
he_uniform = kaiming_uniform = _preset(2.0, "fan_in", "uniform", "he_uniform")
he_normal = kaiming_normal = _preset(2.0, "fan_in", "truncated_normal", "he_normal")


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Any:
    """Initializer of (semi-)orthogonal matrices: rows or columns orthonormal, reshaped to
    `shape` with the columns along `column_axis`."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        if out_sharding is not None:
            raise NotImplementedError("orthogonal initializer with out_sharding")
        dt = dtypes.canonicalize(dtypes.dtype(float if dtype is None else dtype))
        shape = core.canonicalize_shape(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return lax.full(shape, 0, dt)
        col = column_axis % len(shape)
        n_cols = shape[col]
        n_rows = math.prod(shape) // n_cols
        q = distributions.orthogonal(key, n_rows, (), dt, n_cols)
        rest = tuple(d for i, d in enumerate(shape) if i != col)
        q = lax.reshape(q, (*rest, n_cols))
        perm = list(range(len(rest)))
        perm.insert(col, len(rest))
        q = lax.transpose(q, perm)
        return lax.mul(lax.full((), scale, dt), q)

    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Any:
    """Initializer of 3-5D convolution kernels: zero but an orthogonal matrix at the center
    tap (Xiao et al. 2018)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        if out_sharding is not None:
            raise NotImplementedError("delta_orthogonal initializer with out_sharding")
        dt = dtypes.canonicalize(dtypes.dtype(float if dtype is None else dtype))
        shape = core.canonicalize_shape(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shape[-2:])
        center = [(k - 1) // 2 for k in shape[:-2]]
        w = lax.full(shape, 0, dt)
        upd = lax.reshape(ortho, (1,) * len(center) + shape[-2:])
        return lax.dynamic_update_slice(w, upd, [*center, 0, 0])

    return init
