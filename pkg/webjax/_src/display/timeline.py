"""The profiler's events as a timeline: one lane per device (and one for annotations), a bar per
kernel from its start for its duration, a time axis in milliseconds from the first event."""

from __future__ import annotations

import math
from typing import Any

from . import scene

LANE_COLORS = {
    "cpu": "#6a6f75",
    "wasm": "#2f6fb3",
    "webgpu": "#3a9d5d",
    "webgl": "#e08e0b",
    "annotations": "#7b5ea7",
}
LANE_HEIGHT = 22
LABEL_WIDTH = 92


def spans(events: Any) -> list[tuple[str, float, float, str]]:
    """(lane, start us, duration us, name) of the complete ("X") events; TypeError/ValueError
    for something that is not a list of trace events."""
    if isinstance(events, dict) and "traceEvents" in events:
        events = events["traceEvents"]  # a Chrome-trace file's object
    if not isinstance(events, (list, tuple)):
        raise TypeError(
            "timeline: expected the list of events stop_trace() returns, "
            f"got {type(events).__name__}"
        )
    out = []
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise TypeError(f"timeline: event {i} is a {type(e).__name__}, not a dict")
        if e.get("ph") != "X":
            continue
        ts, dur = e.get("ts"), e.get("dur")
        if not (
            isinstance(ts, (int, float))
            and isinstance(dur, (int, float))
            and math.isfinite(ts)
            and math.isfinite(dur)
        ):
            raise ValueError(
                f"timeline: event {i} needs finite numbers ts and dur, got {ts!r}, {dur!r}"
            )
        if dur < 0:
            raise ValueError(f"timeline: event {i} has a negative duration {dur}")
        out.append((str(e.get("tid", "?")), float(ts), float(dur), str(e.get("name", ""))))
    return out


def layout(events: Any, width: int, title: str | None) -> tuple[list[dict[str, Any]], int, str]:
    """(scene items, height, summary) of the timeline."""
    found = spans(events)
    order = [
        k
        for k in ("annotations", "cpu", "wasm", "webgpu", "webgl")
        if any(s[0] == k for s in found)
    ]
    lanes = order + sorted({s[0] for s in found} - set(order))
    top = 12 + (20 if title else 0)
    height = top + max(len(lanes), 1) * LANE_HEIGHT + 34
    x0, x1 = LABEL_WIDTH, width - 14
    items: list[dict[str, Any]] = [
        {"op": "rect", "x": 0, "y": 0, "w": width, "h": height, "fill": scene.PAPER, "stroke": ""}
    ]
    if title:
        items.append(
            scene._text(
                width / 2, 6, title, anchor="middle", baseline="top", size=13, fill=scene.INK
            )
        )
    if not found:
        items.append(
            scene._text(width / 2, top + LANE_HEIGHT / 2, "no kernels ran", anchor="middle")
        )
        return items, height, "no events"
    t0 = min(s[1] for s in found)
    t1 = max(s[1] + s[2] for s in found)
    span_ms = max((t1 - t0) / 1000, 1e-3)

    def px(ms: float) -> float:
        return x0 + ms / span_ms * (x1 - x0)

    bottom = top + len(lanes) * LANE_HEIGHT
    for t in scene.nice_ticks(0.0, span_ms):
        x = px(t)
        items.append(
            {"op": "path", "points": [x, top, x, bottom], "stroke": scene.GRID, "width": 1}
        )
        items.append(
            scene._text(x, bottom + 5, scene.tick_label(t), anchor="middle", baseline="top")
        )
    items.append(scene._text((x0 + x1) / 2, height - 4, "ms", anchor="middle", baseline="bottom"))
    summary = []
    for row, lane in enumerate(lanes):
        y = top + row * LANE_HEIGHT
        mine = [s for s in found if s[0] == lane]
        total_ms = sum(s[2] for s in mine) / 1000
        summary.append(f"{lane}: {len(mine)} ({total_ms:.3g} ms)")
        items.append(scene._text(6, y + LANE_HEIGHT / 2, f"{lane} ({len(mine)})", fill=scene.INK))
        color = LANE_COLORS.get(lane, scene.PALETTE[row % len(scene.PALETTE)])
        for _, ts, dur, _name in mine:
            a = px((ts - t0) / 1000)
            w = max(px((ts + dur - t0) / 1000) - a, 1.0)
            items.append(
                {
                    "op": "rect",
                    "x": round(a, 2),
                    "y": y + 4,
                    "w": round(w, 2),
                    "h": LANE_HEIGHT - 8,
                    "fill": color,
                    "stroke": "",
                }
            )
    items.append(
        {
            "op": "rect",
            "x": x0,
            "y": top,
            "w": x1 - x0,
            "h": bottom - top,
            "fill": "",
            "stroke": scene.MUTED,
        }
    )
    return items, height, "; ".join(summary)
