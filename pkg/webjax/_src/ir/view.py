"""Index arithmetic for movement ops: views fold into the index expressions of loads.

A movement op never launches a kernel: it maps each output multi-index to an input flat index,
and the input's expression is re-indexed with that map (ir.exp.replace on its IDX).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from . import exp as E
from .exp import Exp


def strides(shape: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def unravel(flat: Exp, shape: Sequence[int]) -> list[Exp]:
    """Multi-index of `flat` in a row-major `shape` (dims of size 1 give 0)."""
    return [
        E.i32(0) if d == 1 else E.mod(E.idiv(flat, s), d) for d, s in zip(shape, strides(shape))
    ]


def ravel(index: Sequence[Exp], shape: Sequence[int]) -> Exp:
    acc = E.i32(0)
    for i, s, d in zip(index, strides(shape), shape):
        if d != 1:
            acc = E.add(acc, E.mul(i, s))
    return acc


def reindex(value: Exp, in_size: int, new_index: Exp) -> Exp:
    """Read `value` (an expression over IDX(in_size)) at `new_index` instead of IDX."""
    return E.replace(value, {E.idx(in_size): new_index})


def transpose_index(out_flat: Exp, in_shape: Sequence[int], perm: Sequence[int]) -> Exp:
    out_shape = [in_shape[p] for p in perm]
    o = unravel(out_flat, out_shape)
    i: list[Exp] = [E.i32(0)] * len(in_shape)
    for k, p in enumerate(perm):
        i[p] = o[k]
    return ravel(i, in_shape)


def broadcast_index(
    out_flat: Exp, in_shape: Sequence[int], out_shape: Sequence[int], dims: Sequence[int]
) -> Exp:
    o = unravel(out_flat, out_shape)
    return ravel([E.i32(0) if in_shape[j] == 1 else o[d] for j, d in enumerate(dims)], in_shape)


def reduce_index(out_flat: Exp, r: Exp, in_shape: Sequence[int], axes: Sequence[int]) -> Exp:
    kept = [d for a, d in enumerate(in_shape) if a not in axes]
    red = [in_shape[a] for a in sorted(axes)]
    o, rr = unravel(out_flat, kept), unravel(r, red)
    i: list[Exp] = []
    for a in range(len(in_shape)):
        i.append(rr.pop(0) if a in axes else o.pop(0))
    return ravel(i, in_shape)


def size(shape: Sequence[int]) -> int:
    return math.prod(shape)
