"""`jax.image`: resize and scale_and_translate as products with per-axis weight matrices.

Each resized axis gets an (input, output) matrix of kernel weights evaluated at the output
samples' positions in the input (widened by 1/scale when downsampling with antialiasing),
normalized per output sample, and zero for samples outside the input; the image is contracted
with one matrix per axis. 'nearest' gathers floor((i + 0.5) * in / out). Kernels: triangle
(linear), Keys cubic (a = -0.5), OpenCV/PyTorch cubic (a = -0.75, edge-clamped taps when not
antialiased), Lanczos 3 and 5, and area.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from typing import Any

from . import core, dtypes
from .lax import lax
from .numpy import ufuncs as u
from .numpy import util
from .numpy.indexing import _one_hot_gather


class ResizeMethod(enum.Enum):
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        names = {
            "nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR,
            "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
            "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
            "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
            "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
            "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA,
        }  # fmt: skip
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return names[s]


def _c(v: float, like: Any) -> Any:
    return lax.full((), v, util.aval(like).dtype)


def _triangle(x: Any) -> Any:
    return lax.max(_c(0.0, x), lax.sub(_c(1.0, x), lax.abs(x)))


def _keys_cubic(x: Any) -> Any:
    c = lambda v: _c(v, x)
    near = lax.add(lax.mul(lax.mul(lax.sub(lax.mul(c(1.5), x), c(2.5)), x), x), c(1.0))
    far = lax.add(
        lax.mul(lax.sub(lax.mul(lax.add(lax.mul(c(-0.5), x), c(2.5)), x), c(4.0)), x), c(2.0)
    )
    out = lax.select(lax.ge(x, c(1.0)), far, near)
    return lax.select(lax.ge(x, c(2.0)), lax.full(util.aval(x).shape, 0.0, util.aval(x).dtype), out)


def _opencv_cubic(x: Any) -> Any:
    a = -0.75
    c = lambda v: _c(v, x)
    near = lax.add(lax.mul(lax.mul(lax.sub(lax.mul(c(a + 2.0), x), c(a + 3.0)), x), x), c(1.0))
    far = lax.sub(
        lax.mul(lax.add(lax.mul(lax.sub(lax.mul(c(a), x), c(5.0 * a)), x), c(8.0 * a)), x),
        c(4.0 * a),
    )
    out = lax.select(lax.ge(x, c(1.0)), far, near)
    return lax.select(lax.ge(x, c(2.0)), lax.full(util.aval(x).shape, 0.0, util.aval(x).dtype), out)


def _lanczos(radius: float) -> Callable[[Any], Any]:
    def kernel(x: Any) -> Any:
        c = lambda v: _c(v, x)
        pix = lax.mul(c(math.pi), x)
        y = lax.mul(lax.mul(c(radius), lax.sin(pix)), lax.sin(lax.div(pix, c(radius))))
        safe = lax.select(
            lax.ne(x, c(0.0)),
            lax.mul(c(math.pi**2), lax.mul(x, x)),
            lax.full(util.aval(x).shape, 1.0, util.aval(x).dtype),
        )
        out = lax.select(
            lax.gt(x, c(1e-3)),
            lax.div(y, safe),
            lax.full(util.aval(x).shape, 1.0, util.aval(x).dtype),
        )
        return lax.select(
            lax.gt(x, c(radius)), lax.full(util.aval(x).shape, 0.0, util.aval(x).dtype), out
        )

    return kernel


_AREA: Any = object()
_KERNELS: dict[ResizeMethod, tuple[int, Any]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


def _is_py(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _weights(
    m: int,
    n: int,
    scale: Any,
    translation: Any,
    kernel: Any,
    antialias: bool,
    edge_padding: bool,
    radius: int,
    dt: Any,
) -> Any:
    """(m, n) weights: input index x output sample."""
    f = lambda v: lax.full((), v, dt)
    if _is_py(scale) and _is_py(translation):
        inv = 1.0 / scale
        inv_c, shift_c = f(inv), f(translation * inv)
        kscale = f(max(inv, 1.0) if antialias else 1.0)
        inv_val: float | None = inv
    else:
        s = lax.convert_element_type(util.ensure_array(scale), dt)
        t = lax.convert_element_type(util.ensure_array(translation), dt)
        inv_c = lax.div(f(1.0), s)
        shift_c = lax.mul(t, inv_c)
        kscale = lax.max(inv_c, f(1.0)) if antialias else f(1.0)
        inv_val = None
    out_pos = lax.convert_element_type(lax.iota(dtypes.int32, n), dt)
    sample = lax.sub(lax.sub(lax.mul(lax.add(out_pos, f(0.5)), inv_c), shift_c), f(0.5))
    if edge_padding:
        if antialias:
            if inv_val is None:
                msg = "Antialiasing with edge padding requires a static scale."
                inv_val = 1.0 / float(core.concrete_or_error(float, scale, msg))
            k = math.ceil(radius * max(inv_val, 1.0))
        else:
            k = radius
    else:
        k = 0
    e = m + 2 * k
    taps = lax.add(lax.convert_element_type(lax.iota(dtypes.int32, e), dt), f(float(-k)))
    if kernel is _AREA:
        left = lax.sub(lax.mul(out_pos, inv_c), shift_c)
        right = lax.add(left, inv_c)
        lj = lax.convert_element_type(lax.iota(dtypes.int32, m), dt)
        rj = lax.add(lj, f(1.0))
        hi = lax.min(
            lax.broadcast_in_dim(right, (m, n), (1,)), lax.broadcast_in_dim(rj, (m, n), (0,))
        )
        lo = lax.max(
            lax.broadcast_in_dim(left, (m, n), (1,)), lax.broadcast_in_dim(lj, (m, n), (0,))
        )
        w = lax.max(f(0.0), lax.sub(hi, lo))
    else:
        d = lax.abs(
            lax.sub(
                lax.broadcast_in_dim(sample, (e, n), (1,)), lax.broadcast_in_dim(taps, (e, n), (0,))
            )
        )
        w = kernel(lax.div(d, kscale))
    if edge_padding:
        i32 = dtypes.int32
        clamped = lax.clamp(
            lax.full((), 0, i32), lax.convert_element_type(taps, i32), lax.full((), m - 1, i32)
        )
        onehot = lax.convert_element_type(
            lax.eq(
                lax.broadcast_in_dim(clamped, (m, e), (1,)),
                lax.broadcasted_iota(dtypes.int32, (m, e), 0),
            ),
            dt,
        )
        w = lax.dot_general(onehot, w, (((1,), (0,)), ((), ())))
    total = lax.reduce_sum(w, (0,))
    ok = lax.gt(lax.abs(total), f(1000.0 * 2.0**-23))
    safe = lax.select(lax.ne(total, f(0.0)), total, lax.full((n,), 1.0, dt))
    w = lax.select(
        lax.broadcast_in_dim(ok, (m, n), (1,)),
        lax.div(w, lax.broadcast_in_dim(safe, (m, n), (1,))),
        lax.full((m, n), 0.0, dt),
    )
    if not edge_padding:
        inside = lax.bitwise_and(lax.ge(sample, f(-0.5)), lax.le(sample, f(m - 0.5)))
        w = lax.select(lax.broadcast_in_dim(inside, (m, n), (1,)), w, lax.full((m, n), 0.0, dt))
    return w


def _apply(
    x: Any,
    shape: tuple[int, ...],
    dims: Sequence[int],
    scale: Sequence[Any],
    translation: Sequence[Any],
    method: ResizeMethod,
    antialias: bool,
    wdt: Any,
) -> Any:
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    xdt = util.aval(x).dtype
    for i, d in enumerate(dims):
        nd = util.aval(x).ndim
        d = d % nd
        m, n = util.aval(x).shape[d], shape[d]
        w = lax.convert_element_type(
            _weights(m, n, scale[i], translation[i], kernel, antialias, edge, radius, wdt), xdt
        )
        y = lax.dot_general(x, w, (((d,), (0,)), ((), ())))  # the new axis comes last
        perm = list(range(nd - 1))
        perm.insert(d, nd - 1)
        x = lax.transpose(y, perm)
    return x


def _resize_nearest(x: Any, shape: tuple[int, ...]) -> Any:
    for d, (m, n) in enumerate(zip(util.aval(x).shape, shape)):
        if m == n:
            continue
        pos = lax.convert_element_type(lax.iota(dtypes.int32, n), dtypes.float32)
        pos = lax.mul(
            lax.add(pos, lax.full((), 0.5, dtypes.float32)), lax.full((), float(m), dtypes.float32)
        )
        pos = lax.div(pos, lax.full((), float(n), dtypes.float32))
        idx = lax.convert_element_type(lax.floor(pos), dtypes.int32)
        x = _one_hot_gather(x, idx, d)
    return x


def resize(
    image: Any,
    shape: Sequence[int],
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = None,
) -> Any:
    """`image` resampled to `shape` (every axis whose size changes)."""
    shape = core.canonicalize_shape(shape)
    image = util.ensure_array(image)
    if len(shape) != util.aval(image).ndim:
        raise ValueError(
            "shape must have length equal to the number of dimensions of x;  "
            f"{shape} vs {util.aval(image).shape}"
        )
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = u._promote_inexact("resize", image)
    ishape = util.aval(image).shape
    dims = [i for i in range(len(shape)) if ishape[i] != shape[i]]
    scale = [1.0 if shape[d] == 0 else shape[d] / ishape[d] for d in dims]
    wdt = dtypes.default_float()
    return _apply(image, shape, dims, scale, [0.0] * len(dims), method, bool(antialias), wdt)


def scale_and_translate(
    image: Any,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = None,
) -> Any:
    """Resample `image` to `shape` along `spatial_dims`: output sample i of an axis reads the
    input at (i + 0.5 - translation) / scale - 0.5."""
    shape = core.canonicalize_shape(shape)
    image = util.ensure_array(image)
    if len(shape) != util.aval(image).ndim:
        raise ValueError(
            "shape must have length equal to the number of dimensions of x;  "
            f"{shape} vs {util.aval(image).shape}"
        )
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError(
            "Nearest neighbor resampling is not currently supported for scale_and_translate."
        )
    (image,) = u._promote_inexact("scale_and_translate", image)
    scale = list(scale) if isinstance(scale, (list, tuple)) else _split(scale)
    translation = (
        list(translation) if isinstance(translation, (list, tuple)) else _split(translation)
    )
    if not (len(spatial_dims) == len(scale) == len(translation)):
        raise ValueError("spatial_dims, scale and translation must have equal lengths")
    py = all(_is_py(v) for v in [*scale, *translation])
    if py:
        wdt = dtypes.default_float()
    else:
        wdt, _ = util.result_type(
            *[util.ensure_array(v) if not _is_py(v) else v for v in [*scale, *translation]]
        )
        if wdt.kind != "f":
            wdt = dtypes.default_float()
    return _apply(
        image, shape, list(spatial_dims), scale, translation, method, bool(antialias), wdt
    )


def _split(v: Any) -> list[Any]:
    v = util.ensure_array(v)
    av = util.aval(v)
    if av.ndim != 1:
        raise ValueError(f"scale and translation must be 1-d, got shape {av.shape}")
    return [lax.index_in_dim(v, i, 0, keepdims=False) for i in range(av.shape[0])]


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
