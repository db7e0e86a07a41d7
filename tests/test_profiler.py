"""Profiler: one Chrome-trace event per kernel dispatch, written to log_dir."""

from __future__ import annotations

import json

import pytest

import webjax
import webjax.numpy as jnp


def test_trace_events(device, tmp_path):
    x = jnp.arange(64.0)
    webjax.profiler.start_trace(tmp_path)
    (jnp.sin(x) * 2).sum().block_until_ready()
    jnp.exp(x).block_until_ready()
    events = webjax.profiler.stop_trace()
    assert len(events) == 2
    for e in events:
        assert e["cat"] == "kernel" and e["ph"] == "X" and e["tid"] == device.platform
        assert e["args"]["platform"] == device.platform and e["dur"] >= 0
    data = json.loads((tmp_path / "webjax.trace.json").read_text())
    assert len(data["traceEvents"]) == 2


def test_trace_context_and_errors(tmp_path):
    with webjax.profiler.trace(tmp_path):
        jnp.ones(3).sum().block_until_ready()
    with pytest.raises(RuntimeError, match="No profile started"):
        webjax.profiler.stop_trace()
    webjax.profiler.start_trace()
    with pytest.raises(RuntimeError, match="already been started"):
        webjax.profiler.start_trace()
    webjax.profiler.stop_trace()
