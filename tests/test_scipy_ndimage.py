"""`jax.scipy.ndimage.map_coordinates` against real JAX and SciPy: every mode and order, dtypes,
derivatives, jit and vmap, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.ndimage as wn
from check_grads import check_grads
from jax_compare import close, raises_like

jax = pytest.importorskip("jax")
jjnp = jax.numpy
import jax.scipy.ndimage as jn  # noqa: E402

R = np.random.RandomState(0)


def f32(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return R.uniform(lo, hi, shape).astype(np.float32)


MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]
SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap"}


def _coords(shape: tuple[int, ...], n: int = 12) -> list[np.ndarray]:
    cs = [R.uniform(-3, s + 2, (3, n)).astype(np.float32) for s in shape]
    cs[0][0, :4] = [0.0, float(shape[0] - 1), -0.25, 1.75]  # on and next to the edges
    return cs


@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates(device: Any, mode: str) -> None:
    import scipy.ndimage as sn

    for shape in [(7,), (4, 5), (3, 4, 2)]:
        x = f32(*shape, lo=-5.0, hi=5.0)
        cs = _coords(shape)
        for order in (0, 1):
            for cval in (0.0, 1.5):
                got = wn.map_coordinates(
                    jnp.asarray(x), [jnp.asarray(c) for c in cs], order, mode=mode, cval=cval
                )
                close(got, jn.map_coordinates(x, cs, order, mode=mode, cval=cval), 1e-6, 1e-6)
            want = sn.map_coordinates(
                x.astype(np.float64), cs, order=order, mode=SCIPY_MODE.get(mode, mode), cval=1.5
            )
            if order == 0:  # SciPy rounds halves differently; compare away from them
                ok = np.all([np.abs(c - np.round(c)) != 0.5 for c in cs], axis=0)
                got, want = np.asarray(got)[ok], want[ok]
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_map_coordinates_dtypes(device: Any) -> None:
    xi = R.randint(-50, 50, (4, 5)).astype(np.int32)
    cs = _coords((4, 5))
    for order in (0, 1):
        for mode in ("constant", "nearest"):
            close(
                wn.map_coordinates(jnp.asarray(xi), [jnp.asarray(c) for c in cs], order, mode),
                jn.map_coordinates(xi, cs, order, mode),
            )
    ci = [np.array([0, 3, 5, -1], np.int32), np.array([1, 2, 4, 0], np.int32)]
    x = f32(4, 5)
    for order in (0, 1):
        close(
            wn.map_coordinates(jnp.asarray(x), [jnp.asarray(c) for c in ci], order),
            jn.map_coordinates(x, ci, order),
        )
    # lists and numpy arrays are accepted as in JAX
    close(wn.map_coordinates(x, [c.tolist() for c in cs], 1), jn.map_coordinates(x, cs, 1))


def test_map_coordinates_grads(device: Any) -> None:
    x = f32(4, 5)
    cs = [R.uniform(0.1, 2.9, 6).astype(np.float32), R.uniform(0.1, 3.9, 6).astype(np.float32)]
    for mode in ("constant", "wrap", "reflect"):
        check_grads(
            lambda v, m=mode: wn.map_coordinates(v, [jnp.asarray(c) for c in cs], 1, m), (x,)
        )
        check_grads(
            lambda a, b, m=mode: wn.map_coordinates(jnp.asarray(x), [a, b], 1, m),
            (cs[0], cs[1]),
            eps=1e-3,
            rtol=5e-2,
        )

        def loss(v: Any, a: Any, np_: Any, mod: Any, m: str = mode) -> Any:
            return np_.sum(mod.map_coordinates(v, [a, a * 1.3], 1, m) ** 2)

        gw = webjax.grad(loss, (0, 1))(jnp.asarray(x), jnp.asarray(cs[0]), jnp, wn)
        gj = jax.grad(loss, (0, 1))(x, cs[0], jjnp, jn)
        close(gw[0], gj[0], 1e-5, 1e-5)
        close(gw[1], gj[1], 1e-5, 1e-5)


def test_map_coordinates_jit_and_vmap(device: Any) -> None:
    x = f32(4, 5)
    cs = np.stack(_coords((4, 5), 6), 0)  # (2, 3, 6): axis, batch, point

    def f(c0: Any, c1: Any) -> Any:
        return wn.map_coordinates(jnp.asarray(x), [c0, c1], 1, "mirror")

    eager = f(jnp.asarray(cs[0]), jnp.asarray(cs[1]))
    np.testing.assert_array_equal(
        np.asarray(webjax.jit(f)(jnp.asarray(cs[0]), jnp.asarray(cs[1]))), np.asarray(eager)
    )
    batched = webjax.vmap(f)(jnp.asarray(cs[0]), jnp.asarray(cs[1]))
    loop = np.stack([np.asarray(f(jnp.asarray(cs[0, i]), jnp.asarray(cs[1, i]))) for i in range(3)])
    np.testing.assert_allclose(np.asarray(batched), loop, rtol=1e-6, atol=1e-7)


def test_map_coordinates_errors() -> None:
    x, c = np.ones((3, 4), np.float32), [np.zeros(2, np.float32)] * 2
    raises_like(
        lambda: wn.map_coordinates(jnp.asarray(x), c[:1], 1),
        lambda: jn.map_coordinates(x, c[:1], 1),
    )
    raises_like(
        lambda: wn.map_coordinates(jnp.asarray(x), c, 3), lambda: jn.map_coordinates(x, c, 3)
    )
    with pytest.raises(NotImplementedError, match="does not yet support mode grid-wrap"):
        wn.map_coordinates(jnp.asarray(x), c, 1, mode="grid-wrap")
