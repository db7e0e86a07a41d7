"""What a test device can hold: the GPU devices (webgpu, webgl) have no 64-bit types."""

from __future__ import annotations

from typing import Any

from webjax._src import dtypes as dt


def has_float64(device: Any) -> bool:
    return bool(device.backend.supports_dtype(dt.float64))
