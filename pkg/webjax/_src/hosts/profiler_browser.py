"""Profiler events in the browser: `performance.measure` entries with DevTools custom-track
metadata, so kernels show up on their own track in the Performance panel."""

from __future__ import annotations

from typing import Any


def now_ms() -> float:
    import js

    return float(js.performance.now())


def measure(name: str, start_ms: float, end_ms: float, track: str, props: dict[str, Any]) -> None:
    import js
    from pyodide.ffi import to_js

    detail = {
        "devtools": {
            "dataType": "track-entry",
            "track": track,
            "trackGroup": "webjax",
            "color": "primary",
            "properties": [[k, str(v)] for k, v in props.items()],
            "tooltipText": name,
        }
    }
    options = to_js(
        {"start": start_ms, "end": end_ms, "detail": detail},
        dict_converter=js.Object.fromEntries,
    )
    js.performance.measure(name, options)
