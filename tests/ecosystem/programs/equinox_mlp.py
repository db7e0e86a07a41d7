"""An Equinox MLP with filter_jit, filter_grad, filter_vmap, partition/combine and an optax step."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax


def main() -> dict:
    data = np.random.default_rng(3)
    x = jnp.asarray(data.normal(size=(20, 4)).astype(np.float32))
    y = jnp.asarray(np.sin(data.normal(size=(20, 2))).astype(np.float32))
    model = eqx.nn.MLP(
        4, 2, width_size=12, depth=2, activation=jax.nn.softplus, key=jax.random.key(42)
    )
    optim = optax.adam(1e-2)
    opt_state = optim.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_grad
    def grad_loss(model, x, y):
        pred = eqx.filter_vmap(model)(x)
        return jnp.mean((pred - y) ** 2)

    @eqx.filter_jit
    def step(model, opt_state, x, y):
        grads = grad_loss(model, x, y)
        updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), opt_state

    for _ in range(5):
        model, opt_state = step(model, opt_state, x, y)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    rebuilt = eqx.combine(params, static)
    return {
        "pred": jax.vmap(rebuilt)(x),
        "loss": jnp.mean((jax.vmap(model)(x) - y) ** 2),
        "leaves": jax.tree.leaves(params),
        "tree_equal": bool(eqx.tree_equal(model, rebuilt)),
    }
