"""webjax.example_libraries.optimizers: JAX's `jax.example_libraries.optimizers`
(`(init_fun, update_fun, get_params)` triples over pytrees, step-size schedules)."""

from webjax._src.example_libraries.optimizers import *  # noqa: F403
from webjax._src.example_libraries.optimizers import __all__ as __all__
