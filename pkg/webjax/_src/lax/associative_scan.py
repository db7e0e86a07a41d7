"""associative_scan: the parallel prefix scan of an associative function (odd/even
recursion, O(log n) depth), written on slices, pads and selects; no primitive of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes
from ..tree_util import tree_flatten, tree_unflatten
from . import lax
from .lax import _arr, _aval, _axis
from .slicing import slice_in_dim


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """[a0, b0, a1, b1, ...] along `axis` (len(a) == len(b) or len(b) + 1)."""
    shape = _aval(a).shape
    na, nb = shape[axis], _aval(b).shape[axis]
    n = na + nb
    dt = _aval(a).dtype
    zero = lax.full((), 0, dt)
    cfg_a = [(0, 0, 0)] * len(shape)
    cfg_b = [(0, 0, 0)] * len(shape)
    cfg_a[axis] = (0, n - (2 * na - 1), 1)
    cfg_b[axis] = (1, n - 2 * nb, 1)
    pa, pb = lax.pad(a, zero, cfg_a), lax.pad(b, zero, cfg_b)
    out_shape = _aval(pa).shape
    even = lax.eq(
        lax.rem(lax.broadcasted_iota(dtypes.int32, out_shape, axis), lax.full((), 2, dtypes.int32)),
        lax.full((), 0, dtypes.int32),
    )
    return lax.select(even, pa, pb)


def associative_scan(
    fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """Inclusive prefix scan of the associative `fn` along `axis` (parallel odd/even
    recursion: O(log n) depth), over a pytree of arrays with equal lengths along `axis`."""
    flat, tree = tree_flatten(elems)
    flat = [_arr(x) for x in flat]
    if not flat:
        return elems
    nd = _aval(flat[0]).ndim
    axis = _axis(axis, nd)
    n = _aval(flat[0]).shape[axis]
    if any(_aval(x).ndim <= axis or _aval(x).shape[axis] != n for x in flat):
        raise ValueError(
            "Array inputs to associative_scan must have the same first dimension. (saw: "
            f"{[_aval(x).shape for x in flat]})"
        )
    if reverse:
        flat = [lax.rev(x, (axis,)) for x in flat]

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(
                f"associative_scan: fn must return the structure of its inputs ({tree}), got "
                f"{out_tree}"
            )
        return [_arr(o) for o in out]

    def sl(xs: list[Any], lo: int, hi: int | None, stride: int = 1) -> list[Any]:
        return [slice_in_dim(x, lo, hi, stride, axis) for x in xs]

    def scan(xs: list[Any]) -> list[Any]:
        m = _aval(xs[0]).shape[axis]
        if m < 2:
            return xs
        pairs = combine(sl(xs, 0, m - 1, 2), sl(xs, 1, None, 2))  # x0+x1, x2+x3, ...
        odd = scan(pairs)  # prefixes ending at 1, 3, 5, ...
        if m % 2 == 0:
            even = combine(sl(odd, 0, _aval(odd[0]).shape[axis] - 1), sl(xs, 2, None, 2))
        else:
            even = combine(odd, sl(xs, 2, None, 2))
        even = [
            lax.concatenate([slice_in_dim(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, even)
        ]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(flat)
    if reverse:
        out = [lax.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)
