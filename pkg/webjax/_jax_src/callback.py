"""`jax._src.callback`: host callbacks."""

from webjax._src.callback import io_callback, pure_callback

__all__ = ["io_callback", "pure_callback"]
