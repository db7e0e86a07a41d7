"""`jax.scipy.optimize.minimize` (BFGS) against real JAX: results field by field, float64,
jit and vmap, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
import webjax.scipy.optimize as wo
from devices import has_float64
from jax_compare import close, raises_like

jax = pytest.importorskip("jax")
jjnp = jax.numpy
import jax.scipy.optimize as jo  # noqa: E402

R = np.random.RandomState(0)


def rosen(np_: Any) -> Any:
    return lambda x: np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def quartic(np_: Any) -> Any:
    a = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], np.float32)
    return lambda x, s: 0.5 * x @ (np_.asarray(a) @ x) - s * x.sum() + np_.sum(np_.cos(x))


OPT_CASES = {
    # converges (status 0) after 22 iterations
    "rosen3": (rosen, [1.3, 0.7, 0.8], (), {}),
    # JAX's line search fails in float32 from here (status 3: zoom failed)
    "rosen4": (rosen, [-1.2, 1.0, 0.5, -0.3], (), {}),
    # extra arguments, 2-norm stopping test
    "quartic": (quartic, [1.0, 2.0, 3.0], (1.0,), {"norm": 2, "gtol": 1e-4}),
    # stops at maxiter (status 1)
    "maxiter": (rosen, [1.3, 0.7, 0.8], (), {"maxiter": 4}),
}


def check_opt(got: Any, want: Any, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    assert type(got).__name__ == "OptimizeResults"
    assert got._fields == want._fields
    for k in ("success", "status", "nit", "nfev", "njev"):
        assert int(getattr(got, k)) == int(getattr(want, k)), k
        assert np.asarray(getattr(got, k)).dtype == np.asarray(getattr(want, k)).dtype, k
    for k in ("x", "fun", "jac"):
        close(getattr(got, k), getattr(want, k), rtol, atol)
    # the inverse Hessian estimate divides by y.s, tiny near convergence: float32 rounding shows
    close(got.hess_inv, want.hess_inv, max(rtol, 1e-3), max(atol, 1e-3))


@pytest.mark.parametrize("case", sorted(OPT_CASES))
def test_minimize_bfgs(device: Any, case: str) -> None:
    if device.platform in ("webgpu", "webgl") and case != "quartic":
        pytest.skip(
            f"slow on Mesa's software GPUs (every line-search step is a read and new kernels); "
            f"quartic covers {device.platform}"
        )
    fn, x0, args, options = OPT_CASES[case]
    x0 = np.array(x0, np.float32)
    got = wo.minimize(fn(jnp), jnp.asarray(x0), args, method="BFGS", options=options)
    want = jo.minimize(fn(jjnp), jjnp.asarray(x0), args, method="BFGS", options=options)
    check_opt(got, want, atol=1e-4 if case == "rosen4" else 1e-5)


def test_minimize_x64(device: Any) -> None:
    if not has_float64(device):
        pytest.skip(f"no float64 on {device.platform}")
    x0 = np.array([1.3, 0.7, 0.8])
    with webjax.enable_x64(True), jax.enable_x64(True):
        got = wo.minimize(rosen(jnp), jnp.asarray(x0), method="bfgs")
        want = jo.minimize(rosen(jjnp), jjnp.asarray(x0), method="bfgs")
        check_opt(got, want, 1e-9, 1e-12)
        assert np.asarray(got.x).dtype == np.float64


def test_minimize_jit_and_vmap(device: Any) -> None:
    if device.platform in ("webgpu", "webgl"):
        pytest.skip(f"slow on Mesa's software GPUs; test_minimize_bfgs covers {device.platform}")
    fn = quartic(jnp)
    x0 = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]], np.float32)
    s = np.array([1.0, 2.0], np.float32)

    opts = {"gtol": 1e-4}  # 1e-5 is at float32's noise level for the second problem

    def solve(x: Any, sv: Any) -> Any:
        return wo.minimize(fn, x, (sv,), method="BFGS", options=opts)

    eager = solve(jnp.asarray(x0[0]), jnp.asarray(s[0]))
    jitted = webjax.jit(solve)(jnp.asarray(x0[0]), jnp.asarray(s[0]))
    for k in eager._fields:
        np.testing.assert_array_equal(np.asarray(getattr(jitted, k)), np.asarray(getattr(eager, k)))
    batched = webjax.vmap(solve)(jnp.asarray(x0), jnp.asarray(s))
    jb = jax.vmap(lambda x, sv: jo.minimize(quartic(jjnp), x, (sv,), method="BFGS", options=opts))(
        x0, s
    )
    for i in range(2):
        one = solve(jnp.asarray(x0[i]), jnp.asarray(s[i]))
        close(batched.x[i], one.x, 1e-5, 1e-6)
        assert int(batched.nit[i]) == int(one.nit) == int(jb.nit[i])
        assert int(batched.nfev[i]) == int(one.nfev) == int(jb.nfev[i])


def test_minimize_errors() -> None:
    f, x0 = rosen(jnp), jnp.asarray([1.0, 2.0])
    g, y0 = rosen(jjnp), jjnp.asarray([1.0, 2.0])
    raises_like(
        lambda: wo.minimize(f, x0, [1], method="BFGS"),
        lambda: jo.minimize(g, y0, [1], method="BFGS"),
    )
    raises_like(
        lambda: wo.minimize(f, x0, method="Nelder-Mead"),
        lambda: jo.minimize(g, y0, method="Nelder-Mead"),
    )
    raises_like(
        lambda: wo.minimize(f, x0, method="BFGS", options={"bogus": 1}),
        lambda: jo.minimize(g, y0, method="BFGS", options={"bogus": 1}),
    )
    with pytest.raises(TypeError):
        wo.minimize(f, x0)  # method is keyword-only and required, as in JAX
