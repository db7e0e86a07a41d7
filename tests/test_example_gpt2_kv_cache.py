"""docs/examples/gpt2_kv_cache.py: decoding with the KV cache gives, at every step, the logits of
an uncached forward pass over the same tokens; that forward pass matches a NumPy one; the
weights survive their safetensors file; the jitted layer is traced once per input shape."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax._src.runtime import backend as rt

PATH = Path(__file__).resolve().parents[1] / "docs" / "examples" / "gpt2_kv_cache.py"
spec = importlib.util.spec_from_file_location("gpt2_kv_cache", PATH)
assert spec is not None and spec.loader is not None
gpt2 = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = gpt2  # dataclasses look their module up
spec.loader.exec_module(gpt2)
CFG = gpt2.SIZES["tiny"]


def _numpy_forward(params: dict[str, Any], tokens: list[int]) -> np.ndarray:
    p = webjax.tree.map(lambda a: np.asarray(a, np.float64), params)

    def norm(q: dict[str, Any], x: np.ndarray) -> np.ndarray:
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * q["weight"] + q["bias"]

    def lin(q: dict[str, Any], x: np.ndarray) -> np.ndarray:
        return x @ q["weight"] + q["bias"]

    t, h = len(tokens), CFG.heads
    x = p["wte"]["weight"][tokens] + p["wpe"]["weight"][:t]
    for b in p["h"]:
        q, k, v = (
            a.reshape(t, h, -1)
            for a in np.split(lin(b["attn"]["c_attn"], norm(b["ln_1"], x)), 3, -1)
        )
        s = np.einsum("thd,shd->hts", q, k) / math.sqrt(q.shape[-1])
        s = np.where(np.tril(np.ones((t, t), bool))[None], s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        x = x + lin(b["attn"]["c_proj"], np.einsum("hts,shd->thd", w, v).reshape(t, -1))
        u = lin(b["mlp"]["c_fc"], norm(b["ln_2"], x))
        u = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u**3)))
        x = x + lin(b["mlp"]["c_proj"], u)
    return norm(p["ln_f"], x) @ p["wte"]["weight"].T


def test_weights_through_safetensors(tmp_path: Path) -> None:
    path = tmp_path / "tiny.safetensors"
    made = gpt2.load_or_make(str(path), CFG, seed=3)  # writes the file, then reads it
    again = gpt2.load_or_make(str(path), CFG, seed=3)
    direct = gpt2.init_params(webjax.random.key(3), CFG)
    with webjax.safetensors.open(path) as f:
        assert "h.1.attn.c_attn.weight" in f and f.metadata()["width"] == str(CFG.width)
    for a, b, c in zip(*(webjax.tree.leaves(t) for t in (made, again, direct)), strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes() == np.asarray(c).tobytes()
    with pytest.raises(ValueError, match="another size"):
        gpt2.load_or_make(str(path), gpt2.Config(96, 32, 32, 4, 2))


def test_cached_decoding_matches_the_uncached_forward(device: Any) -> None:
    params = gpt2.init_params(webjax.random.key(0), CFG)
    params = webjax.tree.map(lambda a: a * 8, params)  # larger weights: varied greedy tokens
    prompt, n = [5, 17, 2], 4
    gpt2.decoder_layer_jit.clear_cache()
    tokens, step_logits = gpt2.generate(params, CFG, prompt, n)
    assert len(tokens) == len(prompt) + n and len(gpt2.decoder_layer_jit._cache) == 2
    full = gpt2.forward(params, CFG, jnp.asarray(tokens, jnp.int32))
    for i, logits in enumerate(step_logits):  # step i's last position is len(prompt) - 1 + i
        np.testing.assert_allclose(
            np.asarray(logits), np.asarray(full[len(prompt) - 1 + i]), rtol=2e-4, atol=2e-4
        )
    greedy = np.asarray(jnp.argmax(full[len(prompt) - 1 : -1], axis=-1)).tolist()
    assert greedy == tokens[len(prompt) :]
    want = _numpy_forward(params, tokens)
    np.testing.assert_allclose(np.asarray(full), want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("platform", ["wasm", "webgpu"])  # where the fused kernel runs
def test_fused_attention_decodes_the_same(platform: str) -> None:
    reason = rt.unavailable_reason(platform)
    if reason is not None:
        pytest.skip(f"backend {platform} unavailable on this host: {reason}")
    params = webjax.tree.map(lambda a: a * 8, gpt2.init_params(webjax.random.key(1), CFG))
    with webjax.default_device(webjax.devices(platform)[0]):
        tokens, plain = gpt2.generate(params, CFG, [3, 9], 3)
        fused_tokens, fused = gpt2.generate(params, CFG, [3, 9], 3, attention="fused")
    assert fused_tokens == tokens
    for a, b in zip(plain, fused, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-4)


def test_context_overflow_is_refused() -> None:
    params = gpt2.init_params(webjax.random.key(0), CFG)
    with pytest.raises(ValueError, match="exceed the context"):
        gpt2.generate(params, CFG, [1] * 30, 3)
