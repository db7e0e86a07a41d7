"""webjax.safetensors: the safetensors format, eagerly (`load`, `save`) or a tensor at a time
(`open`), from bytes, files and URLs (range requests), with a cached `download` for offline use
in the browser."""

from webjax._src.safetensors import (
    DEFAULT_CACHE,
    SafeOpen,
    SafetensorError,
    TensorInfo,
    TensorSlice,
    download,
    download_async,
    evict,
    evict_async,
    flatten,
    load,
    load_async,
    load_url,
    open,
    open_async,
    open_url,
    safe_open,
    save,
    unflatten,
)

__all__ = [
    "DEFAULT_CACHE",
    "SafeOpen",
    "SafetensorError",
    "TensorInfo",
    "TensorSlice",
    "download",
    "download_async",
    "evict",
    "evict_async",
    "flatten",
    "load",
    "load_async",
    "load_url",
    "open",
    "open_async",
    "open_url",
    "safe_open",
    "save",
    "unflatten",
]
