"""Hosts: the only modules that touch a JS engine (*_browser.py) or native engines (*_native.py).

Here too the two errors a host raises when it cannot serve a backend (the runtime catches them
and re-exports them from runtime.backend).
"""

from __future__ import annotations

import sys


class BackendUnavailable(RuntimeError):
    """This host cannot provide the backend (the message says why)."""


class SyncReadError(RuntimeError):
    """A synchronous read is impossible here (e.g. WebGPU under plain `runPython`)."""


def in_browser() -> bool:
    return sys.platform == "emscripten"


def cross_origin_isolated() -> bool | None:
    """Whether the page is cross-origin isolated (wasm threads need it); None natively."""
    if not in_browser():
        return None
    import js

    return bool(getattr(js, "crossOriginIsolated", False))
