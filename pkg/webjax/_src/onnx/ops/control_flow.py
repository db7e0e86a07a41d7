"""Control flow: If (branch picked at trace time when the condition is known, lax.cond
otherwise), Loop (unrolled while its trip count and condition are known, lax.while_loop when the
condition is traced and there are no scan outputs), Scan (over the static scan length)."""

from __future__ import annotations

from typing import Any

from webjax._src import core, dtypes
from webjax._src import numpy as jnp
from webjax._src.lax.control_flow import cond, while_loop
from webjax._src.onnx import host
from webjax._src.onnx.ops.common import Node, dev, norm_axis
from webjax._src.onnx.registry import op, static


def _known(v: Any) -> bool:
    return not isinstance(v, core.Tracer)


@op("If")
def if_op(node: Node, condition: Any) -> Any:
    then_g, else_g = node.attr("then_branch"), node.attr("else_branch")
    if _known(condition):
        taken = then_g if bool(static(node, condition, "cond").data[0]) else else_g
        return tuple(node.run_graph(taken, []))

    def branch(g: Any) -> Any:
        return lambda: tuple(_device_tree(v) for v in node.run_graph(g, []))

    return cond(jnp.reshape(condition, ()), branch(then_g), branch(else_g))


def _device_tree(v: Any) -> Any:
    """A value as branch output: sequences stay lists, an empty optional None."""
    if isinstance(v, list):
        return [_device_tree(x) for x in v]
    return None if v is None else dev(v)


@op("Loop")
def loop(node: Node, max_trip: Any = None, condition: Any = None, *carried: Any) -> Any:
    body = node.attr("body")
    n_carried = len(carried)
    n_scan = len(body.outputs) - 1 - n_carried
    keep_going: Any = True if condition is None else condition
    if max_trip is not None and not _known(max_trip):  # a traced trip count
        if n_scan:
            raise node.unsupported("scan outputs with a traced trip count")
        return _while(node, body, max_trip, 0, keep_going, list(carried))
    trip = None if max_trip is None else int(static(node, max_trip, "M").data[0])
    scans: list[list[Any]] = []
    state = list(carried)
    i = 0
    while True:
        if trip is not None and i >= trip:
            break
        if not _known(keep_going):
            if scans and any(scans):
                raise node.unsupported("scan outputs under a traced loop condition")
            return _while(node, body, trip, i, keep_going, state)
        if not bool(static(node, keep_going, "cond").data[0]):
            break
        iteration = host.full((), i, host.int64)
        outs = node.run_graph(body, [iteration, host.full((), True, host.bool_), *state])
        keep_going = outs[0]
        state = list(outs[1 : 1 + n_carried])
        scans.append(list(outs[1 + n_carried :]))
        i += 1
    stacked = []
    for j in range(n_scan):
        if scans:
            stacked.append(jnp.stack([dev(s[j]) for s in scans]))
        else:
            stacked.append(jnp.zeros((0,), dtypes.float32))
    return (*state, *stacked)


def _while(node: Node, body: Any, trip: Any, start: int, go0: Any, state: list) -> Any:
    n = len(state)

    def keep(c: Any) -> Any:
        i, go, *_ = c
        ok = jnp.reshape(go, ()).astype(bool)
        return ok if trip is None else jnp.logical_and(ok, i < trip)

    def step(c: Any) -> Any:
        i, go, *vals = c
        outs = node.run_graph(body, [i.astype(dtypes.int32), go, *vals])
        return (
            i + 1,
            jnp.reshape(dev(outs[0]), ()).astype(bool),
            *[dev(v) for v in outs[1 : 1 + n]],
        )

    init = (jnp.asarray(start), jnp.reshape(dev(go0), ()).astype(bool), *[dev(s) for s in state])
    out = while_loop(keep, step, init)
    return tuple(out[2:])


@op("Scan")
def scan(node: Node, *inputs: Any) -> Any:
    body = node.attr("body")
    n_scan_in = node.attr("num_scan_inputs")
    if node.opset < 9:
        raise node.unsupported("the opset-8 form (sequence_lens and batch axis)")
    n_state = len(inputs) - n_scan_in
    state = list(inputs[:n_state])
    xs = [dev(x) for x in inputs[n_state:]]
    in_axes = node.attr("scan_input_axes", [0] * n_scan_in)
    in_dirs = node.attr("scan_input_directions", [0] * n_scan_in)
    xs = [jnp.moveaxis(x, norm_axis(a, x.ndim), 0) for x, a in zip(xs, in_axes)]
    xs = [jnp.flip(x, 0) if d else x for x, d in zip(xs, in_dirs)]
    length = xs[0].shape[0] if xs else 0
    n_out = len(body.outputs) - n_state
    ys: list[list[Any]] = [[] for _ in range(n_out)]
    for t in range(length):
        outs = node.run_graph(body, [*state, *[x[t] for x in xs]])
        state = list(outs[:n_state])
        for j in range(n_out):
            ys[j].append(dev(outs[n_state + j]))
    out_axes = node.attr("scan_output_axes", [0] * n_out)
    out_dirs = node.attr("scan_output_directions", [0] * n_out)
    stacked = []
    for j in range(n_out):
        y = jnp.stack(ys[j])
        if out_dirs[j]:
            y = jnp.flip(y, 0)
        stacked.append(jnp.moveaxis(y, 0, norm_axis(out_axes[j], y.ndim)))
    return (*state, *stacked)
