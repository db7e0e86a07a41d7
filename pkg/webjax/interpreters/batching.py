"""webjax.interpreters.batching: vmap rules (`jax.interpreters.batching`)."""

from webjax._src.interpreters.batching import (
    BatchTrace,
    BatchTracer,
    axis_primitive_batchers,
    bdim_at_front,
    broadcast,
    defbroadcasting,
    defreducer,
    defvectorized,
    fancy_primitive_batchers,
    matchaxis,
    moveaxis,
    not_mapped,
    primitive_batchers,
    register_vmappable,
    unregister_vmappable,
)

__all__ = [
    "BatchTrace", "BatchTracer", "axis_primitive_batchers", "bdim_at_front", "broadcast",
    "defbroadcasting", "defreducer", "defvectorized", "fancy_primitive_batchers", "matchaxis",
    "moveaxis", "not_mapped", "primitive_batchers", "register_vmappable",
    "unregister_vmappable",
]  # fmt: skip
