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


def js_runtime() -> str | None:
    """The JS runtime Pyodide runs in when it is not a browser ("Node.js 20.20.2", "Deno 2.9.6");
    None in a browser's page or worker, and natively."""
    if not in_browser():
        return None
    import js

    deno = getattr(js, "Deno", None)
    if deno is not None:
        return f"Deno {getattr(getattr(deno, 'version', None), 'deno', '?')}"
    versions = getattr(getattr(js, "process", None), "versions", None)
    node = getattr(versions, "node", None)
    return None if node is None else f"Node.js {node}"


def cross_origin_isolated() -> bool | None:
    """Whether the page is cross-origin isolated (wasm threads need it); None natively."""
    if not in_browser():
        return None
    import js

    return bool(getattr(js, "crossOriginIsolated", False))
