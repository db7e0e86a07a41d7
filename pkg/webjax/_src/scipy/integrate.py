"""`jax.scipy.integrate`: `trapezoid`, the composite trapezoidal rule (`jnp.trapezoid`, jitted
with a static axis as JAX's)."""

from __future__ import annotations

from typing import Any

from ..jit import eager_jit
from ..numpy import statistics


@eager_jit(static_argnames=("axis",))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integrate `y` along `axis` with the trapezoidal rule: sample points `x` (1-d, or shaped
    like `y`) or a uniform spacing `dx`."""
    return statistics.trapezoid(y, x, dx, axis)
