"""Profiler: one event per kernel dispatch, as Chrome-trace JSON (Perfetto opens it).

`start_trace(log_dir)` / `stop_trace()` as in `jax.profiler`. In the browser each event is
also a `performance.measure` on a DevTools custom track (group "webjax", track = device).
Event fields are stable (tests and benchmarks count kernels from them): name, cat
("kernel"), ph ("X"), ts/dur in microseconds, pid 1, tid = device platform,
args = {platform, size, dtype, expr, clock}. `clock` says what `dur` measured: "gpu" (the
device's own timer: WebGPU timestamp queries, WebGL/GL ES TIME_ELAPSED queries), "cpu" (host
time around the dispatch; GPU backends without timers wait for the kernel's work in it), or
"cpu-issue" (host time to issue the kernel only: its GPU timer result was voided by a disjoint
operation or was not ready when the trace stopped; see hosts/gl_timer.py).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from .hosts import in_browser, profiler_browser

_events: list[dict[str, Any]] | None = None
_log_dir: str | None = None
_before_stop: dict[Callable[[], None], None] = {}  # backends' hooks for this trace (ordered)
# Always-on counter of kernel dispatches per platform (cheap; used by tests for fusion).
dispatch_count: dict[str, int] = {}


def open_events() -> list[dict[str, Any]] | None:
    """The events of the trace being recorded (backends fill in device times), or None."""
    return _events


def before_stop(hook: Callable[[], None]) -> None:
    """Run `hook()` when the trace stops, before its events are returned (a backend fills in
    device times there); registering one hook again in a trace is a no-op."""
    if _events is not None:
        _before_stop[hook] = None


def _browser_now() -> float | None:
    if not in_browser():
        return None
    return profiler_browser.now_ms()


def start_trace(log_dir: str | os.PathLike[str] | None = None, **_: Any) -> None:
    global _events, _log_dir
    if _events is not None:
        raise RuntimeError("Profile has already been started. Only one profile may be run at once.")
    _events = []
    _log_dir = None if log_dir is None else os.fspath(log_dir)


def stop_trace() -> list[dict[str, Any]]:
    """Stop tracing; writes `<log_dir>/webjax.trace.json` when a log_dir was given."""
    global _events
    if _events is None:
        raise RuntimeError("No profile started")
    hooks = list(_before_stop)
    _before_stop.clear()
    for hook in hooks:
        hook()
    events, _events = _events, None
    if _log_dir is not None:
        os.makedirs(_log_dir, exist_ok=True)
        with open(os.path.join(_log_dir, "webjax.trace.json"), "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
    return events


@contextlib.contextmanager
def trace(log_dir: str | os.PathLike[str] | None = None, **kw: Any) -> Iterator[None]:
    start_trace(log_dir, **kw)
    try:
        yield
    finally:
        stop_trace()


@contextlib.contextmanager
def kernel_event(platform: str, kernel: Any, exe: Any) -> Iterator[None]:
    dispatch_count[platform] = dispatch_count.get(platform, 0) + 1
    if _events is None:
        yield
        return
    t0 = time.perf_counter()
    browser_t0 = _browser_now()
    yield
    t1 = time.perf_counter()
    if browser_t0 is not None:
        props = {
            "size": kernel.size,
            "dtype": kernel.out_dtype.name,
            "expr": repr(kernel.exp)[:500],
        }
        profiler_browser.measure(
            f"kernel[{kernel.size}]", browser_t0, profiler_browser.now_ms(), platform, props
        )
    red = kernel.reduction
    _events.append(
        {
            "name": f"kernel[{kernel.size}]",
            "cat": "kernel",
            "ph": "X",
            "ts": t0 * 1e6,
            "dur": (t1 - t0) * 1e6,
            "pid": 1,
            "tid": platform,
            "args": {
                "platform": platform,
                "kind": "reduction" if red is not None else "elementwise",
                "size": kernel.size,
                "reduction_size": red.arg[1] if red is not None else 0,
                "dtype": kernel.out_dtype.name,
                "expr": repr(kernel.exp)[:2000],
                "source": str(getattr(exe, "source", ""))[:4000],
                "clock": "cpu",  # a backend with device timers changes it (module docstring)
            },
        }
    )


class TraceAnnotation(contextlib.ContextDecorator):
    """A span in the trace (an "annotation" event, its kwargs as args) around the code it
    encloses; in the browser also a `performance.measure` on the "annotations" track. Free when
    no trace is recording."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.name, self.kwargs = name, kwargs
        self._starts: list[tuple[float, float | None]] = []

    def __enter__(self) -> TraceAnnotation:
        if _events is not None:
            self._starts.append((time.perf_counter(), _browser_now()))
        return self

    def __exit__(self, *exc: Any) -> None:
        if _events is None or not self._starts:
            return
        t0, browser_t0 = self._starts.pop()
        t1 = time.perf_counter()
        if browser_t0 is not None:
            profiler_browser.measure(
                self.name, browser_t0, profiler_browser.now_ms(), "annotations", self.kwargs
            )
        _events.append(
            {
                "name": self.name,
                "cat": "annotation",
                "ph": "X",
                "ts": t0 * 1e6,
                "dur": (t1 - t0) * 1e6,
                "pid": 1,
                "tid": "annotations",
                "args": {k: str(v) for k, v in self.kwargs.items()},
            }
        )


class StepTraceAnnotation(TraceAnnotation):
    """A TraceAnnotation marking one training step (`step_num=` among its kwargs)."""


def annotate_function(
    func: Callable[..., Any] | None = None, name: str | None = None, **kwargs: Any
) -> Any:
    """`func` wrapped in a TraceAnnotation named `name` (default: its qualified name); also a
    decorator factory, `@annotate_function(name=...)`."""
    if func is None:
        return lambda f: annotate_function(f, name=name, **kwargs)
    label = str(name or getattr(func, "__qualname__", None) or getattr(func, "__name__", "fun"))

    @functools.wraps(func)
    def wrapped(*args: Any, **kw: Any) -> Any:
        with TraceAnnotation(label, **kwargs):
            return func(*args, **kw)

    return wrapped
