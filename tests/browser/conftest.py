"""Browser tier: pytest + Playwright driving Debian's Chromium on the site that build.py lays out.

Fixtures: `site` (dist/site, checked built and current), `server_url` / `plain_server_url` (the
site served with and without COOP/COEP), `browser` (headless Chromium with WebGPU on SwiftShader),
`new_page` (a fresh page per call), `pyodide` (a fresh page with bare Pyodide), `webjax_page` (a
page per test module with Pyodide + webjax loaded). See docs/browser-tests.md.

A missing Chromium or Playwright fails these tests; WEBJAX_SKIP_BROWSER=1 skips them, loudly.
A site older than the sources fails them too (WEBJAX_ALLOW_STALE_SITE=1 tests the stale site).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_harness import PyodidePage

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "dist" / "site"
CHROMIUM = os.environ.get("WEBJAX_CHROMIUM", "/usr/bin/chromium")
# DESIGN.md section 2 (checked): WebGPU on SwiftShader, WebGL2 through ANGLE on SwiftShader.
CHROMIUM_ARGS = [
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader",
    "--use-angle=swiftshader",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
SKIP_BROWSER = os.environ.get("WEBJAX_SKIP_BROWSER") == "1"
SKIP_WARNING = "WARNING: WEBJAX_SKIP_BROWSER=1: the browser tier is SKIPPED (nothing proven there)"
_load_times: list[tuple[str, float]] = []


def pytest_report_header(config: pytest.Config) -> str | None:
    return SKIP_WARNING if SKIP_BROWSER else None


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if SKIP_BROWSER:
        terminalreporter.write_sep("!", SKIP_WARNING, red=True, bold=True)
    if _load_times:
        parts = ", ".join(f"{what} {seconds:.1f}s" for what, seconds in _load_times)
        terminalreporter.write_line(f"browser page loads (page + Pyodide [+ webjax]): {parts}")


def _load_build_module() -> Any:
    # By path and under another name: `import build` would find PyPA's `build` in the venv.
    spec = importlib.util.spec_from_file_location("webjax_build_script", ROOT / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def site() -> Path:
    manifest = SITE / "manifest.json"
    if not manifest.exists():
        pytest.fail(f"{SITE} is not built: run `python build.py` (or `python build.py test`)")
    wheels = list((SITE / "wheels").glob("*.whl"))
    if len(wheels) != 1:
        pytest.fail(f"expected one wheel in {SITE / 'wheels'}, found {wheels}: rebuild")
    built = wheels[0].stat().st_mtime
    sources = [
        *(ROOT / "pkg" / "webjax").rglob("*.py"),
        *(ROOT / "wasm_kernels").glob("*.wat"),
        *(p for p in (ROOT / "web").rglob("*") if p.is_file()),
    ]
    newer = [str(p.relative_to(ROOT)) for p in sources if p.stat().st_mtime > built]
    if newer and os.environ.get("WEBJAX_ALLOW_STALE_SITE") != "1":
        pytest.fail(f"dist/site is older than {newer[:5]}: run `python build.py` first")
    return SITE


@pytest.fixture(scope="session")
def build_module() -> Any:
    return _load_build_module()


def _serve(build_module: Any, site: Path, isolated: bool) -> Iterator[str]:
    server, url = build_module.start_server(site, isolated=isolated, quiet=True)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def server_url(build_module: Any, site: Path) -> Iterator[str]:
    """Base URL (ending in '/') of the site served with COOP/COEP: cross-origin isolated."""
    yield from _serve(build_module, site, isolated=True)


@pytest.fixture(scope="session")
def plain_server_url(build_module: Any, site: Path) -> Iterator[str]:
    """Base URL of the site served without COOP/COEP headers (like most static hosts)."""
    yield from _serve(build_module, site, isolated=False)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if SKIP_BROWSER:
        pytest.skip(SKIP_WARNING)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "playwright is not installed (it is in the `test` extra): `python build.py test`"
        )
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} not found: `apt-get install chromium` (build.py test does it as root)"
        )
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()
    finally:
        playwright.stop()


@pytest.fixture
def new_page(browser: Any) -> Iterator[Callable[[], Any]]:
    """Factory for fresh pages (each in its own browser context), closed after the test."""
    contexts = []

    def make() -> Any:
        context = browser.new_context()
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def pyodide(new_page: Callable[[], Any], server_url: str) -> PyodidePage:
    """A fresh page with bare Pyodide (webjax not installed) and run_py/run_py_sync."""
    page = PyodidePage(new_page()).load(server_url + "test.html", with_webjax=False)
    assert page.load_seconds is not None
    _load_times.append(("pyodide", page.load_seconds))
    return page


@pytest.fixture
def fresh_page(new_page: Callable[[], Any], server_url: str) -> PyodidePage:
    """A page of its own with webjax loaded (for tests that break or first-open a device)."""
    return PyodidePage(new_page()).load(server_url + "test.html", with_webjax=True)


@pytest.fixture(scope="module")
def webjax_page(browser: Any, server_url: str) -> Iterator[PyodidePage]:
    """One page per test module with Pyodide and webjax loaded (`import webjax` done)."""
    context = browser.new_context()
    try:
        page = PyodidePage(context.new_page()).load(server_url + "test.html", with_webjax=True)
        assert page.load_seconds is not None
        _load_times.append(("webjax", page.load_seconds))
        yield page
    finally:
        context.close()
