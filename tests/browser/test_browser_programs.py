"""Real JAX programs (transformations, control flow, custom derivatives, training steps) inside
Pyodide, compared with real JAX run natively in the test process.

Each program is source text defining `result`, run with `import jax` bound to webjax (through
`install_as_jax`) in the page, and with real JAX natively; results are compared as nested
lists of floats with a float32 tolerance.
"""

from __future__ import annotations

import json
import math

import pytest

PRELUDE = """
import json
def _tolist(x):
    if isinstance(x, (list, tuple)):
        return [_tolist(v) for v in x]
    if isinstance(x, dict):
        return {k: _tolist(v) for k, v in sorted(x.items())}
    if hasattr(x, "tolist"):
        return _tolist(x.tolist())
    if isinstance(x, complex):
        return {"re": x.real, "im": x.imag}
    return x
"""

PROGRAMS = {
    "grad_tanh_chain": """
f = lambda x: jnp.tanh(jnp.tanh(jnp.tanh(x) * 2.0) + x)
result = [jax.grad(f)(0.3), jax.grad(jax.grad(f))(0.3), jax.jit(jax.grad(f))(-1.2)]
""",
    "per_example_grads": """
def loss(w, x, y):
    return (jnp.dot(x, w) - y) ** 2
w = jnp.array([0.5, -0.25, 1.0])
xs = jnp.arange(12.0).reshape(4, 3) / 10.0
ys = jnp.array([0.1, 0.2, 0.3, 0.4])
result = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
""",
    "hessian": """
f = lambda v: jnp.sum(jnp.sin(v) * v ** 2) + v[0] * v[1]
result = jax.hessian(f)(jnp.array([0.1, 0.2, 0.3]))
""",
    "scan_rnn": """
def rnn(params, xs):
    W, b = params
    def step(h, x):
        h = jnp.tanh(W @ h + x + b)
        return h, h.sum()
    h, ys = jax.lax.scan(step, jnp.zeros(2), xs)
    return ys.sum() + h.sum()
params = (jnp.array([[0.5, -0.2], [0.1, 0.3]]), jnp.array([0.05, -0.1]))
xs = jnp.linspace(0.0, 1.0, 10).reshape(5, 2)
g = jax.grad(rnn)(params, xs)
result = [rnn(params, xs), g[0], g[1]]
""",
    "while_newton": """
def newton_sqrt(a):
    def cond(c):
        x, i = c
        return (jnp.abs(x * x - a) > 1e-6) & (i < 50)
    def body(c):
        x, i = c
        return (x - (x * x - a) / (2 * x), i + 1)
    return jax.lax.while_loop(cond, body, (a, 0))[0]
result = [newton_sqrt(2.0), jax.jit(newton_sqrt)(9.0),
          jax.vmap(newton_sqrt)(jnp.array([4.0, 16.0])), jax.jvp(newton_sqrt, (4.0,), (1.0,))[1]]
""",
    "custom_jvp_softplus": """
@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))
@softplus.defjvp
def softplus_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return softplus(x), t * jax.nn.sigmoid(x)
result = [softplus(1.5), jax.grad(softplus)(1.5), jax.vmap(jax.grad(softplus))(jnp.arange(3.0))]
""",
    "custom_vjp_clip": """
@jax.custom_vjp
def clip_gradient(x):
    return x
def fwd(x):
    return x, None
def bwd(_, g):
    return (jnp.clip(g, -0.5, 0.5),)
clip_gradient.defvjp(fwd, bwd)
f = lambda x: jnp.sum(clip_gradient(x) * jnp.array([3.0, 0.2, -2.0]))
result = [jax.grad(f)(jnp.ones(3)), jax.jit(jax.grad(f))(jnp.ones(3))]
""",
    "jit_sgd_pytree": """
def predict(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]
def loss(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)
@jax.jit
def step(params, x, y):
    l, g = jax.value_and_grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g), l
params = {"w1": jnp.arange(8.0).reshape(4, 2) / 10 - 0.3, "b1": jnp.zeros(2),
          "w2": jnp.array([[0.3], [-0.2]]), "b2": jnp.zeros(1)}
x = jnp.arange(12.0).reshape(3, 4) / 12.0
y = jnp.array([[0.5], [0.0], [-0.5]])
losses = []
for _ in range(4):
    params, l = step(params, x, y)
    losses.append(l)
result = [losses, params]
""",
    "cond_switch_fori": """
f = lambda x: jax.lax.cond(x > 0, lambda v: v * v, lambda v: -v, x)
g = lambda n, x: jax.lax.fori_loop(0, n, lambda i, acc: acc * x + i, 1.0)
result = [jax.grad(f)(3.0), jax.grad(f)(-2.0), jax.lax.switch(2, [jnp.sin, jnp.cos, jnp.tan], 0.5),
          jax.grad(g, argnums=1)(4, 0.7), jax.jit(g, static_argnums=0)(3, 2.0)]
""",
    "indexing_and_reductions": """
x = jnp.arange(24.0).reshape(2, 3, 4)
result = [x[1, ::-1, 1:3], x[..., 2].max(axis=-1), x.at[0, 1].add(10.0)[0],
          jnp.argmax(x.reshape(-1)), jnp.sort(jnp.array([3.0, -1.0, 2.0])),
          jax.nn.softmax(jnp.array([1.0, 2.0, 3.0])), jnp.where(x[0] > 5, x[0], 0.0)]
""",
    "linalg": """
a = jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, -0.2], [0.5, -0.2, 2.0]])
b = jnp.array([1.0, -2.0, 0.5])
w = jnp.linalg.eigh(a)[0]
s = jnp.linalg.svd(a + jnp.eye(3) * 0.1 - 0.3, compute_uv=False)
result = [jnp.linalg.solve(a, b), jnp.linalg.cholesky(a), jnp.linalg.det(a), w, s,
          jax.grad(lambda m: jnp.linalg.slogdet(m)[1])(a),
          jax.jit(jnp.linalg.inv)(a), jax.scipy.linalg.solve_triangular(a, b, lower=True)]
""",
    "sort_scatter_random_donate": """
k = jax.random.PRNGKey(7)
x = jax.random.normal(k, (600,))
idx = jax.random.randint(jax.random.PRNGKey(1), (3000,), 0, 50)
counts = jnp.zeros(50).at[idx].add(1.0)
step = jax.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)
p = jnp.ones(4)
for _ in range(3):
    p = step(p, jnp.arange(4.0))
result = [jnp.argsort(x)[:20], jnp.sort(x)[-5:], jax.lax.top_k(x, 4)[1], counts,
          jax.random.uniform(k, (5,)), p, jnp.zeros(5).at[jnp.array([1, 9, -1])].set(2.0)]
""",
    "complex_numbers": """
z = jnp.array([1 + 2j, -0.5 + 0.25j, 3 - 4j])
w = jnp.exp(1j * jnp.linspace(0.0, 3.0, 3)).astype(jnp.complex64)
m = jnp.outer(z, w) + jnp.eye(3)
loss = lambda v: jnp.sum(jnp.abs(m @ v) ** 2).real
result = [z * w / (1 - 1j), jnp.sqrt(z), jnp.log(z), jnp.abs(z), jnp.angle(z), m @ w,
          jax.grad(loss)(z), jax.grad(lambda v: jnp.sin(v) * v, holomorphic=True)(2.0 + 1j),
          jax.jit(lambda a: (a.real, a.imag, a.conj()))(z), jnp.sum(z), jnp.mean(z * z)]
""",
    "scipy_minimize_map_coordinates_convolve": """
from jax.scipy.ndimage import map_coordinates
from jax.scipy.optimize import minimize
from jax.scipy.signal import convolve
rosen = lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
r = minimize(rosen, jnp.array([1.5, 1.5]), method="BFGS", options={"gtol": 1e-4})
img = jnp.arange(20.0).reshape(4, 5) / 7.0
coords = jnp.array([[0.5, 2.25, 3.0, -0.5], [1.5, 0.75, 4.5, 2.0]])
warp = lambda s: map_coordinates(img * s, [coords[0], coords[1] * s], order=1, mode="nearest")
sig = jnp.sin(jnp.linspace(0.0, 3.0, 12))
k = jnp.array([0.25, 0.5, 0.25])
result = [r.x, r.fun, r.nit, r.nfev, r.njev, r.success, r.status,
          map_coordinates(img, coords, order=1), map_coordinates(img, coords, order=0, mode="wrap"),
          jax.grad(lambda s: warp(s).sum())(1.1), convolve(sig, k, mode="same"),
          jax.grad(lambda kk: (convolve(sig, kk) ** 2).sum())(k)]
""",
    "stax_adam_odeint": """
from jax.example_libraries import optimizers, stax
from jax.experimental.ode import odeint
init, apply = stax.serial(stax.Dense(8), stax.Tanh, stax.Dense(2))
out_shape, params = init(jax.random.PRNGKey(0), (-1, 3))
x = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)
y = jnp.array([[0.5, -0.5], [0.0, 1.0], [1.0, 0.0], [-0.5, 0.5]])
opt_init, opt_update, get_params = optimizers.adam(0.05)
loss = lambda p: jnp.mean((apply(p, x) - y) ** 2)
step = jax.jit(lambda i, s: (opt_update(i, jax.grad(loss)(get_params(s)), s), loss(get_params(s))))
s = opt_init(params)
losses = []
for i in range(4):
    s, l = step(i, s)
    losses.append(l)
f = lambda z, t, k: jnp.stack([z[1], -k * jnp.sin(z[0])])
ts = jnp.linspace(0.0, 2.0, 5)
sol = lambda k: odeint(f, jnp.array([1.0, 0.0]), ts, k, rtol=1e-6, atol=1e-6)
result = [list(out_shape), losses, get_params(s), sol(4.0), jax.grad(lambda k: sol(k)[-1, 0])(4.0)]
""",
}


def _close(a, b, tol=2e-5):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= tol * max(1.0, abs(a), abs(b))
    return a == b


def _native(name):
    jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed")
    ns = {"jax": jax, "jnp": jax.numpy}
    exec(PRELUDE + PROGRAMS[name] + "\nout = json.dumps(_tolist(result))", ns)
    return json.loads(ns["out"])


@pytest.mark.browser
@pytest.mark.parametrize("platform", ["default", "webgl"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_in_pyodide_matches_jax(webjax_page, name, platform):
    """On the default device (wasm), and with jax_platforms set to webgl (the GPU device that
    is everywhere a browser draws)."""
    expected = _native(name)
    chosen = "" if platform == "default" else platform
    code = (
        "import webjax\nwebjax.install_as_jax()\nimport jax\nimport jax.numpy as jnp\n"
        f"jax.config.update('jax_platforms', {chosen!r})\n"
        "try:\n"
        + "".join("    " + line + "\n" for line in (PRELUDE + PROGRAMS[name]).splitlines())
        + "    placed = str(jnp.zeros(()).device.platform)\n"
        "finally:\n    jax.config.update('jax_platforms', '')\n"
        "json.dumps([_tolist(result), placed])"
    )
    got, placed = json.loads(webjax_page.run_py(code))
    assert placed == (platform if platform != "default" else "wasm")
    assert _close(got, expected), f"{name} on {platform}:\n  pyodide: {got}\n  jax:     {expected}"
