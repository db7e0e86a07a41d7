"""webjax.scipy: `jax.scipy` (special functions, linear algebra, statistics, optimization,
signal processing, interpolation, integration, image coordinates, vector quantization,
rotations)."""

from webjax.scipy import (
    cluster,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    sparse,
    spatial,
    special,
    stats,
)
