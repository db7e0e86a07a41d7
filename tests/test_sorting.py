"""sort / argsort / top_k on every backend, on both evaluation paths: rows of at most
`BITONIC_MIN` elements rank every pair (3 kernels), longer rows run the bitonic network.
Oracles: NumPy (stable sorts) and real JAX where installed (NaN order, top_k ties)."""

from __future__ import annotations

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax import lax
from webjax._src.lax import sorting

jax = pytest.importorskip("jax")

SIZES = [7, sorting.BITONIC_MIN + 1, 1000]  # rank path, just past it, a padded network


def _data(n: int, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype[0] in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), n).astype(dtype)
    x = rng.integers(-20, 20, n).astype(np.float32) / 4  # many ties
    x[:: max(n // 5, 1)] = np.nan
    x[1] = -0.0
    x[2] = np.inf
    x[3] = -np.inf
    return x.astype(dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(
    "dtype", ["float32", "float16", "int8", "uint8", "int32", "uint32", "bool"]
)
def test_sort_and_argsort_match_numpy(device, n: int, dtype: str) -> None:
    x = _data(n, dtype)
    got = np.asarray(jnp.sort(jnp.asarray(x)))
    np.testing.assert_array_equal(got, np.sort(x))
    np.testing.assert_array_equal(
        np.asarray(jnp.argsort(jnp.asarray(x), stable=True)), np.argsort(x, kind="stable")
    )


@pytest.mark.parametrize("n", SIZES)
def test_sort_along_inner_axes_and_multiple_keys(device, n: int) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, (3, n, 2)).astype(np.float32)
    y = rng.integers(0, 3, (3, n, 2)).astype(np.int32)
    z = rng.normal(size=(3, n, 2)).astype(np.float32)
    got = lax.sort((jnp.asarray(x), jnp.asarray(y), jnp.asarray(z)), dimension=1, num_keys=2)
    want = jax.lax.sort((x, y, z), dimension=1, num_keys=2)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("n", SIZES)
def test_top_k_matches_jax(device, n: int) -> None:
    x = _data(2 * n, "float32", seed=2).reshape(2, n)
    k = min(5, n)
    vals, idx = lax.top_k(jnp.asarray(x), k)
    want_vals, want_idx = jax.lax.top_k(x, k)
    np.testing.assert_array_equal(np.asarray(vals), np.asarray(want_vals))
    np.testing.assert_array_equal(np.asarray(idx), np.asarray(want_idx))


def test_network_jit_vmap_and_grad(device) -> None:
    n = sorting.BITONIC_MIN * 2 + 3
    x = jnp.asarray(np.random.default_rng(3).normal(size=(4, n)).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(webjax.jit(jnp.sort)(x)), np.asarray(jnp.sort(x)))
    rows = np.stack([np.asarray(jnp.argsort(x[i])) for i in range(4)])
    np.testing.assert_array_equal(np.asarray(webjax.vmap(jnp.argsort)(x)), rows)
    w = jnp.arange(n, dtype=jnp.float32)
    g = webjax.grad(lambda v: jnp.sum(jnp.sort(v) * w))(x[0])
    order = np.argsort(np.asarray(x[0]), kind="stable")
    want = np.zeros(n, np.float32)
    want[order] = np.arange(n)
    np.testing.assert_array_equal(np.asarray(g), want)


def test_long_sort_and_top_k_under_disable_jit(device):
    # the eager network normally runs as a cached jit program; with jit disabled it is built
    # directly (the program would call the sort impl again, forever)
    x = np.random.RandomState(5).standard_normal(500).astype(np.float32)
    with webjax.disable_jit():
        np.testing.assert_array_equal(np.asarray(jnp.sort(jnp.asarray(x))), np.sort(x))
        vals, idx = webjax.lax.top_k(jnp.asarray(x), 3)
    np.testing.assert_array_equal(np.asarray(vals), np.sort(x)[::-1][:3])
    np.testing.assert_array_equal(np.asarray(idx), np.argsort(-x, kind="stable")[:3])
