"""Reductions: Reduce*, ArgMax/ArgMin, CumSum, TopK, Softmax/LogSoftmax/Hardmax."""

from __future__ import annotations

import math
from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.lax.sorting import top_k
from webjax._src.nn import functions as jnn
from webjax._src.onnx import host
from webjax._src.onnx.ops.common import Node, axis_list, dev, norm_axis, scalar_int, xp
from webjax._src.onnx.registry import op

# the opset from which each Reduce* takes its axes as an input instead of an attribute
_AXES_INPUT_SINCE = {"ReduceSum": 13}


def _reduce(name: str, combine: Any) -> None:
    def impl(node: Node, x: Any, axes_in: Any = None) -> Any:
        since = _AXES_INPUT_SINCE.get(name, 18)
        axes = axis_list(node, axes_in) if node.opset >= since else node.attr("axes", None)
        keepdims = bool(node.attr("keepdims", 1))
        m = xp(x)
        if m is jnp:
            x = dev(x)
        if not axes:
            if node.attr("noop_with_empty_axes", 0):
                return x
            axes = list(range(len(x.shape)))
        ax = tuple(norm_axis(a, len(x.shape)) for a in axes)
        return combine(m, x, ax, keepdims)

    op(name)(impl)


def _empty_guard(m: Any, x: Any, ax: tuple, keepdims: bool, fn: str, identity: Any) -> Any:
    if any(x.shape[a] == 0 for a in ax):
        shape = tuple((1 if keepdims else None) if i in ax else d for i, d in enumerate(x.shape))
        return m.full(tuple(d for d in shape if d is not None), identity, dtype=x.dtype)
    return getattr(m, fn)(x, axis=ax, keepdims=keepdims)


def _extreme_identity(x: Any, largest: bool) -> Any:
    d = x.dtype
    if d.kind == "f":
        return -math.inf if largest else math.inf
    if d == dtypes.bool_:
        return not largest
    lo, hi = dtypes.iinfo_bounds(d)
    return lo if largest else hi


def _logsumexp(m: Any, x: Any, ax: tuple, k: bool) -> Any:
    if m is host:
        return host.log(host.sum(host.exp(x), axis=ax, keepdims=k))
    big = jnp.max(x, axis=ax, keepdims=True)
    big = jnp.where(jnp.isfinite(big), big, jnp.zeros_like(big))
    out = jnp.log(jnp.sum(jnp.exp(x - big), axis=ax, keepdims=True)) + big
    return out if k else jnp.squeeze(out, ax)


_reduce("ReduceSum", lambda m, x, ax, k: m.sum(x, axis=ax, keepdims=k).astype(x.dtype))
_reduce("ReduceMean", lambda m, x, ax, k: m.mean(x, axis=ax, keepdims=k).astype(x.dtype))
_reduce("ReduceProd", lambda m, x, ax, k: m.prod(x, axis=ax, keepdims=k).astype(x.dtype))
_reduce(
    "ReduceMax", lambda m, x, ax, k: _empty_guard(m, x, ax, k, "max", _extreme_identity(x, True))
)
_reduce(
    "ReduceMin", lambda m, x, ax, k: _empty_guard(m, x, ax, k, "min", _extreme_identity(x, False))
)
_reduce("ReduceL1", lambda m, x, ax, k: m.sum(m.abs(x), axis=ax, keepdims=k).astype(x.dtype))
_reduce(
    "ReduceL2",
    lambda m, x, ax, k: m.sqrt(m.sum(x * x, axis=ax, keepdims=k)).astype(x.dtype),
)
_reduce("ReduceSumSquare", lambda m, x, ax, k: m.sum(x * x, axis=ax, keepdims=k).astype(x.dtype))
_reduce("ReduceLogSum", lambda m, x, ax, k: m.log(m.sum(x, axis=ax, keepdims=k)).astype(x.dtype))
_reduce("ReduceLogSumExp", lambda m, x, ax, k: _logsumexp(m, x, ax, k).astype(x.dtype))


def _arg(name: str, largest: bool) -> None:
    def impl(node: Node, x: Any) -> Any:
        axis = norm_axis(node.attr("axis", 0), len(x.shape))
        keepdims = bool(node.attr("keepdims", 1))
        m = xp(x)
        if m is jnp:
            x = dev(x)
        if node.attr("select_last_index", 0):
            flipped = m.flip(x, axis)
            idx = (m.argmax if largest else m.argmin)(flipped, axis=axis)
            idx = x.shape[axis] - 1 - idx
        else:
            idx = (m.argmax if largest else m.argmin)(x, axis=axis)
        if keepdims:
            idx = m.expand_dims(idx, axis)
        return idx

    op(name)(impl)


_arg("ArgMax", True)
_arg("ArgMin", False)


@op("CumSum")
def cumsum(node: Node, x: Any, axis: Any) -> Any:
    ax = norm_axis(scalar_int(node, axis, "axis"), len(x.shape))
    m = xp(x)
    if m is jnp:
        x = dev(x)
    exclusive, reverse = node.attr("exclusive", 0), node.attr("reverse", 0)
    if reverse:
        x = m.flip(x, ax)
    out = m.cumsum(x, axis=ax).astype(x.dtype)
    if exclusive:
        out = out - x
    if reverse:
        out = m.flip(out, ax)
    return out


@op("TopK")
def topk(node: Node, x: Any, k: Any) -> Any:
    if node.opset < 10:
        kk = node.attr("k")
    else:
        kk = scalar_int(node, k, "k")
    axis = norm_axis(node.attr("axis", -1), len(x.shape))
    largest = node.attr("largest", 1)
    x = dev(x)
    moved = jnp.moveaxis(x, axis, -1)
    key = moved if largest else -moved
    if not largest and x.dtype.kind != "f":
        key = ~moved if x.dtype.kind == "i" else -moved.astype(dtypes.int32)
    _, idx = top_k(key, kk)
    vals = jnp.take_along_axis(moved, idx, axis=-1)
    return jnp.moveaxis(vals, -1, axis), jnp.moveaxis(idx, -1, axis)


def _softmax_like(node: Node, x: Any, fn: Any) -> Any:
    x = dev(x)
    rank = x.ndim
    if node.opset < 13:  # the input is coerced to 2-D at axis
        axis = norm_axis(node.attr("axis", 1), rank)
        shape = x.shape
        flat = jnp.reshape(x, (math.prod(shape[:axis]), -1))
        return jnp.reshape(fn(flat, 1), shape)
    return fn(x, norm_axis(node.attr("axis", -1), rank))


@op("Softmax")
def softmax(node: Node, x: Any) -> Any:
    return _softmax_like(node, x, lambda v, a: jnn.softmax(v, axis=a))


@op("LogSoftmax")
def log_softmax(node: Node, x: Any) -> Any:
    return _softmax_like(node, x, lambda v, a: jnn.log_softmax(v, axis=a))


@op("Hardmax")
def hardmax(node: Node, x: Any) -> Any:
    def hard(v: Any, a: int) -> Any:
        idx = jnp.argmax(v, axis=a)
        return jnn.one_hot(idx, v.shape[a], axis=a, dtype=v.dtype)

    return _softmax_like(node, x, hard)


@op("CumProd")
def cumprod(node: Node, x: Any, axis: Any) -> Any:
    ax = norm_axis(scalar_int(node, axis, "axis"), len(x.shape))
    m = xp(x)
    if m is jnp:
        x = dev(x)
    exclusive, reverse = node.attr("exclusive", 0), node.attr("reverse", 0)
    if reverse:
        x = m.flip(x, ax)
    if exclusive:  # shift by one along the axis, a 1 in front
        ones = m.ones_like(x[_first(x, ax)])
        x = m.concatenate([ones, m.take(x, m.arange(x.shape[ax] - 1), axis=ax)], axis=ax)
    out = m.cumprod(x, axis=ax).astype(x.dtype)
    if reverse:
        out = m.flip(out, ax)
    return out


def _first(x: Any, axis: int) -> tuple:
    return tuple(slice(0, 1) if i == axis else slice(None) for i in range(len(x.shape)))
