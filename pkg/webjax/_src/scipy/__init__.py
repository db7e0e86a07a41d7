"""jax.scipy: one module per scipy submodule (special, stats, linalg, signal, optimize, ...)."""
