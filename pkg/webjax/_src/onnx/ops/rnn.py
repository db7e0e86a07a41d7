"""Recurrent layers: RNN, GRU, LSTM (forward, reverse, bidirectional; layouts 0 and 1),
unrolled over the static sequence length."""

from __future__ import annotations

from typing import Any

from webjax._src import numpy as jnp
from webjax._src.nn import functions as jnn
from webjax._src.onnx.ops.common import Node, dev, static
from webjax._src.onnx.registry import op

_DEFAULT_ACTIVATIONS = {
    "RNN": ["Tanh"],
    "GRU": ["Sigmoid", "Tanh"],
    "LSTM": ["Sigmoid", "Tanh", "Tanh"],
}


def _activation(node: Node, name: str, alpha: float | None, beta: float | None) -> Any:
    n = name.lower()
    if n == "tanh":
        return jnp.tanh
    if n == "sigmoid":
        return jnn.sigmoid
    if n == "relu":
        return jnn.relu
    if n == "hardsigmoid":
        a, b = 0.2 if alpha is None else alpha, 0.5 if beta is None else beta
        return lambda x: jnp.clip(a * x + b, 0, 1)
    if n == "leakyrelu":
        a = 0.01 if alpha is None else alpha
        return lambda x: jnp.where(x >= 0, x, a * x)
    if n == "elu":
        a = 1.0 if alpha is None else alpha
        return lambda x: jnp.where(x > 0, x, a * jnp.expm1(jnp.minimum(x, 0)))
    if n == "softsign":
        return lambda x: x / (1 + jnp.abs(x))
    if n == "softplus":
        return lambda x: jnp.logaddexp(x, 0.0)
    if n == "affine":
        return lambda x: alpha * x + beta
    if n == "scaledtanh":
        return lambda x: alpha * jnp.tanh(beta * x)
    raise node.unsupported(f"activation {name!r}")


def _activations(node: Node, n_dirs: int) -> list[list[Any]]:
    names = node.attr("activations", None)
    per = len(_DEFAULT_ACTIVATIONS[node.op_type])
    if names is None:
        names = _DEFAULT_ACTIVATIONS[node.op_type] * n_dirs
    alphas = node.attr("activation_alpha", [])
    betas = node.attr("activation_beta", [])
    fns = []
    for i, name in enumerate(names):
        a = alphas[i] if i < len(alphas) else None
        b = betas[i] if i < len(betas) else None
        fns.append(_activation(node, name, a, b))
    return [fns[d * per : (d + 1) * per] for d in range(n_dirs)]


def _recurrent(
    node: Node, x: Any, w: Any, r: Any, b: Any, seq_lens: Any, h0: Any, c0: Any, p: Any
) -> Any:
    kind = node.op_type
    direction = node.attr("direction", "forward")
    n_dirs = 2 if direction == "bidirectional" else 1
    layout = node.attr("layout", 0)
    x = dev(x)
    if layout:
        x = jnp.swapaxes(x, 0, 1)
    seq, batch = x.shape[:2]
    if seq_lens is not None and any(v != seq for v in static(node, seq_lens, "sequence_lens").data):
        raise node.unsupported("sequence_lens shorter than the sequence")
    w, r = dev(w), dev(r)
    hidden = r.shape[-1]
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    b = jnp.zeros((n_dirs, 2 * gates * hidden), x.dtype) if b is None else dev(b)
    h_init = jnp.zeros((n_dirs, batch, hidden), x.dtype) if h0 is None else dev(h0)
    c_init = jnp.zeros((n_dirs, batch, hidden), x.dtype) if c0 is None else dev(c0)
    if layout:
        h_init = jnp.swapaxes(h_init, 0, 1) if h0 is not None else h_init
        c_init = jnp.swapaxes(c_init, 0, 1) if c0 is not None else c_init
    peep = jnp.zeros((n_dirs, 3 * hidden), x.dtype) if p is None else dev(p)
    clip = node.attr("clip", None)
    acts = _activations(node, n_dirs)
    ys, hs, cs = [], [], []
    for d in range(n_dirs):
        reverse = direction == "reverse" or d == 1
        wd, rd, bd = w[d], r[d], b[d]
        wb, rb = bd[: gates * hidden], bd[gates * hidden :]
        h, c = h_init[d], c_init[d]
        f, g, hact = (acts[d] + [None, None])[:3]
        outs = []
        steps = range(seq - 1, -1, -1) if reverse else range(seq)
        for t in steps:
            xw = x[t] @ wd.T + wb
            if kind == "RNN":
                pre = xw + h @ rd.T + rb
                h = f(jnp.clip(pre, -clip, clip) if clip else pre)
            elif kind == "GRU":
                xz, xr, xh = jnp.split(xw, 3, axis=-1)
                rz, rr, rh = jnp.split(rd, 3, axis=0)
                bz, br, bh = jnp.split(rb, 3)
                cl = (lambda v: jnp.clip(v, -clip, clip)) if clip else (lambda v: v)
                z = f(cl(xz + h @ rz.T + bz))
                rg = f(cl(xr + h @ rr.T + br))
                if node.attr("linear_before_reset", 0):
                    hh = g(cl(xh + rg * (h @ rh.T + bh)))
                else:
                    hh = g(cl(xh + (rg * h) @ rh.T + bh))
                h = (1 - z) * hh + z * h
            else:
                pre = xw + h @ rd.T + rb
                if clip:
                    pre = jnp.clip(pre, -clip, clip)
                pi, po, pf, pc = jnp.split(pre, 4, axis=-1)
                pvi, pvo, pvf = jnp.split(peep[d], 3)
                i_g = f(pi + pvi * c)
                f_g = f(pf + pvf * c)
                c_new = f_g * c + i_g * g(pc)
                if node.attr("input_forget", 0):
                    raise node.unsupported("input_forget=1")
                o_g = f(po + pvo * c_new)
                c = c_new
                h = o_g * hact(c)
            outs.append(h)
        if reverse:
            outs = outs[::-1]
        ys.append(jnp.stack(outs))
        hs.append(h)
        cs.append(c)
    y = jnp.stack(ys, axis=1)  # [seq, dirs, batch, hidden]
    y_h, y_c = jnp.stack(hs), jnp.stack(cs)
    if layout:
        y = jnp.transpose(y, (2, 0, 1, 3))
        y_h, y_c = jnp.swapaxes(y_h, 0, 1), jnp.swapaxes(y_c, 0, 1)
    return (y, y_h, y_c) if kind == "LSTM" else (y, y_h)


@op("RNN", "GRU")
def rnn(
    node: Node, x: Any, w: Any, r: Any, b: Any = None, seq_lens: Any = None, h0: Any = None
) -> Any:
    return _recurrent(node, x, w, r, b, seq_lens, h0, None, None)


@op("LSTM")
def lstm(
    node: Node,
    x: Any,
    w: Any,
    r: Any,
    b: Any = None,
    seq_lens: Any = None,
    h0: Any = None,
    c0: Any = None,
    p: Any = None,
) -> Any:
    return _recurrent(node, x, w, r, b, seq_lens, h0, c0, p)
