"""Scatters and x.at[...] updates. Scatters with many updates sort them by target (bitonic
network + segmented scan + binary search); forced onto that path, every scatter kind must equal
NumPy's unbuffered ufunc.at and real JAX, with duplicates, dropped and clipped indices, and
windows. The `mode`s of x.at[...] follow JAX (updates drop out-of-bounds indices by default)."""

from __future__ import annotations

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax._src.lax import slicing

jax = pytest.importorskip("jax")


@pytest.fixture
def sorted_path(monkeypatch):
    monkeypatch.setattr(slicing, "SORTED_SCATTER_MIN_WORK", 0)


KINDS = {
    "add": (lambda a, i, v: a.at[i].add(v), np.add),
    "mul": (lambda a, i, v: a.at[i].multiply(v), np.multiply),
    "min": (lambda a, i, v: a.at[i].min(v), np.minimum),
    "max": (lambda a, i, v: a.at[i].max(v), np.maximum),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_combining_scatters_with_duplicates(device, sorted_path, kind: str, dtype: str) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 5, 40).astype(dtype)
    idx = rng.integers(0, 40, 300)
    v = rng.integers(1, 3, 300).astype(dtype)
    fn, ufunc = KINDS[kind]
    want = a.copy()
    ufunc.at(want, idx, v)
    got = fn(jnp.asarray(a), jnp.asarray(idx), jnp.asarray(v))
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(webjax.jit(fn)(a, idx, v)), want)


def test_float_sums_and_rows(device, sorted_path) -> None:
    rng = np.random.default_rng(1)
    table = rng.normal(size=(50, 8)).astype(np.float32)
    idx = rng.integers(0, 50, 700)
    rows = rng.normal(size=(700, 8)).astype(np.float32)
    got = jnp.asarray(table).at[idx].add(jnp.asarray(rows))  # window dims: whole rows
    want = jax.numpy.asarray(table).at[idx].add(rows)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    g = webjax.grad(lambda t: jnp.sum(jnp.sin(t[idx])))(jnp.asarray(table))  # gather transpose
    gw = jax.grad(lambda t: jax.numpy.sum(jax.numpy.sin(t[idx])))(table)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gw), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", [None, "drop", "clip"])
@pytest.mark.parametrize("forced", [False, True])
def test_at_modes_match_jax(device, monkeypatch, mode, forced: bool) -> None:
    """x.at[...] drops out-of-bounds updates by default (after wrapping negative indices);
    'clip' clamps; the last of duplicate `set`s wins; get(mode='fill') fills."""
    if forced:
        monkeypatch.setattr(slicing, "SORTED_SCATTER_MIN_WORK", 0)
    a = np.zeros(10, np.float32)
    idx = np.array([3, 3, -1, 12, 5, 3, 9, 5, 0, 11, -11])
    v = np.arange(1, 12, dtype=np.float32)
    jx = jax.numpy.asarray(a)
    for op in ("set", "add", "max"):
        got = getattr(jnp.asarray(a).at[idx], op)(jnp.asarray(v), mode=mode)
        want = getattr(jx.at[idx], op)(v, mode=mode)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=op)
    m = np.zeros((3, 4), np.float32)
    rows, cols = np.array([[0], [2], [5]]), np.array([1, 7, -1])
    got = jnp.asarray(m).at[rows, cols].add(1.0, mode=mode)
    want = jax.numpy.asarray(m).at[rows, cols].add(1.0, mode=mode)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    got = jnp.asarray(m).at[np.array([1, 4]), 1:3].add(2.0, mode=mode)
    want = jax.numpy.asarray(m).at[np.array([1, 4]), 1:3].add(2.0, mode=mode)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    r = np.arange(10.0, dtype=np.float32)
    np.testing.assert_array_equal(
        np.asarray(jnp.asarray(r).at[idx].get(mode="fill", fill_value=-5.0)),
        np.asarray(jax.numpy.asarray(r).at[idx].get(mode="fill", fill_value=-5.0)),
    )
    np.testing.assert_array_equal(
        np.asarray(jnp.asarray(r).at[idx].get()), np.asarray(jax.numpy.asarray(r).at[idx].get())
    )
    with pytest.raises(ValueError, match="mode"):
        jnp.asarray(a).at[idx].set(1.0, mode="bogus")


def test_bool_scatters(device, sorted_path) -> None:
    """Bool scatter-add/mul raise JAX's TypeError (lax and x.at alike); max/set work."""
    a = np.zeros(6, bool)
    idx = np.array([[1], [1], [4], [4], [4]])
    v = np.array([True, False, False, False, True])
    dn = webjax.lax.ScatterDimensionNumbers((), (0,), (0,))
    with pytest.raises(TypeError, match="add does not accept dtype bool"):
        webjax.lax.scatter_add(jnp.asarray(a), jnp.asarray(idx), jnp.asarray(v), dn)
    got = jnp.asarray(a).at[idx[:, 0]].max(jnp.asarray(v))
    want = jax.numpy.asarray(a).at[idx[:, 0]].max(jax.numpy.asarray(v))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    with pytest.raises(TypeError, match="add does not accept dtype bool"):
        jnp.asarray(a).at[idx[:, 0]].add(True)
    with pytest.raises(TypeError, match="mul does not accept dtype bool"):
        jnp.asarray(a).at[2].multiply(True)


def test_scatter_extremum_gradients_share_ties_as_jax(device) -> None:
    idx = np.array([0, 0, 1])
    for op, u in (("max", [1.0, 1.0, 2.0]), ("min", [-1.0, -3.0, 2.0])):
        u = np.array(u, np.float32)
        o = np.array([1.0, 0.0, 0.0], np.float32)

        def f(ns, o, u, op=op):
            return getattr(ns.numpy.asarray(o).at[idx], op)(u).sum()

        for argnums in (0, 1):
            got = webjax.grad(lambda o, u: f(webjax, o, u), argnums)(jnp.asarray(o), jnp.asarray(u))
            want = jax.grad(lambda o, u: f(jax, o, u), argnums)(o, u)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
