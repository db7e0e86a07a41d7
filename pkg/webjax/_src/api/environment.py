"""`jax.print_environment_info()`: what a bug report needs to know about this webjax.

webjax's version, Python and the host (CPython natively, Pyodide in a browser), NumPy if any,
cross-origin isolation (wasm threads need it), every backend with its device or why it is
unavailable and its limits, and the `JAX_*` / `WEBJAX_*` variables set.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform as _platform
import sys

from .. import config as _config
from ..hosts import cross_origin_isolated, in_browser, js_runtime
from ..runtime import backend as rt
from ..runtime import backends  # noqa: F401  (registers the backends)


def _version() -> str:
    public = sys.modules.get("webjax")
    version = getattr(public, "__version__", None)
    if version is not None:
        return str(version)
    try:
        return importlib.metadata.version("webjax")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _numpy() -> str:
    try:
        import numpy
    except ImportError:
        return "not installed"
    return str(numpy.__version__)


def _host() -> str:
    if in_browser():
        pyodide = sys.modules.get("pyodide")
        return f"Pyodide {getattr(pyodide, '__version__', '?')} in {js_runtime() or 'a browser'}"
    return f"{_platform.python_implementation()} (native)"


def _backend_lines() -> list[str]:
    lines = []
    for p in rt.known_platforms():
        reason = rt.unavailable_reason(p)
        if reason is not None:
            lines.append(f"  {p}: unavailable ({reason})")
            continue
        b = rt.get_backend(p)
        info = [f"max_args={b.max_args}", f"max_buffer_bytes={b.max_buffer_bytes}"]
        for attr in ("threads", "shared_memory"):
            if hasattr(b, attr):
                info.append(f"{attr}={getattr(b, attr)}")
        limits = getattr(b, "limits", None)
        if limits:
            info.append("limits=" + ", ".join(f"{k}={v}" for k, v in sorted(limits.items())))
        lines.append(f"  {p}: {rt.device(p)!r} {' '.join(info)}")
    return lines


def environment_info() -> str:
    isolated = cross_origin_isolated()
    try:
        default = rt.default_platform()
    except RuntimeError as e:
        default = f"none ({e})"
    lines = [
        f"webjax: {_version()}",
        f"python: {sys.version}",
        f"host:   {_host()}",
        f"numpy:  {_numpy()}",
        f"platform: {_platform.platform()}",
        "cross-origin isolated: "
        + ("n/a (native)" if isolated is None else ("yes" if isolated else "no")),
        f"jax_enable_x64: {_config.enable_x64.value}",
        f"default backend: {default}",
        "backends:",
        *_backend_lines(),
    ]
    env = sorted(k for k in os.environ if k.startswith(("JAX_", "WEBJAX_")))
    lines += [f"{k}={os.environ[k]}" for k in env]
    return "\n".join(lines)


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or with `return_string=True` return) the environment report."""
    info = environment_info()
    if return_string:
        return info
    print(info)
    return None
