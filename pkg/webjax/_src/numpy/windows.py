"""Window functions of signal processing: bartlett, blackman, hamming, hanning, kaiser.

`M` is static; the windows are computed in the default float dtype from an iota, as JAX does.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..lax import lax
from . import util
from .ufuncs import i0


def _grid(M: Any, name: str) -> tuple[int, Any, Any]:
    m = util.concrete_int(M, f"M argument of jnp.{name}")
    dt = dtypes.default_float()
    return m, dt, lax.iota(dt, max(m, 0))


def _ones(m: int, dt: Any) -> Any:
    return lax.full((max(m, 0),), 1, dt)


def _cos_term(n: Any, k: float, m: int, dt: Any) -> Any:
    """cos(2 pi k n / (M - 1))."""
    return lax.cos(lax.div(lax.mul(n, lax.full((), 2 * math.pi * k, dt)), lax.full((), m - 1, dt)))


def hanning(M: int) -> Any:
    m, dt, n = _grid(M, "hanning")
    if m <= 1:
        return _ones(m, dt)
    return lax.mul(lax.full((), 0.5, dt), lax.sub(lax.full((), 1, dt), _cos_term(n, 1, m, dt)))


def hamming(M: int) -> Any:
    m, dt, n = _grid(M, "hamming")
    if m <= 1:
        return _ones(m, dt)
    return lax.sub(lax.full((), 0.54, dt), lax.mul(lax.full((), 0.46, dt), _cos_term(n, 1, m, dt)))


def blackman(M: int) -> Any:
    m, dt, n = _grid(M, "blackman")
    if m <= 1:
        return _ones(m, dt)
    out = lax.sub(lax.full((), 0.42, dt), lax.mul(lax.full((), 0.5, dt), _cos_term(n, 1, m, dt)))
    return lax.add(out, lax.mul(lax.full((), 0.08, dt), _cos_term(n, 2, m, dt)))


def bartlett(M: int) -> Any:
    m, dt, n = _grid(M, "bartlett")
    if m <= 1:
        return _ones(m, dt)
    dist = lax.abs(lax.sub(lax.mul(n, lax.full((), 2, dt)), lax.full((), m - 1, dt)))
    return lax.sub(lax.full((), 1, dt), lax.div(dist, lax.full((), m - 1, dt)))


def kaiser(M: int, beta: Any) -> Any:
    m, dt, n = _grid(M, "kaiser")
    if m <= 1:
        return _ones(m, dt)
    alpha = 0.5 * (m - 1)
    r = lax.div(lax.sub(n, lax.full((), alpha, dt)), lax.full((), alpha, dt))
    arg = lax.sqrt(lax.sub(lax.full((), 1, dt), lax.mul(r, r)))
    b = (
        util.convert(beta, dt)
        if util.is_scalar(beta)
        else util.convert(util.ensure_array(beta), dt)
    )
    return lax.div(i0(lax.mul(b, arg)), i0(b))
