"""`jax.example_libraries.optimizers` and `stax` against real JAX running the same programs.

Each program is written once against a namespace of modules (`jax`, `jnp`, `optimizers`,
`stax`) and run with webjax's on every backend and with real JAX's natively: parameter
initialization (same keys: same draws), every optimizer training a small stax network for a
few jitted steps, the schedules, the layers' shapes and outputs, their gradients and vmap.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as wjnp
from webjax.example_libraries import optimizers as wopt
from webjax.example_libraries import stax as wstax

rjax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed")
from jax.example_libraries import optimizers as ropt  # noqa: E402
from jax.example_libraries import stax as rstax  # noqa: E402

W = SimpleNamespace(jax=webjax, jnp=wjnp, optimizers=wopt, stax=wstax)
J = SimpleNamespace(jax=rjax, jnp=rjax.numpy, optimizers=ropt, stax=rstax)


def leaves(tree: Any, ns: SimpleNamespace) -> list[np.ndarray]:
    return [np.asarray(x, dtype=np.float64) for x in ns.jax.tree_util.tree_leaves(tree)]


def close(got: Any, want: Any, tol: float = 2e-5) -> None:
    """Pytrees of arrays agree relative to each leaf's magnitude (float32 rounding)."""
    g, w = leaves(got, W), leaves(want, J)
    assert len(g) == len(w)
    for a, b in zip(g, w, strict=True):
        assert a.shape == b.shape, (a.shape, b.shape)
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale)


# ---- optimizers ------------------------------------------------------------------------------

OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "momentum": lambda o: o.momentum(0.1, 0.9),
    "nesterov": lambda o: o.nesterov(0.1, 0.9),
    "adagrad": lambda o: o.adagrad(0.1),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.01, momentum=0.8),
    "adam": lambda o: o.adam(0.01),
    "adamax": lambda o: o.adamax(0.02, b1=0.8),
    "sm3": lambda o: o.sm3(0.1),
    "sgd_exponential_decay": lambda o: o.sgd(o.exponential_decay(0.1, 2, 0.5)),
    "momentum_inverse_time": lambda o: o.momentum(o.inverse_time_decay(0.1, 2, 0.5), 0.5),
    "adam_staircase": lambda o: o.adam(o.inverse_time_decay(0.01, 2, 0.5, staircase=True)),
    "adam_polynomial": lambda o: o.adam(o.polynomial_decay(0.01, 3, 0.001, power=2.0)),
    "nesterov_piecewise": lambda o: o.nesterov(
        o.piecewise_constant([1, 3], [0.1, 0.05, 0.01]), 0.9
    ),
}


def train(ns: SimpleNamespace, make_opt: Any, steps: int = 4, jit: bool = True) -> Any:
    jax, jnp, stax = ns.jax, ns.jnp, ns.stax
    init, apply = stax.serial(
        stax.Dense(8), stax.Relu, stax.Dense(6), stax.Tanh, stax.Dense(3), stax.LogSoftmax
    )
    out_shape, params = init(jax.random.PRNGKey(0), (-1, 4))
    x = jnp.linspace(-1.0, 1.0, 20).reshape(5, 4)
    y = jax.nn.one_hot(jnp.array([0, 1, 2, 1, 0]), 3)

    def loss(p: Any) -> Any:
        return -jnp.mean(jnp.sum(apply(p, x) * y, axis=1))

    opt_init, opt_update, get_params = make_opt(ns.optimizers)

    def step(i: Any, state: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(get_params(state))
        return opt_update(i, grads, state), value

    if jit:
        step = jax.jit(step)
    state = opt_init(params)
    losses = []
    for i in range(steps):
        state, value = step(i, state)
        losses.append(value)
    return out_shape, params, losses, get_params(state)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_trains_like_jax(device: Any, name: str) -> None:
    jit = name != "sm3"  # sm3 keeps the parameter shape as int leaves: jit fails, in JAX too
    got = train(W, OPTIMIZERS[name], jit=jit)
    want = train(J, OPTIMIZERS[name], jit=jit)
    assert got[0] == want[0] == (-1, 3)
    close(got[1], want[1])  # initialization: the same draws from the same keys
    close(got[2], want[2])  # losses
    close(got[3], want[3])  # trained parameters


def test_jit_equals_eager(device: Any) -> None:
    for name in ("adam", "rmsprop_momentum"):
        eager = train(W, OPTIMIZERS[name], jit=False)
        jitted = train(W, OPTIMIZERS[name], jit=True)
        for a, b in zip(leaves(eager[2:], W), leaves(jitted[2:], W), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_sm3_under_jit_fails_as_in_jax() -> None:
    for ns in (W, J):
        opt_init, _, get_params = ns.optimizers.sm3(0.1)
        state = opt_init(ns.jnp.ones((2, 3)))
        with pytest.raises(TypeError):
            ns.jax.jit(get_params)(state)


def test_vmap_over_update(device: Any) -> None:
    """Per-example optimizer states: vmap of update over stacked parameters and gradients."""

    def prog(ns: SimpleNamespace) -> Any:
        jnp = ns.jnp
        opt_init, opt_update, get_params = ns.optimizers.adam(0.1)
        params = {"w": jnp.arange(6.0).reshape(3, 2) / 5, "b": jnp.array([[0.5], [-1.0], [2.0]])}
        grads = {
            "w": jnp.cos(jnp.arange(6.0)).reshape(3, 2),
            "b": jnp.array([[1.0], [0.0], [-3.0]]),
        }
        state = ns.jax.vmap(opt_init)(params)
        for i in range(3):
            state = ns.jax.vmap(opt_update, in_axes=(None, 0, 0))(i, grads, state)
        return get_params(state)

    close(prog(W), prog(J))


def test_schedules(device: Any) -> None:
    def prog(ns: SimpleNamespace) -> Any:
        o, jnp = ns.optimizers, ns.jnp
        scheds = [
            o.constant(0.3),
            o.exponential_decay(0.1, 3, 0.5),
            o.inverse_time_decay(0.1, 3, 0.5),
            o.inverse_time_decay(0.1, 3, 0.5, staircase=True),
            o.polynomial_decay(0.1, 5, 0.01),
            o.polynomial_decay(0.1, 5, 0.01, power=0.5),
            o.piecewise_constant([2, 5], [1.0, 0.5, 0.1]),
            o.make_schedule(0.25),
        ]
        python = [[s(i) for i in range(8)] for s in scheds]
        traced = [ns.jax.vmap(s)(jnp.arange(8)) for s in scheds[1:]]
        # (not power=0.5 under jit: XLA's CPU pow(0, 0.5) is NaN there, 0 eagerly)
        jitted = [ns.jax.jit(ns.jax.vmap(s))(jnp.arange(8)) for s in scheds[1:5] + scheds[6:]]
        return python, traced, jitted

    got, want = prog(W), prog(J)
    close(got, want, 1e-6)


def test_clip_grads_and_l2_norm(device: Any) -> None:
    def prog(ns: SimpleNamespace) -> Any:
        o, jnp = ns.optimizers, ns.jnp
        g = {"a": jnp.array([3.0, 4.0]), "b": (jnp.ones((2, 2)), jnp.array(-2.0))}
        return [o.l2_norm(g), o.clip_grads(g, 1.0), o.clip_grads(g, 100.0), o.l2_norm([])]

    close(prog(W), prog(J), 1e-6)


def test_optimizer_state_is_a_pytree(device: Any) -> None:
    opt_init, _, get_params = wopt.momentum(0.1, 0.9)
    params = {"w": wjnp.ones((2, 2)), "b": [wjnp.zeros(2), wjnp.array(1.0)]}
    state = opt_init(params)
    assert isinstance(state, wopt.OptimizerState)
    flat, tree = webjax.tree_util.tree_flatten(state)
    assert len(flat) == 6  # (x, velocity) for each of the 3 parameters
    rebuilt = webjax.tree_util.tree_unflatten(tree, flat)
    assert rebuilt.tree_def == state.tree_def and rebuilt.subtree_defs == state.subtree_defs
    # structure agrees with JAX's: the same leaves in the same order
    rstate = ropt.momentum(0.1, 0.9)[0](rjax.tree_util.tree_map(np.asarray, params))
    assert len(rjax.tree_util.tree_leaves(rstate)) == len(flat)
    # through jit and tree_map
    same = webjax.jit(lambda s: s)(state)
    close_tree = webjax.tree_util.tree_map(lambda a, b: a - b, same, state)
    assert all(float(wjnp.abs(x).max()) == 0.0 for x in webjax.tree_util.tree_leaves(close_tree))
    # pack/unpack round trip
    marked = wopt.unpack_optimizer_state(state)
    assert isinstance(marked["w"], wopt.JoinPoint)
    back = wopt.pack_optimizer_state(marked)
    assert back.tree_def == state.tree_def and back.subtree_defs == state.subtree_defs
    for a, b in zip(webjax.tree_util.tree_leaves(back), flat, strict=True):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert get_params(back)["b"][1].shape == ()


def test_optimizer_errors() -> None:
    for ns in (W, J):
        opt_init, opt_update, _ = ns.optimizers.sgd(0.1)
        state = opt_init({"a": ns.jnp.ones(2)})
        with pytest.raises(TypeError, match="did not match the parameter tree"):
            opt_update(0, {"b": ns.jnp.ones(2)}, state)
        with pytest.raises(TypeError):
            ns.optimizers.make_schedule(ns.jnp.ones(2))
        with pytest.raises(ValueError, match="must be sequences"):
            ns.optimizers.piecewise_constant(1.0, [1.0, 2.0])
        with pytest.raises(ValueError, match="one shorter"):
            ns.optimizers.piecewise_constant([1, 2], [1.0, 2.0])

    @wopt.optimizer
    def bad(step_size: float) -> Any:
        return (lambda x: (x, x), lambda i, g, s: (s[0],), lambda s: s[0])

    init, update, _ = bad(0.1)
    with pytest.raises(TypeError, match="did not match its input structure"):
        update(0, wjnp.ones(2), init(wjnp.ones(2)))


def test_optimizer_decorator(device: Any) -> None:
    """A user-defined array-level optimizer lifted to pytrees, as in JAX."""

    def prog(ns: SimpleNamespace) -> Any:
        @ns.optimizers.optimizer
        def signsgd(step_size: float) -> Any:
            return (lambda x: x, lambda i, g, x: x - step_size * ns.jnp.sign(g), lambda x: x)

        opt_init, opt_update, get_params = signsgd(0.5)
        state = opt_init((ns.jnp.array([1.0, -2.0]), {"k": ns.jnp.array(3.0)}))
        state = opt_update(0, (ns.jnp.array([0.3, -0.1]), {"k": ns.jnp.array(-1.0)}), state)
        return get_params(state)

    close(prog(W), prog(J), 0)


# ---- stax ------------------------------------------------------------------------------------


def image(ns: SimpleNamespace, shape: tuple[int, ...]) -> Any:
    n = int(np.prod(shape))
    return ns.jnp.sin(ns.jnp.arange(n, dtype=ns.jnp.float32) * 0.37).reshape(shape)


LAYERS = {
    "dense": (lambda s: s.Dense(5), (3, 4)),
    "dense_init": (
        lambda s: s.Dense(5, W_init=s.randn(0.5), b_init=s.zeros),
        (3, 4),
    ),
    "conv_valid": (lambda s: s.Conv(4, (3, 3)), (2, 6, 7, 3)),
    "conv_same_strided": (
        lambda s: s.Conv(4, (3, 2), strides=(2, 1), padding="SAME"),
        (2, 6, 7, 3),
    ),
    "general_conv_nchw": (
        lambda s: s.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 3), padding="SAME"),
        (2, 3, 5, 6),
    ),
    "conv_transpose": (lambda s: s.ConvTranspose(3, (3, 3), strides=(2, 2)), (2, 4, 5, 2)),
    "conv_transpose_same": (
        lambda s: s.ConvTranspose(3, (2, 3), strides=(2, 1), padding="SAME"),
        (2, 4, 5, 2),
    ),
    "conv1d_transpose": (lambda s: s.Conv1DTranspose(2, (3,), strides=(2,)), (2, 5, 3)),
    "batchnorm": (lambda s: s.BatchNorm(), (4, 3, 3, 2)),
    "batchnorm_axis": (lambda s: s.BatchNorm(axis=0, center=False), (5, 3)),
    "batchnorm_noscale": (lambda s: s.BatchNorm(axis=(0,), scale=False), (5, 3)),
    "maxpool": (lambda s: s.MaxPool((2, 2)), (2, 5, 6, 3)),
    "maxpool_same": (lambda s: s.MaxPool((3, 3), strides=(2, 2), padding="SAME"), (2, 5, 6, 3)),
    "avgpool_same": (lambda s: s.AvgPool((3, 2), strides=(2, 2), padding="SAME"), (2, 5, 6, 3)),
    "avgpool_spec": (lambda s: s.AvgPool((2, 2), spec="NCHW"), (2, 3, 5, 6)),
    "sumpool": (lambda s: s.SumPool((2, 3), strides=(1, 2)), (2, 5, 6, 3)),
    "flatten": (lambda s: s.Flatten, (2, 3, 4)),
    "identity": (lambda s: s.Identity, (2, 3)),
    "elementwise_all": (
        lambda s: s.serial(
            s.FanOut(11),
            s.parallel(
                s.Relu,
                s.Tanh,
                s.Sigmoid,
                s.Elu,
                s.LeakyRelu,
                s.Softplus,
                s.Gelu,
                s.Selu,
                s.Exp,
                s.LogSoftmax,
                s.Softmax,
            ),
            s.FanInConcat(),
        ),
        (3, 4),
    ),
    "residual": (
        lambda s: s.serial(
            s.Dense(4),
            s.FanOut(2),
            s.parallel(s.serial(s.Dense(4), s.Tanh), s.Identity),
            s.FanInSum,
        ),
        (3, 4),
    ),
    "fan_in_concat_axis": (
        lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(2), s.Dense(3)), s.FanInConcat(axis=1)),
        (3, 4),
    ),
    "shape_dependent": (lambda s: s.shape_dependent(lambda shape: s.Dense(shape[-1] * 2)), (3, 4)),
    "convnet": (
        lambda s: s.serial(
            s.Conv(4, (3, 3), padding="SAME"),
            s.BatchNorm(),
            s.Relu,
            s.MaxPool((2, 2), strides=(2, 2)),
            s.Flatten,
            s.Dense(3),
            s.LogSoftmax,
        ),
        (2, 6, 6, 2),
    ),
}


def layer_prog(ns: SimpleNamespace, name: str) -> Any:
    make, shape = LAYERS[name]
    init, apply = make(ns.stax)
    batchless = (-1, *shape[1:])
    out_shape, params = init(ns.jax.random.PRNGKey(1), batchless)
    x = image(ns, shape)
    y = apply(params, x)
    y_jit = ns.jax.jit(apply)(params, x)
    g = ns.jax.grad(lambda p, x: ns.jnp.sum(apply(p, x) ** 2), argnums=(0, 1))(params, x)
    return tuple(int(d) for d in out_shape), params, y, y_jit, g


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_stax_layer_like_jax(device: Any, name: str) -> None:
    got, want = layer_prog(W, name), layer_prog(J, name)
    assert got[0] == want[0], (got[0], want[0])
    close(got[1:], want[1:], 5e-5)
    assert np.asarray(got[2]).shape[1:] == tuple(want[0][1:])


def test_stax_vmap_apply(device: Any) -> None:
    def prog(ns: SimpleNamespace) -> Any:
        s = ns.stax
        init, apply = s.serial(s.Conv(3, (2, 2)), s.Relu, s.Flatten, s.Dense(2))
        _, params = init(ns.jax.random.PRNGKey(3), (1, 5, 5, 2))
        xs = image(ns, (4, 1, 5, 5, 2))
        return ns.jax.vmap(apply, in_axes=(None, 0))(params, xs)

    close(prog(W), prog(J), 5e-5)


def test_dropout(device: Any) -> None:
    def prog(ns: SimpleNamespace) -> Any:
        s = ns.stax
        init, apply = s.serial(s.Dense(6), s.Dropout(0.7), s.Dense(2))
        _, params = init(ns.jax.random.PRNGKey(0), (-1, 3))
        x = image(ns, (4, 3))
        train = apply(params, x, rng=ns.jax.random.PRNGKey(5))
        _, apply_eval = s.Dropout(0.7, mode="eval")
        return train, apply_eval((), x, rng=ns.jax.random.PRNGKey(5))

    close(prog(W), prog(J))
    for ns in (W, J):
        with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
            ns.stax.Dropout(0.5)[1]((), ns.jnp.ones(3))


def test_stax_namespace() -> None:
    names = [n for n in dir(rstax) if not n.startswith("_") and n[0].isupper()]
    missing = [n for n in names if not hasattr(wstax, n)]
    assert not missing, missing
    for n in ("glorot", "randn", "logsoftmax", "relu", "softplus", "standardize", "zeros"):
        assert hasattr(wstax, n), n


def test_installed_as_jax() -> None:
    """After install_as_jax, JAX's import spellings resolve to these modules (subprocess: the
    aliases replace `jax` in sys.modules)."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import webjax; webjax.install_as_jax()\n"
        "import jax.example_libraries.optimizers\n"
        "from jax.example_libraries import stax, optimizers\n"
        "from jax.experimental.ode import odeint\n"
        "import webjax.example_libraries.optimizers as o, webjax.experimental.ode as e\n"
        "assert optimizers is o and jax.example_libraries.optimizers is o\n"
        "import webjax.example_libraries.stax as s\n"
        "assert odeint is e.odeint and stax is s and stax.Dense is s.Dense\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root / "pkg"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert out.stdout.strip().endswith("ok"), out.stderr[-2000:]
