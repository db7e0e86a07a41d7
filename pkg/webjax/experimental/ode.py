"""webjax.experimental.ode: JAX's `jax.experimental.ode` (`odeint`: adaptive Dormand-Prince
integration, reverse-mode differentiable by the adjoint method)."""

from webjax._src.experimental.ode import odeint

__all__ = ["odeint"]
