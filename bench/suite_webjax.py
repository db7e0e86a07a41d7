"""The benchmark suite in webjax: one `run_case` per benchmark, timed inside the runtime.

Runs in Pyodide (bench/page.html runs this file, then calls `run_case_json` through
runPythonAsync) and natively (`python bench/suite_webjax.py DEVICE CASES_JSON`, which
bench/run.py starts with PYTHONPATH=pkg). The twin for jax-js is bench/suite_jaxjs.mjs: keep the
two doing the same work. Each case returns raw timings; bench/run.py turns them into metrics.

Timing: one warm-up call (compiles; a second one when cheap), then timed calls until `max_reps`,
or `target_s` of timed calls (at least 3), or the case's time budget is spent; each call ends
with `await x.block_until_ready_async()` (natively the sync twin; on webgl in the browser also
a one-element read, see READ_ONE). A warm-up alone longer than the budget returns
{"status": "timeout"}. The TF.js twin (webgl only) is bench/suite_tfjs.mjs.
"""

from __future__ import annotations

import gc
import json
import sys
import time
import traceback
from typing import Any

import webjax as jax
import webjax.numpy as jnp

IN_BROWSER = sys.platform == "emscripten"
TARGET = [1.0]  # seconds of timed calls that are enough (set per case by run_case)
# Each call ends with block_until_ready_async: on webgl in Chromium a WebGL fence after the
# call's draws, polled until the GPU has passed it (hosts/webgl_browser.py; TF.js's fence sync
# likewise). READ_ONE adds a read-back of one element of the (last) output to that (a slice
# kernel and a second fence): off, since the fence already waits for the GPU.
READ_ONE = [False]


async def sync(x: Any) -> Any:
    if IN_BROWSER:
        await jax.block_until_ready_async(x)
        if READ_ONE[0]:
            leaves = jax.tree_util.tree_leaves(x)
            if leaves:
                await leaves[-1].reshape(-1)[:1].tolist_async()
    else:
        jax.block_until_ready(x)
    return x


def now() -> float:
    return time.perf_counter()


_webgpu_ready = False


async def device_for(name: str) -> Any:
    global _webgpu_ready
    if name == "webgpu" and IN_BROWSER and not _webgpu_ready:
        await jax.init_webgpu_async()
        _webgpu_ready = True
    return jax.devices(name)[0]


async def measure(run_once: Any, budget_s: float, max_reps: int, target_s: float) -> dict[str, Any]:
    start = now()
    await run_once()
    warmup = now() - start
    if warmup > budget_s:
        return {"status": "timeout", "warmup_s": warmup}
    if warmup < 0.1 * budget_s:  # a second warm-up where it is cheap (lazy pipeline creation)
        await run_once()
    times: list[float] = []
    while len(times) < max_reps:
        t = now()
        await run_once()
        dt = now() - t
        times.append(dt)
        if now() - start + dt > budget_s or (len(times) >= 3 and sum(times) >= target_s):
            break
    return {"status": "ok", "warmup_s": warmup, "times": times}


def uniform(seed: int, shape: tuple[int, ...], scale: float = 0.0) -> Any:
    """U[0, 1) samples; with `scale`, centred: U[-scale, scale)."""
    x = jax.random.uniform(jax.random.PRNGKey(seed), shape, jnp.float32)
    return (x - 0.5) * (2 * scale) if scale else x


async def case_matmul(p: dict[str, Any], budget: float, reps: int) -> dict[str, Any]:
    n = p["n"]
    a, b = uniform(0, (n, n)), uniform(1, (n, n))
    await sync((a, b))
    f = jax.jit(lambda a, b: a @ b)
    out: list[Any] = [None]

    async def once() -> None:
        out[0] = await sync(f(a, b))

    res = await measure(once, budget, reps, TARGET[0])
    if res["status"] == "ok":  # spot check one element against a Python dot product
        row, col = a[0].tolist(), b[:, 0].tolist()
        want = sum(x * y for x, y in zip(row, col, strict=True))
        got = float(out[0][0, 0])
        res["check_rel_err"] = abs(got - want) / max(abs(want), 1e-30)
    return res


async def case_chain(p: dict[str, Any], budget: float, reps: int) -> dict[str, Any]:
    n = p["n"]
    x, y = uniform(2, (n,)), uniform(3, (n,))
    await sync((x, y))
    f = jax.jit(lambda x, y: jnp.sqrt(x * x + y * y) * 0.5 + 1)
    out: list[Any] = [None]

    async def once() -> None:
        out[0] = await sync(f(x, y))

    res = await measure(once, budget, reps, TARGET[0])
    if res["status"] == "ok":
        x0, y0 = float(x[n - 1]), float(y[n - 1])
        want = (x0 * x0 + y0 * y0) ** 0.5 * 0.5 + 1
        res["check_rel_err"] = abs(float(out[0][n - 1]) - want) / want
    return res


async def case_sum(p: dict[str, Any], budget: float, reps: int) -> dict[str, Any]:
    n = p["n"]
    x = uniform(10, (n,))
    await sync(x)
    f = jax.jit(jnp.sum)
    out: list[Any] = [None]

    async def once() -> None:
        out[0] = await sync(f(x))

    res = await measure(once, budget, reps, TARGET[0])
    if res["status"] == "ok":  # U[0, 1) has mean 1/2: a loose check of the sum's size
        res["check_rel_err"] = abs(float(out[0]) - 0.5 * n) / (0.5 * n)
    return res


async def case_eager_add(p: dict[str, Any], budget: float, reps: int) -> dict[str, Any]:
    count, size = p["count"], p["size"]
    x = uniform(11, (size,))  # a computed buffer, not a lazy constant
    await sync(x)
    x0 = float(x[0])
    out: list[Any] = [None]

    async def once() -> None:
        y = x
        for _ in range(count):
            y = y + x
        out[0] = await sync(y)

    res = await measure(once, budget, reps, TARGET[0])
    if res["status"] == "ok":
        want = (count + 1) * x0
        res["check_rel_err"] = abs(float(out[0][0]) - want) / want
    return res


def _mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -jnp.sum(jax.nn.log_softmax(logits) * y) / x.shape[0]


async def case_mlp(p: dict[str, Any], budget: float, reps: int) -> dict[str, Any]:
    batch, d_in, hidden, d_out, lr = p["batch"], p["d_in"], p["hidden"], p["d_out"], p["lr"]
    params = {
        "w1": uniform(4, (d_in, hidden), 0.05),
        "b1": jnp.zeros((hidden,), jnp.float32),
        "w2": uniform(5, (hidden, d_out), 0.05),
        "b2": jnp.zeros((d_out,), jnp.float32),
    }
    x, y = uniform(6, (batch, d_in)), uniform(7, (batch, d_out)) * 0.2
    await sync((params, x, y))

    @jax.jit
    def step(params: dict[str, Any], x: Any, y: Any) -> dict[str, Any]:
        grads = jax.grad(_mlp_loss)(params, x, y)
        return jax.tree_util.tree_map(lambda w, g: w - lr * g, params, grads)

    state = [params]

    async def once() -> None:
        state[0] = await sync(step(state[0], x, y))

    res = await measure(once, budget, reps, TARGET[0])
    if res["status"] == "ok":
        res["loss_after"] = float(_mlp_loss(state[0], x, y))
    return res


async def case_conv2d(p: dict[str, Any], budget: float, reps: int) -> dict[str, Any]:
    n, c, h, w, o, k = p["n"], p["c"], p["h"], p["w"], p["o"], p["k"]
    lhs, rhs = uniform(8, (n, c, h, w)), uniform(9, (o, c, k, k), 0.1)
    await sync((lhs, rhs))

    def conv(lhs: Any, rhs: Any) -> Any:
        return jax.lax.conv_general_dilated(lhs, rhs, (1, 1), "SAME")

    f = jax.jit(conv) if p.get("jit", True) else conv
    out: list[Any] = [None]

    async def once() -> None:
        out[0] = await sync(f(lhs, rhs))

    res = await measure(once, budget, reps, TARGET[0])
    if res["status"] == "ok":  # output (0, 0, 1, 1): an interior point, all taps in range
        want = 0.0
        patch = lhs[0, :, 0:k, 0:k].tolist()
        filt = rhs[0].tolist()
        for ci in range(c):
            for i in range(k):
                for j in range(k):
                    want += patch[ci][i][j] * filt[ci][i][j]
        got = float(out[0][0, 0, 1, 1])
        res["check_rel_err"] = abs(got - want) / max(abs(want), 1e-30)
    return res


CASES = {
    "matmul": case_matmul,
    "chain": case_chain,
    "sum": case_sum,
    "eager_add": case_eager_add,
    "mlp": case_mlp,
    "conv2d": case_conv2d,
}


async def run_case(
    device: str,
    kind: str,
    params: dict[str, Any],
    budget_s: float,
    max_reps: int,
    target_s: float = 1.0,
) -> dict[str, Any]:
    start = now()
    TARGET[0] = target_s
    READ_ONE[0] = False
    try:
        dev = await device_for(device)
        with jax.default_device(dev):
            res = await CASES[kind](params, budget_s, max_reps)
    except Exception as e:
        tb = traceback.format_exc()
        res = {"status": "error", "error": f"{type(e).__name__}: {e}"[:2000], "traceback": tb}
    gc.collect()
    res["case_s"] = now() - start
    return res


async def run_case_json(args_json: str) -> str:
    a = json.loads(args_json)
    res = await run_case(
        a["device"], a["kind"], a["params"], a["budget_s"], a["max_reps"], a["target_s"]
    )
    return json.dumps(res)


async def first_result(device: str) -> float:
    """The page's first computed value (time to first result ends when this returns)."""
    dev = await device_for(device)
    with jax.default_device(dev):
        return float((jnp.ones((4,), jnp.float32) + 1)[0])


def _native_main(argv: list[str]) -> None:
    """`suite_webjax.py DEVICE CASES_JSON`: one JSON line per case on stdout, as each ends."""
    import asyncio

    device, cases = argv[0], json.loads(argv[1])
    for case in cases:
        res = asyncio.run(
            run_case(
                device, case["kind"], case["params"], case["budget_s"], case["max_reps"],
                case["target_s"],
            )
        )  # fmt: skip
        print(json.dumps({"id": case["id"], **res}), flush=True)


if __name__ == "__main__" and not IN_BROWSER:
    _native_main(sys.argv[1:])
