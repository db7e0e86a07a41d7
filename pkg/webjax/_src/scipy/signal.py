"""`jax.scipy.signal`: N-d convolution and correlation as one `conv_general_dilated` (one
feature, one batch element; the kernel flipped), `fftconvolve` on `jnp.fft`, and `detrend`.

The smaller operand is the kernel, as in JAX: "same" output keeps the first operand's shape
even when it is the smaller one.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from .. import core
from .. import numpy as jnp
from ..lax import convolution, lax
from ..numpy import fft as jfft
from ..numpy import util
from ..vmap import vmap

_MODES = ("full", "same", "valid")


def check_arraylike(name: str, *args: Any) -> None:
    """JAX's TypeError for arguments that are not arrays or scalars (lists, tuples, ...)."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)) or not (
            util.is_scalar(a)
            or isinstance(a, core.Tracer)
            or hasattr(a, "aval")
            or hasattr(a, "__array__")
            or hasattr(a, "dtype")
        ):
            raise TypeError(
                f"{name} requires ndarray or scalar arguments, got {type(a)} at position {i}."
            )


def _shape(x: Any) -> tuple[int, ...]:
    return util.aval(x).shape


def _ndim(x: Any) -> int:
    return len(util.aval(x).shape)


def _convolve_nd(in1: Any, in2: Any, mode: str, precision: Any) -> Any:
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = util.ensure_array(in1), util.ensure_array(in2)
    if _ndim(in1) != _ndim(in2):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if 0 in _shape(in1) or 0 in _shape(in2):
        raise ValueError(
            "zero-size arrays not supported in convolutions, got shapes "
            f"{_shape(in1)} and {_shape(in2)}."
        )
    in1, in2 = util.promote_dtypes_inexact(in1, in2)
    s1, s2 = _shape(in1), _shape(in2)
    in1_big = all(a >= b for a, b in zip(s1, s2))
    in2_big = all(a <= b for a, b in zip(s1, s2))
    if not (in1_big or in2_big):
        raise ValueError("One input must be smaller than the other in every dimension.")
    if in2_big:  # equal shapes swap too, as JAX (the same sums, in JAX's order)
        in1, in2 = in2, in1
    k = _shape(in2)
    kernel = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in k]
    elif mode == "same":  # centred on the original in2's extent, so the output has in1's shape
        padding = [(n - 1 - (o - 1) // 2, n - o + (o - 1) // 2) for n, o in zip(k, s2)]
    else:
        padding = [(n - 1, n - 1) for n in k]

    def conv(a: Any, b: Any) -> Any:
        lhs, rhs = lax.expand_dims(a, (0, 1)), lax.expand_dims(b, (0, 1))
        out = convolution.conv_general_dilated(
            lhs, rhs, (1,) * len(k), padding, precision=precision
        )
        return lax.squeeze(out, (0, 1))

    if not jnp.iscomplexobj(in1):
        return conv(in1, kernel)
    # complex operands: four real convolutions (conv_general_dilated takes real operands here)
    ar, ai, br, bi = lax.real(in1), lax.imag(in1), lax.real(kernel), lax.imag(kernel)
    return lax.complex(conv(ar, br) - conv(ai, bi), conv(ar, bi) + conv(ai, br))


def convolve(
    in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None
) -> Any:
    """N-d convolution (scipy.signal.convolve); "auto" is "direct" (a convolution kernel)."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _convolve_nd(in1, in2, mode, precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def correlate(
    in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None
) -> Any:
    """N-d cross-correlation (scipy.signal.correlate): convolution with flip(conj(in2))."""
    in2 = util.ensure_array(in2)
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> tuple[Any, Any]:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    in1, in2 = util.ensure_array(in1), util.ensure_array(in2)
    if _ndim(in1) != 2 or _ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")
    return in1, in2


def convolve2d(
    in1: Any,
    in2: Any,
    mode: str = "full",
    boundary: str = "fill",
    fillvalue: Any = 0,
    precision: Any = None,
) -> Any:
    """2-d convolution (scipy.signal.convolve2d; zero fill only, as JAX)."""
    in1, in2 = _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(
    in1: Any,
    in2: Any,
    mode: str = "full",
    boundary: str = "fill",
    fillvalue: Any = 0,
    precision: Any = None,
) -> Any:
    """2-d cross-correlation (scipy.signal.correlate2d; zero fill only, as JAX). The result is
    arranged as JAX's: for "valid" and "full" with a smaller in1, the roles of the operands are
    exchanged (conjugated), as SciPy does."""
    in1, in2 = _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    s1, s2 = _shape(in1), _shape(in2)
    in1_small = all(a <= b for a, b in zip(s1, s2))
    same_shape = s1 == s2
    if mode == "same" or not in1_small or (mode == "valid" and same_shape):
        # correlate(a, b) = flip(convolve(flip(a), conj(b)))
        return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision))
    out = _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision)
    return out if mode == "valid" else jnp.conj(out)


# ---- FFT ----------------------------------------------------------------------------------------
def fftconvolve(
    in1: Any, in2: Any, mode: str = "full", axes: Sequence[int] | int | None = None
) -> Any:
    """N-d convolution through the FFT (scipy.signal.fftconvolve); `axes` convolves along those
    axes only, the others mapped (they must then have equal sizes)."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = util.promote_dtypes_inexact(util.ensure_array(in1), util.ensure_array(in2))
    nd = _ndim(in1)
    if nd != _ndim(in2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("same", "full", "valid"):
        raise ValueError("mode must be one of ['same', 'full', 'valid']")

    def one(a: Any, b: Any) -> Any:
        return _fftconvolve_unbatched(a, b, mode)

    if axes is None:
        return one(in1, in2)
    axes_t = (axes,) if isinstance(axes, int) else tuple(axes)
    axes_t = tuple(util.canonical_axis(a, nd) for a in axes_t)
    mapped = sorted(set(range(nd)) - set(axes_t))
    s1, s2 = _shape(in1), _shape(in2)
    if any(s1[i] != s2[i] for i in mapped):
        raise ValueError(
            f"mapped axes must have same shape; got in1.shape={s1} in2.shape={s2} axes={axes_t}"
        )
    f = one
    for ax in mapped:
        f = vmap(f, in_axes=ax, out_axes=ax)
    return f(in1, in2)


def _fftconvolve_unbatched(in1: Any, in2: Any, mode: str) -> Any:
    s1, s2 = _shape(in1), _shape(in2)
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    if mode == "valid":
        big1 = all(a >= b for a, b in zip(s1, s2))
        big2 = all(a <= b for a, b in zip(s1, s2))
        if not (big1 or big2):
            raise ValueError(
                "For 'valid' mode, One input must be at least as large as the other in every "
                "dimension."
            )
        if big2:
            in1, in2 = in2, in1
            s1, s2 = s2, s1
    if all(a == 1 or b == 1 for a, b in zip(s1, s2)):
        conv = jnp.multiply(in1, in2)  # an outer product: no transform needed
    else:
        axes = tuple(range(len(full)))
        if jnp.iscomplexobj(in1):
            spectrum = jfft.fftn(in1, full, axes) * jfft.fftn(in2, full, axes)
            conv = jfft.ifftn(spectrum, full, axes)
        else:
            spectrum = jfft.rfftn(in1, full, axes) * jfft.rfftn(in2, full, axes)
            conv = jfft.irfftn(spectrum, full, axes)
    if mode == "full":
        out = full
    elif mode == "same":
        out = s1
    else:
        out = tuple(a - b + 1 for a, b in zip(s1, s2))
    starts = [(f - o) // 2 for f, o in zip(full, out)]
    return lax.slice(conv, starts, [s + o for s, o in zip(starts, out)])


# ---- detrend ------------------------------------------------------------------------------------
def _breakpoints(bp: Any, n: int) -> list[int]:
    if hasattr(bp, "tolist"):
        bp = bp.tolist()
    flat: list[int] = []

    def add(v: Any) -> None:
        if isinstance(v, (list, tuple)):
            for w in v:
                add(w)
        else:
            flat.append(int(v))

    add(bp)
    return sorted({0, *flat, n})


def detrend(
    data: Any, axis: int = -1, type: str = "linear", bp: Any = 0, overwrite_data: None = None
) -> Any:
    """Remove the mean ('constant') or the least-squares line ('linear'), piecewise between the
    breakpoints `bp` (static)."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = util.promote_dtypes_inexact(util.ensure_array(data))
    if type == "constant":
        return x - jnp.mean(x, axis=axis, keepdims=True)
    nd = _ndim(x)
    ax = util.canonical_axis(axis, nd)
    n = _shape(x)[ax]
    points = _breakpoints(bp, n)
    if points[0] < 0 or points[-1] > n:
        raise ValueError(
            "Breakpoints must be non-negative and less than length of data along given axis."
        )
    x = jnp.moveaxis(x, ax, 0)
    dt = util.aval(x).dtype
    pieces = []
    for lo, hi in itertools.pairwise(points):
        seg = util.slice_axis(x, 0, lo, hi)
        m = hi - lo
        if m == 1:  # the line through one point: the residual is 0
            pieces.append(jnp.zeros_like(seg))
            continue
        # least squares line over t = 1..m: residual = y - mean(y) - slope (t - mean(t))
        t = jnp.arange(m, dtype=dt) - (m - 1) / 2.0
        t = lax.expand_dims(t, tuple(range(1, nd)))
        centered = seg - jnp.mean(seg, axis=0, keepdims=True)
        slope = jnp.sum(t * centered, axis=0, keepdims=True) / (m * (m * m - 1) / 12.0)
        pieces.append(centered - slope * t)
    out = pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, axis=0)
    return jnp.moveaxis(out, 0, ax)
