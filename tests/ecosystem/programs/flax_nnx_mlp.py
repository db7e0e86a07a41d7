"""A Flax NNX MLP classifier trained for a few Adam steps with nnx.jit and nnx.value_and_grad."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, din: int, dhidden: int, dout: int, *, rngs: nnx.Rngs) -> None:
        self.hidden = nnx.Linear(din, dhidden, rngs=rngs)
        self.norm = nnx.LayerNorm(dhidden, rngs=rngs)
        self.out = nnx.Linear(dhidden, dout, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.out(nnx.gelu(self.norm(self.hidden(x))))


def main() -> dict:
    data = np.random.default_rng(0)
    x = jnp.asarray(data.normal(size=(32, 8)).astype(np.float32))
    y = jnp.asarray(data.integers(0, 3, size=32).astype(np.int32))
    model = MLP(8, 16, 3, rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)

    @nnx.jit
    def step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
        def loss_fn(model: MLP) -> jax.Array:
            logits = model(x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    losses = [step(model, optimizer, x, y) for _ in range(5)]
    accuracy = (model(x).argmax(-1) == y).mean()
    _, state = nnx.split(model)
    return {
        "losses": jnp.stack(losses),
        "accuracy": accuracy,
        "params": jax.tree.leaves(state),
    }
