"""Charts as scenes: a size and a list of drawing items in CSS pixels, which svg.py writes as SVG
and hosts/display_browser.py draws on a canvas. One layout, two renderers.

Items (dicts): `rect` (x, y, w, h, fill, stroke), `path` (points [x0, y0, x1, y1, ...],
stroke, width: a polyline), `dots` (points, r, fill), `text` (x, y, text, size, fill, anchor
start|middle|end, baseline top|middle|bottom, rotate in degrees), `image` (x, y, w, h, the
image's iw, ih and rgba: bytes of iw*ih*4, drawn without smoothing).
"""

from __future__ import annotations

import math
from typing import Any

PALETTE = ("#2f6fb3", "#d1495b", "#3a9d5d", "#e08e0b", "#7b5ea7", "#1b998b", "#8c564b", "#6a6f75")
INK = "#1d1f21"
MUTED = "#6a6f75"
GRID = "#e3e5e8"
PAPER = "#ffffff"
FONT_SIZE = 11


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        return [lo]
    power = 10.0 ** math.floor(math.log10((hi - lo) / max(count, 1)))

    def ticks_of(step: float) -> int:
        return math.floor(hi / step + 1e-9) - math.ceil(lo / step - 1e-9) + 1

    # the round step whose tick count is nearest `count` (the larger step on a tie)
    steps = [m * power for m in (10, 5, 2, 1)]
    step = min(steps, key=lambda s: abs(ticks_of(s) - count))
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    k = first
    while k * step <= hi + step * 1e-9:
        ticks.append(round(k * step, 12) + 0.0)  # + 0.0: no "-0"
        k += 1
    return ticks


def tick_label(v: float) -> str:
    if v == 0:
        return "0"
    text = f"{v:.6g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return text


def padded_range(r: tuple[float, float] | None) -> tuple[float, float]:
    if r is None:
        return 0.0, 1.0
    lo, hi = r
    if lo == hi:
        d = abs(lo) * 0.1 or 1.0
        return lo - d, hi + d
    pad = (hi - lo) * 0.04
    return lo - pad, hi + pad


def axes_items(
    width: int,
    height: int,
    xr: tuple[float, float],
    yr: tuple[float, float],
    *,
    title: str | None,
    xlabel: str | None,
    ylabel: str | None,
) -> tuple[list[dict[str, Any]], Any, Any, tuple[float, float, float, float]]:
    """The frame, grid, ticks and labels; returns (items, x->px, y->px, plot box)."""
    left = 54.0 + (16 if ylabel else 0)
    top = 12.0 + (20 if title else 0)
    right = 14.0
    bottom = 28.0 + (16 if xlabel else 0)
    x0, y0, x1, y1 = left, top, width - right, height - bottom
    (xlo, xhi), (ylo, yhi) = xr, yr

    def px(x: float) -> float:
        return x0 + (x - xlo) / (xhi - xlo) * (x1 - x0)

    def py(y: float) -> float:
        return y1 - (y - ylo) / (yhi - ylo) * (y1 - y0)

    items: list[dict[str, Any]] = [
        {"op": "rect", "x": 0, "y": 0, "w": width, "h": height, "fill": PAPER, "stroke": ""}
    ]
    for t in nice_ticks(xlo, xhi):
        x = px(t)
        items.append({"op": "path", "points": [x, y0, x, y1], "stroke": GRID, "width": 1})
        items.append(_text(x, y1 + 5, tick_label(t), anchor="middle", baseline="top"))
    for t in nice_ticks(ylo, yhi):
        y = py(t)
        items.append({"op": "path", "points": [x0, y, x1, y], "stroke": GRID, "width": 1})
        items.append(_text(x0 - 5, y, tick_label(t), anchor="end", baseline="middle"))
    items.append(
        {"op": "rect", "x": x0, "y": y0, "w": x1 - x0, "h": y1 - y0, "fill": "", "stroke": MUTED}
    )
    if title:
        items.append(_text(width / 2, 6, title, anchor="middle", baseline="top", size=13, fill=INK))
    if xlabel:
        items.append(_text((x0 + x1) / 2, height - 4, xlabel, anchor="middle", baseline="bottom"))
    if ylabel:
        items.append(
            _text(12, (y0 + y1) / 2, ylabel, anchor="middle", baseline="middle", rotate=-90)
        )
    return items, px, py, (x0, y0, x1, y1)


def _text(
    x: float,
    y: float,
    text: str,
    *,
    anchor: str = "start",
    baseline: str = "middle",
    size: int = FONT_SIZE,
    fill: str = MUTED,
    rotate: float = 0,
) -> dict[str, Any]:
    return {
        "op": "text",
        "x": x,
        "y": y,
        "text": text,
        "size": size,
        "fill": fill,
        "anchor": anchor,
        "baseline": baseline,
        "rotate": rotate,
    }


def legend_items(labels: list[str], box: tuple[float, float, float, float]) -> list[dict]:
    x1, y0 = box[2], box[1]
    widest = max(len(s) for s in labels) * 6.5 + 26
    x = x1 - widest - 6
    items: list[dict[str, Any]] = [
        {
            "op": "rect",
            "x": x,
            "y": y0 + 6,
            "w": widest,
            "h": 16 * len(labels) + 6,
            "fill": PAPER,
            "stroke": GRID,
        },
    ]
    for i, label in enumerate(labels):
        y = y0 + 17 + 16 * i
        color = PALETTE[i % len(PALETTE)]
        items.append({"op": "path", "points": [x + 6, y, x + 20, y], "stroke": color, "width": 2})
        items.append(_text(x + 24, y, label, fill=INK))
    return items


def polyline_runs(xs: list[float], ys: list[float], px: Any, py: Any) -> list[list[float]]:
    """The pixel polylines of one series, broken where a value is not finite."""
    runs: list[list[float]] = []
    current: list[float] = []
    for x, y in zip(xs, ys):
        if math.isfinite(x) and math.isfinite(y):
            current += [round(px(x), 2), round(py(y), 2)]
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs
