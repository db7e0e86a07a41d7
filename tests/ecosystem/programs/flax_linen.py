"""A Flax linen module: init, apply with mutable batch stats, jax.grad and an optax update."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class Net(nn.Module):
    features: int = 6

    @nn.compact
    def __call__(self, x: jax.Array, train: bool) -> jax.Array:
        # no bias before the batch norm: it would cancel, leaving a gradient of pure rounding
        # noise that Adam's normalisation blows up to full steps of either sign
        x = nn.Dense(self.features, use_bias=False)(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        x = nn.tanh(x)
        x = nn.Dense(self.features)(x)
        return nn.Dense(1)(nn.swish(x))[:, 0]


def main() -> dict:
    data = np.random.default_rng(2)
    x = jnp.asarray(data.normal(size=(16, 5)).astype(np.float32))
    y = jnp.asarray(data.normal(size=16).astype(np.float32))
    net = Net()
    variables = net.init(jax.random.key(0), x, train=False)
    params, stats = variables["params"], variables["batch_stats"]
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(3e-2, weight_decay=1e-3))
    opt_state = tx.init(params)

    @jax.jit
    def step(params, stats, opt_state):
        def loss_fn(params):
            pred, updates = net.apply(
                {"params": params, "batch_stats": stats}, x, train=True, mutable=["batch_stats"]
            )
            return jnp.mean((pred - y) ** 2), updates["batch_stats"]

        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), stats, opt_state, loss

    losses = []
    for _ in range(4):
        params, stats, opt_state, loss = step(params, stats, opt_state)
        losses.append(loss)
    return {
        "losses": jnp.stack(losses),
        "eval": net.apply({"params": params, "batch_stats": stats}, x, train=False),
        "param_shapes": jax.tree.map(jnp.shape, params),
    }
