"""jnp.pad: constant, edge, reflect, symmetric, wrap, linear_ramp, maximum/minimum/mean modes.

Constant padding is one lax.pad. The other modes build each side from slices of the array
(reversed for reflect/symmetric) and concatenate, one axis at a time; widths larger than the
array are handled by repeating the step on the grown array, which is NumPy's rule.
"""

from __future__ import annotations

import operator
from typing import Any

from .. import core, dtypes
from ..lax import lax
from . import reductions, sorting, ufuncs, util


def _pad_widths(pad_width: Any, nd: int) -> list[tuple[int, int]]:
    pw = core.to_concrete(pad_width)
    if hasattr(pw, "tolist"):
        pw = pw.tolist()
    if isinstance(pw, int) or hasattr(pw, "__index__"):
        pw = [[operator.index(pw)] * 2]
    if not any(isinstance(p, (list, tuple)) for p in pw):
        pw = [list(pw)]  # (before, after) or (both,) for every axis
    pw = [list(p) if isinstance(p, (list, tuple)) else [p] for p in pw]
    if len(pw) == 1:
        pw = pw * nd
    if len(pw) != nd:
        raise ValueError(
            f"jnp.pad: pad_width with nd={len(pw)} has unsupported shape; expected 1 or {nd}."
        )
    out = []
    for p in pw:
        lo, hi = (p[0], p[0]) if len(p) == 1 else (p[0], p[1])
        lo, hi = operator.index(lo), operator.index(hi)
        if lo < 0 or hi < 0:
            raise ValueError("index can't contain negative values")
        out.append((lo, hi))
    return out


def _per_axis(values: Any, nd: int) -> list[tuple[Any, Any]]:
    v = core.to_concrete(values)
    if hasattr(v, "tolist"):
        v = v.tolist()
    if not isinstance(v, (list, tuple)):
        return [(v, v)] * nd
    if not any(isinstance(p, (list, tuple)) for p in v):
        v = [list(v)]
    v = [list(p) if isinstance(p, (list, tuple)) else [p] for p in v]
    if len(v) == 1:
        v = v * nd
    return [(p[0], p[0]) if len(p) == 1 else (p[0], p[1]) for p in v]


def _range(x: Any, axis: int, start: int, stop: int) -> Any:
    shape = util.aval(x).shape
    lo, hi = [0] * len(shape), list(shape)
    lo[axis], hi[axis] = start, stop
    return lax.slice(x, lo, hi)


def _side(
    x: Any, axis: int, width: int, front: bool, mode: str, stat_len: Any, odd: bool = False
) -> Any:
    """The block of `width` values to attach on one side of `axis` (`odd`: reflections are
    point reflections through the edge value, 2 * edge - mirrored)."""
    n = util.aval(x).shape[axis]
    if mode == "wrap":
        return _range(x, axis, n - width, n) if front else _range(x, axis, 0, width)
    edge = _range(x, axis, 0, 1) if front else _range(x, axis, n - 1, n)
    if mode in ("reflect", "symmetric"):
        if mode == "reflect":
            block = (
                _range(x, axis, 1, width + 1) if front else _range(x, axis, n - 1 - width, n - 1)
            )
        else:
            block = _range(x, axis, 0, width) if front else _range(x, axis, n - width, n)
        block = lax.rev(block, (axis,))
        if odd:
            bshape = util.aval(block).shape
            twice = lax.broadcast_in_dim(lax.add(edge, edge), bshape, tuple(range(len(bshape))))
            block = lax.sub(twice, block)
        return block
    if mode in ("maximum", "minimum", "mean", "median"):
        k = n if stat_len is None else max(1, min(stat_len, n))
        part = _range(x, axis, 0, k) if front else _range(x, axis, n - k, n)
        fn: Any = {
            "maximum": reductions.max,
            "minimum": reductions.min,
            "mean": reductions.mean,
            "median": sorting.median,
        }[mode]
        edge = fn(part, axis=axis, keepdims=True)
        if mode in ("mean", "median") and util.aval(x).dtype.kind not in "fc":
            edge = util.convert(ufuncs.round(edge), util.aval(x).dtype)
    shape = list(util.aval(x).shape)
    shape[axis] = width
    return lax.broadcast_in_dim(edge, shape, tuple(range(len(shape))))


def _chunk(n: int, mode: str) -> int:
    """The largest width one step of a mode can produce from an axis of length n."""
    return n - 1 if mode == "reflect" else n


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    util.check_arraylike("pad", array)
    x = util.ensure_array(array)
    av = util.aval(x)
    widths = _pad_widths(pad_width, av.ndim)
    if callable(mode):
        raise NotImplementedError("jnp.pad with a callable mode is not supported")
    if mode == "constant":
        return _pad_constant(x, widths, kwargs.get("constant_values", 0))
    if mode == "empty":
        return _pad_constant(x, widths, 0)
    if mode == "linear_ramp":
        return _pad_linear_ramp(x, widths, kwargs.get("end_values", 0))
    if mode == "median" and av.dtype.kind == "c":
        raise ValueError(
            "quantile does not support complex input, as the operation is poorly defined."
        )
    stat_modes = ("maximum", "minimum", "mean", "median")
    if mode not in ("edge", "reflect", "symmetric", "wrap", *stat_modes):
        raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad.")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"reflect_type must be 'even' or 'odd'; got {reflect_type!r}")
    odd = reflect_type == "odd"
    stat = _per_axis(kwargs.get("stat_length"), av.ndim)
    for axis, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = av.shape[axis]
        if n == 0:
            raise ValueError(
                f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
            )
        if mode in stat_modes:
            parts = [_side(x, axis, lo, True, mode, stat[axis][0]), x,
                     _side(x, axis, hi, False, mode, stat[axis][1])]  # fmt: skip
            x = lax.concatenate([p for p in parts if util.aval(p).shape[axis]], axis)
            continue
        if mode == "wrap":
            x = _pad_wrap(x, axis, lo, hi)
            continue
        if mode == "reflect" and n == 1:
            mode_here = "edge"
        else:
            mode_here = mode
        # grow by at most one original length per step, so each step reads real data
        for front, total in ((True, lo), (False, hi)):
            while total > 0:
                step = min(total, _chunk(n, mode_here)) if mode_here != "edge" else total
                block = _side(x, axis, step, front, mode_here, None, odd)
                x = lax.concatenate([block, x] if front else [x, block], axis)
                total -= step
    return x


def _pad_wrap(x: Any, axis: int, lo: int, hi: int) -> Any:
    n = util.aval(x).shape[axis]
    reps = -(-lo // n) + 1 + -(-hi // n)  # whole copies covering both sides
    periodic = lax.concatenate([x] * reps, axis)
    start = -(-lo // n) * n - lo
    return _range(periodic, axis, start, start + lo + n + hi)


def _pad_constant(x: Any, widths: list[tuple[int, int]], values: Any) -> Any:
    av = util.aval(x)
    if util.is_scalar(values) or (hasattr(values, "shape") and util.aval(values).ndim == 0):
        fill = (
            util.convert(values, av.dtype)
            if util.is_scalar(values)
            else lax.convert_element_type(util.ensure_array(values), av.dtype)
        )
        return lax.pad(x, fill, [(lo, hi, 0) for lo, hi in widths])
    for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, _per_axis(values, av.ndim))):
        cfg = [(0, 0, 0)] * av.ndim
        cfg[axis] = (lo, 0, 0)
        x = lax.pad(x, util.convert(vlo, av.dtype), cfg)
        cfg[axis] = (0, hi, 0)
        x = lax.pad(x, util.convert(vhi, av.dtype), cfg)
    return x


def _pad_linear_ramp(x: Any, widths: list[tuple[int, int]], end_values: Any) -> Any:
    av = util.aval(x)
    ends = _per_axis(end_values, av.ndim)
    ft = av.dtype if av.dtype.kind in "fc" else dtypes.default_float()
    rt = dtypes.component(ft)  # the ramp positions are real
    for axis, ((lo, hi), (elo, ehi)) in enumerate(zip(widths, ends)):
        parts = []
        n = util.aval(x).shape[axis]
        for front, width, end in ((True, lo, elo), (False, hi, ehi)):
            if not width:
                continue
            edge = util.convert(_range(x, axis, 0, 1) if front else _range(x, axis, n - 1, n), ft)
            shape = list(util.aval(x).shape)
            shape[axis] = width
            # ramp from `end` (outermost) to the edge value, excluding the edge itself
            t = lax.div(lax.broadcasted_iota(rt, shape, axis), lax.full((), width, rt))
            if not front:
                t = lax.sub(lax.full((), 1, rt), lax.add(t, lax.full((), 1 / width, rt)))
            t = util.convert(t, ft)
            e = lax.full((), end, ft)
            edge_b = lax.broadcast_in_dim(edge, shape, tuple(range(len(shape))))
            ramp = lax.add(e, lax.mul(t, lax.sub(edge_b, e)))
            if av.dtype.kind not in "fc":
                ramp = lax.floor(ramp)  # NumPy's integer ramps round down
            parts.append((front, util.convert(ramp, av.dtype)))
        x = lax.concatenate([p for f, p in parts if f] + [x] + [p for f, p in parts if not f], axis)
    return x
