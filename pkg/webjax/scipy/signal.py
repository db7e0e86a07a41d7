"""webjax.scipy.signal: `jax.scipy.signal`."""

from webjax._src.scipy.signal import (
    convolve,
    convolve2d,
    correlate,
    correlate2d,
    detrend,
    fftconvolve,
)

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]
