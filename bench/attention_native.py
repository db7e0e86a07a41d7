"""Native benchmark: jax.nn.dot_product_attention fused (flash_attention_p) vs the composite.

    PYTHONPATH=pkg python bench/attention_native.py [--devices wasm,webgpu] [--t 128,512]
        [--causal] [--json out.json]

Times jitted float32 attention at B=1, N=12, H=64 (T = S) on wasm (wasmtime, one thread) and
webgpu (wgpu-py; lavapipe here), the fused kernel against the XLA-style composite it replaces
(nn/attention.py `_attention`: two products, masks, softmax), best of several runs after a
warm-up, each ending in `block_until_ready`. Prints ms, GFLOP/s (4 B N T S H) and the speedup.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

import numpy as np

import webjax
from webjax import nn
from webjax._src.nn import attention as attn


def best(fn: Any, min_reps: int = 3, min_time: float = 0.5) -> float:
    fn()  # warm-up (compile)
    times: list[float] = []
    end = time.perf_counter() + min_time
    while len(times) < min_reps or (time.perf_counter() < end and len(times) < 50):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def measure(q: Any, k: Any, v: Any, causal: bool, scale: float) -> tuple[float, float, float]:
    """(fused seconds, composite seconds, max |difference|) of one case."""
    fused = webjax.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=causal))
    comp = webjax.jit(
        lambda q, k, v: attn._attention(q, k, v, None, None, causal, scale, None, None, None, False)
    )
    err = float(np.abs(np.asarray(fused(q, k, v)) - np.asarray(comp(q, k, v))).max())
    tf = best(lambda: fused(q, k, v).block_until_ready())
    tc = best(lambda: comp(q, k, v).block_until_ready())
    return tf, tc, err


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="wasm,webgpu")
    ap.add_argument("--t", default="128,512")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    b, n, h = 1, 12, 64
    scale = 1.0 / np.sqrt(h)
    rows = []
    rng = np.random.default_rng(0)
    for platform in args.devices.split(","):
        dev = webjax.devices(platform)[0]
        for t in (int(x) for x in args.t.split(",")):
            q, k, v = (
                webjax.device_put(rng.standard_normal((b, t, n, h), dtype=np.float32), dev)
                for _ in range(3)
            )
            causal = bool(args.causal)
            tf, tc, err = measure(q, k, v, causal, scale)
            flops = 4.0 * b * n * t * t * h
            row = {
                "device": platform,
                "T": t,
                "causal": causal,
                "fused_ms": tf * 1e3,
                "composite_ms": tc * 1e3,
                "fused_gflops": flops / tf / 1e9,
                "composite_gflops": flops / tc / 1e9,
                "speedup": tc / tf,
                "max_abs_diff": err,
            }
            rows.append(row)
            print(
                f"{platform:7s} T={t:4d} causal={causal!s:5s} fused {tf * 1e3:8.2f} ms "
                f"({row['fused_gflops']:6.2f} GFLOP/s)  composite {tc * 1e3:8.2f} ms "
                f"({row['composite_gflops']:6.2f} GFLOP/s)  speedup {tc / tf:5.2f}x  "
                f"max|diff| {err:.1e}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
