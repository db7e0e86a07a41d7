"""jax.scipy.linalg: SciPy's conventions (upper Cholesky by default, (p, l, u) LU, modes of
qr, ...) on lax.linalg and jnp.linalg."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..custom_derivatives import custom_jvp
from ..jit import eager_jit
from ..lax import lax
from ..lax import linalg as lax_linalg
from ..lax import schur as lax_schur
from ..numpy import contractions, creation, ufuncs, util
from ..numpy import linalg as np_linalg
from ..numpy.shape import atleast_2d as _atleast_2d
from ..numpy.shape import broadcast_to as _broadcast_to
from ..numpy.shape import expand_dims as _expand_dims
from ..numpy.shape import swapaxes as _swapaxes
from .special_matrices import (
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)


def _shape(x: Any) -> tuple[int, ...]:
    return util.aval(x).shape


def _mT(x: Any) -> Any:
    return _swapaxes(x, -1, -2)


def _as_matrix_rhs(a: Any, b: Any) -> tuple[Any, bool]:
    """b as (..., n, k): a vector right-hand side (one dim less than a) gets a trailing 1."""
    vec = len(_shape(b)) == len(_shape(a)) - 1
    return (_expand_dims(b, -1) if vec else b), vec


_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


def solve_triangular(
    a: Any,
    b: Any,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug: Any = None,
    check_finite: bool = True,
) -> Any:
    """Solve op(a) x = b for triangular a; trans 0/'N' (a), 1/'T' or 2/'C' (a^T)."""
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    return _solve_triangular(a, b, _TRANS[trans], bool(lower), bool(unit_diagonal))


@eager_jit(static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a: Any, b: Any, trans: int, lower: bool, unit_diagonal: bool) -> Any:
    a, b = np_linalg._inexact(a, b)
    bm, vec = _as_matrix_rhs(a, b)
    x = lax_linalg.triangular_solve(
        a,
        bm,
        left_side=True,
        lower=lower,
        transpose_a=trans != 0,
        conjugate_a=trans == 2,
        unit_diagonal=unit_diagonal,
    )
    return lax.squeeze(x, (len(_shape(x)) - 1,)) if vec else x


def cholesky(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """The Cholesky factor: upper (a = U^H U) unless lower=True. As scipy (and JAX), only one
    triangle of `a` is read (the lower one when lower=True, else the upper one): the input is
    not symmetrized, so gradients flow to that triangle only."""
    (a,) = np_linalg._inexact(a)
    if lower:
        return np_linalg.cholesky(a, symmetrize_input=False)
    # the upper triangle of a is the lower one of a^H; U = L^H
    at = lax.conj(_mT(a)) if dtypes.is_complex(util.aval(a).dtype) else _mT(a)
    return np_linalg.cholesky(at, upper=True, symmetrize_input=False)


def cho_factor(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, bool]:
    return cholesky(a, lower=lower), lower


def cho_solve(
    c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True
) -> Any:
    """Solve a x = b from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    return _cho_solve(c, b, bool(lower))


@eager_jit(static_argnames=("lower",))
def _cho_solve(c: Any, b: Any, lower: bool) -> Any:
    c, b = np_linalg._inexact(c, b)
    bm, vec = _as_matrix_rhs(c, b)
    # a = L L^T: solve L y = b, then L^T x = y (with U = L^T when not lower)
    y = lax_linalg.triangular_solve(c, bm, left_side=True, lower=lower, transpose_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower)
    return lax.squeeze(x, (len(_shape(x)) - 1,)) if vec else x


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """(lu, piv): packed LU factors and LAPACK-style pivot indices."""
    (a,) = np_linalg._inexact(a)
    lu, piv, _ = lax_linalg.lu(a)
    return lu, piv


def lu_solve(
    lu_and_piv: tuple[Any, Any],
    b: Any,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """Solve a x = b (trans 0) or a^T x = b (trans 1 or 2) from lu_factor's result."""
    if trans not in (0, 1, 2):
        raise ValueError(f"Invalid 'trans' value {trans}")
    lu, piv = lu_and_piv
    return _lu_solve(lu, piv, b, int(trans))


@eager_jit(static_argnames=("trans",))
def _lu_solve(lu: Any, piv: Any, b: Any, trans: int) -> Any:
    lu, b = np_linalg._inexact(lu, b)
    s = _shape(lu)
    n = s[-1]
    if len(s) < 2 or s[-2] != n:
        raise ValueError(f"lu_solve: lu must have shape [..., n, n], got {s}")
    perm = lax_linalg.lu_pivots_to_permutation(piv, n)
    bm, vec = _as_matrix_rhs(lu, b)
    if _shape(bm)[-2] != n:
        raise ValueError(f"lu_solve: b of shape {_shape(b)} does not match lu of shape {s}")
    batch = util.broadcast_shapes(s[:-2], _shape(bm)[:-2])
    lu = _broadcast_to(lu, (*batch, n, n))
    perm = _broadcast_to(perm, (*batch, n))
    bm = _broadcast_to(bm, (*batch, n, _shape(bm)[-1]))
    x = (
        np_linalg._lu_solve(lu, perm, bm)
        if trans == 0
        else np_linalg._lu_solve_transposed(lu, perm, bm)
    )
    return lax.squeeze(x, (len(_shape(x)) - 1,)) if vec else x


def lu(
    a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) when permute_l."""
    return _lu(a, bool(permute_l))


@eager_jit(static_argnames=("permute_l",))
def _lu(a: Any, permute_l: bool) -> Any:
    (a,) = np_linalg._inexact(a)
    lu_, _, perm = lax_linalg.lu(a)
    s = _shape(a)
    m, n = s[-2:]
    k = min(m, n)
    dt = util.aval(a).dtype
    l = ufuncs.add(lax_linalg._tril(lu_, -1), lax_linalg._eye(s, dt))
    l = lax.slice(l, (0,) * len(s), (*s[:-2], m, k))
    u = lax.slice(lax_linalg._triu(lu_), (0,) * len(s), (*s[:-2], k, n))
    # p[perm[i], i] = 1: a[perm] = l u  <=>  a = p l u
    iota = lax.broadcasted_iota(dtypes.int32, (*s[:-2], m, m), len(s) - 2)
    p = lax.convert_element_type(
        lax.eq(iota, lax.broadcast_in_dim(perm, (*s[:-2], m, m), (*range(len(s) - 2), len(s) - 1))),
        dt,
    )
    if permute_l:
        return np_linalg._matmul(p, l), u
    return p, l, u


def qr(
    a: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> Any:
    """QR decomposition; mode 'full' (q m x m), 'economic' (q m x k) or 'r' (a 1-tuple (r,))."""
    if mode not in ("full", "r", "economic"):  # JAX has no 'raw' mode either
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if pivoting:
        raise NotImplementedError("scipy.linalg.qr with pivoting=True is not supported by webjax")
    return _qr(a, mode)


@eager_jit(static_argnames=("mode",))
def _qr(a: Any, mode: str) -> Any:
    (a,) = np_linalg._inexact(a)
    q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    if mode == "r":
        return (r,)
    return q, r


def eigh(
    a: Any,
    b: Any = None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    turbo: bool = True,
    eigvals: Any = None,
    type: int = 1,
    check_finite: bool = True,
) -> Any:
    """(w, v) of a symmetric matrix (w ascending), or w when eigvals_only."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    w, v = np_linalg.eigh(a, "L" if lower else "U")
    return w if eigvals_only else (w, v)


def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    out = np_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return np_linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return np_linalg.det(a)


_ASSUME = ("gen", "sym", "her", "pos")


def solve(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
) -> Any:
    """Solve a x = b; assume_a='pos' uses a Cholesky factorization, the others LU."""
    if assume_a not in _ASSUME:
        raise ValueError(f"Expected assume_a to be one of {list(_ASSUME)}; got {assume_a!r}")
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    return _solve_pos(a, b, bool(lower))


def _cho_solve_same(a: Any, b: Any, lower: bool) -> Any:
    c = cholesky(lax.stop_gradient(a), lower=lower)
    return _cho_solve(c, b, lower)


def _pos_rule(lower: bool) -> Any:
    @custom_jvp
    def pos(a: Any, b: Any) -> Any:
        return _cho_solve_same(a, b, lower)

    def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        a, b = primals
        da, db = tangents
        c = cholesky(a, lower=lower)
        x = _cho_solve(c, b, lower)
        return x, _cho_solve(c, ufuncs.subtract(db, np_linalg._matmul(da, x)), lower)

    pos.defjvp(jvp)
    return pos


_POS = {False: _pos_rule(False), True: _pos_rule(True)}


@eager_jit(static_argnames=("lower",))
def _solve_pos(a: Any, b: Any, lower: bool) -> Any:
    a, b = np_linalg._inexact(a, b)
    sa, sb = _shape(a), _shape(b)
    if len(sa) < 2 or sa[-1] != sa[-2]:
        raise ValueError(f"solve: a must have shape [..., n, n], got {sa}")
    n = sa[-1]
    vec = len(sb) == len(sa) - 1 or len(sb) == 1
    bm = _expand_dims(b, -1) if vec else b
    if _shape(bm)[-2] != n:
        raise ValueError(f"solve: b of shape {sb} does not match a of shape {sa}")
    batch = util.broadcast_shapes(sa[:-2], _shape(bm)[:-2])
    a = _broadcast_to(a, (*batch, n, n))
    bm = _broadcast_to(bm, (*batch, n, _shape(bm)[-1]))
    x = _POS[lower](a, bm)
    return lax.squeeze(x, (len(_shape(x)) - 1,)) if vec else x


# ---- expm: scaling and squaring with Pade approximants (Higham 2005) --------------------------
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}  # fmt: skip
# 1-norm bounds between consecutive orders (Higham's theta_m)
_THETA32 = (4.258730016922831e-001, 1.880152677804762e000)
_THETA64 = (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
            2.097847961257068e000)  # fmt: skip


def _pade(a: Any, m: int) -> tuple[Any, Any]:
    """(U, V): exp(a) ~ (V - U)^-1 (V + U) with the degree-m Pade approximant."""
    b = _PADE[m]
    s = _shape(a)
    dt = util.aval(a).dtype
    eye = _broadcast_to(creation.eye(s[-1], dtype=dt), s)
    mm = np_linalg._matmul

    def lin(coeffs: Sequence[int], mats: Sequence[Any]) -> Any:
        out = ufuncs.multiply(lax.full((), b[coeffs[0]], dt), mats[0])
        for i, x in zip(coeffs[1:], mats[1:], strict=True):
            out = ufuncs.add(out, ufuncs.multiply(lax.full((), b[i], dt), x))
        return out

    a2 = mm(a, a)
    if m != 13:
        powers = [eye, a2]
        while len(powers) < (m + 1) // 2:
            powers.append(mm(powers[-1], a2))
        odd = lin([2 * k + 1 for k in range(len(powers))], powers)
        even = lin([2 * k for k in range(len(powers))], powers)
        return mm(a, odd), even
    a4 = mm(a2, a2)
    a6 = mm(a4, a2)
    u = mm(
        a, ufuncs.add(mm(a6, lin((13, 11, 9), (a6, a4, a2))), lin((7, 5, 3, 1), (a6, a4, a2, eye)))
    )
    v = ufuncs.add(mm(a6, lin((12, 10, 8), (a6, a4, a2))), lin((6, 4, 2, 0), (a6, a4, a2, eye)))
    return u, v


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential: scaling and squaring with the Pade approximant the 1-norm calls
    for (JAX's choices: orders 3/5/7 in float32, up to 13 in float64; NaN when more than
    max_squarings squarings would be needed). Every order is computed and the right one
    selected, and the squarings are selects, so no value steers the program."""
    return _expm(A, int(max_squarings))


@eager_jit(static_argnames=("max_squarings",))
def _expm(A: Any, max_squarings: int) -> Any:
    (a,) = np_linalg._inexact(A)
    s = _shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={s}.")
    dt = util.aval(a).dtype
    conds: tuple[float, ...] = _THETA64 if dt.itemsize == 8 else _THETA32
    orders: tuple[int, ...] = (3, 5, 7, 9, 13) if dt.itemsize == 8 else (3, 5, 7)
    maxnorm = 5.371920351148152 if dt.itemsize == 8 else 3.925724783138660
    norm1 = np_linalg.norm(a, ord=1, axis=(-2, -1))  # (...,)

    def c(v: float) -> Any:
        return lax.full((), v, dt)

    k = ufuncs.maximum(c(0), ufuncs.floor(ufuncs.log2(ufuncs.divide(norm1, c(maxnorm)))))
    kb = _expand_dims(k, (-2, -1))
    scaled = ufuncs.divide(a, ufuncs.power(c(2), kb))
    r: Any = None
    for i, m in enumerate(orders):  # order m where conds[i - 1] <= |a|_1 < conds[i]
        u, v = _pade(scaled, m)
        rm = np_linalg.solve(ufuncs.subtract(v, u), ufuncs.add(v, u))
        if r is None:
            r = rm
            continue
        pick = ufuncs.greater_equal(norm1, c(conds[i - 1]))
        r = util.where(_expand_dims(pick, (-2, -1)), rm, r)
    for i in range(max_squarings):
        r = util.where(ufuncs.greater(kb, c(i)), np_linalg._matmul(r, r), r)
    too_big = _expand_dims(ufuncs.greater(k, c(max_squarings)), (-2, -1))
    return util.where(too_big, c(math.nan), r)


def block_diag(*arrs: Any) -> Any:
    """A block-diagonal matrix from 2-d (or lower-rank) blocks."""
    if not arrs:
        return creation.zeros((1, 0))
    blocks = [_atleast_2d(util.ensure_array(a)) for a in arrs]
    for b in blocks:
        if len(_shape(b)) != 2:
            raise ValueError("Input array to block_diag must be 2D or lower")
    blocks = util.promote_dtypes(*blocks)
    cols = sum(_shape(b)[1] for b in blocks)
    dt = util.aval(blocks[0]).dtype
    zero = lax.full((), 0, dt)
    out = []
    c0 = 0
    for b in blocks:
        c = _shape(b)[1]
        out.append(lax.pad(b, zero, [(0, 0, 0), (c0, cols - c0 - c, 0)]))
        c0 += c
    return lax.concatenate(out, 0)


# ---- Frechet derivative of expm, polar decomposition, Sylvester equations, tridiagonal eigh ---
def _square(name: str, x: Any, what: str) -> None:
    sh = _shape(x)
    if len(sh) < 2 or sh[-1] != sh[-2]:
        raise ValueError(f"expected {what} to be a square matrix")


def expm_frechet(A: Any, E: Any, *, method: str | None = None, compute_expm: bool = True) -> Any:
    """The Frechet derivative L(A, E) of expm at A in direction E (and expm(A) with
    `compute_expm`): the upper right block of expm([[A, E], [0, A]])."""
    A, E = util.ensure_array(A), util.ensure_array(E)
    _square("expm_frechet", A, "A")
    _square("expm_frechet", E, "E")
    if _shape(A) != _shape(E):
        raise ValueError("expected A and E to be the same shape")
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"Unknown implementation {method}")
    A, E = util.promote_dtypes_inexact(A, E)
    n = _shape(A)[-1]
    top = _cat([A, E], -1)
    bottom = _cat([lax.full(_shape(A), 0, util.aval(A).dtype), A], -1)
    big = expm(_cat([top, bottom], -2))
    L = big[..., :n, n:]
    return (big[..., :n, :n], L) if compute_expm else L


def _cat(xs: list[Any], axis: int) -> Any:
    nd = len(_shape(xs[0]))
    return lax.concatenate(xs, axis % nd)


def polar(
    a: Any,
    side: str = "right",
    *,
    method: str = "qdwh",
    eps: float | None = None,
    max_iterations: int | None = None,
) -> tuple[Any, Any]:
    """(u, p) with a = u p (side 'right') or a = p u ('left'): u with orthonormal columns
    (rows), p Hermitian positive semidefinite. Both methods go through the SVD here (JAX's
    'qdwh' iterates to the same factors)."""
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} is not 'right' or 'left'")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    (a,) = util.promote_dtypes_inexact(util.ensure_array(a))
    if len(_shape(a)) != 2:
        raise ValueError("The input `a` must be a 2-D array.")
    u_svd, s, vh = np_linalg.svd(a, full_matrices=False)
    unitary = contractions.matmul(u_svd, vh)
    sd = s.astype(util.aval(a).dtype)
    if side == "right":
        v = ufuncs.conj(_mT(vh))
        posdef = contractions.matmul(v * sd[None, :], vh)
    else:
        posdef = contractions.matmul(u_svd * sd[None, :], ufuncs.conj(_mT(u_svd)))
    return unitary, posdef


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur", tol: float = 1e-8) -> Any:
    """X with A X + X B = C, as one linear system (I kron-sum form) of size m n: exact for the
    small systems it is meant for (JAX goes through Schur forms; `tol` is accepted)."""
    if method != "schur":
        raise ValueError(f"Unrecognized method {method}")
    A, B, C = util.promote_dtypes_inexact(*(util.ensure_array(x) for x in (A, B, C)))
    m, n = _shape(A)[-1], _shape(B)[-1]
    if _shape(A) != (m, m) or _shape(B) != (n, n) or _shape(C) != (m, n):
        raise ValueError(
            f"solve_sylvester: A must be (m, m), B (n, n) and C (m, n), got {_shape(A)}, "
            f"{_shape(B)} and {_shape(C)}"
        )
    dt = util.aval(A).dtype
    k = contractions.kron(A, creation.eye(n, dtype=dt)) + contractions.kron(
        creation.eye(m, dtype=dt), _mT(B)
    )
    return lax.reshape(np_linalg.solve(k, lax.reshape(C, (m * n,))), (m, n))


def eigh_tridiagonal(
    d: Any,
    e: Any,
    *,
    eigvals_only: bool = False,
    select: str = "a",
    select_range: tuple[float, float] | None = None,
    tol: float | None = None,
    key: Any = None,
) -> Any:
    """Eigenvalues (ascending; and eigenvectors unless `eigvals_only`) of the symmetric
    tridiagonal matrix with diagonal d and off-diagonal e. `select`: 'a' (all) or 'i' (the
    indices in `select_range`, inclusive)."""
    d, e = util.promote_dtypes_inexact(util.ensure_array(d), util.ensure_array(e))
    n = _shape(d)[-1]
    if _shape(e)[-1] != n - 1:
        raise ValueError(f"e must have one element less than d, got {_shape(e)} and {_shape(d)}")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    if select not in ("a", "i"):
        raise ValueError(f"'select' must be 'a', 'v' or 'i', got {select!r}")
    dt = util.aval(d).dtype
    t = creation.eye(n, dtype=dt) * d[None, :]
    if n > 1:
        # eye(k) * row scales columns: entry (i, i + 1) takes e[i] from column i + 1
        t = t + creation.eye(n, k=1, dtype=dt) * _cat([lax.full((1,), 0, dt), e], 0)[None, :]
        t = t + creation.eye(n, k=-1, dtype=dt) * _cat([e, lax.full((1,), 0, dt)], 0)[None, :]
    lo, hi = (0, n - 1) if select == "a" else (int(select_range[0]), int(select_range[1]))  # type: ignore[index]
    if eigvals_only:
        return np_linalg.eigvalsh(t)[lo : hi + 1]
    w, v = np_linalg.eigh(t)
    return w[lo : hi + 1], v[:, lo : hi + 1]


# ---- Schur-based: schur, rsf2csf, sqrtm, funm; hessenberg; qr_multiply -------------------------
def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """(T, Z) with a = Z T Z^H, Z unitary, T upper triangular (output 'complex') or quasi
    upper triangular with standardized 2x2 blocks for complex eigenvalue pairs ('real'). A
    host computation (lax.linalg.schur), as JAX's is CPU-only."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    a = util.ensure_array(a)
    if output == "complex":
        a = a.astype(dtypes.to_complex(util.aval(a).dtype))
    t, z = lax_schur.schur(a)
    return t, z


def _jnp() -> Any:
    from .. import numpy as jnp

    return jnp


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """The complex Schur form (and its Schur vectors) from a real one: each 2x2 block is
    split by a Givens rotation built from one of its eigenvalues (bottom block first)."""
    jnp = _jnp()
    T, Z = jnp.asarray(T), jnp.asarray(Z)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z.shape} vs. T: {T.shape}")
    return _rsf2csf(*util.promote_dtypes_inexact(T, Z))


@eager_jit
def _rsf2csf(T: Any, Z: Any) -> tuple[Any, Any]:
    jnp = _jnp()
    cdt = dtypes.to_complex(util.aval(T).dtype)
    T, Z = T.astype(cdt), Z.astype(cdt)
    batch = jnp.broadcast_shapes(T.shape[:-2], Z.shape[:-2])
    n = T.shape[-1]
    T = jnp.broadcast_to(T, (*batch, n, n))
    Z = jnp.broadcast_to(Z, (*batch, n, n))
    eps = float(jnp.finfo(cdt).eps)
    cols = jnp.arange(n)
    for m in range(n - 1, 0, -1):
        a, b = T[..., m - 1, m - 1], T[..., m - 1, m]
        c, d = T[..., m, m - 1], T[..., m, m]
        split = jnp.abs(c) > eps * (jnp.abs(a) + jnp.abs(d))
        half = (a - d) / 2
        mu = half + jnp.sqrt(half * half + b * c)  # an eigenvalue of the block, minus d
        r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(c) ** 2).astype(cdt)
        r = jnp.where(split, r, 1)
        cs, sn = mu / r, c / r
        # G = [[conj(cs), sn], [-sn, cs]]: rows m-1, m from column m-1 on; then columns
        # m-1, m of T's first m+1 rows and of Z by G^H
        g = jnp.stack([jnp.stack([jnp.conj(cs), sn], -1), jnp.stack([-sn, cs], -1)], -2)
        gh = jnp.conj(jnp.swapaxes(g, -1, -2))
        rows = T[..., m - 1 : m + 1, :]
        new_rows = jnp.where(cols >= m - 1, g @ rows, rows)
        sel = split[..., None, None]
        T = jnp.concatenate(
            [T[..., : m - 1, :], jnp.where(sel, new_rows, rows), T[..., m + 1 :, :]], -2
        )
        tc = T[..., :, m - 1 : m + 1]
        new_tc = jnp.where((cols < m + 1)[:, None], tc @ gh, tc)
        T = jnp.concatenate(
            [T[..., :, : m - 1], jnp.where(sel, new_tc, tc), T[..., :, m + 1 :]], -1
        )
        zc = Z[..., :, m - 1 : m + 1]
        Z = jnp.concatenate(
            [Z[..., :, : m - 1], jnp.where(sel, zc @ gh, zc), Z[..., :, m + 1 :]], -1
        )
        T = jnp.where((cols[:, None] == m) & (cols == m - 1), 0, T)
    return T, Z


def _offset_mask(n: int, p: int) -> Any:
    jnp = _jnp()
    i = jnp.arange(n)
    return i[None, :] - i[:, None] == p


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal square root of a square matrix, by the complex Schur method: Z U Z^H with
    U the upper triangular root of the Schur form T (U_ii = sqrt(T_ii), then one
    superdiagonal at a time). Complex-valued, as JAX's. Its Schur form is a host computation
    without derivatives, as in JAX."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    jnp = _jnp()
    A = jnp.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"sqrtm expects a square 2-D array, got shape {A.shape}")
    T, Z = schur(A, output="complex")
    return _sqrtm_from_schur(T, Z)


@eager_jit
def _sqrtm_from_schur(T: Any, Z: Any) -> Any:
    jnp = _jnp()
    n = T.shape[-1]
    d = jnp.sqrt(jnp.diagonal(T))
    U = jnp.diag(d)
    den = d[:, None] + d[None, :]
    for p in range(1, n):
        s = U @ U  # at offset p: the sum over i < k < j of U_ik U_kj (offsets below p only)
        val = jnp.where(s == T, 0, (T - s) / jnp.where(den == 0, 1, den))
        U = jnp.where(_offset_mask(n, p), val, U)
    hi = lax.Precision.HIGHEST
    return jnp.matmul(jnp.matmul(Z, U, precision=hi), jnp.conj(Z.T), precision=hi)


def funm(A: Any, func: Any, disp: bool = True) -> Any:
    """func of a square matrix through its complex Schur form and the Parlett recurrence
    (Golub and Van Loan, algorithm 11.1.1), one superdiagonal at a time; with disp=False also
    JAX's error estimate."""
    jnp = _jnp()
    A = jnp.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = schur(A)
    T, Z = rsf2csf(T, Z)
    n = T.shape[0]
    F = jnp.diag(func(jnp.diagonal(T))).astype(T.dtype)
    F, den = _parlett(T, F)
    F = Z @ F @ jnp.conj(Z.T)
    if disp:
        return F
    upper = jnp.triu(jnp.ones((n, n), bool), 1)
    minden = jnp.minimum(jnp.abs(T[0, 0]), jnp.min(jnp.where(upper, jnp.abs(den), math.inf)))
    tol = 2.0**-23 if util.aval(F).dtype.itemsize == 8 else 2.0**-52  # (JAX: by dtype.char)
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(
        jnp.any(jnp.isinf(F)),
        math.inf,
        jnp.minimum(1, jnp.maximum(tol, (tol / minden) * np_linalg.norm(jnp.triu(T, 1), 1))),
    )
    return F, err


@eager_jit
def _parlett(T: Any, F: Any) -> tuple[Any, Any]:
    """F = func(T) above the diagonal from its diagonal, one superdiagonal p at a time:
    F_ij = (T_ij (F_jj - F_ii) + sum_{i<k<j} T_ik F_kj - F_ik T_kj) / (T_jj - T_ii), which is
    entry (i, j) of T F - F T while F is zero from offset p on; and T_jj - T_ii."""
    jnp = _jnp()
    n = T.shape[0]
    diag = jnp.diagonal(T)
    den = diag[None, :] - diag[:, None]
    for p in range(1, n):
        s = T @ F - F @ T
        step = jnp.where(den != 0, s / jnp.where(den == 0, 1, den), s)
        F = jnp.where(_offset_mask(n, p), step, F)
    return F, den


def hessenberg(
    a: Any, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """H (and with calc_q the unitary Q) with a = Q H Q^H, H zero below the first subdiagonal:
    Householder reflectors with LAPACK's conventions (lax.linalg.hessenberg, a host
    computation as JAX's is CPU-only)."""
    jnp = _jnp()
    a = jnp.asarray(a)
    n = a.shape[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    packed, taus = lax_schur.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    q = lax_schur.householder_product(packed[..., 1:, :-1], taus)
    batch = packed.shape[:-2]
    zeros = [(0, 0)] * len(batch)
    q = jnp.pad(q, [*zeros, (1, 0), (1, 0)])
    corner = jnp.zeros((n, n), packed.dtype).at[0, 0].set(1)
    return h, q + corner


def qr_multiply(
    a: Any,
    c: Any,
    mode: str = "right",
    pivoting: bool = False,
    conjugate: bool = False,
    overwrite_a: bool = False,
    overwrite_c: bool = False,
) -> Any:
    """(Q @ c, R) for mode 'left' (c: (..., K, P), K = min(M, N)) or (c @ Q, R) for 'right'
    (c: (..., P, M)), Q the economic QR factor of a (conj(Q) with `conjugate`); a 1-d c is a
    column (left) or a row (right) and the product comes back 1-d."""
    jnp = _jnp()
    a, c = util.promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError(
            "scipy.linalg.qr_multiply with pivoting=True is not supported by webjax"
        )
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(
            f"Array shapes are not compatible for Q @ c operation: a has shape "
            f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} rows "
            f"(expected {k})."
        )
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(
            f"Array shapes are not compatible for c @ Q operation: a has shape "
            f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} columns "
            f"(expected {m})."
        )
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    q, r = lax_linalg.qr(a, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    out = q @ c if mode == "left" else c @ q
    if onedim:
        out = out.ravel()
    return out, jnp.triu(r)


__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "expm",
    "expm_frechet",
    "funm",
    "hessenberg",
    "qr_multiply",
    "rsf2csf",
    "schur",
    "sqrtm",
    "eigh_tridiagonal",
    "polar",
    "solve_sylvester",
    "circulant",
    "companion",
    "convolution_matrix",
    "dft",
    "fiedler",
    "fiedler_companion",
    "hadamard",
    "hankel",
    "helmert",
    "hilbert",
    "invhilbert",
    "invpascal",
    "leslie",
    "pascal",
    "toeplitz",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "qr",
    "solve",
    "solve_triangular",
    "svd",
]
