"""ONNX sequences (Python lists of arrays) and optionals (a value or None)."""

from __future__ import annotations

import itertools
from typing import Any

from webjax._src import numpy as jnp
from webjax._src.onnx import host
from webjax._src.onnx.ops.common import Node, dev, norm_axis, scalar_int, static, xp
from webjax._src.onnx.registry import op


@op("SequenceConstruct")
def sequence_construct(node: Node, *xs: Any) -> Any:
    return list(xs)


@op("SequenceEmpty")
def sequence_empty(node: Node) -> Any:
    return []


@op("SequenceLength")
def sequence_length(node: Node, seq: list) -> Any:
    return host.full((), len(seq), host.int64)


@op("SequenceAt")
def sequence_at(node: Node, seq: list, pos: Any) -> Any:
    return seq[scalar_int(node, pos, "position")]


@op("SequenceInsert")
def sequence_insert(node: Node, seq: list, x: Any, pos: Any = None) -> Any:
    out = list(seq)
    if pos is None:
        out.append(x)
    else:
        p = scalar_int(node, pos, "position")
        out.insert(p if p >= 0 else p + len(seq), x)
    return out


@op("SequenceErase")
def sequence_erase(node: Node, seq: list, pos: Any = None) -> Any:
    out = list(seq)
    del out[-1 if pos is None else scalar_int(node, pos, "position")]
    return out


@op("ConcatFromSequence")
def concat_from_sequence(node: Node, seq: list) -> Any:
    axis = node.attr("axis")
    m = xp(*seq)
    if m is jnp:
        seq = [dev(x) for x in seq]
    if node.attr("new_axis", 0):
        return m.stack(seq, axis=norm_axis(axis, len(seq[0].shape) + 1))
    return m.concatenate(seq, axis=norm_axis(axis, len(seq[0].shape)))


@op("SplitToSequence")
def split_to_sequence(node: Node, x: Any, split: Any = None) -> Any:
    axis = norm_axis(node.attr("axis", 0), len(x.shape))
    x = dev(x)
    dim = x.shape[axis]
    if split is None:
        parts = [jnp.take(x, jnp.arange(i, i + 1), axis=axis) for i in range(dim)]
        if not node.attr("keepdims", 1):
            parts = [jnp.squeeze(p, axis) for p in parts]
        return parts
    s = static(node, split, "split")
    if s.ndim == 0:
        n = int(s.data[0])
        sizes = [min(n, dim - i) for i in range(0, dim, n)]
    else:
        sizes = [int(v) for v in s.data]
    bounds = list(itertools.accumulate([0, *sizes]))
    return [jnp.take(x, jnp.arange(lo, hi), axis=axis) for lo, hi in itertools.pairwise(bounds)]


@op("SequenceMap")
def sequence_map(node: Node, seq: list, *extra: Any) -> Any:
    body = node.attr("body")
    outs: list[list[Any]] = [[] for _ in body.outputs]
    for i, x in enumerate(seq):
        args = [x, *[e[i] if isinstance(e, list) else e for e in extra]]
        for j, y in enumerate(node.run_graph(body, args)):
            outs[j].append(y)
    return tuple(outs)


@op("Optional")
def optional(node: Node, x: Any = None) -> Any:
    return x


@op("OptionalHasElement")
def optional_has_element(node: Node, x: Any = None) -> Any:
    return host.full((), x is not None, host.bool_)


@op("OptionalGetElement")
def optional_get_element(node: Node, x: Any) -> Any:
    if x is None:
        raise ValueError("webjax.onnx: OptionalGetElement of an empty optional")
    return x
