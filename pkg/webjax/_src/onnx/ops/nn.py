"""Network layers: MatMul/Gemm/Einsum, Conv/ConvTranspose, pooling, normalizations, LRN."""

from __future__ import annotations

import itertools
import math
from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.lax import lax
from webjax._src.lax.convolution import conv_general_dilated
from webjax._src.lax.windowed import reduce_window
from webjax._src.onnx.ops.common import Node, const, dev, norm_axis
from webjax._src.onnx.registry import op


def _lowest(dt: dtypes.DType) -> Any:
    """The identity of a maximum over `dt`: -inf, or the integer type's minimum."""
    return -math.inf if dt.kind == "f" else dtypes.iinfo_bounds(dt)[0]


@op("MatMul")
def matmul(node: Node, a: Any, b: Any) -> Any:
    return jnp.matmul(dev(a), dev(b))


@op("Gemm")
def gemm(node: Node, a: Any, b: Any, c: Any = None) -> Any:
    a, b = dev(a), dev(b)
    if node.attr("transA", 0):
        a = a.T
    if node.attr("transB", 0):
        b = b.T
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    y = jnp.matmul(a, b)
    if alpha != 1.0:
        y = y * const(y, alpha)
    if c is not None:
        cc = dev(c)
        y = y + (cc * const(cc, beta) if beta != 1.0 else cc)
    return y


@op("Einsum")
def einsum(node: Node, *xs: Any) -> Any:
    return jnp.einsum(node.attr("equation").replace(" ", ""), *[dev(x) for x in xs])


# --- convolution ----------------------------------------------------------------------------


def _window_pads(
    node: Node, in_sp: tuple, k: list[int], s: list[int], d: list[int]
) -> list[tuple[int, int]]:
    """(begin, end) padding per spatial axis from pads / auto_pad."""
    n = len(in_sp)
    auto = node.attr("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for i in range(n):
            target = -(-in_sp[i] // s[i])
            total = max((target - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in_sp[i], 0)
            small = total // 2
            out.append((small, total - small) if auto == "SAME_UPPER" else (total - small, small))
        return out
    if auto == "VALID":
        return [(0, 0)] * n
    if auto != "NOTSET":
        raise node.unsupported(f"auto_pad={auto!r}")
    pads = node.attr("pads", [0] * (2 * n))
    return [(pads[i], pads[i + n]) for i in range(n)]


def _conv_params(node: Node, x: Any, kernel_sp: tuple) -> tuple:
    n = len(kernel_sp)
    k = list(node.attr("kernel_shape", kernel_sp))
    s = list(node.attr("strides", [1] * n))
    d = list(node.attr("dilations", [1] * n))
    return k, s, d


@op("Conv")
def conv(node: Node, x: Any, w: Any, b: Any = None) -> Any:
    x, w = dev(x), dev(w)
    k, s, d = _conv_params(node, x, w.shape[2:])
    pads = _window_pads(node, x.shape[2:], k, s, d)
    y = conv_general_dilated(
        x, w, s, pads, rhs_dilation=d, feature_group_count=node.attr("group", 1)
    )
    if b is not None:
        y = y + jnp.reshape(dev(b), (1, -1) + (1,) * (y.ndim - 2))
    return y


@op("ConvTranspose")
def conv_transpose(node: Node, x: Any, w: Any, b: Any = None) -> Any:
    x, w = dev(x), dev(w)
    n = x.ndim - 2
    g = node.attr("group", 1)
    k, s, d = _conv_params(node, x, w.shape[2:])
    out_pad = list(node.attr("output_padding", [0] * n))
    in_sp = x.shape[2:]
    auto = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape", None)
    if output_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        target = (
            list(output_shape)[-n:]
            if output_shape is not None
            else [in_sp[i] * s[i] for i in range(n)]
        )
        pads = []
        for i in range(n):
            total = s[i] * (in_sp[i] - 1) + out_pad[i] + (k[i] - 1) * d[i] + 1 - target[i]
            half = total // 2
            if auto == "SAME_UPPER":
                pads.append((half, total - half))
            else:
                pads.append((total - half, half))
    elif auto == "VALID":
        pads = [(0, 0)] * n
    else:
        p = node.attr("pads", [0] * (2 * n))
        pads = [(p[i], p[i + n]) for i in range(n)]
    c_in = w.shape[0]
    m_per = w.shape[1]
    wk = jnp.reshape(w, (g, c_in // g, m_per, *w.shape[2:]))
    wk = jnp.swapaxes(wk, 1, 2)
    wk = jnp.reshape(wk, (g * m_per, c_in // g, *w.shape[2:]))
    wk = jnp.flip(wk, axis=tuple(range(2, 2 + n)))
    conv_pads = [
        ((k[i] - 1) * d[i] - pads[i][0], (k[i] - 1) * d[i] - pads[i][1] + out_pad[i])
        for i in range(n)
    ]
    y = conv_general_dilated(
        x, wk, [1] * n, conv_pads, lhs_dilation=s, rhs_dilation=d, feature_group_count=g
    )
    if b is not None:
        y = y + jnp.reshape(dev(b), (1, -1) + (1,) * n)
    return y


# --- pooling --------------------------------------------------------------------------------


def _pool_geometry(node: Node, x: Any) -> tuple:
    n = x.ndim - 2
    k = list(node.attr("kernel_shape"))
    s = list(node.attr("strides", [1] * n))
    d = list(node.attr("dilations", [1] * n))
    pads = _window_pads(node, x.shape[2:], k, s, d)
    extra = [0] * n
    if node.attr("ceil_mode", 0):
        for i in range(n):
            size = x.shape[2 + i] + pads[i][0] + pads[i][1]
            dk = (k[i] - 1) * d[i] + 1
            out = -(-(size - dk) // s[i]) + 1
            if (out - 1) * s[i] >= x.shape[2 + i] + pads[i][0]:
                out -= 1
            extra[i] = max((out - 1) * s[i] + dk - size, 0)
    return k, s, d, pads, extra


def _full(pads: list, extra: list) -> list:
    return [(0, 0), (0, 0), *[(lo, hi + e) for (lo, hi), e in zip(pads, extra)]]


@op("MaxPool")
def max_pool(node: Node, x: Any) -> Any:
    x = dev(x)
    k, s, d, pads, extra = _pool_geometry(node, x)
    if len([o for o in node.proto.outputs if o]) > 1:
        return _max_pool_with_indices(node, x, k, s, d, pads, extra)
    return reduce_window(
        x,
        const(x, _lowest(x.dtype)),
        lax.max,
        (1, 1, *k),
        (1, 1, *s),
        _full(pads, extra),
        window_dilation=(1, 1, *d),
    )


def _max_pool_with_indices(
    node: Node, x: Any, k: list, s: list, d: list, pads: list, extra: list
) -> Any:
    """MaxPool's values and the flat index (row-major, or column-major for storage_order=1)
    of each maximum in its (N, C) plane's input, by gathering every window."""
    n, c, *sizes = x.shape
    out_sizes = [
        (size + lo + hi + e - ((kk - 1) * dd + 1)) // ss + 1
        for size, (lo, hi), e, kk, ss, dd in zip(sizes, pads, extra, k, s, d)
    ]
    column_major = node.attr("storage_order", 0)
    rows_strides = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    col_strides = [math.prod(sizes[:i]) for i in range(len(sizes))]
    inside, flat, stored = [], [], []
    for pos in itertools.product(*[range(o) for o in out_sizes]):
        in_row, flat_row, stored_row = [], [], []
        for off in itertools.product(*[range(kk) for kk in k]):
            coord = [p * ss + o * dd - lo for p, o, ss, dd, (lo, _) in zip(pos, off, s, d, pads)]
            in_row.append(all(0 <= cc < size for cc, size in zip(coord, sizes)))
            clipped = [min(max(cc, 0), size - 1) for cc, size in zip(coord, sizes)]
            flat_row.append(sum(cc * st for cc, st in zip(clipped, rows_strides)))
            stored_row.append(sum(cc * st for cc, st in zip(clipped, col_strides)))
        inside.append(in_row)
        flat.append(flat_row)
        stored.append(stored_row)
    plane = jnp.reshape(x, (n, c, -1))
    vals = plane[:, :, jnp.asarray(flat, dtype=dtypes.int32)]  # (n, c, outputs, window)
    vals = jnp.where(jnp.asarray(inside), vals, const(x, _lowest(x.dtype)))
    best = jnp.argmax(vals, axis=-1)
    y = jnp.max(vals, axis=-1)
    positions = jnp.asarray(stored if column_major else flat, dtype=dtypes.int32)
    idx = jnp.take_along_axis(jnp.broadcast_to(positions, vals.shape), best[..., None], axis=-1)[
        ..., 0
    ]
    base = jnp.reshape(jnp.arange(n * c) * math.prod(sizes), (n, c, 1))
    shape = (n, c, *out_sizes)
    return jnp.reshape(y, shape), jnp.reshape(idx + base, shape)


@op("AveragePool")
def average_pool(node: Node, x: Any) -> Any:
    x = dev(x)
    k, s, d, pads, extra = _pool_geometry(node, x)
    window = ((1, 1, *k), (1, 1, *s))
    total = reduce_window(
        x,
        const(x, 0),
        lax.add,
        *window,
        _full(pads, extra),
        window_dilation=(1, 1, *d),
    )
    ones = jnp.ones((1, 1, *x.shape[2:]), x.dtype)
    if node.attr("count_include_pad", 0):
        ones = jnp.pad(ones, _full(pads, [0] * len(pads)), constant_values=1)
        count = reduce_window(
            ones,
            const(x, 0),
            lax.add,
            *window,
            _full([(0, 0)] * len(pads), extra),
            window_dilation=(1, 1, *d),
        )
    else:
        count = reduce_window(
            ones,
            const(x, 0),
            lax.add,
            *window,
            _full(pads, extra),
            window_dilation=(1, 1, *d),
        )
    return total / count


@op("LpPool")
def lp_pool(node: Node, x: Any) -> Any:
    x = dev(x)
    p = node.attr("p", 2)
    k, s, d, pads, extra = _pool_geometry(node, x)
    total = reduce_window(
        jnp.abs(x) ** p,
        const(x, 0),
        lax.add,
        (1, 1, *k),
        (1, 1, *s),
        _full(pads, extra),
        window_dilation=(1, 1, *d),
    )
    return total ** const(x, 1.0 / p)


@op("GlobalAveragePool")
def global_average_pool(node: Node, x: Any) -> Any:
    return jnp.mean(dev(x), axis=tuple(range(2, len(x.shape))), keepdims=True)


@op("GlobalMaxPool")
def global_max_pool(node: Node, x: Any) -> Any:
    return jnp.max(dev(x), axis=tuple(range(2, len(x.shape))), keepdims=True)


@op("GlobalLpPool")
def global_lp_pool(node: Node, x: Any) -> Any:
    p = node.attr("p", 2)
    x = dev(x)
    s = jnp.sum(jnp.abs(x) ** p, axis=tuple(range(2, x.ndim)), keepdims=True)
    return s ** const(x, 1.0 / p)


# --- normalization --------------------------------------------------------------------------


def _channel(v: Any, rank: int) -> Any:
    return jnp.reshape(dev(v), (1, -1) + (1,) * (rank - 2))


@op("BatchNormalization")
def batch_norm(node: Node, x: Any, scale: Any, bias: Any, mean: Any, var: Any) -> Any:
    if node.attr("training_mode", 0):
        raise node.unsupported("training_mode=1")
    x = dev(x)
    eps = const(x, node.attr("epsilon", 1e-5))
    r = x.ndim
    inv = lax.rsqrt(_channel(var, r).astype(x.dtype) + eps)
    y = (x - _channel(mean, r).astype(x.dtype)) * inv * _channel(scale, r).astype(x.dtype)
    return y + _channel(bias, r).astype(x.dtype)


def _normalize(x: Any, axes: tuple, eps: Any) -> tuple[Any, Any, Any]:
    mean = jnp.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    var = jnp.mean(centered * centered, axis=axes, keepdims=True)
    inv = lax.rsqrt(var + eps)
    return centered * inv, mean, inv


@op("InstanceNormalization")
def instance_norm(node: Node, x: Any, scale: Any, bias: Any) -> Any:
    x = dev(x)
    eps = const(x, node.attr("epsilon", 1e-5))
    y, _, _ = _normalize(x, tuple(range(2, x.ndim)), eps)
    return y * _channel(scale, x.ndim) + _channel(bias, x.ndim)


@op("LayerNormalization")
def layer_norm(node: Node, x: Any, scale: Any, bias: Any = None) -> Any:
    x = dev(x)
    axis = norm_axis(node.attr("axis", -1), x.ndim)
    stash = node.attr("stash_type", 1)
    compute = dtypes.float32 if stash == 1 else x.dtype
    xc = x.astype(compute)
    eps = jnp.asarray(node.attr("epsilon", 1e-5), dtype=compute)
    y, mean, inv = _normalize(xc, tuple(range(axis, x.ndim)), eps)
    y = y.astype(x.dtype) * dev(scale)
    if bias is not None:
        y = y + dev(bias)
    return y, mean, inv


@op("RMSNormalization")
def rms_norm(node: Node, x: Any, scale: Any) -> Any:
    x = dev(x)
    axis = norm_axis(node.attr("axis", -1), x.ndim)
    compute = dtypes.float32 if node.attr("stash_type", 1) == 1 else x.dtype
    xc = x.astype(compute)
    eps = jnp.asarray(node.attr("epsilon", 1e-5), dtype=compute)
    ms = jnp.mean(xc * xc, axis=tuple(range(axis, x.ndim)), keepdims=True)
    return (xc * lax.rsqrt(ms + eps)).astype(x.dtype) * dev(scale)


@op("GroupNormalization")
def group_norm(node: Node, x: Any, scale: Any, bias: Any) -> Any:
    x = dev(x)
    g = node.attr("num_groups")
    n, c = x.shape[:2]
    compute = dtypes.float32 if node.attr("stash_type", 1) == 1 else x.dtype
    eps = jnp.asarray(node.attr("epsilon", 1e-5), dtype=compute)
    grouped = jnp.reshape(x.astype(compute), (n, g, -1))
    y, _, _ = _normalize(grouped, (2,), eps)
    y = jnp.reshape(y, x.shape).astype(x.dtype)
    scale, bias = dev(scale), dev(bias)
    if node.opset < 21:  # scale and bias per group
        scale = jnp.repeat(scale, c // g)
        bias = jnp.repeat(bias, c // g)
    return y * _channel(scale, x.ndim) + _channel(bias, x.ndim)


@op("MeanVarianceNormalization")
def mean_variance_norm(node: Node, x: Any) -> Any:
    x = dev(x)
    axes = tuple(norm_axis(a, x.ndim) for a in node.attr("axes", [0, 2, 3]))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(x * x, axis=axes, keepdims=True) - mean * mean
    return (x - mean) / (jnp.sqrt(var) + const(x, 1e-9))


@op("LRN")
def lrn(node: Node, x: Any) -> Any:
    x = dev(x)
    size = node.attr("size")
    alpha, beta = node.attr("alpha", 1e-4), node.attr("beta", 0.75)
    bias = node.attr("bias", 1.0)
    lo = (size - 1) // 2
    hi = size - 1 - lo
    pads = [(0, 0), (lo, hi)] + [(0, 0)] * (x.ndim - 2)
    sq = reduce_window(
        x * x,
        const(x, 0),
        lax.add,
        (1, size) + (1,) * (x.ndim - 2),
        (1,) * x.ndim,
        pads,
    )
    return x / (const(x, bias) + const(x, alpha / size) * sq) ** const(x, beta)


@op("LpNormalization")
def lp_normalization(node: Node, x: Any) -> Any:
    x = dev(x)
    axis = norm_axis(node.attr("axis", -1), x.ndim)
    p = node.attr("p", 2)
    if p == 1:
        norm = jnp.sum(jnp.abs(x), axis=axis, keepdims=True)
    elif p == 2:
        norm = jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=True))
    else:
        raise node.unsupported(f"p={p}")
    return x / jnp.where(norm == 0, jnp.ones_like(norm), norm)
