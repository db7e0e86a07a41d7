"""`jax._src.state.types`: the type of a `jax.Ref`."""

from webjax._src.refs import AbstractRef

__all__ = ["AbstractRef"]
