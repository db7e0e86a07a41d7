"""`jax.example_libraries.optimizers`: first-order optimizers as `(init_fun, update_fun,
get_params)` triples.

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, grads, state)
    params = get_params(state)

Each optimizer is written for one array (`init(x0) -> state`, `update(i, g, state) -> state`,
`get_params(state) -> x`); the `optimizer` decorator lifts it to pytrees of parameters. The
lifted state is an `OptimizerState` (a pytree: its leaves are the per-array states' leaves), so
it passes through `jit`, `grad`, `vmap` and `lax` loops. Step sizes are numbers or schedules
(functions of the step index); the schedules here compute in Python arithmetic when the step is
a Python number and in jnp when it is traced, as JAX's do, so results agree with JAX's to
float32 rounding.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

from .. import numpy as jnp
from ..tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

__all__ = [
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]

# The state of a lifted optimizer: per parameter leaf, the flat leaves of its state
# (`packed_state`), the parameters' tree (`tree_def`) and each state's tree (`subtree_defs`).
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]),
)

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_each(trees: list[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    pairs = [tree_flatten(t) for t in trees]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Decorator: turn a maker of array-level `(init, update, get_params)` functions into a
    maker of pytree-level ones, whose state is an `OptimizerState`."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Any) -> OptimizerState:
            leaves, tree = tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in leaves])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Any, grad_tree: Any, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grads, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {grad_tree_def}."
                )
            states = [tree_unflatten(s, flat) for s, flat in zip(subtrees, states_flat)]
            new_flat, new_subtrees = _flatten_each([update(i, g, s) for g, s in zip(grads, states)])
            for before, after in zip(subtrees, new_subtrees):
                if after != before:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {before} and output {after}."
                    )
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Any:
            states_flat, tree, subtrees = opt_state
            params = [get_params(tree_unflatten(s, flat)) for s, flat in zip(subtrees, states_flat)]
            return tree_unflatten(tree, params)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ---- optimizers ------------------------------------------------------------------------------


@optimizer
def sgd(step_size: Any) -> Any:
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0

    def update(i: Any, g: Any, x: Any) -> Any:
        return x - lr(i) * g

    def get_params(x: Any) -> Any:
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Any, mass: float) -> Any:
    """SGD with (heavy-ball) momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, v = state
        v = mass * v + g
        return x - lr(i) * v, v

    def get_params(state: Any) -> Any:
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size: Any, mass: float) -> Any:
    """SGD with Nesterov momentum: v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, v = state
        v = mass * v + g
        return x - lr(i) * (mass * v + g), v

    def get_params(state: Any) -> Any:
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size: Any, momentum: float = 0.9) -> Any:
    """Adagrad (Duchi et al. 2011) with momentum on the normalized gradient."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv_root = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_root) + momentum * m
        return x - lr(i) * m, g_sq, m

    def get_params(state: Any) -> Any:
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size: Any, gamma: float = 0.9, eps: float = 1e-8) -> Any:
    """RMSProp: a decaying average of squared gradients normalizes the step."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, avg_sq = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        return x - lr(i) * g / jnp.sqrt(avg_sq + eps), avg_sq

    def get_params(state: Any) -> Any:
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(
    step_size: Any, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> Any:
    """RMSProp with momentum on the normalized step."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + lr(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    def get_params(state: Any) -> Any:
        return state[0]

    return init, update, get_params


@optimizer
def adam(step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Any:
    """Adam (Kingma & Ba 2015) with bias-corrected first and second moment estimates."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - lr(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    def get_params(state: Any) -> Any:
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Any:
    """AdaMax: Adam with the infinity norm in place of the second moment."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        scale = lr(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - scale * m / (u + eps), m, u

    def get_params(state: Any) -> Any:
        return state[0]

    return init, update, get_params


@optimizer
def sm3(step_size: Any, momentum: float = 0.9) -> Any:
    """SM3 (Anil et al. 2019): one accumulator vector per axis instead of a full second moment.

    The state keeps the parameter's original shape (its dims are pytree leaves, as in JAX);
    scalars are handled as shape (1,)."""
    lr = make_schedule(step_size)

    def along(ndim: int, v: Any, axis: int) -> Any:
        # v (one axis' accumulator) viewed with `ndim` dims, its entries along `axis`
        return jnp.reshape(v, tuple(-1 if a == axis else 1 for a in range(ndim)))

    def init(x0: Any) -> Any:
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, vs, shape = state
        nu = functools.reduce(jnp.minimum, [along(g.ndim, v, a) for a, v in enumerate(vs)])
        accum = nu + jnp.square(g)
        inv_root = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_root) + momentum * m
        x = x - lr(i) * m
        others = lambda a: tuple(b for b in range(x.ndim) if b != a)
        vs = [accum.max(others(a)) for a in range(x.ndim)]
        return x, m, vs, shape

    def get_params(state: Any) -> Any:
        x, _, _, shape = state
        return x.reshape(shape)

    return init, update, get_params


# ---- schedules -------------------------------------------------------------------------------


def constant(step_size: Any) -> Schedule:
    """The schedule that always returns `step_size`."""

    def schedule(i: Any) -> Any:
        return step_size

    return schedule


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps)."""

    def schedule(i: Any) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(
    step_size: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False
) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps), with floor(i / decay_steps) when
    `staircase`."""
    if staircase:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))

    else:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(
    step_size: Any, decay_steps: Any, final_step_size: Any, power: float = 1.0
) -> Schedule:
    """From `step_size` to `final_step_size` over `decay_steps` steps as (1 - i / decay_steps) **
    power; constant afterwards."""

    def schedule(step_num: Any) -> Any:
        step_num = jnp.minimum(step_num, decay_steps)
        frac = (1 - step_num / decay_steps) ** power
        return frac * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """values[k] for boundaries[k-1] < i <= boundaries[k] (values[0] up to boundaries[0],
    values[-1] past boundaries[-1])."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i: Any) -> Any:
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: Any) -> Schedule:
    """A schedule as is; a scalar as a constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---- utilities -------------------------------------------------------------------------------


def l2_norm(tree: Any) -> Any:
    """The l2 norm of all the leaves of a pytree together (e.g. for weight decay)."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """Scale a pytree of gradients down to l2 norm `max_norm` when its norm exceeds it."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """A leaf of `unpack_optimizer_state`'s tree: holds one parameter's state subtree."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Any:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The parameters' tree with a `JoinPoint` holding each parameter's state in place of the
    parameter (for serialization)."""
    states_flat, tree_def, subtree_defs = opt_state
    return tree_unflatten(
        tree_def,
        [JoinPoint(tree_unflatten(s, flat)) for s, flat in zip(subtree_defs, states_flat)],
    )


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    assert all(isinstance(s, JoinPoint) for s in sentinels)
    states_flat, subtree_defs = _flatten_each([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)
