"""webjax.numpy.fft: `jax.numpy.fft`."""

from webjax._src.numpy.fft import *  # noqa: F403
from webjax._src.numpy.fft import __all__ as __all__
