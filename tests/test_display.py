"""webjax.display natively: data checks (JAX's/NumPy's error kinds), the SVG and HTML it returns,
the images' pixels (decoded from the embedded PNG), tables, and Array._repr_html_.

In the browser the same scenes are drawn on a canvas: tests/browser/test_repl.py checks pixels.
"""

from __future__ import annotations

import base64
import math
import re
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax import display
from webjax._src.display import scene

SVG = "{http://www.w3.org/2000/svg}"


def _svg(figure: display.Figure) -> ET.Element:
    root = ET.fromstring(figure.to_svg())
    assert root.tag == SVG + "svg"
    return root


def _points(polyline: ET.Element) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in polyline.get("points").split()]


def _decode_png(data: bytes) -> tuple[int, int, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n : pos + 12 + n])
        assert crc == zlib.crc32(kind + body)
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert (depth, color) == (8, 6)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * 4 + 1
    assert all(raw[r * stride] == 0 for r in range(height))  # filter "none" on every row
    return width, height, b"".join(raw[r * stride + 1 : (r + 1) * stride] for r in range(height))


def _images(figure: display.Figure) -> list[tuple[int, int, bytes]]:
    out = []
    for image in _svg(figure).iter(SVG + "image"):
        href = image.get("href")
        assert href.startswith("data:image/png;base64,")
        out.append(_decode_png(base64.b64decode(href.split(",", 1)[1])))
    return out


# --- plot and scatter ------------------------------------------------------------------------


def test_plot_series_lines_follow_the_data():
    x = jnp.linspace(0.0, 2 * math.pi, 64)
    fig = display.plot(jnp.stack([jnp.sin(x), 2 * jnp.cos(x)], axis=1), x, labels=["s", "c"])
    assert isinstance(fig, display.Figure) and fig.kind == "plot" and not fig.shown
    assert "not drawn" in repr(fig) and "2 series x 64 points" in repr(fig)
    root = _svg(fig)
    lines = [p for p in root.iter(SVG + "polyline") if p.get("stroke") in scene.PALETTE]
    series = [p for p in lines if len(_points(p)) == 64]
    assert len(series) == 2
    sin_pts, cos_pts = (_points(p) for p in series)
    xs = [p[0] for p in sin_pts]
    assert xs == sorted(xs) and len(set(xs)) == 64  # x grows left to right
    # Larger values are drawn higher (smaller pixel y): sin peaks at x = pi/2, 2cos at 0.
    ys = np.sin(np.linspace(0.0, 2 * math.pi, 64))
    assert int(np.argmin([p[1] for p in sin_pts])) == int(np.argmax(ys))
    assert min(p[1] for p in cos_pts) < min(p[1] for p in sin_pts)  # 2cos reaches higher
    texts = [t.text for t in root.iter(SVG + "text")]
    assert "s" in texts and "c" in texts  # the legend


def test_plot_default_xs_nan_gaps_and_inputs():
    fig = display.plot([1.0, 2.0, float("nan"), 4.0, 5.0, 6.0])
    runs = [
        _points(p) for p in _svg(fig).iter(SVG + "polyline") if p.get("stroke") in scene.PALETTE
    ]
    assert sorted(len(r) for r in runs) == [2, 3]  # broken at the NaN
    # Lists, tuples, NumPy arrays and webjax arrays draw the same picture.
    a = display.plot([0, 1, 4, 9]).to_svg()
    assert display.plot((0, 1, 4, 9)).to_svg() == a
    assert display.plot(np.array([0, 1, 4, 9])).to_svg() == a
    assert display.plot(jnp.array([0, 1, 4, 9])).to_svg() == a


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: display.plot(jnp.zeros((2, 2, 2))), ValueError, "1-D or 2-D"),
        (lambda: display.plot(3.0), ValueError, "shape \\(\\)"),
        (lambda: display.plot([1, 2, 3], [1, 2]), ValueError, "xs has 2 values but ys has 3"),
        (lambda: display.plot([1, 2], xs=[[1, 2]]), ValueError, "1-D"),
        (lambda: display.plot([1j, 2j]), TypeError, "complex"),
        (lambda: display.plot(jnp.array([1 + 2j])), TypeError, "complex"),
        (lambda: display.plot(["a", "b"]), TypeError, "real numbers"),
        (lambda: display.plot([[1, 2], [3]]), ValueError, "ragged"),
        (lambda: display.plot([[1, 2], [3, 4]], labels=["one"]), ValueError, "1 labels for 2"),
        (lambda: display.plot([1, 2], width=10), ValueError, "width"),
        (lambda: display.scatter([1, 2], [1, 2, 3]), ValueError, "xs has 2 values"),
        (lambda: display.scatter([[1]], [[1]]), ValueError, "1-D"),
        (lambda: display.scatter([1], [1], size=0), ValueError, "size"),
        (lambda: display.imshow(jnp.zeros((2, 2, 2))), ValueError, "\\(H, W, 3\\)"),
        (lambda: display.imshow(jnp.zeros(4)), ValueError, "2-D or 3-D"),
        (lambda: display.imshow(jnp.zeros((0, 3))), ValueError, "empty"),
        (lambda: display.imshow(jnp.zeros((2, 2)), cmap="jet"), ValueError, "viridis"),
        (lambda: display.table({"a": [1, 2], "b": [1]}), ValueError, "different lengths"),
        (lambda: display.table([[1, 2], [3]]), ValueError, "different lengths"),
        (lambda: display.table([[1, 2]], columns=["a"]), ValueError, "1 column names"),
        (lambda: display.table(5), TypeError, "expected a dict"),
    ],
)
def test_bad_input_raises(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_scatter_dots_and_axes():
    fig = display.scatter([0.0, 1.0, 2.0, float("inf")], [0.0, 10.0, 5.0, 1.0], title="pts")
    root = _svg(fig)
    dots = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(SVG + "circle")]
    assert len(dots) == 3  # the point at inf is left out
    assert dots[0][0] < dots[1][0] < dots[2][0]
    assert dots[1][1] < dots[2][1] < dots[0][1]  # y = 10 highest, then 5, then 0
    assert root.find(SVG + "title").text == "pts"
    assert "pts" in [t.text for t in root.iter(SVG + "text")]


def test_nice_ticks():
    assert scene.nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert scene.nice_ticks(-3.2, 7.9) == [-2.0, 0.0, 2.0, 4.0, 6.0]
    assert scene.nice_ticks(0.0, 1e-6)[1] == pytest.approx(2e-7)
    for lo, hi in [(-1e5, 3e5), (0.1, 0.11), (-7.0, -2.0)]:
        ticks = scene.nice_ticks(lo, hi)
        assert 3 <= len(ticks) <= 11 and lo <= ticks[0] and ticks[-1] <= hi + abs(hi) * 1e-9


# --- imshow --------------------------------------------------------------------------------


def test_imshow_gray_colormap_and_colorbar():
    fig = display.imshow([[0.0, 0.5], [1.0, float("nan")]], cmap="gray")
    (w, h, px), (bw, bh, bar) = _images(fig)
    assert (w, h) == (2, 2) and (bw, bh) == (1, 256)
    pixels = [tuple(px[i : i + 4]) for i in range(0, 16, 4)]
    assert pixels == [(0, 0, 0, 255), (128, 128, 128, 255), (255, 255, 255, 255), (0, 0, 0, 0)]
    assert tuple(bar[:4]) == (255, 255, 255, 255) and tuple(bar[-4:]) == (0, 0, 0, 255)


def test_imshow_vmin_vmax_clip_and_viridis_ends():
    fig = display.imshow(jnp.array([[-5.0, 0.0, 1.0, 9.0]]), vmin=0.0, vmax=1.0)
    (_, _, px), _ = _images(fig)
    pixels = [tuple(px[i : i + 3]) for i in range(0, 16, 4)]
    assert pixels[0] == pixels[1] == (0x44, 0x01, 0x54)  # viridis's first color
    assert pixels[2] == pixels[3] == (0xFD, 0xE7, 0x25)  # and its last


def test_imshow_rgb_and_rgba():
    rgb = jnp.array([[[255, 0, 0], [0, 128, 255]]], dtype=jnp.uint8)
    ((w, h, px),) = _images(display.imshow(rgb))
    assert (w, h) == (2, 1) and px == bytes([255, 0, 0, 255, 0, 128, 255, 255])
    rgba = [[[1.0, 0.5, 0.0, 0.25], [2.0, -1.0, 0.0, 1.0]]]  # floats in [0, 1], clipped
    ((_, _, px),) = _images(display.imshow(rgba))
    assert px == bytes([255, 128, 0, 64, 255, 0, 0, 255])


def test_imshow_of_a_computed_image_has_structure():
    y, x = jnp.meshgrid(jnp.linspace(-1, 1, 16), jnp.linspace(-1, 1, 24), indexing="ij")
    fig = display.imshow(jnp.sqrt(x**2 + y**2), cmap="magma", title="radius")
    assert fig.kind == "imshow" and "16x24 values, colormap magma" in repr(fig)
    (w, h, px), _ = _images(fig)
    assert (w, h) == (24, 16)
    colors = {px[i : i + 3] for i in range(0, len(px), 4)}
    assert len(colors) > 20
    image = _svg(fig).find(SVG + "image")
    assert float(image.get("width")) == 24 * 13  # scaled by a whole factor to about 320 px


# --- tables ---------------------------------------------------------------------------------


def test_table_from_columns_rows_and_records():
    t = display.table({"x": jnp.array([0.5, 1.0]), "name": ["<a>", "b"]}, title="T")
    assert t.columns == ["x", "name"] and t.rows == [["0.5", "<a>"], ["1", "b"]]
    html = t._repr_html_()
    assert "<caption>T</caption>" in html and "&lt;a&gt;" in html and "<a>" not in html
    assert str(t).splitlines() == ["T", "  x  name", "---  ----", "0.5   <a>", "  1     b"]
    rows = display.table([(1, 2.25), (3, 4.0)], columns=["a", "b"])
    assert rows.rows == [["1", "2.25"], ["3", "4"]]
    records = display.table([{"a": 1}, {"a": 2, "b": True}])
    assert records.columns == ["a", "b"] and records.rows == [["1", ""], ["2", "True"]]
    grid = display.table(jnp.arange(6).reshape(3, 2))
    assert grid.columns == ["0", "1"] and grid.rows[2] == ["4", "5"]
    long = display.table({"i": list(range(10))}, max_rows=4)
    assert len(long.rows) == 5 and long.rows[-1][0] == "... 6 more rows"


# --- native output: files and Jupyter's reprs ----------------------------------------------


def test_figure_save_and_jupyter_reprs(tmp_path):
    fig = display.plot([3, 1, 2], title="a & b")
    path = fig.save(tmp_path / "plot.svg")
    assert path.read_text() == fig.to_svg() == fig._repr_svg_()
    assert fig._repr_html_().startswith('<div class="webjax-figure"><svg ')
    assert ET.fromstring(path.read_text()).find(SVG + "title").text == "a & b"


def test_array_repr_html():
    x = jnp.arange(6.0).reshape(2, 3)
    html = x._repr_html_()
    assert f"Array float32[2,3] on {x.device}" in html
    cells = re.findall(r"<td>(.*?)</td>", html)
    assert cells == [s.strip() for s in str(x).replace("[", " ").replace("]", " ").split()]
    big = jnp.zeros((30, 30), dtype=jnp.int32)._repr_html_()
    assert "<table" not in big and "<pre>[[0 0 0" in big
    assert "<pre>3</pre>" in jnp.int32(3)._repr_html_()
    ET.fromstring(html)  # well-formed
    assert webjax.numpy.array([True, False])._repr_html_().count("<td>") == 2


# --- the profiler's timeline -----------------------------------------------------------------


def _bars(figure: display.Figure) -> dict[str, list[tuple[float, float, float]]]:
    """Lane color -> (x, y, width) of the timeline's bars."""
    from webjax._src.display.timeline import LANE_COLORS

    out: dict[str, list[tuple[float, float, float]]] = {}
    for r in _svg(figure).iter(SVG + "rect"):
        if r.get("fill") in LANE_COLORS.values():
            x, y, w = (float(r.get(k)) for k in ("x", "y", "width"))
            out.setdefault(r.get("fill"), []).append((x, y, w))
    return out


def test_timeline_lanes_and_bars():
    from webjax._src.display.timeline import LANE_COLORS

    events = [
        {"name": "k", "ph": "X", "ts": 1000.0, "dur": 500.0, "tid": "wasm", "cat": "kernel"},
        {"name": "k", "ph": "X", "ts": 2000.0, "dur": 1000.0, "tid": "wasm", "cat": "kernel"},
        {"name": "g", "ph": "X", "ts": 1500.0, "dur": 250.0, "tid": "webgl", "cat": "kernel"},
        {"name": "step", "ph": "X", "ts": 1000.0, "dur": 2000.0, "tid": "annotations"},
        {"name": "meta", "ph": "M", "tid": "wasm"},  # not a span: ignored
    ]
    fig = display.timeline(events, title="t")
    assert fig.kind == "timeline"
    assert fig.summary == "annotations: 1 (2 ms); wasm: 2 (1.5 ms); webgl: 1 (0.25 ms)"
    bars = _bars(fig)
    (ann,), wasm, (gl,) = (bars[LANE_COLORS[k]] for k in ("annotations", "wasm", "webgl"))
    assert ann[1] < wasm[0][1] < gl[1]  # lanes top to bottom in a fixed order
    # x is linear in time: the annotation spans [0, 2] ms, the second wasm kernel [1, 2] ms.
    assert wasm[1][0] + wasm[1][2] == pytest.approx(ann[0] + ann[2], abs=0.02)
    assert wasm[1][2] == pytest.approx(ann[2] / 2, abs=0.02)
    assert gl[0] == pytest.approx(ann[0] + ann[2] / 4, abs=0.02)
    labels = [t.text for t in _svg(fig).iter(SVG + "text")]
    assert "wasm (2)" in labels and "ms" in labels
    # A trace file's object works too, and no events says so.
    assert display.timeline({"traceEvents": events}).summary == fig.summary
    assert "no kernels ran" in display.timeline([]).to_svg()


def test_timeline_of_a_real_trace(device):
    webjax.profiler.start_trace()
    try:
        x = jnp.ones((16, 16))
        (x @ x + 1.0).block_until_ready()
        jnp.sin(x).sum().block_until_ready()
    finally:
        events = webjax.profiler.stop_trace()
    kernels = [e for e in events if e.get("cat") == "kernel"]
    fig = display.timeline(events)
    assert len(kernels) >= 2
    assert fig.summary.startswith(f"{device.platform}: {len(kernels)} (")
    assert sum(len(v) for v in _bars(fig).values()) == len(kernels)


@pytest.mark.parametrize(
    "events, error, match",
    [
        ("trace", TypeError, "expected the list of events"),
        ([1], TypeError, "event 0 is a int"),
        ([{"ph": "X", "ts": 0.0}], ValueError, "finite numbers ts and dur"),
        ([{"ph": "X", "ts": 0.0, "dur": -1.0}], ValueError, "negative duration"),
    ],
)
def test_timeline_bad_events(events, error, match):
    with pytest.raises(error, match=match):
        display.timeline(events)
