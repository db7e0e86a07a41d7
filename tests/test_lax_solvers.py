"""lax.custom_linear_solve / lax.custom_root and jax.scipy.sparse.linalg (cg, bicgstab, gmres)
against NumPy and real JAX: solutions, gradients (finite differences and JAX's), jit, vmap,
pytree operands, the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.sparse.linalg as wsl
from check_grads import check_grads
from jax_compare import close, raises_like
from webjax import lax

jax = pytest.importorskip("jax")
import jax.scipy.sparse.linalg as jsl  # noqa: E402

R = np.random.RandomState(0)
N = 5
_Q = R.normal(size=(N, N)).astype(np.float32)
SPD = (_Q @ _Q.T + N * np.eye(N)).astype(np.float32)
NONSYM = (_Q + N * np.eye(N)).astype(np.float32)
B = R.normal(size=N).astype(np.float32)
SOLVERS = ["cg", "bicgstab", "gmres"]


def _matrix(solver: str) -> np.ndarray:
    return SPD if solver == "cg" else NONSYM


def _solve(mod: Any, solver: str, A: Any, b: Any, **kw: Any) -> Any:
    return getattr(mod, solver)(A, b, **kw)[0]


# ---- scipy.sparse.linalg -----------------------------------------------------------------------
@pytest.mark.parametrize("solver", SOLVERS)
def test_solution_matches_numpy_and_jax(device, solver):
    A = _matrix(solver)
    got = _solve(wsl, solver, jnp.asarray(A), jnp.asarray(B))
    close(got, np.linalg.solve(A, B), rtol=1e-4, atol=1e-5)
    close(got, _solve(jsl, solver, A, B), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "solver, kw",
    [
        ("cg", {"maxiter": 2}),
        ("cg", {"M": np.diag(1 / np.diag(SPD)), "tol": 1e-3}),
        ("cg", {"x0": B, "atol": 1e-2}),
        ("bicgstab", {"M": np.diag(1 / np.diag(NONSYM)), "maxiter": 3}),
        ("gmres", {"restart": 2, "maxiter": 2, "solve_method": "incremental"}),
        ("gmres", {"restart": 2, "solve_method": "batched"}),
        ("gmres", {"restart": 3, "M": np.diag(1 / np.diag(NONSYM))}),
    ],
)
def test_keyword_arguments_like_jax(solver, kw):
    A = _matrix(solver)
    wkw = {k: jnp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    got = getattr(wsl, solver)(jnp.asarray(A), jnp.asarray(B), **wkw)
    want = getattr(jsl, solver)(A, B, **kw)
    close(got[0], want[0], rtol=1e-4, atol=1e-5)
    if solver == "gmres":
        assert int(got[1]) == int(want[1]) == 0
    else:
        assert got[1] is None and want[1] is None


def _tree_op(np_: Any) -> Any:
    return lambda t: {"a": 3.0 * t["a"] + t["b"][:2], "b": t["b"] * np_.arange(2.0, 5.0)}


@pytest.mark.parametrize("solver", SOLVERS)
def test_pytree_operator(solver):
    b = {"a": np.ones(2, np.float32), "b": np.arange(3, dtype=np.float32)}
    got = getattr(wsl, solver)(_tree_op(jnp), {k: jnp.asarray(v) for k, v in b.items()})[0]
    want = getattr(jsl, solver)(_tree_op(jax.numpy), b)[0]
    for k in b:
        close(got[k], want[k], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("solver", SOLVERS)
def test_gradients_through_the_solve(solver):
    A, b = _matrix(solver), B

    def loss(mod: Any, np_: Any) -> Any:
        def f(a, rhs):
            x = getattr(mod, solver)(lambda v: a @ v, rhs, tol=1e-6)[0]
            return np_.sum(np_.sin(x))

        return f

    got = webjax.grad(loss(wsl, jnp), (0, 1))(jnp.asarray(A), jnp.asarray(b))
    want = jax.grad(loss(jsl, jax.numpy), (0, 1))(A, b)
    for g, w in zip(got, want, strict=True):
        close(g, w, rtol=1e-3, atol=1e-5)
    check_grads(lambda a, rhs: loss(wsl, jnp)(a * 0.1 + jnp.asarray(A), rhs), [A * 0, b])


def test_jit_and_vmap_of_cg():
    f = webjax.jit(lambda a, b: wsl.cg(a, b)[0])
    close(f(jnp.asarray(SPD), jnp.asarray(B)), np.linalg.solve(SPD, B), rtol=1e-4, atol=1e-5)
    bs = np.stack([B, 2 * B, -B])
    got = webjax.vmap(lambda b: wsl.gmres(jnp.asarray(NONSYM), b)[0])(jnp.asarray(bs))
    close(got, np.linalg.solve(NONSYM, bs.T).T, rtol=1e-4, atol=1e-5)


def test_solver_errors_like_jax():
    raises_like(
        lambda: wsl.cg(jnp.ones((2, 3)), jnp.ones(2)), lambda: jsl.cg(np.ones((2, 3)), np.ones(2))
    )
    raises_like(lambda: wsl.cg("A", jnp.ones(2)), lambda: jsl.cg("A", np.ones(2)))
    raises_like(
        lambda: wsl.cg(lambda x: x, jnp.ones(2), x0=jnp.ones(3)),
        lambda: jsl.cg(lambda x: x, np.ones(2), x0=np.ones(3)),
    )
    raises_like(
        lambda: wsl.gmres(lambda x: x, jnp.ones(2), solve_method="qr"),
        lambda: jsl.gmres(lambda x: x, np.ones(2), solve_method="qr"),
    )


# ---- lax.custom_linear_solve -------------------------------------------------------------------
def _dense_solve(np_: Any, a: Any) -> Any:
    return lambda matvec, b: np_.linalg.solve(a, b)


def _cls_loss(lax_: Any, np_: Any, symmetric: bool) -> Any:
    def f(a, b):
        x = lax_.custom_linear_solve(
            lambda v: a @ v,
            b,
            _dense_solve(np_, a),
            None if symmetric else (lambda vecmat, y: np_.linalg.solve(a.T, y)),
            symmetric=symmetric,
        )
        return np_.sum(x**2) + np_.sum(np_.cos(x))

    return f


@pytest.mark.parametrize("symmetric", [True, False])
def test_custom_linear_solve_derivatives(device, symmetric):
    A = SPD if symmetric else NONSYM
    wf, jf = _cls_loss(lax, jnp, symmetric), _cls_loss(jax.lax, jax.numpy, symmetric)
    close(wf(jnp.asarray(A), jnp.asarray(B)), jf(A, B), rtol=1e-5)
    got = webjax.grad(wf, (0, 1))(jnp.asarray(A), jnp.asarray(B))
    want = jax.grad(jf, (0, 1))(A, B)
    for g, w in zip(got, want, strict=True):
        close(g, w, rtol=1e-4, atol=1e-6)
    if device.platform in ("cpu", "wasm"):
        check_grads(wf, [A, B], order=2)


def test_custom_linear_solve_jaxpr_jit_vmap_and_aux():
    wf = _cls_loss(lax, jnp, True)
    eqns = webjax.make_jaxpr(wf)(jnp.asarray(SPD), jnp.asarray(B)).jaxpr.eqns
    assert eqns[0].primitive is lax.linear_solve_p
    got = webjax.jit(webjax.grad(wf))(jnp.asarray(SPD), jnp.asarray(B))
    close(got, jax.grad(_cls_loss(jax.lax, jax.numpy, True))(SPD, B), rtol=1e-4, atol=1e-6)
    As = np.stack([SPD, 2 * SPD])
    got = webjax.vmap(webjax.grad(wf))(jnp.asarray(As), jnp.asarray(np.stack([B, B])))
    want = jax.vmap(jax.grad(_cls_loss(jax.lax, jax.numpy, True)))(As, np.stack([B, B]))
    close(got, want, rtol=1e-4, atol=1e-6)

    def with_aux(lax_: Any, np_: Any) -> Any:
        def solve(mv, b):
            return np_.linalg.solve(SPD, b), {"n": np_.sum(b)}

        return lambda b: lax_.custom_linear_solve(lambda v: SPD @ v, b, solve, has_aux=True)

    got = with_aux(lax, jnp)(jnp.asarray(B))
    want = with_aux(jax.lax, jax.numpy)(B)
    close(got[0], want[0], rtol=1e-5)
    close(got[1]["n"], want[1]["n"], rtol=1e-5)


def test_custom_linear_solve_errors_like_jax():
    def no_transpose(lax_: Any, np_: Any) -> Any:
        return lambda b: np_.sum(lax_.custom_linear_solve(lambda v: 2 * v, b, lambda m, y: y / 2))

    raises_like(
        lambda: webjax.grad(no_transpose(lax, jnp))(jnp.ones(2)),
        lambda: jax.grad(no_transpose(jax.lax, jax.numpy))(np.ones(2, np.float32)),
    )
    raises_like(
        lambda: lax.custom_linear_solve(lambda v: v[:1], jnp.ones(2), lambda m, y: y),
        lambda: jax.lax.custom_linear_solve(lambda v: v[:1], np.ones(2), lambda m, y: y),
    )
    raises_like(
        lambda: lax.custom_linear_solve(lambda v: v, jnp.ones(2), lambda m, y: (y,)),
        lambda: jax.lax.custom_linear_solve(lambda v: v, np.ones(2), lambda m, y: (y,)),
    )


# ---- lax.custom_root ---------------------------------------------------------------------------
def _newton_sqrt(lax_: Any) -> Any:
    def sqrt(a):
        def f(x):
            return x**2 - a

        def solve(f, x0):
            return lax_.fori_loop(0, 20, lambda i, x: x - f(x) / (2 * x), x0)

        return lax_.custom_root(f, 1.0, solve, lambda g, y: y / g(1.0))

    return sqrt


def test_custom_root(device):
    w, j = _newton_sqrt(lax), _newton_sqrt(jax.lax)
    close(w(jnp.float32(2.0)), j(np.float32(2.0)), rtol=1e-6)
    close(webjax.grad(w)(jnp.float32(2.0)), jax.grad(j)(np.float32(2.0)), rtol=1e-5)
    close(webjax.grad(webjax.grad(w))(2.0), jax.grad(jax.grad(j))(2.0), rtol=1e-4)
    close(
        webjax.vmap(w)(jnp.arange(1.0, 4.0)),
        np.sqrt(np.arange(1.0, 4.0, dtype=np.float32)),
        rtol=1e-6,
    )
    close(webjax.jit(webjax.grad(w))(3.0), np.float32(0.5 / np.sqrt(3.0)), rtol=1e-5)
    check_grads(w, [np.float32(2.5)], order=1)


def test_custom_root_pytree_and_errors():
    def fixed_point(lax_: Any, np_: Any) -> Any:
        def f(p):
            def g(t):
                return {"u": t["u"] - np_.cos(p * t["v"]), "v": t["v"] - 0.5 * t["u"]}

            def solve(g, t0):
                return lax_.fori_loop(
                    0, 60, lambda i, t: {"u": np_.cos(p * t["v"]), "v": 0.5 * t["u"]}, t0
                )

            def tangent_solve(lin, y):
                # the 2x2 Jacobian's columns from the linearization, solved densely
                e = [lin({"u": 1.0, "v": 0.0}), lin({"u": 0.0, "v": 1.0})]
                jac = np_.stack([np_.stack([c["u"], c["v"]]) for c in e], axis=1)
                s = np_.linalg.solve(jac, np_.stack([y["u"], y["v"]]))
                return {"u": s[0], "v": s[1]}

            r = lax_.custom_root(g, {"u": 0.0, "v": 0.0}, solve, tangent_solve)
            return r["u"] + 2 * r["v"]

        return f

    w, j = fixed_point(lax, jnp), fixed_point(jax.lax, jax.numpy)
    close(w(jnp.float32(0.7)), j(np.float32(0.7)), rtol=1e-5)
    close(webjax.grad(w)(jnp.float32(0.7)), jax.grad(j)(np.float32(0.7)), rtol=1e-4)
    raises_like(
        lambda: lax.custom_root(lambda x: (x, x), 1.0, lambda f, x: x, lambda g, y: y),
        lambda: jax.lax.custom_root(lambda x: (x, x), 1.0, lambda f, x: x, lambda g, y: y),
    )
