"""The Mandelbrot demo: the escape-time count over a grid, one jitted fori_loop, on the
device the page picked, drawn with webjax.display.imshow."""

from __future__ import annotations

import time
from typing import Any

import webjax as jax
import webjax.numpy as jnp

ITERATIONS = 64


@jax.jit
def escape_counts(cr: Any, ci: Any) -> Any:
    """For each point c = cr + i ci: how many of ITERATIONS steps of z <- z^2 + c stay in
    |z| < 2."""

    def step(i: Any, state: Any) -> Any:
        zr, zi, count, alive = state
        nr, ni = zr * zr - zi * zi + cr, 2 * zr * zi + ci
        alive = alive & (nr * nr + ni * ni < 4)  # once out, a point stays out
        # an escaped point keeps its last value (no overflow to inf or nan)
        zr, zi = jnp.where(alive, nr, zr), jnp.where(alive, ni, zi)
        return zr, zi, count + alive, alive

    zeros = jnp.zeros_like(cr)
    alive = jnp.ones(cr.shape, dtype=bool)
    return jax.lax.fori_loop(0, ITERATIONS, step, (zeros, zeros, zeros, alive))[2]


def grid(width: int) -> tuple[Any, Any]:
    height = width * 4 // 5
    return jnp.meshgrid(jnp.linspace(-2.2, 0.8, width), jnp.linspace(-1.2, 1.2, height))


async def main(page: Any) -> None:
    from webjax import display

    width = page.int_param("size", 320)
    cr, ci = grid(width)
    t = time.perf_counter()
    counts = escape_counts(cr, ci)
    await jax.block_until_ready_async(counts)
    first = time.perf_counter() - t
    t = time.perf_counter()
    counts = escape_counts(cr, ci)
    await jax.block_until_ready_async(counts)
    seconds = time.perf_counter() - t
    with page.area("picture"):
        display.imshow(
            counts,
            cmap="magma",
            title=f"{ITERATIONS} iterations on {page.device}",
            width=max(width, 320),
        )
    inside = float(jnp.mean(counts == ITERATIONS))
    page.show("time", f"{seconds * 1e3:.1f} ms")
    page.show("first", f"{first * 1e3:.1f} ms")
    page.status(f"done on {page.device}")
    page.result(
        size=[int(cr.shape[0]), int(cr.shape[1])],
        seconds=seconds,
        first_seconds=first,
        inside_fraction=inside,
    )
