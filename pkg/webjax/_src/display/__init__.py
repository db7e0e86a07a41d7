"""webjax.display: plots, scatter plots, images and tables without matplotlib.

Each function checks its data, lays the picture out as a scene (scene.py) and returns a
`Figure` (or a `Table`). Where there is a page to draw on, the picture is drawn at once, by
hosts/display_browser.py: in the REPL's worker it is posted to the page, on a page running
Pyodide it is appended to the element with id `webjax-display` (else to the body). Natively,
and under Node.js or Deno, nothing is drawn: the returned object carries the picture as SVG
(`to_svg()`, `save(path)`) or HTML (`to_html()`), and `_repr_svg_`/`_repr_html_` make Jupyter
show it as a cell's value.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import Any

from ..hosts import display_browser, in_browser
from . import colormaps, data, scene
from .svg import to_svg
from .timeline import layout as timeline_layout

__all__ = ["Figure", "Table", "imshow", "plot", "scatter", "table", "timeline"]

MAX_TABLE_ROWS = 200


class Figure:
    """A drawn (or drawable) picture: `kind` is 'plot', 'scatter' or 'imshow'; `scene` its
    layout (size and drawing items); `shown` whether it was drawn on a page."""

    def __init__(self, kind: str, scene: dict[str, Any], summary: str) -> None:
        self.kind = kind
        self.scene = scene
        self.summary = summary
        self.shown = False

    @property
    def _webjax_shown(self) -> bool:  # the REPL does not echo a figure it already drew
        return self.shown

    def to_svg(self) -> str:
        return to_svg(self.scene)

    def save(self, path: str | Path) -> Path:
        """Write the picture as an SVG file; returns the path."""
        path = Path(path)
        path.write_text(self.to_svg())
        return path

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_html_(self) -> str:
        return f'<div class="webjax-figure">{self.to_svg()}</div>'

    def __repr__(self) -> str:
        where = "drawn on the page" if self.shown else "not drawn: .to_svg() or .save(path)"
        return f"<webjax.display {self.kind}: {self.summary}; {where}>"


class Table:
    """A table of formatted cells: `columns` (names) and `rows` (lists of strings)."""

    def __init__(self, columns: list[str], rows: list[list[str]], title: str | None) -> None:
        self.columns = columns
        self.rows = rows
        self.title = title
        self.shown = False

    @property
    def _webjax_shown(self) -> bool:
        return self.shown

    def to_html(self) -> str:
        head = "".join(f"<th>{escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>"
            for row in self.rows
        )
        caption = f"<caption>{escape(self.title)}</caption>" if self.title else ""
        return (
            f'<table class="webjax-table">{caption}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        widths = [len(c) for c in self.columns]
        for row in self.rows:
            widths = [max(w, len(cell)) for w, cell in zip(widths, row)]
        lines = [self.title] if self.title else []
        lines.append("  ".join(c.rjust(w) for c, w in zip(self.columns, widths)))
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in self.rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


def _show(figure: Figure) -> Figure:
    if in_browser():
        figure.shown = display_browser.show_scene(figure.scene)
    return figure


def _size(width: int, height: int) -> tuple[int, int]:
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, int) or not 40 <= v <= 4000:
            raise ValueError(f"{name} must be an int between 40 and 4000 pixels, got {v!r}")
    return width, height


def _labels(labels: Any, count: int) -> list[str] | None:
    if labels is None:
        return None
    if isinstance(labels, str):
        labels = [labels]
    labels = [str(s) for s in labels]
    if len(labels) != count:
        raise ValueError(f"labels: {len(labels)} labels for {count} series")
    return labels


def plot(
    ys: Any,
    xs: Any = None,
    *,
    title: str | None = None,
    labels: Any = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    width: int = 480,
    height: int = 300,
) -> Figure:
    """A line plot of `ys` (shape (n,), or (n, k) for k series) against `xs` (shape (n,);
    default 0..n-1). Non-finite values leave gaps."""
    width, height = _size(width, height)
    ydata, yshape = data.real_array(ys, "plot: ys", (1, 2))
    n = yshape[0]
    series = [ydata] if len(yshape) == 1 else [list(col) for col in zip(*ydata)]
    if len(yshape) == 2 and yshape[1] == 0:
        series = []
    if xs is None:
        xvals = [float(i) for i in range(n)]
    else:
        xdata, xshape = data.real_array(xs, "plot: xs", (1,))
        if xshape[0] != n:
            raise ValueError(f"plot: xs has {xshape[0]} values but ys has {n} rows")
        xvals = [float(v) for v in xdata]
    yvals = [[float(v) for v in s] for s in series]
    names = _labels(labels, len(series))
    xr = scene.padded_range(data.finite_range(xvals))
    yr = scene.padded_range(data.finite_range([v for s in yvals for v in s]))
    items, px, py, box = scene.axes_items(
        width, height, xr, yr, title=title, xlabel=xlabel, ylabel=ylabel
    )
    for i, s in enumerate(yvals):
        color = scene.PALETTE[i % len(scene.PALETTE)]
        for run in scene.polyline_runs(xvals, s, px, py):
            if len(run) == 2:
                items.append({"op": "dots", "points": run, "r": 1.5, "fill": color})
            else:
                items.append({"op": "path", "points": run, "stroke": color, "width": 1.75})
    if names:
        items += scene.legend_items(names, box)
    summary = f"{len(series)} series x {n} points"
    the_scene = _scene(width, height, title, f"line plot, {summary}", items)
    return _show(Figure("plot", the_scene, summary))


def _scene(width: int, height: int, title: str | None, alt: str, items: list) -> dict[str, Any]:
    return {"width": width, "height": height, "title": title or "", "alt": alt, "items": items}


def scatter(
    xs: Any,
    ys: Any,
    *,
    size: float = 3.0,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    width: int = 480,
    height: int = 300,
) -> Figure:
    """A scatter plot of the points (xs[i], ys[i]); `size` is the dots' radius in pixels.
    Points with a non-finite coordinate are left out."""
    width, height = _size(width, height)
    xdata, xshape = data.real_array(xs, "scatter: xs", (1,))
    ydata, yshape = data.real_array(ys, "scatter: ys", (1,))
    if xshape != yshape:
        raise ValueError(f"scatter: xs has {xshape[0]} values but ys has {yshape[0]}")
    if not (isinstance(size, (int, float)) and 0 < size <= 50):
        raise ValueError(f"scatter: size must be a radius in (0, 50] pixels, got {size!r}")
    pts = [
        (float(x), float(y)) for x, y in zip(xdata, ydata) if math.isfinite(x) and math.isfinite(y)
    ]
    xr = scene.padded_range(data.finite_range([p[0] for p in pts]))
    yr = scene.padded_range(data.finite_range([p[1] for p in pts]))
    items, px, py, _ = scene.axes_items(
        width, height, xr, yr, title=title, xlabel=xlabel, ylabel=ylabel
    )
    flat = [c for x, y in pts for c in (round(px(x), 2), round(py(y), 2))]
    items.append({"op": "dots", "points": flat, "r": float(size), "fill": scene.PALETTE[0]})
    summary = f"{len(pts)} points"
    return _show(
        Figure("scatter", _scene(width, height, title, f"scatter plot, {summary}", items), summary)
    )


def _channel(v: float, integer: bool) -> int:
    if not math.isfinite(v):
        return 0
    if integer:
        return min(max(int(v), 0), 255)
    return min(max(round(v * 255), 0), 255)


def imshow(
    img: Any,
    *,
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    title: str | None = None,
    width: int | None = None,
) -> Figure:
    """An image: 2-D values (H, W) through colormap `cmap` between `vmin` and `vmax` (default
    the data's range), drawn with a colorbar; or (H, W, 3) RGB / (H, W, 4) RGBA colors, as
    floats in [0, 1] or integers in [0, 255]. `width`: the drawn width in pixels (default: the
    image scaled by a whole factor to about 320 pixels)."""
    values, shape = data.real_array(img, "imshow: img", (2, 3))
    if len(shape) == 3 and shape[2] not in (3, 4):
        raise ValueError(f"imshow: a 3-D image must be (H, W, 3) or (H, W, 4), got {shape}")
    h, w = shape[0], shape[1]
    if h == 0 or w == 0:
        raise ValueError(f"imshow: the image is empty (shape {shape})")
    rgba = bytearray(h * w * 4)
    bar = None
    if len(shape) == 2:
        table = colormaps.lookup_table(cmap)
        flat = data.flatten(values)
        r = data.finite_range(flat) or (0.0, 1.0)
        lo = r[0] if vmin is None else float(vmin)
        hi = r[1] if vmax is None else float(vmax)
        scale = 255 / (hi - lo) if hi > lo else 0.0
        for i, v in enumerate(flat):
            if math.isfinite(v):
                rgb = table[min(max(int((v - lo) * scale + 0.5), 0), 255)]
                rgba[4 * i : 4 * i + 4] = bytes((*rgb, 255))
        bar = (table, lo, hi)
    else:
        integer = all(isinstance(v, int) for row in values for px in row for v in px)
        i = 0
        for row in values:
            for px in row:
                c = [_channel(float(v), integer) for v in px]
                rgba[i : i + 4] = bytes(c if len(c) == 4 else (*c, 255))
                i += 4
    if width is None:
        factor = max(1, round(320 / max(w, h)))
        draw_w, draw_h = w * factor, h * factor
    else:
        _size(width, 40)
        draw_w, draw_h = width, max(1, round(width * h / w))
    top = 8 + (20 if title else 0)
    # the colorbar: a 12-pixel strip, a gap, then its end labels (about 7 pixels a character)
    labels = (scene.tick_label(bar[2]), scene.tick_label(bar[1])) if bar else ("", "")
    bar_w = 12 + 16 + 7 * max(len(t) for t in labels) + 8 if bar else 0
    total_w, total_h = int(draw_w + 16 + bar_w), int(draw_h + top + 8)
    paper = {"op": "rect", "x": 0, "y": 0, "w": total_w, "h": total_h, "fill": scene.PAPER}
    picture = {"op": "image", "x": 8, "y": top, "w": draw_w, "h": draw_h, "iw": w, "ih": h}
    items: list[dict[str, Any]] = [{**paper, "stroke": ""}, {**picture, "rgba": bytes(rgba)}]
    if title:
        items.append(
            scene._text(
                total_w / 2, 6, title, anchor="middle", baseline="top", size=13, fill=scene.INK
            )
        )
    if bar:
        table = bar[0]
        strip = bytes(c for k in range(255, -1, -1) for c in (*table[k], 255))
        bx = 8 + draw_w + 12
        items.append(
            {
                "op": "image",
                "x": bx,
                "y": top,
                "w": 12,
                "h": draw_h,
                "iw": 1,
                "ih": 256,
                "rgba": strip,
            }
        )
        items.append(
            {
                "op": "rect",
                "x": bx,
                "y": top,
                "w": 12,
                "h": draw_h,
                "fill": "",
                "stroke": scene.MUTED,
            }
        )
        items.append(scene._text(bx + 16, top + 5, labels[0]))
        items.append(scene._text(bx + 16, top + draw_h - 5, labels[1]))
    kind = (
        f"{h}x{w} values, colormap {cmap}"
        if bar
        else f"{h}x{w} {'RGBA' if shape[2] == 4 else 'RGB'}"
    )
    return _show(Figure("imshow", _scene(total_w, total_h, title, f"image, {kind}", items), kind))


def timeline(events: Any, *, title: str | None = None, width: int = 640) -> Figure:
    """The profiler's kernels on a timeline, one lane per device (annotations in their own):
    `events` is what `webjax.profiler.stop_trace()` returns (or a trace file's JSON object)."""
    width, _ = _size(width, 40)
    items, height, summary = timeline_layout(events, width, title)
    return _show(
        Figure("timeline", _scene(width, height, title, f"timeline, {summary}", items), summary)
    )


def _cell(v: Any) -> str:
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        v = v.tolist()
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def table(
    rows: Any, *, columns: Any = None, title: str | None = None, max_rows: int = MAX_TABLE_ROWS
) -> Table:
    """A table from a dict of columns ({name: 1-D values}), a list of dicts, a list of rows
    (lists or tuples) or a 2-D array. `columns` names the columns of rows; past `max_rows`
    rows the rest are summarised in a last row."""
    if isinstance(rows, dict):
        if columns is not None:
            raise ValueError("table: columns= is for rows; a dict's keys are its columns")
        names = [str(k) for k in rows]
        cols = []
        for col in rows.values():
            if hasattr(col, "tolist") and not isinstance(col, (list, tuple)):
                col = col.tolist()
            cols.append(list(col) if isinstance(col, (list, tuple)) else [col])
        lengths = {len(c) for c in cols}
        if len(lengths) > 1:
            found = ", ".join(f"{n}: {len(c)}" for n, c in zip(names, cols))
            raise ValueError(f"table: the columns have different lengths ({found})")
        body = [list(r) for r in zip(*cols)]
    else:
        if hasattr(rows, "tolist") and not isinstance(rows, (list, tuple)):
            rows = rows.tolist()
        if not isinstance(rows, (list, tuple)):
            raise TypeError(
                f"table: expected a dict, a list of rows or a 2-D array, got {type(rows).__name__}"
            )
        rows = list(rows)
        if rows and all(isinstance(r, dict) for r in rows):
            names = []
            for r in rows:
                names += [str(k) for k in r if str(k) not in names]
            body = [[r.get(k, "") for k in names] for r in rows]
        else:
            body = [list(r) if isinstance(r, (list, tuple)) else [r] for r in rows]
            width = max((len(r) for r in body), default=0)
            if any(len(r) != width for r in body):
                raise ValueError("table: rows of different lengths")
            names = (
                [str(c) for c in columns] if columns is not None else [str(i) for i in range(width)]
            )
            if len(names) != width:
                raise ValueError(f"table: {len(names)} column names for rows of {width} cells")
    cells = [[_cell(v) for v in r] for r in body[:max_rows]]
    if len(body) > max_rows:
        cells.append([f"... {len(body) - max_rows} more rows"] + [""] * (len(names) - 1))
    result = Table(names, cells, title)
    if in_browser():
        result.shown = display_browser.show_table(names, cells, title or "")
    return result
