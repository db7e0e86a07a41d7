"""The digits demo: an MLP classifier trained on scikit-learn's 8x8 handwritten digits with
jit and grad (plain webjax, a hand-written Adam), its loss curve drawn as it trains, its test
accuracy, and the trained parameters saved with webjax.safetensors and loaded back.

The functions above `main` are plain webjax and run natively too (tests/test_demos.py);
`main` drives the page (web/demos/digits.html through demo.mjs)."""

from __future__ import annotations

import csv
import gzip
import io
from typing import Any

import webjax as jax
import webjax.numpy as jnp

N_TEST = 360  # images held out (a fixed random 20%), never trained on
SIZES = (64, 64, 10)


def parse_digits(data: bytes) -> tuple[Any, Any]:
    """The CSV (gzipped or not): rows of 64 pixels (0-16) and a label -> (x / 16, labels)."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    rows = [[int(v) for v in row] for row in csv.reader(io.StringIO(data.decode())) if row]
    if not rows or any(len(r) != 65 for r in rows):
        raise ValueError("digits: expected rows of 64 pixels and a label")
    x = jnp.array([r[:64] for r in rows], jnp.float32) / 16.0
    y = jnp.array([r[64] for r in rows], jnp.int32)
    return x, y


def split(x: Any, y: Any, seed: int = 42) -> tuple[Any, Any, Any, Any]:
    """(x_train, y_train, x_test, y_test): a fixed shuffle, the last N_TEST images held out."""
    perm = jax.random.permutation(jax.random.key(seed), x.shape[0])
    x, y = x[perm], y[perm]
    return x[:-N_TEST], y[:-N_TEST], x[-N_TEST:], y[-N_TEST:]


def init_params(key: Any, sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    params = {}
    keys = jax.random.split(key, len(sizes) - 1)
    for i, (k, m, n) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True)):
        params[f"w{i}"] = jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m)
        params[f"b{i}"] = jnp.zeros(n)
    return params


def logits(params: dict[str, Any], x: Any) -> Any:
    layers = len(params) // 2
    for i in range(layers):
        x = x @ params[f"w{i}"] + params[f"b{i}"]
        if i < layers - 1:
            x = jax.nn.relu(x)
    return x


def loss_fn(params: dict[str, Any], x: Any, y: Any) -> Any:
    logp = jax.nn.log_softmax(logits(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def accuracy(params: dict[str, Any], x: Any, y: Any) -> float:
    return float(jnp.mean(jnp.argmax(logits(params, x), axis=1) == y))


def make_step(lr: float = 0.01, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Any:
    """A jitted Adam step: (params, state, x, y) -> (params, state, loss)."""

    @jax.jit
    def step(params: Any, state: Any, x: Any, y: Any) -> Any:
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        m, v, t = state
        t = t + 1
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        scale = lr * jnp.sqrt(1 - b2**t) / (1 - b1**t)
        params = jax.tree.map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + eps), params, m, v)
        return params, (m, v, t), loss

    return step


def init_state(params: Any) -> Any:
    zeros = jax.tree.map(jnp.zeros_like, params)
    return zeros, zeros, jnp.zeros((), jnp.float32)


def batches(key: Any, n: int, batch: int) -> Any:
    """Endless index batches: a fresh permutation of range(n) per epoch."""
    while True:
        key, sub = jax.random.split(key)
        perm = jax.random.permutation(sub, n)
        for i in range(0, n - batch + 1, batch):
            yield perm[i : i + batch]


def train_steps(x: Any, y: Any, steps: int, batch: int = 128, seed: int = 0) -> Any:
    """`steps` Adam steps on minibatches of (x, y), from fresh parameters: yields (step,
    params, loss) after each."""
    key = jax.random.key(seed)
    params = init_params(key)
    state = init_state(params)
    step = make_step()
    for i, idx in zip(range(steps), batches(jax.random.fold_in(key, 1), x.shape[0], batch)):
        params, state, loss = step(params, state, x[idx], y[idx])
        yield i, params, loss


async def main(page: Any) -> None:
    import asyncio

    from webjax import display, safetensors

    steps = page.int_param("steps", 300)
    x, y = parse_digits(await page.fetch_bytes("digits.csv.gz"))
    xtr, ytr, xte, yte = split(x, y)
    page.status(f"training on {xtr.shape[0]} digits, testing on {xte.shape[0]}, {steps} steps")
    with page.area("samples"):
        display.imshow(
            x[:40].reshape(5, 8, 8, 8).transpose(0, 2, 1, 3).reshape(40, 64),
            cmap="gray",
            title="the first 40 training digits",
            width=384,
        )
    losses: list[float] = []
    every = max(1, steps // 30)

    params = None
    for i, step_params, loss in train_steps(xtr, ytr, steps):
        params = step_params
        if i % every == 0 or i == steps - 1:
            losses.append(float(loss))
            with page.area("loss"):
                display.plot(
                    jnp.array(losses),
                    jnp.arange(len(losses)) * every,
                    title="training loss",
                    xlabel="step",
                    ylabel="cross-entropy",
                )
            page.show("step", f"{i + 1} / {steps}")
            page.show("loss-value", f"{losses[-1]:.4f}")
            await asyncio.sleep(0)  # let the page draw
    acc = accuracy(params, xte, yte)
    page.show("accuracy", f"{acc:.4f}")
    blob = safetensors.save(params)
    reloaded = safetensors.load(blob)
    acc_reloaded = accuracy(reloaded, xte, yte)
    page.show(
        "reloaded",
        f"{acc_reloaded:.4f} from {len(blob)} bytes of safetensors ({', '.join(sorted(reloaded))})",
    )
    page.result(
        steps=steps,
        final_loss=losses[-1],
        accuracy=acc,
        reloaded_accuracy=acc_reloaded,
        safetensors_bytes=len(blob),
        tensors=sorted(reloaded),
    )
