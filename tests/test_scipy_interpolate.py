"""`jax.scipy.interpolate.RegularGridInterpolator` against real JAX: linear and nearest,
derivatives, jit and vmap, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.interpolate as winterp
from check_grads import check_grads
from jax_compare import close, raises_like

jax = pytest.importorskip("jax")
jjnp = jax.numpy
import jax.scipy.interpolate as jinterp  # noqa: E402

R = np.random.RandomState(0)


def f32(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return R.uniform(lo, hi, shape).astype(np.float32)


GRID = (np.array([0.0, 1.0, 2.5, 4.0], np.float32), np.array([-1.0, 0.0, 2.0], np.float32))


def _queries(n: int = 20) -> np.ndarray:
    q = np.stack([R.uniform(-1, 5, n), R.uniform(-2, 3, n)], -1).astype(np.float32)
    q[:3] = [[4.0, 2.0], [0.0, -1.0], [2.5, 0.0]]  # grid corners and nodes
    return q


def _rgi(mod: Any, np_: Any, grid: Any, values: Any, *a: Any, **k: Any) -> Any:
    return mod.RegularGridInterpolator(
        tuple(np_.asarray(g) for g in grid), np_.asarray(values), *a, **k
    )


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator(device: Any, method: str) -> None:
    import scipy.interpolate as sint

    v = f32(4, 3)
    q = _queries()
    for kw in [{}, {"fill_value": 2.5}, {"fill_value": None}]:
        got = _rgi(winterp, jnp, GRID, v, method, **kw)(jnp.asarray(q))
        close(got, _rgi(jinterp, jjnp, GRID, v, method, **kw)(q), 2e-6, 1e-6)
        skw = {"fill_value": kw.get("fill_value", np.nan)}
        sp = sint.RegularGridInterpolator(GRID, v.astype(np.float64), method, False, **skw)
        inside = np.all((q >= [0, -1]) & (q <= [4, 2]), axis=1)
        if method == "nearest":  # ties (exact midpoints) may go either way; there are none
            pass
        sel = slice(None) if "fill_value" in kw else inside
        np.testing.assert_allclose(np.asarray(got)[sel], sp(q)[sel], rtol=1e-5, atol=1e-5)
        assert np.all(np.isnan(np.asarray(got)[~inside])) == ("fill_value" not in kw)
    interp = _rgi(winterp, jnp, GRID, v, method)
    jinterp_ = _rgi(jinterp, jjnp, GRID, v, method)
    close(interp((jnp.asarray(q[:, 0]), jnp.asarray(q[:, 1]))), jinterp_((q[:, 0], q[:, 1])))
    close(interp(jnp.asarray(q.reshape(4, 5, 2))), jinterp_(q.reshape(4, 5, 2)))
    other = "nearest" if method == "linear" else "linear"
    close(interp(jnp.asarray(q), method=other), jinterp_(q, method=other))
    v3 = f32(4, 3, 2)
    close(
        _rgi(winterp, jnp, GRID, v3, method)(jnp.asarray(q)),
        _rgi(jinterp, jjnp, GRID, v3, method)(q),
    )
    g1 = (np.array([1, 2, 3]), np.array([4, 5, 6]))
    vi, qi = np.arange(9).reshape(3, 3), np.array([[1.5, 4.5], [2.2, 5.8]], np.float32)
    close(
        _rgi(winterp, jnp, g1, vi, method)(jnp.asarray(qi)), _rgi(jinterp, jjnp, g1, vi, method)(qi)
    )


def test_regular_grid_interpolator_grads_jit_vmap(device: Any) -> None:
    v = f32(4, 3)
    q = np.stack([R.uniform(0.1, 3.9, 6), R.uniform(-0.9, 1.9, 6)], -1).astype(np.float32)

    def wf(values: Any, pts: Any) -> Any:
        return winterp.RegularGridInterpolator(tuple(map(jnp.asarray, GRID)), values)(pts)

    def jf(values: Any, pts: Any) -> Any:
        return jinterp.RegularGridInterpolator(GRID, values)(pts)

    check_grads(wf, (v, q), eps=1e-3, rtol=5e-2)
    gw = webjax.grad(lambda a, b: jnp.sum(wf(a, b) ** 2), (0, 1))(jnp.asarray(v), jnp.asarray(q))
    gj = jax.grad(lambda a, b: jjnp.sum(jf(a, b) ** 2), (0, 1))(v, q)
    close(gw[0], gj[0], 1e-5, 1e-6)
    close(gw[1], gj[1], 1e-5, 1e-5)
    interp = _rgi(winterp, jnp, GRID, v)
    jitted = webjax.jit(lambda r, p: r(p))(interp, jnp.asarray(q))
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(interp(jnp.asarray(q))))
    leaves = webjax.tree_util.tree_leaves(interp)
    assert len(leaves) == 4  # two grid axes, values, fill_value
    qb = q.reshape(3, 2, 2)
    batched = webjax.vmap(interp)(jnp.asarray(qb))
    loop = np.stack([np.asarray(interp(jnp.asarray(b))) for b in qb])
    np.testing.assert_allclose(np.asarray(batched), loop, rtol=1e-6, atol=1e-7)


def test_regular_grid_interpolator_errors() -> None:
    v = np.ones((4, 3), np.float32)
    gw, gj = tuple(map(jnp.asarray, GRID)), GRID
    for wf, jf in [
        (
            lambda: winterp.RegularGridInterpolator(gw, v, "cubic"),
            lambda: jinterp.RegularGridInterpolator(gj, v, "cubic"),
        ),
        (
            lambda: winterp.RegularGridInterpolator(gw, v, bounds_error=True),
            lambda: jinterp.RegularGridInterpolator(gj, v, bounds_error=True),
        ),
        (
            lambda: winterp.RegularGridInterpolator(gw, v, fill_value=1j),
            lambda: jinterp.RegularGridInterpolator(gj, v, fill_value=1j),
        ),
        (
            lambda: winterp.RegularGridInterpolator(gw + gw, v),
            lambda: jinterp.RegularGridInterpolator(gj + gj, v),
        ),
        (
            lambda: winterp.RegularGridInterpolator(gw, v)(jnp.ones((3, 3))),
            lambda: jinterp.RegularGridInterpolator(gj, v)(jjnp.ones((3, 3))),
        ),
        (
            lambda: winterp.RegularGridInterpolator(gw, v)([[1.0, 0.0]]),
            lambda: jinterp.RegularGridInterpolator(gj, v)([[1.0, 0.0]]),
        ),
        (
            lambda: winterp.RegularGridInterpolator(gw, v)(jnp.ones((1, 2)), method="cubic"),
            lambda: jinterp.RegularGridInterpolator(gj, v)(jjnp.ones((1, 2)), method="cubic"),
        ),
    ]:
        raises_like(wf, jf)
