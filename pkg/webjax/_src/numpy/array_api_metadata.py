"""The Python array API metadata of `webjax.numpy`: its version, `__array_namespace__` and
`__array_namespace_info__()` (devices, capabilities, default and supported dtypes), as JAX's."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from .. import config
from .. import dtypes as _dtypes
from ..runtime import backend as rt

__array_api_version__ = "2024.12"

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "integral": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]
_WIDE = {"int64", "uint64", "float64", "complex128"}  # only with jax_enable_x64


_namespace: list[ModuleType] = []  # the public `webjax.numpy`, registered when it is imported


def register_namespace(module: ModuleType) -> None:
    """Called by the public `webjax.numpy` (a layer above this one) with itself."""
    _namespace[:] = [module]


def __array_namespace__(self: Any, *, api_version: str | None = None) -> ModuleType:
    """`Array.__array_namespace__`: the `webjax.numpy` module."""
    if api_version is not None and api_version != __array_api_version__:
        msg = f"{api_version=!r} is not available; available versions are: "
        raise ValueError(msg + repr([__array_api_version__]))
    if not _namespace:
        raise RuntimeError("webjax.numpy has not been imported")
    return _namespace[0]


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The array API's inspection object of `webjax.numpy`."""
    return ArrayNamespaceInfo()


class ArrayNamespaceInfo:
    """The array API's inspection object, with JAX's answers."""

    _capabilities = {
        "boolean indexing": False,  # not inside transformations, as in JAX
        "data-dependent shapes": False,
        "max dimensions": 64,
    }

    def _kind(self, kind: str, device: Any) -> dict[str, _dtypes.DType]:
        if kind not in _KINDS:
            raise KeyError(kind)
        wide = config.x64_enabled()
        out = {n: _dtypes.dtype(n) for n in _KINDS[kind] if wide or n not in _WIDE}
        if device is None:
            return out
        # a device's own: webgpu and webgl have no 64-bit types (complex: their parts)
        backend = device.backend
        return {n: d for n, d in out.items() if backend.supports_dtype(_dtypes.component(d))}

    def default_device(self) -> None:
        return None  # arrays are uncommitted by default, as in JAX

    def devices(self) -> list[Any]:
        return [None, *(rt.device(p) for p in rt.available_platforms())]

    def capabilities(self) -> dict[str, Any]:
        return self._capabilities

    def default_dtypes(self, *, device: Any = None) -> dict[str, _dtypes.DType]:
        del device  # the same on every device
        return {
            "real floating": _dtypes.default_float(),
            "complex floating": _dtypes.default_complex(),
            "integral": _dtypes.default_int(),
            "indexing": _dtypes.default_int(),
        }

    def dtypes(
        self, *, device: Any = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, _dtypes.DType]:
        if kind is None:
            return self._kind("numeric", device) | self._kind("bool", device)
        if isinstance(kind, tuple):
            out: dict[str, _dtypes.DType] = {}
            for k in kind:
                out |= self._kind(k, device)
            return out
        return self._kind(kind, device)
