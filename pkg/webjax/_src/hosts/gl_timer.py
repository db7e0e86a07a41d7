"""GPU times of webgl kernels for the profiler, from GL timer queries.

Where the context has `EXT_disjoint_timer_query_webgl2` (browsers) or
`GL_EXT_disjoint_timer_query` (OpenGL ES natively), each kernel's draws run inside one
TIME_ELAPSED query and nothing waits for them; the results are collected, oldest first, when they
are ready (the backend polls at every wait for the device, and when the trace stops) and become
the kernel events' durations, the event's `clock` then saying "gpu". GPU_DISJOINT_EXT is checked
before results are read: a disjoint operation (a GPU reset, a clock change) voids the queries in
flight. A kernel whose result is voided, or not ready when the trace stops (in a browser, results
arrive only after the page's event loop turns: await an async wait such as
`block_until_ready_async()` before `stop_trace()`), keeps its host time and says "cpu-issue":
the time to issue it, not its GPU time.

A host that offers timer queries gives its `timer` (a KernelTimer) these primitives:
`begin_time_query() -> query`, `end_time_query()`, `query_ready(query) -> bool`,
`query_ns(query) -> int`, `gpu_disjoint() -> bool`, `delete_query(query)`, the flag
`query_blocks` (whether `query_ns` may wait for a result that is not ready yet), and optionally
`async wait_query_async(query)` (wait, without blocking, until `query` is ready).
"""

from __future__ import annotations

from collections import deque
from typing import Any

MAX_PENDING = 1024  # queries in flight at most; later kernels wait for the GPU (clock "cpu")


class KernelTimer:
    """The TIME_ELAPSED queries of one context and the profiler events they time."""

    def __init__(self, host: Any) -> None:
        self.host = host
        # [query, events, index of the kernel's event in events, ended]
        self._pending: deque[list[Any]] = deque()

    def begin(self, events: list[dict[str, Any]]) -> list[Any] | None:
        """Start timing the kernel whose event will be appended to `events` next; None when
        too many queries are in flight (the caller then waits for the GPU instead)."""
        if len(self._pending) >= MAX_PENDING:
            return None
        entry = [self.host.begin_time_query(), events, len(events), False]
        self._pending.append(entry)
        return entry

    def end(self, entry: list[Any], *, ok: bool = True) -> None:
        """Stop timing `entry`'s kernel; `ok=False` when its dispatch failed (no event)."""
        self.host.end_time_query()
        entry[3] = True
        if not ok:
            entry[1] = None

    @property
    def pending(self) -> int:
        return len(self._pending)

    def poll(self, *, wait: bool = False) -> None:
        """Put the results that are ready into their events, oldest first (results come in
        order, so the first one not ready ends the poll); `wait` waits for them where the host
        can (natively, after a finish)."""
        if not self._pending:
            return
        disjoint = self.host.gpu_disjoint()
        host = self.host
        while self._pending and self._pending[0][3]:
            query, events, pos, _ = self._pending[0]
            if not disjoint and not (wait and host.query_blocks) and not host.query_ready(query):
                break
            self._pending.popleft()
            ns = None if disjoint else host.query_ns(query)
            host.delete_query(query)
            _fill(events, pos, ns, disjoint)

    async def poll_async(self) -> None:
        """Wait, without blocking, for the newest query's result, then poll."""
        wait = getattr(self.host, "wait_query_async", None)
        if self._pending and wait is not None and self._pending[-1][3]:
            await wait(self._pending[-1][0])
        self.poll(wait=True)

    def settle(self) -> None:
        """At the end of a trace: collect what can be collected; the rest keep host times."""
        self.poll(wait=True)
        while self._pending:
            query, events, pos, ended = self._pending.popleft()
            if ended:
                self.host.delete_query(query)
            _fill(events, pos, None, False)


def _fill(events: list[dict[str, Any]] | None, pos: int, ns: int | None, disjoint: bool) -> None:
    """The kernel event at events[pos] gets its GPU duration (ns), or says it has none. GPU
    work runs in issue order: an event starts no earlier than the one before it ends."""
    if events is None or pos >= len(events):
        return
    event = events[pos]
    args = event["args"]
    if ns is None:
        args["clock"] = "cpu-issue"
        if disjoint:
            args["gpu_disjoint"] = True
        return
    args["clock"] = "gpu"
    event["dur"] = ns / 1e3
    if pos > 0:
        before = events[pos - 1]
        if before["args"].get("clock") == "gpu" and before["tid"] == event["tid"]:
            event["ts"] = max(event["ts"], before["ts"] + before["dur"])
