"""The backends webjax knows, registered in priority order (each checks its host lazily)."""

from . import (
    cpu,  # noqa: F401  (reference executor, always available)
    wasm,  # noqa: F401  (WebAssembly: browser engine or wasmtime)
    webgl,  # noqa: F401  (GLSL ES: WebGL2 or OpenGL ES through EGL)
    webgpu,  # noqa: F401  (WGSL: navigator.gpu or wgpu-py)
)
