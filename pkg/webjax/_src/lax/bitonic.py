"""Sort order as integer keys, and the bitonic sorting network over kernel expressions.

`sort_key` maps any value to a signed integer whose order is JAX's sort order (NaNs last, -0
equal to 0). Rows longer than BITONIC_MIN sort with a bitonic network (Batcher, 1968): sorting
and the many-update scatters (which sort their indices) share it.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..core import ShapedArray
from ..dispatch import lazy
from ..ir import exp as E
from ..ir import view
from ..ir.exp import Exp
from ..ir.ops import Op


def sort_key(x: Exp, total: bool = False) -> Exp:
    """An exp whose signed-integer order is JAX's sort order of `x` (-0.0 equal to 0.0, every
    NaN last), or with `total` the IEEE total order XLA's top-k uses (-NaN < -inf < ... < -0.0
    < 0.0 < ... < inf < NaN)."""
    d = x.dtype
    if d.kind == "b":
        return E.cast(x, dtypes.int32)
    if d.kind in "iu":
        return x
    wide = E.cast(x, dtypes.float32) if d.itemsize < 4 else x
    canon = wide
    if not total:
        zero = E.const(0.0, wide.dtype)
        canon = E.where(E.binary(Op.CMPEQ, wide, zero), zero, wide)  # -0.0 -> 0.0
        nan = E.const(math.nan, wide.dtype)
        canon = E.where(E.binary(Op.CMPNE, wide, wide), nan, canon)  # every NaN -> +NaN
    it = dtypes.int64 if wide.dtype.itemsize == 8 else dtypes.int32
    bits = E.bitcast(canon, it)
    sign_mask = E.const(2 ** (it.bits - 1) - 1, it)
    flip = E.binary(Op.AND, E.binary(Op.SHR, bits, E.const(it.bits - 1, it)), sign_mask)
    return E.binary(Op.XOR, bits, flip)


# Rows longer than this sort with a bitonic network: log2(N)(log2(N)+1)/2 compare-exchange passes
# over rows padded to N = 2^k, each pass one elementwise kernel per state array, O(N log^2 N)
# work. The state is the keys (in sort order, `_key`) plus each element's position in its row,
# which breaks ties (so the network is stable) and ends as the permutation.
BITONIC_MIN = 128


def _key_max(d: Any) -> Exp:
    if d.kind == "u":
        return E.const(2**d.bits - 1, d)
    return E.const(2 ** (d.bits - 1) - 1, d)


def bitonic_source(
    keys: list[Exp],
    aval: ShapedArray,
    dim: int,
    device: Any,
    descending: bool = False,
    total: bool = False,
) -> tuple[Exp, int]:
    """The sorted rows' source positions, laid out (rows, N): flat r * N + j holds the position
    in row r of the element that sorts j-th."""
    n = aval.shape[dim]
    big = 1 << (n - 1).bit_length()
    rows = aval.size // n
    size = rows * big
    other = tuple(s for a, s in enumerate(aval.shape) if a != dim)
    flat = E.idx(size)
    p = E.binary(Op.AND, flat, E.i32(big - 1))
    o = view.unravel(E.idiv(flat, big), other)
    o.insert(dim, E.binary(Op.MIN, p, E.i32(n - 1)))
    at = view.ravel(o, aval.shape)
    valid = E.binary(Op.CMPLT, p, E.i32(n))
    state = []
    for key in keys:
        kk = sort_key(view.reindex(key, aval.size, at), total)
        if descending:  # bitwise not reverses the order of signed and unsigned keys alike
            kk = E.unary(Op.NOT, kk)
        state.append(E.where(valid, kk, _key_max(kk.dtype)))
    state.append(p)

    def buffer(e: Exp) -> Exp:
        return lazy.load_all(lazy.as_buffer(e, size, device))

    state = [buffer(e) for e in state]
    stages = big.bit_length() - 1
    for k in range(1, stages + 1):
        for j in reversed(range(k)):
            partner = E.binary(Op.XOR, flat, E.i32(1 << j))
            other_state = [view.reindex(e, size, partner) for e in state]
            less = E.binary(Op.CMPLT, state[-1], other_state[-1])
            for a, b in zip(reversed(state[:-1]), reversed(other_state[:-1]), strict=True):
                tie = E.binary(Op.AND, E.binary(Op.CMPEQ, a, b), less)
                less = E.binary(Op.OR, E.binary(Op.CMPLT, a, b), tie)
            # keep my element iff (upper half of the pair) xor (descending block) xor (I am less)
            bits = E.binary(Op.XOR, E.binary(Op.SHR, p, E.i32(j)), E.binary(Op.SHR, p, E.i32(k)))
            flip = E.binary(Op.CMPNE, E.binary(Op.AND, bits, E.i32(1)), E.i32(0))
            keep = E.binary(Op.CMPNE, flip, less)
            state = [buffer(E.where(keep, a, b)) for a, b in zip(state, other_state, strict=True)]
    return state[-1], big


def bitonic_first(
    src: Exp, aval: ShapedArray, dim: int, big: int, k_size: int
) -> tuple[Exp, ShapedArray]:
    """The first `k_size` sorted positions of each row, in `aval`'s layout along `dim`."""
    n = aval.shape[dim]
    other = tuple(s for a, s in enumerate(aval.shape) if a != dim)
    out_shape = tuple(k_size if a == dim else s for a, s in enumerate(aval.shape))
    out_aval = ShapedArray(out_shape, dtypes.int32)
    o = view.unravel(E.idx(out_aval.size), out_shape)
    row = view.ravel([x for a, x in enumerate(o) if a != dim], other)
    at = E.add(E.mul(row, big), o[dim])
    return view.reindex(src, (aval.size // n) * big, at), out_aval
