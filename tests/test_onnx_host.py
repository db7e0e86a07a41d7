"""webjax.onnx's host values (`_src/onnx/host.py`, pure Python) against NumPy: element rounding
and wrapping per dtype, broadcasting arithmetic, comparisons, indexing and data movement,
reductions and scans, the bytes codecs and the way to the device."""

from __future__ import annotations

import numpy as np
import pytest

import webjax.numpy as jnp
from webjax._src.onnx import host

RNG = np.random.default_rng(7)


def h(a: np.ndarray) -> host.HostArray:
    return host.asarray(a.tolist(), a.dtype.name)


def same(got: host.HostArray, want: np.ndarray) -> None:
    want = np.asarray(want)
    assert isinstance(got, host.HostArray)
    assert got.dtype.name == want.dtype.name, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


F32 = (RNG.normal(size=(3, 4)) * 3).astype(np.float32)
G32 = (RNG.normal(size=(4,)) * 3 + 0.5).astype(np.float32)
I64 = RNG.integers(-50, 50, size=(3, 4)).astype(np.int64)
J64 = RNG.integers(1, 9, size=(1, 4)).astype(np.int64)


@pytest.mark.parametrize(
    "name",
    ["add", "subtract", "multiply", "divide", "maximum", "minimum", "mod", "fmod"],
)
def test_float32_binary_rounds_like_numpy(name: str) -> None:
    """Computed in double and rounded once: exactly float32's correctly rounded result."""
    same(getattr(host, name)(h(F32), h(G32)), getattr(np, name)(F32, G32))


def test_float32_power_within_an_ulp() -> None:
    """NumPy's float32 pow is not correctly rounded; ours (double, then rounded) is."""
    a, b = np.abs(F32) + 0.1, G32
    got = host.power(h(a), h(b))
    assert got.dtype.name == "float32"
    np.testing.assert_allclose(np.asarray(got), np.power(a, b), rtol=2.4e-7)


@pytest.mark.parametrize(
    "name",
    [
        "add",
        "subtract",
        "multiply",
        "floor_divide",
        "mod",
        "fmod",
        "maximum",
        "minimum",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "equal",
        "less",
        "greater_equal",
    ],
)
def test_int64_binary_with_broadcasting(name: str) -> None:
    same(getattr(host, name)(h(I64), h(J64)), getattr(np, name)(I64, J64))


def test_int64_is_exact_and_wraps() -> None:
    big = np.array([np.iinfo(np.int64).max, 2**40], np.int64)
    with np.errstate(over="ignore"):
        same(h(big) + 1, big + np.int64(1))
        same(h(big) * 3, big * np.int64(3))
    same(host.asarray([300, -1], "int64").astype("uint8"), np.array([300, -1]).astype(np.uint8))


@pytest.mark.parametrize(
    "name",
    ["sqrt", "exp", "log", "sin", "cos", "tanh", "floor", "ceil", "round", "abs", "sign"],
)
def test_float32_unary(name: str) -> None:
    x = np.array([0.0, 0.5, 1.5, 2.5, -2.5, 3.7, -0.2, 100.0, np.inf, np.nan], np.float32)
    if name in ("sqrt", "log"):
        x = np.abs(x)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    got = getattr(host, name)(h(x))
    assert got.dtype.name == "float32"
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-7, equal_nan=True)


def test_ieee_edges() -> None:
    x = np.array([0.0, -1.0, 1.0], np.float32)
    with np.errstate(all="ignore"):
        same(host.log(h(x)), np.log(x))
        same(host.divide(h(x), 0.0), x / np.float32(0))
        same(host.exp(host.asarray([1000.0], "float32")), np.exp(np.float32([1000.0])))
        logs = np.log(x + np.float32(0.5))
    same(host.isnan(host.log(h(x) + 0.5)), np.isnan(logs))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_narrow_float_rounding(dtype: str) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = np.array([1 / 3, 65519.0, 70000.0, -1e-8, 3.14159, 1.00390625, np.nan], np.float64)
    with np.errstate(over="ignore"):
        want = x.astype(np_dtype).astype(np.float64)
    got = np.asarray(host.asarray(x.tolist(), dtype).tolist(), np.float64)
    np.testing.assert_array_equal(got, want)


def test_indexing_and_movement() -> None:
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    hx = h(x)
    same(hx[1], x[1])
    same(hx[:, ::-2, 1:3], x[:, ::-2, 1:3])
    same(hx[..., -1], x[..., -1])
    same(hx[None, 0], x[None, 0])
    same(host.transpose(hx, (2, 0, 1)), x.transpose(2, 0, 1))
    same(hx.T, x.T)
    same(host.reshape(hx, (4, -1)), x.reshape(4, -1))
    same(host.squeeze(host.reshape(hx, (1, 2, 12))), x.reshape(1, 2, 12).squeeze())
    same(host.expand_dims(hx, 1), np.expand_dims(x, 1))
    same(host.concatenate([hx, hx[:, :1]], axis=1), np.concatenate([x, x[:, :1]], axis=1))
    same(host.stack([hx, hx], axis=2), np.stack([x, x], axis=2))
    idx = np.array([[2, 0], [1, 1]], np.int64)
    same(host.take(hx, h(idx), axis=2), np.take(x, idx, axis=2))
    same(host.take(hx, h(idx)), np.take(x, idx))
    same(host.broadcast_to(h(J64), (3, 4)), np.broadcast_to(J64, (3, 4)))
    same(host.tile(hx, (2, 1, 3)), np.tile(x, (2, 1, 3)))
    same(host.tile(h(J64), (2, 2, 1)), np.tile(J64, (2, 2, 1)))
    same(host.flip(hx, 1), np.flip(x, 1))
    same(host.where(hx > 10, hx, -1), np.where(x > 10, x, -1))
    for got, want in zip(host.nonzero(h(x % 5 == 0)), np.nonzero(x % 5 == 0)):
        same(got, want.astype(np.int64))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad(mode: str) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    widths = ((2, 1), (3, 5))
    kw = {"constant_values": 7.5} if mode == "constant" else {}
    same(host.pad(h(x), widths, mode=mode, **kw), np.pad(x, widths, mode=mode, **kw))


def test_reductions_and_scans() -> None:
    for axis in [None, 0, 1, (0, 1)]:
        for keepdims in (False, True):
            same(host.sum(h(I64), axis, keepdims), np.sum(I64, axis, keepdims=keepdims))
            same(host.max(h(F32), axis, keepdims), np.max(F32, axis, keepdims=keepdims))
            same(host.min(h(I64), axis, keepdims), np.min(I64, axis, keepdims=keepdims))
            np.testing.assert_allclose(
                np.asarray(host.mean(h(F32), axis, keepdims)),
                np.mean(F32, axis, keepdims=keepdims),
                rtol=1e-6,
            )
    same(host.prod(h(J64), 1), np.prod(J64, 1))
    same(host.argmax(h(F32), 1), np.argmax(F32, 1).astype(np.int64))
    same(host.argmin(h(I64), 0, keepdims=True), np.argmin(I64, 0, keepdims=True))
    same(host.cumsum(h(I64), 1), np.cumsum(I64, 1))
    same(host.cumprod(h(J64), 1), np.cumprod(J64, 1))


def test_arange_and_full() -> None:
    same(host.arange(2, 11, 3), np.arange(2, 11, 3))
    same(host.arange(5, dtype="float32"), np.arange(5, dtype=np.float32))
    same(host.full((2, 3), 1.5, "float32"), np.full((2, 3), 1.5, np.float32))
    same(host.zeros((0, 3), "int64"), np.zeros((0, 3), np.int64))


@pytest.mark.parametrize(
    "dtype",
    [
        "bool",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
    ],
)
def test_bytes_round_trip_and_device(dtype: str) -> None:
    a = (RNG.normal(size=(2, 3)) * 5).astype(dtype)
    lazy = host.HostArray.from_bytes(a.tobytes(), a.shape, host.asarray(a).dtype)
    same(lazy, a)
    assert host.encode(lazy.data, lazy.dtype) == a.tobytes()
    # on the device the 64-bit types narrow as webjax's asarray narrows NumPy's
    for value in (lazy, host.HostArray(lazy.data, lazy.shape, lazy.dtype)):
        got, want = jnp.asarray(value), jnp.asarray(a)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_operators_defer_to_device_arrays() -> None:
    x = jnp.asarray(F32)
    y = h(G32) * x  # HostArray.__mul__ answers NotImplemented, the Array's __rmul__ runs
    assert not isinstance(y, host.HostArray)
    np.testing.assert_allclose(np.asarray(y), G32 * F32, rtol=1e-6)


def test_view() -> None:
    a = np.array([1.0, -2.5], np.float32)
    same(host.view(h(a), "int32"), a.view(np.int32))
    same(host.view(h(a), "uint16"), a.view(np.uint16))
