"""lax.pow / jnp.power at the edges of the float formats, against real JAX, on every device: the
differential fuzzer found the GPU code generators' pow (WGSL and GLSL: 2^(b log2|a|) through a
double-float log2) returning NaN for pow(-1, b) with a huge (hence even) integer b, and +-inf
for results that round to float32's largest finite value; the cpu device's scalar pow gave +inf
for a negative base with a non-integer exponent where |a|^b overflows.

Every pair of a table of special values (zeros, +-1, +-inf, NaN, the largest finite value,
integers odd and even up to the format's top, numbers next to 1) is compared element by element,
besides the pairs whose results are nearest the top of the range."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax

jax = pytest.importorskip("jax")
ml_dtypes = pytest.importorskip("ml_dtypes")

F32_MAX = float(np.finfo(np.float32).max)
BF16_MAX = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
DTYPES = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}


def _specials(dtype: Any) -> list[float]:
    fi = ml_dtypes.finfo(dtype)
    top = float(fi.max)
    eps = float(fi.eps)
    odd = 2.0 ** (fi.nmant + 1) - 1  # the largest odd integer of the format
    vals = [0.0, 1.0, 0.5, 2.0, 3.0, 2.5, 1 / 3, 7.0, 10.0, 100.0, 127.0, 128.0, 1000.0]
    vals += [top, 2.0 ** (fi.nmant + 1), odd, odd - 1, 1 + eps, 1 - eps / 2, float(fi.tiny)]
    vals += [float(np.sqrt(top)), float(np.log2(top)), 1e-3, 1e-7]
    vals = vals + [-v for v in vals] + [np.inf, -np.inf, np.nan]
    return [float(v) for v in np.unique(np.asarray(vals, dtype).astype(np.float64))] + [np.nan]


# results at or next to the largest finite float32 (and its negative), and just past it
NEAR_MAX_F32 = [
    (F32_MAX, 1.0),
    (-F32_MAX, 1.0),
    (F32_MAX, 0.5),
    (float(np.sqrt(np.float32(F32_MAX))), 2.0),
    (-float(np.cbrt(np.float32(F32_MAX))), 3.0),
    (2.0, 127.99999),
    (2.0, float(np.nextafter(np.float32(128), np.float32(0)))),
    (-2.0, 127.0),
    (0.5, -127.99999),
    (2.0, 128.0),
    (-2.0, 129.0),
    (float(np.nextafter(np.float32(1), np.float32(2))), 2.0**30),
    (float(np.nextafter(np.float32(1), np.float32(2))), 2.0**30 * 0.99999),
    (F32_MAX, -0.5),
    (BF16_MAX, 1.0),
    (-BF16_MAX, 1.0),
    (-1.0, F32_MAX),
    (-1.0, -F32_MAX),
    (-1.0, BF16_MAX),
    (-1.0, 2.0**24 + 2),
    (-1.0, 2.0**24 - 1),
    (-1.0, -(2.0**23 + 1)),
    (-1.0, 2.0**23 + 0.5),
]


def _pairs(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    s = _specials(dtype)
    a = [x for x in s for _ in s]
    b = [y for _ in s for y in s]
    if dtype is np.float32:
        a += [p[0] for p in NEAR_MAX_F32]
        b += [p[1] for p in NEAR_MAX_F32]
    return np.asarray(a, np.float64).astype(dtype), np.asarray(b, np.float64).astype(dtype)


def _compare(a: np.ndarray, b: np.ndarray, got: np.ndarray, want: np.ndarray, ulps: int) -> None:
    g, w = got.astype(np.float64), want.astype(np.float64)
    fi = ml_dtypes.finfo(got.dtype)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    # XLA's CPU code flushes subnormal inputs and results to zero: those elements are not IEEE's
    flushed = (np.abs(a.astype(np.float64)) < float(fi.tiny)) | (np.abs(g) < float(fi.tiny))
    finite = np.isfinite(g) & np.isfinite(w)
    with np.errstate(invalid="ignore"):  # (inf - inf where both are infinite)
        close = finite & (np.abs(g - w) <= ulps * float(fi.eps) * np.abs(w))
    sign = np.signbit(g) == np.signbit(w)
    bad = ~(same & (sign | np.isnan(w)) | close | flushed)
    rows = [
        f"pow({a[i]!r}, {b[i]!r}) = {got[i]!r}, JAX {want[i]!r}" for i in np.flatnonzero(bad)[:12]
    ]
    assert not rows, f"{int(bad.sum())} of {bad.size} differ:\n" + "\n".join(rows)


@pytest.mark.parametrize("name", sorted(DTYPES))
@pytest.mark.parametrize("fn", ["lax.pow", "jnp.power"])
def test_pow_edges_as_jax(fn: str, name: str, device: Any) -> None:
    dtype = DTYPES[name]
    a, b = _pairs(dtype)

    def call(lib: Any, x: Any, y: Any) -> np.ndarray:
        f = lib.lax.pow if fn == "lax.pow" else lib.numpy.power
        return np.asarray(f(x, y))

    want = call(jax, a, b)
    got = call(webjax, webjax.device_put(a, device), webjax.device_put(b, device))
    assert got.dtype == want.dtype
    # float32 within 2 ulp (the GPU libraries' pow is a few ulp); the narrow formats are
    # computed in float32 and rounded once more: within an ulp of theirs
    _compare(a, b, got, want, 2 if dtype is np.float32 else 1)


@pytest.mark.parametrize("fn", ["jit", "vmap"])
def test_pow_near_float32_max_traced(fn: str, device: Any) -> None:
    """The same near-overflow pairs inside jit and vmap (fused kernels)."""
    a = np.float32([p[0] for p in NEAR_MAX_F32])
    b = np.float32([p[1] for p in NEAR_MAX_F32])
    wrap = {"jit": lambda lib, f: lib.jit(f), "vmap": lambda lib, f: lib.vmap(f)}[fn]
    want = np.asarray(wrap(jax, lambda x, y: jax.lax.pow(x, y) * 1.0)(a, b))
    got = np.asarray(wrap(webjax, lambda x, y: webjax.lax.pow(x, y) * 1.0)(a, b))
    _compare(a, b, got, want, 2)
