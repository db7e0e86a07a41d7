"""The fused attention kernel behind jax.nn.dot_product_attention (nn/attention.py,
ir/attention.py, codegen/wgsl/attention.py, codegen/wasm/attention.py), against JAX.

On wasm and on webgpu as a GPU the fused kernel must run (checked in the backend's kernel
cache); on cpu, webgl and webgpu as a CPU implementation (lavapipe's own `limits["cpu"]`) the
composite. Tests run webgpu as a GPU (the backend's limits switched, as the other schedule
tests do), so lavapipe runs the GPU shader natively."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import jax
import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax import nn
from webjax._src.ir.attention import AttentionKernel

R = np.random.default_rng(7)


def _arr(*shape: int, dt: Any = np.float32) -> np.ndarray:
    return R.standard_normal(shape).astype(dt)


@contextlib.contextmanager
def _schedule(device: Any, cpu: int) -> Iterator[None]:
    """webgpu: kernels for a GPU (cpu=0) or for a CPU implementation (cpu=1)."""
    backend = device.backend
    saved = backend.limits.get("cpu", 0)
    backend.limits["cpu"] = cpu
    backend._cache.clear()
    try:
        yield
    finally:
        backend.limits["cpu"] = saved
        backend._cache.clear()


@pytest.fixture(autouse=True)
def _as_gpu(device: Any) -> Iterator[None]:
    if device.platform != "webgpu":
        yield
        return
    with _schedule(device, 0):
        yield


def _fused_expected(device: Any) -> bool:
    return device.platform == "wasm" or (
        device.platform == "webgpu" and not device.backend.limits.get("cpu")
    )


def _fused_ran(device: Any) -> bool:
    return any(isinstance(k, AttentionKernel) for k in getattr(device.backend, "_cache", {}))


def _clear(device: Any) -> None:
    cache = getattr(device.backend, "_cache", None)
    if cache is not None:
        for key in [k for k in cache if isinstance(k, AttentionKernel)]:
            del cache[key]


CASES = {
    "plain": {},
    "causal": {"is_causal": True},
    "bias_kvlen": {"bias": (1, 4, 37, 45), "key_value_seq_lengths": [40, 0]},
    "mask_causal_qlen": {"mask": (2, 1, 37, 45), "is_causal": True, "query_seq_lengths": [30, 5]},
    "causal_lens_scale": {
        "is_causal": True,
        "key_value_seq_lengths": [7, 45],
        "query_seq_lengths": [37, 1],
        "scale": 0.2,
    },
    "bias_mask_broadcast": {"bias": (2, 1, 1, 45), "mask": (1, 4, 37, 1)},
}


def _inputs(opts: dict[str, Any], dt: Any = np.float32) -> tuple[list[np.ndarray], dict, dict]:
    b, t, s, n, k, h = 2, 37, 45, 4, 2, 16
    arrays = [_arr(b, t, n, h, dt=dt), _arr(b, s, k, h, dt=dt), _arr(b, s, k, h, dt=dt)]
    jopts: dict[str, Any] = {}
    for key, val in opts.items():
        if key == "bias":
            jopts[key] = _arr(*val)
        elif key == "mask":
            jopts[key] = R.uniform(size=val) > 0.3
        elif key.endswith("seq_lengths"):
            jopts[key] = np.array(val, np.int32)
        else:
            jopts[key] = val
    wopts = {k: (jnp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in jopts.items()}
    return arrays, wopts, jopts


def _close(got: Any, want: Any, tol: float) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), tol, tol)


@pytest.mark.parametrize("case", list(CASES))
def test_matches_jax(device: Any, case: str) -> None:
    arrays, wopts, jopts = _inputs(CASES[case])
    want = jax.nn.dot_product_attention(*arrays, **jopts)
    _clear(device)
    got = nn.dot_product_attention(*[jnp.asarray(a) for a in arrays], **wopts)
    _close(got, want, 2e-5)
    assert _fused_ran(device) == _fused_expected(device)
    if device.platform == "webgpu":  # as a CPU implementation: the composite
        with _schedule(device, 1):
            got = nn.dot_product_attention(*[jnp.asarray(a) for a in arrays], **wopts)
            _close(got, want, 2e-5)
            assert not _fused_ran(device)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_inputs(device: Any, dt: str) -> None:
    ml = pytest.importorskip("ml_dtypes")
    npdt = np.float16 if dt == "float16" else ml.bfloat16
    if not device.backend.supports_dtype(webjax.numpy.dtype(dt)):
        pytest.skip(f"{device.platform} has no {dt}")
    arrays, wopts, jopts = _inputs({"is_causal": True}, npdt)
    got = nn.dot_product_attention(*[jnp.asarray(a) for a in arrays], **wopts)
    want = jax.nn.dot_product_attention(*arrays, **jopts)
    assert got.dtype == want.dtype
    # the fused kernel keeps the probabilities in float32 (the composite rounds them first)
    _close(got, want, 2e-2 if dt == "float16" else 1e-1)


def test_head_sizes(device: Any) -> None:
    """An odd head size (webgpu's scalar registers; wasm's composite) and MQA at H = 64."""
    for b, t, s, n, k, h in [(1, 5, 9, 2, 1, 6), (1, 70, 33, 3, 1, 64)]:
        q, kk, v = _arr(b, t, n, h), _arr(b, s, k, h), _arr(b, s, k, h)
        got = nn.dot_product_attention(jnp.asarray(q), jnp.asarray(kk), jnp.asarray(v))
        _close(got, jax.nn.dot_product_attention(q, kk, v), 2e-5)


@pytest.mark.parametrize("h", [128, 256])
def test_wide_heads(device: Any, h: int) -> None:
    """H > 64: on webgpu each row is split over H / 64 invocations that exchange partial
    logits (bias, lengths and the causal mask applied once to their sum)."""
    b, t, s, n, k = 2, 21, 19, 2, 1
    q, kk, v = _arr(b, t, n, h), _arr(b, s, k, h), _arr(b, s, k, h)
    bias, kl = _arr(1, n, t, s), np.array([19, 6], np.int32)
    opts = {"is_causal": True, "key_value_seq_lengths": kl}
    _clear(device)
    got = nn.dot_product_attention(
        *[jnp.asarray(x) for x in (q, kk, v)],
        bias=jnp.asarray(bias),
        **{**opts, "key_value_seq_lengths": jnp.asarray(kl)},
    )
    _close(got, jax.nn.dot_product_attention(q, kk, v, bias=bias, **opts), 2e-5)
    assert _fused_ran(device) == _fused_expected(device)


def test_grad_jit_vmap(device: Any) -> None:
    b, t, s, n, k, h = 2, 9, 11, 4, 2, 8
    q, kk, v = _arr(b, t, n, h), _arr(b, s, k, h), _arr(b, s, k, h)
    bias = _arr(1, n, t, s)
    kl = np.array([11, 4], np.int32)

    def f(mod: Any, impl: Any, a: Any, c: Any, d: Any, e: Any, lens: Any) -> Any:
        out = impl(a, c, d, bias=e, is_causal=True, key_value_seq_lengths=lens)
        return (out * mod.cos(out)).sum()

    args = [jnp.asarray(x) for x in (q, kk, v, bias)]
    got = webjax.grad(
        lambda *xs: f(jnp, nn.dot_product_attention, *xs, jnp.asarray(kl)), argnums=(0, 1, 2, 3)
    )(*args)
    want = jax.grad(
        lambda *xs: f(jax.numpy, jax.nn.dot_product_attention, *xs, kl), argnums=(0, 1, 2, 3)
    )(q, kk, v, bias)
    for g, w in zip(got, want, strict=True):
        _close(g, w, 2e-4)
    # a finite difference along a random direction of q
    d = _arr(*q.shape)

    def loss(x: Any) -> float:
        return float(f(jnp, nn.dot_product_attention, x, *args[1:], jnp.asarray(kl)))

    eps = 1e-2
    fd = (loss(jnp.asarray(q + eps * d)) - loss(jnp.asarray(q - eps * d))) / (2 * eps)
    np.testing.assert_allclose(fd, float((np.asarray(got[0]) * d).sum()), rtol=2e-2, atol=2e-3)
    # jit equals eager; the jitted program runs the fused kernel where there is one
    _clear(device)
    fn = lambda a, c, e: nn.dot_product_attention(a, c, c, is_causal=True, mask=e)
    mask = R.uniform(size=(b, n, t, s)) > 0.2
    eager = fn(args[0], args[1], jnp.asarray(mask))
    _close(webjax.jit(fn)(args[0], args[1], jnp.asarray(mask)), eager, 1e-6)
    assert _fused_ran(device) == _fused_expected(device)
    # vmap over a leading axis of q only, and of everything
    qs = _arr(3, b, t, n, h)
    got_v = webjax.vmap(lambda a: nn.dot_product_attention(a, args[1], args[2]))(jnp.asarray(qs))
    want_v = jax.vmap(lambda a: jax.nn.dot_product_attention(a, kk, v))(qs)
    _close(got_v, want_v, 2e-5)
    ks = _arr(3, b, s, k, h)
    got_v = webjax.vmap(
        lambda a, c, e: nn.dot_product_attention(a, c, c, bias=e), in_axes=(0, 0, None)
    )(jnp.asarray(qs), jnp.asarray(ks), args[3])
    want_v = jax.vmap(
        lambda a, c, e: jax.nn.dot_product_attention(a, c, c, bias=e), in_axes=(0, 0, None)
    )(qs, ks, bias)
    _close(got_v, want_v, 2e-5)
