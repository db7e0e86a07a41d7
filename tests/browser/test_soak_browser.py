"""Soaks in Pyodide in Chromium (tests/soak_program.py): a jitted MLP training loop and an eager
loop on each browser device — wasm with its worker pool (the isolated page) and without (a
plain page), webgpu and webgl — sampling live arrays, backend bytes in use and pooled, the
wasm memory's size and the JS references Python holds: all flat after warm-up.

CI-sized by default; `python build.py soak` runs 10,000 steps and 100,000 ops
(WEBJAX_SOAK_STEPS / WEBJAX_SOAK_OPS) and writes every series to WEBJAX_SOAK_REPORT."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from browser_harness import PyodidePage

pytestmark = pytest.mark.browser

STEPS = int(os.environ.get("WEBJAX_SOAK_STEPS", "600"))
OPS = int(os.environ.get("WEBJAX_SOAK_OPS", "400"))
REPORT = os.environ.get("WEBJAX_SOAK_REPORT")
SOURCE = (Path(__file__).parent.parent / "soak_program.py").read_text()
RESULTS: dict[str, Any] = {}


def _every(n: int, period: int = 1) -> int:
    """About 20 samples of a long run, 6 of a short one, every whole number of `period`s."""
    every = n // 20 if n >= 2000 else n // 6
    return max(period, every // period * period)


def _soak(page: PyodidePage, platform: str, label: str) -> None:
    # the eager loop repeats every 32 ops (4 kinds x 8 indices): samples a whole number apart,
    # so every stretch between two syncs compiles the same kernels
    steps, ops = _every(STEPS), _every(OPS, 32)
    got = page.run_py(
        "import sys, types\n"
        "if 'soak_program' not in sys.modules:\n"
        "    mod = types.ModuleType('soak_program')\n"
        "    exec(compile(SOAK_SOURCE, 'soak_program.py', 'exec'), mod.__dict__)\n"
        "    sys.modules['soak_program'] = mod\n"
        "import soak_program, webjax\n"
        f"dev = webjax.devices({platform!r})[0]\n"
        f"train = soak_program.mlp_training(dev, {STEPS}, {steps})\n"
        f"eager = soak_program.eager_ops(dev, {OPS}, {ops})\n"
        "[train, eager, soak_program.leaks(train, 2), soak_program.leaks(eager, 2),\n"
        " getattr(dev, 'threads', None)]",
        timeout_ms=3_600_000,
    )
    train, eager, train_leaks, eager_leaks, threads = got
    RESULTS[label] = {"threads": threads, "training": train, "eager": eager}
    if REPORT:
        Path(REPORT).write_text(json.dumps(RESULTS, indent=1) + "\n")
    assert train_leaks == [] and eager_leaks == [], (train_leaks, eager_leaks, train, eager)
    assert all(s["js_refs"] is not None for s in train), train
    assert train[-1]["loss"] < train[0]["loss"], train


@pytest.fixture(scope="module")
def page(webjax_page: PyodidePage) -> PyodidePage:
    webjax_page.page.evaluate("src => { window.__soakSource = src; }", SOURCE)
    webjax_page.run_py("import js\nSOAK_SOURCE = str(js.window.__soakSource)")
    return webjax_page


@pytest.mark.parametrize("platform", ["wasm", "webgpu", "webgl"])
def test_soak_flat(page: PyodidePage, platform: str) -> None:
    _soak(page, platform, platform + (" (threads)" if platform == "wasm" else ""))


def test_soak_flat_wasm_single_threaded(new_page: Any, plain_server_url: str) -> None:
    plain = PyodidePage(new_page()).load(plain_server_url + "test.html", with_webjax=True)
    plain.page.evaluate("src => { window.__soakSource = src; }", SOURCE)
    plain.run_py("import js\nSOAK_SOURCE = str(js.window.__soakSource)")
    _soak(plain, "wasm", "wasm (one thread)")
