"""Soaks natively on every device (tests/soak_program.py): a jitted training loop and an eager
loop, whose live arrays and backend memory must stay flat after warm-up. The browser tier runs
the same programs in Pyodide (tests/browser/test_soak_browser.py); `python build.py soak` runs
them at full length (10,000 steps, 100,000 ops) and writes the series."""

from __future__ import annotations

import math
from typing import Any

import soak_program


def test_device_memory_stats(device: Any) -> None:
    stats = device.memory_stats()
    if device.platform == "cpu":
        assert stats is None  # as JAX's CPU client: no account kept
        return
    import webjax.numpy as jnp

    before = stats["bytes_in_use"]
    x = jnp.arange(50_000.0) * 2.0
    x.block_until_ready()
    held = device.memory_stats()
    assert held["bytes_in_use"] >= before + 4 * 50_000
    assert held["peak_bytes_in_use"] >= held["bytes_in_use"]
    assert held["num_allocs"] > stats["num_allocs"]
    del x
    assert device.memory_stats()["bytes_in_use"] == before


def test_training_loop_is_flat(device: Any) -> None:
    series = soak_program.mlp_training(device, steps=600, every=100)
    assert soak_program.leaks(series, warmup=2) == [], series
    losses = [s["loss"] for s in series]
    assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0], losses


def test_eager_loop_is_flat(device: Any) -> None:
    series = soak_program.eager_ops(device, ops=400, every=100)
    assert soak_program.leaks(series, warmup=2) == [], series
    assert all(math.isfinite(s["value"]) for s in series)
