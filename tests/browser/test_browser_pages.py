"""The pages a user opens: the script-tag example and the loader, driven like a user would (the
REPL has tests/browser/test_repl.py)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.browser

LOAD_TIMEOUT_MS = 180_000
RUN_TIMEOUT_MS = 120_000

# Runs the x-python machinery of webjax.mjs on bare Pyodide (no webjax import needed).
X_PYTHON_PAGE = """<!doctype html>
<html><head><meta charset="utf-8">
<script>window.webjaxAutoRun = false;</script>
<script type="module">
  import { loadPyodideRuntime, runPythonScripts } from "./webjax.mjs";
  const py = await loadPyodideRuntime();
  const errors = await runPythonScripts(py);
  window.scriptErrors = errors.map((e) => String(e.message));
  document.documentElement.dataset.finished = "1";
</script></head>
<body>
<div id="out"></div>
<script type="text/x-python">
    import js
    order = ["first"]
    if True:
        js.document.getElementById("out").textContent = "first"
</script>
<script type="text/x-python">
    import js
    order.append("second")
    js.document.getElementById("out").textContent = " ".join(order)
</script>
<script type="text/x-python">
    raise ValueError("boom")
</script>
</body></html>
"""


def test_x_python_blocks_run_in_order(new_page, server_url):
    page = new_page()
    url = server_url + "x-python-test.html"
    page.route(url, lambda route: route.fulfill(body=X_PYTHON_PAGE, content_type="text/html"))
    page.goto(url)
    page.wait_for_function(
        "() => document.documentElement.dataset.finished", timeout=LOAD_TIMEOUT_MS
    )
    assert page.text_content("#out") == "first second"
    states = page.eval_on_selector_all(
        'script[type="text/x-python"]', "els => els.map((e) => e.dataset.webjax)"
    )
    assert states == ["done", "done", "error"]
    error = page.text_content("pre.webjax-error")
    assert error.startswith('Traceback (most recent call last):\n  File "<script 2>", line 1')
    assert error.strip().endswith("ValueError: boom")
    assert len(page.evaluate("window.scriptErrors")) == 1


def test_script_tag_page(new_page, server_url):
    page = new_page()
    page.goto(server_url + "script-tag.html")
    page.wait_for_function(
        "() => ['done', 'error'].includes(document.documentElement.dataset.webjax)",
        timeout=LOAD_TIMEOUT_MS,
    )
    errors = page.eval_on_selector_all("pre.webjax-error", "els => els.map((e) => e.textContent)")
    assert errors == []
    assert page.evaluate("document.documentElement.dataset.webjax") == "done"
    assert page.text_content("#result") == "30"
    page.wait_for_function("() => document.getElementById('devices').textContent !== ''")


INSTALL_AS_JAX_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><script type="module" src="./webjax.mjs"></script></head>
<body><output id="out"></output>
<script type="text/x-python" data-install-as-jax>
import js
import jax
import jax.numpy as jnp
js.document.getElementById("out").textContent = f"{jax.__name__} {jnp.arange(4).sum()}"
</script></body></html>
"""


def test_script_tag_install_as_jax(new_page, server_url):
    # <script type="text/x-python" data-install-as-jax>: unmodified `import jax` code runs.
    page = new_page()
    url = server_url + "install-as-jax-test.html"
    page.route(url, lambda route: route.fulfill(body=INSTALL_AS_JAX_PAGE, content_type="text/html"))
    page.goto(url)
    page.wait_for_function(
        "() => ['done', 'error'].includes(document.documentElement.dataset.webjax)",
        timeout=LOAD_TIMEOUT_MS,
    )
    assert (
        page.eval_on_selector_all("pre.webjax-error", "els => els.map((e) => e.textContent)") == []
    )
    assert page.text_content("#out") == "webjax 6"


CONFIG_PAGE = """<!doctype html>
<html><head><meta charset="utf-8">
<script type="module" src="./webjax.mjs"
  data-config='{"jax_enable_x64": true, "jax_platforms": "cpu,wasm",
                "jax_numpy_rank_promotion": "raise"}'></script></head>
<body><output id="out"></output>
<script type="text/x-python">
import js, json
import webjax as jax
import webjax.numpy as jnp
try:
    jax.devices("webgl")
    left_out = "no error"
except RuntimeError as e:
    left_out = str(e)
try:
    jnp.ones((2, 3)) + jnp.ones(3)
    rank = "no error"
except ValueError as e:
    rank = str(e)
js.document.getElementById("out").textContent = json.dumps({
    "dtype": str(jnp.array(1.0).dtype),
    "devices": [d.platform for d in jax.devices()],
    "platforms": jax.config.jax_platforms,
    "left_out": left_out,
    "rank": rank,
    "info": jax.print_environment_info(return_string=True),
})
</script></body></html>
"""


def test_loader_config(new_page, server_url):
    # data-config on the loader's script tag becomes loadWebjax({config}), which sets the
    # options before the page's code runs: the browser's JAX_* variables. And the page's
    # print_environment_info.
    page = new_page()
    url = server_url + "config-test.html"
    page.route(url, lambda route: route.fulfill(body=CONFIG_PAGE, content_type="text/html"))
    page.goto(url)
    page.wait_for_function(
        "() => ['done', 'error'].includes(document.documentElement.dataset.webjax)",
        timeout=LOAD_TIMEOUT_MS,
    )
    errors = page.eval_on_selector_all("pre.webjax-error", "els => els.map((e) => e.textContent)")
    assert errors == []
    out = json.loads(page.text_content("#out"))
    assert out["dtype"] == "float64"
    assert out["devices"] == ["cpu"] and out["platforms"] == "cpu,wasm"
    assert out["left_out"] == "Unknown backend webgl. Available backends are ['cpu', 'wasm']"
    assert "jax_numpy_rank_promotion='raise'" in out["rank"]
    info = out["info"].splitlines()
    assert info[0].startswith("webjax: ") and info[2].startswith("host:   Pyodide ")
    assert any(line.startswith("cross-origin isolated: ") for line in info)
    assert "jax_enable_x64: True" in info and "default backend: cpu" in info
