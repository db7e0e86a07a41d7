"""Python side of the REPL page (web/index.html), imported as `webjax_repl` in the REPL's Web
Worker (web/repl_worker.mjs).

Runs user code with the picked device as the default device, prints the value of a final
expression like the Python REPL (as HTML where it has `_repr_html_`, as webjax arrays do), and
shows tracebacks without this module's or Pyodide's frames.
"""

import asyncio
import contextlib
import linecache
import os
import signal
import sys
import traceback
from typing import Any

import _pyodide
import js
import pyodide
from pyodide.code import eval_code_async
from pyodide.ffi import to_js

import webjax
from webjax import display

PLATFORMS = ("wasm", "webgpu", "webgl", "cpu")
FILENAME = "<repl>"
namespace: dict = {"__name__": "__main__"}


async def device_choices() -> dict:
    """The device picker's [value, label] pairs (the default, then every device the browser
    offers), the platforms that are not available with the reason, and whether the page is
    cross-origin isolated (wasm threads) with the wasm device's thread count."""
    with contextlib.suppress(Exception):  # webjax.devices("webgpu") below raises, saying why
        await webjax.init_webgpu_async()  # WebGPU's adapter and device requests are promises
    try:
        choices = [["default", f"default ({webjax.devices()[0]})"]]
    except Exception as e:
        choices = [["default", f"default ({type(e).__name__})"]]
    missing = []
    threads = 1
    for platform in PLATFORMS:
        try:
            devices = webjax.devices(platform)
        except Exception as e:  # JAX raises RuntimeError for a platform it cannot initialize
            missing.append([platform, (str(e).splitlines() or [type(e).__name__])[0][:200]])
            continue
        choices += [[f"{platform}:{i}", str(d)] for i, d in enumerate(devices)]
    isolated = bool(getattr(js, "crossOriginIsolated", False))
    info = webjax.print_environment_info(return_string=True) or ""
    for line in info.splitlines():
        if line.strip().startswith("wasm:") and "threads=" in line:
            threads = int(line.split("threads=")[1].split()[0])
    return {"choices": choices, "missing": missing, "isolated": isolated, "threads": threads}


# Stop: the page writes SIGINT into Pyodide's interrupt buffer, and Python calls this handler at
# its next check, in whatever frame runs then. KeyboardInterrupt is raised only where the frames
# from there out to the user's code are ordinary calls. Raised in asyncio's or Pyodide's
# machinery (a promise callback while a GPU read waits through JSPI) it would break the run's
# own awaits and hang it; raised in a `__del__` it would be swallowed. There the signal is put
# back into the buffer, to be taken at a later check (and so is one that a weakref callback
# swallowed: `_on_unraisable`).
_MACHINERY = tuple(os.path.dirname(m.__file__ or "") + os.sep for m in (asyncio, pyodide, _pyodide))


def _interruptible(frame: Any) -> bool:
    while frame is not None:
        code = frame.f_code
        if code.co_filename == FILENAME:
            return True
        if code.co_name == "__del__" or code.co_filename.startswith(_MACHINERY):
            return False
        frame = frame.f_back
    return False  # not inside the user's code at all


def _on_interrupt(signum: int, frame: Any) -> None:
    if not _interruptible(frame):
        js.webjaxRearmInterrupt()
        return
    raise KeyboardInterrupt


def _on_unraisable(unraisable: Any) -> None:
    # A KeyboardInterrupt raised in a weakref callback or finalizer is dropped by Python: take
    # the Stop again at the next check instead.
    if unraisable.exc_type is KeyboardInterrupt:
        js.webjaxRearmInterrupt()
        return
    sys.__unraisablehook__(unraisable)


signal.signal(signal.SIGINT, _on_interrupt)
sys.unraisablehook = _on_unraisable


def _device_context(choice: str):
    if choice == "default":
        return contextlib.nullcontext()
    platform, index = choice.split(":")
    return webjax.default_device(webjax.devices(platform)[int(index)])


def _webjax_internal(filename: str) -> bool:
    return f"{os.sep}webjax{os.sep}" in filename and FILENAME not in filename


def _filter(te: traceback.TracebackException, seen: set[int]) -> None:
    """Drop webjax's own frames (JAX's traceback filtering), noting how many were hidden."""
    if id(te) in seen:
        return
    seen.add(id(te))
    kept = [f for f in te.stack if not _webjax_internal(f.filename)]
    hidden = len(te.stack) - len(kept)
    if hidden and kept:
        te.stack = traceback.StackSummary.from_list(kept)
        te.__notes__ = [
            *(te.__notes__ or []),
            f"({hidden} frames inside webjax hidden; "
            "webjax.config.update('jax_traceback_filtering', 'off') shows them)",
        ]
    for chained in (te.__cause__, te.__context__):
        if chained is not None:
            _filter(chained, seen)


def _print_user_traceback(e: BaseException) -> None:
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != FILENAME:
        tb = tb.tb_next  # drop the frames of this module and of Pyodide's eval_code_async
    if isinstance(e, SyntaxError) or tb is None:
        tb = None  # a SyntaxError names its line itself
    te = traceback.TracebackException(type(e), e, tb, compact=True)
    if webjax.config.jax_traceback_filtering != "off":
        _filter(te, set())
    print("".join(te.format()), end="", file=sys.stderr)


def _echo(result) -> None:
    """Show a final expression's value: HTML where it has one, else its repr."""
    if getattr(result, "_webjax_shown", False):
        return  # a display figure that was already drawn
    html = None
    repr_html = getattr(result, "_repr_html_", None)
    if callable(repr_html) and not isinstance(result, type):
        try:
            html = repr_html()
        except Exception:
            html = None
    if isinstance(html, str):
        text = repr(result)
        js.postMessage(to_js({"type": "html", "html": html, "text": text}))
    else:
        print(repr(result))


async def run(source: str, choice: str, profile: bool = False) -> bool:
    """Run `source` in the REPL namespace; True if it raised nothing. With `profile`, the run
    is traced and its kernels are drawn on a timeline per device afterwards."""
    if profile:
        webjax.profiler.start_trace()
    try:
        return await _run(source, choice)
    finally:
        if profile:
            events = webjax.profiler.stop_trace()
            kernels = [e for e in events if e.get("cat") == "kernel"]
            print(f"profile: {len(kernels)} kernels", flush=True)
            display.timeline(events, title="this run's kernels, per device")


async def _run(source: str, choice: str) -> bool:
    # Tracebacks quote the lines of the code that ran (this run's code: one file, "<repl>").
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
    try:
        with _device_context(choice):
            result = await eval_code_async(source, namespace, filename=FILENAME)
            if result is not None:
                _echo(result)
    except BaseException as e:
        _print_user_traceback(e)
        return False
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return True
