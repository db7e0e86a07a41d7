"""The backends webjax knows, registered in priority order (each checks its host lazily)."""

from . import (
    cpu,  # noqa: F401  (reference executor, always available)
    wasm,  # noqa: F401  (WebAssembly: browser engine or wasmtime)
    webgpu,  # noqa: F401  (WGSL: navigator.gpu or wgpu-py)
)
