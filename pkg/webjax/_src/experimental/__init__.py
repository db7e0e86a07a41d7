"""jax.experimental: odeint (adaptive Dormand-Prince with the adjoint method)."""
