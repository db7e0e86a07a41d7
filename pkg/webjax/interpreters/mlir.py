"""webjax.interpreters.mlir: lowering registrations. webjax has no MLIR: a `lower_fun` rule is
the primitive's evaluation rule (see `webjax._src.interpreters.mlir`)."""

from webjax._src.interpreters.mlir import (
    LoweredFun,
    NoXlaError,
    lower_fun,
    lowerings,
    register_lowering,
)

__all__ = ["LoweredFun", "NoXlaError", "lower_fun", "lowerings", "register_lowering"]


def __getattr__(name: str) -> object:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NoXlaError(
        f"jax.interpreters.mlir.{name}: webjax has no MLIR (primitives run by their evaluation "
        "rules; register_lowering accepts lower_fun rules)"
    )
