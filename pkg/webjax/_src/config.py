"""Global flags, read through `webjax.config` like `jax.config`.

Only flags webjax honours are accepted; an unknown name raises, as in JAX.
"""

from __future__ import annotations

import os
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
