"""lax.ragged_dot: a matmul whose lhs rows fall into consecutive groups, each group multiplied
by its own rhs matrix (mixture-of-experts layers).

Written as one dot_general against every group's matrix, [m, k] x [g, k, n] -> [m, g, n], and a
sum over g of the products masked to each row's group: O(g) more work than a grouped kernel,
exact, and differentiable, batchable and lowerable through the ops it is made of. Rows past
the sum of the group sizes are zero, as in JAX.
"""

from __future__ import annotations

from typing import Any

from .. import core, dtypes
from . import lax
from .windowed import cumsum


def ragged_dot(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
) -> Any:
    """lhs [m, k] times rhs [g, k, n] -> [m, n]: rows of lhs in group i (the i-th run of
    group_sizes[i] consecutive rows) use rhs[i]."""
    lhs, rhs, group_sizes = lax.to_array(lhs), lax.to_array(rhs), lax.to_array(group_sizes)
    la, ra, ga = (core.get_aval(x) for x in (lhs, rhs, group_sizes))
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset (computing a subset of the groups)")
    if la.ndim != 2 or ra.ndim != 3:
        raise TypeError(
            f"ragged_dot requires a 2-D lhs and a 3-D rhs, got shapes {la.shape} and {ra.shape}"
        )
    if la.shape[1] != ra.shape[1]:
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{(la.shape[1],)} and {(ra.shape[1],)}."
        )
    if ga.ndim != 1 or ga.dtype.kind not in "iu":
        raise TypeError(
            f"ragged_dot: group_sizes must be a 1-D integer array, got {ga.str_short()}"
        )
    if ga.shape[0] != ra.shape[0]:
        raise TypeError(
            f"expected rhs group dimension size to be {ga.shape[0]}, got {ra.shape[0]}."
        )
    m, g = la.shape[0], ra.shape[0]
    prods = lax.dot_general(
        lhs,
        rhs,
        (((1,), (1,)), ((), ())),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )  # [m, g, n]
    sizes = lax.convert_element_type(group_sizes, dtypes.int32)
    ends = cumsum(sizes, axis=0)
    starts = lax.sub(ends, sizes)
    rows = lax.broadcasted_iota(dtypes.int32, (m, g), 0)
    mine = lax.bitwise_and(
        lax.ge(rows, lax.broadcast_in_dim(starts, (m, g), (1,))),
        lax.lt(rows, lax.broadcast_in_dim(ends, (m, g), (1,))),
    )
    shape = core.get_aval(prods).shape
    zeros = lax.full(shape, 0, core.get_aval(prods).dtype)
    masked = lax.select(lax.broadcast_in_dim(mine, shape, (0, 1)), prods, zeros)
    return lax.reduce_sum(masked, (1,))
