"""Optax optimizers, schedules and wrappers on a small logistic regression, each for a few
jitted steps."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def main() -> dict:
    data = np.random.default_rng(4)
    x = jnp.asarray(data.normal(size=(64, 5)).astype(np.float32))
    y = jnp.asarray((data.normal(size=64) > 0).astype(np.float32))
    params = {"w": jnp.zeros(5), "b": jnp.zeros(())}

    def loss(p):
        return optax.sigmoid_binary_cross_entropy(x @ p["w"] + p["b"], y).mean()

    schedule = optax.warmup_cosine_decay_schedule(0.0, 0.1, 2, 10)
    optimizers = {
        "sgd": optax.sgd(0.1, momentum=0.9, nesterov=True),
        "adam": optax.adam(schedule),
        "adamw": optax.adamw(0.05, weight_decay=0.1),
        "lion": optax.lion(0.01),
        "rmsprop": optax.rmsprop(0.01, centered=True),
        "adagrad": optax.adagrad(0.1),
        "lamb": optax.lamb(0.01),
        "chain": optax.chain(
            optax.clip_by_global_norm(0.5),
            optax.scale_by_adam(),
            optax.scale_by_schedule(schedule),
            optax.scale(-1.0),
        ),
        "accumulate": optax.MultiSteps(optax.adam(0.1), every_k_schedule=2),
        "inject": optax.inject_hyperparams(optax.adam)(learning_rate=0.05),
    }

    def make_step(tx):
        @jax.jit
        def step(p, s):
            value, grads = jax.value_and_grad(loss)(p)
            updates, s = tx.update(grads, s, p)
            return optax.apply_updates(p, updates), s, value

        return step

    out = {}
    for name, tx in optimizers.items():
        step, state, p = make_step(tx), tx.init(params), params
        values = []
        for _ in range(6):
            p, state, value = step(p, state)
            values.append(value)
        out[name] = {"loss": jnp.stack(values), "params": p}
    out["global_norm"] = optax.global_norm(params | {"w": jnp.arange(5.0)})
    out["tree_add"] = optax.tree_utils.tree_add(params, params)
    return out
