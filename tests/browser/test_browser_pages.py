"""The pages a user opens: the script-tag example and the REPL, driven like a user would."""

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


def _open_repl(new_page, server_url):
    page = new_page()
    page.goto(server_url + "index.html")
    page.wait_for_function(
        "() => ['ready', 'error'].includes(document.getElementById('status').textContent)",
        timeout=LOAD_TIMEOUT_MS,
    )
    assert page.text_content("#status") == "ready", page.text_content("#output")
    return page


def _run_in_repl(page, code=None):
    runs = int(page.evaluate("document.body.dataset.runs ?? '0'"))
    if code is not None:
        page.fill("#code", code)
    page.click("#run")
    page.wait_for_function(
        f"() => document.body.dataset.runs === '{runs + 1}'", timeout=RUN_TIMEOUT_MS
    )
    return page.text_content("#output")


def test_repl_default_code_prints_30(new_page, server_url):
    page = _open_repl(new_page, server_url)
    assert _run_in_repl(page).strip() == "30"


def test_repl_shows_traceback(new_page, server_url):
    page = _open_repl(new_page, server_url)
    output = _run_in_repl(page, "def f(x):\n    return x / 0\n\nf(1)\n")
    assert output.startswith("Traceback (most recent call last):")
    assert 'File "<repl>", line 2, in f' in output
    assert output.strip().endswith("ZeroDivisionError: division by zero")
    assert "webjax_repl" not in output and "_pyodide" not in output
    # A final expression is echoed, and state persists between runs.
    assert _run_in_repl(page, "y = 6\ny * 7").strip() == "42"
    assert _run_in_repl(page, "print(y)").strip() == "6"


def test_repl_syntax_error(new_page, server_url):
    page = _open_repl(new_page, server_url)
    assert "SyntaxError" in _run_in_repl(page, "def broken(:\n")


def test_repl_runs_on_every_device(new_page, server_url):
    page = _open_repl(new_page, server_url)
    options = page.eval_on_selector_all(
        "#device option", "els => els.map((e) => [e.value, e.textContent])"
    )
    assert options[0][0] == "default"
    assert len(options) >= 2, f"no devices listed besides the default: {options}"
    code = (
        "import webjax.numpy as jnp\n"
        "x = (jnp.arange(6).reshape(2, 3) * 2).sum()\n"
        "print(x, x.device)\n"
    )
    for value, label in options[1:]:
        page.select_option("#device", value)
        assert _run_in_repl(page, code).strip() == f"30 {label}", value


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
