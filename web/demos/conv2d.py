"""The conv2d benchmark: a jitted lax.conv_general_dilated (NCHW, 3x3, SAME), GFLOP/s."""

from __future__ import annotations

import statistics
from typing import Any

import webjax as jax
import webjax.numpy as jnp

SIZES = {  # name: (N, C, H, W, O); the kernel is 3x3
    "small": (1, 16, 32, 32, 16),
    "medium": (1, 32, 64, 64, 32),
    "large": (8, 64, 64, 64, 64),
}
K = 3


def conv(lhs: Any, rhs: Any) -> Any:
    return jax.lax.conv_general_dilated(lhs, rhs, (1, 1), "SAME")


def flops(n: int, c: int, h: int, w: int, o: int) -> int:
    return 2 * n * o * h * w * c * K * K


def check(lhs: Any, rhs: Any, out: Any) -> float:
    """Relative error of output (0, 0, 1, 1) (all taps inside) against a Python sum."""
    patch, filt = lhs[0, :, 0:K, 0:K].tolist(), rhs[0].tolist()
    want = sum(
        patch[c][i][j] * filt[c][i][j]
        for c in range(len(patch))
        for i in range(K)
        for j in range(K)
    )
    return abs(float(out[0, 0, 1, 1]) - want) / max(abs(want), 1e-30)


async def main(page: Any) -> None:
    from demo_page import time_calls

    from webjax import display

    size = page.str_param("size", "small")
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    n, c, h, w, o = SIZES[size]
    reps = page.int_param("reps", 10)
    kl, kr = jax.random.split(jax.random.key(0))
    lhs = jax.random.uniform(kl, (n, c, h, w))
    rhs = jax.random.uniform(kr, (o, c, K, K)) * 0.1
    f = jax.jit(conv)
    page.status(f"timing {size} on {page.device}…")
    times = await time_calls(lambda: f(lhs, rhs), reps)
    median = statistics.median(times)
    gflops = flops(n, c, h, w, o) / median / 1e9
    err = check(lhs, rhs, f(lhs, rhs))
    page.show("gflops", f"{gflops:.2f}")
    page.show("time", f"{median * 1e3:.2f} ms")
    with page.area("chart"):
        display.plot(
            jnp.array([flops(n, c, h, w, o) / t / 1e9 for t in times]),
            title="GFLOP/s per call",
            xlabel="call",
            ylabel="GFLOP/s",
        )
    page.status(f"done on {page.device}")
    page.result(
        size=size,
        shape=[n, c, h, w, o],
        calls=len(times),
        median_seconds=median,
        gflops=gflops,
        check_rel_err=err,
    )
