"""`jax._src.state`: mutable-state types (only `types.AbstractRef` is asked for)."""
