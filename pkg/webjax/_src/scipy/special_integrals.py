"""jax.scipy.special functions defined by integrals: Dawson's integral and Spence's function
(the dilogarithm), written on jnp so they trace, differentiate, vmap and run on every device.

dawsn(x) = exp(-x^2) int_0^x exp(t^2) dt: Gauss-Legendre quadrature of x int_0^1
exp(x^2 (u^2 - 1)) du for |x| <= 4 (the integrand is smooth there), the asymptotic series
1/(2x) sum (2k-1)!!/(2x^2)^k beyond. spence(x) = Li2(1 - x): the power series of Li2 on
|z| <= 1/2, reached through the reflection, Landen and inversion identities.
"""

from __future__ import annotations

import math
from typing import Any

from .. import numpy as jnp
from ..numpy import util

# 24-point Gauss-Legendre nodes and weights on [0, 1], computed once on the host (Newton on
# the Legendre recurrence)


def _gauss_legendre(n: int) -> tuple[list[float], list[float]]:
    nodes, weights = [], []
    for i in range(1, n + 1):
        x = math.cos(math.pi * (i - 0.25) / (n + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = n * (x * p1 - p0) / (x * x - 1)
            dx = p1 / dp
            x -= dx
            if abs(dx) < 1e-16:
                break
        nodes.append(0.5 * (x + 1))
        weights.append(1.0 / ((1 - x * x) * dp * dp))
    return nodes, weights


_NODES, _WEIGHTS = _gauss_legendre(24)


def _inexact(name: str, x: Any) -> Any:
    util.check_arraylike(name, x)
    (x,) = util.promote_dtypes_inexact(jnp.asarray(x))
    return x


def dawsn(x: Any) -> Any:
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    x = _inexact("dawsn", x)
    dt = x.dtype
    small = jnp.abs(x) <= 4.0
    xs = jnp.where(small, x, 0.0)
    u = jnp.asarray(_NODES, dt)
    w = jnp.asarray(_WEIGHTS, dt)
    quad = xs * jnp.sum(w * jnp.exp(xs[..., None] ** 2 * (u**2 - 1.0)), axis=-1)
    xl = jnp.where(small, 4.0, x)
    inv = 1.0 / (2.0 * xl * xl)
    series, term = jnp.ones_like(xl), jnp.ones_like(xl)
    for k in range(1, 9):  # (2k-1)!! / (2x^2)^k: the smallest term near x = 4 is ~1e-9
        term = term * (2 * k - 1) * inv
        series = series + term
    return jnp.where(small, quad, series / (2.0 * xl))


_PI2_6 = math.pi**2 / 6


def _li2_series(z: Any) -> Any:
    """Li2(z) = sum z^k / k^2 for |z| <= 1/2 (30 terms: 2^-30 / 900 is below float64's
    resolution of the sum)."""
    out, zk = jnp.zeros_like(z), jnp.ones_like(z)
    for k in range(1, 31):
        zk = zk * z
        out = out + zk / float(k * k)
    return out


def _li2(z: Any) -> Any:
    """Li2(z) for real z <= 1, through identities that map z into |w| <= 1/2. Each branch
    gets z only where it is chosen (a safe constant elsewhere), so derivatives flow whole."""
    high, mid, low = z > 0.5, z >= -0.5, z >= -1.0
    # z in (1/2, 1]: Li2(z) = pi^2/6 - ln z ln(1 - z) - Li2(1 - z)
    zr = jnp.where(high, z, 0.75)
    log_terms = jnp.where(zr < 1.0, jnp.log(zr) * jnp.log1p(-jnp.where(zr < 1.0, zr, 0.5)), 0.0)
    reflect = _PI2_6 - log_terms - _li2_series(1.0 - zr)
    # z in [-1, -1/2): Landen, Li2(z) = -Li2(z / (z - 1)) - ln(1 - z)^2 / 2
    zl = jnp.where(low & ~mid, z, -0.75)
    landen = -_li2_series(zl / (zl - 1.0)) - 0.5 * jnp.log1p(-zl) ** 2
    # z < -1: inversion, Li2(z) = -pi^2/6 - ln(-z)^2 / 2 - Li2(1 / z), 1/z in (-1, 0) by Landen
    zi = jnp.where(low, -2.0, z)
    w = 1.0 / zi
    inv_landen = -_li2_series(w / (w - 1.0)) - 0.5 * jnp.log1p(-w) ** 2
    inv = -_PI2_6 - 0.5 * jnp.log(-zi) ** 2 - inv_landen
    center = _li2_series(jnp.where(mid & ~high, z, 0.0))
    return jnp.where(high, reflect, jnp.where(mid, center, jnp.where(low, landen, inv)))


def spence(x: Any) -> Any:
    """Spence's function int_1^x ln(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN below)."""
    x = _inexact("spence", x)
    return jnp.where(x < 0, math.nan, _li2(1.0 - jnp.maximum(x, 0.0)))
