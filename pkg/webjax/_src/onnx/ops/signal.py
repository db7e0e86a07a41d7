"""Signal processing: the window functions (Hann, Hamming, Blackman), DFT, STFT,
MelWeightMatrix."""

from __future__ import annotations

import math
from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.numpy import fft as jfft
from webjax._src.onnx import host
from webjax._src.onnx.ops.common import Node, dev, norm_axis, onnx_dtype, scalar, scalar_int
from webjax._src.onnx.registry import op


def _window(node: Node, size: Any, coefficients: tuple[float, ...]) -> Any:
    n = scalar_int(node, size, "size")
    periodic = node.attr("periodic", 1)
    denom = n if periodic else n - 1
    w = [0.0] * n
    for i, c in enumerate(coefficients):
        w = [v + (-1) ** i * c * math.cos(2 * math.pi * i * k / denom) for k, v in enumerate(w)]
    return host.asarray(w, host.float64).astype(onnx_dtype(node, node.attr("output_datatype", 1)))


@op("HannWindow")
def hann_window(node: Node, size: Any) -> Any:
    return _window(node, size, (0.5, 0.5))


@op("HammingWindow")
def hamming_window(node: Node, size: Any) -> Any:
    return _window(node, size, (25 / 46, 21 / 46))


@op("BlackmanWindow")
def blackman_window(node: Node, size: Any) -> Any:
    return _window(node, size, (0.42, 0.5, 0.08))


def _complex(x: Any) -> Any:
    """A [..., 1] (real) or [..., 2] (real, imaginary) signal as complex values."""
    if x.shape[-1] == 1:
        return x[..., 0].astype(dtypes.complex64)
    return (x[..., 0] + 1j * x[..., 1]).astype(dtypes.complex64)


def _pair(z: Any, dtype: Any) -> Any:
    return jnp.stack([jnp.real(z), jnp.imag(z)], axis=-1).astype(dtype)


@op("DFT")
def dft(node: Node, x: Any, length: Any = None, axis_in: Any = None) -> Any:
    x = dev(x)
    if node.opset < 20:
        axis = node.attr("axis", 1)
    else:
        axis = -2 if axis_in is None else scalar_int(node, axis_in, "axis")
    axis = norm_axis(axis, x.ndim)
    if axis == x.ndim - 1:
        raise node.unsupported("axis on the real/imaginary dimension")
    n = None if length is None else scalar_int(node, length, "dft_length")
    z = _complex(x)
    inverse, onesided = node.attr("inverse", 0), node.attr("onesided", 0)
    if inverse and onesided:  # a half spectrum back to a real signal
        return jnp.expand_dims(jfft.irfft(z, n=n, axis=axis), -1).astype(x.dtype)
    if inverse:
        out = jfft.ifft(z, n=n, axis=axis)
    else:
        out = jfft.fft(z, n=n, axis=axis)
    if onesided:
        keep = out.shape[axis] // 2 + 1
        out = jnp.take(out, jnp.arange(keep), axis=axis)
    return _pair(out, x.dtype)


@op("STFT")
def stft(node: Node, signal: Any, step: Any, window: Any = None, frame_length: Any = None) -> Any:
    signal = dev(signal)
    hop = scalar_int(node, step, "frame_step")
    if frame_length is not None:
        n = scalar_int(node, frame_length, "frame_length")
    else:
        n = int(window.shape[0])
    z = _complex(signal)  # [batch, length]
    frames = (z.shape[1] - n) // hop + 1
    starts = [[f * hop + i for i in range(n)] for f in range(frames)]
    framed = z[:, jnp.asarray(starts, dtype=dtypes.int32)]  # [batch, frames, n]
    if window is not None:
        framed = framed * dev(window).astype(dtypes.complex64)
    out = jfft.fft(framed, axis=-1)
    if node.attr("onesided", 1):
        out = out[..., : n // 2 + 1]
    return _pair(out, signal.dtype)


@op("MelWeightMatrix")
def mel_weight_matrix(
    node: Node, num_mel: Any, dft_length: Any, rate: Any, lower: Any, upper: Any
) -> Any:
    n_mel = scalar_int(node, num_mel, "num_mel_bins")
    n_dft = scalar_int(node, dft_length, "dft_length")
    sr = scalar_int(node, rate, "sample_rate")
    lo, hi = (float(scalar(node, v, "frequency edges")) for v in (lower, upper))
    n_spec = n_dft // 2 + 1

    def to_mel(f: float) -> float:
        return 2595 * math.log10(1 + f / 700)

    mel = host.linspace(to_mel(lo), to_mel(hi), n_mel + 2)
    bins = [math.floor((n_dft + 1) * (700 * (10 ** (m / 2595) - 1)) / sr) for m in mel]
    out = [[0.0] * n_mel for _ in range(n_spec)]
    for i in range(n_mel):
        left, center, right = bins[i], bins[i + 1], bins[i + 2]
        if center == left:
            out[center][i] = 1.0
        else:
            for k in range(left, center + 1):
                out[k][i] = (k - left) / (center - left)
        if right != center:
            for k in range(center, right):
                out[k][i] = (right - k) / (right - center)
    dt = onnx_dtype(node, node.attr("output_datatype", 1))
    return host.asarray(out, host.float64).astype(dt)
