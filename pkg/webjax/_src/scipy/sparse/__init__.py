"""jax.scipy.sparse: iterative solvers for linear operators given as matrices or functions."""
