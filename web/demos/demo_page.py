"""The demo pages' side of Python: what a demo's `main(page)` is handed (web/demos/demo.mjs
runs `run`). Reads the page's URL query, finds the devices this browser offers (filling the
device picker), runs the demo on the chosen one, and writes what it shows into the page's
elements; `result(...)` publishes the numbers as JSON on `window.demoResult` (the browser
tests read it)."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import parse_qsl, urljoin

import js
from pyodide.http import pyfetch

import webjax

PLATFORMS = ("wasm", "webgpu", "webgl", "cpu")
DISPLAY_ID = "webjax-display"  # where webjax.display draws (hosts/display_browser.py)


async def available_platforms() -> list[str]:
    """The platforms whose device opens in this browser (WebGPU's start awaited first)."""
    with suppress(Exception):  # no WebGPU here: devices("webgpu") below says so
        await webjax.init_webgpu_async()
    found = []
    for name in PLATFORMS:
        try:
            webjax.devices(name)
        except Exception:
            continue
        found.append(name)
    return found


class Page:
    """The handle a demo's `main` gets: URL parameters, status lines, drawing areas."""

    def __init__(self, device: str) -> None:
        self.params = dict(parse_qsl(str(js.location.search).lstrip("?")))
        self.device = device

    def int_param(self, name: str, default: int) -> int:
        value = self.params.get(name)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"URL parameter {name}={value!r} is not an integer") from None

    def str_param(self, name: str, default: str) -> str:
        return self.params.get(name, default)

    def element(self, element_id: str) -> Any:
        el = js.document.getElementById(element_id)
        if el is None:
            raise LookupError(f"the page has no element with id {element_id!r}")
        return el

    def status(self, text: str) -> None:
        self.element("status").textContent = text

    def show(self, element_id: str, text: str) -> None:
        self.element(element_id).textContent = text

    @contextmanager
    def area(self, element_id: str, clear: bool = True) -> Any:
        """Inside the block, webjax.display draws into element `element_id` (cleared first)."""
        el = self.element(element_id)
        if clear:
            el.replaceChildren()
        el.id = DISPLAY_ID
        try:
            yield el
        finally:
            el.id = element_id

    async def fetch_bytes(self, name: str) -> bytes:
        """A file of the site, relative to the demo page."""
        url = urljoin(str(js.location.href), name)
        response = await pyfetch(url)
        if not response.ok:
            raise OSError(
                f"{url} answered HTTP {response.status}: build the site (python build.py)"
            )
        return await response.bytes()

    def result(self, **values: Any) -> None:
        values = {"device": self.device, **values}
        text = json.dumps(values)
        js.window.demoResult = text
        self.show("result", json.dumps(values, indent=1))


async def time_calls(call: Any, reps: int, budget_s: float = 10.0) -> list[float]:
    """Seconds per call of `call()` (its result awaited with block_until_ready_async): one
    warm-up call (compiles), then `reps` timed calls or as many as fit in `budget_s`."""
    await webjax.block_until_ready_async(call())
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < reps:
        t = time.perf_counter()
        await webjax.block_until_ready_async(call())
        times.append(time.perf_counter() - t)
        if time.perf_counter() - start > budget_s and len(times) >= 3:
            break
    return times


async def run(main: Any, device: str) -> None:
    platforms = await available_platforms()
    picker = js.document.getElementById("device")
    if picker is not None:
        for option in picker.options:
            if option.value not in platforms:
                option.disabled = True
                option.textContent = f"{option.value} (not in this browser)"
    if device not in platforms:
        raise RuntimeError(
            f"device {device!r} is not available in this browser; it offers: {', '.join(platforms)}"
        )
    page = Page(device)
    with webjax.default_device(webjax.devices(device)[0]):
        await main(page)
