"""Quantization: QuantizeLinear/DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
ConvInteger, QLinearMatMul, QLinearConv."""

from __future__ import annotations

from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.onnx.ops import nn
from webjax._src.onnx.ops.common import Node, dev, norm_axis, onnx_dtype
from webjax._src.onnx.registry import op


def _per_axis(node: Node, v: Any, x: Any) -> Any:
    """A scale or zero point broadcast against x: scalar, per-axis (1-D) or blocked."""
    v = dev(v)
    if v.ndim == 0 or v.size == 1:
        return jnp.reshape(v, ())
    axis = norm_axis(node.attr("axis", 1), len(x.shape))
    block = node.attr("block_size", 0)
    if block:
        return jnp.repeat(v, block, axis=axis)[
            tuple(slice(0, x.shape[i]) if i == axis else slice(None) for i in range(v.ndim))
        ]
    shape = [1] * len(x.shape)
    shape[axis] = v.shape[0]
    return jnp.reshape(v, shape)


def _integer_range(dtype: Any) -> tuple[float, float]:
    lo, hi = dtypes.iinfo_bounds(dtypes.dtype(dtype))
    return float(lo), float(hi)


@op("QuantizeLinear")
def quantize_linear(node: Node, x: Any, scale: Any, zero_point: Any = None) -> Any:
    if node.has("output_dtype") and node.attr("output_dtype"):
        out_dtype = onnx_dtype(node, node.attr("output_dtype"))
    elif zero_point is not None:
        out_dtype = dtypes.dtype(zero_point.dtype)
    else:
        out_dtype = dtypes.uint8
    if out_dtype.kind not in "iu":
        raise node.unsupported(f"output type {out_dtype}")
    x = dev(x).astype(dtypes.float32)
    s = _per_axis(node, scale, x).astype(dtypes.float32)
    q = jnp.round(x / s)
    if zero_point is not None:
        q = q + _per_axis(node, zero_point, x).astype(dtypes.float32)
    lo, hi = _integer_range(out_dtype)
    return jnp.clip(q, lo, hi).astype(out_dtype)


@op("DequantizeLinear")
def dequantize_linear(node: Node, x: Any, scale: Any, zero_point: Any = None) -> Any:
    x = dev(x)
    s = _per_axis(node, scale, x)
    if x.dtype.kind not in "iu":
        raise node.unsupported(f"input type {x.dtype}")
    v = x.astype(dtypes.int32)
    if zero_point is not None:
        v = v - _per_axis(node, zero_point, x).astype(dtypes.int32)
    out = v.astype(s.dtype) * s
    if node.has("output_dtype") and node.attr("output_dtype"):
        out = out.astype(onnx_dtype(node, node.attr("output_dtype")))
    return out


@op("DynamicQuantizeLinear")
def dynamic_quantize_linear(node: Node, x: Any) -> Any:
    x = dev(x).astype(dtypes.float32)
    lo = jnp.minimum(jnp.min(x), 0.0)
    hi = jnp.maximum(jnp.max(x), 0.0)
    scale = (hi - lo) / 255.0
    zp = jnp.clip(jnp.round(-lo / scale), 0, 255)
    y = jnp.clip(jnp.round(x / scale) + zp, 0, 255).astype(dtypes.uint8)
    return y, scale, zp.astype(dtypes.uint8)


def _centered(x: Any, zp: Any, axis: int | None = None) -> Any:
    v = dev(x).astype(dtypes.int32)
    if zp is None:
        return v
    z = dev(zp).astype(dtypes.int32)
    if z.ndim == 1 and z.size > 1 and axis is not None:
        shape = [1] * v.ndim
        shape[axis] = z.shape[0]
        z = jnp.reshape(z, shape)
    return v - z


@op("MatMulInteger")
def matmul_integer(node: Node, a: Any, b: Any, a_zp: Any = None, b_zp: Any = None) -> Any:
    return jnp.matmul(_centered(a, a_zp, len(a.shape) - 2), _centered(b, b_zp, len(b.shape) - 1))


@op("ConvInteger")
def conv_integer(node: Node, x: Any, w: Any, x_zp: Any = None, w_zp: Any = None) -> Any:
    xc = _centered(x, x_zp).astype(dtypes.float32)
    wc = _centered(w, w_zp, 0).astype(dtypes.float32)
    return jnp.round(nn.conv(node, xc, wc)).astype(dtypes.int32)


def _requantize(y: Any, y_scale: Any, y_zp: Any) -> Any:
    q = jnp.round(y / dev(y_scale).astype(dtypes.float32)) + dev(y_zp).astype(dtypes.float32)
    lo, hi = _integer_range(y_zp.dtype)
    return jnp.clip(q, lo, hi).astype(y_zp.dtype)


@op("QLinearMatMul")
def qlinear_matmul(
    node: Node, a: Any, a_s: Any, a_zp: Any, b: Any, b_s: Any, b_zp: Any, y_s: Any, y_zp: Any
) -> Any:
    af = _centered(a, a_zp, len(a.shape) - 2).astype(dtypes.float32) * dev(a_s).astype(
        dtypes.float32
    )
    bs = dev(b_s).astype(dtypes.float32)
    bf = _centered(b, b_zp, len(b.shape) - 1).astype(dtypes.float32) * bs
    return _requantize(jnp.matmul(af, bf), y_s, y_zp)


@op("QLinearConv")
def qlinear_conv(
    node: Node,
    x: Any,
    x_s: Any,
    x_zp: Any,
    w: Any,
    w_s: Any,
    w_zp: Any,
    y_s: Any,
    y_zp: Any,
    b: Any = None,
) -> Any:
    xf = _centered(x, x_zp).astype(dtypes.float32) * dev(x_s).astype(dtypes.float32)
    ws = dev(w_s).astype(dtypes.float32)
    if ws.ndim == 1 and ws.size > 1:
        ws = jnp.reshape(ws, (-1,) + (1,) * (len(w.shape) - 1))
    wf = _centered(w, w_zp, 0).astype(dtypes.float32) * ws
    y = nn.conv(node, xf, wf)
    if b is not None:
        scale = jnp.reshape(
            dev(x_s).astype(dtypes.float32) * jnp.ravel(ws), (1, -1) + (1,) * (y.ndim - 2)
        )
        y = y + jnp.reshape(dev(b).astype(dtypes.float32), (1, -1) + (1,) * (y.ndim - 2)) * scale
    return _requantize(y, y_s, y_zp)
