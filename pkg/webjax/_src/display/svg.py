"""Scenes (scene.py) as SVG text, with images as embedded PNGs: what the display functions
show natively (Jupyter's `_repr_svg_`, `Figure.save`)."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any
from xml.sax.saxutils import escape, quoteattr

_BASELINES = {"top": "hanging", "middle": "central", "bottom": "text-after-edge"}


def png(width: int, height: int, rgba: bytes) -> bytes:
    """An RGBA PNG (8 bits per channel, no filtering) of `rgba`'s rows."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    stride = width * 4
    raw = b"".join(b"\x00" + rgba[r * stride : (r + 1) * stride] for r in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def _num(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _item(item: dict[str, Any]) -> str:
    op = item["op"]
    if op == "rect":
        fill = item["fill"] or "none"
        stroke = f' stroke="{item["stroke"]}"' if item["stroke"] else ""
        return (
            f'<rect x="{_num(item["x"])}" y="{_num(item["y"])}" width="{_num(item["w"])}" '
            f'height="{_num(item["h"])}" fill="{fill}"{stroke}/>'
        )
    if op == "path":
        p = item["points"]
        pts = " ".join(f"{_num(p[i])},{_num(p[i + 1])}" for i in range(0, len(p), 2))
        return (
            f'<polyline points="{pts}" fill="none" stroke="{item["stroke"]}" '
            f'stroke-width="{item["width"]}" stroke-linejoin="round"/>'
        )
    if op == "dots":
        p, r, fill = item["points"], _num(item["r"]), item["fill"]
        return "".join(
            f'<circle cx="{_num(p[i])}" cy="{_num(p[i + 1])}" r="{r}" fill="{fill}"/>'
            for i in range(0, len(p), 2)
        )
    if op == "text":
        x, y = _num(item["x"]), _num(item["y"])
        rotate = f' transform="rotate({item["rotate"]} {x} {y})"' if item["rotate"] else ""
        return (
            f'<text x="{x}" y="{y}" font-size="{item["size"]}" fill="{item["fill"]}" '
            f'text-anchor="{item["anchor"]}" '
            f'dominant-baseline="{_BASELINES[item["baseline"]]}"{rotate}>'
            f"{escape(item['text'])}</text>"
        )
    if op == "image":
        data = base64.b64encode(png(item["iw"], item["ih"], item["rgba"])).decode()
        return (
            f'<image x="{_num(item["x"])}" y="{_num(item["y"])}" width="{_num(item["w"])}" '
            f'height="{_num(item["h"])}" preserveAspectRatio="none" '
            f'style="image-rendering:pixelated" href="data:image/png;base64,{data}"/>'
        )
    raise ValueError(f"unknown scene item {op!r}")


def to_svg(scene: dict[str, Any]) -> str:
    w, h = scene["width"], scene["height"]
    title = f"<title>{escape(scene['title'])}</title>" if scene.get("title") else ""
    body = "".join(_item(item) for item in scene["items"])
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label={quoteattr(scene.get("alt", ""))} '
        f'font-family="system-ui, sans-serif">{title}{body}</svg>'
    )
