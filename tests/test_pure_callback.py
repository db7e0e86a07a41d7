"""`pure_callback` against real JAX: pytrees and keywords, re-running under jit, every
`vmap_method` (the callback sees JAX's shapes), and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.experimental
import webjax.image
import webjax.numpy as jnp
import webjax.ops
import webjax.typing

jax = pytest.importorskip("jax")
R = np.random.RandomState(0)


def close(got: Any, want: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


def _host_sin(x: Any) -> Any:
    return np.sin(np.asarray(x)) * 2


def test_pure_callback(device: Any) -> None:
    x = f32(5)
    spec = webjax.ShapeDtypeStruct((5,), jnp.float32)
    want = np.sin(x) * 2
    close(webjax.pure_callback(_host_sin, spec, jnp.asarray(x)), want, 1e-6)
    close(
        webjax.jit(lambda v: webjax.pure_callback(_host_sin, spec, v) + 1)(jnp.asarray(x)),
        want + 1,
        1e-6,
    )
    calls: list[int] = []

    def counted(v: Any) -> Any:
        calls.append(1)
        return np.asarray(v) * 3

    f = webjax.jit(lambda v: webjax.pure_callback(counted, spec, v))
    close(f(jnp.asarray(x)), x * 3, 1e-6)
    close(f(jnp.asarray(x + 1)), (x + 1) * 3, 1e-6)  # runs again on the new values
    assert len(calls) >= 2
    # pytrees in and out, keyword arguments, other result dtypes
    out = webjax.pure_callback(
        lambda a, b, scale: {"s": np.asarray(a + b["y"]) * scale, "n": np.int32(3)},
        {"s": spec, "n": jax.ShapeDtypeStruct((), np.int32)},
        jnp.asarray(x),
        {"y": jnp.ones(5)},
        scale=2.0,
    )
    close(out["s"], (x + 1) * 2, 1e-6)
    assert out["n"].dtype == jnp.int32 and int(out["n"]) == 3


@pytest.mark.parametrize(
    "method",
    ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized"],
)
def test_pure_callback_vmap(method: str) -> None:
    shapes: list[tuple] = []

    def cb(a: Any, b: Any) -> Any:
        shapes.append((np.shape(a), np.shape(b)))
        return np.asarray(a) + np.asarray(b)

    def fn(ns: Any, a: Any, b: Any) -> Any:
        spec = ns.ShapeDtypeStruct(a.shape, a.dtype)
        return ns.pure_callback(cb, spec, a, b, vmap_method=method)

    a, b = f32(3, 2), f32(2)
    got = webjax.vmap(lambda u, v: fn(webjax, u, v), in_axes=(0, None))(jnp.asarray(a), b)
    mine = list(shapes)
    shapes.clear()
    want = jax.vmap(lambda u, v: fn(jax, u, v), in_axes=(0, None))(a, b)
    close(got, want, 1e-6)
    assert mine == shapes  # the callback sees the same shapes as under JAX


def test_pure_callback_errors() -> None:
    spec = webjax.ShapeDtypeStruct((2,), jnp.float32)
    f = lambda v: webjax.pure_callback(lambda a: np.asarray(a), spec, v)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        webjax.vmap(f)(jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="do not support JVP"):
        webjax.grad(lambda v: f(v).sum())(jnp.ones(2))
    with pytest.raises(ValueError, match="vmap_method must be"):
        webjax.pure_callback(lambda a: a, spec, jnp.ones(2), vmap_method="bogus")
    with pytest.raises(RuntimeError, match="shape"):
        webjax.pure_callback(lambda a: np.ones(3, np.float32), spec, jnp.ones(2))
