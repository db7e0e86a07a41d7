"""Global flags, read through `webjax.config` like `jax.config`, and the context managers
that set them for a `with` block (`jax.enable_x64`, `jax.disable_jit`, ...).

Only flags webjax honours are accepted; an unknown name raises, as in JAX.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any


class Config:
    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            "jax_enable_x64": False,
            "jax_default_device": None,
            "jax_platform_name": "",
            "jax_platforms": "",
            "jax_disable_jit": False,
            "jax_threefry_partitionable": True,
            "jax_default_matmul_precision": None,
            "jax_numpy_rank_promotion": "allow",
            "jax_numpy_dtype_promotion": "standard",
            "jax_debug_nans": False,
            # WEBJAX_DEBUG: 1 dispatches, 2 + jaxprs of jit, 3 + kernel IR, 4 + generated code
            "webjax_debug": int(os.environ.get("WEBJAX_DEBUG", "0") or 0),
        }

    def update(self, name: str, value: Any) -> None:
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        self._values[name] = value

    def read(self, name: str) -> Any:
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"Unrecognized config option: {name}")


config = Config()


def debug_level() -> int:
    return int(config._values["webjax_debug"])


def x64_enabled() -> bool:
    return bool(config._values["jax_enable_x64"])


# ---- config states ------------------------------------------------------------------------------
class _State:
    """A config flag readable as `.value` and settable for a `with` block by calling it (JAX's
    `jax.enable_x64`, `jax.default_matmul_precision`, ...)."""

    def __init__(self, name: str, allowed: tuple[Any, ...] | None, default: Any) -> None:
        self._name = name
        self._allowed = allowed
        self._default = default

    @property
    def value(self) -> Any:
        return config.read(self._name)

    def _check(self, v: Any) -> Any:
        if self._allowed is not None and v not in self._allowed:
            raise ValueError(
                f"{v!r} is not a valid value for {self._name} (one of {list(self._allowed)})"
            )
        return v

    @contextlib.contextmanager
    def __call__(self, new_val: Any = None) -> Iterator[None]:
        v = self._check(self._default if new_val is None else new_val)
        old = config.read(self._name)
        config.update(self._name, v)
        try:
            yield
        finally:
            config.update(self._name, old)

    def __repr__(self) -> str:
        return f"<webjax config state {self._name}={self.value!r}>"


enable_x64 = _State("jax_enable_x64", (True, False), True)
default_matmul_precision = _State(
    "jax_default_matmul_precision",
    (
        None,
        "default",
        "high",
        "highest",
        "bfloat16",
        "tensorfloat32",
        "float32",
        "bfloat16_3x",
        "fastest",
        "ANY_F8_ANY_F8_F32",
        "F32_F32_F32",
    ),
    None,
)
numpy_dtype_promotion = _State("jax_numpy_dtype_promotion", ("standard", "strict"), "standard")
numpy_rank_promotion = _State("jax_numpy_rank_promotion", ("allow", "warn", "raise"), "allow")


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Run `jit` functions op by op (Python control flow sees concrete values) in the block."""
    old = config.read("jax_disable_jit")
    config.update("jax_disable_jit", bool(disable))
    try:
        yield
    finally:
        config.update("jax_disable_jit", old)


@contextlib.contextmanager
def experimental_enable_x64(new_val: bool = True) -> Iterator[None]:
    """`jax.experimental.enable_x64`: 64-bit types inside the block."""
    with enable_x64(bool(new_val)):
        yield


@contextlib.contextmanager
def experimental_disable_x64() -> Iterator[None]:
    """`jax.experimental.disable_x64`: 32-bit defaults inside the block."""
    with enable_x64(False):
        yield
