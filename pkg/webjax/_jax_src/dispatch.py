"""`jax._src.dispatch`: waiting for the side effects already issued."""

from webjax._src.api import effects_barrier as wait_for_tokens

__all__ = ["wait_for_tokens"]
