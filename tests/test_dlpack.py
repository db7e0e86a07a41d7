"""DLPack (webjax._src.dispatch.dlpack): webjax arrays to NumPy and back on every device, every
dtype, strided and empty views, the capsule's lifetime, and JAX's answers for the same calls."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import webjax
import webjax.dlpack
import webjax.numpy as wnp
from webjax._src.dispatch import dlpack as dl

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "float32"]
DTYPES += ["complex64"]


def _values(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "bool":
        return (np.arange(n) % 3 == 0).reshape(shape)
    if dtype == "complex64":
        return (np.arange(n) - 2.5 + 1j * np.arange(n)).astype(dtype).reshape(shape)
    return (np.arange(n) % 100).astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_with_numpy(dtype, device):
    want = _values(dtype, (2, 3, 4))
    x = wnp.from_dlpack(want, device=device)
    assert x.dtype == want.dtype and x.shape == want.shape and x.committed
    assert x.devices() == {device}
    back = np.from_dlpack(x)  # webjax -> NumPy through the capsule
    np.testing.assert_array_equal(back, want)
    assert back.dtype == want.dtype
    assert x.__dlpack_device__() == (1, 0) and x.__dlpack_device__()[0].name == "kDLCPU"


def test_bfloat16_between_webjax_arrays(device):
    x = wnp.asarray([1.5, -2.25, 3e38], wnp.bfloat16)
    y = wnp.from_dlpack(x, device=device)
    assert y.dtype == wnp.bfloat16 and y.tolist() == x.tolist()


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a.T,
        lambda a: a[:, ::2],
        lambda a: a[::-1],
        lambda a: a[1:2],
        lambda a: a[:0],
        lambda a: a[0, 0, ...],
        lambda a: np.broadcast_to(a[:1], (3, 4)),
    ],
    ids=["transposed", "stepped", "reversed", "row", "empty", "scalar", "broadcast"],
)
def test_strided_numpy_views_are_read_in_order(view):
    a = view(np.arange(12, dtype=np.float32).reshape(3, 4))
    x = wnp.from_dlpack(a)
    assert x.shape == a.shape and not x.committed
    np.testing.assert_array_equal(np.asarray(x), a)


def test_as_jax_for_the_same_inputs():
    for a in (np.arange(6).reshape(2, 3).T, np.array([True, False]), np.asarray(2.5, np.float32)):
        theirs, ours = jnp.from_dlpack(a), wnp.from_dlpack(a)
        assert str(ours.dtype) == str(theirs.dtype) and ours.shape == theirs.shape
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    # 64-bit without x64: narrowed as JAX does
    assert str(wnp.from_dlpack(np.arange(3, dtype=np.int64)).dtype) == "int32"
    with webjax.enable_x64(True):
        assert str(wnp.from_dlpack(np.arange(3, dtype=np.int64)).dtype) == "int64"
    for bad in ([1, 2], 3.0):
        with pytest.raises(TypeError) as theirs:
            jnp.from_dlpack(bad)
        with pytest.raises(TypeError) as ours:
            wnp.from_dlpack(bad)
        assert str(ours.value) == str(theirs.value)
    assert all(
        webjax.dlpack.is_supported_dtype(t) == jax.dlpack.is_supported_dtype(t)
        for t in ("bool", "int8", "uint32", "float16", "bfloat16", "float32", "complex64")
    )


def test_capsules_release_their_copies():
    x = wnp.arange(1000.0)
    before = len(dl._ctypes().live)
    capsules = [x.__dlpack__() for _ in range(5)]
    assert len(dl._ctypes().live) == before + 5
    del capsules  # never consumed: the capsule's destructor frees the copy
    gc.collect()
    assert len(dl._ctypes().live) == before
    np.from_dlpack(x)  # consumed: the consumer calls the deleter
    wnp.from_dlpack(x)
    gc.collect()
    assert len(dl._ctypes().live) == before


def test_export_options():
    x = wnp.ones(3)
    assert x.__dlpack__(max_version=(1, 0)) is not None  # a legacy capsule, as JAX's
    assert x.__dlpack__(dl_device=(1, 0), copy=True) is not None
    with pytest.raises(ValueError, match="stream"):
        x.__dlpack__(stream=1)
    with pytest.raises(ValueError, match="dl_device"):
        x.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="copy=False"):  # the array API says
        x.__dlpack__(copy=False)
    with pytest.raises(BufferError, match="copy=False"):  # the array API says
        wnp.from_dlpack(np.ones(2), copy=False)
    seen = []
    webjax.jit(lambda t: seen.append(hasattr(t, "__dlpack__")) or t)(x)
    assert seen == [False]  # tracers have no values to export
