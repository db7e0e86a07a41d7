"""webjax.example_libraries.stax: JAX's `jax.example_libraries.stax` (`(init_fun, apply_fun)`
layers and combinators)."""

from webjax._src.example_libraries.stax import *  # noqa: F403
from webjax._src.example_libraries.stax import __all__ as __all__
