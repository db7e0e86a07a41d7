"""`jax.nn.dot_product_attention`: JAX's XLA implementation (grouped-query heads, bias, boolean
mask, causal, local window and sequence-length masks, softmax in float32).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..jit import eager_jit
from ..lax import lax
from ..numpy import util
from .functions import logsumexp, softmax


def _ensure_4d(t: Any) -> Any:
    t = util.ensure_array(t)
    nd = util.aval(t).ndim
    return lax.reshape(t, (1,) * (4 - nd) + util.aval(t).shape) if nd < 4 else t


def _check(t: Any, shape: Sequence[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    av = util.aval(t)
    if av.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {av.ndim}")
    if dtype is not None and av.dtype is not dtype:
        raise ValueError(f"{name} dtype should be {dtype.name}, but got {av.dtype.name}")
    for want, got in zip(shape, av.shape):
        if want != -1 and got != want:
            raise ValueError(f"{name} shape should be {tuple(shape)}: but got {av.shape}")


def _iota2(t_len: int, s_len: int) -> tuple[Any, Any]:
    i32 = dtypes.int32
    return (
        lax.broadcasted_iota(i32, (t_len, s_len), 0),
        lax.broadcasted_iota(i32, (t_len, s_len), 1),
    )


def _attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any,
    mask: Any,
    is_causal: bool,
    scale: float,
    q_len: Any,
    kv_len: Any,
    window: Any,
    residual: bool,
) -> Any:
    b, t_len, n, h = util.aval(query).shape
    _, s_len, k, _ = util.aval(key).shape
    g = n // k
    qdt = util.aval(query).dtype
    logits_dt = dtypes.result_type((qdt, False), (dtypes.float32, False))[0]
    q5 = lax.reshape(query, (b, t_len, k, g, h))
    # logits[b, k, t, g, s] = sum_h q[b, t, k, g, h] key[b, s, k, h]
    logits = lax.dot_general(
        q5, key, (((4,), (3,)), ((0, 2), (0, 2))), preferred_element_type=logits_dt
    )
    logits = lax.transpose(logits, (0, 1, 3, 2, 4))  # b, k, g, t, s
    logits = lax.reshape(logits, (b, n, t_len, s_len))
    logits = lax.mul(logits, lax.full((), scale, logits_dt))
    shape = (b, n, t_len, s_len)
    if bias is not None:
        logits = lax.convert_element_type(
            lax.add(*util.promote_args("dot_product_attention", logits, bias)), logits_dt
        )
    keep = None
    if mask is not None:
        keep = util.broadcast_to(mask, shape)
    if is_causal or window is not None:
        ti, si = _iota2(t_len, s_len)
        m2 = lax.full((t_len, s_len), True, dtypes.bool_)
        if is_causal:
            m2 = lax.bitwise_and(m2, lax.ge(ti, si))
        if window is not None:
            left, right = window
            i32 = dtypes.int32
            m2 = lax.bitwise_and(m2, lax.le(ti, lax.add(si, lax.full((), left, i32))))
            m2 = lax.bitwise_and(m2, lax.ge(ti, lax.sub(si, lax.full((), right, i32))))
        m4 = lax.broadcast_in_dim(m2, shape, (2, 3))
        keep = m4 if keep is None else lax.bitwise_and(keep, m4)
    if q_len is not None or kv_len is not None:
        ti, si = _iota2(t_len, s_len)
        pm = lax.full((b, t_len, s_len), True, dtypes.bool_)
        if q_len is not None:
            ql = lax.broadcast_in_dim(q_len, (b, t_len, s_len), (0,))
            pm = lax.bitwise_and(
                pm, lax.lt(lax.broadcast_in_dim(ti, (b, t_len, s_len), (1, 2)), ql)
            )
        if kv_len is not None:
            kl = lax.broadcast_in_dim(kv_len, (b, t_len, s_len), (0,))
            pm = lax.bitwise_and(
                pm, lax.lt(lax.broadcast_in_dim(si, (b, t_len, s_len), (1, 2)), kl)
            )
        pm4 = lax.broadcast_in_dim(pm, shape, (0, 2, 3))
        keep = pm4 if keep is None else lax.bitwise_and(keep, pm4)
    if keep is not None:
        big = min(_finfo_max(logits_dt), _finfo_max(dtypes.float32))
        logits = lax.select(keep, logits, lax.full(shape, -0.7 * big, logits_dt))
    padded = lax.convert_element_type(logits, dtypes.float32)
    probs = lax.convert_element_type(softmax(padded, axis=-1), util.aval(key).dtype)
    # encoded[b, k, g, t, h] = sum_s probs[b, k, g, t, s] value[b, s, k, h]
    p5 = lax.reshape(probs, (b, k, g, t_len, s_len))
    enc = lax.dot_general(p5, value, (((4,), (1,)), ((0, 1), (0, 2))))  # b, k, g, t, h
    enc = lax.reshape(lax.transpose(enc, (0, 3, 1, 2, 4)), (b, t_len, n, h))
    if q_len is not None:
        ti = lax.broadcasted_iota(dtypes.int32, (b, t_len), 1)
        qm = lax.lt(ti, lax.broadcast_in_dim(q_len, (b, t_len), (0,)))
        qm = lax.convert_element_type(
            lax.broadcast_in_dim(qm, (b, t_len, n, h), (0, 1)), util.aval(enc).dtype
        )
        enc = lax.mul(enc, qm)
    if not residual:
        return enc
    lse = lax.convert_element_type(logsumexp(padded, axis=-1), util.aval(key).dtype)
    return enc, lax.stop_gradient(lax.transpose(lse, (0, 2, 1)))


def _finfo_max(dt: Any) -> float:
    return {
        16: 65504.0 if dt.name == "float16" else 3.3895313892515355e38,
        32: 3.4028234663852886e38,
        64: 1.7976931348623157e308,
    }[dt.bits]


def dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any = None,
    mask: Any = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: Any = None,
    key_value_seq_lengths: Any = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
) -> Any:
    """softmax(Q K^T * scale + bias, masked) V per head, for query (B)TNH and key/value (B)SKH
    (K key/value heads shared by N / K query heads each: MHA, GQA, MQA)."""
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            # JAX on a host without cuDNN raises RuntimeError; webjax never has it
            raise RuntimeError(
                "cuDNN is not detected: dot_product_attention(implementation='cudnn') needs "
                "cuDNN; webjax has the 'xla' implementation only"
            )
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = util.aval(util.ensure_array(query)).shape
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    b4 = _ensure_4d(bias) if bias is not None else None
    m4 = _ensure_4d(mask) if mask is not None else None
    ql = util.ensure_array(query_seq_lengths) if query_seq_lengths is not None else None
    kl = util.ensure_array(key_value_seq_lengths) if key_value_seq_lengths is not None else None
    window = (
        (local_window_size, local_window_size)
        if isinstance(local_window_size, int)
        else (tuple(local_window_size) if local_window_size is not None else None)
    )
    bb, s_len, kh, h = util.aval(k).shape
    kdt = util.aval(k).dtype
    _check(v, [bb, s_len, kh, h], kdt, "value")
    _check(q, [bb, -1, -1, h], kdt, "query")
    _check(m4, [-1] * 4, dtypes.bool_, "mask")
    _check(b4, [-1] * 4, None, "bias")
    _check(ql, [bb], dtypes.int32, "query_seq_lengths")
    _check(kl, [bb], dtypes.int32, "key_value_seq_lengths")
    if util.aval(q).shape[-2] % kh != 0:
        raise ValueError(
            "The number of query heads must be a multiple of key/value heads, but got "
            f"{util.aval(q).shape[-2]} vs {kh}"
        )
    scale_val = (1.0 / math.sqrt(h)) if scale is None else float(scale)
    out = _attention_jit(
        q, k, v, b4, m4, bool(is_causal), scale_val, ql, kl, window, bool(return_residual)
    )
    if return_residual:
        enc, res = out
        return lax.reshape(enc, out_shape), lax.reshape(res, out_shape[:-1])
    return lax.reshape(out, out_shape)


_attention_jit = eager_jit(_attention, static_argnames=("is_causal", "scale", "window", "residual"))


__all__ = ["dot_product_attention"]
