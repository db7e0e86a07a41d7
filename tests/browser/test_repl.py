"""The REPL (index.html), driven by clicks and keys in Chromium: one page load, several checks.

The page is opened from a link that carries code (it must wait for Run); then typing with
Ctrl+Enter, streamed output, Stop on an endless loop, tracebacks, the device picker on every
device, an example from the menu, webjax.display's canvases (pixels read back) and the HTML
repr of arrays.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.browser

LOAD_TIMEOUT_MS = 180_000
RUN_TIMEOUT_MS = 120_000
LINK_CODE = "print('from the link', 6 * 7)\n"


def _hash(code: str) -> str:
    return "#code=" + base64.urlsafe_b64encode(code.encode()).decode().rstrip("=")


@pytest.fixture(scope="module")
def repl(browser: Any, server_url: str) -> Iterator[Any]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(server_url + "index.html" + _hash(LINK_CODE))
        page.wait_for_function(
            "() => ['ready', 'error'].includes(document.body.dataset.state)",
            timeout=LOAD_TIMEOUT_MS,
        )
        assert page.evaluate("document.body.dataset.state") == "ready", page.text_content("#output")
        yield page
    finally:
        context.close()


def _runs(page: Any) -> int:
    return int(page.evaluate("document.body.dataset.runs ?? '0'"))


def _wait_run(page: Any, before: int) -> str:
    page.wait_for_function(
        f"() => Number(document.body.dataset.runs ?? 0) > {before}", timeout=RUN_TIMEOUT_MS
    )
    return page.text_content("#output")


def _run(page: Any, code: str, *, device: str = "default") -> str:
    page.evaluate("code => webjaxRepl.editor.setText(code)", code)
    page.select_option("#device", device)
    before = _runs(page)
    page.click("#run")
    return _wait_run(page, before)


def test_link_code_waits_for_run(repl):
    # The code from the address is in the editor, but nothing ran: the phases finished, the
    # output is empty and no run was counted.
    assert repl.evaluate("webjaxRepl.editor.getText()") == LINK_CODE
    names = [name for name, _ in repl.evaluate("webjaxRepl.phases")]
    assert names == [
        "downloading Pyodide",
        "starting Python",
        "installing webjax",
        "importing webjax",
        "finding devices",
        "ready",
    ]
    assert repl.text_content("#output") == ""
    assert _runs(repl) == 0
    before = _runs(repl)
    repl.click("#run")
    assert _wait_run(repl, before).strip() == "from the link 42"


def test_typing_indentation_and_ctrl_enter(repl):
    repl.click(".cm-content")
    repl.keyboard.press("Control+A")
    repl.keyboard.press("Delete")
    repl.keyboard.type("def f(x):\nreturn x * 2")  # Enter after the colon indents
    text = repl.evaluate("webjaxRepl.editor.getText()")
    assert text == "def f(x):\n    return x * 2"
    repl.keyboard.press("Control+A")
    repl.keyboard.insert_text(
        "import webjax\ndef f(x):\n    return x ** 3\nprint(webjax.grad(f)(2.0))\nf(3)"
    )
    before = _runs(repl)
    repl.keyboard.press("Control+Enter")
    assert _wait_run(repl, before).strip() == "12.0\n27"
    # The code is kept in the address.
    decode = (
        "atob(new URLSearchParams(location.hash.slice(1)).get('code')"
        ".replaceAll('-', '+').replaceAll('_', '/'))"
    )
    repl.wait_for_function(f"() => {decode}.endsWith('f(3)')")
    assert repl.evaluate(decode) == repl.evaluate("webjaxRepl.editor.getText()")


def test_streamed_output_and_stop(repl):
    assert repl.evaluate("crossOriginIsolated") is True
    repl.evaluate(
        "code => webjaxRepl.editor.setText(code)",
        "print('started')\nn = 0\nwhile True:\n    n += 1\n",
    )
    before = _runs(repl)
    repl.click("#run")
    # Printed while the loop still runs: output is streamed, and the page is responsive.
    repl.wait_for_function(
        "() => document.getElementById('output').textContent.includes('started')",
        timeout=RUN_TIMEOUT_MS,
    )
    assert repl.evaluate("document.body.dataset.state") == "running"
    assert repl.is_enabled("#stop")
    repl.click("#stop")
    output = _wait_run(repl, before)
    assert output.startswith("started\nTraceback (most recent call last):")
    assert output.strip().endswith("KeyboardInterrupt")
    # The REPL keeps working, with its state.
    assert _run(repl, "print(n > 0, 6 * 7)").strip() == "True 42"
    # A loop of GPU reads: most Stops land while Python waits on a promise (JSPI) or in a
    # finalizer; the interrupt is taken in the user's or webjax's frames all the same.
    loop = (
        "import webjax.numpy as jnp\nx = jnp.ones(100)\nprint('go')\n"
        "while True:\n    x = (x * 1.0001).block_until_ready()\n"
    )
    for device in ("webgpu:0", "webgl:0"):
        repl.select_option("#device", device)
        repl.evaluate("code => webjaxRepl.editor.setText(code)", loop)
        for _ in range(3):
            before = _runs(repl)
            repl.click("#run")
            repl.wait_for_function(
                "() => document.getElementById('output').textContent.includes('go')",
                timeout=RUN_TIMEOUT_MS,
            )
            repl.click("#stop")
            output = _wait_run(repl, before)
            assert "KeyboardInterrupt" in output.strip().splitlines()[-2:], output
        assert _run(repl, "print(float(x[0]) > 1)", device=device).strip() == "True"
    repl.select_option("#device", "default")


def test_tracebacks_show_user_frames(repl):
    output = _run(repl, "def f(x):\n    return x / 0\n\nf(1)\n")
    assert output.startswith("Traceback (most recent call last):")
    assert 'File "<repl>", line 2, in f\n    return x / 0\n' in output
    assert output.strip().endswith("ZeroDivisionError: division by zero")
    assert "webjax_repl" not in output and "pyodide" not in output
    assert "SyntaxError" in _run(repl, "def broken(:\n")
    # Errors raised inside webjax show the user's frames only, saying how many were hidden.
    output = _run(
        repl, "import webjax.numpy as jnp\ndef g(a):\n    return a @ jnp.ones(4)\ng(jnp.ones(3))"
    )
    lines = output.splitlines()
    assert '  File "<repl>", line 3, in g' in lines and "    return a @ jnp.ones(4)" in lines
    assert lines[-2] == (
        "TypeError: dot_general requires contracting dimensions to have the same shape, "
        "got (3,) and (4,)."
    )
    assert "frames inside webjax hidden" in output and "site-packages" not in output
    assert "webjax_repl" not in repl.text_content("#output")


def test_device_picker_lists_the_browsers_devices(repl):
    options = repl.eval_on_selector_all(
        "#device option:not([disabled])", "els => els.map((e) => [e.value, e.textContent])"
    )
    values = [v for v, _ in options]
    assert values[0] == "default"
    # Chromium here offers all four (WebGPU and WebGL on SwiftShader, inside the worker).
    assert set(values[1:]) == {"wasm:0", "webgpu:0", "webgl:0", "cpu:0"}, options
    badge = repl.text_content("#isolation")
    assert badge.startswith("cross-origin isolated: wasm threads ")
    assert int(badge.rsplit(" ", 1)[1]) >= 1
    code = "import webjax.numpy as jnp\nx = (jnp.arange(6).reshape(2, 3) * 2).sum()\n"
    code += "print(x, x.device)\n"
    for value, label in options[1:]:
        assert _run(repl, code, device=value).strip() == f"30 {label}", value
        assert f"device={value.replace(':', '%3A')}" in repl.evaluate("location.hash")
    repl.select_option("#device", "default")
    assert "device=" not in repl.evaluate("location.hash")


_CANVAS_COLORS = """canvas => {
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  const colors = new Set();
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    const white = data[i] > 245 && data[i + 1] > 245 && data[i + 2] > 245;
    if (!white && data[i + 3] > 0) inked++;
    colors.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
  }
  return [inked, colors.size, canvas.width * canvas.height];
}"""


def test_display_plot_draws_a_canvas(repl):
    code = (
        "import webjax.numpy as jnp\nfrom webjax import display\n"
        "x = jnp.linspace(0, 6.3, 100)\nfig = display.plot(jnp.sin(x), x, title='sin')\n"
        "print(fig.shown, fig.kind)\n"
    )
    assert _run(repl, code).strip() == "True plot"
    canvases = repl.query_selector_all("#output figure.webjax-display canvas")
    assert len(canvases) == 1
    inked, _, total = canvases[0].evaluate(_CANVAS_COLORS)
    assert 0.01 * total < inked < 0.5 * total  # axes, ticks and the line; mostly paper
    blue = canvases[0].evaluate(
        """c => { const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
                  let n = 0;
                  for (let i = 0; i < d.length; i += 4)
                    if (Math.abs(d[i] - 0x2f) < 40 && Math.abs(d[i + 1] - 0x6f) < 40
                        && Math.abs(d[i + 2] - 0xb3) < 40) n++;
                  return n; }"""
    )
    assert blue > 100  # the series' color


def test_example_menu_mandelbrot_and_table(repl):
    names = repl.eval_on_selector_all("#examples option", "els => els.map((e) => e.textContent)")
    index = next(i for i, n in enumerate(names) if n.startswith("Mandelbrot")) - 1
    repl.select_option("#examples", str(index))
    assert "mandelbrot" in repl.evaluate("webjaxRepl.editor.getText()")
    before = _runs(repl)
    repl.click("#run")
    _wait_run(repl, before)
    canvases = repl.query_selector_all("#output figure.webjax-display canvas")
    assert len(canvases) == 1, repl.text_content("#output")
    inked, colors, _ = canvases[0].evaluate(_CANVAS_COLORS)
    assert colors > 20 and inked > 10_000  # the set's levels through the colormap
    assert repl.query_selector("#output .html-repr") is None  # a drawn figure is not echoed
    _run(repl, "from webjax import display\ndisplay.table({'a': [1, 2], 'b': ['x', '<y>']})")
    cells = repl.eval_on_selector_all(
        "#output figure.webjax-display td", "els => els.map((e) => e.textContent)"
    )
    assert cells == ["1", "x", "2", "<y>"]
    assert repl.query_selector("#output .html-repr") is None


def test_array_html_repr(repl):
    _run(repl, "import webjax.numpy as jnp\njnp.arange(6).reshape(2, 3) * 2")
    meta = repl.text_content("#output .html-repr .webjax-array-meta")
    assert meta.startswith("Array int32[2,3] on ")
    cells = repl.eval_on_selector_all(
        "#output .html-repr td", "els => els.map((e) => e.textContent)"
    )
    assert cells == ["0", "2", "4", "6", "8", "10"]


def test_not_isolated_page_stop_restarts_python(new_page, plain_server_url):
    # Without COOP/COEP there is no SharedArrayBuffer to interrupt through: the badge says so,
    # and Stop replaces the worker (a fresh Python, which then runs code again).
    page = new_page()
    page.goto(plain_server_url + "index.html")
    page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=LOAD_TIMEOUT_MS)
    assert page.text_content("#isolation") == "not cross-origin isolated: 1 wasm thread"
    page.evaluate(
        "code => webjaxRepl.editor.setText(code)",
        "x = 1\nprint('looping')\nwhile True:\n    pass\n",
    )
    before = _runs(page)
    page.click("#run")
    page.wait_for_function(
        "() => document.getElementById('output').textContent.includes('looping')",
        timeout=RUN_TIMEOUT_MS,
    )
    page.click("#stop")
    assert "Python was restarted" in _wait_run(page, before)
    page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=LOAD_TIMEOUT_MS)
    assert "NameError: name 'x' is not defined" in _run(page, "print(x)")


def test_display_on_a_page_running_pyodide(fresh_page):
    # On a page (no worker) the host draws into #webjax-display, or the body.
    fresh_page.run_py_sync(
        "import js\n"
        "target = js.document.createElement('div')\n"
        "target.id = 'webjax-display'\n"
        "js.document.body.append(target)\n"
        "from webjax import display\n"
        "import webjax.numpy as jnp\n"
        "fig = display.imshow(jnp.arange(64.0).reshape(8, 8), cmap='gray')\n"
        "t = display.table([[1, 2]], columns=['a', 'b'], title='T')\n"
        "assert fig.shown and t.shown\n"
    )
    page = fresh_page.page
    canvas = page.query_selector("#webjax-display figure.webjax-display canvas")
    inked, colors, _ = canvas.evaluate(_CANVAS_COLORS)
    assert colors >= 60 and inked > 1000  # 64 gray levels, scaled up
    assert page.text_content("#webjax-display figure:nth-of-type(2) figcaption") == "T"


def test_html_reprs_are_sanitized(repl):
    code = (
        "class Shown:\n"
        "    def _repr_html_(self):\n"
        "        return ('<img src=x onerror=\"document.body.dataset.pwned=1\">'\n"
        '                \'<b class="k" onclick="document.body.dataset.pwned=1">bold</b>\'\n'
        "                '<script>document.body.dataset.pwned = 1</script>')\n"
        "Shown()\n"
    )
    _run(repl, code)
    block = repl.query_selector("#output .html-repr")
    assert block.evaluate("b => b.querySelectorAll('img, script, [onclick]').length") == 0
    assert block.evaluate("b => b.querySelector('b.k').textContent") == "bold"
    assert repl.evaluate("document.body.dataset.pwned") is None


def test_profile_draws_the_kernels_on_a_timeline(repl):
    repl.check("#profile")
    try:
        code = (
            "import webjax\nimport webjax.numpy as jnp\nx = jnp.ones((32, 32))\n"
            "print((x @ x).sum())\n"
            "with webjax.default_device(webjax.devices('webgl')[0]):\n"
            "    print(jnp.sin(jnp.ones(8)).sum())\n"
        )
        output = _run(repl, code)
    finally:
        repl.uncheck("#profile")
    lines = output.splitlines()
    assert lines[:2] == ["32768.0", "6.7317667"], output
    assert lines[2].startswith("profile: ") and int(lines[2].split()[1]) >= 2
    canvas = repl.query_selector("#output figure.webjax-display canvas")
    label = canvas.get_attribute("aria-label")
    assert label.startswith("timeline, ") and "wasm: " in label and "webgl: " in label
    inked, colors, _ = canvas.evaluate(_CANVAS_COLORS)
    assert inked > 200 and colors > 5


def test_every_example_runs(repl):
    names = repl.eval_on_selector_all("#examples option", "els => els.map((e) => e.textContent)")
    expected = {  # what each example's output shows (the Mandelbrot one is checked above)
        "A tour: grad, vmap, jit": ("pre", "loss: "),
        "A plot": ("canvas", 2),
        "A table": ("td", 15),
    }
    for name, (what, want) in expected.items():
        repl.select_option("#examples", str(names.index(name) - 1))
        before = _runs(repl)
        repl.click("#run")
        output = _wait_run(repl, before)
        assert "Traceback" not in output, (name, output)
        if what == "pre":
            assert output.startswith(want), (name, output)
            assert "(8, 3)" in output  # the per-example gradients' shape
        else:
            found = len(repl.query_selector_all(f"#output figure.webjax-display {what}"))
            assert found == want, (name, found)
    assert names[-1] == "A long loop (press Stop)"
