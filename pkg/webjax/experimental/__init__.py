"""webjax.experimental: the parts of `jax.experimental` webjax has (x64 context managers,
`checkify`, `io_callback`). As in JAX, `sparse` is a submodule imported on its own
(`from webjax.experimental import sparse`): it needs NumPy, which `import webjax` does not."""

from webjax._src.callback import io_callback
from webjax._src.config import experimental_disable_x64 as disable_x64
from webjax._src.config import experimental_enable_x64 as enable_x64
from webjax.experimental import checkify

__all__ = ["checkify", "disable_x64", "enable_x64", "io_callback"]
