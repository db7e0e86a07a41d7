"""GPT-2-shaped decoding with a KV cache on webjax: weights through safetensors, a jitted decoder
layer, and incremental decoding that writes each new key and value into a fixed-size cache with
`lax.dynamic_update_slice`.

    .venv/bin/python docs/examples/gpt2_kv_cache.py [--size tiny|small] [--tokens N]
        [--device cpu|wasm|webgpu|webgl] [--attention einsum|fused] [--weights PATH]

The weights are random (GPT-2's shapes and Hugging Face's tensor names, `h.0.attn.c_attn.weight`
and so on), written to a safetensors file the first time and loaded from it after, so a real
GPT-2 checkpoint of the same names loads the same way. `tiny` is a two-layer model for tests;
`small` is GPT-2 small (124M parameters, 0.5 GB of float32). The cache has room for the whole
context: a step attends over every slot and masks those past the current position, so every
step has the same shapes and the jitted layer is traced twice in all (the prompt, then one
token at a time), whatever the number of tokens. `--attention fused` attends through
`jax.nn.dot_product_attention` (the fused kernel where the device has one).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass
from typing import Any

import webjax as jax
import webjax.numpy as jnp
import webjax.safetensors as wst
from webjax import lax


@dataclass(frozen=True)
class Config:
    vocab: int
    context: int
    width: int
    heads: int
    layers: int


SIZES = {
    "tiny": Config(vocab=96, context=32, width=64, heads=4, layers=2),
    "small": Config(vocab=50257, context=1024, width=768, heads=12, layers=12),
}


# ---- weights ----------------------------------------------------------------------------------
def init_params(key: Any, cfg: Config) -> dict[str, Any]:
    """Random weights of GPT-2's shapes, nested so that '.'-joined paths are GPT-2's names."""
    keys = iter(jax.random.split(key, 2 + 8 * cfg.layers))  # two per linear, four per block
    d = cfg.width

    def normal(shape: tuple[int, ...], scale: float = 0.02) -> Any:
        return scale * jax.random.normal(next(keys), shape)

    def norm() -> dict[str, Any]:
        return {"weight": jnp.ones(d), "bias": jnp.zeros(d)}

    def linear(n_in: int, n_out: int) -> dict[str, Any]:  # GPT-2's Conv1D: x @ weight + bias
        return {"weight": normal((n_in, n_out)), "bias": normal((n_out,), 0.01)}

    blocks = [
        {
            "ln_1": norm(),
            "attn": {"c_attn": linear(d, 3 * d), "c_proj": linear(d, d)},
            "ln_2": norm(),
            "mlp": {"c_fc": linear(d, 4 * d), "c_proj": linear(4 * d, d)},
        }
        for _ in range(cfg.layers)
    ]
    return {
        "wte": {"weight": normal((cfg.vocab, d))},
        "wpe": {"weight": normal((cfg.context, d), 0.01)},
        "h": blocks,
        "ln_f": norm(),
    }


def load_or_make(path: str, cfg: Config, seed: int = 0) -> dict[str, Any]:
    """The weights in `path` (written there first, from `init_params`, if it does not exist),
    in `init_params`' structure."""
    like = jax.eval_shape(lambda: init_params(jax.random.key(seed), cfg))
    if not os.path.exists(path):
        meta = {"model": "gpt2-shaped", "random_seed": str(seed), **_meta(cfg)}
        wst.save(init_params(jax.random.key(seed), cfg), path, metadata=meta)
    with wst.open(path) as f:
        if f.metadata() and f.metadata().get("width") not in (None, str(cfg.width)):
            raise ValueError(f"{path} holds a model of another size: {f.metadata()}")
        flat = f.tensors()
    return wst.unflatten(flat, like=like)


def _meta(cfg: Config) -> dict[str, str]:
    return {k: str(v) for k, v in cfg.__dict__.items()}


# ---- the model --------------------------------------------------------------------------------
def layer_norm(p: dict[str, Any], x: Any, eps: float = 1e-5) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * p["weight"] + p["bias"]


def linear(p: dict[str, Any], x: Any) -> Any:
    return x @ p["weight"] + p["bias"]


def attend(q: Any, k: Any, v: Any, visible: Any) -> Any:
    """Multi-head attention of q (T, H, D) over k, v (S, H, D); `visible` (T, S) masks."""
    scores = jnp.einsum("thd,shd->hts", q, k) / math.sqrt(q.shape[-1])
    scores = jnp.where(visible[None], scores, jnp.finfo(scores.dtype).min)
    return jnp.einsum("hts,shd->thd", jax.nn.softmax(scores, axis=-1), v)


def attend_fused(q: Any, k: Any, v: Any, visible: Any) -> Any:
    """`attend` through `jax.nn.dot_product_attention` (webjax's fused attention kernel on wasm
    and webgpu: online softmax, no score matrix in memory)."""
    return jax.nn.dot_product_attention(q[None], k[None], v[None], mask=visible[None, None])[0]


ATTENTION = {"einsum": attend, "fused": attend_fused}


def _split_heads(x: Any, heads: int) -> Any:
    return x.reshape(x.shape[0], heads, x.shape[1] // heads)


def decoder_layer(
    p: dict[str, Any], x: Any, k_cache: Any, v_cache: Any, pos: Any, attention: str = "einsum"
) -> Any:
    """One GPT-2 block on new tokens x (T, d) at positions pos..pos+T-1, with the keys and
    values of earlier positions in k_cache, v_cache (context, H, D). Returns the block's output
    and the caches with the new keys and values written in."""
    heads = k_cache.shape[1]
    q, k, v = jnp.split(linear(p["attn"]["c_attn"], layer_norm(p["ln_1"], x)), 3, axis=-1)
    k_cache = lax.dynamic_update_slice(k_cache, _split_heads(k, heads), (pos, 0, 0))
    v_cache = lax.dynamic_update_slice(v_cache, _split_heads(v, heads), (pos, 0, 0))
    mine = pos + jnp.arange(x.shape[0])[:, None]  # (T, 1): each new token's position
    visible = jnp.arange(k_cache.shape[0])[None, :] <= mine  # causal, and unwritten slots off
    out = ATTENTION[attention](_split_heads(q, heads), k_cache, v_cache, visible)
    out = out.reshape(x.shape)
    x = x + linear(p["attn"]["c_proj"], out)
    h = jax.nn.gelu(linear(p["mlp"]["c_fc"], layer_norm(p["ln_2"], x)), approximate=True)
    return x + linear(p["mlp"]["c_proj"], h), k_cache, v_cache


decoder_layer_jit = jax.jit(decoder_layer, static_argnames="attention")


def embed(params: dict[str, Any], tokens: Any, pos: Any) -> Any:
    positions = pos + jnp.arange(tokens.shape[0])
    return params["wte"]["weight"][tokens] + params["wpe"]["weight"][positions]


def unembed(params: dict[str, Any], x: Any) -> Any:
    return layer_norm(params["ln_f"], x) @ params["wte"]["weight"].T


def forward(params: dict[str, Any], cfg: Config, tokens: Any) -> Any:
    """Logits (T, vocab) of every position, without a cache: causal attention over the tokens."""
    t, heads = tokens.shape[0], cfg.heads
    x = embed(params, tokens, 0)
    visible = jnp.arange(t)[None, :] <= jnp.arange(t)[:, None]
    for p in params["h"]:
        q, k, v = jnp.split(linear(p["attn"]["c_attn"], layer_norm(p["ln_1"], x)), 3, axis=-1)
        q, k, v = (_split_heads(a, heads) for a in (q, k, v))
        x = x + linear(p["attn"]["c_proj"], attend(q, k, v, visible).reshape(x.shape))
        h = jax.nn.gelu(linear(p["mlp"]["c_fc"], layer_norm(p["ln_2"], x)), approximate=True)
        x = x + linear(p["mlp"]["c_proj"], h)
    return unembed(params, x)


# ---- decoding -----------------------------------------------------------------------------------
def empty_cache(cfg: Config) -> list[tuple[Any, Any]]:
    shape = (cfg.context, cfg.heads, cfg.width // cfg.heads)
    return [(jnp.zeros(shape), jnp.zeros(shape)) for _ in range(cfg.layers)]


def step(
    params: dict[str, Any],
    tokens: Any,
    cache: list[tuple[Any, Any]],
    pos: Any,
    attention: str = "einsum",
) -> tuple[Any, list[tuple[Any, Any]]]:
    """Logits of the new tokens at positions pos.., and the updated cache: the jitted layer
    once per block (the blocks share shapes, so they share one trace)."""
    x = embed(params, tokens, pos)
    out = []
    for p, (k_cache, v_cache) in zip(params["h"], cache, strict=True):
        x, k_cache, v_cache = decoder_layer_jit(p, x, k_cache, v_cache, pos, attention=attention)
        out.append((k_cache, v_cache))
    return unembed(params, x), out


def generate(
    params: dict[str, Any], cfg: Config, prompt: list[int], n_tokens: int, attention: str = "einsum"
) -> tuple[list[int], list[Any]]:
    """Greedy decoding: the prompt in one step, then one token per step. Returns the tokens
    (prompt included) and each step's logits of its last position."""
    if len(prompt) + n_tokens > cfg.context:
        raise ValueError(f"{len(prompt)} + {n_tokens} tokens exceed the context of {cfg.context}")
    cache = empty_cache(cfg)
    tokens = list(prompt)
    logits, cache = step(params, jnp.asarray(prompt, jnp.int32), cache, jnp.int32(0), attention)
    last = [logits[-1]]
    for _ in range(n_tokens - 1):
        tokens.append(int(jnp.argmax(last[-1])))
        pos = jnp.int32(len(tokens) - 1)
        logits, cache = step(params, jnp.asarray(tokens[-1:], jnp.int32), cache, pos, attention)
        last.append(logits[-1])
    tokens.append(int(jnp.argmax(last[-1])))
    return tokens, last


def generate_uncached(
    params: dict[str, Any], cfg: Config, prompt: list[int], n_tokens: int
) -> list[int]:
    """Greedy decoding without a cache: a whole forward pass over all the tokens per step."""
    tokens = list(prompt)
    for _ in range(n_tokens):
        logits = forward(params, cfg, jnp.asarray(tokens, jnp.int32))
        tokens.append(int(jnp.argmax(logits[-1])))
    return tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--device", default=None)
    parser.add_argument("--attention", choices=sorted(ATTENTION), default="einsum")
    parser.add_argument("--weights", default=None, help="safetensors file (made if missing)")
    args = parser.parse_args()
    cfg = SIZES[args.size]
    path = args.weights or f"gpt2-{args.size}-random.safetensors"
    device = jax.devices(args.device)[0] if args.device else jax.devices()[0]
    prompt = [1, 2, 3, 4]
    with jax.default_device(device):
        t0 = time.perf_counter()
        params = jax.block_until_ready(load_or_make(path, cfg))
        t1 = time.perf_counter()
        generate(params, cfg, prompt, 2, args.attention)  # the two traces, outside the timing
        t2 = time.perf_counter()
        tokens, _ = generate(params, cfg, prompt, args.tokens, args.attention)
        t3 = time.perf_counter()
        uncached = generate_uncached(params, cfg, prompt, args.tokens)
        t4 = time.perf_counter()
    print(
        f"device {device}; weights {path}: {t1 - t0:.2f} s (tracing and compiling {t2 - t1:.2f} s)"
    )
    print(
        f"{args.tokens} tokens: {t3 - t2:.2f} s with the cache, {t4 - t3:.2f} s recomputing "
        "every position each step (eagerly: new shapes, new kernels every step); the same "
        f"tokens: {tokens == uncached}"
    )
    print("tokens:", tokens)


if __name__ == "__main__":
    main()
