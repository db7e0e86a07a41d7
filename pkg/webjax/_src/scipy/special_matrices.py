"""jax.scipy.linalg's special matrices (SciPy's `scipy.linalg` constructors): Toeplitz,
Hankel, circulant, companion, Fiedler, Leslie and convolution matrices of given vectors
(batched over leading dimensions where JAX batches), and the fixed families (Hilbert, Pascal,
Hadamard, Helmert, DFT) with their exact entries.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from .. import numpy as jnp
from ..numpy import util


def _vec(name: str, x: Any) -> Any:
    util.check_arraylike(name, x)
    return jnp.asarray(x)


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column c and first row r (r = conj(c) if omitted; r[0]
    is ignored); leading dimensions of c and r batch."""
    c = _vec("toeplitz", c)
    r = jnp.conj(c) if r is None else _vec("toeplitz", r)
    dt = jnp.result_type(c, r)
    c, r = c.astype(dt), r.astype(dt)
    batch = jnp.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c, r = jnp.broadcast_to(c, (*batch, c.shape[-1])), jnp.broadcast_to(r, (*batch, r.shape[-1]))
    m, n = c.shape[-1], r.shape[-1]
    # entry (i, j) is c[i - j] on and below the diagonal, r[j - i] above it (r[0] unused)
    vals = jnp.concatenate([jnp.flip(c, -1), r[..., 1:]], axis=-1)  # c[m-1] ... c[0] r[1] ...
    i = jnp.arange(m)[:, None]
    j = jnp.arange(n)[None, :]
    return vals[..., (m - 1) + j - i]


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column c and last row r (zeros if omitted; r[0] ignored)."""
    c = _vec("hankel", c).ravel()
    r = jnp.zeros_like(c) if r is None else _vec("hankel", r).ravel()
    dt = jnp.result_type(c, r)
    vals = jnp.concatenate([c.astype(dt), r[1:].astype(dt)])
    m, n = c.shape[0], r.shape[0]
    return vals[jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def circulant(c: Any) -> Any:
    """The circulant matrix with first column c (leading dimensions batch)."""
    c = _vec("circulant", c)
    n = c.shape[-1]
    return c[..., (jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n]


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients a (highest degree first)."""
    a = _vec("companion", a)
    if a.ndim != 1:
        raise ValueError("Incorrect shape for `a`.  `a` must be one-dimensional.")
    if a.shape[0] < 2:
        raise ValueError("The length of `a` must be at least 2.")
    n = a.shape[0] - 1
    row = -a[1:] / (1.0 * a[0])
    sub = jnp.eye(n - 1, n, dtype=row.dtype)
    return jnp.concatenate([row[None, :], sub], axis=0)


def fiedler(a: Any) -> Any:
    """The symmetric Fiedler matrix |a[i] - a[j]|."""
    a = _vec("fiedler", a)
    return jnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a: Any) -> Any:
    """The Fiedler companion matrix of the polynomial a (highest degree first), pentadiagonal
    with the eigenvalues of `companion(a)`."""
    a = _vec("fiedler_companion", a)
    if a.ndim != 1:
        raise ValueError("Input 'a' must be a 1-D array.")
    if a.shape[0] <= 2:
        if a.shape[0] == 2:
            return jnp.asarray([[-(a[1] / a[0])]])
        return jnp.zeros((0, 0), a.dtype)
    a = a / a[0]
    n = a.shape[0] - 1
    dt = a.dtype
    c = jnp.zeros((n, n), dt)
    c = c.at[list(range(3, n, 2)), list(range(1, n - 2, 2))].set(1.0)
    c = c.at[list(range(2, n, 2)), list(range(1, n - 1, 2))].set(-a[3::2])
    c = c.at[list(range(0, n - 2, 2)), list(range(2, n, 2))].set(1.0)
    c = c.at[list(range(0, n - 1, 2)), list(range(1, n, 2))].set(-a[2::2])
    c = c.at[0, 0].set(-a[1])
    c = c.at[1, 0].set(1.0)
    return c


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix of fecundities f (length n) and survival rates s (length n - 1)."""
    f, s = _vec("leslie", f), _vec("leslie", s)
    if f.shape[-1] - 1 != s.shape[-1]:
        raise ValueError(
            f"Length of s must be one less than length of f, got f length {f.shape[-1]} and s "
            f"length {s.shape[-1]}"
        )
    n = f.shape[-1]
    dt = jnp.result_type(f, s)
    sub = jnp.eye(n - 1, n, dtype=dt) * s[..., :, None].astype(dt)
    return jnp.concatenate([f[..., None, :].astype(dt), sub], axis=-2)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix A with A @ v = convolve(a, v, mode) for v of length n."""
    a = _vec("convolution_matrix", a)
    if a.ndim != 1:
        raise ValueError("convolution_matrix expects a one-dimensional array as input")
    if n <= 0:
        raise ValueError(f"n must be a positive integer, got {n}")
    m = a.shape[0]
    full = toeplitz(jnp.concatenate([a, jnp.zeros(n - 1, a.dtype)]), jnp.zeros(n, a.dtype))
    if mode == "full":
        return full
    if mode == "same":
        start = (min(n, m) - 1) // 2
        return full[start : start + max(m, n)]
    if mode == "valid":
        return full[min(m, n) - 1 : max(m, n)]
    raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")


def hilbert(n: int) -> Any:
    """The n x n Hilbert matrix 1 / (i + j + 1)."""
    i = jnp.arange(n, dtype=dtypes.default_float())
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


def invhilbert(n: int) -> Any:
    """The exact inverse of the n x n Hilbert matrix (entries from binomial coefficients)."""
    rows = []
    for i in range(n):
        row = []
        for j in range(n):
            s = -1 if (i + j) % 2 else 1
            row.append(
                s
                * (i + j + 1)
                * math.comb(n + i, n - j - 1)
                * math.comb(n + j, n - i - 1)
                * math.comb(i + j, i) ** 2
            )
        rows.append(row)
    return jnp.asarray(rows, dtype=dtypes.default_float())


def _pascal_rows(n: int, kind: str) -> list[list[int]]:
    if kind == "lower":
        return [[math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "upper":
        return [[math.comb(j, i) for j in range(n)] for i in range(n)]
    if kind == "symmetric":
        return [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    raise ValueError("kind must be 'symmetric', 'lower', or 'upper'")


def pascal(n: int, kind: str | None = None) -> Any:
    """The n x n Pascal matrix (binomial coefficients): 'symmetric' (default), 'lower' or
    'upper'."""
    return jnp.asarray(_pascal_rows(n, kind or "symmetric"), dtype=dtypes.default_float())


def invpascal(n: int, kind: str | None = None) -> Any:
    """The exact inverse of pascal(n, kind)."""
    kind = kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError("kind must be 'symmetric', 'lower', or 'upper'")
    lower = [[(-1) ** (i - j) * math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "lower":
        rows = lower
    elif kind == "upper":
        rows = [[lower[j][i] for j in range(n)] for i in range(n)]
    else:  # (L L^T)^-1 = L^-T L^-1
        rows = [
            [sum(lower[k][i] * lower[k][j] for k in range(n)) for j in range(n)] for i in range(n)
        ]
    return jnp.asarray(rows, dtype=dtypes.default_float())


def hadamard(n: int, dtype: Any = int) -> Any:
    """The n x n Sylvester Hadamard matrix (n a power of 2)."""
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive a power of 2 integer")
    h = [[1]]
    while len(h) < n:
        h = [row + row for row in h] + [row + [-v for v in row] for row in h]
    return jnp.asarray(h, dtype=dtype)


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix: orthonormal rows, the first (kept with `full`) constant."""
    rows = [[1.0 / math.sqrt(n)] * n]
    for k in range(1, n):
        d = math.sqrt(k * (k + 1))
        rows.append([1.0 / d] * k + [-k / d] + [0.0] * (n - k - 1))
    out = jnp.asarray(rows, dtype=dtypes.default_float())
    return out if full else out[1:]


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n), scaled by 1/n
    ('n'), 1/sqrt(n) ('sqrtn') or not (None)."""
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; {scale!r} is not valid.")
    dt = dtypes.canonicalize_user(dtype, "dft") if dtype is not None else dtypes.default_complex()
    rows = [
        [
            complex(
                math.cos(-2 * math.pi * (j * k % n) / n), math.sin(-2 * math.pi * (j * k % n) / n)
            )
            for k in range(n)
        ]
        for j in range(n)
    ]
    out = jnp.asarray(rows, dtype=dt)
    if scale == "sqrtn":
        return out / math.sqrt(n)
    if scale == "n":
        return out / n
    return out
