"""`jax.scipy.signal` against real JAX and SciPy: convolve/correlate (shapes, modes, dtypes,
complex), fftconvolve, detrend, derivatives, jit and vmap, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.signal as wsig
from check_grads import check_grads
from jax_compare import close, raises_like

jax = pytest.importorskip("jax")
jjnp = jax.numpy
import jax.scipy.signal as jsig  # noqa: E402

R = np.random.RandomState(0)


def f32(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return R.uniform(lo, hi, shape).astype(np.float32)


SHAPES = [
    ((9,), (4,)),
    ((3,), (7,)),
    ((5,), (5,)),
    ((6, 7), (3, 2)),
    ((2, 3), (4, 5)),
    ((3, 4, 5), (2, 3, 2)),
]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_convolve_correlate(device: Any, shapes: tuple) -> None:
    import scipy.signal as ss

    a, b = f32(*shapes[0]), f32(*shapes[1])
    for mode in ("full", "same", "valid"):
        for name in ("convolve", "correlate"):
            got = getattr(wsig, name)(jnp.asarray(a), jnp.asarray(b), mode=mode)
            close(got, getattr(jsig, name)(a, b, mode=mode), 1e-5, 1e-6)
            want = getattr(ss, name)(a.astype(np.float64), b.astype(np.float64), mode=mode)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
            direct = getattr(wsig, name)(jnp.asarray(a), jnp.asarray(b), mode, method="direct")
            np.testing.assert_array_equal(np.asarray(direct), np.asarray(got))
        if len(shapes[0]) == 2:
            for name in ("convolve2d", "correlate2d"):
                got = getattr(wsig, name)(jnp.asarray(a), jnp.asarray(b), mode=mode)
                close(got, getattr(jsig, name)(a, b, mode=mode), 1e-5, 1e-6)
                want = getattr(ss, name)(a.astype(np.float64), b.astype(np.float64), mode=mode)
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_convolve_dtypes(device: Any) -> None:
    ai, bi = np.arange(6, dtype=np.int32), np.array([1, -2, 3], np.int32)
    close(wsig.convolve(jnp.asarray(ai), jnp.asarray(bi)), jsig.convolve(ai, bi))
    ah, bh = ai.astype(np.float16), bi.astype(np.float16)
    close(wsig.correlate(jnp.asarray(ah), jnp.asarray(bh), "same"), jsig.correlate(ah, bh, "same"))
    close(wsig.convolve(jnp.asarray(ai), 2.0 * jnp.ones(1)), jsig.convolve(ai, 2.0 * jjnp.ones(1)))


def test_correlate_complex(device: Any) -> None:
    a = (f32(6) + 1j * f32(6)).astype(np.complex64)
    b = np.array([1.0, 2.0j, -0.5 + 0.5j], np.complex64)
    for mode in ("full", "same", "valid"):
        close(
            wsig.correlate(jnp.asarray(a), jnp.asarray(b), mode),
            jsig.correlate(a, b, mode),
            1e-5,
            1e-6,
        )
        r = f32(3)
        close(
            wsig.convolve(jnp.asarray(r), jnp.asarray(a), mode),
            jsig.convolve(r, a, mode),
            1e-5,
            1e-6,
        )
    a2, b2 = a.reshape(2, 3), np.array([[1.0, 2.0j]], np.complex64)
    for mode in ("full", "same", "valid"):
        close(
            wsig.correlate2d(jnp.asarray(a2), jnp.asarray(b2), mode),
            jsig.correlate2d(a2, b2, mode),
            1e-5,
            1e-6,
        )
        close(
            wsig.correlate2d(jnp.asarray(b2), jnp.asarray(a2), mode),
            jsig.correlate2d(b2, a2, mode),
            1e-5,
            1e-6,
        )


def test_convolve_grads(device: Any) -> None:
    a, b = f32(7), f32(3)
    for mode in ("full", "same", "valid"):
        check_grads(lambda x, y, m=mode: wsig.convolve(x, y, m), (a, b))
        check_grads(lambda x, y, m=mode: wsig.correlate(x, y, m), (b, a))

        def loss(x: Any, y: Any, np_: Any, mod: Any, m: str = mode) -> Any:
            return np_.sum(mod.correlate(x, y, m) ** 2)

        gw = webjax.grad(loss, (0, 1))(jnp.asarray(a), jnp.asarray(b), jnp, wsig)
        gj = jax.grad(loss, (0, 1))(a, b, jjnp, jsig)
        close(gw[0], gj[0], 1e-5, 1e-5)
        close(gw[1], gj[1], 1e-5, 1e-5)
    a2, b2 = f32(4, 5), f32(2, 3)
    check_grads(lambda x, y: wsig.convolve2d(x, y, "same"), (a2, b2))
    check_grads(lambda x, y: wsig.correlate2d(x, y, "full"), (b2, a2))


def test_convolve_jit_and_vmap(device: Any) -> None:
    a, b = f32(4, 9), f32(3)
    f = webjax.jit(lambda x, y: wsig.correlate(x, y, "same"))
    np.testing.assert_array_equal(
        np.asarray(f(jnp.asarray(a[0]), jnp.asarray(b))),
        np.asarray(wsig.correlate(jnp.asarray(a[0]), jnp.asarray(b), "same")),
    )
    batched = webjax.vmap(lambda x: wsig.convolve(x, jnp.asarray(b), "valid"))(jnp.asarray(a))
    loop = np.stack([np.asarray(wsig.convolve(jnp.asarray(r), jnp.asarray(b), "valid")) for r in a])
    np.testing.assert_allclose(np.asarray(batched), loop, rtol=1e-6, atol=1e-6)


def test_signal_errors() -> None:
    a, b = np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)
    for wf, jf in [
        (
            lambda: wsig.convolve(jnp.ones(3), jnp.ones(2), mode="x"),
            lambda: jsig.convolve(jjnp.ones(3), jjnp.ones(2), mode="x"),
        ),
        (
            lambda: wsig.convolve(jnp.ones(3), jnp.ones(2), method="x"),
            lambda: jsig.convolve(jjnp.ones(3), jjnp.ones(2), method="x"),
        ),
        (lambda: wsig.convolve(jnp.asarray(a), jnp.asarray(b)), lambda: jsig.convolve(a, b)),
        (
            lambda: wsig.convolve(jnp.ones((2, 3)), jnp.ones(3)),
            lambda: jsig.convolve(jjnp.ones((2, 3)), jjnp.ones(3)),
        ),
        (
            lambda: wsig.convolve(jnp.ones(0), jnp.ones(3)),
            lambda: jsig.convolve(jjnp.ones(0), jjnp.ones(3)),
        ),
        (
            lambda: wsig.convolve2d(jnp.ones(3), jnp.ones(3)),
            lambda: jsig.convolve2d(jjnp.ones(3), jjnp.ones(3)),
        ),
        (
            lambda: wsig.correlate2d(jnp.asarray(a), jnp.asarray(a), boundary="wrap"),
            lambda: jsig.correlate2d(a, a, boundary="wrap"),
        ),
        (
            lambda: wsig.convolve2d(jnp.asarray(a), jnp.asarray(a), fillvalue=1),
            lambda: jsig.convolve2d(a, a, fillvalue=1),
        ),
        (
            lambda: wsig.correlate2d(jnp.asarray(a), jnp.asarray(b), "valid"),
            lambda: jsig.correlate2d(a, b, "valid"),
        ),
        (
            lambda: wsig.fftconvolve(jnp.ones(5), jnp.ones((2, 2))),
            lambda: jsig.fftconvolve(jjnp.ones(5), jjnp.ones((2, 2))),
        ),
        (
            lambda: wsig.fftconvolve(jnp.ones(5), jnp.ones(2), mode="x"),
            lambda: jsig.fftconvolve(jjnp.ones(5), jjnp.ones(2), mode="x"),
        ),
        (
            lambda: wsig.fftconvolve([1.0, 2.0], jnp.ones(2)),
            lambda: jsig.fftconvolve([1.0, 2.0], jjnp.ones(2)),
        ),
        (
            lambda: wsig.fftconvolve(jnp.ones((2, 5)), jnp.ones((3, 2)), axes=1),
            lambda: jsig.fftconvolve(jjnp.ones((2, 5)), jjnp.ones((3, 2)), axes=1),
        ),
        (lambda: wsig.detrend(jnp.ones(5), type="x"), lambda: jsig.detrend(jjnp.ones(5), type="x")),
        (lambda: wsig.detrend(jnp.ones(5), bp=[7]), lambda: jsig.detrend(jjnp.ones(5), bp=[7])),
        (
            lambda: wsig.detrend(jnp.ones(5), overwrite_data=True),
            lambda: jsig.detrend(jjnp.ones(5), overwrite_data=True),
        ),
    ]:
        raises_like(wf, jf)


def _has_fft() -> bool:
    return hasattr(jnp, "fft") and hasattr(jnp.fft, "irfftn")


@pytest.mark.skipif(not _has_fft(), reason="webjax.numpy.fft is not there yet")
@pytest.mark.parametrize("shapes", SHAPES[:5], ids=str)
def test_fftconvolve(device: Any, shapes: tuple) -> None:
    import scipy.signal as ss

    a, b = f32(*shapes[0]), f32(*shapes[1])
    for mode in ("full", "same", "valid"):
        got = wsig.fftconvolve(jnp.asarray(a), jnp.asarray(b), mode)
        close(got, jsig.fftconvolve(a, b, mode), 1e-4, 2e-5)
        want = ss.fftconvolve(a.astype(np.float64), b.astype(np.float64), mode)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=2e-5)
        via = wsig.convolve(jnp.asarray(a), jnp.asarray(b), mode, method="fft")
        np.testing.assert_array_equal(np.asarray(via), np.asarray(got))


@pytest.mark.skipif(not _has_fft(), reason="webjax.numpy.fft is not there yet")
def test_fftconvolve_axes_complex_grad(device: Any) -> None:
    a, b = f32(3, 8), f32(3, 4)
    for axes, mode in [(1, "full"), ([-1], "same"), ((1,), "valid")]:
        close(
            wsig.fftconvolve(jnp.asarray(a), jnp.asarray(b), mode, axes=axes),
            jsig.fftconvolve(a, b, mode, axes=axes),
            1e-4,
            2e-5,
        )
    c = (f32(6) + 1j * f32(6)).astype(np.complex64)
    close(
        wsig.fftconvolve(jnp.asarray(c), jnp.asarray(c[:3])), jsig.fftconvolve(c, c[:3]), 1e-4, 2e-5
    )
    close(
        wsig.fftconvolve(jnp.ones((1, 3)), jnp.ones((4, 1))),
        jsig.fftconvolve(jjnp.ones((1, 3)), jjnp.ones((4, 1))),
    )
    check_grads(lambda x, y: wsig.fftconvolve(x, y, "same"), (a[0], b[0]), eps=3e-2)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"axis": 0},
        {"type": "constant"},
        {"type": "constant", "axis": 0},
        {"bp": [3, 5]},
        {"bp": 8},
        {"bp": np.array([2, 2, 6])},
        {"bp": [1, 2], "axis": 1},
    ],
    ids=str,
)
def test_detrend(device: Any, kw: dict) -> None:
    import scipy.signal as ss

    d = f32(4, 9, hi=3.0) + np.arange(9, dtype=np.float32)
    got = wsig.detrend(jnp.asarray(d), **kw)
    close(got, jsig.detrend(d, **kw), 1e-4, 3e-6)
    np.testing.assert_allclose(
        np.asarray(got), ss.detrend(d.astype(np.float64), **kw), rtol=1e-4, atol=3e-6
    )


def test_detrend_int_grad_jit(device: Any) -> None:
    xi = np.array([1, 4, 8, 8, 9], np.int32)
    close(wsig.detrend(jnp.asarray(xi)), jsig.detrend(xi), 1e-5, 3e-6)
    close(wsig.detrend(xi.tolist()), jsig.detrend(xi.tolist()), 1e-5, 3e-6)
    d = f32(9)
    check_grads(lambda v: wsig.detrend(v, bp=[4]), (d,))
    f = webjax.jit(lambda v: wsig.detrend(v, bp=[4]))
    close(f(jnp.asarray(d)), wsig.detrend(jnp.asarray(d), bp=[4]), 1e-6, 1e-7)
