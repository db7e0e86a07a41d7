"""webjax.tree_util: JAX's pytree utilities."""

__all__ = [n for n in dir() if not n.startswith("_")]
