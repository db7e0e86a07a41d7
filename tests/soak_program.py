"""The soak programs: a jitted MLP training loop and an eager loop of small ops, sampling what
could leak as they go: live arrays, the backend's bytes in use and pooled, the wasm memory's
size, and (in Pyodide) the JS references Python holds. Plain webjax, NumPy-free, so the same
file runs natively (tests/test_soak.py), in the browser (tests/browser/test_soak_browser.py)
and at full length (`python build.py soak`)."""

from __future__ import annotations

import gc
from typing import Any

import webjax
import webjax.numpy as jnp

METRICS = ("live_arrays", "bytes_in_use", "pool_bytes", "bytes_reserved", "js_refs")


def js_refs() -> int | None:
    """JS values Python holds references to (Pyodide's hiwire table), None natively."""
    try:
        import pyodide_js
    except ImportError:
        return None
    return int(pyodide_js._module._hiwire_num_refs())


def sample(device: Any) -> dict[str, Any]:
    gc.collect()
    stats = device.memory_stats() or {}
    return {
        "live_arrays": len(webjax.live_arrays(device.platform)),
        "bytes_in_use": stats.get("bytes_in_use"),
        "pool_bytes": stats.get("pool_bytes"),
        "bytes_reserved": stats.get("bytes_reserved"),
        "js_refs": js_refs(),
    }


def _loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = webjax.nn.relu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -jnp.mean(jnp.sum(webjax.nn.log_softmax(logits) * y, axis=-1))


def mlp_training(device: Any, steps: int, every: int) -> list[dict[str, Any]]:
    """`steps` SGD steps of a 64-128-10 MLP on a fixed batch of 32, sampled every `every`."""
    with webjax.default_device(device):
        k1, k2, k3 = webjax.random.split(webjax.random.key(0), 3)
        params = {
            "w1": webjax.random.normal(k1, (64, 128)) * 0.1,
            "b1": jnp.zeros(128),
            "w2": webjax.random.normal(k2, (128, 10)) * 0.1,
            "b2": jnp.zeros(10),
        }
        x = webjax.random.normal(k3, (32, 64))
        y = webjax.nn.one_hot(jnp.arange(32) % 10, 10)

        @webjax.jit
        def step(params: dict[str, Any]) -> tuple[dict[str, Any], Any]:
            loss, grads = webjax.value_and_grad(_loss)(params, x, y)
            return webjax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss

        series = []
        for i in range(1, steps + 1):
            params, loss = step(params)
            if i % every == 0:
                series.append({"step": i, "loss": float(loss), **sample(device)})
        return series


def eager_ops(device: Any, ops: int, every: int) -> list[dict[str, Any]]:
    """`ops` small eager ops (elementwise, a reduction, an update, a read), sampled every
    `every` ops."""
    with webjax.default_device(device):
        x = jnp.linspace(0.0, 1.0, 256)
        series = []
        for i in range(1, ops + 1):
            kind = i % 4
            if kind == 0:
                x = x * 0.5 + 0.25
            elif kind == 1:
                x = jnp.sqrt(x)
            elif kind == 2:
                x = x.at[i % 8].set(0.5)  # a few indices: a few kernels
            else:
                x = x - jnp.mean(x) + 0.5
            if i % every == 0:  # a sync, as a loop that shows progress makes
                x.block_until_ready()
                series.append({"step": i, "value": float(x[0]), **sample(device)})
        return series


def leaks(series: list[dict[str, Any]], warmup: int) -> list[str]:
    """What grew after the first `warmup` samples (empty when every metric stayed flat).
    Flat: live arrays, bytes in use and pooled bytes never above the most they reached during
    warm-up (which buffers are alive at a sample varies a little with the lazy schedule); the
    wasm memory never grown; JS references within a few of the last warm-up sample's."""
    head, rest = series[:warmup], series[warmup:]
    problems = []
    for key in METRICS:
        if head[-1][key] is None:
            continue
        if key == "bytes_reserved":
            limit = head[-1][key]
        elif key == "js_refs":
            limit = head[-1][key] + 8
        else:
            limit = max(s[key] for s in head)
        top = max((s[key] for s in rest), default=limit)
        if top > limit:
            problems.append(f"{key} rose to {top} after warm-up (at most {limit} before)")
    return problems
