"""What the loader (web/webjax.mjs) does when loading goes wrong: each failure is shown on the
page with what to do, and a wheel that does not match the manifest's SHA-256 is never
installed."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

pytestmark = pytest.mark.browser

LOAD_TIMEOUT_MS = 180_000
SETTLED = "() => ['done', 'error'].includes(document.documentElement.dataset.webjax)"


def _open_script_tag_page(page: Any, url: str) -> list[str]:
    """The page's shown load errors, once its x-python blocks ran or loading failed."""
    page.goto(url)
    page.wait_for_function(SETTLED, timeout=LOAD_TIMEOUT_MS)
    return page.eval_on_selector_all("pre.webjax-error", "els => els.map((e) => e.textContent)")


@pytest.fixture
def wheel_url(site: Any, server_url: str) -> re.Pattern[str]:
    """The wheel's URL, with or without a query (the loader asks for it by its sha256=)."""
    url = server_url + json.loads((site / "manifest.json").read_text())["wheel"]
    return re.compile(re.escape(url) + r"(\?.*)?$")


def test_an_altered_wheel_is_refused(new_page: Any, server_url: str, wheel_url: Any, site: Any):
    page = new_page()
    wheel = site / json.loads((site / "manifest.json").read_text())["wheel"]
    altered = bytearray(wheel.read_bytes())
    altered[len(altered) // 2] ^= 0xFF
    page.route(
        wheel_url,
        lambda route: route.fulfill(body=bytes(altered), content_type="application/zip"),
    )
    errors = _open_script_tag_page(page, server_url + "script-tag.html")
    assert len(errors) == 1, errors
    assert "refusing" in errors[0] and "SHA-256" in errors[0], errors
    assert "python build.py" in errors[0], errors
    # nothing was installed from it
    assert page.text_content("#result") == "loading…"


def test_a_missing_wheel_says_what_to_do(new_page: Any, server_url: str, wheel_url: Any):
    page = new_page()
    page.route(wheel_url, lambda route: route.fulfill(status=404, body="not found"))
    errors = _open_script_tag_page(page, server_url + "script-tag.html")
    assert len(errors) == 1 and "HTTP 404" in errors[0], errors
    assert "python build.py" in errors[0], errors


def test_a_missing_manifest_says_what_to_do(new_page: Any, server_url: str):
    page = new_page()
    page.route(server_url + "manifest.json", lambda route: route.fulfill(status=404, body=""))
    errors = _open_script_tag_page(page, server_url + "script-tag.html")
    assert len(errors) == 1 and "manifest.json answered HTTP 404" in errors[0], errors


def test_no_webassembly_says_so(new_page: Any, server_url: str):
    page = new_page()
    page.add_init_script("delete globalThis.WebAssembly;")
    errors = _open_script_tag_page(page, server_url + "script-tag.html")
    assert len(errors) == 1 and "no WebAssembly" in errors[0], errors


WRONG_INDEX_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><script type="module">
  import { loadWebjax } from "./webjax.mjs";
  try {
    await loadWebjax({ indexURL: "./no-pyodide-here/" });
    window.loadError = "";
  } catch (error) {
    window.loadError = String(error.message);
  }
</script></head><body></body></html>
"""


def test_a_wrong_index_url_says_what_it_must_be(new_page: Any, server_url: str):
    page = new_page()
    url = server_url + "wrong-index-test.html"
    page.route(url, lambda route: route.fulfill(body=WRONG_INDEX_PAGE, content_type="text/html"))
    page.goto(url)
    page.wait_for_function("() => window.loadError !== undefined", timeout=LOAD_TIMEOUT_MS)
    message = page.evaluate("window.loadError")
    assert "Pyodide was not found at" in message and "no-pyodide-here/" in message, message
    assert "pyodide.mjs" in message, message


def test_a_page_without_isolation_runs_and_says_how_to_get_threads(
    new_page: Any, plain_server_url: str
):
    page = new_page()
    errors = _open_script_tag_page(page, plain_server_url + "script-tag.html")
    assert errors == []
    assert page.text_content("#result") == "30"
    note = page.text_content("p.webjax-note")
    assert note is not None and "single-threaded" in note and "Cross-Origin-Opener-Policy" in note
