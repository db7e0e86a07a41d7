"""The webjax side of the ONNX benchmark page (bench/onnx_page.html runs it in Pyodide): load an
ONNX file with webjax.onnx, jit its `run`, time the first call and then steady-state calls on
one device, and hand back the timings and the last output (float32 bytes, base64)."""

from __future__ import annotations

import base64
import json
import struct
import time
from typing import Any

from pyodide.http import pyfetch

import webjax
import webjax.numpy as jnp
from webjax.onnx import ONNXModel


async def fetch_bytes(url: str) -> bytes:
    response = await pyfetch(url)
    if not response.ok:
        raise OSError(f"{url} answered HTTP {response.status}")
    return await response.bytes()


async def bench_onnx_json(args_json: str) -> str:
    args: dict[str, Any] = json.loads(args_json)
    device = args["device"]
    if device == "webgpu":
        await webjax.init_webgpu_async()
    dev = webjax.devices(device)[0]
    host = getattr(dev.backend, "host", None)  # wasm: the worker pool's counters
    pool = host if hasattr(host, "backoffs") else None
    t = time.perf_counter()
    model = ONNXModel(await fetch_bytes(args["model"]))
    load_s = time.perf_counter() - t
    raw = await fetch_bytes(args["input"])
    with webjax.default_device(dev):
        x = jnp.frombuffer(raw, jnp.float32).reshape(args["shape"])
        run = webjax.jit(model.run)
        feeds = {args["input_name"]: x}

        async def call() -> Any:
            return await webjax.block_until_ready_async(run(feeds)[args["output_name"]])

        t = time.perf_counter()
        out = await call()
        first_s = time.perf_counter() - t
        least = 1 if first_s > 2 * args["budget_s"] else 3  # as the page's timeCalls
        times: list[float] = []
        backoffs0 = pool.backoffs() if pool else 0
        chunks0 = pool.worker_chunks() if pool else 0
        start = time.perf_counter()
        while len(times) < args["reps"]:
            t = time.perf_counter()
            out = await call()
            times.append(time.perf_counter() - t)
            if time.perf_counter() - start > args["budget_s"] and len(times) >= least:
                break
        values = out.reshape(-1).tolist()
    data = struct.pack(f"<{len(values)}f", *values)
    return json.dumps(
        {
            "lib": "webjax",
            "device": str(dev),
            "load_ms": load_s * 1e3,
            "first_ms": first_s * 1e3,
            "times_ms": [s * 1e3 for s in times],
            "output_shape": list(out.shape),
            # wasm with threads: worker threads started, chunks they ran and the pool's
            # back-offs (split calls no faster than one thread) during the timed calls
            "pool": {
                "workers": pool.workers_ready(),
                "worker_chunks": pool.worker_chunks() - chunks0,
                "backoffs": pool.backoffs() - backoffs0,
            }
            if pool
            else None,
            "output_b64": base64.b64encode(data).decode(),
        }
    )
