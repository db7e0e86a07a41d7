"""The ONNX demo: a digits CNN that the site's build trained and wrote as digits.onnx
(models/train_digits_onnx.py) loaded with webjax.onnx.ONNXModel and run under jit on the chosen
device, on a digit drawn on the page's canvas, picked as an image file or taken from the held-out
images; its time per inference (first call and steady state) and held-out accuracy; and any
.onnx file the user picks, its inputs and outputs listed and run on random inputs.

The functions above `main` are plain webjax (and plain Python) and run natively too
(tests/test_demos.py); `main` drives the page (web/demos/onnx.html through demo.mjs, which also
loads digits.py for the data's parsing and held-out split)."""

from __future__ import annotations

import statistics
import time
from typing import Any

import webjax as jax
import webjax.numpy as jnp
from webjax.onnx import ONNXModel

GRID = 8  # the model's input: 8x8 pixels in [0, 1]
# ONNX TensorProto element types -> webjax dtypes, for random inputs of any model
ELEMENT_TYPES = {
    1: "float32",
    2: "uint8",
    3: "int8",
    5: "int16",
    6: "int32",
    7: "int64",
    9: "bool",
    10: "float16",
    11: "float64",
    16: "bfloat16",
}


def ink_to_pixels(red: bytes, width: int, height: int) -> list[float] | None:
    """A drawing (one byte of ink 0-255 per pixel, rows of `width`) as the model's 64 inputs:
    the ink's bounding box, squared around its centre, cut into 8x8 cells, each the mean ink
    in it (0-1), as the digits were made (a size-normalised bitmap, ink counted per block).
    None when nothing is drawn."""
    rows = [red[y * width : (y + 1) * width] for y in range(height)]
    inked = [y for y, row in enumerate(rows) if row.strip(b"\x00")]
    if not inked:
        return None
    x0 = min(len(rows[y]) - len(rows[y].lstrip(b"\x00")) for y in inked)
    x1 = max(len(rows[y].rstrip(b"\x00")) for y in inked)
    y0, y1 = inked[0], inked[-1] + 1
    side = max(x1 - x0, y1 - y0)
    bx = (x0 + x1 - side) / 2  # the square box's corner (may reach outside the canvas)
    by = (y0 + y1 - side) / 2
    cell = side / GRID
    edges_x = [round(bx + k * cell) for k in range(GRID + 1)]
    edges_y = [round(by + k * cell) for k in range(GRID + 1)]
    pixels = []
    for i in range(GRID):
        ya, yb = edges_y[i], edges_y[i + 1]
        for j in range(GRID):
            xa, xb = max(edges_x[j], 0), max(min(edges_x[j + 1], width), 0)
            total = sum(sum(rows[y][xa:xb]) for y in range(max(ya, 0), min(yb, height)))
            area = max((edges_x[j + 1] - edges_x[j]) * (yb - ya), 1)
            pixels.append(min(total / (255.0 * area), 1.0))
    return pixels


def predict(run: Any, pixels: Any) -> Any:
    """Class probabilities [N, 10] for pixels [N, 64] (or [64]) with the model's `run`."""
    x = jnp.asarray(pixels, jnp.float32).reshape(-1, 1, GRID, GRID)
    return run({"pixels": x})["probabilities"]


def random_inputs(model: ONNXModel, key: Any) -> dict[str, Any]:
    """Random values for each of `model`'s inputs: a named or unknown dimension is 1, floats
    standard normal, integers in [0, 10), booleans fair coins."""
    inputs = {}
    for name, k in zip(model.input_names, jax.random.split(key, max(len(model.input_names), 1))):
        t = model.input_types.get(name)
        if t is None or t.kind != "tensor" or t.shape is None:
            raise ValueError(f"input {name!r}: not a tensor of known rank ({t}); cannot make one")
        dtype = ELEMENT_TYPES.get(t.elem_type)
        if dtype is None:
            raise ValueError(f"input {name!r}: element type {t.elem_type} has no random values")
        shape = tuple(d if isinstance(d, int) and d > 0 else 1 for d in t.shape)
        if dtype == "bool":
            inputs[name] = jax.random.bernoulli(k, 0.5, shape)
        elif dtype.startswith(("int", "uint")):
            inputs[name] = jax.random.randint(k, shape, 0, 10).astype(dtype)
        else:
            inputs[name] = jax.random.normal(k, shape).astype(dtype)
    return inputs


def describe(model: ONNXModel) -> list[str]:
    """One line per input and output: name, element type, shape."""

    def line(kind: str, name: str, t: Any) -> str:
        if t is None or t.kind != "tensor":
            return f"{kind} {name}: {t.kind if t else 'no type'}"
        dtype = ELEMENT_TYPES.get(t.elem_type, f"element type {t.elem_type}")
        dims = "?" if t.shape is None else "[" + ", ".join(str(d) for d in t.shape) + "]"
        return f"{kind} {name}: {dtype} {dims}"

    lines = [f"opset {model.opset}, {len(model.proto.graph.nodes)} nodes"]
    lines += [line("input ", n, model.input_types.get(n)) for n in model.input_names]
    lines += [line("output", n, model.output_types.get(n)) for n in model.output_names]
    return lines


async def timed(call: Any) -> tuple[Any, float]:
    """(call()'s result once ready, seconds)."""
    t = time.perf_counter()
    out = await jax.block_until_ready_async(call())
    return out, time.perf_counter() - t


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


async def main(page: Any) -> None:
    import asyncio

    import digits
    import js
    from demo_page import time_calls
    from pyodide.ffi import create_proxy

    from webjax import display

    page.status("fetching digits.onnx and the digits")
    model = ONNXModel(await page.fetch_bytes("digits.onnx"))
    data = await page.fetch_bytes("digits.csv.gz")
    # the data's parsing and split on wasm whatever the demo's device (on the pure-Python cpu
    # device they take a minute); the model then gets plain lists on its own device
    with jax.default_device(jax.devices("wasm")[0]):
        x, y = digits.parse_digits(data)
        _, _, x_test, y_test = digits.split(x, y)
        test_rows = [[float(v) for v in row] for row in x_test.tolist()]
        labels = [int(v) for v in y_test.tolist()]
    run = jax.jit(model.run)
    device = jax.devices(page.device)[0]
    pad = page.element("pad")
    ctx = pad.getContext("2d")
    root = js.document.documentElement
    state: dict[str, Any] = {"sample": page.int_param("sample", 0) % len(labels)}
    state["interactions"] = 0

    def paint(pixels: list[float]) -> None:
        cell = pad.width / GRID
        for i, v in enumerate(pixels):
            level = round(255 * v)
            ctx.fillStyle = f"rgb({level},{level},{level})"
            ctx.fillRect((i % GRID) * cell, (i // GRID) * cell, cell, cell)

    async def classify(pixels: list[float], source: str) -> dict[str, Any]:
        probs, seconds = await timed(lambda: predict(run, [pixels]))
        p = [float(v) for v in probs[0].tolist()]
        best = max(range(10), key=p.__getitem__)
        page.show("prediction", str(best))
        page.show("confidence", f"({p[best]:.1%}; from {source})")
        page.show("last", ms(seconds))
        page.show("probabilities", "  ".join(f"{c}: {v:.3f}" for c, v in enumerate(p)))
        with page.area("input"):
            display.imshow(
                jnp.array(pixels).reshape(GRID, GRID), cmap="gray", title="model input", width=128
            )
        return {"source": source, "predicted": best, "probabilities": [round(v, 6) for v in p]}

    def sample_pixels(index: int) -> list[float]:
        return test_rows[index]

    # the first call (tracing, compiling) and the steady state, on a held-out digit
    first_pixels = sample_pixels(state["sample"])
    paint(first_pixels)
    page.status(f"first call on {page.device}…")
    _, first_s = await timed(lambda: predict(run, [first_pixels]))
    page.show("first", ms(first_s))
    steady = await time_calls(lambda: predict(run, [first_pixels]), reps=30, budget_s=3.0)
    page.show("steady", f"{ms(statistics.median(steady))} over {len(steady)} calls")
    shown = await classify(first_pixels, f"held-out digit #{state['sample']}")
    count = min(max(page.int_param("held_out", len(labels)), 1), len(labels))
    page.status(f"classifying {count} held-out digits at once…")
    held_out = await jax.block_until_ready_async(predict(run, test_rows[:count]))
    predictions = [int(v) for v in jnp.argmax(held_out, axis=1).tolist()]
    accuracy = sum(p == t for p, t in zip(predictions, labels, strict=False)) / count
    page.show("accuracy", f"{accuracy:.4f} ({count} images)")

    def publish(latest: dict[str, Any], **extra: Any) -> None:
        state["latest"] = latest
        page.result(
            model_inputs=model.input_names,
            model_outputs=model.output_names,
            first_ms=first_s * 1e3,
            steady_ms=statistics.median(steady) * 1e3,
            steady_calls=len(steady),
            accuracy=accuracy,
            held_out_predictions="".join(map(str, predictions)),  # one digit per image
            sample=state["sample"],
            sample_label=labels[state["sample"]],
            latest=latest,
            interactions=state["interactions"],
            **extra,
        )

    publish(shown)

    # --- the page's controls: each event runs one coroutine on the chosen device ----------
    proxies = []  # kept alive as long as the page

    def on(element_id: str, event: str, handler: Any) -> None:
        async def guarded(e: Any) -> None:
            try:
                with jax.default_device(device):
                    await handler(e)
                state["interactions"] += 1
                root.dataset.interactions = str(state["interactions"])
            except Exception as exc:  # shown on the page; the tests read window.demoError
                js.window.demoError = f"{type(exc).__name__}: {exc}"
                page.status(f"failed: {type(exc).__name__}: {exc}")
                root.dataset.interactions = "error"

        proxy = create_proxy(lambda e: asyncio.ensure_future(guarded(e)))
        proxies.append(proxy)
        el = page.element(element_id)
        el.addEventListener(event, proxy)
        el.disabled = False

    async def from_canvas(source: str) -> None:
        data = ctx.getImageData(0, 0, pad.width, pad.height).data.to_py()
        pixels = ink_to_pixels(bytes(data[0::4]), pad.width, pad.height)
        if pixels is None:
            page.status("nothing drawn")
            return
        publish(await classify(pixels, source))
        page.status(f"classified the {source}")

    async def on_drawn(_e: Any) -> None:
        await from_canvas("drawing")

    async def on_clear(_e: Any) -> None:
        ctx.fillStyle = "#000"
        ctx.fillRect(0, 0, pad.width, pad.height)
        page.show("prediction", "-")
        page.show("confidence", "")

    async def on_sample(_e: Any) -> None:
        state["sample"] = (state["sample"] + 1) % len(labels)
        pixels = sample_pixels(state["sample"])
        paint(pixels)
        index = state["sample"]
        publish(await classify(pixels, f"held-out digit #{index} (a {labels[index]})"))

    async def on_image(e: Any) -> None:
        files = e.target.files
        if not files.length:
            return
        bitmap = await js.createImageBitmap(files.item(0))
        scale = min(pad.width / bitmap.width, pad.height / bitmap.height)
        w, h = bitmap.width * scale, bitmap.height * scale
        ctx.fillStyle = "#000"
        ctx.fillRect(0, 0, pad.width, pad.height)
        ctx.drawImage(bitmap, (pad.width - w) / 2, (pad.height - h) / 2, w, h)
        data = ctx.getImageData(0, 0, pad.width, pad.height).data.to_py()
        if sum(data[0::4]) > 127 * pad.width * pad.height:  # dark ink on light paper: invert
            ctx.globalCompositeOperation = "difference"
            ctx.fillStyle = "#fff"
            ctx.fillRect(0, 0, pad.width, pad.height)
            ctx.globalCompositeOperation = "source-over"
        await from_canvas(f"image {files.item(0).name}")

    async def on_model(e: Any) -> None:
        files = e.target.files
        if not files.length:
            return
        name = files.item(0).name
        page.show("model-info", f"loading {name}…")
        data = (await files.item(0).arrayBuffer()).to_bytes()
        user = ONNXModel(data)
        lines = [f"{name}: {len(data)} bytes", *describe(user)]
        page.show("model-info", "\n".join(lines))
        inputs = random_inputs(user, jax.random.key(0))
        user_run = jax.jit(user.run)
        outputs, first = await timed(lambda: user_run(inputs))
        times = await time_calls(lambda: user_run(inputs), reps=10, budget_s=5.0)
        lines.append(f"on random inputs, {page.device}: first call {ms(first)}, ")
        lines[-1] += f"steady state {ms(statistics.median(times))} ({len(times)} calls)"
        summary = {}
        for out_name, value in outputs.items():
            flat = value.reshape(-1).astype("float32")
            mean = float(jnp.mean(flat)) if flat.size else float("nan")
            lines.append(f"  {out_name}: {value.dtype} {list(value.shape)}, mean {mean:.4g}")
            summary[out_name] = {"shape": list(value.shape), "dtype": str(value.dtype)}
        page.show("model-info", "\n".join(lines))
        user_model = {"name": name, "outputs": summary, "first_ms": first * 1e3}
        publish(state["latest"], user_model=user_model)

    on("pad", "pad-drawn", on_drawn)
    on("clear", "click", on_clear)
    on("sample", "click", on_sample)
    on("image-file", "change", on_image)
    on("model-file", "change", on_model)
    root.dataset.interactions = "0"
    page.status(f"ready on {page.device}: draw a digit, pick an image, or load an .onnx file")
