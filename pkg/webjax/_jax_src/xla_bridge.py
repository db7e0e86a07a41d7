"""`jax._src.xla_bridge`: XLA's client registry, which webjax does not have (its backends are
`jax.extend.backend.backends()`). Any name read here raises, naming it."""

from typing import Any

from webjax._src.api.clients import backends, get_backend
from webjax._src.interpreters.mlir import NoXlaError

__all__ = ["backends", "get_backend"]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NoXlaError(
        f"jax._src.xla_bridge.{name}: webjax has no XLA clients; use "
        "jax.extend.backend.backends() / get_backend()"
    )
