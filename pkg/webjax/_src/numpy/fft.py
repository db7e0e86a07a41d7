"""jax.numpy.fft, written on lax.fft.

Every transform moves its axes to the end, crops or zero-pads them to the requested lengths
(`n`, `s`), calls lax.fft on the trailing 1 to 3 axes (more are done in groups), scales for
`norm` ("backward": 1/n on the inverse, "ortho": 1/sqrt(n) both ways, "forward": 1/n on the
forward transform) and moves the axes back, as JAX does. The transforms are `eager_jit`ted:
an eager call with hashable arguments runs one compiled program (crop, passes and scaling).
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Sequence
from typing import Any

from .. import core, dtypes
from ..dispatch import devices
from ..jit import eager_jit
from ..lax import fft as lax_fft
from ..lax import lax
from ..lax.fft import FftType
from . import creation, ufuncs, util
from .shape import moveaxis as _moveaxis
from .shape import roll as _roll

_PREFIX = "jax.numpy.fft."


def _arraylike(name: str, a: Any) -> Any:
    if isinstance(a, (list, tuple)):
        raise TypeError(
            f"{name} requires ndarray or scalar arguments, got {type(a)} at position 0."
        )
    return util.ensure_array(a)


def _round(x: float, dt: dtypes.DType) -> float:
    """x rounded to the precision of `dt`'s parts (the arithmetic JAX does in that type)."""
    if dtypes.component(dt) is dtypes.float64:
        return x
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def _norm_scale(s: Sequence[int], func_name: str, norm: str, dt: dtypes.DType) -> float | None:
    """The factor `norm` asks for (None: none), computed in `dt` as JAX computes it."""
    if norm == "backward":
        return None
    inverse = func_name.startswith("i")
    total = _round(float(math.prod(s)), dt)
    if norm == "ortho":
        root = _round(math.sqrt(total), dt)
        return root if inverse else _round(1.0 / root, dt)
    if norm == "forward":
        return total if inverse else _round(1.0 / total, dt)
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _transform(x: Any, fft_type: FftType, s: Sequence[int]) -> Any:
    """lax.fft over the trailing len(s) axes, in groups of at most 3 axes (the real transform
    of RFFT/IRFFT on the last group, after or before the complex ones on the others)."""
    s = tuple(s)
    if len(s) <= 3:
        return lax_fft.fft(x, fft_type, s)
    nd = util.aval(x).ndim
    last = 3 if len(s) > 4 else 2
    lead = tuple(range(nd - len(s), nd - last))  # the leading group of transformed axes
    moved = tuple(range(nd - len(lead), nd))
    if fft_type in (FftType.FFT, FftType.RFFT):
        x = lax_fft.fft(x, fft_type, s[-last:])
        x = _moveaxis(x, lead, moved)
        x = _transform(x, FftType.FFT, s[:-last])
        return _moveaxis(x, moved, lead)
    x = _moveaxis(x, lead, moved)
    x = _transform(x, FftType.IFFT, s[:-last])
    x = _moveaxis(x, moved, lead)
    return lax_fft.fft(x, fft_type, s[-last:])


def _fft_core(
    func_name: str,
    fft_type: FftType,
    a: Any,
    s: Sequence[int] | None,
    axes: Sequence[int] | None,
    norm: str | None,
) -> Any:
    full_name = _PREFIX + func_name
    arr = _arraylike(full_name, a)
    nd = util.aval(arr).ndim
    if s is not None:
        s = tuple(operator.index(v) for v in s)
        if any(v <= 0 for v in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    given_axes = axes
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if given_axes is not None:
        axes = tuple(range(nd - len(axes), nd))
        arr = _moveaxis(arr, tuple(given_axes), axes)
    shape = util.aval(arr).shape
    if s is not None:
        want = list(shape)
        for ax, v in zip(axes, s, strict=True):
            want[ax] = v
        if fft_type == FftType.IRFFT:
            want[-1] = want[-1] // 2 + 1
        arr = _fit(arr, tuple(want))
        lengths = list(s)
    elif fft_type == FftType.IRFFT:
        lengths = [shape[ax] for ax in list(axes)[:-1]]
        if len(axes):
            lengths.append(max(0, 2 * (shape[list(axes)[-1]] - 1)))
    else:
        lengths = [shape[ax] for ax in axes]
    out = _transform(arr, fft_type, lengths)
    if norm is not None:
        scale = _norm_scale(lengths, func_name, norm, util.aval(out).dtype)
        if scale is not None:
            out = lax.mul(out, lax.full((), scale, util.aval(out).dtype))
    if given_axes is not None:
        out = _moveaxis(out, tuple(axes), tuple(given_axes))
    return out


def _fit(x: Any, shape: tuple[int, ...]) -> Any:
    """Crop and zero-pad `x` to `shape` (at the ends of the axes)."""
    have = util.aval(x).shape
    if any(w < h for w, h in zip(shape, have, strict=True)):
        x = lax.slice(x, (0,) * len(shape), tuple(min(w, h) for w, h in zip(shape, have)))
        have = util.aval(x).shape
    if any(w > h for w, h in zip(shape, have, strict=True)):
        zero = lax.full((), 0, util.aval(x).dtype)
        x = lax.pad(x, zero, [(0, w - h, 0) for w, h in zip(shape, have, strict=True)])
    return x


def _axis_check_1d(func_name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        full_name = _PREFIX + func_name
        raise ValueError(
            f"{full_name} does not support multiple axes. Please use {full_name}n. "
            f"Got axis = {axis!r}."
        )


def _fft_core_1d(
    func_name: str, fft_type: FftType, a: Any, n: int | None, axis: Any, norm: str | None
) -> Any:
    _axis_check_1d(func_name, axis)
    return _fft_core(
        func_name, fft_type, a, None if n is None else [n], None if axis is None else [axis], norm
    )


def _fft_core_2d(
    func_name: str,
    fft_type: FftType,
    a: Any,
    s: Sequence[int] | None,
    axes: Sequence[int],
    norm: str | None,
) -> Any:
    if len(axes) != 2:
        raise ValueError(f"{_PREFIX + func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


_STATIC_1D = ("n", "axis", "norm")
_STATIC_ND = ("s", "axes", "norm")


@eager_jit(static_argnames=_STATIC_1D)
def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The 1-D discrete Fourier transform along `axis` (cropped or zero-padded to `n`)."""
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


@eager_jit(static_argnames=_STATIC_1D)
def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The 1-D inverse discrete Fourier transform."""
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


@eager_jit(static_argnames=_STATIC_1D)
def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The 1-D transform of a real array: the n // 2 + 1 non-negative frequencies."""
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


@eager_jit(static_argnames=_STATIC_1D)
def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of rfft: a real array of length n (default 2 (m - 1))."""
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


@eager_jit(static_argnames=_STATIC_1D)
def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a Hermitian-symmetric signal given by its first half: a real
    spectrum of length n (default 2 (m - 1))."""
    conj_a = ufuncs.conj(a)
    _axis_check_1d("hfft", axis)
    nn = (util.aval(conj_a).shape[axis] - 1) * 2 if n is None else n
    out = _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm)
    return lax.mul(out, lax.full((), nn, util.aval(out).dtype))


@eager_jit(static_argnames=_STATIC_1D)
def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of hfft: the first n // 2 + 1 values of a Hermitian-symmetric signal."""
    _axis_check_1d("ihfft", axis)
    arr = creation.asarray(a)
    nn = util.aval(arr).shape[axis] if n is None else n
    out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return lax.mul(ufuncs.conj(out), lax.full((), 1 / nn, util.aval(out).dtype))


@eager_jit(static_argnames=_STATIC_ND)
def fftn(
    a: Any,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The N-D discrete Fourier transform over `axes` (all by default)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


@eager_jit(static_argnames=_STATIC_ND)
def ifftn(
    a: Any,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The N-D inverse discrete Fourier transform."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


@eager_jit(static_argnames=_STATIC_ND)
def rfftn(
    a: Any,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The N-D transform of a real array (the last axis halved)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


@eager_jit(static_argnames=_STATIC_ND)
def irfftn(
    a: Any,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The inverse of rfftn."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


@eager_jit(static_argnames=_STATIC_ND)
def fft2(
    a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The 2-D discrete Fourier transform."""
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


@eager_jit(static_argnames=_STATIC_ND)
def ifft2(
    a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The 2-D inverse discrete Fourier transform."""
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


@eager_jit(static_argnames=_STATIC_ND)
def rfft2(
    a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The 2-D transform of a real array."""
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


@eager_jit(static_argnames=_STATIC_ND)
def irfft2(
    a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The inverse of rfft2."""
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _freq_args(name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(
            f"The n argument of jax.numpy.fft.{name} only takes an int. Got n = {list(n)}."
        )
    if isinstance(d, (list, tuple)):
        raise ValueError(
            f"The d argument of jax.numpy.fft.{name} only takes a single value. Got d = {list(d)}."
        )


def _placed(x: Any, device: Any) -> Any:
    if device is None:
        return x
    return devices.put(x, device, commit=True)


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an n-point fft: [0, 1, ..., -2, -1] / (d n)."""
    out_dt = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype))
    _freq_args("fftfreq", n, d)
    dt = out_dt if out_dt.kind in "fc" else dtypes.default_float()
    dt = dtypes.component(dt)
    i = creation.arange(n, dtype=dt)
    half = lax.full((), n // 2, dt)
    k = lax.sub(lax.rem(lax.add(i, half), lax.full((), n, dt)), half)
    out = lax.div(k, _scalar_array(d, n, dt))
    return _placed(lax.convert_element_type(out, out_dt), device)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d n)."""
    dt = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype))
    _freq_args("rfftfreq", n, d)
    k = creation.arange(0, n // 2 + 1, dtype=dtypes.component(dt))
    if dt.kind == "c":
        k = lax.convert_element_type(k, dt)
    out = ufuncs.true_divide(k, _scalar_array(d, n, dt))
    return _placed(out, device)


def _scalar_array(d: Any, n: int, dt: dtypes.DType) -> Any:
    """d * n as a 0-d array of `dt` (d may be an array)."""
    if isinstance(d, core.Tracer) or hasattr(d, "_exp"):
        return lax.convert_element_type(lax.mul(d, lax.full((), n, util.aval(d).dtype)), dt)
    return creation.asarray(d * n, dtype=dt)


def fftshift(x: Any, axes: int | Sequence[int] | None = None) -> Any:
    """Shift the zero frequency to the center (roll each axis by half its length)."""
    x = _arraylike("fftshift", x)
    shape = util.aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
        shift: Any = [d // 2 for d in shape]
    elif isinstance(axes, int):
        shift = shape[axes] // 2
    else:
        shift = [shape[ax] // 2 for ax in axes]
    return _roll(x, shift, axes)


def ifftshift(x: Any, axes: int | Sequence[int] | None = None) -> Any:
    """The inverse of fftshift."""
    x = _arraylike("ifftshift", x)
    shape = util.aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
        shift: Any = [-(d // 2) for d in shape]
    elif isinstance(axes, int):
        shift = -(shape[axes] // 2)
    else:
        shift = [-(shape[ax] // 2) for ax in axes]
    return _roll(x, shift, axes)


__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
