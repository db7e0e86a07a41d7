"""`jax.flatten_util.ravel_pytree`: a pytree of arrays as one flat vector, and the way back.

The vector's dtype promotes the leaves' dtypes (JAX's lattice, leaves counted as strongly
typed); `unravel` casts each piece back to its leaf's dtype. When every leaf already has the
result dtype nothing is cast, and `unravel` accepts vectors of any dtype (JAX's behaviour).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import core, dtypes
from .dtypes import DType
from .lax import lax
from .tree_util import PyTreeDef, tree_flatten, tree_unflatten


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Ravel (flatten) a pytree of arrays and scalars into a 1-D array; returns it and a
    function mapping such a vector back to the pytree. No leaves: an empty float32 vector."""
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return lax.full((0,), 0, dtypes.float32), _Unravel(treedef, (), (), None, None)
    arrays = [lax.to_array(leaf) for leaf in leaves]
    avals = [core.get_aval(a) for a in arrays]
    from_dtypes = tuple(a.dtype for a in avals)
    to_dtype, _ = dtypes.result_type(*[(dt, False) for dt in from_dtypes])
    shapes = tuple(a.shape for a in avals)
    sizes = tuple(math.prod(s) for s in shapes)
    if all(dt is to_dtype for dt in from_dtypes):  # no casts: a dtype-polymorphic unravel
        flat = lax.concatenate([lax.reshape(a, (n,)) for a, n in zip(arrays, sizes)], 0)
        return flat, _Unravel(treedef, sizes, shapes, None, None)
    pieces = [
        lax.reshape(lax.convert_element_type(a, to_dtype), (n,)) for a, n in zip(arrays, sizes)
    ]
    flat = lax.concatenate(pieces, 0)
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)


class _Unravel:
    """The inverse of one `ravel_pytree`: hashable and comparable, as JAX's (a static
    argument of jit may be one)."""

    def __init__(
        self,
        treedef: PyTreeDef,
        sizes: tuple[int, ...],
        shapes: tuple[tuple[int, ...], ...],
        from_dtypes: tuple[DType, ...] | None,
        to_dtype: DType | None,
    ) -> None:
        self.treedef = treedef
        self.sizes = sizes
        self.shapes = shapes
        self.from_dtypes = from_dtypes
        self.to_dtype = to_dtype

    def _key(self) -> Any:
        return (self.treedef, self.sizes, self.shapes, self.from_dtypes, self.to_dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unravel) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"unravel_pytree({self.treedef})"

    def __call__(self, flat: Any) -> Any:
        if not self.sizes:
            return tree_unflatten(self.treedef, [])
        flat = lax.to_array(flat)
        aval = core.get_aval(flat)
        if self.to_dtype is not None and aval.dtype is not self.to_dtype:
            raise TypeError(
                f"unravel function given array of dtype {aval.dtype.name}, but expected dtype "
                f"{self.to_dtype.name}"
            )
        if not aval.shape or sum(self.sizes) != aval.shape[0]:
            raise ValueError(
                f"Sum of sizes {sum(self.sizes)} must be equal to dimension 0 of the operand "
                f"shape {list(aval.shape)}"
            )
        chunks, lo = [], 0
        rest = list(aval.shape[1:])
        for n, shape in zip(self.sizes, self.shapes):
            piece = lax.slice(flat, [lo] + [0] * len(rest), [lo + n, *rest])
            chunks.append(lax.reshape(piece, shape))
            lo += n
        if self.from_dtypes is not None:
            chunks = [lax.convert_element_type(c, dt) for c, dt in zip(chunks, self.from_dtypes)]
        return tree_unflatten(self.treedef, chunks)


__all__ = ["ravel_pytree"]
