"""`jax._src.compiler`: XLA's compiler entry points, which webjax does not have (it compiles
jaxprs to its own kernel programs). Any name read here raises, naming it."""

from typing import Any

from webjax._src.interpreters.mlir import NoXlaError


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NoXlaError(
        f"jax._src.compiler.{name}: webjax has no XLA compiler (jit compiles to webjax's own "
        "kernel programs), so XLA compilation hooks cannot be used"
    )
