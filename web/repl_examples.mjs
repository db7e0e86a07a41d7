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
