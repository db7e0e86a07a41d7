"""webjax.extend.backend: the backend clients (`jax.extend.backend`)."""

from webjax._src.api.clients import (
    backend_xla_version,
    backends,
    clear_backends,
    clear_in_memory_compilation_cache,
    get_backend,
    get_default_device,
)

__all__ = [
    "backend_xla_version", "backends", "clear_backends", "clear_in_memory_compilation_cache",
    "get_backend", "get_default_device",
]  # fmt: skip
