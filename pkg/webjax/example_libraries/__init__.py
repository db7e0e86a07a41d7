"""webjax.example_libraries: JAX's example libraries, `optimizers` (init/update/get_params
triples over pytrees) and `stax` (a small neural-network layer library), written on webjax's
public API. As in JAX, import the submodules explicitly:

    from jax.example_libraries import optimizers, stax
"""
