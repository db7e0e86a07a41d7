"""The demo pages (web/demos/, issue 15 item 3) opened as a user would, at the small sizes their
URL parameters allow: each runs to the end on wasm, Mandelbrot also on webgpu and webgl (the
same picture), their canvases hold a picture (pixels read back), the digits network beats 90%
on its held-out images and reloads from safetensors with the same accuracy, and the benchmark
pages report a positive GFLOP/s with a checked result. The ONNX page classifies a held-out digit
and digits drawn with the mouse on wasm, the same classes on webgpu, webgl and cpu, and lists
and runs a model picked in its file input."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 240_000
SITE_DEMOS = Path(__file__).resolve().parents[2] / "dist" / "site" / "demos"

# (distinct colors, pixels not the most common color, all pixels) of a canvas
CANVAS_INK = """canvas => {
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  const counts = new Map();
  for (let i = 0; i < data.length; i += 4) {
    const key = (data[i] << 24) | (data[i + 1] << 16) | (data[i + 2] << 8) | data[i + 3];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const most = Math.max(...counts.values());
  return [counts.size, data.length / 4 - most, data.length / 4];
}"""


def open_demo(new_page: Any, server_url: str, query: str) -> tuple[Any, dict]:
    page = new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server_url + "demos/" + query)
    page.wait_for_function(
        "() => ['done', 'error'].includes(document.documentElement.dataset.demo)",
        timeout=RUN_TIMEOUT_MS,
    )
    state = page.evaluate("() => document.documentElement.dataset.demo")
    assert state == "done", page.evaluate("() => globalThis.demoError") or errors
    result = json.loads(page.evaluate("() => globalThis.demoResult"))
    return page, result


def assert_drawn(page: Any, area: str, min_colors: int = 8) -> None:
    canvases = page.query_selector_all(f"#{area} canvas")
    assert len(canvases) == 1, f"#{area} has {len(canvases)} canvases"
    colors, inked, total = canvases[0].evaluate(CANVAS_INK)
    assert colors >= min_colors and inked > 0.01 * total, (area, colors, inked, total)


def test_digits_trains_and_reloads_from_safetensors(new_page, server_url):
    page, result = open_demo(new_page, server_url, "digits.html?device=wasm&steps=100")
    assert result["device"] == "wasm" and result["steps"] == 100
    assert result["accuracy"] > 0.9, result
    assert result["reloaded_accuracy"] == result["accuracy"]
    assert result["tensors"] == ["b0", "b1", "w0", "w1"]
    assert result["final_loss"] < 0.5
    assert_drawn(page, "loss")
    assert_drawn(page, "samples", min_colors=4)
    assert float(page.text_content("#accuracy")) == pytest.approx(result["accuracy"], abs=1e-4)


@pytest.fixture(scope="module")
def mandelbrot_wasm(browser, server_url) -> dict:
    context = browser.new_context()
    try:
        page, result = open_demo(lambda: context.new_page(), server_url, "mandelbrot.html?size=160")
        assert_drawn(page, "picture")
        return result
    finally:
        context.close()


def test_mandelbrot_on_wasm(mandelbrot_wasm):
    assert mandelbrot_wasm["device"] == "wasm"  # the default
    assert mandelbrot_wasm["size"] == [128, 160]
    assert 0.05 < mandelbrot_wasm["inside_fraction"] < 0.4


@pytest.mark.parametrize("device", ["webgpu", "webgl"])
def test_mandelbrot_on_gpus_matches_wasm(new_page, server_url, device, mandelbrot_wasm):
    page, result = open_demo(new_page, server_url, f"mandelbrot.html?device={device}&size=160")
    assert result["device"] == device
    assert_drawn(page, "picture")
    # float32 rounding near the boundary may move a few points across it, no more
    assert result["inside_fraction"] == pytest.approx(mandelbrot_wasm["inside_fraction"], abs=0.005)


@pytest.mark.parametrize(
    "query",
    ["matmul.html?device=wasm&n=128&reps=3", "conv2d.html?device=wasm&size=small&reps=3"],
)
def test_benchmark_pages_report_gflops(new_page, server_url, query):
    page, result = open_demo(new_page, server_url, query)
    assert result["gflops"] > 0 and result["calls"] >= 3
    assert result["check_rel_err"] < 1e-4
    assert float(page.text_content("#gflops")) > 0
    assert_drawn(page, "chart", min_colors=3)


def test_pendulum_scan_keeps_energy(new_page, server_url):
    page, result = open_demo(new_page, server_url, "pendulum.html?device=wasm&steps=50")
    assert result["steps"] == 50
    assert result["energy_drift"] < 1e-3
    assert_drawn(page, "angles")
    assert_drawn(page, "phase")


def clear(page: Any) -> None:
    """Click the pad's Clear and wait until the page has handled it (its handler counts as an
    interaction: a drawing made before that would be taken for the clear's)."""
    before = page.evaluate("document.documentElement.dataset.interactions")
    page.click("#clear")
    page.wait_for_function(
        f"() => document.documentElement.dataset.interactions !== {before!r}",
        timeout=RUN_TIMEOUT_MS,
    )


def draw(page: Any, strokes: list[list[tuple[float, float]]]) -> dict:
    """Draw `strokes` (points in 0-1 of the pad) with the mouse; wait for the page to classify
    the drawing; its published result."""
    box = page.query_selector("#pad").bounding_box()
    for stroke in strokes:
        before = page.evaluate("document.documentElement.dataset.interactions")
        points = [(box["x"] + u * box["width"], box["y"] + v * box["height"]) for u, v in stroke]
        page.mouse.move(*points[0])
        page.mouse.down()
        for point in points[1:]:
            page.mouse.move(*point, steps=4)
        page.mouse.up()
        page.wait_for_function(
            f"() => document.documentElement.dataset.interactions !== {before!r}",
            timeout=RUN_TIMEOUT_MS,
        )
        assert page.evaluate("document.documentElement.dataset.interactions") != "error", (
            page.evaluate("() => globalThis.demoError")
        )
    return json.loads(page.evaluate("() => globalThis.demoResult"))


def ellipse(cx: float, cy: float, rx: float, ry: float, n: int = 24) -> list[tuple[float, float]]:
    return [
        (cx + rx * math.sin(2 * math.pi * k / n), cy - ry * math.cos(2 * math.pi * k / n))
        for k in range(n + 1)
    ]


@pytest.fixture(scope="module")
def onnx_wasm(browser, server_url) -> dict:
    context = browser.new_context()
    try:
        page, result = open_demo(lambda: context.new_page(), server_url, "onnx.html?sample=7")
        assert_drawn(page, "input", min_colors=4)
        colors, inked, total = page.query_selector("#pad").evaluate(CANVAS_INK)
        assert colors >= 4 and inked > 0.05 * total, (colors, inked, total)
        # a drawn zero (one stroke) and a drawn one (a short slanted stroke), small and
        # off-centre: the page's size normalisation puts them in the digits' frame
        clear(page)
        zero = draw(page, [ellipse(0.35, 0.4, 0.12, 0.2)])
        clear(page)
        one = draw(page, [[(0.62, 0.25), (0.6, 0.45), (0.58, 0.65)]])
        # any .onnx file: the site's own model picked in the file input, run on random input
        before = page.evaluate("document.documentElement.dataset.interactions")
        page.set_input_files("#model-file", str(SITE_DEMOS / "digits.onnx"))
        page.wait_for_function(
            f"() => document.documentElement.dataset.interactions !== {before!r}",
            timeout=RUN_TIMEOUT_MS,
        )
        user = json.loads(page.evaluate("() => globalThis.demoResult"))
        info = page.text_content("#model-info")
        return {"page": result, "zero": zero, "one": one, "user": user, "info": info}
    finally:
        context.close()


def test_onnx_demo_classifies_on_wasm(onnx_wasm):
    result = onnx_wasm["page"]
    assert result["device"] == "wasm"
    assert result["model_inputs"] == ["pixels"] and result["model_outputs"] == ["probabilities"]
    assert result["accuracy"] > 0.9, result["accuracy"]
    assert result["sample"] == 7
    latest = result["latest"]
    assert latest["predicted"] == result["sample_label"], latest
    assert int(result["held_out_predictions"][7]) == result["sample_label"]
    assert sum(latest["probabilities"]) == pytest.approx(1.0, abs=1e-5)
    assert result["first_ms"] > result["steady_ms"] > 0 and result["steady_calls"] >= 3
    for name, digit in (("zero", 0), ("one", 1)):
        drawn = onnx_wasm[name]["latest"]
        assert drawn["source"] == "drawing" and drawn["predicted"] == digit, (name, drawn)
    user = onnx_wasm["user"]["user_model"]
    assert user["name"] == "digits.onnx"
    assert user["outputs"] == {"probabilities": {"shape": [1, 10], "dtype": "float32"}}
    assert "input  pixels: float32 [N, 1, 8, 8]" in onnx_wasm["info"], onnx_wasm["info"]


@pytest.mark.parametrize("device", ["webgpu", "webgl", "cpu"])
def test_onnx_demo_same_classes_on_other_devices(new_page, server_url, onnx_wasm, device):
    # the cpu device (pure Python in the page) takes some 2 minutes for all 360 images
    count = 40 if device == "cpu" else 360
    query = f"onnx.html?device={device}&sample=7&held_out={count}"
    page, result = open_demo(new_page, server_url, query)
    assert result["device"] == device and len(result["held_out_predictions"]) == count
    want = onnx_wasm["page"]
    assert result["latest"]["predicted"] == want["latest"]["predicted"]
    assert result["latest"]["probabilities"] == pytest.approx(
        want["latest"]["probabilities"], abs=1e-4
    )
    # float32 rounding on another device may tip a borderline image, at most one
    differ = sum(
        a != b for a, b in zip(result["held_out_predictions"], want["held_out_predictions"][:count])
    )
    assert differ <= 1, differ
    clear(page)
    zero = draw(page, [ellipse(0.5, 0.5, 0.3, 0.4)])
    assert zero["latest"]["predicted"] == 0, zero["latest"]


def test_demo_index_links_every_demo(site):
    pages = sorted(p.name for p in (site / "demos").glob("*.html") if p.name != "index.html")
    index = (site / "demos" / "index.html").read_text()
    assert sorted(set(re.findall(r'href="(\w+\.html)"', index))) == pages
    assert 'href="demos/index.html"' in (site / "index.html").read_text()
    assert (site / "demos" / "digits.csv.gz").stat().st_size > 50_000
    model = (site / "demos" / "digits.onnx").read_bytes()  # field 1 (ir_version), a varint
    assert model[:1] == b"\x08" and len(model) > 4000


def test_repl_examples_of_the_demos(new_page, server_url):
    """The REPL's menu entries for the demos (web/repl_examples.mjs) run in its worker: the
    digits example fetches the site's data, trains and reloads; pendulums and matmul draw or
    print what they should."""
    page = new_page()
    page.goto(server_url + "index.html")
    page.wait_for_function(
        "() => ['ready', 'error'].includes(document.body.dataset.state)", timeout=RUN_TIMEOUT_MS
    )
    assert page.evaluate("document.body.dataset.state") == "ready", page.text_content("#output")
    names = page.eval_on_selector_all("#examples option", "els => els.map((e) => e.textContent)")
    for name in (
        "Digits: train an MLP (jit, grad)",
        "Pendulums (lax.scan)",
        "Benchmark: matmul GFLOP/s",
    ):
        page.select_option("#examples", str(names.index(name) - 1))
        before = int(page.evaluate("document.body.dataset.runs ?? '0'"))
        page.click("#run")
        page.wait_for_function(
            f"() => Number(document.body.dataset.runs ?? 0) > {before}", timeout=RUN_TIMEOUT_MS
        )
        output = page.text_content("#output")
        assert "Traceback" not in output, (name, output)
        canvases = page.query_selector_all("#output figure.webjax-display canvas")
        if name.startswith("Digits"):
            acc = float(re.search(r"test accuracy: ([0-9.]+)", output).group(1))
            back = float(re.search(r"bytes of safetensors: ([0-9.]+)", output).group(1))
            assert acc > 0.9 and back == acc, output
            assert len(canvases) == 1
        elif name.startswith("Pendulums"):
            assert len(canvases) == 2
        else:
            rates = [float(v) for v in re.findall(r"([0-9.]+) GFLOP/s", output)]
            assert len(rates) == 3 and min(rates) > 0, output
        for canvas in canvases:
            colors, inked, total = canvas.evaluate(CANVAS_INK)
            assert colors >= 3 and inked > 0.01 * total, (name, colors, inked, total)
