"""The matmul benchmark: a jitted a @ b of n x n float32 matrices, GFLOP/s on a device."""

from __future__ import annotations

import statistics
from typing import Any

import webjax as jax
import webjax.numpy as jnp


def operands(n: int) -> tuple[Any, Any]:
    ka, kb = jax.random.split(jax.random.key(0))
    return jax.random.uniform(ka, (n, n)), jax.random.uniform(kb, (n, n))


def check(a: Any, b: Any, out: Any) -> float:
    """Relative error of one element of `out` against a Python dot product."""
    want = sum(x * y for x, y in zip(a[0].tolist(), b[:, 0].tolist(), strict=True))
    return abs(float(out[0, 0]) - want) / max(abs(want), 1e-30)


async def main(page: Any) -> None:
    from demo_page import time_calls

    from webjax import display

    n = page.int_param("n", 512)
    reps = page.int_param("reps", 10)
    a, b = operands(n)
    f = jax.jit(jnp.matmul)
    page.status(f"timing {n} x {n} on {page.device}…")
    times = await time_calls(lambda: f(a, b), reps)
    median = statistics.median(times)
    gflops = 2 * n**3 / median / 1e9
    err = check(a, b, f(a, b))
    page.show("gflops", f"{gflops:.2f}")
    page.show("time", f"{median * 1e3:.2f} ms")
    with page.area("chart"):
        display.plot(
            jnp.array([2 * n**3 / t / 1e9 for t in times]),
            title="GFLOP/s per call",
            xlabel="call",
            ylabel="GFLOP/s",
        )
    page.status(f"done on {page.device}")
    page.result(n=n, calls=len(times), median_seconds=median, gflops=gflops, check_rel_err=err)
