// The REPL's example menu: short programs, each runnable as it is.
export const EXAMPLES = [
  {
    name: "A tour: grad, vmap, jit",
    code: `import webjax as jax
import webjax.numpy as jnp

def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)

key = jax.random.key(0)
x = jax.random.normal(key, (8, 3))
y = jnp.ones(8)
w = jnp.zeros(3)

grad = jax.jit(jax.grad(loss))          # compiled gradient with respect to w
for step in range(50):
    w = w - 0.5 * grad(w, x, y)
print("loss:", loss(w, x, y))

# vmap: per-example gradients without a Python loop
per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
print(per_example(w, x[:, None, :], y[:, None]).shape)
w
`,
  },
  {
    name: "A plot",
    code: `import webjax.numpy as jnp
from webjax import display

x = jnp.linspace(0, 4 * jnp.pi, 200)
display.plot(jnp.stack([jnp.sin(x), jnp.cos(x) * jnp.exp(-x / 8)], axis=1), x,
             title="sin and a damped cos", labels=["sin", "damped cos"])
display.scatter(jnp.cos(x[::8]), jnp.sin(x[::8]) * 0.5, title="an ellipse")
`,
  },
  {
    name: "Mandelbrot (imshow)",
    code: `import webjax as jax
import webjax.numpy as jnp
from webjax import display

@jax.jit
def mandelbrot(cr, ci):
    def step(i, state):
        zr, zi, count = state
        zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
        return zr, zi, count + (zr * zr + zi * zi < 4)
    zeros = jnp.zeros_like(cr)
    return jax.lax.fori_loop(0, 48, step, (zeros, zeros, zeros))[2]

cr, ci = jnp.meshgrid(jnp.linspace(-2.2, 0.8, 240), jnp.linspace(-1.2, 1.2, 192))
display.imshow(mandelbrot(cr, ci), cmap="magma", title="Mandelbrot set, 48 iterations")
`,
  },
  {
    name: "Digits: train an MLP (jit, grad)",
    code: `import csv, gzip, io
import webjax as jax
import webjax.numpy as jnp
from webjax import display, safetensors
from pyodide.http import pyfetch

# scikit-learn's 8x8 handwritten digits, copied onto this site by the build
raw = gzip.decompress(await (await pyfetch("demos/digits.csv.gz")).bytes()).decode()
rows = [[int(v) for v in r] for r in csv.reader(io.StringIO(raw)) if r]
x = jnp.array([r[:64] for r in rows], jnp.float32) / 16
y = jnp.array([r[64] for r in rows])
perm = jax.random.permutation(jax.random.key(42), len(rows))
x, y = x[perm], y[perm]
xtr, ytr, xte, yte = x[:-360], y[:-360], x[-360:], y[-360:]

def init(key, sizes=(64, 64, 10)):
    ks = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n)) * jnp.sqrt(2 / m), jnp.zeros(n))
            for k, m, n in zip(ks, sizes[:-1], sizes[1:])]

def predict(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b

def loss(params, x, y):
    logp = jax.nn.log_softmax(predict(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

@jax.jit
def step(params, x, y, lr=0.5):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), value

params, losses = init(jax.random.key(0)), []
for i in range(200):
    params, value = step(params, xtr, ytr)   # full-batch gradient descent
    losses.append(float(value))
    if i % 50 == 0:
        print(f"step {i}: loss {losses[-1]:.3f}")
display.plot(jnp.array(losses), title="training loss", xlabel="step")
accuracy = lambda p: float(jnp.mean(jnp.argmax(predict(p, xte), 1) == yte))
print("test accuracy:", accuracy(params))

blob = safetensors.save({f"layer{i}": {"w": w, "b": b} for i, (w, b) in enumerate(params)})
back = safetensors.load(blob)   # names like "layer0.w"
reloaded = [(back[f"layer{i}.w"], back[f"layer{i}.b"]) for i in range(len(params))]
print(f"reloaded from {len(blob)} bytes of safetensors:", accuracy(reloaded))
`,
  },
  {
    name: "Pendulums (lax.scan)",
    code: `from functools import partial
import webjax as jax
import webjax.numpy as jnp
from webjax import display

def deriv(s):
    theta, omega = s
    return jnp.stack([omega, -9.81 * jnp.sin(theta)])

def rk4(s, dt=0.02):
    k1 = deriv(s); k2 = deriv(s + dt / 2 * k1); k3 = deriv(s + dt / 2 * k2); k4 = deriv(s + dt * k3)
    return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

@partial(jax.jit, static_argnums=1)
def simulate(theta0, steps):
    def step(s, _):
        s = rk4(s)
        return s, s
    return jax.lax.scan(step, jnp.stack([theta0, jnp.zeros_like(theta0)]), None, length=steps)[1]

theta0 = jnp.array([0.3, 1.0, 2.0, 3.1])
traj = simulate(theta0, 200)                     # (steps, 2, pendulums)
display.plot(traj[:, 0, :], jnp.arange(1, 201) * 0.02, title="angle over time",
             labels=[f"{float(a)} rad" for a in theta0], xlabel="time (s)")
display.scatter(traj[:, 0, :].reshape(-1), traj[:, 1, :].reshape(-1), title="phase portrait")
`,
  },
  {
    name: "Benchmark: matmul GFLOP/s",
    code: `import time
import webjax as jax
import webjax.numpy as jnp

f = jax.jit(jnp.matmul)
for n in (128, 256, 512):
    a = jax.random.uniform(jax.random.key(0), (n, n))
    b = jax.random.uniform(jax.random.key(1), (n, n))
    await jax.block_until_ready_async(f(a, b))   # compile and warm up
    times = []
    for _ in range(5):
        t = time.perf_counter()
        await jax.block_until_ready_async(f(a, b))
        times.append(time.perf_counter() - t)
    best = min(times)
    print(f"n={n}: {2 * n**3 / best / 1e9:.2f} GFLOP/s ({best * 1e3:.2f} ms) on {a.devices()}")
`,
  },
  {
    name: "A table",
    code: `import webjax as jax
import webjax.numpy as jnp
from webjax import display

x = jnp.linspace(0, 1, 5)
display.table({"x": x, "exp(x)": jnp.exp(x), "grad of sin": jax.vmap(jax.grad(jnp.sin))(x)})
`,
  },
  {
    name: "A long loop (press Stop)",
    code: `import time
n = 0
while True:
    n += 1
    if n % 2_000_000 == 0:
        print("still counting:", n)
`,
  },
];
