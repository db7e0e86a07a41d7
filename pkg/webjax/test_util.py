"""webjax.test_util: gradient checks against finite differences (`jax.test_util`)."""

from webjax._src.test_util import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
