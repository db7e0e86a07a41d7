"""jax.numpy.linalg (and jnp.cross), written on lax.linalg.

Inputs are promoted as JAX does (integers and bools become the default float type; 16-bit
floats are refused by the factorizations). Solves factor with LU once and reuse the factors in
their derivative rules (custom_jvp), so reverse mode only transposes triangular solves.
Functions are `eager_jit`ted: an eager call runs one compiled program, under a transformation
they are inlined.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import dtypes
from ..custom_derivatives import custom_jvp
from ..jit import eager_jit
from ..lax import lax, sorting
from ..lax import linalg as lax_linalg
from . import contractions, creation, matrices, reductions, ufuncs, util
from .eig import EigResult, eig, eigvals
from .shape import (  # the submodule itself is shadowed by jnp.shape
    broadcast_to as _broadcast_to,
)
from .shape import (
    expand_dims as _expand_dims,
)
from .shape import (
    matrix_transpose as _matrix_transpose,
)
from .shape import (
    moveaxis as _moveaxis,
)
from .shape import (
    stack as _stack,
)
from .shape import (
    swapaxes as _swapaxes,
)

# ============================================================================================
# results
# ============================================================================================


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


# ============================================================================================
# helpers
# ============================================================================================


def _inexact(*xs: Any) -> list[Any]:
    """JAX's promote_dtypes_inexact: a common dtype, integers and bools as the default float."""
    arrs = [util.ensure_array(x) for x in xs]
    dt, _weak = util.result_type(*arrs)
    dt = dtypes.to_inexact(dt)  # float32 for bool and 32-bit integers, also under x64
    return [util.convert(a, dt) for a in arrs]


# ---- complex matrices ------------------------------------------------------------------------
# The real factorizations serve complex matrices through the real representation of C^n:
# A = X + iY acts on (u, v) = (Re z, Im z) as the real matrix [[X, -Y], [Y, X]], an isometric
# algebra homomorphism (products, inverses, pseudo-inverses and least-squares solutions map to
# their complex counterparts; each singular value and Hermitian eigenvalue appears twice).
# Factorizations whose complex factors cannot be read off that matrix raise.
def _is_complex(x: Any) -> bool:
    return util.aval(x).dtype.kind == "c"


def _concat(xs: list[Any], axis: int) -> Any:
    return lax.concatenate(xs, len(_shape(xs[0])) + axis if axis < 0 else axis)


def _embed(a: Any) -> Any:
    """(..., m, n) complex -> (..., 2m, 2n) real [[X, -Y], [Y, X]]."""
    x, y = lax.real(a), lax.imag(a)
    return _concat([_concat([x, lax.neg(y)], -1), _concat([y, x], -1)], -2)


def _stack_parts(b: Any) -> Any:
    """(..., n, k) complex -> (..., 2n, k) real [Re b; Im b]."""
    return _concat([lax.real(b), lax.imag(b)], -2)


def _unstack_parts(v: Any) -> Any:
    """(..., 2n, k) real [u; v] -> (..., n, k) complex u + iv."""
    n = _shape(v)[-2] // 2
    nd = len(_shape(v))
    return lax.complex(util.slice_axis(v, nd - 2, 0, n), util.slice_axis(v, nd - 2, n, 2 * n))


def _pairs(s: Any) -> Any:
    """Every other entry along the last axis (the singular values of the real representation
    come in equal pairs)."""
    nd = len(_shape(s))
    return util.slice_axis(s, nd - 1, 0, _shape(s)[-1], 2)


def _complex_unsupported(name: str, what: str = "") -> NotImplementedError:
    return NotImplementedError(
        f"jnp.linalg.{name} of complex matrices is not supported by webjax{what}; its real "
        "factorizations handle solve, inv, det, slogdet, pinv, lstsq, svd(compute_uv=False), "
        "eigvalsh, matrix_rank, cond and the norms of complex matrices"
    )


def _complex_lu_det(a: Any) -> tuple[Any, Any]:
    """(phase, log|det|) of complex matrices by Gaussian elimination with partial pivoting
    (one masked step per column; the phase is exp(i arg det), 0 for singular matrices)."""
    s = _shape(a)
    n = s[-1]
    nd = len(s)
    dt = util.aval(a).dtype
    rt = dtypes.component(dt)
    rows = lax.broadcasted_iota(dtypes.int32, s, nd - 2)
    row_ids = lax.broadcasted_iota(dtypes.int32, s[:-1], nd - 2)
    zero = lax.full(s, 0, dt)
    swaps = lax.full(s[:-2], 0, dtypes.int32)
    diag = []
    for j in range(n):
        col = lax.abs(lax.index_in_dim(a, j, nd - 1, False))  # (..., n)
        col = lax.select(
            lax.ge(row_ids, lax.full((), j, dtypes.int32)), col, lax.full(s[:-1], -1, rt)
        )
        best = lax.reduce_max(col, (nd - 2,))
        hit = lax.eq(col, lax.broadcast_in_dim(best, s[:-1], tuple(range(nd - 2))))
        p = lax.reduce_min(lax.select(hit, row_ids, lax.full(s[:-1], n, dtypes.int32)), (nd - 2,))
        pb = lax.broadcast_in_dim(p, s, tuple(range(nd - 2)))
        jj = lax.full((), j, dtypes.int32)
        row_p = lax.reduce_sum(lax.select(lax.eq(rows, pb), a, zero), (nd - 2,))
        row_j = lax.index_in_dim(a, j, nd - 2, False)
        a = lax.select(
            lax.eq(rows, jj),
            lax.broadcast_in_dim(row_p, s, (*range(nd - 2), nd - 1)),
            lax.select(
                lax.eq(rows, pb), lax.broadcast_in_dim(row_j, s, (*range(nd - 2), nd - 1)), a
            ),
        )
        swaps = lax.add(swaps, lax.convert_element_type(lax.ne(p, jj), dtypes.int32))
        pivot = lax.index_in_dim(lax.index_in_dim(a, j, nd - 2, False), j, nd - 2, False)
        diag.append(pivot)
        safe = lax.select(lax.eq(pivot, lax.full((), 0, dt)), lax.full(_shape(pivot), 1, dt), pivot)
        factor = lax.div(
            lax.index_in_dim(a, j, nd - 1, False),
            lax.broadcast_in_dim(safe, s[:-1], tuple(range(nd - 2))),
        )
        factor = lax.select(lax.gt(row_ids, jj), factor, lax.full(s[:-1], 0, dt))
        pivot_row = lax.index_in_dim(a, j, nd - 2, False)
        a = lax.sub(
            a,
            lax.mul(
                lax.broadcast_in_dim(factor, s, tuple(range(nd - 1))),
                lax.broadcast_in_dim(pivot_row, s, (*range(nd - 2), nd - 1)),
            ),
        )
    if n == 0:  # the empty product: det 1, log|det| 0
        return lax.full(s[:-2], 1, dt), lax.full(s[:-2], 0, rt)
    d = lax.concatenate([lax.expand_dims(v, (nd - 2,)) for v in diag], nd - 2)
    mag = lax.abs(d)
    is_zero = reductions.any(lax.eq(mag, lax.full((), 0, rt)), axis=-1)
    unit = lax.div(
        d,
        lax.convert_element_type(
            lax.select(lax.eq(mag, lax.full((), 0, rt)), lax.full(_shape(mag), 1, rt), mag), dt
        ),
    )
    odd = lax.eq(lax.rem(swaps, lax.full((), 2, dtypes.int32)), lax.full((), 1, dtypes.int32))
    phase = lax.reduce_prod(unit, (nd - 2,))
    phase = lax.select(odd, lax.neg(phase), phase)
    phase = lax.select(is_zero, lax.full(_shape(phase), 0, dt), phase)
    logdet = reductions.sum(lax.log(mag), axis=-1)
    logdet = lax.select(is_zero, lax.full(_shape(logdet), -math.inf, rt), logdet)
    return phase, logdet


def _solve_complex(a: Any, b: Any) -> Any:
    """a^-1 b for complex a (..., n, n), b (..., n, k) of one batch, through the real system."""
    return _unstack_parts(_solve(_embed(a), _stack_parts(b)))


def _solve_complex_plain(a: Any, b: Any) -> Any:
    """_solve_complex without a custom derivative (inside derivative rules: linear in b)."""
    return _unstack_parts(_solve_same_batch(_embed(a), _stack_parts(b)))


@custom_jvp
def _slogdet_complex(a: Any) -> Any:
    return _complex_lu_det(a)


def _slogdet_complex_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    # d log det = tr(a^-1 da): its real part moves log|det|, its imaginary part the phase
    (a,), (da,) = primals, tangents
    sign, logdet = _complex_lu_det(a)
    t = matrices.trace(_solve_complex_plain(a, da), 0, -2, -1)
    im = lax.complex(lax.full(_shape(t), 0, util.aval(logdet).dtype), lax.imag(t))
    return (sign, logdet), (lax.mul(im, sign), lax.real(t))


_slogdet_complex.defjvp(_slogdet_complex_jvp)


@custom_jvp
def _det_complex(a: Any) -> Any:
    sign, logdet = _complex_lu_det(a)
    return lax.mul(sign, lax.convert_element_type(lax.exp(logdet), util.aval(sign).dtype))


def _det_complex_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    y = _det_complex(a)
    return y, lax.mul(y, matrices.trace(_solve_complex_plain(a, da), 0, -2, -1))


_det_complex.defjvp(_det_complex_jvp)


def _eps(dt: dtypes.DType) -> float:
    return lax_linalg._eps(dt)


def _shape(x: Any) -> tuple[int, ...]:
    return util.aval(x).shape


def _check_square(x: Any, what: str, period: bool = True) -> None:
    s = _shape(x)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(
            f"Argument to {what} must have shape [..., n, n], got {s}" + ("." if period else "")
        )


def _mT(x: Any) -> Any:
    return _swapaxes(x, -1, -2)


def _matmul(a: Any, b: Any) -> Any:
    return contractions.matmul(a, b)


def _batched_rows(x: Any, perm: Any) -> Any:
    """x[..., perm[..., i], :] (batch dims of x and perm equal)."""
    return lax_linalg._batched_take_rows(x, perm)


def _lu_solve(lu: Any, perm: Any, b: Any) -> Any:
    """Solve a x = b from a's LU factors (lu, perm); b (..., n, k) with a's batch dims.
    Linear in b (a gather and two triangular solves), so it transposes."""
    pb = _batched_rows(b, perm)
    y = lax_linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)


def _lu_solve_transposed(lu: Any, perm: Any, b: Any) -> Any:
    """Solve a^T x = b from a's LU factors: a^T = U^T L^T P."""
    y = lax_linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True)
    z = lax_linalg.triangular_solve(
        lu, y, left_side=True, lower=True, transpose_a=True, unit_diagonal=True
    )
    return _batched_rows(z, _invert_permutation(perm))


def _invert_permutation(perm: Any) -> Any:
    s = _shape(perm)
    iota = lax.broadcasted_iota(dtypes.int32, s, len(s) - 1)
    _, inv = sorting.sort_p.bind(perm, iota, dimension=len(s) - 1, is_stable=True, num_keys=1)
    return inv


def _solve_same_batch(a: Any, b: Any) -> Any:
    """a^-1 b for a (..., n, n), b (..., n, k) with equal batch dims (no custom derivative:
    for use inside derivative rules, where it is linear in b)."""
    lu, _, perm = lax_linalg.lu(lax.stop_gradient(a))
    return _lu_solve(lu, perm, b)


# ============================================================================================
# factorizations
# ============================================================================================


@eager_jit(static_argnames=("upper", "symmetrize_input"))
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The Cholesky factor of symmetric (Hermitian) positive definite matrices (lower, or
    upper = L^H)."""
    (a,) = _inexact(a)
    if _is_complex(a):
        _check_square(a, "cholesky")
        L = _cholesky_complex(a, symmetrize_input)
        return lax.conj(_mT(L)) if upper else L
    L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _mT(L) if upper else L


def _cholesky_complex(a: Any, symmetrize_input: bool) -> Any:
    """Right-looking Cholesky of Hermitian matrices: one masked rank-1 update per column
    (NaNs where the matrix is not positive definite, as JAX's; differentiable through its
    steps)."""
    dt = util.aval(a).dtype
    if symmetrize_input:
        a = ufuncs.multiply(ufuncs.add(a, lax.conj(_mT(a))), lax.full((), 0.5, dt))
    s = _shape(a)
    n, nd = s[-1], len(s)
    rows = lax.broadcasted_iota(dtypes.int32, s[:-1], nd - 2)
    grid_r = lax.broadcasted_iota(dtypes.int32, s, nd - 2)
    grid_c = lax.broadcasted_iota(dtypes.int32, s, nd - 1)
    zero_col = lax.full(s[:-1], 0, dt)
    cols = []
    for j in range(n):
        jj = lax.full((), j, dtypes.int32)
        col = lax.index_in_dim(a, j, nd - 1, False)  # (..., n)
        pivot = lax.sqrt(lax.real(lax.index_in_dim(col, j, nd - 2, False)))
        pivot_c = lax.convert_element_type(pivot, dt)
        nan = lax.full(_shape(pivot), complex(math.nan, math.nan), dt)
        pivot_c = lax.select(lax.ne(pivot, pivot), nan, pivot_c)  # not positive definite
        col = lax.div(col, lax.broadcast_in_dim(pivot_c, s[:-1], tuple(range(nd - 2))))
        col = lax.select(lax.gt(rows, jj), col, zero_col)
        col = lax.select(
            lax.eq(rows, jj), lax.broadcast_in_dim(pivot_c, s[:-1], tuple(range(nd - 2))), col
        )
        cols.append(col)
        below = lax.select(lax.gt(rows, jj), col, zero_col)
        update = lax.mul(
            lax.broadcast_in_dim(below, s, tuple(range(nd - 1))),
            lax.conj(lax.broadcast_in_dim(below, s, (*range(nd - 2), nd - 1))),
        )
        inside = lax.bitwise_and(lax.gt(grid_r, jj), lax.gt(grid_c, jj))
        a = lax.select(inside, lax.sub(a, update), a)
    if not cols:  # 0 x 0 matrices: their factor is themselves
        return a
    return lax.concatenate([lax.expand_dims(c, (nd - 1,)) for c in cols], nd - 1)


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition; mode 'reduced' (Q m x k), 'complete' (Q m x m) or 'r' (R only)."""
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if mode == "raw":
        raise NotImplementedError(
            "jnp.linalg.qr(mode='raw') (Householder reflectors and scaling factors) is not "
            "supported by webjax; use mode='reduced' or 'complete'"
        )
    return _qr(a, mode)


@eager_jit(static_argnames=("mode",))
def _qr(a: Any, mode: str) -> Any:
    (a,) = _inexact(a)
    if _is_complex(a):
        raise _complex_unsupported("qr")
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _uplo(UPLO: str | None) -> bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices."""
    return _eigh(a, _uplo(UPLO), symmetrize_input)


@eager_jit(static_argnames=("lower", "symmetrize_input"))
def _eigh(a: Any, lower: bool, symmetrize_input: bool) -> EighResult:
    (a,) = _inexact(a)
    if _is_complex(a):
        raise _complex_unsupported("eigh", " (the eigenvectors; eigvalsh is supported)")
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    if _is_complex(util.ensure_array(a)):
        return _eigvalsh_complex(a, _uplo(UPLO), symmetrize_input)
    return eigh(a, UPLO, symmetrize_input).eigenvalues


@eager_jit(static_argnames=("lower", "symmetrize_input"))
def _eigvalsh_complex(a: Any, lower: bool, symmetrize_input: bool) -> Any:
    """The eigenvalues of Hermitian matrices: those of the real representation, in pairs."""
    (a,) = _inexact(a)
    _check_square(a, "eigh")
    if symmetrize_input:
        h = ufuncs.multiply(ufuncs.add(a, lax.conj(_mT(a))), lax.full((), 0.5, util.aval(a).dtype))
    else:  # the Hermitian matrix of the chosen triangle
        tri = matrices.tril(a) if lower else matrices.triu(a)
        strict = matrices.tril(a, -1) if lower else matrices.triu(a, 1)
        h = ufuncs.add(tri, lax.conj(_mT(strict)))
    _, w = lax_linalg.eigh(_embed(h), symmetrize_input=True)
    return _pairs(w)


def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    hermitian: bool = False,
    subset_by_index: Any = None,
) -> Any:
    """Singular value decomposition: SVDResult(U, S, Vh) with S descending, or S alone."""
    sbi = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    return _svd(a, bool(full_matrices), bool(compute_uv), bool(hermitian), sbi)


@eager_jit(static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def _svd(
    a: Any, full_matrices: bool, compute_uv: bool, hermitian: bool, subset_by_index: Any
) -> Any:
    (a,) = _inexact(a)
    if _is_complex(a):
        if compute_uv:
            raise _complex_unsupported("svd", " with compute_uv=True")
        if subset_by_index is not None:
            raise _complex_unsupported("svd", " with subset_by_index")
        if hermitian:
            s = ufuncs.abs(eigvalsh(a))
            nd = len(_shape(s))
            return lax.rev(sorting.sort(s, nd - 1), (nd - 1,))
        return _pairs(lax_linalg.svd(_embed(a), full_matrices=False, compute_uv=False))
    if hermitian:
        v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
        s = ufuncs.abs(w)
        nd = len(_shape(s))
        if not compute_uv:
            return lax.rev(sorting.sort(s, nd - 1), (nd - 1,))
        iota = lax.broadcasted_iota(dtypes.int32, _shape(s), nd - 1)
        s, idx, sign = sorting.sort((s, iota, ufuncs.sign(w)), nd - 1, num_keys=1)
        s, idx, sign = (lax.rev(x, (nd - 1,)) for x in (s, idx, sign))
        u = lax_linalg._batched_take_last(v, idx)
        vh = _mT(ufuncs.multiply(u, _expand_dims(sign, -2)))
        return SVDResult(u, s, vh)
    # scaled by the largest |a_ij| (a power of two, so exactly): the solver squares entries,
    # which overflow past 1e154 in float64 (1e19 in float32); the vectors are scale-free
    if len(_shape(a)) < 2:  # lax's svd raises its TypeError
        return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    scale = _pow2_scale(a)
    out = lax_linalg.svd(
        ufuncs.divide(a, scale),
        full_matrices=full_matrices,
        compute_uv=compute_uv,
        subset_by_index=subset_by_index,
    )
    scale = lax.squeeze(scale, (len(_shape(a)) - 1,))
    if compute_uv:
        u, s, vh = out
        return SVDResult(u, ufuncs.multiply(s, scale), vh)
    return ufuncs.multiply(out, scale)


def _pow2_scale(a: Any) -> Any:
    """Per matrix of `a` (..., m, n): the power of two at or above its largest |entry|, shaped
    (..., 1, 1), or 1 where that is zero or not finite; no gradient flows through it."""
    big = reductions.max(ufuncs.abs(a), axis=(-2, -1), keepdims=True, initial=0)
    ok = ufuncs.logical_and(ufuncs.isfinite(big), ufuncs.greater(big, 0))
    safe = lax.select(ok, big, lax.full(_shape(big), 1, util.aval(big).dtype))
    return lax.stop_gradient(ufuncs.exp2(ufuncs.ceil(ufuncs.log2(safe))))


def svdvals(x: Any, /) -> Any:
    return svd(x, compute_uv=False)


# ============================================================================================
# solves, inverses, determinants
# ============================================================================================


@custom_jvp
def _solve(a: Any, b: Any) -> Any:
    lu, _, perm = lax_linalg.lu(a)
    return _lu_solve(lu, perm, b)


def _solve_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    a, b = primals
    da, db = tangents
    lu, _, perm = lax_linalg.lu(a)
    x = _lu_solve(lu, perm, b)
    # d(a^-1 b) = a^-1 (db - da x), with the same factors
    return x, _lu_solve(lu, perm, ufuncs.subtract(db, _matmul(da, x)))


_solve.defjvp(_solve_jvp)


@eager_jit
def solve(a: Any, b: Any) -> Any:
    """Solve a x = b: b is (n,) or (..., n, k); batch dims broadcast."""
    a, b = _inexact(a, b)
    sa, sb = _shape(a), _shape(b)
    if len(sa) < 2 or sa[-1] != sa[-2]:
        raise ValueError(f"solve: a must have shape [..., n, n], got {sa}")
    n = sa[-1]
    if len(sb) == 1:
        if sb[0] != n:
            raise ValueError(f"solve: b of shape {sb} does not match a of shape {sa}")
        bm = _broadcast_to(lax.reshape(b, (n, 1)), (*sa[:-2], n, 1))
        solver = _solve_complex if _is_complex(a) else _solve
        return lax.squeeze(solver(a, bm), (len(sa) - 1,))
    if len(sb) < 2 or sb[-2] != n:
        raise ValueError(
            f"Invalid shapes for solve: {sa}, {sb}. b must be (n,) or (..., n, k) with n = "
            f"{n}; for a batched 1-dimensional solve use solve(a, b[..., None])[..., 0]."
        )
    batch = util.broadcast_shapes(sa[:-2], sb[:-2])
    a = _broadcast_to(a, (*batch, n, n))
    b = _broadcast_to(b, (*batch, n, sb[-1]))
    return _solve_complex(a, b) if _is_complex(a) else _solve(a, b)


@eager_jit
def inv(a: Any) -> Any:
    """The inverse of square matrices (through LU with partial pivoting)."""
    (a,) = _inexact(a)
    _check_square(a, "inv")
    s = _shape(a)
    eye = _broadcast_to(creation.eye(s[-1], dtype=util.aval(a).dtype), s)
    return solve(a, eye)


def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    lu, piv, _ = lax_linalg.lu(a)
    diag = matrices.diagonal(lu, 0, -2, -1)
    dt = util.aval(a).dtype
    zero = lax.full((), 0, dt)
    is_zero = reductions.any(lax.eq(diag, lax.full(_shape(diag), 0, dt)), axis=-1)
    iota = lax.broadcasted_iota(dtypes.int32, _shape(piv), len(_shape(piv)) - 1)
    swaps = reductions.count_nonzero(lax.ne(piv, iota), axis=-1)
    negs = reductions.count_nonzero(lax.lt(diag, lax.full(_shape(diag), 0, dt)), axis=-1)
    parity = lax.rem(
        lax.add(util.convert(swaps, dtypes.int32), util.convert(negs, dtypes.int32)),
        lax.full((), 2, dtypes.int32),
    )
    sign = lax.convert_element_type(
        lax.sub(lax.full((), 1, dtypes.int32), lax.mul(lax.full((), 2, dtypes.int32), parity)), dt
    )
    sign = util.where(is_zero, zero, sign)
    logdet = reductions.sum(ufuncs.log(ufuncs.abs(diag)), axis=-1)
    logdet = util.where(is_zero, lax.full((), -math.inf, dt), logdet)
    return sign, logdet


def _slogdet_qr(a: Any) -> tuple[Any, Any]:
    q, r = lax_linalg.qr(a, full_matrices=False)
    diag = matrices.diagonal(r, 0, -2, -1)
    sign_r = reductions.prod(ufuncs.sign(diag), axis=-1)
    sign_q, _ = _slogdet_lu(q)  # det(q) = +-1
    return ufuncs.multiply(sign_r, sign_q), reductions.sum(ufuncs.log(ufuncs.abs(diag)), axis=-1)


def _trace_solve(a: Any, da: Any) -> Any:
    return matrices.trace(_solve_same_batch(a, da), 0, -2, -1)


def _slogdet_rule(method: str) -> Any:
    fn = _slogdet_lu if method == "lu" else _slogdet_qr

    @custom_jvp
    def slog(a: Any) -> Any:
        return fn(a)

    def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        (a,), (da,) = primals, tangents
        sign, logdet = fn(a)
        return (sign, logdet), (creation.zeros_like(sign), _trace_solve(a, da))

    slog.defjvp(jvp)
    return slog


_SLOGDET = {"lu": _slogdet_rule("lu"), "qr": _slogdet_rule("qr")}


def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """(sign, log|det|) of square matrices (LU by default, or method='qr')."""
    m = "lu" if method is None else method
    if m not in _SLOGDET:
        raise ValueError(
            f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'."
        )
    return _slogdet(a, m)


@eager_jit(static_argnames=("method",))
def _slogdet(a: Any, method: str) -> SlogdetResult:
    (a,) = _inexact(a)
    _check_square(a, "slogdet()", period=False)
    if _is_complex(a):  # LU either way: the phase is a complex sign
        sign, logdet = _slogdet_complex(a)
        return SlogdetResult(sign, logdet)
    n = _shape(a)[-1]
    sign, logdet = _slogdet_small(a) if method == "lu" and n in (1, 2) else _SLOGDET[method](a)
    return SlogdetResult(sign, logdet)


def _det_small(a: Any) -> Any:
    e = lambda i, j: _entry(a, i, j)
    if _shape(a)[-1] == 1:
        return e(0, 0)
    return lax.sub(lax.mul(e(0, 0), e(1, 1)), lax.mul(e(0, 1), e(1, 0)))


@custom_jvp
def _slogdet_small(a: Any) -> tuple[Any, Any]:
    """1x1 and 2x2 in closed form, as JAX (no LU, so 16-bit floats work too)."""
    d = _det_small(a)
    return ufuncs.sign(d), ufuncs.log(ufuncs.abs(d))


def _slogdet_small_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    sign, logdet = _slogdet_small(a)
    e, t = (lambda i, j: _entry(a, i, j)), (lambda i, j: _entry(da, i, j))
    if _shape(a)[-1] == 1:
        d_det = t(0, 0)
    else:  # d(ad - bc) = da d + a dd - db c - b dc
        d_det = lax.sub(
            lax.add(lax.mul(t(0, 0), e(1, 1)), lax.mul(e(0, 0), t(1, 1))),
            lax.add(lax.mul(t(0, 1), e(1, 0)), lax.mul(e(0, 1), t(1, 0))),
        )
    return (sign, logdet), (creation.zeros_like(sign), lax.div(d_det, _det_small(a)))


_slogdet_small.defjvp(_slogdet_small_jvp)


@custom_jvp
def _det_lu(a: Any) -> Any:
    sign, logdet = _slogdet_lu(a)
    return ufuncs.multiply(sign, ufuncs.exp(logdet))


def _det_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    y = _det_lu(a)
    return y, ufuncs.multiply(y, _trace_solve(a, da))


_det_lu.defjvp(_det_jvp)


def _entry(a: Any, i: int, j: int) -> Any:
    return lax.index_in_dim(lax.index_in_dim(a, i, -2, False), j, -1, False)


@eager_jit
def det(a: Any) -> Any:
    """Determinants of square matrices (closed forms up to 3x3, as JAX)."""
    (a,) = _inexact(a)
    _check_square(a, "_det()", period=False)
    n = _shape(a)[-1]
    e = lambda i, j: _entry(a, i, j)
    if n == 1:
        return e(0, 0)
    if n == 2:
        return lax.sub(lax.mul(e(0, 0), e(1, 1)), lax.mul(e(0, 1), e(1, 0)))
    if n == 3:
        r = lax.add(
            lax.mul(lax.mul(e(0, 0), e(1, 1)), e(2, 2)), lax.mul(lax.mul(e(0, 1), e(1, 2)), e(2, 0))
        )
        r = lax.add(r, lax.mul(lax.mul(e(0, 2), e(1, 0)), e(2, 1)))
        r = lax.sub(r, lax.mul(lax.mul(e(0, 2), e(1, 1)), e(2, 0)))
        r = lax.sub(r, lax.mul(lax.mul(e(0, 0), e(1, 2)), e(2, 1)))
        return lax.sub(r, lax.mul(lax.mul(e(0, 1), e(1, 0)), e(2, 2)))
    return _det_complex(a) if _is_complex(a) else _det_lu(a)


# ============================================================================================
# norms, pseudo-inverse, rank
# ============================================================================================


def _canon_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(util.canonical_axis(a, ndim) for a in axes)


def _sumsq_sqrt(x: Any, axis: Any, keepdims: bool) -> Any:
    if _is_complex(x):  # |x|^2 = re^2 + im^2
        re, im = lax.real(x), lax.imag(x)
        sq = lax.add(lax.mul(re, re), lax.mul(im, im))
    else:
        sq = ufuncs.multiply(x, x)
    return ufuncs.sqrt(reductions.sum(sq, axis=axis, keepdims=keepdims))


def _vector_norm(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _sumsq_sqrt(x, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    if ord == math.inf:
        return reductions.max(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return reductions.min(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    dt = dtypes.component(util.aval(x).dtype)  # norms of complex vectors are real
    if ord == 0:
        return reductions.sum(ufuncs.not_equal(x, 0), axis=axis, keepdims=keepdims, dtype=dt)
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    s = reductions.sum(
        ufuncs.power(ufuncs.abs(x), lax.full((), p, dt)), axis=axis, keepdims=keepdims
    )
    return ufuncs.power(s, lax.full((), 1.0 / p, dt))


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    row, col = axes
    if ord is None or ord in ("f", "fro"):
        return _sumsq_sqrt(x, axes, keepdims)
    if isinstance(ord, str) and ord != "nuc":
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if ord in (1, -1, math.inf, -math.inf):
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        if not keepdims and outer > inner:
            outer -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=inner, keepdims=keepdims)
        # the largest of none is 0 (JAX's initial=0); the smallest of none is an error
        if ord in (1, math.inf):
            return reductions.max(sums, axis=outer, keepdims=keepdims, initial=0.0)
        return reductions.min(sums, axis=outer, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        y = _moveaxis(x, (row, col), (-2, -1))
        s = svd(y, compute_uv=False)
        if ord == 2:  # the largest of none is 0, as above
            out = reductions.max(s, axis=-1, initial=0.0)
        else:
            out = reductions.min(s, axis=-1) if ord == -2 else reductions.sum(s, axis=-1)
        if keepdims:
            out = _expand_dims(out, tuple(sorted(axes)))
        return out
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector norms (one axis) and matrix norms (two axes), NumPy's `ord` values."""
    axis_key = tuple(axis) if isinstance(axis, list) else axis
    return _norm(x, ord, axis_key, bool(keepdims))


@eager_jit(static_argnames=("ord", "axis", "keepdims"))
def _norm(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    (x,) = _inexact(x)
    nd = len(_shape(x))
    if axis is None:
        if ord is None:
            return _sumsq_sqrt(x, None, keepdims)
        axes = tuple(range(nd))
    else:
        axes = _canon_axes(axis, nd)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, (axes[0], axes[1]), keepdims)
    raise ValueError(
        f"Improper number of axes for norm: axis={axis}. Pass one axis to compute "
        "a vector-norm, or two axes to compute a matrix-norm."
    )


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """The vector norm over `axis` (all axes by default, several allowed)."""
    axis_key = tuple(axis) if isinstance(axis, list) else axis
    return _vector_norm_api(x, axis_key, bool(keepdims), ord)


@eager_jit(static_argnames=("axis", "keepdims", "ord"))
def _vector_norm_api(x: Any, axis: Any, keepdims: bool, ord: Any) -> Any:
    (x,) = _inexact(x)
    nd = len(_shape(x))
    axes = tuple(range(nd)) if axis is None else _canon_axes(axis, nd)
    return _vector_norm(x, ord, axes, keepdims)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def _pinv_fn(a: Any, rtol: Any) -> Any:
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    dt = util.aval(a).dtype
    cutoff = ufuncs.multiply(_expand_dims(rtol, -1), lax.index_in_dim(s, 0, -1, True))
    s = util.where(ufuncs.greater(s, cutoff), s, lax.full((), math.inf, dt))
    return _matmul(_mT(vh), ufuncs.divide(_mT(u), _expand_dims(s, -1)))


@custom_jvp
def _pinv(a: Any, rtol: Any) -> Any:
    return _pinv_fn(a, rtol)


def _pinv_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    # Golub & Pereyra: dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P
    a, rtol = primals
    da = tangents[0]
    p = _pinv_fn(a, rtol)
    s = _matmul(_matmul(p, _mT(p)), _mT(da))
    t = _matmul(_matmul(_mT(da), _mT(p)), p)
    dp = ufuncs.negative(_matmul(_matmul(p, da), p))
    dp = ufuncs.add(dp, ufuncs.subtract(s, _matmul(_matmul(s, a), p)))
    dp = ufuncs.add(dp, ufuncs.subtract(t, _matmul(_matmul(p, a), t)))
    return p, dp


_pinv.defjvp(_pinv_jvp)


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """Moore-Penrose pseudo-inverse (singular values <= rtol * largest are dropped)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified")
        rtol = rcond
    (a,) = _inexact(a)
    s = _shape(a)
    if len(s) < 2:
        raise ValueError(f"pinv requires an array of at least two dimensions, got shape {s}")
    dt = dtypes.component(util.aval(a).dtype)
    if rtol is None:
        rtol = 10.0 * builtins.max(s[-2:]) * float(_eps(dt))
    r = util.convert(util.ensure_array(rtol), dt)
    r = _broadcast_to(r, s[:-2])
    if _is_complex(a):  # pinv of the real representation represents the pseudo-inverse
        p = _pinv(_embed(a), r)
        nd = len(s)
        m = s[-2]
        return lax.complex(
            util.slice_axis(util.slice_axis(p, nd - 1, 0, m), nd - 2, 0, s[-1]),
            util.slice_axis(util.slice_axis(p, nd - 1, 0, m), nd - 2, s[-1], 2 * s[-1]),
        )
    return _pinv(a, r)


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:
    """The number of singular values above the tolerance (default: largest * max(m, n) * eps);
    like JAX, an explicit `rtol` (or `tol`) is an absolute threshold."""
    if tol is not None:
        rtol = tol
    (M,) = _inexact(M)
    s = _shape(M)
    if len(s) < 2:
        return util.convert(reductions.any(ufuncs.not_equal(M, 0)), dtypes.int32)
    sv = ufuncs.abs(eigvalsh(M)) if hermitian else svd(M, compute_uv=False)
    if hermitian and _is_complex(M):
        sv = lax.rev(sorting.sort(sv, len(_shape(sv)) - 1), (len(_shape(sv)) - 1,))
    dt = util.aval(sv).dtype
    if rtol is None:
        thr = ufuncs.multiply(
            reductions.max(sv, axis=-1), lax.full((), builtins.max(s[-2:]) * float(_eps(dt)), dt)
        )
    else:
        thr = util.convert(util.ensure_array(rtol), dt)
    count = reductions.sum(ufuncs.greater(sv, _expand_dims(thr, -1)), axis=-1)
    return util.convert(count, dtypes.int32)


def matrix_power(a: Any, n: int) -> Any:
    """a raised to the integer power n (repeated squaring; inverse first for n < 0)."""
    a = util.ensure_array(a)
    s = _shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        k = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if k == 0:
        return _broadcast_to(creation.eye(s[-1], dtype=util.aval(a).dtype), s)
    if k < 0:
        a, k = inv(a), -k
    result: Any = None
    z: Any = None
    while k > 0:
        z = a if z is None else _matmul(z, z)
        k, bit = divmod(k, 2)
        if bit:
            result = z if result is None else _matmul(result, z)
    return result


def lstsq(
    a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False
) -> tuple[Any, Any, Any, Any]:
    """Least squares through the SVD: (x, residuals, rank, singular values)."""
    a, b = _inexact(a, b)
    sa, sb = _shape(a), _shape(b)
    if len(sa) != 2:
        raise TypeError(f"{len(sa)}-dimensional array given. Array must be two-dimensional")
    if len(sb) not in (1, 2):
        raise TypeError(f"{len(sb)}-dimensional array given. Array must be one or two-dimensional")
    if sa[0] != sb[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    x, resid, rank, s = _lstsq(a, b, None if rcond is None else float(rcond))
    if numpy_resid:
        m, n = sa
        if int(rank) < n or m <= n:
            resid = creation.asarray([], dtype=util.aval(a).dtype)
    return x, resid, rank, s


@eager_jit(static_argnames=("rcond",))
def _lstsq(a: Any, b: Any, rcond: float | None) -> tuple[Any, Any, Any, Any]:
    vec = len(_shape(b)) == 1
    bm = lax.reshape(b, (_shape(b)[0], 1)) if vec else b
    if _is_complex(a):  # the real representation: x = u + iv, ranks and singular values doubled
        if rcond is None:  # the default cutoff of the complex problem's size
            rcond = float(_eps(dtypes.component(util.aval(a).dtype))) * builtins.max(_shape(a))
        xe, resid, rank, s = _lstsq(_embed(a), _stack_parts(bm), rcond)
        x = _unstack_parts(xe)
        x = lax.reshape(x, (_shape(a)[1],)) if vec else x
        half = lax.div(rank, lax.full((), 2, dtypes.int32))
        return x, resid, half, _pairs(s)
    m, n = _shape(a)
    dt = util.aval(a).dtype
    eps = float(_eps(dt))
    if m == 0 or n == 0:
        s = lax.full((0,), 0, dt)
        rank = lax.full((), 0, dtypes.int32)
        x = lax.full((n, _shape(bm)[1]), 0, dt)
    else:
        r = eps * builtins.max(m, n) if rcond is None else (eps if rcond < 0 else rcond)
        u, s, vh = lax_linalg.svd(a, full_matrices=False)
        mask = ufuncs.greater_equal(
            s, ufuncs.multiply(lax.full((), r, dt), lax.index_in_dim(s, 0, 0, False))
        )
        rank = util.convert(reductions.sum(mask), dtypes.int32)
        safe = util.where(mask, s, lax.full((), 1, dt))
        s_inv = util.where(mask, ufuncs.divide(lax.full((), 1, dt), safe), lax.full((), 0, dt))
        utb = _matmul(_mT(u), bm)
        x = _matmul(_mT(vh), ufuncs.multiply(_expand_dims(s_inv, -1), utb))
    res = ufuncs.subtract(bm, _matmul(a, x))
    resid = reductions.sum(ufuncs.multiply(res, res), axis=0)
    if vec:
        x = lax.reshape(x, (n,))
    return x, resid, rank, s


def tensorsolve(a: Any, b: Any, axes: Sequence[int] | None = None) -> Any:
    a, b = _inexact(a, b)
    an = len(_shape(a))
    if axes is not None:
        order = [i for i in range(an) if i not in [util.canonical_axis(k, an) for k in axes]]
        order += [util.canonical_axis(k, an) for k in axes]
        a = lax.transpose(a, order)
    q = _shape(a)[len(_shape(b)) :]
    size = math.prod(q)
    x = solve(
        lax.reshape(a, (math.prod(_shape(a)) // size, size)),
        lax.reshape(b, (math.prod(_shape(b)),)),
    )
    return lax.reshape(x, q)


def tensorinv(a: Any, ind: int = 2) -> Any:
    (a,) = _inexact(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    s = _shape(a)
    contract, rest = s[:ind], s[ind:]
    rows, cols = math.prod(contract), math.prod(rest)
    if rows != cols:
        raise ValueError(
            "tensorinv is only possible when the product of the first `ind` dimensions equals "
            f"that of the remaining dimensions. got arr.shape={s} with ind={ind}."
        )
    return lax.reshape(inv(lax.reshape(a, (rows, cols))), (*rest, *contract))


def cond(x: Any, p: Any = None) -> Any:
    """Condition number: s_max / s_min for p None or 2, else norm(x, p) * norm(inv(x), p)."""
    (x,) = _inexact(x)
    s = _shape(x)
    if len(s) < 2:
        raise ValueError(f"cond requires an array of at least two dimensions, got shape {s}")
    if s[-1] == 0 or s[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={s}")
    if p is None or (not isinstance(p, str) and p == 2):
        # s_max / s_min as is (0 / 0 = NaN for a zero matrix, as JAX: no NaN -> inf here)
        sv = svd(x, compute_uv=False)
        return ufuncs.divide(
            lax.index_in_dim(sv, 0, -1, False), lax.index_in_dim(sv, _shape(sv)[-1] - 1, -1, False)
        )
    else:
        _check_square(x, "cond")
        r = ufuncs.multiply(norm(x, ord=p, axis=(-2, -1)), norm(inv(x), ord=p, axis=(-2, -1)))
    x_nan = reductions.any(ufuncs.isnan(x), axis=(-2, -1))
    dt = util.aval(r).dtype
    return util.where(
        ufuncs.logical_and(ufuncs.isnan(r), ufuncs.logical_not(x_nan)),
        lax.full((), math.inf, dt),
        r,
    )


# ============================================================================================
# products and small helpers
# ============================================================================================


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """A chain of matrix products (first and last operands may be vectors)."""
    arrs = [util.ensure_array(a) for a in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrs)}")
    shapes = [_shape(a) for a in arrs]
    ok = all(len(s) == 2 for s in shapes[1:-1]) and len(shapes[0]) in (1, 2)
    ok = ok and len(shapes[-1]) in (1, 2)
    if not ok:
        raise ValueError(
            "multi_dot: input arrays must all be two-dimensional, except for the first and "
            f"last array which may be 1 or 2 dimensional. Got array shapes {shapes}"
        )
    out = arrs[0]
    for a in arrs[1:]:
        out = contractions.matmul(out, a)
    return out


def _cross(
    a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None
) -> Any:
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = util.promote_dtypes(util.ensure_array(a), util.ensure_array(b))
    a = _moveaxis(a, axisa, -1)
    b = _moveaxis(b, axisb, -1)
    na, nb = _shape(a)[-1], _shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")

    def comp(x: Any, i: int, n: int) -> Any:
        c = lax.index_in_dim(x, i, len(_shape(x)) - 1, False) if i < n else None
        return c

    a0, a1, a2 = (comp(a, i, na) for i in range(3))
    b0, b1, b2 = (comp(b, i, nb) for i in range(3))
    mul, sub = ufuncs.multiply, ufuncs.subtract
    if na == 2 and nb == 2:
        return sub(mul(a0, b1), mul(a1, b0))
    zero = lax.full((), 0, util.aval(a).dtype)
    a2 = zero if a2 is None else a2
    b2 = zero if b2 is None else b2
    c = _stack(
        [
            sub(mul(a1, b2), mul(a2, b1)),
            sub(mul(a2, b0), mul(a0, b2)),
            sub(mul(a0, b1), mul(a1, b0)),
        ],
        axis=-1,
    )
    return _moveaxis(c, -1, axisc)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of (arrays of) 3-vectors along `axis`."""
    util.check_arraylike("cross", x1, x2)
    x1, x2 = util.ensure_array(x1), util.ensure_array(x2)
    s1, s2 = _shape(x1), _shape(x2)
    n1 = s1[axis] if s1 else None
    n2 = s2[axis] if s2 else None
    if n1 != 3 or n2 != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"x1.shape[axis]={n1} and x2.shape[axis]={n2}"
        )
    return _cross(x1, x2, axis=axis)


def jnp_cross(
    a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None
) -> Any:
    """`jnp.cross`: cross products of 2- or 3-vectors (NumPy's axis arguments)."""
    util.check_arraylike("cross", a, b)
    return _cross(a, b, axisa, axisb, axisc, axis)


jnp_cross.__name__ = jnp_cross.__qualname__ = "cross"


def outer(x1: Any, x2: Any, /) -> Any:
    x1, x2 = util.ensure_array(x1), util.ensure_array(x2)
    n1, n2 = len(_shape(x1)), len(_shape(x2))
    if n1 != 1 or n2 != 1:
        raise ValueError(
            f"Input arrays must be one-dimensional, but they are x1.ndim={n1} x2.ndim={n2}"
        )
    return contractions.outer(x1, x2)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    return matrices.trace(x, offset, -2, -1, dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    return matrices.diagonal(x, offset, -2, -1)


def matrix_transpose(x: Any, /) -> Any:
    return _matrix_transpose(x)


def matmul(
    x1: Any, x2: Any, /, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    return contractions.matmul(x1, x2, preferred_element_type=preferred_element_type)


def vecdot(
    x1: Any,
    x2: Any,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    util.check_arraylike("jnp.vecdot", x1, x2)
    return contractions.vecdot(x1, x2, axis=axis, preferred_element_type=preferred_element_type)


def tensordot(
    x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    return contractions.tensordot(x1, x2, axes, preferred_element_type=preferred_element_type)


__all__ = [
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "EigResult",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]
