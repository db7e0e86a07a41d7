"""The pendulum demo: theta'' = -(g / L) sin(theta) for several starting angles at once,
integrated with fourth-order Runge-Kutta inside one jitted lax.scan."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import webjax as jax
import webjax.numpy as jnp

G_OVER_L = 9.81
DT = 0.02


def deriv(state: Any) -> Any:
    theta, omega = state
    return jnp.stack([omega, -G_OVER_L * jnp.sin(theta)])


def rk4(state: Any, dt: float = DT) -> Any:
    k1 = deriv(state)
    k2 = deriv(state + 0.5 * dt * k1)
    k3 = deriv(state + 0.5 * dt * k2)
    k4 = deriv(state + dt * k3)
    return state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def energy(state: Any) -> Any:
    theta, omega = state
    return 0.5 * omega**2 + G_OVER_L * (1 - jnp.cos(theta))


@partial(jax.jit, static_argnums=1)
def simulate(theta0: Any, steps: int) -> Any:
    """The (theta, omega) of each pendulum after every step: shape (steps, 2, k)."""
    state = jnp.stack([theta0, jnp.zeros_like(theta0)])

    def step(state: Any, _: Any) -> Any:
        state = rk4(state)
        return state, state

    return jax.lax.scan(step, state, None, length=steps)[1]


def start_angles() -> Any:
    return jnp.array([0.3, 1.0, 2.0, 2.8, 3.1])


def energy_drift(trajectory: Any, theta0: Any) -> float:
    e0 = energy(jnp.stack([theta0, jnp.zeros_like(theta0)]))
    e = jax.vmap(energy)(trajectory)
    return float(jnp.max(jnp.abs(e - e0) / e0))


async def main(page: Any) -> None:
    from webjax import display

    steps = page.int_param("steps", 300)
    theta0 = start_angles()
    t = time.perf_counter()
    traj = simulate(theta0, steps)
    await jax.block_until_ready_async(traj)
    seconds = time.perf_counter() - t
    ts = jnp.arange(1, steps + 1) * DT
    labels = [f"{float(a):.1f} rad" for a in theta0]
    with page.area("angles"):
        display.plot(
            traj[:, 0, :],
            ts,
            title="angle over time",
            labels=labels,
            xlabel="time (s)",
            ylabel="theta (rad)",
        )
    with page.area("phase"):
        every = max(1, steps // 400)
        display.scatter(
            traj[::every, 0, :].reshape(-1),
            traj[::every, 1, :].reshape(-1),
            title="phase portrait (theta, omega)",
        )
    drift = energy_drift(traj, theta0)
    page.show("steps", str(steps))
    page.show("time", f"{seconds * 1e3:.0f} ms (compiling included)")
    page.show("drift", f"{drift:.2e}")
    page.status(f"done on {page.device}")
    page.result(
        steps=steps,
        seconds=seconds,
        energy_drift=drift,
        final_theta=[float(v) for v in traj[-1, 0]],
    )
