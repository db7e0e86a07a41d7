"""Backend clients (`jax.extend.backend`): one object per platform that answers what an XLA
client answers about it (platform, devices, counts), over webjax's backends.
"""

from __future__ import annotations

from typing import Any

from .. import api
from ..runtime import backend as rt


class Client:
    """A platform's backend as `jax.extend.backend.get_backend()` returns it."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        self.platform_version = f"webjax {platform}"
        self.runtime_type = "webjax"

    def devices(self) -> list[rt.Device]:
        return api.devices(self.platform)

    def local_devices(self) -> list[rt.Device]:
        return api.devices(self.platform)

    def device_count(self) -> int:
        return len(self.devices())

    def local_device_count(self) -> int:
        return len(self.devices())

    def process_index(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"Client(platform={self.platform!r})"


def get_backend(platform: Any = None) -> Client:
    """The client of `platform` (a name, or a client itself; default: the default backend)."""
    if isinstance(platform, Client):
        return platform
    name = api.default_backend() if platform is None else str(platform)
    rt.check_allowed(name)
    rt.get_backend(name)  # raises, naming why, where the platform is unavailable
    return Client(name)


def backends() -> dict[str, Client]:
    """The clients of every platform this host can run."""
    return {p: Client(p) for p in rt.available_platforms()}


def get_default_device() -> rt.Device:
    return api.devices()[0]


def clear_backends(_crash: bool = False) -> None:
    api.clear_backends()


def clear_in_memory_compilation_cache() -> None:
    api.clear_caches()


def backend_xla_version(platform: Any = None) -> None:
    """webjax has no XLA: None, as for a backend that reports no XLA version."""
    del platform
    return None
