"""The nonsymmetric eigendecomposition, JAX's `lax.linalg.eig` (primitive "eig").

As in JAX, this is a host computation: JAX's `eig` is a LAPACK call that exists on its CPU
backend only. Here the matrix is read back from its device, decomposed on the host, and the
results are uploaded to the same device. Where NumPy imports (CPython; Pyodide pages that
load it) the decomposition is LAPACK's `geev` through `numpy.linalg.eig`, so eigenvalues come
in LAPACK's order, as JAX's; elsewhere a pure-Python complex Schur decomposition (Householder
Hessenberg reduction, then Wilkinson-shifted QR steps with deflation, eigenvectors by back
substitution) computes the same pairs, possibly in another order. Eigenvectors are LAPACK's
(through NumPy, in the input's precision, as JAX's sgeev/dgeev); the fallback normalizes them
alike: unit Euclidean norm, the component of largest modulus real. Left
eigenvectors are the rows of V^-1, conjugated and normalized the same way.

Because it reads values, `jit` programs containing `eig` run eagerly (as pure_callback does).
Derivatives: eigenvalues only (dw = diag(V^-1 dA V)), as JAX; eigenvector derivatives raise
JAX's NotImplementedError.
"""

from __future__ import annotations

import cmath
import math
from typing import Any

from .. import core, dtypes
from ..core import ShapedArray
from ..dispatch.array import from_flat
from ..interpreters import ad, batching
from ..interpreters.ad import Zero
from . import lax

eig_p = lax._prim("eig")
eig_p.multiple_results = True


@eig_p.def_abstract_eval
def _eig_abstract(
    x: ShapedArray,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    use_magma: Any = None,
) -> list[ShapedArray]:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            "Argument to nonsymmetric eigendecomposition must have shape [..., n, n], got shape "
            f"{x.shape}"
        )
    if x.dtype.kind not in "fc":
        raise TypeError(
            f"eig does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of "
            "floating, complexfloating."
        )
    if x.dtype.itemsize < 4:
        raise NotImplementedError(
            f"Unsupported dtype {x.dtype.name}: eig needs float32 or "
            "float64 (cast the input first)."
        )
    cdt = dtypes.to_complex(x.dtype) if x.dtype.kind == "f" else x.dtype
    batch, n = x.shape[:-2], x.shape[-1]
    outs = [ShapedArray((*batch, n), cdt)]
    if compute_left_eigenvectors:
        outs.append(ShapedArray(x.shape, cdt))
    if compute_right_eigenvectors:
        outs.append(ShapedArray(x.shape, cdt))
    return outs


def eig(
    x: Any,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    use_magma: Any = None,
) -> list[Any]:
    """Eigenvalues w and (optionally) left and right eigenvectors of square matrices:
    A vr[:, j] = w[j] vr[:, j] and vl[:, j]^H A = w[j] vl[:, j]^H."""
    return eig_p.bind(
        x,
        compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
        use_magma=use_magma,
    )


# ---- host decomposition --------------------------------------------------------------------------
Matrix = list[list[complex]]


def _normalize(v: list[complex]) -> list[complex]:
    """Unit norm, the component of largest modulus real and positive (LAPACK's convention)."""
    norm = math.sqrt(sum(abs(c) ** 2 for c in v))
    if norm == 0:
        return v
    big = max(v, key=abs)
    phase = big.conjugate() / abs(big) if big != 0 else 1
    return [c * phase / norm for c in v]


def _hessenberg(a: Matrix) -> tuple[Matrix, Matrix]:
    """Householder reduction: returns (H, Q) with A = Q H Q^H, H upper Hessenberg."""
    n = len(a)
    h = [row[:] for row in a]
    q = [[complex(i == j) for j in range(n)] for i in range(n)]
    for k in range(n - 2):
        x = [h[i][k] for i in range(k + 1, n)]
        alpha = math.sqrt(sum(abs(c) ** 2 for c in x))
        if alpha == 0:
            continue
        phase = x[0] / abs(x[0]) if x[0] != 0 else 1
        v = x[:]
        v[0] += phase * alpha
        vn = math.sqrt(sum(abs(c) ** 2 for c in v))
        v = [c / vn for c in v]
        # H <- P H P with P = I - 2 v v^H acting on rows/cols k+1..n-1
        for j in range(n):
            s = sum(v[i].conjugate() * h[k + 1 + i][j] for i in range(len(v)))
            for i in range(len(v)):
                h[k + 1 + i][j] -= 2 * v[i] * s
        for i in range(n):
            s = sum(h[i][k + 1 + j] * v[j] for j in range(len(v)))
            for j in range(len(v)):
                h[i][k + 1 + j] -= 2 * s * v[j].conjugate()
        for i in range(n):
            s = sum(q[i][k + 1 + j] * v[j] for j in range(len(v)))
            for j in range(len(v)):
                q[i][k + 1 + j] -= 2 * s * v[j].conjugate()
    return h, q


def _givens(a: complex, b: complex) -> tuple[float, complex]:
    """c, s with [[c, s], [-conj(s), c]] [a, b]^T = [r, 0]^T."""
    if b == 0:
        return 1.0, 0j
    if a == 0:
        return 0.0, b.conjugate() / abs(b)
    r = math.hypot(abs(a), abs(b))
    c = abs(a) / r
    s = (a / abs(a)) * b.conjugate() / r
    return c, s


def _schur(h: Matrix, q: Matrix, eps: float) -> None:
    """In place: shifted QR steps take the Hessenberg H to upper triangular T, Q accumulates."""
    n = len(h)
    hi = n - 1
    iters = 0
    while hi > 0:
        # deflate from the bottom
        lo = hi
        while lo > 0:
            off = abs(h[lo][lo - 1])
            if off <= eps * (abs(h[lo][lo]) + abs(h[lo - 1][lo - 1])) or off < 1e-300:
                h[lo][lo - 1] = 0j
                break
            lo -= 1
        if lo == hi:
            hi -= 1
            iters = 0
            continue
        iters += 1
        if iters > 60 * n:
            raise ArithmeticError("eig: the QR iteration did not converge")
        # Wilkinson shift from the trailing 2x2 block (exceptional shifts now and then)
        a, b = h[hi - 1][hi - 1], h[hi - 1][hi]
        c, d = h[hi][hi - 1], h[hi][hi]
        tr, det = a + d, a * d - b * c
        disc = cmath.sqrt(tr * tr / 4 - det)
        mu1, mu2 = tr / 2 + disc, tr / 2 - disc
        mu = mu1 if abs(mu1 - d) < abs(mu2 - d) else mu2
        if iters % 11 == 0:
            mu = d + abs(h[hi][hi - 1]) * 0.75
        for i in range(lo, hi + 1):
            h[i][i] -= mu
        rots = []
        for k in range(lo, hi):
            cs, sn = _givens(h[k][k], h[k + 1][k])
            rots.append((cs, sn))
            for j in range(k, n):
                x, y = h[k][j], h[k + 1][j]
                h[k][j] = cs * x + sn * y
                h[k + 1][j] = -sn.conjugate() * x + cs * y
        for k, (cs, sn) in zip(range(lo, hi), rots, strict=True):
            for i in range(0, min(k + 2, hi) + 1):
                x, y = h[i][k], h[i][k + 1]
                h[i][k] = cs * x + sn.conjugate() * y
                h[i][k + 1] = -sn * x + cs * y
            for i in range(n):
                x, y = q[i][k], q[i][k + 1]
                q[i][k] = cs * x + sn.conjugate() * y
                q[i][k + 1] = -sn * x + cs * y
        for i in range(lo, hi + 1):
            h[i][i] += mu


def _eig_python(a: Matrix, eps: float) -> tuple[list[complex], Matrix]:
    """Eigenvalues and right eigenvectors (columns) of a small complex matrix."""
    n = len(a)
    t, q = _hessenberg(a)
    _schur(t, q, eps)
    w = [t[k][k] for k in range(n)]
    scale = max((abs(t[i][j]) for i in range(n) for j in range(n)), default=0.0) or 1.0
    vr = [[0j] * n for _ in range(n)]
    for k in range(n):
        y = [0j] * n
        y[k] = 1 + 0j
        for j in range(k - 1, -1, -1):
            s = sum(t[j][m] * y[m] for m in range(j + 1, k + 1))
            den = t[j][j] - w[k]
            if abs(den) < eps * scale:
                den = eps * scale
            y[j] = -s / den
        x = _normalize([sum(q[i][m] * y[m] for m in range(n)) for i in range(n)])
        for i in range(n):
            vr[i][k] = x[i]
    return w, vr


def _inverse(a: Matrix) -> Matrix:
    n = len(a)
    m = [row[:] + [complex(i == j) for j in range(n)] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        piv = m[c][c]
        if piv == 0:
            piv = complex(1e-300)
        m[c] = [v / piv for v in m[c]]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c]
                m[r] = [v - f * u for v, u in zip(m[r], m[c], strict=True)]
    return [row[n:] for row in m]


def _left_from_right(vr: Matrix) -> Matrix:
    """Columns u_j with u_j^H A = w_j u_j^H: the rows of V^-1, conjugated, normalized."""
    n = len(vr)
    inv = _inverse(vr)
    cols = [_normalize([inv[j][i].conjugate() for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def _decompose(
    mats: list[Matrix], left: bool, double: bool
) -> list[tuple[list[complex], Matrix, Matrix]]:
    try:
        import numpy as np
    except ImportError:  # Pyodide without NumPy: the pure-Python decomposition
        np = None  # type: ignore[assignment]
    out = []
    for a in mats:
        if np is not None:  # LAPACK in the input's precision (sgeev for float32, as JAX)
            real = all(v.imag == 0 for row in a for v in row)
            arr: Any = np.array(a, dtype=np.complex128 if double else np.complex64)
            if real:
                arr = arr.real
            w_np, vr_np = np.linalg.eig(arr)
            w = [complex(v) for v in w_np]
            vr = [[complex(v) for v in row] for row in vr_np]
        else:
            w, vr = _eig_python(a, 2.0**-52)
        out.append((w, vr, _left_from_right(vr) if left else []))
    return out


def _transpose(m: Matrix) -> Matrix:
    return [list(col) for col in zip(*m, strict=True)] if m else m


@eig_p.def_impl
def _eig_impl(
    x: Any,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    use_magma: Any = None,
) -> list[Any]:
    aval = core.get_aval(x)
    outs_avals = _eig_abstract(
        aval,
        compute_left_eigenvectors=compute_left_eigenvectors,
        compute_right_eigenvectors=compute_right_eigenvectors,
    )
    n = aval.shape[-1]
    flat = [complex(v) for v in x._flat_values()] if aval.size else []  # reads: eager only
    mats = [
        [flat[b * n * n + i * n : b * n * n + (i + 1) * n] for i in range(n)]
        for b in range(aval.size // (n * n) if n else 0)
    ]
    double = dtypes.component(aval.dtype) is dtypes.float64
    results = _decompose(mats, compute_left_eigenvectors, double)
    device = x._device
    cdt = outs_avals[0].dtype
    ws = [v for w, _, _ in results for v in w]
    outs = [from_flat(ws, outs_avals[0].shape, cdt, device)]
    if compute_left_eigenvectors:
        vals = [v for _, _, vl in results for row in vl for v in row]
        outs.append(from_flat(vals, aval.shape, cdt, device))
    if compute_right_eigenvectors:
        vals = [v for _, vr, _ in results for row in vr for v in row]
        outs.append(from_flat(vals, aval.shape, cdt, device))
    return outs


def _eig_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    use_magma: Any = None,
) -> tuple[Any, Any]:
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError(
            "The derivatives of eigenvectors are not implemented, only eigenvalues. See "
            "https://github.com/jax-ml/jax/issues/2748 for discussion."
        )
    (a,), (da,) = primals, tangents
    w, vl, vr = eig(a, compute_left_eigenvectors=True, compute_right_eigenvectors=True)
    if isinstance(da, Zero):
        return [w], [Zero(core.get_aval(w))]
    cdt = core.get_aval(vr).dtype
    da = ad.instantiate(da)
    if core.get_aval(da).dtype is not cdt:
        da = lax.convert_element_type(da, cdt)
    nb = core.get_aval(a).ndim - 2
    batch = tuple(range(nb))
    # dw_j = u_j^H dA v_j / u_j^H v_j (u, v: left and right eigenvectors), i.e. diag(V^-1 dA V)
    dav = lax.dot_general(da, vr, (((nb + 1,), (nb,)), (batch, batch)))
    ul = lax.conj(vl)
    num = lax.reduce_sum(lax.mul(ul, dav), (nb,))
    den = lax.reduce_sum(lax.mul(ul, vr), (nb,))
    return [w], [lax.div(num, den)]


ad.primitive_jvps[eig_p] = _eig_jvp


def _eig_batch(vals: list[Any], dims: list[Any], **params: Any) -> tuple[Any, Any]:
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    out = eig_p.bind(x, **params)
    return out, [0] * len(out)


batching.primitive_batchers[eig_p] = _eig_batch

__all__ = ["eig", "eig_p"]
