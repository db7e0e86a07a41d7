"""jax.example_libraries: optimizers (init/update/get_params triples) and stax (layers as
(init_fun, apply_fun) pairs)."""
