"""webjax where notebook and page users meet it: the PyScript page (dist/site/pyscript/, PyScript
from npm on the site's Pyodide) and the JupyterLite site (`python build.py lite`, dist/lite/, its
Pyodide kernel on a copy of the site's Pyodide, webjax from the kernel's local piplite index).

Both run with every request to anything but the local server aborted and recorded: the tests
fail if either reaches out (a CDN for Pyodide, PyPI for a wheel). The JupyterLite site is built
once per session by the `lite_url` fixture (about 30 s).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.browser

LOAD_TIMEOUT_MS = 180_000
RUN_TIMEOUT_MS = 120_000
LOCAL_SCHEMES = ("blob:", "data:")

# The program both pages run: f(x) = sum(tanh(x) * x) at x = [0, 0.5, 1, 1.5].
X = np.arange(4, dtype=np.float32) / 2


def f_numpy(x: np.ndarray) -> float:
    return float(np.sum(np.tanh(x) * x))


def grad_numpy(x: np.ndarray) -> np.ndarray:
    t = np.tanh(x.astype(np.float64))
    return t + x * (1 - t * t)


class Guard:
    """Lets a browser context reach only `base`; records what it asked for and what it was
    refused."""

    def __init__(self, context: Any, base: str) -> None:
        self.base, self.requested, self.refused = base, [], []
        context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.base) or url.startswith(LOCAL_SCHEMES):
            self.requested.append(url)
            route.continue_()
        else:
            self.refused.append(url)
            route.abort()

    def paths(self) -> list[str]:
        return [u[len(self.base) :].split("?")[0] for u in self.requested]


def numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+", text)]


# --- PyScript -----------------------------------------------------------------------------------


def test_pyscript_config_points_at_the_site(site: Path) -> None:
    config = json.loads((site / "pyscript" / "config.json").read_text())
    manifest = json.loads((site / "manifest.json").read_text())
    assert config["interpreter"] == "../pyodide/pyodide.mjs"
    assert config["packages"] == [f"../{manifest['wheel']}"]
    assert (site / "pyscript" / config["interpreter"]).resolve().is_file()
    assert (site / "pyscript" / config["packages"][0]).resolve().is_file()
    assert (site / "pyscript" / "core" / "core.js").is_file()


def test_pyscript_page_runs_jit_and_grad_offline(browser: Any, server_url: str) -> None:
    context = browser.new_context()
    try:
        guard = Guard(context, server_url)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server_url + "pyscript/index.html")
        page.wait_for_function(
            "document.getElementById('status').textContent === 'done'", timeout=LOAD_TIMEOUT_MS
        )
        value = float(page.inner_text("#value"))
        grad = np.array(numbers(page.inner_text("#grad")))
        devices = page.inner_text("#devices")
    finally:
        context.close()
    assert errors == []
    assert value == pytest.approx(f_numpy(X), rel=1e-5)
    np.testing.assert_allclose(grad, grad_numpy(X), rtol=1e-5, atol=1e-6)
    assert "WasmDevice" in devices
    assert guard.refused == []
    paths = guard.paths()
    assert "pyscript/core/core.js" in paths
    assert "pyodide/pyodide.asm.wasm" in paths  # the site's Pyodide, not PyScript's default
    assert any(p.startswith("wheels/webjax-") for p in paths)


# --- JupyterLite --------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def lite_url(build_module: Any, site: Path) -> Iterator[str]:
    """dist/lite/ built from the current site (once per session) and served with COOP/COEP."""
    lite = build_module.build_lite()
    server, url = build_module.start_server(lite, isolated=True, quiet=True)
    yield url
    server.shutdown()
    server.server_close()


def test_lite_config_is_offline(lite_url: str, build_module: Any) -> None:
    lite = build_module.LITE
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert kernel["disablePyPIFallback"] is True
    index = json.loads((lite / "pypi" / "all.json").read_text())
    assert "webjax" in index and "comm" in index
    assert (lite / "files" / "webjax_demo.ipynb").is_file()


# the index of the notebook's active cell
ACTIVE_CELL = (
    "[...document.querySelectorAll('.jp-Notebook .jp-Cell')]"
    ".findIndex(c => c.classList.contains('jp-mod-active'))"
)


@pytest.fixture(scope="module")
def notebook(browser: Any, lite_url: str) -> Iterator[tuple[Any, Guard]]:
    """The demo notebook open in JupyterLite, its code cells before the vmap one run."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    context = browser.new_context()
    try:
        guard = Guard(context, lite_url)
        page = context.new_page()
        page.goto(lite_url + "notebooks/index.html?path=webjax_demo.ipynb")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=LOAD_TIMEOUT_MS)
        page.click(".jp-Notebook .jp-CodeCell >> nth=0")
        first = page.evaluate(ACTIVE_CELL)
        for i in range(first, first + 4):  # %pip install, import, markdown, the jit/grad cell
            # one Shift+Enter per cell, each once the notebook has moved to that cell (under
            # load a keystroke sent while it is still busy can be lost)
            page.wait_for_function(f"{ACTIVE_CELL} === {i}", timeout=LOAD_TIMEOUT_MS)
            page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function(
                r"""() => [...document.querySelectorAll('.jp-OutputArea-output')]
                          .some(e => /grad f\(x\) =|Error/.test(e.innerText))""",
                timeout=LOAD_TIMEOUT_MS,
            )
            shown = True
        except PlaywrightTimeoutError:  # the report below says what the cells show
            shown = False
        cells = page.evaluate(
            """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(c =>
                (c.querySelector('.jp-InputPrompt')?.innerText || '') + ' ' +
                (c.querySelector('.jp-OutputArea')?.innerText || '').slice(0, 2000))"""
        )
        assert shown and not any("Error" in c for c in cells), cells
        yield page, guard
    finally:
        context.close()


def cell_output(page: Any, index: int) -> str:
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    return cell.locator(".jp-OutputArea").inner_text()


def test_lite_demo_notebook_installs_webjax_and_runs(notebook: tuple[Any, Guard]) -> None:
    page, guard = notebook
    assert "WasmDevice" in cell_output(page, 2)
    out = cell_output(page, 4)
    value_line, grad_line = (line for line in out.splitlines() if line.strip())
    assert value_line.startswith("f(x) =")
    assert numbers(value_line)[0] == pytest.approx(f_numpy(X), rel=1e-5)
    np.testing.assert_allclose(numbers(grad_line), grad_numpy(X), rtol=1e-5, atol=1e-6)
    assert guard.refused == []
    paths = guard.paths()
    assert "static/pyodide/pyodide.asm.wasm" in paths
    assert any(p.startswith("pypi/webjax-") and p.endswith(".whl") for p in paths)


def test_lite_typed_cell(notebook: tuple[Any, Guard]) -> None:
    """A new cell typed at the end: a vmapped gradient, then a shape error JAX's way."""
    page, guard = notebook
    count = page.locator(".jp-Notebook .jp-Cell").count()
    page.click(".jp-Notebook .jp-Cell >> nth=-1")
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # a new code cell below, in edit mode after Enter
    page.wait_for_function(f"document.querySelectorAll('.jp-Notebook .jp-Cell').length > {count}")
    page.keyboard.press("Enter")
    code = (
        "ys = jax.vmap(jax.grad(lambda v: jnp.sum(v ** 3)))(jnp.arange(6.0).reshape(3, 2))\n"
        "print('vmapped', ys.tolist())\n"
        "jnp.ones(3) @ jnp.ones(4)"
    )
    page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(
        f"""() => {{
            const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[{count}];
            return cell && /TypeError/.test(cell.querySelector('.jp-OutputArea').innerText);
        }}""",
        timeout=RUN_TIMEOUT_MS,
    )
    out = cell_output(page, count)
    line = next(line for line in out.splitlines() if line.startswith("vmapped"))
    expected = 3 * np.arange(6.0).reshape(3, 2) ** 2
    np.testing.assert_allclose(np.array(numbers(line)).reshape(3, 2), expected)
    assert "TypeError" in out and "(3,)" in out and "(4,)" in out
    assert guard.refused == []
