"""The public array type, `jax.Array`: an abstract class whose instances are the concrete
arrays and the tracers of every transformation, so `isinstance(x, jax.Array)` holds inside
`jit`, `grad` and `vmap` as in JAX (libraries test arguments that way). webjax's own code checks
for the concrete class (`dispatch.array.Array`) where it needs a value."""

from __future__ import annotations

import abc

from ..core import Tracer
from .array import Array as ConcreteArray


class Array(abc.ABC):  # noqa: B024 (no abstract methods: it only classifies)
    """A webjax array: concrete (on a device) or a tracer standing for one."""

    __slots__ = ()


Array.__module__ = "webjax"
Array.register(ConcreteArray)
Array.register(Tracer)
