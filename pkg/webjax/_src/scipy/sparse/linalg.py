"""jax.scipy.sparse.linalg: conjugate gradients, BiCGSTAB and restarted GMRES for a linear
operator given as a square matrix, an object with `@`, or a function on pytrees.

Each solver runs in a while_loop and is wrapped in lax.custom_linear_solve, so derivatives
(with respect to b and to the values the operator closes over) come from solving the
transposed system at the solution, not from differentiating the iterations. As in JAX, `info`
is None for cg and bicgstab, and for gmres 0 (or -1 where the solution holds a NaN).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from ... import core
from ... import numpy as jnp
from ...dispatch.array import Array
from ...flatten_util import ravel_pytree
from ...lax import control_flow, lax
from ...lax import linalg as lax_linalg
from ...lax.linear_solve import custom_linear_solve
from ...numpy import util
from ...tree_util import tree_leaves, tree_map, tree_structure

_HIGHEST = lax.Precision.HIGHEST


# ---- pytree vector arithmetic ------------------------------------------------------------------
def _vdot_real(x: Any, y: Any) -> Any:
    """Re(x^H y) for z^H M z forms, where M is Hermitian: the real parts' products, plus the
    imaginary parts' for complex operands."""
    out = jnp.vdot(jnp.real(x), jnp.real(y), precision=_HIGHEST)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        out = out + jnp.vdot(jnp.imag(x), jnp.imag(y), precision=_HIGHEST)
    return out


def _vdot_real_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot_real, x, y)))


def _vdot_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(functools.partial(jnp.vdot, precision=_HIGHEST), x, y)))


def _scale(a: Any, tree: Any) -> Any:
    return tree_map(lambda v: a * v, tree)


def _add(x: Any, y: Any) -> Any:
    return tree_map(operator.add, x, y)


def _sub(x: Any, y: Any) -> Any:
    return tree_map(operator.sub, x, y)


def _identity(x: Any) -> Any:
    return x


def _as_operator(f: Any) -> Callable[[Any], Any]:
    """A function computing the product with `f`: a function itself, a square matrix, or a
    square object with `@` (a sparse matrix)."""
    if callable(f):
        return f
    if isinstance(f, (Array, core.Tracer)) or (hasattr(f, "__array__") and hasattr(f, "ndim")):
        shape = tuple(f.shape)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")
        return functools.partial(jnp.dot, f, precision=_HIGHEST)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
            raise ValueError(
                f"linear operator must be a square matrix, but has shape: {tuple(f.shape)}"
            )
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _check_like(x0: Any, b: Any) -> None:
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            "x0 and b must have matching tree structure: "
            f"{tree_structure(x0)} vs {tree_structure(b)}"
        )
    s0 = [tuple(jnp.shape(v)) for v in tree_leaves(x0)]
    sb = [tuple(jnp.shape(v)) for v in tree_leaves(b)]
    if s0 != sb:
        raise ValueError(f"arrays in x0 and b must have matching shapes: {s0} vs {sb}")


def _prepare(A: Any, b: Any, x0: Any, M: Any) -> tuple[Any, Any, Any, Any]:
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    return _as_operator(A), b, x0, (_identity if M is None else _as_operator(M))


def _default_maxiter(b: Any, maxiter: Any) -> Any:
    return 10 * sum(util.aval(v).size for v in tree_leaves(b)) if maxiter is None else maxiter


# ---- conjugate gradients -----------------------------------------------------------------------
def _cg(A: Any, b: Any, x0: Any, *, maxiter: Any, tol: Any, atol: Any, M: Any) -> Any:
    # stop when |r|^2 <= max(tol^2 |b|^2, atol^2) (for M = I, r^T z is |r|^2 already)
    atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    z0 = M(r0)

    def cond(state: Any) -> Any:
        _, r, gamma, _, k = state
        rs = jnp.real(gamma) if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body(state: Any) -> Any:
        x, r, gamma, p, k = state
        q = A(p)
        alpha = gamma / _vdot_real_tree(p, q).astype(gamma.dtype)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, q))
        z = M(r)
        gamma_next = _vdot_real_tree(r, z).astype(gamma.dtype)
        p = _add(z, _scale(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    gamma0 = _vdot_real_tree(r0, z0).astype(jnp.result_type(*tree_leaves(b)))
    state = (x0, r0, gamma0, z0, 0)
    return control_flow.while_loop(cond, body, state)[0]


def _isolve(
    method: Callable[..., Any],
    A: Any,
    b: Any,
    x0: Any,
    tol: Any,
    atol: Any,
    maxiter: Any,
    M: Any,
    check_symmetric: bool,
) -> tuple[Any, None]:
    A, b, x0, M = _prepare(A, b, x0, M)
    maxiter = _default_maxiter(b, maxiter)
    _check_like(x0, b)
    solve = functools.partial(method, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # a real positive-definite operator is symmetric; a complex one need not be
    symmetric = check_symmetric and not any(jnp.iscomplexobj(v) for v in tree_leaves(b))
    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: Any = 1e-5,
    atol: Any = 0.0,
    maxiter: Any = None,
    M: Any = None,
) -> tuple[Any, None]:
    """Solve A x = b by conjugate gradients, for A Hermitian positive definite (a matrix or a
    function on pytrees like b). Stops when |b - A x| <= max(tol * |b|, atol) or after
    `maxiter` steps (default 10 * the size of b); `M` is a preconditioner approximating
    A^-1. Returns (x, None)."""
    return _isolve(_cg, A, b, x0, tol, atol, maxiter, M, check_symmetric=True)


# ---- BiCGSTAB -----------------------------------------------------------------------------------
def _bicgstab(A: Any, b: Any, x0: Any, *, maxiter: Any, tol: Any, atol: Any, M: Any) -> Any:
    atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    rhat = r0
    dtype = jnp.result_type(*tree_leaves(b))
    one = jnp.ones((), dtype)

    def cond(state: Any) -> Any:
        _, r, *_, k = state
        # k < 0 marks a breakdown (rho or omega vanished)
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(state: Any) -> Any:
        x, r, p, v, rho_prev, alpha, omega, k = state
        rho = _vdot_tree(rhat, r)
        beta = (rho / rho_prev) * (alpha / omega)
        p = _add(r, _scale(beta, _sub(p, _scale(omega, v))))
        phat = M(p)
        v = A(phat)
        alpha = rho / _vdot_tree(rhat, v)
        s = _sub(r, _scale(alpha, v))
        converged = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega = _vdot_tree(t, s) / _vdot_tree(t, t)
        step = jnp.where(converged, jnp.zeros_like(omega), omega)
        x = _add(x, _add(_scale(alpha, phat), _scale(step, shat)))
        r = tree_map(lambda s_, t_: jnp.where(converged, s_, s_ - omega * t_), s, t)
        k = jnp.where((omega == 0) & ~converged, -11, jnp.where(rho == 0, -10, k + 1))
        return x, r, p, v, rho, alpha, omega, k

    zeros = tree_map(jnp.zeros_like, b)
    state = (x0, r0, zeros, zeros, one, one, one, jnp.asarray(0))
    return control_flow.while_loop(cond, body, state)[0]


def bicgstab(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: Any = 1e-5,
    atol: Any = 0.0,
    maxiter: Any = None,
    M: Any = None,
) -> tuple[Any, None]:
    """Solve A x = b by the stabilized biconjugate gradient method, for any (nonsymmetric)
    invertible A, a matrix or a function on pytrees like b. Tolerances, `maxiter` and `M` as in
    `cg`. Returns (x, None)."""
    return _isolve(_bicgstab, A, b, x0, tol, atol, maxiter, M, check_symmetric=False)


# ---- GMRES --------------------------------------------------------------------------------------
def _norm(x: Any) -> Any:
    return jnp.sqrt(_vdot_real(x, x))


def _arnoldi_cycle(A: Any, M: Any, x: Any, r: Any, rnorm: Any, restart: int, incremental: bool):
    """One GMRES cycle from x with preconditioned residual r (flat): build the Krylov basis of
    M A (a Hessenberg matrix H), minimize |rnorm e1 - H y| and return x + V y. `incremental`
    orthogonalizes one basis vector at a time (modified Gram-Schmidt); otherwise against all
    at once, twice (classical Gram-Schmidt with one re-orthogonalization). After a breakdown
    (the new vector lies in the span), the remaining columns become unit columns, so y is 0
    there."""
    n = r.shape[0]
    dtype = r.dtype
    V = jnp.zeros((restart + 1, n), dtype).at[0].set(r / rnorm.astype(dtype))
    H = jnp.zeros((restart + 1, restart), dtype)
    eps = jnp.finfo(dtype).eps

    def project(V: Any, w: Any, j: Any) -> tuple[Any, Any]:
        if incremental:

            def one(i: Any, wh: Any) -> Any:
                w, h = wh
                c = jnp.where(i <= j, jnp.vdot(V[i], w, precision=_HIGHEST), 0)
                return w - c * V[i], h.at[i].set(c)

            return control_flow.fori_loop(0, restart + 1, one, (w, jnp.zeros(restart + 1, dtype)))
        h = jnp.zeros(restart + 1, dtype)
        for _ in range(2):
            c = jnp.matmul(jnp.conj(V), w, precision=_HIGHEST)
            w = w - jnp.matmul(c, V, precision=_HIGHEST)
            h = h + c
        return w, h

    def step(j: Any, state: Any) -> Any:
        V, H, broken = state
        w = M(A(V[j]))
        w0 = _norm(w)
        w, h = project(V, w, j)
        wnorm = _norm(w)
        dead = broken | (wnorm <= 2 * eps * w0)
        col = jnp.where(broken, jnp.eye(restart + 1, dtype=dtype)[j], h.at[j + 1].set(wnorm))
        V = V.at[j + 1].set(jnp.where(dead, jnp.zeros_like(w), w / jnp.where(dead, 1, wnorm)))
        return V, H.at[:, j].set(col), dead

    V, H, _ = control_flow.fori_loop(0, restart, step, (V, H, jnp.asarray(False)))
    q, rr = jnp.linalg.qr(H)
    e1 = jnp.zeros(restart + 1, dtype).at[0].set(rnorm.astype(dtype))
    y = lax_linalg.triangular_solve(
        rr, jnp.matmul(jnp.conj(q).T, e1)[:, None], left_side=True, lower=False
    )[:, 0]
    return x + jnp.matmul(y, V[:restart], precision=_HIGHEST)


def _gmres(
    A: Any,
    b: Any,
    x0: Any,
    atol: Any,
    ptol: Any,
    restart: int,
    maxiter: Any,
    M: Any,
    incremental: bool,
) -> Any:
    def residual(x: Any) -> tuple[Any, Any]:
        r = M(b - A(x))
        return r, _norm(r)

    def cond(state: Any) -> Any:
        _, k, _, rnorm = state
        return (k < maxiter) & (rnorm > ptol)

    def body(state: Any) -> Any:
        x, k, r, rnorm = state
        x = _arnoldi_cycle(A, M, x, r, rnorm, restart, incremental)
        return (x, k + 1, *residual(x))

    r0, n0 = residual(x0)
    return control_flow.while_loop(cond, body, (x0, 0, r0, n0))[0]


def gmres(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: Any = 1e-5,
    atol: Any = 0.0,
    restart: int = 20,
    maxiter: Any = None,
    M: Any = None,
    solve_method: str = "batched",
) -> tuple[Any, Any]:
    """Solve A x = b by restarted GMRES, for any invertible A, a matrix or a function on pytrees
    like b. Each cycle builds a Krylov basis of `restart` vectors; `maxiter` bounds the cycles
    (default 10 * the size of b). Stops when the preconditioned residual |M (b - A x)| drops to
    |M b| * min(1, max(tol * |b|, atol) / |b|). `solve_method`: 'batched' orthogonalizes each
    new basis vector against the whole basis at once, 'incremental' one vector at a time.
    Returns (x, info), info 0, or -1 where x holds a NaN."""
    if solve_method not in ("incremental", "batched"):
        raise ValueError(
            f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'"
        )
    A, b, x0, M = _prepare(A, b, x0, M)
    _check_like(x0, b)
    size = sum(util.aval(v).size for v in tree_leaves(b))
    maxiter = 10 * size if maxiter is None else maxiter
    restart = min(int(restart), size)
    b_norm = jnp.sqrt(_vdot_real_tree(b, b))
    atol = jnp.maximum(tol * b_norm, atol)
    mb_norm = jnp.sqrt(_vdot_real_tree(M(b), M(b)))
    ptol = mb_norm * jnp.minimum(1.0, atol / b_norm)
    _, unravel = ravel_pytree(b)

    def flat(op: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda v: ravel_pytree(op(unravel(v)))[0]

    def solve(op: Callable[[Any], Any], rhs: Any) -> Any:
        x = _gmres(
            flat(op),
            ravel_pytree(rhs)[0],
            ravel_pytree(x0)[0],
            atol,
            ptol,
            restart,
            maxiter,
            flat(M),
            solve_method == "incremental",
        )
        return unravel(x)

    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    failed = jnp.isnan(jnp.sqrt(_vdot_real_tree(x, x)))
    return x, jnp.where(failed, -1, 0)


__all__ = ["bicgstab", "cg", "gmres"]
