"""Run Python inside Pyodide in a Playwright page and get JSON-able results back.

`PyodidePage.run_py(code)` runs `code` with `pyodide.runPythonAsync` (top-level `await` works,
and so do synchronous reads through JSPI); `run_py_sync(code)` uses plain `pyodide.runPython`.
Both run in one namespace per page (state persists between calls, like notebook cells) and
return the value of the code's last expression, passed through `json.dumps(default=repr)`:
JSON types come back as Python values (tuples as lists), anything else as its repr string.
A Python exception becomes a `PyodideError` carrying the type name and the traceback.
"""

from __future__ import annotations

import json
import time
from typing import Any

LOAD_TIMEOUT_MS = 180_000
RUN_TIMEOUT_MS = 300_000

# Installed in the page as the module `_webjax_test`.
HELPER_SOURCE = """
import json
import traceback

from pyodide.code import eval_code, eval_code_async

FILENAME = "<test>"
namespace = {"__name__": "__main__"}


def _ok(value):
    try:
        return json.dumps({"ok": True, "value": value}, default=repr)
    except (TypeError, ValueError):
        return json.dumps({"ok": True, "value": repr(value)})


def _error(e):
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != FILENAME:
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(e), e, tb))
    return json.dumps({"ok": False, "type": type(e).__name__, "message": str(e), "traceback": text})


async def run(src):
    try:
        return _ok(await eval_code_async(src, namespace, filename=FILENAME))
    except BaseException as e:
        return _error(e)


def run_sync(src):
    try:
        return _ok(eval_code(src, namespace, filename=FILENAME))
    except BaseException as e:
        return _error(e)
"""

_INSTALL_HELPER = """
import sys, types
_m = types.ModuleType("_webjax_test")
exec(src, _m.__dict__)
sys.modules["_webjax_test"] = _m
"""

# Loads Pyodide in a page that has window.webjaxLoader (web/test.html).
_LOAD_JS = """
async ([withWebjax, helper, install]) => {
  const loader = window.webjaxLoader;
  const t0 = performance.now();
  const py = withWebjax ? await loader.loadWebjax() : await loader.loadPyodideRuntime();
  const seconds = (performance.now() - t0) / 1000;
  const globals = py.toPy({ src: helper });
  py.runPython(install, { globals });
  globals.destroy();
  window.__webjaxPyodide = py;
  return seconds;
}
"""

_RUN_JS = """
async ([code, sync, timeoutMs]) => {
  const py = window.__webjaxPyodide;
  const globals = py.toPy({ src: code });
  let timer;
  const timeout = new Promise((_, reject) => {
    const error = new Error(`run_py timed out after ${timeoutMs} ms`);
    timer = setTimeout(() => reject(error), timeoutMs);
  });
  const run = sync
    ? Promise.resolve().then(() =>
        py.runPython("import _webjax_test\\n_webjax_test.run_sync(src)", { globals }))
    : py.runPythonAsync("import _webjax_test\\nawait _webjax_test.run(src)", { globals });
  try {
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
"""


class PyodideError(Exception):
    """A Python exception raised inside Pyodide."""

    def __init__(self, type_name: str, message: str, traceback_text: str) -> None:
        super().__init__(f"{type_name} raised inside Pyodide:\n{traceback_text}")
        self.type_name = type_name
        self.message = message
        self.traceback = traceback_text


class PyodidePage:
    """A Playwright page with Pyodide (and maybe webjax) loaded and the test helper installed."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console: list[str] = []
        self.load_seconds: float | None = None
        page.on("console", lambda msg: self.console.append(f"[{msg.type}] {msg.text}"))
        page.on("pageerror", lambda err: self.console.append(f"[pageerror] {err}"))

    def console_tail(self, n: int = 40) -> str:
        return "\n".join(self.console[-n:]) or "(no console output)"

    def load(self, url: str, *, with_webjax: bool) -> PyodidePage:
        t0 = time.perf_counter()
        self.page.goto(url)
        self.page.wait_for_function("() => window.webjaxLoader !== undefined")
        try:
            self.page.evaluate(
                "args => new Promise((resolve, reject) => {"
                f" setTimeout(() => reject(new Error('load timed out')), {LOAD_TIMEOUT_MS});"
                f" ({_LOAD_JS})(args).then(resolve, reject); }})",
                [with_webjax, HELPER_SOURCE, _INSTALL_HELPER],
            )
        except Exception as e:
            what = "Pyodide + webjax" if with_webjax else "Pyodide"
            raise RuntimeError(
                f"loading {what} in {url} failed: {e}\n--- browser console ---\n"
                + self.console_tail()
            ) from None
        self.load_seconds = time.perf_counter() - t0
        return self

    def _run(self, code: str, sync: bool, timeout_ms: int) -> Any:
        raw = self.page.evaluate(_RUN_JS, [code, sync, timeout_ms])
        result = json.loads(raw)
        if not result["ok"]:
            raise PyodideError(result["type"], result["message"], result["traceback"])
        return result["value"]

    def run_py(self, code: str, *, timeout_ms: int = RUN_TIMEOUT_MS) -> Any:
        """Run `code` through runPythonAsync; the last expression's value, JSON-converted."""
        return self._run(code, False, timeout_ms)

    def run_py_sync(self, code: str, *, timeout_ms: int = RUN_TIMEOUT_MS) -> Any:
        """Like run_py, but entered through plain runPython (no JSPI: no run_sync)."""
        return self._run(code, True, timeout_ms)

    def call_js(self, function_source: str) -> Any:
        """Evaluate `async (pyodide) => ...` with this page's Pyodide instance."""
        return self.page.evaluate(f"async () => ({function_source})(window.__webjaxPyodide)")
