"""jax.scipy.special.bessel_jn: Bessel functions of the first kind J_0 ... J_v of real
argument, by Miller's backward recurrence.

From an order M = v + n_iter far above v, J_(k-1) = (2k / z) J_k - J_(k+1) run downward from
(J_(M+1), J_M) = (0, tiny) is dominated by the minimal solution J_k; the sequence is rescaled
whenever it grows large (float32 overflows otherwise for small z) and normalized at the end
by J_0 + 2 (J_2 + J_4 + ...) = 1. Accurate while |z| stays well below M (JAX's own algorithm
has the same n_iter knob; where it returns NaN for small z, this one does not).
"""

from __future__ import annotations

import operator
from typing import Any

from .. import core
from .. import numpy as jnp
from ..numpy import util

_RESCALE = 1e15


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """J_0(z) ... J_v(z), stacked along a new leading axis of size v + 1."""
    util.check_arraylike("bessel_jn", z)
    v = core.concrete_or_error(operator.index, v, "The order v of bessel_jn")
    n_iter = core.concrete_or_error(operator.index, n_iter, "n_iter of bessel_jn")
    if v < 0:
        raise ValueError(f"bessel_jn: the order v must be non-negative, got {v}")
    (z,) = util.promote_dtypes_inexact(jnp.asarray(z))
    az = jnp.abs(z)
    safe = jnp.where(az == 0, 1.0, az)
    m = v + n_iter + (v + n_iter) % 2  # an even start order
    j_next, j = jnp.zeros_like(safe), jnp.full_like(safe, 1e-30)
    kept: list[Any] = [jnp.zeros_like(safe)] * (v + 1)
    norm = jnp.zeros_like(safe)
    for k in range(m, 0, -1):
        if k <= v:
            kept[k] = j
        if k % 2 == 0:
            norm = norm + 2.0 * j
        j_next, j = j, (2.0 * k / safe) * j - j_next
        big = jnp.abs(j) > _RESCALE
        scale = jnp.where(big, 1.0 / _RESCALE, 1.0)
        j, j_next, norm = j * scale, j_next * scale, norm * scale
        kept = [x * scale for x in kept]
    kept[0] = j
    norm = norm + j
    out = jnp.stack([x / norm for x in kept])
    # J_n(-z) = (-1)^n J_n(z); J_n(0) = [n == 0]
    signs = jnp.asarray([(-1.0) ** n for n in range(v + 1)], out.dtype).reshape(
        (v + 1,) + (1,) * z.ndim
    )
    out = jnp.where(z < 0, signs * out, out)
    at_zero = jnp.asarray([1.0] + [0.0] * v, out.dtype).reshape((v + 1,) + (1,) * z.ndim)
    return jnp.where(az == 0, at_zero, out)
