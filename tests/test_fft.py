"""lax.fft and jax.numpy.fft on every backend, against NumPy (float64 references) and real JAX.

Values: every FFT type at lengths 1 to 4096 (powers of two, mixed radices, primes through the
direct and Bluestein paths), 2-D and 3-D transforms, every jnp.fft function with n/s, axes and
norm; complex128 under x64 where the backend has float64. Derivatives: finite differences
(check_grads) and jax.grad/jax.vjp. Transformations: vmap against a loop, jit against eager.
Errors: JAX's types and messages.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from devices import has_float64
from webjax import lax
from webjax._src.lax import fft as fft_mod

np = pytest.importorskip("numpy")

LENGTHS = [1, 2, 3, 5, 8, 12, 64, 100, 1024, 4096]
TYPES = ["FFT", "IFFT", "RFFT", "IRFFT"]


@pytest.fixture
def rjax():
    return pytest.importorskip("jax")


def _rng(seed: int = 0) -> Any:
    return np.random.default_rng(seed)


def cplx(*shape: int, seed: int = 0, dtype: Any = np.complex64) -> Any:
    r = _rng(seed)
    return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)


def real(*shape: int, seed: int = 0, dtype: Any = np.float32) -> Any:
    return _rng(seed).standard_normal(shape).astype(dtype)


def assert_close(got: Any, want: Any, tol: float = 2e-6) -> None:
    """Shapes equal; max error at most tol times the largest magnitude (the error
    measure of FFT accuracy: rounding spreads over all outputs)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-30)
    err = float(np.max(np.abs(got.astype(np.complex128) - want), initial=0.0))
    assert err <= tol * scale, f"max error {err:.3g} > {tol:.1e} * {scale:.3g}"


def numpy_lax_fft(x: Any, fft_type: str, lengths: tuple[int, ...]) -> Any:
    """lax.fft's semantics through numpy.fft, in float64."""
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if fft_type == "FFT":
        return np.fft.fftn(wide, axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(wide, axes=axes)
    if fft_type == "RFFT":
        return np.fft.rfftn(wide, axes=axes)
    return np.fft.irfftn(wide, s=lengths, axes=axes)


def example(
    fft_type: str, lead: tuple[int, ...], lengths: tuple[int, ...], seed: int = 0, x64: bool = False
) -> Any:
    c, r = (np.complex128, np.float64) if x64 else (np.complex64, np.float32)
    if fft_type == "RFFT":
        return real(*lead, *lengths, seed=seed, dtype=r)
    if fft_type == "IRFFT":
        return cplx(*lead, *lengths[:-1], lengths[-1] // 2 + 1, seed=seed, dtype=c)
    return cplx(*lead, *lengths, seed=seed, dtype=c)


# ---- lax.fft values ------------------------------------------------------------------------------
@pytest.mark.parametrize("n", LENGTHS)
def test_lax_fft_lengths(device: Any, n: int) -> None:
    for t in TYPES:
        x = example(t, (2,), (n,), seed=n)
        got = lax.fft(jnp.asarray(x), t, (n,))
        want = numpy_lax_fft(x, t, (n,))
        assert str(got.dtype) == ("float32" if t == "IRFFT" else "complex64")
        assert_close(got, want)


@pytest.mark.parametrize("n", [17, 61, 127, 257, 1009])
def test_prime_lengths(device: Any, n: int) -> None:
    """Primes: direct passes (up to the generic radix limit), Bluestein beyond."""
    for t in TYPES:
        x = example(t, (), (n,), seed=n)
        assert_close(lax.fft(jnp.asarray(x), t, (n,)), numpy_lax_fft(x, t, (n,)), tol=4e-6)


@pytest.mark.parametrize(
    "lengths", [(4, 6), (3, 5), (8, 1), (2, 3, 4), (5, 4, 6), (1, 7, 2)], ids=str
)
def test_lax_fft_multidim(device: Any, lengths: tuple[int, ...]) -> None:
    for t in TYPES:
        x = example(t, (2,), lengths, seed=len(lengths))
        got = lax.fft(jnp.asarray(x), t, lengths)
        assert_close(got, numpy_lax_fft(x, t, lengths))


def test_lax_fft_against_jax(device: Any, rjax: Any) -> None:
    for t, lengths in [
        ("FFT", (16,)),
        ("IFFT", (3, 10)),
        ("RFFT", (12,)),
        ("IRFFT", (4, 9)),
        ("RFFT", (2, 5, 6)),
        ("IRFFT", (7,)),
    ]:
        x = example(t, (3,), lengths, seed=1)
        got = lax.fft(jnp.asarray(x), t, lengths)
        want = rjax.lax.fft(x, t, lengths)
        assert got.shape == want.shape and str(got.dtype) == str(want.dtype)
        assert_close(got, np.asarray(want), tol=4e-6)


def test_large_power_of_two(device: Any) -> None:
    n = 1 << 16
    x = cplx(n, seed=3)
    assert_close(lax.fft(jnp.asarray(x), "FFT", (n,)), np.fft.fft(x.astype(np.complex128)))
    xr = x.real.copy()
    assert_close(jnp.fft.irfft(jnp.fft.rfft(jnp.asarray(xr)), n), xr.astype(np.float64))


def _kernels(y: Any) -> list[Any]:
    """The pending kernels computing `y`."""
    out, todo, seen = [], [y._buffer()], set()
    while todo:
        lb = todo.pop()
        if id(lb) in seen or lb.kernel is None:
            continue
        seen.add(id(lb))
        out.append(lb.kernel)
        todo.extend(lb.inputs)
    return out


def test_fast_plans(device: Any) -> None:
    """O(n log n): a power of two is log4(n) elementwise passes (plus an unpacking view), a
    large prime goes through Bluestein's power-of-two transforms."""
    x = jnp.asarray(cplx(4096))
    kernels = _kernels(lax.fft(x, "FFT", (4096,)))
    assert 6 <= len(kernels) <= 7
    assert all(k.reduction is None for k in kernels)
    kernels = _kernels(lax.fft(jnp.asarray(real(4096)), "RFFT", (4096,)))
    assert len(kernels) <= 8 and all(k.reduction is None for k in kernels)
    assert fft_mod._use_bluestein(4099) and not fft_mod._use_bluestein(61 * 64)
    assert fft_mod._factors(1000) == [4, 2, 5, 5, 5]
    kernels = _kernels(lax.fft(jnp.asarray(cplx(4099)), "FFT", (4099,)))
    assert all(k.reduction is None for k in kernels)


def test_accepts_types_and_names(rjax: Any) -> None:
    x = jnp.asarray(cplx(8))
    want = np.asarray(lax.fft(x, lax.FftType.FFT, (8,)))
    for t in ("fft", "FFT", rjax.lax.FftType.FFT, fft_mod.FftType.FFT):
        np.testing.assert_array_equal(np.asarray(lax.fft(x, t, (8,))), want)
    assert int(lax.FftType.IRFFT) == int(rjax.lax.FftType.IRFFT) == 3
    assert lax.fft_p.name == "fft"
    # integer and real inputs are converted as JAX converts them; no lengths: only the cast
    got = lax.fft(jnp.arange(4), "FFT", (4,))
    assert got.dtype == jnp.complex64
    assert_close(got, np.fft.fft(np.arange(4.0)))
    assert lax.fft(jnp.arange(4), "RFFT", (4,)).dtype == jnp.complex64
    y = lax.fft(jnp.ones((2, 2)), "FFT", ())
    assert y.dtype == jnp.complex64 and y.shape == (2, 2)


def test_empty() -> None:
    assert jnp.fft.fft(jnp.zeros((0, 4), jnp.complex64)).shape == (0, 4)
    assert lax.fft(jnp.zeros((0, 6)), "RFFT", (6,)).shape == (0, 4)


# ---- errors --------------------------------------------------------------------------------------
def _raises_like(rjax: Any, fn: Any, x: Any, *args: Any, **kw: Any) -> None:
    """webjax raises what JAX raises (type and message) for fn(x, *args, **kw)."""
    with pytest.raises(Exception) as want:
        fn(rjax, x, *args, **kw)
    with pytest.raises(want.type) as got:
        fn(webjax, jnp.asarray(x) if isinstance(x, np.ndarray) else x, *args, **kw)
    assert str(got.value) == str(want.value)


def test_lax_errors(rjax: Any) -> None:
    c, r = cplx(2, 4), real(2, 4)
    lf = lambda ns, x, *a: ns.lax.fft(x, *a)
    _raises_like(rjax, lf, c, "RFFT", (4,))
    _raises_like(rjax, lf, r.astype(np.float16), "RFFT", (4,))
    _raises_like(rjax, lf, r, "RFFT", (3,))
    _raises_like(rjax, lf, c, "FFT", (2, 2, 4))
    _raises_like(rjax, lf, c, "FFT", (5,))
    _raises_like(rjax, lf, c, "IRFFT", (3, 6))
    _raises_like(rjax, lf, c, "fourier", (4,))
    with pytest.raises(TypeError, match="Unknown FFT type value"):
        lax.fft(jnp.asarray(c), 0, (4,))
    with pytest.raises(ValueError, match="IRFFT requires innermost dimension"):
        lax.fft(jnp.asarray(c), "IRFFT", (4,))  # JAX fails in MLIR verification here
    with pytest.raises(ValueError, match="rank must be between 1 and 3"):
        lax.fft(jnp.asarray(cplx(1, 1, 1, 1)), "FFT", (1, 1, 1, 1))


def test_numpy_errors(rjax: Any) -> None:
    x = cplx(4, 6)
    f = lambda name: lambda ns, a, *args, **kw: getattr(ns.numpy.fft, name)(a, *args, **kw)
    _raises_like(rjax, f("fft"), x, n=0)
    _raises_like(rjax, f("fftn"), x, s=(2,), axes=(0, 1))
    _raises_like(rjax, f("fftn"), x, axes=(1, 1))
    _raises_like(rjax, f("fft"), x, axis=(0, 1))
    _raises_like(rjax, f("ihfft"), x.real, axis=[0])
    _raises_like(rjax, f("fft2"), x, axes=(0,))
    _raises_like(rjax, f("irfft2"), x, axes=(0, 1, 1))
    _raises_like(rjax, f("fft"), x, norm="bad")
    _raises_like(rjax, f("rfft"), x)
    _raises_like(rjax, f("fft"), [1.0, 2.0])
    _raises_like(rjax, f("fftfreq"), [4])
    _raises_like(rjax, f("rfftfreq"), 4, [0.5])
    with pytest.raises(TypeError, match="requires ndarray"):
        jnp.fft.fftshift([1, 2])


# ---- jax.numpy.fft -------------------------------------------------------------------------------
X = cplx(4, 6, 10, seed=5)
XR = real(4, 6, 10, seed=6)
NUMPY_CASES = [
    ("fft", X, {}), ("fft", X, {"n": 7, "axis": 1}), ("fft", X, {"n": 16, "norm": "ortho"}),
    ("fft", XR.astype(np.int32), {}), ("fft", XR, {"axis": 0, "norm": "forward"}),
    ("ifft", X, {"axis": 0, "norm": "forward"}), ("ifft", X, {"n": 3, "norm": "backward"}),
    ("fft2", X, {}), ("fft2", X, {"s": (3, 12), "axes": (0, 2)}), ("ifft2", X, {"norm": "ortho"}),
    ("fftn", X, {}), ("fftn", X, {"s": (5, 5), "axes": (2, 0)}), ("fftn", X[None], {}),
    ("ifftn", X, {"norm": "forward"}), ("ifftn", X[None], {"norm": "ortho"}),
    ("rfft", XR, {}), ("rfft", XR, {"n": 9, "axis": 0, "norm": "ortho"}), ("rfft", XR, {"n": 4}),
    ("irfft", X, {}), ("irfft", X, {"n": 11, "axis": 1}), ("irfft", X, {"norm": "forward"}),
    ("rfft2", XR, {}), ("rfft2", XR, {"s": (5, 4), "axes": (1, 0)}),
    ("irfft2", X, {"s": (4, 7)}), ("irfft2", X, {"axes": (0, 1), "norm": "ortho"}),
    ("rfftn", XR, {}), ("rfftn", XR[None], {"norm": "forward"}), ("rfftn", XR, {"s": (3, 8)}),
    ("irfftn", X, {}), ("irfftn", X, {"axes": (0, 2), "norm": "ortho"}), ("irfftn", X[None], {}),
    ("irfftn", X, {"s": (2, 5, 9)}),
    ("hfft", X, {}), ("hfft", X, {"n": 9, "norm": "ortho"}),
    ("hfft", X, {"axis": 0, "norm": "forward"}),
    ("ihfft", XR, {}), ("ihfft", XR, {"n": 7, "norm": "forward"}), ("ihfft", XR, {"norm": "ortho"}),
]  # fmt: skip


@pytest.mark.parametrize(
    "case", range(len(NUMPY_CASES)), ids=lambda i: f"{NUMPY_CASES[i][0]}-{NUMPY_CASES[i][2]}"
)
def test_numpy_fft_against_jax(device: Any, rjax: Any, case: int) -> None:
    name, x, kw = NUMPY_CASES[case]
    got = getattr(jnp.fft, name)(jnp.asarray(x), **kw)
    want = np.asarray(getattr(rjax.numpy.fft, name)(x, **kw))
    assert str(got.dtype) == str(want.dtype), (got.dtype, want.dtype)
    assert_close(got, want, tol=4e-6)
    if "s" in kw and "axes" not in kw:  # NumPy 2 wants the axes spelled out
        kw = dict(kw, axes=tuple(range(x.ndim - len(kw["s"]), x.ndim)))
    ref = getattr(np.fft, name)(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64), **kw)
    assert_close(got, ref)


def test_freqs_and_shifts(rjax: Any) -> None:
    for name, args, kw in [
        ("fftfreq", (8,), {}),
        ("fftfreq", (7, 0.5), {}),
        ("rfftfreq", (9, 0.1), {}),
        ("rfftfreq", (10,), {}),
        ("fftfreq", (5,), {"dtype": np.int32}),
        ("rfftfreq", (6,), {"dtype": "complex64"}),
        ("fftfreq", (1,), {}),
    ]:
        got = getattr(jnp.fft, name)(*args, **kw)
        want = np.asarray(getattr(rjax.numpy.fft, name)(*args, **kw))
        assert str(got.dtype) == str(want.dtype), name
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-7, err_msg=name)
    x = real(3, 4, 5)
    for name in ("fftshift", "ifftshift"):
        for kw in [{}, {"axes": 1}, {"axes": (0, 2)}, {"axes": -1}]:
            got = getattr(jnp.fft, name)(jnp.asarray(x), **kw)
            want = getattr(rjax.numpy.fft, name)(x, **kw)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_roundtrips(device: Any) -> None:
    x = cplx(3, 20, seed=9)
    assert_close(jnp.fft.ifft(jnp.fft.fft(jnp.asarray(x))), x.astype(np.complex128))
    assert_close(
        jnp.fft.ifftn(jnp.fft.fftn(jnp.asarray(x), norm="ortho"), norm="ortho"),
        x.astype(np.complex128),
    )
    xr = real(4, 6, 7, seed=10)
    assert_close(jnp.fft.irfftn(jnp.fft.rfftn(jnp.asarray(xr)), xr.shape), xr.astype(np.float64))


# ---- complex128 ----------------------------------------------------------------------------------
def test_complex128(device: Any, rjax: Any) -> None:
    with webjax.enable_x64(True), rjax.enable_x64(True):
        if not has_float64(device):  # no float64: already the array can't be made
            with pytest.raises(TypeError, match=f"{device.platform} backend does not support"):
                lax.fft(jnp.asarray(cplx(8, dtype=np.complex128)), "FFT", (8,))
            return
        for n in (1, 6, 64, 127, 1000):
            for t in TYPES:
                x = example(t, (2,), (n,), seed=n, x64=True)
                got = lax.fft(jnp.asarray(x), t, (n,))
                assert str(got.dtype) == ("float64" if t == "IRFFT" else "complex128")
                assert_close(got, numpy_lax_fft(x, t, (n,)), tol=1e-13)
        x = cplx(3, 4, 5, dtype=np.complex128)
        got = jnp.fft.rfftn(jnp.asarray(x.real), norm="ortho")
        want = rjax.numpy.fft.rfftn(x.real, norm="ortho")
        assert str(got.dtype) == str(want.dtype) == "complex128"
        assert_close(got, np.asarray(want), tol=1e-13)


# ---- derivatives ---------------------------------------------------------------------------------
GRAD_CASES = [
    (lambda x: jnp.fft.fft(x), (cplx(6),)),
    (lambda x: jnp.fft.ifft(x, n=8, norm="ortho"), (cplx(6),)),
    (lambda x: jnp.fft.rfft(x, norm="forward"), (real(7),)),
    (lambda x: jnp.fft.irfft(x), (cplx(5),)),
    (lambda x: jnp.fft.irfft(x, n=7), (cplx(4),)),
    (lambda x: jnp.fft.fft2(x, axes=(0, 1)), (cplx(3, 4, 2),)),
    (lambda x: jnp.fft.rfftn(x), (real(3, 4),)),
    (lambda x: jnp.fft.irfftn(x, s=(3, 5)), (cplx(3, 3),)),
    (lambda x: jnp.fft.hfft(x), (cplx(4),)),
    (lambda x: jnp.fft.ihfft(x), (real(6),)),
    (lambda x: jnp.abs(jnp.fft.fft(x * x)) ** 2, (cplx(5),)),
]


@pytest.mark.parametrize("case", range(len(GRAD_CASES)))
def test_check_grads(device: Any, case: int) -> None:
    fn, args = GRAD_CASES[case]
    check_grads(fn, args, order=1)


VJP_CASES = [
    ("fft", {}, cplx(2, 6)),
    ("ifft", {"norm": "ortho"}, cplx(5)),
    ("rfft", {"n": 8}, real(2, 7)),
    ("rfft", {}, real(9)),
    ("irfft", {}, cplx(5)),
    ("irfft", {"n": 9}, cplx(2, 5)),
    ("rfftn", {}, real(3, 4, 5)),
    ("irfftn", {"axes": (0, 1)}, cplx(4, 3)),
    ("irfft2", {"s": (3, 4)}, cplx(2, 3, 3)),
    ("hfft", {}, cplx(6)),
    ("ihfft", {"norm": "forward"}, real(6)),
]


@pytest.mark.parametrize(
    "case", range(len(VJP_CASES)), ids=lambda i: f"{VJP_CASES[i][0]}-{VJP_CASES[i][1]}"
)
def test_vjp_and_grad_against_jax(device: Any, rjax: Any, case: int) -> None:
    name, kw, x = VJP_CASES[case]
    f = lambda a: getattr(jnp.fft, name)(a, **kw)
    rf = lambda a: getattr(rjax.numpy.fft, name)(a, **kw)
    _out, pullback = webjax.vjp(f, jnp.asarray(x))
    rout, rpullback = rjax.vjp(rf, x)
    ct = cplx(*rout.shape, seed=11) if np.iscomplexobj(rout) else real(*rout.shape, seed=11)
    (got,) = pullback(jnp.asarray(ct))
    (want,) = rpullback(ct)
    assert str(got.dtype) == str(want.dtype)
    assert_close(got, np.asarray(want), tol=4e-6)
    # a real loss: grad as JAX's
    w = real(*rout.shape, seed=12)
    loss = lambda ns, a: (ns.numpy.abs(getattr(ns.numpy.fft, name)(a, **kw)) ** 2 * w).sum()
    g = webjax.grad(lambda a: loss(webjax, a))(jnp.asarray(x))
    rg = rjax.grad(lambda a: loss(rjax, a))(x)
    assert_close(g, np.asarray(rg), tol=4e-6)
    assert_close(
        webjax.jit(webjax.grad(lambda a: loss(webjax, a)))(jnp.asarray(x)), np.asarray(rg), tol=4e-6
    )


def test_jvp_against_jax(device: Any, rjax: Any) -> None:
    x, t = cplx(3, 8, seed=1), cplx(3, 8, seed=2)
    for name in ("fft2", "ifftn", "irfft"):
        f = lambda a, name=name: getattr(jnp.fft, name)(a)
        rf = lambda a, name=name: getattr(rjax.numpy.fft, name)(a)
        _, got = webjax.jvp(f, (jnp.asarray(x),), (jnp.asarray(t),))
        _, want = rjax.jvp(rf, (x,), (t,))
        assert_close(got, np.asarray(want), tol=4e-6)


# ---- transformations -----------------------------------------------------------------------------
def test_vmap_against_loop(device: Any) -> None:
    x = cplx(3, 4, 6, seed=4)
    xr = real(3, 5, 8, seed=5)
    for fn, a, axis in [
        (jnp.fft.fft, x, 0),
        (lambda v: jnp.fft.fft2(v), x, 2),
        (lambda v: jnp.fft.rfft(v, n=10), xr, 1),
        (lambda v: jnp.fft.irfft(v, axis=0), x, 1),
        (lambda v: lax.fft(v, "IRFFT", (4, 10)), x, 0),
    ]:
        got = webjax.vmap(fn, in_axes=axis)(jnp.asarray(a))
        want = np.stack(
            [np.asarray(fn(jnp.asarray(np.take(a, i, axis)))) for i in range(a.shape[axis])]
        )
        assert_close(got, want, tol=1e-6)
    # batched cotangents: per-example gradients
    g = webjax.vmap(webjax.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.rfft(v)) ** 2)))(
        jnp.asarray(xr[:, 0])
    )
    want = np.stack(
        [
            np.asarray(
                webjax.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.rfft(v)) ** 2))(jnp.asarray(xr[i, 0]))
            )
            for i in range(3)
        ]
    )
    assert_close(g, want, tol=1e-6)


def test_jit_equals_eager(device: Any) -> None:
    x = cplx(2, 12, 16, seed=7)
    xr = real(2, 12, 16, seed=8)
    fns = [
        (lambda v: jnp.fft.fft(v), x),
        (lambda v: jnp.fft.ifft2(v, norm="ortho") * 2.0, x),
        (lambda v: jnp.abs(jnp.fft.rfftn(v)) ** 2, xr),
        (lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * (1 + 0.5j)), xr),
        (lambda v: jnp.fft.fftshift(jnp.fft.fft(v, n=100, axis=1)), x),
        (lambda v: lax.fft(v, "IRFFT", (12, 30)), x),
    ]
    for fn, a in fns:
        eager = np.asarray(fn(jnp.asarray(a)))
        jitted = np.asarray(webjax.jit(fn)(jnp.asarray(a)))
        np.testing.assert_allclose(jitted, eager, rtol=1e-6, atol=1e-6 * np.max(np.abs(eager)))


def test_control_flow_and_disable_jit(device: Any, rjax: Any) -> None:
    x = real(4, 16, seed=13)

    def scanned(ns: Any, a: Any) -> Any:
        def body(c: Any, row: Any) -> Any:
            y = ns.numpy.fft.irfft(ns.numpy.fft.rfft(row * c) * 0.5, 16)
            return c + 0.1, ns.numpy.abs(ns.numpy.fft.fft(y))

        return ns.lax.scan(body, 1.0, a)[1]

    assert_close(scanned(webjax, jnp.asarray(x)), np.asarray(scanned(rjax, x)), tol=4e-6)
    with webjax.disable_jit():  # eager passes without the cached program
        got = jnp.fft.rfft(jnp.asarray(x), n=300)
        assert_close(got, np.fft.rfft(x.astype(np.float64), n=300))
        assert_close(lax.fft(jnp.asarray(cplx(16)), "IFFT", (16,)), np.fft.ifft(cplx(16)))


def test_jaxpr_shows_the_primitive() -> None:
    jaxpr = webjax.make_jaxpr(lambda v: jnp.fft.rfft(v))(jnp.ones(8))
    eqn = jaxpr.jaxpr.eqns[-1]
    assert eqn.primitive.name == "fft"
    assert eqn.params["fft_type"] == lax.FftType.RFFT and eqn.params["fft_lengths"] == (8,)


def test_install_as_jax_maps_numpy_fft() -> None:
    code = (
        "import webjax; webjax.install_as_jax()\n"
        "import jax, jax.numpy.fft as f\n"
        "from jax.numpy.fft import rfft\n"
        "import jax.numpy as jnp\n"
        "assert f is jnp.fft and rfft is webjax.numpy.fft.rfft\n"
        "assert jax.lax.FftType is webjax.lax.FftType\n"
        "print(float(jnp.fft.irfft(rfft(jnp.arange(4.0)))[3]))\n"
    )
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[1] / "pkg"), "PATH": "/usr/bin:/bin",
           "WEBJAX_PLATFORM": "cpu"}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3.0"
