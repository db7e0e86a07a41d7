"""`lax.linalg.tridiagonal_solve` and `lax.linalg.tridiagonal`, as lax composites.

`tridiagonal_solve(dl, d, du, b)` solves A X = B for tridiagonal A given by its diagonals
(`dl[i] = A[i, i-1]`, `d[i] = A[i, i]`, `du[i] = A[i, i+1]`; `dl[0]` and `du[-1]` are ignored).
The algorithm is LAPACK's `gtsv` (what JAX calls on CPU): Gaussian elimination with partial
pivoting, where a row swap with the next row (when |d_i| < |dl_{i+1}|; |re| + |im| for complex)
fills in a second superdiagonal, then back substitution. Both passes are `lax.scan`s over the
rows, vectorized across the leading batch dims and the right-hand sides, so every device runs
them; eager calls replay one jitted program per shape (compiling it costs ~10 ms per row). A
zero pivot (a singular matrix) makes that batch entry's solution NaN, as JAX does with LAPACK's
`info > 0`. Derivatives follow JAX's rules: a `custom_jvp` with x' = A^-1 (b' - A' x) (A' from
the diagonals' tangents), whose solve is linear in b', so reverse mode transposes it. `vmap`
batches the composite. Not a primitive: jaxprs show the scans (JAX's show `tridiagonal_solve`).
`perturb_singular=True` raises NotImplementedError, as JAX does where its kernel is missing.

`tridiagonal(a, lower=True)` is LAPACK's unblocked `sytd2` / `hetd2` (JAX calls `sytrd` /
`hetrd` on CPU): n - 1 Householder reflections with LAPACK's conventions (`larfg`: beta =
-sign(alpha) * norm, tau = (beta - alpha) / beta, complex taus making the off-diagonal real),
so (a, d, e, taus) agree with JAX's to rounding. One step per column, as masked full-size
updates; `lower=False` is the lower reduction of the matrix with rows and columns reversed.
Differentiating it raises NotImplementedError, as in JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from .. import core, dtypes
from ..core import ShapedArray
from ..custom_derivatives import custom_jvp
from ..jit import jit
from . import control_flow, lax

__all__ = ["tridiagonal", "tridiagonal_solve"]

_NAME = "tridiagonal_solve"


# ---- argument checks (JAX's order and messages) ------------------------------------------------


def _array(x: Any, position: int) -> Any:
    if isinstance(x, (list, tuple)):
        raise TypeError(
            f"Error interpreting argument to {_NAME} as a JAX value. The problematic value is "
            f"of type {type(x)} and was passed to {_NAME} at position {position}.\n"
        )
    return lax.to_array(x)


def _check(avals: Sequence[ShapedArray]) -> None:
    core_ranks = (1, 1, 1, 2)
    for i, (a, r) in enumerate(zip(avals, core_ranks)):
        if a.ndim < r:
            raise TypeError(
                f"Input {i} to {_NAME} must have rank at least {r}, but got shape={a.shape}"
            )
    batch = [a.ndim - r for a, r in zip(avals, core_ranks)]
    if len(set(batch)) != 1:
        raise TypeError(
            f"All inputs to {_NAME} must have the same number of batch dimensions, but got "
            f"{batch} batch dimensions for the inputs."
        )
    for i, a in enumerate(avals):
        if a.dtype.kind not in "fc":
            raise TypeError(
                f"{_NAME} does not accept dtype {a.dtype.name} at position {i}. Accepted dtypes "
                f"at position {i} are subtypes of floating, complexfloating."
            )
    if len({a.dtype for a in avals}) != 1:
        raise TypeError(
            f"lax.{_NAME} requires arguments to have the same dtypes, got "
            + ", ".join(a.dtype.name for a in avals)
            + "."
        )
    dl, d, du, b = avals
    if dl.shape != d.shape or dl.shape != du.shape:
        raise TypeError(f"{_NAME} requires that all diagonal arguments have the same shape.")
    if dl.shape != b.shape[:-1]:
        raise TypeError(
            f"{_NAME} requires that the leading ndim-1 dimensions of b equal the dimensions of "
            "the diagonal arguments."
        )
    if d.dtype.itemsize < 4:
        raise NotImplementedError(f"Unsupported dtype {d.dtype.name}.")


# ---- the solver ------------------------------------------------------------------------------


def _size(x: Any) -> Any:
    """|x| for real x, |re x| + |im x| for complex x (LAPACK's CABS1, which zgtsv pivots on)."""
    if core.get_aval(x).dtype.kind == "c":
        return lax.add(lax.abs(lax.real(x)), lax.abs(lax.imag(x)))
    return lax.abs(x)


def _lead(x: Any, shape: Sequence[int]) -> Any:
    """Broadcast `x` along trailing new axes to `shape` (per-row values against the
    right-hand sides' columns)."""
    n = core.get_aval(x).ndim
    if core.get_aval(x).shape == tuple(shape):
        return x
    return lax.broadcast_in_dim(x, tuple(shape), tuple(range(n)))


def _where(pred: Any, a: Any, b: Any) -> Any:
    return lax.select(_lead(pred, core.get_aval(a).shape), a, b)


def _mul_rows(v: Any, x: Any) -> Any:
    return lax.mul(_lead(v, core.get_aval(x).shape), x)


def _to_front(x: Any, axis: int) -> Any:
    n = core.get_aval(x).ndim
    return lax.transpose(x, (axis, *[i for i in range(n) if i != axis]))


def _from_front(x: Any, axis: int) -> Any:
    n = core.get_aval(x).ndim
    perm = list(range(1, n))
    perm.insert(axis, 0)
    return lax.transpose(x, tuple(perm))


def _rows(x: Any, lo: int, hi: int) -> Any:
    a = core.get_aval(x)
    return lax.slice(x, (lo, *[0] * (a.ndim - 1)), (hi, *a.shape[1:]))


def _solve(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """gtsv on (batch..., m) diagonals and (batch..., m, k) right-hand sides."""
    m = core.get_aval(d).shape[-1]
    if m == 0:
        return b
    nb = core.get_aval(d).ndim - 1
    dt = core.get_aval(d).dtype
    dl, d, du = (_to_front(v, nb) for v in (dl, d, du))  # (m, batch...)
    b = _to_front(b, nb)  # (m, batch..., k)
    zero = lax.full(core.get_aval(d).shape[1:], 0, dt)
    # du[m - 1] lies outside A: make it zero so it never enters the arithmetic
    du = lax.concatenate([_rows(du, 0, m - 1), lax.expand_dims(zero, (0,))], 0)
    first = (lax.squeeze(_rows(d, 0, 1), (0,)), lax.squeeze(_rows(du, 0, 1), (0,)))
    b0 = lax.squeeze(_rows(b, 0, 1), (0,))

    def eliminate(carry: Any, nxt: Any) -> tuple[Any, Any]:
        # carry: row i (diagonal, superdiagonal, rhs) as modified so far; nxt: row i + 1 as given
        dc, uc, bc = carry
        l, dn, un, bn = nxt
        swap = lax.lt(_size(dc), _size(l))
        f_keep = lax.div(l, dc)  # eliminate l with row i as pivot row
        f_swap = lax.div(dc, l)  # rows swapped: row i + 1 becomes the pivot row
        row = (
            _where(swap, l, dc),
            _where(swap, dn, uc),
            _where(swap, un, zero),  # fill-in: the second superdiagonal
            _where(swap, bn, bc),
        )
        new = (
            _where(swap, lax.sub(uc, lax.mul(f_swap, dn)), lax.sub(dn, lax.mul(f_keep, uc))),
            _where(swap, lax.neg(lax.mul(f_swap, un)), un),
            _where(swap, lax.sub(bc, _mul_rows(f_swap, bn)), lax.sub(bn, _mul_rows(f_keep, bc))),
        )
        return new, row

    rest = (_rows(dl, 1, m), _rows(d, 1, m), _rows(du, 1, m), _rows(b, 1, m))
    (d_last, u_last, b_last), (piv, u1, u2, rhs) = control_flow.scan(eliminate, (*first, b0), rest)
    piv = lax.concatenate([piv, lax.expand_dims(d_last, (0,))], 0)
    u1 = lax.concatenate([u1, lax.expand_dims(u_last, (0,))], 0)
    u2 = lax.concatenate([u2, lax.expand_dims(zero, (0,))], 0)
    rhs = lax.concatenate([rhs, lax.expand_dims(b_last, (0,))], 0)

    def substitute(carry: Any, row: Any) -> tuple[Any, Any]:
        x1, x2 = carry  # x[i + 1], x[i + 2]
        p, a1, a2, r = row
        x = lax.sub(lax.sub(r, _mul_rows(a1, x1)), _mul_rows(a2, x2))
        x = lax.div(x, _lead(p, core.get_aval(x).shape))
        return (x, x1), x

    xz = lax.full(core.get_aval(b0).shape, 0, dt)
    _, x = control_flow.scan(substitute, (xz, xz), (piv, u1, u2, rhs), reverse=True)
    # a zero pivot is LAPACK's info > 0: JAX returns NaN for that batch entry
    singular = lax.reduce_or(lax.eq(piv, lax.full((), 0, dt)), (0,))
    shape = core.get_aval(x).shape
    singular = lax.broadcast_in_dim(singular, shape, tuple(range(1, nb + 1)))
    x = lax.select(singular, lax.full(shape, float("nan"), dt), x)
    return _from_front(x, nb)


def _slice(x: Any, lo: int, hi: int, axis: int) -> Any:
    a = core.get_aval(x)
    start = [0] * a.ndim
    limit = list(a.shape)
    start[axis], limit[axis] = lo, hi
    return lax.slice(x, start, limit)


def _product(dl: Any, d: Any, du: Any, x: Any) -> Any:
    """A @ x for the tridiagonal A (dl[0] and du[-1] unused)."""
    a = core.get_aval(x)
    m, ax = a.shape[-2], a.ndim - 2
    y = _mul_rows(d, x)
    if m < 2:
        return y
    below = _mul_rows(_slice(dl, 1, m, ax), _slice(x, 0, m - 1, ax))
    above = _mul_rows(_slice(du, 0, m - 1, ax), _slice(x, 1, m, ax))
    zero = lax.full((), 0, a.dtype)
    keep = [(0, 0, 0)] * ax
    y = lax.add(y, lax.pad(below, zero, [*keep, (1, 0, 0), (0, 0, 0)]))
    return lax.add(y, lax.pad(above, zero, [*keep, (0, 1, 0), (0, 0, 0)]))


@functools.cache
def _solve_jit() -> Any:
    return jit(_solve)


@functools.cache
def _differentiable_solve() -> Any:
    """The solve as a custom_jvp with JAX's rule: x' = A^-1 (b' - A' x)."""

    def solve(dl: Any, d: Any, du: Any, b: Any) -> Any:
        return _solve_jit()(dl, d, du, b)

    f = custom_jvp(solve)

    def solve_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        dl, d, du, b = primals
        dl_t, d_t, du_t, b_t = tangents
        x = _solve_jit()(dl, d, du, b)
        rhs = lax.sub(b_t, _product(dl_t, d_t, du_t, x))
        return x, _solve_jit()(dl, d, du, rhs)

    f.defjvp(solve_jvp)
    return f


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False) -> Any:
    """Solve A X = B for tridiagonal A: `dl`, `d`, `du` (batch..., m) its sub-, main and
    superdiagonal (`dl[..., 0]` and `du[..., m - 1]` are ignored), `b` (batch..., m, k)."""
    dl, d, du, b = (_array(x, i) for i, x in enumerate((dl, d, du, b)))
    _check([core.get_aval(x) for x in (dl, d, du, b)])
    if perturb_singular:
        raise NotImplementedError("perturb_singular=True is not supported on this platform.")
    return _differentiable_solve()(dl, d, du, b)


# ============================================================================================
# tridiagonal: Householder reduction of a symmetric / Hermitian matrix (LAPACK sytrd / hetrd)
# ============================================================================================


def _complex_part(dt: Any) -> Any:
    return dtypes.float64 if dt.itemsize == 16 else dtypes.float32


def _abs2(x: Any) -> Any:
    if core.get_aval(x).dtype.kind == "c":
        re, im = lax.real(x), lax.imag(x)
        return lax.add(lax.mul(re, re), lax.mul(im, im))
    return lax.mul(x, x)


def _conj(x: Any) -> Any:
    return lax.conj(x) if core.get_aval(x).dtype.kind == "c" else x


def _take(x: Any, index: int, axis: int) -> Any:
    return lax.squeeze(_slice(x, index, index + 1, axis), (axis,))


def _hermitian_from_lower(a: Any) -> Any:
    """The Hermitian matrix whose lower triangle is a's (the diagonal's imaginary part
    dropped, as LAPACK does)."""
    aval = core.get_aval(a)
    nd = aval.ndim
    rows = lax.broadcasted_iota("int32", aval.shape, nd - 2)
    cols = lax.broadcasted_iota("int32", aval.shape, nd - 1)
    perm = (*range(nd - 2), nd - 1, nd - 2)
    upper = _conj(lax.transpose(a, perm))
    h = lax.select(lax.ge(rows, cols), a, upper)
    if aval.dtype.kind == "c":
        diag = lax.complex(lax.real(h), lax.full(aval.shape, 0, _complex_part(aval.dtype)))
        h = lax.select(lax.eq(rows, cols), diag, h)
    return h


def _reduce_lower(h: Any) -> tuple[Any, Any, Any, Any]:
    """dsytd2 / zhetd2 with uplo = 'L' on the full Hermitian `h` (batch..., n, n): returns the
    reflector matrix (column i holds e[i] at row i + 1 and the reflector's tail below it), d, e
    and taus. Masked full-size updates: the reflector v and w vanish outside the trailing
    block, so the rank-2 update leaves everything else alone."""
    aval = core.get_aval(h)
    n, nd, dt = aval.shape[-1], aval.ndim, aval.dtype
    rdt = _complex_part(dt) if dt.kind == "c" else dt
    batch = aval.shape[:-2]
    vec = (*batch, n)
    pos = lax.broadcasted_iota("int32", vec, nd - 2)
    zero_v = lax.full(vec, 0, dt)
    refl_cols, ds, es, taus = [], [], [], []
    for i in range(n - 1):
        col = _take(h, i, nd - 1)  # (batch..., n): column i
        h_ii = _take(col, i, nd - 2)  # final: later steps only touch the trailing block
        ds.append(lax.real(h_ii) if dt.kind == "c" else h_ii)
        alpha = _take(col, i + 1, nd - 2)
        below = lax.gt(pos, lax.full(vec, i + 1, "int32"))
        x = lax.select(below, col, zero_v)
        xnorm2 = lax.reduce_sum(_abs2(x), (nd - 2,))
        alpha_re = lax.real(alpha) if dt.kind == "c" else alpha
        alpha_im = lax.imag(alpha) if dt.kind == "c" else lax.full(batch, 0, rdt)
        zero_r = lax.full(batch, 0, rdt)
        trivial = lax.bitwise_and(lax.eq(xnorm2, zero_r), lax.eq(alpha_im, zero_r))
        r = lax.sqrt(
            lax.add(lax.add(lax.mul(alpha_re, alpha_re), lax.mul(alpha_im, alpha_im)), xnorm2)
        )
        beta = lax.select(lax.ge(alpha_re, zero_r), lax.neg(r), r)
        tau_re = lax.div(lax.sub(beta, alpha_re), beta)
        if dt.kind == "c":
            tau = lax.complex(tau_re, lax.div(lax.neg(alpha_im), beta))
            scale = lax.div(lax.full(batch, 1, dt), lax.sub(alpha, lax.complex(beta, zero_r)))
        else:
            tau = tau_re
            scale = lax.div(lax.full(batch, 1, dt), lax.sub(alpha, beta))
        tau = lax.select(trivial, lax.full(batch, 0, dt), tau)
        beta = lax.select(trivial, alpha_re, beta)
        tail = lax.select(_lead(trivial, vec), x, _mul_rows_vec(scale, x))
        one_at = lax.eq(pos, lax.full(vec, i + 1, "int32"))
        v = lax.select(one_at, lax.full(vec, 1, dt), tail)
        # x = tau H v; w = x - (tau / 2) (x^H v) v; H <- H - v w^H - w v^H
        hv = lax.reduce_sum(
            lax.mul(h, lax.broadcast_in_dim(v, aval.shape, (*range(nd - 2), nd - 1))), (nd - 1,)
        )
        w = _mul_rows_vec(tau, hv)
        trailing = lax.ge(pos, lax.full(vec, i + 1, "int32"))
        w = lax.select(trailing, w, zero_v)
        dotc = lax.reduce_sum(lax.mul(_conj(w), v), (nd - 2,))
        half = lax.mul(lax.full(batch, -0.5, dt), tau)
        w = lax.add(w, _mul_rows_vec(lax.mul(half, dotc), v))
        outer = lambda p, q: lax.mul(
            lax.broadcast_in_dim(p, aval.shape, (*range(nd - 2), nd - 2)),
            lax.broadcast_in_dim(_conj(q), aval.shape, (*range(nd - 2), nd - 1)),
        )
        h = lax.sub(lax.sub(h, outer(v, w)), outer(w, v))
        refl_cols.append(lax.select(one_at, _as(beta, dt, vec), tail))
        es.append(beta)
        taus.append(tau)
    last = _take(_take(h, n - 1, nd - 1), n - 1, nd - 2)
    ds.append(lax.real(last) if dt.kind == "c" else last)
    stack = lambda xs, axis, shape, dtype: (
        lax.concatenate([lax.expand_dims(x, (axis,)) for x in xs], axis)
        if xs
        else lax.full(shape, 0, dtype)
    )
    refl = stack(refl_cols + [zero_v], nd - 1, aval.shape, dt)
    d = stack(ds, nd - 2, vec, rdt)
    e = stack(es, nd - 2, (*batch, n - 1), rdt)
    t = stack(taus, nd - 2, (*batch, n - 1), dt)
    return refl, d, e, t


def _as(x: Any, dt: Any, shape: Sequence[int]) -> Any:
    if core.get_aval(x).dtype != dt:
        x = lax.complex(x, lax.full(core.get_aval(x).shape, 0, core.get_aval(x).dtype))
    return _lead(x, shape)


def _mul_rows_vec(s: Any, x: Any) -> Any:
    """A per-matrix scalar (batch...) times a vector (batch..., n)."""
    return lax.mul(_lead(s, core.get_aval(x).shape), x)


def _tridiagonal_impl(a: Any, *, lower: bool) -> tuple[Any, Any, Any, Any]:
    aval = core.get_aval(a)
    nd, dt = aval.ndim, aval.dtype
    sq = (nd - 2, nd - 1)
    work = a if lower else lax.rev(a, sq)
    # the upper reduction is the lower one of the flipped matrix (rows and columns reversed),
    # with every output reversed back
    refl, d, e, taus = _reduce_lower(_hermitian_from_lower(work))
    if not lower:
        refl = lax.rev(refl, sq)
        d, e, taus = (lax.rev(x, (nd - 2,)) for x in (d, e, taus))
    rows = lax.broadcasted_iota("int32", aval.shape, nd - 2)
    cols = lax.broadcasted_iota("int32", aval.shape, nd - 1)
    kept = lax.lt(rows, cols) if lower else lax.gt(rows, cols)
    diag = lax.broadcast_in_dim(
        _as(d, dt, core.get_aval(d).shape), aval.shape, (*range(nd - 2), nd - 1)
    )
    out = lax.select(kept, a, lax.select(lax.eq(rows, cols), diag, refl))
    return out, d, e, taus


@functools.cache
def _tridiagonal_jit(lower: bool) -> Any:
    return jit(functools.partial(_tridiagonal_impl, lower=lower))


def _no_derivative(*args: Any) -> Any:
    raise NotImplementedError("Differentiation rule for 'tridiagonal' not implemented")


@functools.cache
def _tridiagonal_fn(lower: bool) -> Any:
    f = custom_jvp(lambda a: _tridiagonal_jit(lower)(a))
    f.defjvp(_no_derivative)
    return f


def tridiagonal(a: Any, *, lower: bool = True) -> tuple[Any, Any, Any, Any]:
    """Householder reduction of symmetric / Hermitian matrices (batch..., n, n) to tridiagonal
    form, LAPACK's sytrd / hetrd: returns (a, d, e, taus), with the diagonal and first
    sub- (lower=True) or superdiagonal of `a` holding the tridiagonal matrix, the reflectors
    beyond it, and the other triangle untouched; d (real) the diagonal, e (real) the off-
    diagonal, taus the reflectors' scale factors. Only the `lower` triangle of the input is
    read. Not differentiable (as in JAX)."""
    x = _array(a, 0)
    aval = core.get_aval(x)
    if aval.ndim < 2:
        raise TypeError(
            f"Input 0 to tridiagonal must have rank at least 2, but got shape={aval.shape}"
        )
    if aval.dtype.kind not in "fc":
        raise TypeError(
            f"tridiagonal does not accept dtype {aval.dtype.name} at position 0. Accepted "
            "dtypes at position 0 are subtypes of floating, complexfloating."
        )
    shape = aval.shape[-2:]
    if shape[0] != shape[1] or shape[1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {shape}.")
    if aval.dtype.itemsize < 4:
        raise NotImplementedError(f"Unsupported dtype {aval.dtype.name}.")
    return tuple(_tridiagonal_fn(bool(lower))(x))  # type: ignore[return-value]
