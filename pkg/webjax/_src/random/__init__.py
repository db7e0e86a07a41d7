"""jax.random: keys (raw and typed threefry keys, split, fold_in), samplers, the distributions
derived from them, and threefry2x32 itself."""
