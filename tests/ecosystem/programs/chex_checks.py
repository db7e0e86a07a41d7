"""chex: assertions (passing and failing), chex.dataclass through jit/grad/tree_map, and
assert_max_traces."""

import chex
import jax
import jax.numpy as jnp
import numpy as np


@chex.dataclass
class Params:
    w: chex.Array
    b: chex.Array


def outcome(fn) -> str:
    try:
        fn()
    except AssertionError:
        return "AssertionError"
    return "ok"


def main() -> dict:
    x = jnp.arange(6.0).reshape(2, 3)
    checks = {
        "shape_ok": outcome(lambda: chex.assert_shape(x, (2, 3))),
        "shape_bad": outcome(lambda: chex.assert_shape(x, (3, 2))),
        "shape_wild": outcome(lambda: chex.assert_shape(x, (None, 3))),
        "rank": outcome(lambda: chex.assert_rank(x, 2)),
        "rank_bad": outcome(lambda: chex.assert_rank(x, 1)),
        "type": outcome(lambda: chex.assert_type(x, float)),
        "type_bad": outcome(lambda: chex.assert_type(x, int)),
        "equal_shape": outcome(lambda: chex.assert_equal_shape([x, x + 1])),
        "close": outcome(lambda: chex.assert_trees_all_close({"a": x}, {"a": x * (1 + 1e-7)})),
        "close_bad": outcome(lambda: chex.assert_trees_all_close({"a": x}, {"a": x + 1.0})),
        "finite": outcome(lambda: chex.assert_tree_all_finite({"a": x})),
        "finite_bad": outcome(lambda: chex.assert_tree_all_finite({"a": x / 0.0})),
        "scalar": outcome(lambda: chex.assert_scalar_positive(1.0)),
        "axis_dim": outcome(lambda: chex.assert_axis_dimension(x, 1, 3)),
        "structs": outcome(lambda: chex.assert_trees_all_equal_structs([x, (x,)], [x, (x,)])),
        "devices": outcome(lambda: chex.assert_devices_available(1, "cpu", backend="cpu")),
    }

    params = Params(w=jnp.ones((3, 2)), b=jnp.zeros(2))

    @jax.jit
    def loss(p: Params, x: jax.Array) -> jax.Array:
        return jnp.sum(jnp.tanh(x @ p.w + p.b) ** 2)

    grads = jax.grad(loss)(params, x)
    doubled = jax.tree.map(lambda v: 2 * v, params)

    traces = []

    @jax.jit
    @chex.assert_max_traces(n=1)
    def once(v):
        traces.append(1)
        return v * 2

    once(x)
    once(x + 1)
    retrace = outcome(lambda: once(jnp.ones(4)))
    return {
        "checks": checks,
        "grad_w": grads.w,
        "grad_b": grads.b,
        "doubled_w": doubled.w,
        "replace": params.replace(b=jnp.ones(2)).b,
        "keys": sorted(params.keys()),
        "retrace": retrace,
        "np": np.float32(loss(params, x)).item(),
    }
