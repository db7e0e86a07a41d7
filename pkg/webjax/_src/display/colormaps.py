"""Colormaps for `imshow` of 2-D data: sampled colors, interpolated linearly in sRGB."""

from __future__ import annotations

# Nine evenly spaced samples of each map (0, 1/8, ..., 1).
SAMPLES = {
    "viridis": ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c",
                "#28ae80", "#5ec962", "#addc30", "#fde725"],
    "magma": ["#000004", "#1c1044", "#4f127b", "#812581", "#b5367a",
              "#e55964", "#fb8761", "#fec287", "#fcfdbf"],
    "inferno": ["#000004", "#1f0c48", "#550f6d", "#88226a", "#ba3655",
                "#e35933", "#f98c0a", "#f9c932", "#fcffa4"],
    "gray": ["#000000", "#ffffff"],
    "coolwarm": ["#3b4cc0", "#6788ee", "#9abbff", "#c9d7f0", "#edd1c2",
                 "#f7a889", "#e26952", "#b40426"],
}  # fmt: skip


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def lookup_table(name: str) -> list[tuple[int, int, int]]:
    """256 RGB colors of colormap `name`; ValueError naming the known maps otherwise."""
    if name not in SAMPLES:
        known = ", ".join(sorted(SAMPLES))
        raise ValueError(f"unknown colormap {name!r}: the colormaps are {known}")
    anchors = [_rgb(c) for c in SAMPLES[name]]
    table = []
    for i in range(256):
        t = i / 255 * (len(anchors) - 1)
        k = min(int(t), len(anchors) - 2)
        f = t - k
        a, b = anchors[k], anchors[k + 1]
        table.append(tuple(round(a[c] + (b[c] - a[c]) * f) for c in range(3)))
    return table  # type: ignore[return-value]
