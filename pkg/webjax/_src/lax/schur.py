"""The Schur decomposition and the Hessenberg reduction, JAX's `lax.linalg.schur` and
`lax.linalg.hessenberg` (primitives "schur" and "hessenberg"), and `householder_product`.

As `eig` (lax/eig.py), these are host computations: JAX's are LAPACK calls (gees, gehrd) that
exist on its CPU backend only. The matrix is read back from its device, decomposed on the host
in float64 (complex128) arithmetic, and the results, rounded to the input's dtype, are uploaded
to the same device; `jit` programs containing them run eagerly. Written here in pure Python,
so they work without NumPy (Pyodide pages that do not load it):

* hessenberg: Householder reflectors with LAPACK's conventions (gehrd/larfg: beta =
  -sign(Re alpha) * norm, real; v[0] = 1 implicit), returned packed as gehrd does: H in the
  upper triangle and first subdiagonal, the reflectors below, and their n - 1 scalar factors
  (the last is 0 for real input; for complex input it makes the last subdiagonal real, as
  LAPACK's does), so the result matches SciPy's and JAX's to rounding.
* schur, real input: that reduction, then Francis double-shift QR steps with deflation
  (exceptional shifts every 10 steps), the 2x2 blocks left standardized as LAPACK's lanv2
  does (equal diagonal, off-diagonal entries of opposite sign; a block with real eigenvalues
  is split to triangular). Complex input: Wilkinson-shifted complex QR steps (eig's). Schur
  forms are not unique: the eigenvalues may come in another order along the diagonal than
  LAPACK's.
A QR iteration that does not converge fills the results with NaN, as JAX does when LAPACK
reports failure. Neither primitive has derivatives, as in JAX.
"""

from __future__ import annotations

import math
from typing import Any

from .. import core, dtypes
from ..core import ShapedArray
from ..dispatch.array import from_flat
from ..interpreters import batching
from ..ir import scalar
from . import eig as lax_eig
from . import lax
from .slicing import slice_in_dim

schur_p = lax._prim("schur")
schur_p.multiple_results = True
hessenberg_p = lax._prim("hessenberg")
hessenberg_p.multiple_results = True

Matrix = list[list[Any]]  # rows of Python floats (real input) or complexes


def _check(name: str, x: ShapedArray, what: str) -> None:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{what} must have shape [..., n, n], got shape {x.shape}")
    if x.dtype.kind not in "fc":
        raise TypeError(
            f"{name} does not accept dtype {x.dtype.name} at position 0. Accepted dtypes at "
            "position 0 are subtypes of floating, complexfloating."
        )
    if x.dtype.itemsize < 4 and x.dtype.kind == "f":
        raise NotImplementedError(
            f"Unsupported dtype {x.dtype.name}: {name} needs float32 or float64 (cast the "
            "input first)."
        )


@schur_p.def_abstract_eval
def _schur_abstract(
    x: ShapedArray, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any
) -> list[ShapedArray]:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {x.shape}.")
    _check("schur", x, "The input to schur")
    out = ShapedArray(x.shape, x.dtype)
    return [out, out] if compute_schur_vectors else [out]


@hessenberg_p.def_abstract_eval
def _hessenberg_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check("hessenberg", a, "Argument to Hessenberg reduction")
    n = a.shape[-1]
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*a.shape[:-2], max(n - 1, 0)), a.dtype)]


def schur(
    x: Any,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable: Any = None,
) -> Any:
    """The Schur form U of square matrices x (x = Q U Q^H, Q unitary, U upper triangular, or
    quasi-triangular with 2x2 blocks for real x) and, when compute_schur_vectors, Q: returns
    [U, Q] or [U]."""
    return schur_p.bind(
        lax.to_array(x),
        compute_schur_vectors=bool(compute_schur_vectors),
        sort_eig_vals=bool(sort_eig_vals),
        select_callable=select_callable,
    )


def hessenberg(a: Any) -> tuple[Any, Any]:
    """(a, taus): the upper Hessenberg form of a in its upper triangle and first subdiagonal,
    the Householder reflectors below it, and their scalar factors (LAPACK's gehrd layout)."""
    h, taus = hessenberg_p.bind(lax.to_array(a))
    return h, taus


def householder_product(a: Any, taus: Any) -> Any:
    """The first n columns of H_0 H_1 ... H_{k-1} (a: [..., m, n], taus: [..., k], k <= n),
    H_i = I - taus[i] v_i v_i^H with v_i zero above row i, 1 at row i, a[i+1:, i] below."""
    a, taus = lax.to_array(a), lax.to_array(taus)
    sa, st = core.get_aval(a), core.get_aval(taus)
    if sa.ndim < 2 or st.ndim != sa.ndim - 1 or st.shape[:-1] != sa.shape[:-2]:
        raise ValueError(
            "Argument to Householder product must have shape [..., m, n] with taus [..., k], "
            f"got {sa.shape} and {st.shape}"
        )
    m, n = sa.shape[-2:]
    k = st.shape[-1]
    if m < n or k > n:
        raise ValueError(
            f"Householder product requires m >= n and k <= n, got a of shape {sa.shape} and "
            f"taus of shape {st.shape}"
        )
    dt, batch = sa.dtype, sa.shape[:-2]
    nb = len(batch)
    rows = lax.broadcasted_iota(dtypes.int32, (m, 1), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (m, n), 1)
    q = lax.convert_element_type(lax.eq(lax.broadcast_in_dim(rows, (m, n), (0, 1)), cols), dt)
    q = lax.broadcast_in_dim(q, (*batch, m, n), (nb, nb + 1))
    bdims = tuple(range(nb))
    for i in reversed(range(k)):
        col = slice_in_dim(a, i, i + 1, axis=nb + 1)  # [..., m, 1]
        below = lax.gt(rows, lax.full((m, 1), i, dtypes.int32))
        at = lax.eq(rows, lax.full((m, 1), i, dtypes.int32))
        shape = (*batch, m, 1)
        v = lax.select(
            lax.broadcast_in_dim(below, shape, (nb, nb + 1)),
            col,
            lax.convert_element_type(lax.broadcast_in_dim(at, shape, (nb, nb + 1)), dt),
        )
        tau = slice_in_dim(taus, i, i + 1, axis=nb)  # [..., 1]
        vh = lax.conj(v) if dt.kind == "c" else v
        w = lax.dot_general(vh, q, (((nb,), (nb,)), (bdims, bdims)))  # [..., 1, n]
        upd = lax.dot_general(v, w, (((nb + 1,), (nb,)), (bdims, bdims)))  # [..., m, n]
        q = lax.sub(q, lax.mul(lax.broadcast_in_dim(tau, (*batch, m, n), (*bdims, nb)), upd))
    return q


# ---- host algorithms ---------------------------------------------------------------------------
def _householder(alpha: Any, x: list[Any]) -> tuple[Any, Any, list[Any]]:
    """LAPACK's larfg: (beta, tau, v) with (I - tau [1; v][1; v]^H)^H [alpha; x] = [beta; 0]."""
    xnorm = math.sqrt(sum(abs(c) ** 2 for c in x))
    imag = alpha.imag if isinstance(alpha, complex) else 0.0
    if xnorm == 0 and imag == 0:
        return alpha, alpha * 0, [c * 0 for c in x]
    beta = -math.copysign(math.sqrt(abs(alpha) ** 2 + xnorm**2), alpha.real)
    tau = (beta - alpha.real) / beta
    if isinstance(alpha, complex):
        tau = complex(tau, -imag / beta)
    scal = 1 / (alpha - beta)
    return beta, tau, [c * scal for c in x]


def _conj(v: Any) -> Any:
    return v.conjugate()


def _gehrd(a: Matrix) -> tuple[Matrix, list[Any]]:
    """Householder reduction to Hessenberg form, packed as LAPACK's gehrd."""
    n = len(a)
    h = [row[:] for row in a]
    taus = []
    for k in range(n - 1):
        beta, tau, v = _householder(h[k + 1][k], [h[i][k] for i in range(k + 2, n)])
        taus.append(tau)
        h[k + 1][k] = beta
        for i, c in enumerate(v):
            h[k + 2 + i][k] = c
        if tau == 0:
            continue
        u = [h[k + 1][k] * 0 + 1, *v]  # [1; v]
        # right: H[:, k+1:] -= tau (H[:, k+1:] u) u^H
        for i in range(n):
            row = h[i]
            w = sum(row[k + 1 + j] * u[j] for j in range(len(u)))
            if w:
                tw = tau * w
                for j in range(len(u)):
                    row[k + 1 + j] -= tw * _conj(u[j])
        # left: H[k+1:, k+1:] -= conj(tau) u (u^H H[k+1:, k+1:])
        ct = _conj(tau)
        for c in range(k + 1, n):
            w = sum(_conj(u[j]) * h[k + 1 + j][c] for j in range(len(u)))
            if w:
                tw = ct * w
                for j in range(len(u)):
                    h[k + 1 + j][c] -= tw * u[j]
    return h, taus


def _orgqr_hess(packed: Matrix, taus: list[Any]) -> Matrix:
    """Q = H_0 ... H_{n-2} of a gehrd result (A = Q H Q^H)."""
    n = len(packed)
    one = packed[0][0] * 0 + 1 if n else 1.0
    q = [[one if i == j else one * 0 for j in range(n)] for i in range(n)]
    for k in reversed(range(n - 1)):
        tau = taus[k]
        if tau == 0:
            continue
        u = [one, *(packed[i][k] for i in range(k + 2, n))]  # rows k+1..n-1
        for c in range(n):
            w = sum(_conj(u[j]) * q[k + 1 + j][c] for j in range(len(u)))
            if w:
                tw = tau * w
                for j in range(len(u)):
                    q[k + 1 + j][c] -= tw * u[j]
    return q


def _hess_form(packed: Matrix) -> Matrix:
    n = len(packed)
    return [[packed[i][j] if i <= j + 1 else packed[i][j] * 0 for j in range(n)] for i in range(n)]


def _lanv2(a: float, b: float, c: float, d: float) -> tuple[float, ...]:
    """LAPACK's lanv2: the standardized Schur form [[a, b], [c, d]] of a real 2x2 block and
    the rotation (cs, sn): the block = [[cs, -sn], [sn, cs]] [[a, b], [c, d]] [[cs, sn],
    [-sn, cs]] with c == 0, or a == d and b * c < 0."""
    eps = 2.0**-53
    if c == 0:
        return a, b, c, d, 1.0, 0.0
    if b == 0:
        return d, -c, 0.0, a, 0.0, 1.0
    if a - d == 0 and (b > 0) != (c > 0):
        return a, b, c, d, 1.0, 0.0
    temp = a - d
    p = 0.5 * temp
    bcmax = max(abs(b), abs(c))
    bcmis = min(abs(b), abs(c)) * math.copysign(1, b) * math.copysign(1, c)
    scale = max(abs(p), bcmax)
    z = p / scale * p + bcmax / scale * bcmis
    if z >= 4 * eps:  # real eigenvalues: upper triangular
        z = p + math.copysign(math.sqrt(scale) * math.sqrt(z), p)
        a = d + z
        d = d - bcmax / z * bcmis
        tau = math.hypot(c, z)
        cs, sn = z / tau, c / tau
        return a, b - c, 0.0, d, cs, sn
    # complex or nearly equal eigenvalues: make the diagonal equal
    sigma = b + c
    tau = math.hypot(sigma, temp)
    cs = math.sqrt(0.5 * (1 + abs(sigma) / tau))
    sn = -(p / (tau * cs)) * math.copysign(1, sigma)
    aa, bb = a * cs + b * sn, -a * sn + b * cs
    cc, dd = c * cs + d * sn, -c * sn + d * cs
    a, b = aa * cs + cc * sn, bb * cs + dd * sn
    c, d = -aa * sn + cc * cs, -bb * sn + dd * cs
    temp = 0.5 * (a + d)
    a = d = temp
    if c != 0:
        if b != 0:
            if (b > 0) == (c > 0):  # real after all: triangular
                sab, sac = math.sqrt(abs(b)), math.sqrt(abs(c))
                p = math.copysign(sab * sac, c)
                tau = 1 / math.sqrt(abs(b + c))
                a, d = temp + p, temp - p
                b, c = b - c, 0.0
                cs1, sn1 = sab * tau, sac * tau
                cs, sn = cs * cs1 - sn * sn1, cs * sn1 + sn * cs1
        else:
            b, c = -c, 0.0
            cs, sn = -sn, cs
    return a, b, c, d, cs, sn


def _reflect3(
    h: Matrix, z: Matrix, k: int, nr: int, v: list[float], beta: float, rows_hi: int, col_lo: int
) -> None:
    """Apply P = I - beta v v^T (v of length nr) to rows k.. of H (columns col_lo..), to
    columns k.. of H (rows 0..rows_hi) and to columns k.. of Z."""
    n = len(h)
    for c in range(col_lo, n):
        s = beta * sum(v[j] * h[k + j][c] for j in range(nr))
        if s:
            for j in range(nr):
                h[k + j][c] -= s * v[j]
    for mat, hi in ((h, rows_hi), (z, n - 1)):
        for r in range(hi + 1):
            row = mat[r]
            s = beta * sum(row[k + j] * v[j] for j in range(nr))
            if s:
                for j in range(nr):
                    row[k + j] -= s * v[j]


def _house(x: list[float]) -> tuple[list[float], float]:
    """v (v[0] = 1) and beta with (I - beta v v^T) x = (-+|x|, 0, ...)."""
    _, tau, v = _householder(x[0], x[1:])
    return [1.0, *v], tau


def _real_schur(h: Matrix, z: Matrix) -> bool:
    """In place: Francis double-shift QR takes the Hessenberg H to real Schur form (standard
    2x2 blocks), Z accumulates. False when it does not converge."""
    n = len(h)
    eps = 2.0**-52
    hi = n - 1
    iters = 0
    while hi >= 0:
        lo = hi
        while lo > 0:
            off = abs(h[lo][lo - 1])
            tst = abs(h[lo - 1][lo - 1]) + abs(h[lo][lo])
            if off <= eps * tst or off < 1e-300:
                h[lo][lo - 1] = 0.0
                break
            lo -= 1
        if lo == hi:  # a 1x1 block
            hi -= 1
            iters = 0
            continue
        if lo == hi - 1:  # a 2x2 block: standardize it
            i = hi
            a, b, c, d, cs, sn = _lanv2(h[i - 1][i - 1], h[i - 1][i], h[i][i - 1], h[i][i])
            h[i - 1][i - 1], h[i - 1][i], h[i][i - 1], h[i][i] = a, b, c, d
            _rot_rows(h, i - 1, i, i + 1, cs, sn)
            _rot_cols(h, i - 1, i, i - 1, cs, sn)
            _rot_cols(z, i - 1, i, n, cs, sn)
            hi -= 2
            iters = 0
            continue
        iters += 1
        if iters > 30 * max(n, 10):
            return False
        m = hi
        if iters % 10 == 0:  # exceptional shift: [[h, -0.4375 s], [s, h]], h = 0.75 s + H_mm
            s = abs(h[m][m - 1]) + abs(h[m - 1][m - 2])
            sh = 0.75 * s + h[m][m]
            tr2 = 2 * sh
            det = sh * sh + 0.4375 * s * s
        else:
            tr2 = h[m - 1][m - 1] + h[m][m]
            det = h[m - 1][m - 1] * h[m][m] - h[m - 1][m] * h[m][m - 1]
        x = h[lo][lo] * h[lo][lo] + h[lo][lo + 1] * h[lo + 1][lo] - tr2 * h[lo][lo] + det
        y = h[lo + 1][lo] * (h[lo][lo] + h[lo + 1][lo + 1] - tr2)
        w = h[lo + 1][lo] * h[lo + 2][lo + 1]
        for k in range(lo, m - 1):
            v, beta = _house([x, y, w])
            _reflect3(h, z, k, 3, v, beta, min(k + 3, m), max(lo, k - 1))
            if k > lo:
                h[k + 1][k - 1] = 0.0
                h[k + 2][k - 1] = 0.0
            x = h[k + 1][k]
            y = h[k + 2][k]
            if k < m - 2:
                w = h[k + 3][k]
        v, beta = _house([x, y])
        _reflect3(h, z, m - 1, 2, v, beta, m, m - 2)
        h[m][m - 2] = 0.0
    return True


def _rot_rows(h: Matrix, i: int, j: int, c0: int, cs: float, sn: float) -> None:
    """Rows i, j of h from column c0 on: x, y = cs x + sn y, cs y - sn x."""
    ri, rj = h[i], h[j]
    for c in range(c0, len(ri)):
        a, b = ri[c], rj[c]
        ri[c] = cs * a + sn * b
        rj[c] = cs * b - sn * a


def _rot_cols(m: Matrix, i: int, j: int, r_end: int, cs: float, sn: float) -> None:
    """Columns i, j of m in rows 0..r_end-1: x, y = cs x + sn y, cs y - sn x."""
    for r in range(r_end):
        row = m[r]
        a, b = row[i], row[j]
        row[i] = cs * a + sn * b
        row[j] = cs * b - sn * a


def _schur_host(a: Matrix, real: bool) -> tuple[Matrix, Matrix] | None:
    n = len(a)
    packed, taus = _gehrd(a)
    q = _orgqr_hess(packed, taus)
    h = _hess_form(packed)
    if real:
        if not _real_schur(h, q):
            return None
        for i in range(n):
            for j in range(i - 1):
                h[i][j] = 0.0
        return h, q
    try:
        lax_eig._schur(h, q, 2.0**-52)
    except ArithmeticError:
        return None
    for i in range(n):
        for j in range(i):
            h[i][j] = 0j
    return h, q


# ---- primitive impls ---------------------------------------------------------------------------
def _matrices(x: Any, aval: ShapedArray, real: bool) -> list[Matrix]:
    n = aval.shape[-1]
    conv = float if real else complex
    flat = [conv(v) for v in x._flat_values()] if aval.size else []  # reads: eager only
    count = aval.size // (n * n) if n else 0
    return [
        [flat[b * n * n + i * n : b * n * n + (i + 1) * n] for i in range(n)] for b in range(count)
    ]


def _upload(mats: list[Matrix], aval: ShapedArray, device: Any) -> Any:
    d = aval.dtype
    vals = [scalar.normalize(d, v) for m in mats for row in m for v in row]
    return from_flat(vals, aval.shape, d, device)


@schur_p.def_impl
def _schur_impl(
    x: Any, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any
) -> list[Any]:
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    aval = core.get_aval(x)
    _schur_abstract(
        aval,
        compute_schur_vectors=compute_schur_vectors,
        sort_eig_vals=sort_eig_vals,
        select_callable=select_callable,
    )
    real = aval.dtype.kind == "f"
    n = aval.shape[-1]
    ts, qs = [], []
    for a in _matrices(x, aval, real):
        res = _schur_host(a, real)
        if res is None:
            nan = math.nan if real else complex(math.nan, math.nan)
            res = ([[nan] * n for _ in range(n)], [[nan] * n for _ in range(n)])
        ts.append(res[0])
        qs.append(res[1])
    out_aval = ShapedArray(aval.shape, aval.dtype)
    outs = [_upload(ts, out_aval, x._device)]
    if compute_schur_vectors:
        outs.append(_upload(qs, out_aval, x._device))
    return outs


@hessenberg_p.def_impl
def _hessenberg_impl(a: Any) -> list[Any]:
    aval = core.get_aval(a)
    h_aval, t_aval = _hessenberg_abstract(aval)
    real = aval.dtype.kind == "f"
    hs, ts = [], []
    for m in _matrices(a, aval, real):
        packed, taus = _gehrd(m)
        hs.append(packed)
        ts.append([taus])
    return [_upload(hs, h_aval, a._device), _upload(ts, t_aval, a._device)]


def _front_batch(prim: core.Primitive) -> Any:
    def rule(vals: list[Any], dims: list[Any], **params: Any) -> tuple[Any, Any]:
        (x,), (d,) = vals, dims
        out = prim.bind(batching.moveaxis(x, d, 0), **params)
        return out, [0] * len(out)

    return rule


batching.primitive_batchers[schur_p] = _front_batch(schur_p)
batching.primitive_batchers[hessenberg_p] = _front_batch(hessenberg_p)

__all__ = ["hessenberg", "hessenberg_p", "householder_product", "schur", "schur_p"]
