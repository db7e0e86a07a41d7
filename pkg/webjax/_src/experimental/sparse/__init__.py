"""jax.experimental.sparse: sparse arrays as pytrees of dense arrays (BCOO)."""
