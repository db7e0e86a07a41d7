"""The thin end-to-end slice on every backend: creation, arithmetic, sum, reshape, reads."""

from __future__ import annotations

import math

import pytest

import webjax
import webjax.numpy as jnp

np = pytest.importorskip("numpy")
try:
    import jax
    import jax.numpy as rjnp
except ImportError:  # the oracle is optional
    jax = None
    rjnp = None


def test_issue_example(device):
    x = (jnp.arange(6).reshape(2, 3) * 2).sum()
    assert str(x) == "30"
    assert x.item() == 30
    assert x.dtype == jnp.int32
    assert x.device == device


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_arithmetic_matches_numpy(device, dtype):
    a_np = (np.arange(12).reshape(3, 4) - 5).astype(dtype)
    b_np = (np.arange(12).reshape(3, 4) % 5 + 1).astype(dtype)
    a, b = jnp.array(a_np), jnp.array(b_np)
    np.testing.assert_array_equal(np.asarray(a + b), a_np + b_np)
    np.testing.assert_array_equal(np.asarray(a - b), a_np - b_np)
    np.testing.assert_array_equal(np.asarray(a * b), a_np * b_np)
    np.testing.assert_allclose(np.asarray(a / b), (a_np / b_np).astype(np.float32), rtol=1e-7)
    assert (a / b).dtype == jnp.float32


def test_sum_axes_and_reshape(device):
    x_np = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5
    x = jnp.asarray(x_np)
    for axis in [None, 0, 1, 2, (0, 2), (1, 2), -1]:
        got = np.asarray(x.sum(axis=axis))
        np.testing.assert_allclose(got, x_np.sum(axis=axis), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(x.reshape(4, 6)), x_np.reshape(4, 6))
    np.testing.assert_array_equal(np.asarray(x.reshape(-1)), x_np.reshape(-1))
    np.testing.assert_allclose(np.asarray(x.reshape(6, 4).sum(axis=0)), x_np.reshape(6, 4).sum(0))


def test_creation(device):
    assert jnp.zeros(3).tolist() == [0.0, 0.0, 0.0]
    assert jnp.ones((2, 2), dtype=jnp.int32).tolist() == [[1, 1], [1, 1]]
    assert jnp.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert jnp.arange(1, 10, 3).tolist() == [1, 4, 7]
    assert jnp.arange(4.0).dtype == jnp.float32
    assert jnp.array([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert jnp.array([1.5, 2]).dtype == jnp.float32
    assert jnp.asarray(True).dtype == jnp.bool_
    assert jnp.array([]).shape == (0,)
    assert jnp.zeros((0, 3)).sum(axis=0).tolist() == [0.0, 0.0, 0.0]
    assert jnp.array(3.5).item() == 3.5
    assert float(jnp.array(2.5)) == 2.5 and int(jnp.array(7)) == 7


def test_weak_types_and_promotion(device):
    i = jnp.arange(3)
    assert (i + 2).dtype == jnp.int32 and not (i + 2).weak_type
    assert (i + 2.5).dtype == jnp.float32
    assert (i * 1.5).tolist() == [0.0, 1.5, 3.0]
    u = jnp.array([250, 3], dtype=jnp.uint8)
    assert (u * 2).dtype == jnp.uint8
    assert (u * 2).tolist() == [244, 6]  # wraps like JAX
    assert jnp.asarray(1.0).weak_type and not jnp.zeros(()).weak_type
    assert (2 - i).tolist() == [2, 1, 0] and (6 / (i + 1)).tolist() == [6.0, 3.0, 2.0]


def test_float32_rounding_exact(device):
    x = jnp.array([0.1, 1e-8, 3.0])
    y = (x + 1.0) - 1.0
    expected = (np.array([0.1, 1e-8, 3.0], np.float32) + np.float32(1)) - np.float32(1)
    assert np.asarray(y).tolist() == expected.tolist()


def test_repr_and_print(device, capsys):
    x = jnp.arange(6).reshape(2, 3) * 2
    assert repr(x) == "Array([[ 0,  2,  4],\n       [ 6,  8, 10]], dtype=int32)"
    print(x)
    assert capsys.readouterr().out == "[[ 0  2  4]\n [ 6  8 10]]\n"
    assert repr(jnp.array(1.0)) == "Array(1., dtype=float32, weak_type=True)"
    assert repr(jnp.zeros((0, 3))) == "Array([], shape=(0, 3), dtype=float32)"


@pytest.mark.skipif(jax is None, reason="real JAX (the oracle) is not installed")
def test_repr_matches_jax(device):
    cases = [
        "arange(100)",
        "arange(3.0) / 3",
        "zeros((2, 3, 4))",
        "array([1.5, jnp.nan, jnp.inf])",
        "array([1e-5, 1e6])",
        "array([True, False])",
        "arange(2000.)",
        "array(3, dtype=jnp.uint8)",
        "arange(20.).reshape(4, 5) * 12345.678",
        "full((2,), 3.0)",
        "arange(2000).reshape(40, 50)",
    ]
    for case in cases:
        ours = eval("jnp." + case)
        theirs = eval("rjnp." + case.replace("jnp.", "rjnp."))
        assert repr(ours) == repr(theirs), case
        assert str(ours) == str(theirs), case


def test_array_interop(device):
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    a = np.asarray(x)
    assert a.dtype == np.float32 and a.shape == (2, 3)
    assert jnp.asarray(a).tolist() == x.tolist()
    assert jnp.asarray(np.float64(2.5)).dtype == jnp.float32  # canonicalized without x64


def test_errors(device):
    with pytest.raises(TypeError, match="cannot reshape array of shape"):
        jnp.ones(6).reshape(4, 2)
    with pytest.raises(TypeError, match=r"add got incompatible shapes"):
        jnp.ones(3) + jnp.ones(4)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.ones((2, 3)).sum(axis=2)
    with pytest.raises(TypeError, match="same dtypes"):
        webjax.lax.add(jnp.ones(3), jnp.ones(3, dtype=jnp.int32))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(jnp.ones(3))


def test_lazy_work_is_not_run(device):
    from webjax._src import profiler

    before = profiler.dispatch_count.get(device.platform, 0)
    x = jnp.arange(1000.0) * 3.0 + 1.0
    del x  # dropped before any read: nothing runs
    y = (jnp.arange(10.0) * 2.0 + 1.0).sum()  # elementwise chain fuses into the reduction
    assert y.item() == 100.0
    assert profiler.dispatch_count.get(device.platform, 0) - before == 1


def test_devices():
    devs = webjax.devices()
    assert devs and devs[0].platform == webjax.default_backend()
    assert webjax.devices("cpu")[0].platform == "cpu"
    assert repr(webjax.devices("cpu")[0]) == "CpuDevice(id=0)"
    with webjax.default_device(webjax.devices("cpu")[0]):
        assert jnp.zeros(2).device.platform == "cpu"
    with pytest.raises(RuntimeError, match="Unknown backend"):
        webjax.devices("tpu")


def test_available_backends_listed():
    """Lists what this host has: cpu always; wasm with wasmtime; webgpu with an adapter."""
    avail = webjax.available_backends()
    print("available backends:", avail)
    assert "cpu" in avail
    try:
        import wasmtime  # noqa: F401

        has_wasmtime = True
    except ImportError:
        has_wasmtime = False
    assert (
        "wasm" in avail
    ) == has_wasmtime or "wasm" not in webjax._src.runtime.backend.known_platforms()


def test_device_put_between_backends():
    avail = webjax.available_backends()
    x = jnp.arange(4.0) * 2
    for p in avail:
        y = webjax.device_put(x, webjax.devices(p)[0])
        assert y.device.platform == p
        assert (y + 1).tolist() == [1.0, 3.0, 5.0, 7.0]
    assert math.isclose(float(x.sum()), 12.0)
