"""The `jax._src` paths that JAX libraries import (Equinox, Flax, chex reach into JAX's
private modules for a few names). After `webjax.install_as_jax()`, `jax._src` is this package,
not webjax's own implementation package: each module here re-exports, under JAX's private
name, the webjax object that does that job. Names that only make sense for XLA raise an error
naming what is missing when used.
"""

from webjax._jax_src import (
    api_util,
    callback,
    checkify,
    compiler,
    core,
    dispatch,
    dtypes,
    traceback_util,
    tree_util,
    xla_bridge,
)

__all__ = [
    "api_util", "callback", "checkify", "compiler", "core", "dispatch", "dtypes",
    "traceback_util", "tree_util", "xla_bridge",
]  # fmt: skip
