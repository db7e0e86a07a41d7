"""A Flax NNX CNN (Conv, BatchNorm, pooling, Dropout) trained for a few SGD steps, then run in
eval mode."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class CNN(nnx.Module):
    def __init__(self, *, rngs: nnx.Rngs) -> None:
        self.conv1 = nnx.Conv(1, 4, kernel_size=(3, 3), rngs=rngs)
        self.bn = nnx.BatchNorm(4, rngs=rngs)
        self.conv2 = nnx.Conv(4, 8, kernel_size=(3, 3), padding="VALID", rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)
        self.head = nnx.Linear(8, 10, rngs=rngs)
        self.pool = partial(nnx.avg_pool, window_shape=(2, 2), strides=(2, 2))

    def __call__(self, x: jax.Array) -> jax.Array:
        x = self.pool(nnx.relu(self.bn(self.conv1(x))))
        x = nnx.relu(self.conv2(x))
        x = x.mean(axis=(1, 2))
        return self.head(self.dropout(x))


def main() -> dict:
    data = np.random.default_rng(1)
    x = jnp.asarray(data.normal(size=(8, 10, 10, 1)).astype(np.float32))
    y = jnp.asarray(data.integers(0, 10, size=8).astype(np.int32))
    model = CNN(rngs=nnx.Rngs(0))
    model.train()  # dropout on (its masks come from the Rngs' key), batch statistics updated
    optimizer = nnx.Optimizer(model, optax.sgd(0.1, momentum=0.9), wrt=nnx.Param)

    @nnx.jit
    def step(model: CNN, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
        def loss_fn(model: CNN) -> jax.Array:
            return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    losses = [step(model, optimizer, x, y) for _ in range(3)]
    model.eval()
    return {
        "losses": jnp.stack(losses),
        "eval_logits": model(x),
        "batch_stats": [model.bn.mean.value, model.bn.var.value],
    }
