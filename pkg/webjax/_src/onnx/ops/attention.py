"""Transformer-era operators: Attention (opset 23+: GQA, KV cache, causal and sliding-window
masks, softcap, the qk output modes), RotaryEmbedding."""

from __future__ import annotations

import math
from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.onnx.ops.common import Node, cast, const, dev, onnx_dtype, static
from webjax._src.onnx.registry import op


def _heads(x: Any, n: int) -> Any:
    """[batch, seq, n * head] -> [batch, n, seq, head]."""
    b, s, hidden = x.shape
    return jnp.transpose(jnp.reshape(x, (b, s, n, hidden // n)), (0, 2, 1, 3))


@op("Attention")
def attention(
    node: Node,
    q: Any,
    k: Any,
    v: Any,
    mask: Any = None,
    past_k: Any = None,
    past_v: Any = None,
    nonpad: Any = None,
) -> Any:
    q, k, v = dev(q), dev(k), dev(v)
    three_d = q.ndim == 3
    if three_d:
        q = _heads(q, node.attr("q_num_heads"))
        k = _heads(k, node.attr("kv_num_heads"))
        v = _heads(v, node.attr("kv_num_heads"))
    dtype = q.dtype
    scale = node.attr("scale", None)
    if scale is None:
        scale = 1 / math.sqrt(q.shape[3])
    root = const(q, math.sqrt(scale))
    if past_k is not None:
        k = jnp.concatenate([dev(past_k), k], axis=2)
        v = jnp.concatenate([dev(past_v), v], axis=2)
    present_k, present_v = k, v
    s_q, s_kv = q.shape[2], k.shape[2]
    neg = const(q, -math.inf)
    zero = const(q, 0)
    bias: Any = jnp.zeros((s_q, s_kv), dtype)
    if mask is not None:
        mask = dev(mask)
        pad = s_kv - mask.shape[-1]
        if pad > 0:
            fill = False if mask.dtype == dtypes.bool_ else -math.inf
            mask = jnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, pad)], constant_values=fill)
        mask = jnp.where(mask, zero, neg) if mask.dtype == dtypes.bool_ else mask.astype(dtype)
        bias = bias + mask
    left, right = node.attr("left_window_size", -1), node.attr("right_window_size", -1)
    causal = node.attr("is_causal", 0)
    if causal or left >= 0 or right >= 0:
        if past_k is None and nonpad is not None:
            lens = dev(static(node, nonpad, "nonpad_kv_seqlen")).astype(dtypes.int32)
            offset: Any = jnp.reshape(lens, (-1, 1, 1, 1)) - s_q
        else:
            offset = past_k.shape[2] if past_k is not None else 0
        i = jnp.reshape(jnp.arange(s_q), (-1, 1))
        j = jnp.reshape(jnp.arange(s_kv), (1, -1))
        diff = i + offset - j
        allowed = jnp.ones(jnp.shape(diff), dtype=dtypes.bool_)
        if causal:
            allowed = allowed & (diff >= 0)
        if left >= 0:
            allowed = allowed & (diff <= left)
        if right >= 0:
            allowed = allowed & (-diff <= right)
        bias = bias + jnp.where(allowed, zero, neg)
    if nonpad is not None:
        lens = dev(static(node, nonpad, "nonpad_kv_seqlen")).astype(dtypes.int32)
        keep = jnp.reshape(jnp.arange(s_kv), (1, 1, 1, -1)) < jnp.reshape(lens, (-1, 1, 1, 1))
        bias = bias + jnp.where(keep, zero, neg)
    hq, hk = q.shape[1], k.shape[1]
    if hq != hk:
        k = jnp.repeat(k, hq // hk, axis=1)
        v = jnp.repeat(v, hq // hk, axis=1)
    qk = jnp.matmul(q * root, jnp.swapaxes(k * root, 2, 3))
    softcap = node.attr("softcap", 0.0)
    if softcap > 0:
        cap = const(q, softcap)
        qk = jnp.tanh(qk / cap) * cap
    with_bias = qk + bias
    mode = node.attr("qk_matmul_output_mode", 0)
    qk_out = with_bias if mode == 2 else qk
    precision = node.attr("softmax_precision", None)
    logits = cast(with_bias, onnx_dtype(node, precision)) if precision else with_bias
    top = jnp.max(logits, axis=-1, keepdims=True)
    safe = jnp.where(jnp.isneginf(top), jnp.zeros_like(top), top)
    e = jnp.exp(logits - safe)
    total = jnp.sum(e, axis=-1, keepdims=True)
    probs = e / jnp.where(total == 0, jnp.ones_like(total), total)
    masked_rows = jnp.isneginf(
        jnp.max(jnp.broadcast_to(bias, with_bias.shape), axis=-1, keepdims=True)
    )
    probs = jnp.where(masked_rows, jnp.zeros_like(probs), probs)
    if mode == 3:
        qk_out = probs
    y = jnp.matmul(probs.astype(dtype), v)
    if three_d:
        y = jnp.transpose(y, (0, 2, 1, 3))
        y = jnp.reshape(y, (y.shape[0], y.shape[1], -1))
    return y, present_k, present_v, qk_out.astype(dtype)


@op("RotaryEmbedding")
def rotary_embedding(node: Node, x: Any, cos: Any, sin: Any, position_ids: Any = None) -> Any:
    x, cos, sin = dev(x), dev(cos), dev(sin)
    original = x.shape
    if x.ndim == 4:
        x = jnp.transpose(x, (0, 2, 1, 3))
    else:
        n = node.attr("num_heads")
        x = jnp.reshape(x, (x.shape[0], x.shape[1], n, -1))
    dim = node.attr("rotary_embedding_dim", 0) or x.shape[3]
    rot, rest = x[..., :dim], x[..., dim:]
    if position_ids is not None:
        ids = dev(position_ids)
        cos, sin = cos[ids], sin[ids]
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]
    if node.attr("interleaved", 0):
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = jnp.split(rot, 2, axis=-1)
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if node.attr("interleaved", 0):
        rot = jnp.reshape(jnp.stack([real, imag], axis=-1), rot.shape)
    else:
        rot = jnp.concatenate([real, imag], axis=-1)
    out = jnp.concatenate([rot, rest], axis=-1)
    if len(original) == 3:
        return jnp.reshape(out, original)
    return jnp.transpose(out, (0, 2, 1, 3))
