"""Spatial sampling: GridSample (N-D; linear, nearest, cubic; zeros, border, reflection padding)
and AffineGrid."""

from __future__ import annotations

import itertools
import math
from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.onnx import host
from webjax._src.onnx.ops.common import Node, dev, int_list
from webjax._src.onnx.registry import op


def _reflect(x: Any, lo: float, hi: float) -> Any:
    span = hi - lo
    if span <= 0:
        return jnp.zeros_like(x)
    d = jnp.abs(x - lo)
    flips = jnp.floor(d / span)
    extra = d - flips * span
    return jnp.where(jnp.remainder(flips, 2) == 0, lo + extra, hi - extra)


def _unnormalize(g: Any, size: int, align: bool) -> Any:
    if align:
        return (g + 1) / 2 * (size - 1)
    return ((g + 1) * size - 1) / 2


def _pad_coord(x: Any, size: int, align: bool, padding: str) -> Any:
    if padding == "border":
        return jnp.clip(x, 0, size - 1)
    if padding == "reflection":
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        return jnp.clip(_reflect(x, lo, hi), 0, size - 1)
    return x


def _pad_index(i: Any, size: int, align: bool, padding: str) -> tuple[Any, Any]:
    """(index clamped into range, whether the sample counts) for an integer position."""
    inside = (i >= 0) & (i <= size - 1)
    if padding == "zeros":
        return jnp.clip(i, 0, size - 1), inside
    if padding == "border":
        return jnp.clip(i, 0, size - 1), jnp.ones_like(inside)
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    r = jnp.clip(_reflect(i.astype(dtypes.float32), lo, hi), 0, size - 1)
    return jnp.round(r).astype(dtypes.int32), jnp.ones_like(inside)


def _cubic(t: Any, a: float = -0.75) -> list[Any]:
    def near(s: Any) -> Any:
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s: Any) -> Any:
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


@op("GridSample")
def grid_sample(node: Node, x: Any, grid: Any) -> Any:
    x, grid = dev(x), dev(grid)
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(
        node.attr("mode", "linear"), node.attr("mode", "linear")
    )
    if node.opset < 20 and not node.has("mode"):
        mode = "linear"
    padding = node.attr("padding_mode", "zeros")
    align = bool(node.attr("align_corners", 0))
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    nd = len(sizes)
    out_sp = grid.shape[1:-1]
    coords = []
    for d in range(nd):  # the grid's last axis lists x (the last spatial axis) first
        g = grid[..., nd - 1 - d].astype(dtypes.float32)
        coords.append(_pad_coord(_unnormalize(g, sizes[d], align), sizes[d], align, padding))
    flat = jnp.reshape(x, (n, c, -1))
    strides = [math.prod(sizes[i + 1 :]) for i in range(nd)]

    def gather(indices: list[Any]) -> Any:
        lin = sum(idx.astype(dtypes.int32) * int(s) for idx, s in zip(indices, strides))
        lin = jnp.reshape(lin, (n, 1, -1))
        lin = jnp.broadcast_to(lin, (n, c, lin.shape[-1]))
        return jnp.take_along_axis(flat, lin, axis=2)

    def tap_sum(taps_per_dim: list[list[tuple[Any, Any]]]) -> Any:
        total = 0
        for combo in itertools.product(*taps_per_dim):
            weight: Any = 1
            idx: list[Any] = []
            for pos, w in combo:
                p, ok = _pad_index(pos, sizes[len(idx)], align, padding)
                idx.append(p)
                weight = weight * jnp.where(ok, w, jnp.zeros_like(w))
            total = total + gather(idx) * jnp.reshape(weight, (n, 1, -1)).astype(x.dtype)
        return total

    if mode == "nearest":
        taps = [[(jnp.round(co).astype(dtypes.int32), jnp.ones_like(co))] for co in coords]
    elif mode == "linear":
        taps = []
        for co in coords:
            lo = jnp.floor(co)
            t = co - lo
            lo = lo.astype(dtypes.int32)
            taps.append([(lo, 1 - t), (lo + 1, t)])
    elif mode == "cubic":
        taps = []
        for co in coords:
            lo = jnp.floor(co)
            ws = _cubic(co - lo)
            lo = lo.astype(dtypes.int32)
            taps.append([(lo + k - 1, ws[k]) for k in range(4)])
    else:
        raise node.unsupported(f"mode={mode!r}")
    out = tap_sum(taps)
    return jnp.reshape(out, (n, c, *out_sp)).astype(x.dtype)


@op("AffineGrid")
def affine_grid(node: Node, theta: Any, size: Any) -> Any:
    dims = int_list(node, size, "size")
    align = bool(node.attr("align_corners", 0))
    n, spatial = dims[0], dims[2:]
    axes = []
    for s in spatial:
        if align:
            axes.append(host.linspace(-1.0, 1.0, s) if s > 1 else [0.0])
        else:
            axes.append([(i * 2 + 1) / s - 1 for i in range(s)])
    # every grid point in spatial order (d, h, w), as (x, y, (z), 1)
    points = [[*p[::-1], 1.0] for p in itertools.product(*axes)]
    theta = dev(theta)
    base = jnp.asarray(host.asarray(points, host.float64).astype(theta.dtype))
    out = jnp.einsum("pk,njk->npj", base, theta)
    return jnp.reshape(out, (n, *spatial, len(spatial)))
