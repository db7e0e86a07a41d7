"""`jax.nn.dot_product_attention`: JAX's XLA implementation (grouped-query heads, bias, boolean
mask, causal, local window and sequence-length masks, softmax in float32), and the fused kernel
behind it on wasm and webgpu.

The composite (`_attention`) is XLA's: logits, masks, softmax, a second product. Where the
arguments fit (no local window, no residual; float32, float16 or bfloat16), the call binds
`flash_attention_p` instead: query, key, value, an additive float32 bias that holds the
boolean mask (masked logits become the composite's -0.7 x float32 max) and the causal and
key-length masks only when a mask is there (so fully masked rows stay the composite's average),
the key and query lengths. Its evaluation rule runs one fused kernel (ir/attention.py:
codegen/wgsl/attention.py, codegen/wasm/attention.py) on wasm and webgpu for the head sizes
their codegens take, and the composite everywhere else (cpu, webgl); its derivative is the
composite's (jvp through `_attention`, so `grad` recomputes through it and matches it); its
batching rule folds the vmapped axis into the batch axis, so vmap stays fused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import core, dtypes
from ..core import Primitive, ShapedArray
from ..dispatch import array as array_mod
from ..dispatch import devices, lazy, lowering
from ..interpreters import ad, batching
from ..ir.attention import AttentionKernel, fused_on
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
    if window is None and not return_residual and kdt in _FUSED_DTYPES:
        out = _fused_call(q, k, v, b4, m4, bool(is_causal), scale_val, ql, kl)
        return lax.reshape(out, out_shape)
    out = _attention_jit(
        q, k, v, b4, m4, bool(is_causal), scale_val, ql, kl, window, bool(return_residual)
    )
    if return_residual:
        enc, res = out
        return lax.reshape(enc, out_shape), lax.reshape(res, out_shape[:-1])
    return lax.reshape(out, out_shape)


_attention_jit = eager_jit(_attention, static_argnames=("is_causal", "scale", "window", "residual"))


# ---- the fused kernel ---------------------------------------------------------------------------
_FUSED_DTYPES = (dtypes.float32, dtypes.float16, dtypes.bfloat16)

flash_attention_p = Primitive("flash_attention")


def _fused_call(
    q: Any, k: Any, v: Any, bias: Any, mask: Any, causal: bool, scale: float, ql: Any, kl: Any
) -> Any:
    """dot_product_attention through flash_attention_p (the module docstring)."""
    b, t_len, _, _ = util.aval(q).shape
    s_len = util.aval(k).shape[1]
    f32 = dtypes.float32
    kdt = util.aval(k).dtype
    if bias is not None:
        bias = lax.convert_element_type(bias, f32)
    if mask is not None:
        keep = mask
        if causal:
            ti, si = _iota2(t_len, s_len)
            keep = lax.bitwise_and(
                util.broadcast_to(keep, _bshape(keep, (1, 1, t_len, s_len))),
                lax.broadcast_in_dim(lax.ge(ti, si), _bshape(keep, (1, 1, t_len, s_len)), (2, 3)),
            )
        if kl is not None:
            shape = _bshape(keep, (b, 1, 1, s_len))
            si = lax.broadcasted_iota(dtypes.int32, shape, 3)
            kk = lax.lt(si, lax.broadcast_in_dim(kl, shape, (0,)))
            keep = lax.bitwise_and(util.broadcast_to(keep, shape), kk)
        causal, kl = False, None
        shape = _bshape(keep, util.aval(bias).shape if bias is not None else (1, 1, 1, 1))
        big = -0.7 * _finfo_max(f32)
        base = util.broadcast_to(bias, shape) if bias is not None else lax.full(shape, 0.0, f32)
        bias = lax.select(util.broadcast_to(keep, shape), base, lax.full(shape, big, f32))
    ops = [lax.convert_element_type(x, f32) for x in (q, k, v)]
    ops += [x for x in (bias, kl, ql) if x is not None]
    out = flash_attention_p.bind(
        *ops,
        scale=scale,
        causal=causal,
        bias=bias is not None,
        kv_len=kl is not None,
        q_len=ql is not None,
    )
    return lax.convert_element_type(out, kdt)


def _bshape(x: Any, other: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of x's 4-D shape with `other` (sizes 1 stretch)."""
    return tuple(max(a, c) for a, c in zip(util.aval(x).shape, other, strict=True))


def _split(args: Sequence[Any], bias: bool, kv_len: bool, q_len: bool) -> list[Any]:
    """[q, k, v, bias, kv_len, q_len] with None for the operands left out."""
    rest = iter(args[3:])
    return [*args[:3], *(next(rest) if has else None for has in (bias, kv_len, q_len))]


@flash_attention_p.def_abstract_eval
def _abstract(q: Any, *rest: Any, **params: Any) -> ShapedArray:
    return ShapedArray(q.shape, dtypes.float32)


def _composite(
    *args: Any, scale: float, causal: bool, bias: bool, kv_len: bool, q_len: bool
) -> Any:
    q, k, v, b4, kl, ql = _split(args, bias, kv_len, q_len)
    return _attention_jit(q, k, v, b4, None, causal, scale, ql, kl, None, False)


def _impl(*args: Any, **params: Any) -> Any:
    device = devices.pick_device(args)
    q_aval = core.get_aval(args[0])
    empty = q_aval.size == 0 or core.get_aval(args[1]).size == 0
    limits = getattr(device.backend, "limits", None)
    if empty or not fused_on(device.platform, q_aval.shape[-1], limits):
        return _composite(*args, **params)
    _, k, _, b4, _, _ = _split(args, params["bias"], params["kv_len"], params["q_len"])
    bsz, t_len, n, h = q_aval.shape
    _, s_len, kh, _ = core.get_aval(k).shape
    strides = None
    if b4 is not None:
        shape = core.get_aval(b4).shape
        full = (shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1)
        strides = tuple(0 if d == 1 else st for d, st in zip(shape, full, strict=True))
    kernel = AttentionKernel(
        bsz,
        t_len,
        s_len,
        n,
        kh,
        h,
        float(params["scale"]),
        bool(params["causal"]),
        strides,  # type: ignore[arg-type]
        bool(params["kv_len"]),
        bool(params["q_len"]),
    )
    bufs = []
    for a in args:
        av = core.get_aval(a)
        bufs.append(lazy.as_buffer(lowering._input_exp(a, av, device), av.size, device))
    lb = lazy.LazyBuffer(device, dtypes.float32, kernel.size)
    lb.kernel = kernel  # type: ignore[assignment]
    lb.inputs = bufs
    out_aval = ShapedArray(q_aval.shape, dtypes.float32)
    return array_mod.from_exp(lazy.load_all(lb), out_aval, device)


flash_attention_p.def_impl(_impl)


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    outs, touts = ad.jvp_flat(lambda *xs: [_composite(*xs, **params)], primals, tangents)
    return outs[0], touts[0]


ad.primitive_jvps[flash_attention_p] = _jvp


def _batch(vals: list[Any], dims: list[Any], **params: Any) -> tuple[Any, int]:
    """vmap: the mapped axis joins the batch axis (B -> V * B) of every operand."""
    size = next(core.get_aval(x).shape[d] for x, d in zip(vals, dims, strict=True) if d is not None)
    q0 = vals[0] if dims[0] is None else batching.moveaxis(vals[0], dims[0], 0)
    bsz = core.get_aval(q0).shape[0 if dims[0] is None else 1]
    ops = []
    for i, (x, d) in enumerate(zip(vals, dims, strict=True)):
        if i == 3 and d is None and core.get_aval(x).shape[0] == 1:
            ops.append(x)  # a bias shared by every batch row stays shared
            continue
        x = batching.broadcast(x, size, 0) if d is None else batching.moveaxis(x, d, 0)
        shape = core.get_aval(x).shape
        if i == 3 and params["bias"] and shape[1] == 1:
            x = lax.broadcast_in_dim(x, (size, bsz, *shape[2:]), tuple(range(len(shape))))
            shape = core.get_aval(x).shape
        ops.append(lax.reshape(x, (shape[0] * shape[1], *shape[2:])))
    out = flash_attention_p.bind(*ops, **params)
    shape = core.get_aval(out).shape
    return lax.reshape(out, (size, shape[0] // size, *shape[1:])), 0


batching.primitive_batchers[flash_attention_p] = _batch


__all__ = ["dot_product_attention"]
