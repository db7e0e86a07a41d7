"""Shape and data movement: Shape/Size/Reshape/Flatten/Squeeze/Unsqueeze/Transpose, Concat/Split/
Slice, Gather*/Scatter*, Expand/Tile/Pad, ConstantOfShape/Range/EyeLike/OneHot, Resize, NonZero,
Trilu, Constant, DepthToSpace/SpaceToDepth, ReverseSequence, Compress."""

from __future__ import annotations

import itertools
import math
from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.dtypes import canonicalize_dtype
from webjax._src.onnx import host
from webjax._src.onnx.ops.common import (
    Node,
    axis_list,
    dev,
    int_list,
    is_host,
    norm_axis,
    onnx_dtype,
    scalar,
    scalar_int,
    static,
    xp,
)
from webjax._src.onnx.registry import op


@op("Shape")
def shape_op(node: Node, x: Any) -> Any:
    s = host.asarray(list(x.shape), host.int64)
    rank = len(x.shape)
    start = node.attr("start", 0)
    end = node.attr("end", rank)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return s[start:end]


@op("Size")
def size_op(node: Node, x: Any) -> Any:
    return host.full((), math.prod(x.shape), host.int64)


@op("Constant")
def constant(node: Node) -> Any:
    for name in ("value", "sparse_value"):
        if node.has(name):
            return node.attr(name)
    for name, dtype in (
        ("value_float", host.float32),
        ("value_floats", host.float32),
        ("value_int", host.int64),
        ("value_ints", host.int64),
    ):
        if node.has(name):
            return host.asarray(node.attr(name), dtype)
    raise node.unsupported(f"attributes {sorted(node.attributes)}")


@op("Reshape")
def reshape(node: Node, x: Any, shape: Any = None) -> Any:
    if node.opset < 5:
        target = list(node.attr("shape"))
    else:
        target = int_list(node, shape, "shape")
    allowzero = node.attr("allowzero", 0)
    if not allowzero:
        target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    return xp(x).reshape(x, tuple(target))


@op("Flatten")
def flatten(node: Node, x: Any) -> Any:
    axis = norm_axis(node.attr("axis", 1), len(x.shape))
    s = tuple(x.shape)
    return xp(x).reshape(x, (math.prod(s[:axis]), -1 if s else 1))


@op("Squeeze")
def squeeze(node: Node, x: Any, axes: Any = None) -> Any:
    ax = axis_list(node, axes) if node.opset >= 13 else node.attr("axes", None)
    m = xp(x)
    if ax is None:
        return m.squeeze(x)
    return m.squeeze(x, tuple(norm_axis(a, len(x.shape)) for a in ax))


@op("Unsqueeze")
def unsqueeze(node: Node, x: Any, axes: Any = None) -> Any:
    ax = int_list(node, axes, "axes") if node.opset >= 13 else list(node.attr("axes"))
    rank = len(x.shape) + len(ax)
    out_shape: list[int] = []
    dims = iter(x.shape)
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
    axis = norm_axis(node.attr("axis", 0 if node.opset < 4 else None), len(xs[0].shape))
    return xp(*xs).concatenate(xs, axis=axis)


@op("Split")
def split(node: Node, x: Any, split_in: Any = None, *rest: Any) -> Any:
    axis = norm_axis(node.attr("axis", 0), len(x.shape))
    n_out = len(node.proto.outputs)
    if node.opset >= 13:
        sizes = axis_list(node, split_in, "split")
    else:
        sizes = node.attr("split", None)
        if sizes is None and split_in is not None and node.opset == 2:
            sizes = axis_list(node, split_in, "split")
    dim = x.shape[axis]
    if not sizes:
        parts = node.attr("num_outputs", n_out)
        chunk = -(-dim // parts)
        sizes = [min(chunk, dim - i * chunk) for i in range(parts)]
    bounds = list(itertools.accumulate([0, *sizes]))
    src = x if xp(x) is host else dev(x)
    index = [slice(None)] * len(x.shape)
    out = []
    for lo, hi in itertools.pairwise(bounds):
        index[axis] = slice(int(lo), int(hi))
        out.append(src[tuple(index)])
    return tuple(out)


@op("Slice")
def slice_op(
    node: Node, x: Any, starts: Any = None, ends: Any = None, axes: Any = None, steps: Any = None
) -> Any:
    rank = len(x.shape)
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
        dim = x.shape[a]
        lo, hi, step = (
            slice(s, e, p).indices(dim)
            if abs(s) < 2**62 and abs(e) < 2**62
            else _clamp(s, e, p, dim)
        )
        index[a] = slice(lo, hi if hi >= 0 else None, step)
    return (x if xp(x) is host else dev(x))[tuple(index)]


def _clamp(s: int, e: int, p: int, dim: int) -> tuple[int, int, int]:
    big = 2**62
    return slice(max(min(s, big), -big), max(min(e, big), -big), p).indices(dim)


@op("Gather")
def gather(node: Node, x: Any, indices: Any) -> Any:
    axis = norm_axis(node.attr("axis", 0), len(x.shape))
    dim = x.shape[axis]
    m = xp(x, indices)
    idx = m.where(indices < 0, indices + dim, indices)
    if m is host:
        return host.take(x, idx, axis=axis)
    return jnp.take(dev(x), dev(idx), axis=axis, mode="clip")


@op("GatherElements")
def gather_elements(node: Node, x: Any, indices: Any) -> Any:
    axis = norm_axis(node.attr("axis", 0), len(x.shape))
    indices = dev(indices)
    idx = jnp.where(indices < 0, indices + x.shape[axis], indices)
    return jnp.take_along_axis(dev(x), idx, axis=axis)


@op("GatherND")
def gather_nd(node: Node, x: Any, indices: Any) -> Any:
    b = node.attr("batch_dims", 0)
    x, indices = dev(x), dev(indices)
    k = indices.shape[-1]
    dims = jnp.asarray(list(x.shape[b : b + k]), dtype=indices.dtype)
    indices = jnp.where(indices < 0, indices + dims, indices)
    batch = x.shape[:b]
    nb = math.prod(batch)
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
    target = int_list(node, shape, "shape")
    out = host.broadcast_shapes(tuple(x.shape), tuple(target))
    return xp(x).broadcast_to(x, out)


@op("Tile")
def tile(node: Node, x: Any, repeats: Any) -> Any:
    return xp(x).tile(x, tuple(axis_list(node, repeats, "repeats") or ()))


@op("Pad")
def pad(node: Node, x: Any, pads: Any = None, value: Any = None, axes: Any = None) -> Any:
    rank = len(x.shape)
    mode = node.attr("mode", "constant")
    if node.opset < 11:
        p = list(node.attr("pads" if node.opset >= 2 else "paddings"))
        v = node.attr("value", 0.0)
    else:
        p = int_list(node, pads, "pads")
        v = 0 if value is None else scalar(node, value, "constant_value")
    ax = int_list(node, axes, "axes") if axes is not None else list(range(rank))
    ax = [norm_axis(a, rank) for a in ax]
    widths = [[0, 0] for _ in range(rank)]
    for i, a in enumerate(ax):
        widths[a] = [p[i], p[i + len(ax)]]
    m = xp(x)
    if m is jnp:
        x = dev(x)
    # negative pads crop
    crop = tuple(
        slice(-lo if lo < 0 else 0, (x.shape[d] + hi) if hi < 0 else None)
        for d, (lo, hi) in enumerate(widths)
    )
    x = x[crop]
    w = tuple((max(lo, 0), max(hi, 0)) for lo, hi in widths)
    if mode == "constant":
        fill = host.full((), v, x.dtype)
        return m.pad(x, w, mode="constant", constant_values=fill if m is host else fill.item())
    if mode in ("reflect", "edge"):
        return m.pad(x, w, mode=mode)
    if mode == "wrap":
        return m.pad(x, w, mode="wrap")
    raise node.unsupported(f"mode={mode!r}")


@op("ConstantOfShape")
def constant_of_shape(node: Node, shape: Any) -> Any:
    dims = tuple(int_list(node, shape, "shape"))
    value = node.attr("value", None)
    if value is None:
        return host.zeros(dims, host.float32)
    return host.full(dims, value.data[0], value.dtype)


@op("Range")
def range_op(node: Node, start: Any, limit: Any, delta: Any) -> Any:
    if is_host(start, limit, delta):
        s, lim, d = (v.data[0] for v in (start, limit, delta))
        dt = start.dtype
        n = max(math.ceil((lim - s) / d), 0)
        if dt.kind == "f":  # as ONNX's reference: start + i * delta in the input type
            first, step = host.full((), s, dt), host.full((), d, dt)
            return host.add(first, host.multiply(host.arange(n, dtype=dt), step))
        return host.arange(s, s + n * d, d, dtype=dt)
    s, lim, d = (static(node, v, "start, limit and delta") for v in (start, limit, delta))
    return dev(range_op(node, s, lim, d))


@op("EyeLike")
def eye_like(node: Node, x: Any) -> Any:
    dtype = onnx_dtype(node, node.attr("dtype")) if node.has("dtype") else x.dtype
    n, mcols = x.shape
    return jnp.eye(n, mcols, k=node.attr("k", 0), dtype=canonicalize_dtype(dtype))


@op("OneHot")
def one_hot(node: Node, indices: Any, depth: Any, values: Any) -> Any:
    d = int(scalar(node, depth, "depth"))
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
    hits = host.nonzero(arr)
    return host.reshape(host.concatenate(hits), (arr.ndim, -1))


@op("Trilu")
def trilu(node: Node, x: Any, k: Any = None) -> Any:
    kk = 0 if k is None else scalar_int(node, k, "k")
    x = dev(x)
    return jnp.triu(x, kk) if node.attr("upper", 1) else jnp.tril(x, kk)


@op("DepthToSpace")
def depth_to_space(node: Node, x: Any) -> Any:
    b = node.attr("blocksize")
    n, c, h, w = x.shape
    if node.attr("mode", "DCR") == "DCR":
        t = jnp.reshape(x, (n, b, b, c // (b * b), h, w)).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = jnp.reshape(x, (n, c // (b * b), b, b, h, w)).transpose(0, 1, 4, 2, 5, 3)
    return jnp.reshape(t, (n, c // (b * b), h * b, w * b))


@op("SpaceToDepth")
def space_to_depth(node: Node, x: Any) -> Any:
    b = node.attr("blocksize")
    n, c, h, w = x.shape
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
    (idx,) = host.nonzero(host.ravel(cond))
    m = xp(x)
    src = x if m is host else dev(x)
    if axis is None:
        return m.take(m.ravel(src), idx if m is host else dev(idx), axis=0)
    axis = norm_axis(axis, len(x.shape))
    return m.take(src, idx if m is host else dev(idx), axis=axis)


# --- Resize -----------------------------------------------------------------------------------


@op("Resize", "Upsample")
def resize(node: Node, x: Any, roi: Any = None, scales: Any = None, sizes: Any = None) -> Any:
    rank = len(x.shape)
    in_shape = list(x.shape)
    scales_v: list[float] | None
    sizes_v: list[int] | None
    if node.op_type == "Upsample":
        sc = node.attr("scales") if node.opset < 9 else static(node, roi, "scales").data
        scales_v = [float(v) for v in sc]
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
            None
            if scales is None or math.prod(scales.shape) == 0
            else [float(v) for v in static(node, scales, "scales").data]
        )
        sizes_v = (
            None if sizes is None or math.prod(sizes.shape) == 0 else int_list(node, sizes, "sizes")
        )
        if node.attr("antialias", 0):
            raise node.unsupported("antialias=1")
        if coord == "tf_crop_and_resize":
            raise node.unsupported("coordinate_transformation_mode='tf_crop_and_resize'")
    axes = node.attr("axes", None)
    axes = list(range(rank)) if axes is None else [norm_axis(a, rank) for a in axes]
    full_scales = [1.0] * rank
    out_shape = list(in_shape)
    if sizes_v is not None:
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        sub = [sizes_v[i] / in_shape[a] for i, a in enumerate(axes)]
        if policy == "not_larger":
            sub = [min(sub)] * len(axes)
        elif policy == "not_smaller":
            sub = [max(sub)] * len(axes)
        for i, a in enumerate(axes):
            full_scales[a] = sub[i]
            out_shape[a] = (
                sizes_v[i] if policy == "stretch" else math.floor(in_shape[a] * sub[i] + 0.5)
            )
    else:
        assert scales_v is not None
        for i, a in enumerate(axes):
            full_scales[a] = scales_v[i]
            out_shape[a] = math.floor(in_shape[a] * full_scales[a])
    y = dev(x)
    for a in range(rank):
        if out_shape[a] == in_shape[a] and full_scales[a] == 1.0:
            continue
        y = _resize_axis(node, y, a, int(out_shape[a]), full_scales[a], mode, coord, nearest_mode)
    return y


def _source_coords(node: Node, out_len: int, in_len: int, scale: float, coord: str) -> list[float]:
    o = [float(i) for i in range(out_len)]
    if coord == "half_pixel":
        return [(v + 0.5) / scale - 0.5 for v in o]
    if coord == "pytorch_half_pixel":
        return [(v + 0.5) / scale - 0.5 for v in o] if out_len > 1 else [0.0] * out_len
    if coord == "align_corners":  # over the unrounded resized length, in_len * scale
        span = in_len * scale - 1
        return [v * (in_len - 1) / span for v in o] if span > 0 else [0.0] * out_len
    if coord == "asymmetric":
        return [v / scale for v in o]
    if coord == "half_pixel_symmetric":
        adj = out_len / (scale * in_len)
        center = in_len / 2
        offset = center * (1 - adj)
        return [offset + (v + 0.5) / scale - 0.5 for v in o]
    raise node.unsupported(f"coordinate_transformation_mode={coord!r}")


def _nearest(node: Node, v: float, nm: str) -> int:
    lo = math.floor(v)
    if nm == "round_prefer_floor":
        return lo if v - lo == 0.5 else round(v)
    if nm == "round_prefer_ceil":
        return math.ceil(v) if v - lo == 0.5 else round(v)
    if nm == "floor":
        return lo
    if nm == "ceil":
        return math.ceil(v)
    raise node.unsupported(f"nearest_mode={nm!r}")


def _resize_axis(
    node: Node, y: Any, axis: int, out_len: int, scale: float, mode: str, coord: str, nm: str
) -> Any:
    in_len = y.shape[axis]
    src = _source_coords(node, out_len, in_len, scale, coord)
    if mode == "nearest":
        idx = [min(max(_nearest(node, v, nm), 0), in_len - 1) for v in src]
        return jnp.take(y, jnp.asarray(idx, dtype=dtypes.int32), axis=axis)
    if mode == "linear":
        weights = _linear_weights(src, in_len)
    elif mode == "cubic":
        a = node.attr("cubic_coeff_a", -0.75)
        weights = _cubic_weights(src, in_len, a, node.attr("exclude_outside", 0))
    else:
        raise node.unsupported(f"mode={mode!r}")
    floating = y.dtype.kind == "f"
    w = jnp.asarray(
        host.asarray(weights, host.float64).astype(y.dtype if floating else host.float32)
    )
    moved = jnp.moveaxis(y, axis, -1)
    out = jnp.matmul(moved.astype(w.dtype), w.T)
    return jnp.moveaxis(out, -1, axis).astype(y.dtype)


def _linear_weights(src: list[float], in_len: int) -> list[list[float]]:
    w = [[0.0] * in_len for _ in src]
    for row, v in zip(w, src):
        s = min(max(v, 0.0), in_len - 1.0)
        lo = math.floor(s)
        hi = min(lo + 1, in_len - 1)
        frac = s - lo
        row[lo] += 1 - frac
        row[hi] += frac
    return w


def _cubic_coefficient(t: float, a: float) -> float:
    if t <= 1:
        return (a + 2) * t**3 - (a + 3) * t**2 + 1
    if t < 2:
        return a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a
    return 0.0


def _cubic_weights(
    src: list[float], in_len: int, a: float, exclude_outside: int
) -> list[list[float]]:
    w = [[0.0] * in_len for _ in src]
    for row, v in zip(w, src):
        base = math.floor(v)
        for k in range(-1, 3):
            idx = base + k
            coef = _cubic_coefficient(abs(v - idx), a)
            inside = 0 <= idx < in_len
            if exclude_outside and not inside:
                coef = 0.0
            row[min(max(idx, 0), in_len - 1)] += coef
        if exclude_outside:
            total = sum(row)
            row[:] = [c / total for c in row]
    return w


@op("CenterCropPad")
def center_crop_pad(node: Node, x: Any, shape: Any) -> Any:
    rank = len(x.shape)
    target = int_list(node, shape, "shape")
    axes = node.attr("axes", None)
    axes = list(range(rank)) if axes is None else [norm_axis(a, rank) for a in axes]
    m = xp(x)
    if m is jnp:
        x = dev(x)
    for a, size in zip(axes, target):
        dim = x.shape[a]
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


def _unique_key(v: Any) -> tuple:
    """A sort key ordering NumPy's way: NaN after every number."""
    return tuple((1, 0.0) if e != e else (0, e) for e in v)


@op("Unique")
def unique(node: Node, x: Any) -> Any:
    arr = static(node, x, "input (Unique's output shape depends on its values)")
    axis = node.attr("axis", None)
    if axis is None:
        axis_n = 0
        flat = host.ravel(arr)
        rows = [(v,) for v in flat.data]
        moved = flat
    else:
        axis_n = norm_axis(axis, arr.ndim)
        moved = host.moveaxis(arr, axis_n, 0)
        n = moved.shape[0]
        width = moved.size // n if n else 0
        rows = [tuple(moved.data[i * width : (i + 1) * width]) for i in range(n)]
    first: dict[tuple, int] = {}
    for i, r in enumerate(rows):
        first.setdefault(r, i)
    keys = list(first)
    if node.attr("sorted", 1):
        keys.sort(key=_unique_key)
    position = {k: j for j, k in enumerate(keys)}
    idx = [first[k] for k in keys]
    inv = [position[r] for r in rows]
    counts = [0] * len(keys)
    for j in inv:
        counts[j] += 1
    picked = host.take(moved, host.asarray(idx, host.int64), axis=0)
    y = picked if axis is None else host.moveaxis(picked, 0, axis_n)
    i64 = host.int64
    return (
        y,
        host.asarray(idx, i64),
        host.asarray(inv, i64).reshape(-1),
        host.asarray(counts, i64),
    )


@op("TensorScatter")
def tensor_scatter(node: Node, cache: Any, update: Any, write_indices: Any = None) -> Any:
    cache, update = dev(cache), dev(update)
    axis = norm_axis(node.attr("axis", -2), cache.ndim)
    circular = node.attr("mode", "linear") == "circular"
    batch, length, steps = cache.shape[0], cache.shape[axis], update.shape[axis]
    start = (
        jnp.zeros((batch,), dtypes.int32) if write_indices is None else dev(write_indices)
    ).astype(dtypes.int32)
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
