"""Shape and data movement: Shape/Size/Reshape/Flatten/Squeeze/Unsqueeze/Transpose, Concat/Split/
Slice, Gather*/Scatter*, Expand/Tile/Pad, ConstantOfShape/Range/EyeLike/OneHot, Resize, NonZero,
Trilu, Constant, DepthToSpace/SpaceToDepth, ReverseSequence, Compress."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from webjax._src import numpy as jnp
from webjax._src.dtype_queries import issubdtype
from webjax._src.dtypes import canonicalize_dtype
from webjax._src.onnx.ops.common import (
    Node,
    axis_list,
    dev,
    int_list,
    is_host,
    norm_axis,
    onnx_dtype,
    scalar_int,
    static,
    xp,
)
from webjax._src.onnx.registry import op


@op("Shape")
def shape_op(node: Node, x: Any) -> Any:
    s = np.array(np.shape(x), dtype=np.int64)
    rank = len(s)
    start = node.attr("start", 0)
    end = node.attr("end", rank)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return s[start:end]


@op("Size")
def size_op(node: Node, x: Any) -> Any:
    return np.array(int(np.prod(np.shape(x), dtype=np.int64)), dtype=np.int64)


@op("Constant")
def constant(node: Node) -> Any:
    for name in ("value", "sparse_value"):
        if node.has(name):
            return np.asarray(node.attr(name))
    for name, dtype in (
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", np.int64),
        ("value_ints", np.int64),
    ):
        if node.has(name):
            return np.asarray(node.attr(name), dtype=dtype)
    raise node.unsupported(f"attributes {sorted(node.attributes)}")


@op("Reshape")
def reshape(node: Node, x: Any, shape: Any = None) -> Any:
    if node.opset < 5:
        target = list(node.attr("shape"))
    else:
        target = [int(v) for v in static(node, shape, "shape")]
    allowzero = node.attr("allowzero", 0)
    if not allowzero:
        target = [np.shape(x)[i] if d == 0 else d for i, d in enumerate(target)]
    return xp(x).reshape(x, tuple(target))


@op("Flatten")
def flatten(node: Node, x: Any) -> Any:
    axis = norm_axis(node.attr("axis", 1), np.ndim(x))
    s = np.shape(x)
    return xp(x).reshape(x, (int(np.prod(s[:axis], dtype=np.int64)), -1 if s else 1))


@op("Squeeze")
def squeeze(node: Node, x: Any, axes: Any = None) -> Any:
    ax = axis_list(node, axes) if node.opset >= 13 else node.attr("axes", None)
    m = xp(x)
    if ax is None:
        return m.squeeze(x)
    return m.squeeze(x, tuple(norm_axis(a, np.ndim(x)) for a in ax))


@op("Unsqueeze")
def unsqueeze(node: Node, x: Any, axes: Any = None) -> Any:
    ax = int_list(node, axes, "axes") if node.opset >= 13 else list(node.attr("axes"))
    rank = np.ndim(x) + len(ax)
    out_shape: list[int] = []
    dims = iter(np.shape(x))
    positions = {norm_axis(a, rank) for a in ax}
    for i in range(rank):
        out_shape.append(1 if i in positions else next(dims))
    return xp(x).reshape(x, tuple(out_shape))


@op("Transpose")
def transpose(node: Node, x: Any) -> Any:
    perm = node.attr("perm", None)
    return xp(x).transpose(x, None if perm is None else tuple(perm))


@op("Concat")
def concat(node: Node, *xs: Any) -> Any:
    xs = tuple(x for x in xs if x is not None)
    axis = norm_axis(node.attr("axis", 0 if node.opset < 4 else None), np.ndim(xs[0]))
    return xp(*xs).concatenate(xs, axis=axis)


@op("Split")
def split(node: Node, x: Any, split_in: Any = None, *rest: Any) -> Any:
    axis = norm_axis(node.attr("axis", 0), np.ndim(x))
    n_out = len(node.proto.outputs)
    if node.opset >= 13:
        sizes = axis_list(node, split_in, "split")
    else:
        sizes = node.attr("split", None)
        if sizes is None and split_in is not None and node.opset == 2:
            sizes = axis_list(node, split_in, "split")
    dim = np.shape(x)[axis]
    if not sizes:
        parts = node.attr("num_outputs", n_out)
        chunk = -(-dim // parts)
        sizes = [min(chunk, dim - i * chunk) for i in range(parts)]
    bounds = np.cumsum([0, *sizes])
    m = xp(x)
    index = [slice(None)] * np.ndim(x)
    out = []
    for lo, hi in itertools.pairwise(bounds):
        index[axis] = slice(int(lo), int(hi))
        out.append(x[tuple(index)] if m is np else jnp.asarray(x)[tuple(index)])
    return tuple(out)


@op("Slice")
def slice_op(
    node: Node, x: Any, starts: Any = None, ends: Any = None, axes: Any = None, steps: Any = None
) -> Any:
    rank = np.ndim(x)
    if node.opset < 10:
        st, en = node.attr("starts"), node.attr("ends")
        ax = node.attr("axes", list(range(len(st))))
        sp = [1] * len(st)
    else:
        st = int_list(node, starts, "starts")
        en = int_list(node, ends, "ends")
        ax = axis_list(node, axes) or list(range(len(st)))
        sp = axis_list(node, steps, "steps") or [1] * len(st)
    index = [slice(None)] * rank
    for s, e, a, p in zip(st, en, ax, sp):
        a = norm_axis(a, rank)
        dim = np.shape(x)[a]
        lo, hi, step = (
            slice(s, e, p).indices(dim)
            if abs(s) < 2**62 and abs(e) < 2**62
            else _clamp(s, e, p, dim)
        )
        index[a] = slice(lo, hi if hi >= 0 else None, step)
    return x[tuple(index)] if is_host(x) else jnp.asarray(x)[tuple(index)]


def _clamp(s: int, e: int, p: int, dim: int) -> tuple[int, int, int]:
    big = 2**62
    return slice(max(min(s, big), -big), max(min(e, big), -big), p).indices(dim)


@op("Gather")
def gather(node: Node, x: Any, indices: Any) -> Any:
    axis = norm_axis(node.attr("axis", 0), np.ndim(x))
    dim = np.shape(x)[axis]
    m = xp(x, indices)
    idx = m.where(indices < 0, indices + dim, indices)
    if m is np:
        return np.take(x, idx, axis=axis)
    return jnp.take(dev(x), dev(idx), axis=axis, mode="clip")


@op("GatherElements")
def gather_elements(node: Node, x: Any, indices: Any) -> Any:
    axis = norm_axis(node.attr("axis", 0), np.ndim(x))
    dim = np.shape(x)[axis]
    m = xp(x, indices)
    idx = m.where(indices < 0, indices + dim, indices)
    return m.take_along_axis(x if m is np else dev(x), idx, axis=axis)


@op("GatherND")
def gather_nd(node: Node, x: Any, indices: Any) -> Any:
    b = node.attr("batch_dims", 0)
    x, indices = dev(x), dev(indices)
    k = indices.shape[-1]
    dims = jnp.asarray(np.array(x.shape[b : b + k]), dtype=indices.dtype)
    indices = jnp.where(indices < 0, indices + dims, indices)
    batch = x.shape[:b]
    nb = int(np.prod(batch, dtype=np.int64))
    xf = jnp.reshape(x, (nb, *x.shape[b:]))
    idf = jnp.reshape(indices, (nb, -1, k))
    bidx = jnp.arange(nb)[:, None]
    picked = xf[(bidx, *[idf[..., i] for i in range(k)])]
    return jnp.reshape(picked, (*indices.shape[:-1], *x.shape[b + k :]))


def _reduce_mode(node: Node) -> str:
    return node.attr("reduction", "none")


def _scatter_at(node: Node, ref: Any, index: tuple, updates: Any) -> Any:
    mode = _reduce_mode(node)
    at = ref.at[index]
    if mode == "none":
        return at.set(updates)
    if mode == "add":
        return at.add(updates)
    if mode == "mul":
        return at.multiply(updates)
    if mode == "max":
        return at.max(updates)
    if mode == "min":
        return at.min(updates)
    raise node.unsupported(f"reduction={mode!r}")


@op("ScatterElements", "Scatter")
def scatter_elements(node: Node, x: Any, indices: Any, updates: Any) -> Any:
    x, indices, updates = dev(x), dev(indices), dev(updates)
    axis = norm_axis(node.attr("axis", 0), x.ndim)
    indices = jnp.where(indices < 0, indices + x.shape[axis], indices)
    grids = list(jnp.indices(indices.shape, sparse=True))
    grids[axis] = indices
    return _scatter_at(node, x, tuple(grids), updates)


@op("ScatterND")
def scatter_nd(node: Node, x: Any, indices: Any, updates: Any) -> Any:
    x, indices, updates = dev(x), dev(indices), dev(updates)
    k = indices.shape[-1]
    index = tuple(indices[..., i] for i in range(k))
    return _scatter_at(node, x, index, updates)


@op("Expand")
def expand(node: Node, x: Any, shape: Any) -> Any:
    target = [int(v) for v in static(node, shape, "shape")]
    out = np.broadcast_shapes(np.shape(x), tuple(target))
    return xp(x).broadcast_to(x, out)


@op("Tile")
def tile(node: Node, x: Any, repeats: Any) -> Any:
    return xp(x).tile(x, tuple(axis_list(node, repeats, "repeats") or ()))


@op("Pad")
def pad(node: Node, x: Any, pads: Any = None, value: Any = None, axes: Any = None) -> Any:
    rank = np.ndim(x)
    mode = node.attr("mode", "constant")
    if node.opset < 11:
        p = list(node.attr("pads" if node.opset >= 2 else "paddings"))
        v = node.attr("value", 0.0)
    else:
        p = int_list(node, pads, "pads")
        v = 0 if value is None else static(node, value, "constant_value").reshape(()).item()
    ax = int_list(node, axes, "axes") if axes is not None else list(range(rank))
    ax = [norm_axis(a, rank) for a in ax]
    widths = [[0, 0] for _ in range(rank)]
    for i, a in enumerate(ax):
        widths[a] = [p[i], p[i + len(ax)]]
    m = xp(x)
    # negative pads crop
    crop = tuple(
        slice(-lo if lo < 0 else 0, (np.shape(x)[d] + hi) if hi < 0 else None)
        for d, (lo, hi) in enumerate(widths)
    )
    x = x[crop]
    w = tuple((max(lo, 0), max(hi, 0)) for lo, hi in widths)
    if mode == "constant":
        return m.pad(x, w, mode="constant", constant_values=np.asarray(v).astype(x.dtype))
    if mode in ("reflect", "edge"):
        return m.pad(x, w, mode=mode)
    if mode == "wrap":
        return m.pad(x, w, mode="wrap")
    raise node.unsupported(f"mode={mode!r}")


@op("ConstantOfShape")
def constant_of_shape(node: Node, shape: Any) -> Any:
    dims = tuple(int(v) for v in static(node, shape, "shape"))
    value = node.attr("value", None)
    if value is None:
        return np.zeros(dims, dtype=np.float32)
    value = np.asarray(value)
    return np.full(dims, value.reshape(-1)[0], dtype=value.dtype)


@op("Range")
def range_op(node: Node, start: Any, limit: Any, delta: Any) -> Any:
    if is_host(start, limit, delta):
        s, lim, d = (np.asarray(v).reshape(()) for v in (start, limit, delta))
        n = max(int(np.ceil((lim - s) / d)), 0)
        return (s + np.arange(n, dtype=s.dtype) * d).astype(s.dtype)
    s, lim, d = (static(node, v, "start, limit and delta") for v in (start, limit, delta))
    return jnp.asarray(range_op(node, s, lim, d))


@op("EyeLike")
def eye_like(node: Node, x: Any) -> Any:
    dtype = onnx_dtype(node, node.attr("dtype")) if node.has("dtype") else x.dtype
    n, mcols = np.shape(x)
    return jnp.eye(n, mcols, k=node.attr("k", 0), dtype=canonicalize_dtype(dtype))


@op("OneHot")
def one_hot(node: Node, indices: Any, depth: Any, values: Any) -> Any:
    d = int(np.ravel(static(node, depth, "depth"))[0])
    axis = node.attr("axis", -1)
    indices = dev(indices)
    idx = jnp.where(indices < 0, indices + d, indices)
    rank = indices.ndim + 1
    axis = norm_axis(axis, rank)
    hot = jnp.expand_dims(idx, axis) == jnp.reshape(
        jnp.arange(d), [d if i == axis else 1 for i in range(rank)]
    )
    values = dev(values)
    return jnp.where(hot, values[1], values[0])


@op("NonZero")
def non_zero(node: Node, x: Any) -> Any:
    arr = static(node, x, "input (NonZero's output shape depends on its values)")
    return np.array(np.nonzero(arr), dtype=np.int64).reshape(np.ndim(arr), -1)


@op("Trilu")
def trilu(node: Node, x: Any, k: Any = None) -> Any:
    kk = 0 if k is None else scalar_int(node, k, "k")
    m = xp(x)
    return m.triu(x, kk) if node.attr("upper", 1) else m.tril(x, kk)


@op("DepthToSpace")
def depth_to_space(node: Node, x: Any) -> Any:
    b = node.attr("blocksize")
    n, c, h, w = np.shape(x)
    if node.attr("mode", "DCR") == "DCR":
        t = jnp.reshape(x, (n, b, b, c // (b * b), h, w)).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = jnp.reshape(x, (n, c // (b * b), b, b, h, w)).transpose(0, 1, 4, 2, 5, 3)
    return jnp.reshape(t, (n, c // (b * b), h * b, w * b))


@op("SpaceToDepth")
def space_to_depth(node: Node, x: Any) -> Any:
    b = node.attr("blocksize")
    n, c, h, w = np.shape(x)
    t = jnp.reshape(x, (n, c, h // b, b, w // b, b))
    if node.attr("mode", "DCR") == "DCR":
        t = t.transpose(0, 3, 5, 1, 2, 4)
    else:
        t = t.transpose(0, 1, 3, 5, 2, 4)
    return jnp.reshape(t, (n, c * b * b, h // b, w // b))


@op("ReverseSequence")
def reverse_sequence(node: Node, x: Any, lens: Any) -> Any:
    batch_axis, time_axis = node.attr("batch_axis", 1), node.attr("time_axis", 0)
    x = dev(x)
    t = x.shape[time_axis]
    shape = [1] * x.ndim
    shape[time_axis] = t
    tpos = jnp.reshape(jnp.arange(t), shape)
    shape = [1] * x.ndim
    shape[batch_axis] = x.shape[batch_axis]
    ln = jnp.reshape(dev(lens).astype(tpos.dtype), shape)
    src = jnp.where(tpos < ln, ln - 1 - tpos, tpos)
    src = jnp.broadcast_to(src, x.shape)
    return jnp.take_along_axis(x, src, axis=time_axis)


@op("Compress")
def compress(node: Node, x: Any, condition: Any) -> Any:
    cond = static(node, condition, "condition (Compress's output shape depends on it)")
    axis = node.attr("axis", None)
    idx = np.nonzero(np.ravel(cond))[0]
    if axis is None:
        return xp(x).ravel(x)[idx] if is_host(x) else jnp.ravel(x)[idx]
    axis = norm_axis(axis, np.ndim(x))
    return xp(x).take(x, idx, axis=axis)


# --- Resize -----------------------------------------------------------------------------------


@op("Resize", "Upsample")
def resize(node: Node, x: Any, roi: Any = None, scales: Any = None, sizes: Any = None) -> Any:
    rank = np.ndim(x)
    in_shape = np.array(np.shape(x))
    if node.op_type == "Upsample":
        sc = node.attr("scales") if node.opset < 9 else static(node, roi, "scales")
        scales_v: Any = np.asarray(sc, dtype=np.float64)
        sizes_v = None
        mode = node.attr("mode", "nearest")
        coord = "asymmetric"
        nearest_mode = "floor"
    else:
        if node.opset < 11:
            scales, roi = roi, None
        mode = node.attr("mode", "nearest")
        coord = node.attr("coordinate_transformation_mode", "half_pixel")
        nearest_mode = node.attr("nearest_mode", "round_prefer_floor")
        scales_v = (
            None if scales is None or np.size(scales) == 0 else static(node, scales, "scales")
        )
        sizes_v = None if sizes is None or np.size(sizes) == 0 else static(node, sizes, "sizes")
        if node.attr("antialias", 0):
            raise node.unsupported("antialias=1")
        if coord == "tf_crop_and_resize":
            raise node.unsupported("coordinate_transformation_mode='tf_crop_and_resize'")
    axes = node.attr("axes", None)
    axes = list(range(rank)) if axes is None else [norm_axis(a, rank) for a in axes]
    full_scales = np.ones(rank)
    out_shape = in_shape.copy()
    if sizes_v is not None:
        sizes_v = np.asarray(sizes_v, dtype=np.int64)
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        sub = sizes_v / in_shape[axes]
        if policy == "not_larger":
            sub = np.full(len(axes), sub.min())
        elif policy == "not_smaller":
            sub = np.full(len(axes), sub.max())
        for i, a in enumerate(axes):
            full_scales[a] = sub[i]
            out_shape[a] = (
                sizes_v[i] if policy == "stretch" else int(np.floor(in_shape[a] * sub[i] + 0.5))
            )
    else:
        for i, a in enumerate(axes):
            full_scales[a] = float(np.asarray(scales_v, dtype=np.float64)[i])
            out_shape[a] = int(np.floor(in_shape[a] * full_scales[a]))
    y = dev(x)
    for a in range(rank):
        if out_shape[a] == in_shape[a] and full_scales[a] == 1.0:
            continue
        y = _resize_axis(node, y, a, int(out_shape[a]), full_scales[a], mode, coord, nearest_mode)
    return y


def _source_coords(node: Node, out_len: int, in_len: int, scale: float, coord: str) -> np.ndarray:
    o = np.arange(out_len, dtype=np.float64)
    if coord == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if coord == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if out_len > 1 else np.zeros(out_len)
    if coord == "align_corners":  # over the unrounded resized length, in_len * scale
        span = in_len * scale - 1
        return o * (in_len - 1) / span if span > 0 else np.zeros(out_len)
    if coord == "asymmetric":
        return o / scale
    if coord == "half_pixel_symmetric":
        adj = out_len / (scale * in_len)
        center = in_len / 2
        offset = center * (1 - adj)
        return offset + (o + 0.5) / scale - 0.5
    raise node.unsupported(f"coordinate_transformation_mode={coord!r}")


def _resize_axis(
    node: Node, y: Any, axis: int, out_len: int, scale: float, mode: str, coord: str, nm: str
) -> Any:
    in_len = y.shape[axis]
    src = _source_coords(node, out_len, in_len, scale, coord)
    if mode == "nearest":
        if nm == "round_prefer_floor":
            idx = np.where(src - np.floor(src) == 0.5, np.floor(src), np.round(src))
        elif nm == "round_prefer_ceil":
            idx = np.where(src - np.floor(src) == 0.5, np.ceil(src), np.round(src))
        elif nm == "floor":
            idx = np.floor(src)
        elif nm == "ceil":
            idx = np.ceil(src)
        else:
            raise node.unsupported(f"nearest_mode={nm!r}")
        idx = np.clip(idx, 0, in_len - 1).astype(np.int32)
        return jnp.take(y, jnp.asarray(idx), axis=axis)
    if mode == "linear":
        weights = _linear_weights(src, in_len)
    elif mode == "cubic":
        a = node.attr("cubic_coeff_a", -0.75)
        weights = _cubic_weights(src, in_len, a, node.attr("exclude_outside", 0))
    else:
        raise node.unsupported(f"mode={mode!r}")
    floating = issubdtype(y.dtype, np.floating)
    w = jnp.asarray(weights.astype(np.dtype(y.dtype) if floating else np.float32))
    moved = jnp.moveaxis(y, axis, -1)
    out = jnp.matmul(moved.astype(w.dtype), w.T)
    return jnp.moveaxis(out, -1, axis).astype(y.dtype)


def _linear_weights(src: np.ndarray, in_len: int) -> np.ndarray:
    s = np.clip(src, 0, in_len - 1)
    lo = np.floor(s).astype(np.int64)
    hi = np.minimum(lo + 1, in_len - 1)
    frac = s - lo
    w = np.zeros((len(src), in_len))
    np.add.at(w, (np.arange(len(src)), lo), 1 - frac)
    np.add.at(w, (np.arange(len(src)), hi), frac)
    return w


def _cubic_weights(src: np.ndarray, in_len: int, a: float, exclude_outside: int) -> np.ndarray:
    w = np.zeros((len(src), in_len))
    base = np.floor(src).astype(np.int64)
    for k in range(-1, 3):
        idx = base + k
        t = np.abs(src - idx)
        coef = np.where(
            t <= 1,
            (a + 2) * t**3 - (a + 3) * t**2 + 1,
            np.where(t < 2, a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a, 0.0),
        )
        inside = (idx >= 0) & (idx < in_len)
        if exclude_outside:
            coef = np.where(inside, coef, 0.0)
        np.add.at(w, (np.arange(len(src)), np.clip(idx, 0, in_len - 1)), coef)
    if exclude_outside:
        w = w / w.sum(axis=1, keepdims=True)
    return w


@op("CenterCropPad")
def center_crop_pad(node: Node, x: Any, shape: Any) -> Any:
    rank = np.ndim(x)
    target = [int(v) for v in static(node, shape, "shape")]
    axes = node.attr("axes", None)
    axes = list(range(rank)) if axes is None else [norm_axis(a, rank) for a in axes]
    m = xp(x)
    for a, size in zip(axes, target):
        dim = np.shape(x)[a]
        if size < dim:
            start = (dim - size) // 2
            index = [slice(None)] * rank
            index[a] = slice(start, start + size)
            x = x[tuple(index)]
        elif size > dim:
            lo = (size - dim) // 2
            widths = [(0, 0)] * rank
            widths[a] = (lo, size - dim - lo)
            x = m.pad(x, widths)
    return x


@op("Unique")
def unique(node: Node, x: Any) -> Any:
    arr = static(node, x, "input (Unique's output shape depends on its values)")
    axis = node.attr("axis", None)
    if axis is None:
        y, idx, inv, counts = np.unique(arr, True, True, True)
    else:
        y, idx, inv, counts = np.unique(arr, True, True, True, axis=norm_axis(axis, arr.ndim))
    if not node.attr("sorted", 1):
        order = np.argsort(idx)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        idx, counts = idx[order], counts[order]
        inv = rank[inv]
        y = np.take(arr, idx, axis=0 if axis is None else norm_axis(axis, arr.ndim))
    i64 = np.int64
    return y, idx.astype(i64), inv.reshape(-1).astype(i64), counts.astype(i64)


@op("TensorScatter")
def tensor_scatter(node: Node, cache: Any, update: Any, write_indices: Any = None) -> Any:
    cache, update = dev(cache), dev(update)
    axis = norm_axis(node.attr("axis", -2), cache.ndim)
    circular = node.attr("mode", "linear") == "circular"
    batch, length, steps = cache.shape[0], cache.shape[axis], update.shape[axis]
    start = (jnp.zeros((batch,), np.int32) if write_indices is None else dev(write_indices)).astype(
        np.int32
    )
    pos = start[:, None] + jnp.arange(steps)[None, :]  # [batch, steps]
    if circular:
        pos = pos % length
    shape = [1] * cache.ndim
    shape[0], shape[axis] = batch, steps
    pos = jnp.reshape(pos, shape)
    grids = list(jnp.indices(update.shape, sparse=True))
    grids[axis] = jnp.broadcast_to(
        pos, [update.shape[i] if i in (0, axis) else 1 for i in range(cache.ndim)]
    )
    return cache.at[tuple(grids)].set(update)
