"""Threefry-2x32: the counter-based hash behind JAX's default PRNG, and its key operations.

Threefry-2x32 with 20 rounds is defined in Salmon et al., "Parallel random numbers: as easy as
1, 2, 3" (SC'11) and the Random123 reference: two 32-bit words of key, two of counter, rounds
of (add, rotate, xor) with the rotation table below, and a key injection every four rounds
from the schedule (k0, k1, k0 ^ k1 ^ 0x1BD11BDA). Everything here is written on `lax`, so it
traces, jits, vmaps and lowers to every backend like any other function.

Key operations follow JAX's `threefry_partitionable=True` semantics (JAX's default): the
counters of an output of shape S are the flat indices of S as 64-bit integers split into
(hi, lo) words, hashed per element, so any element can be computed on its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import config, core, dtypes
from ..interpreters import ad, batching
from ..lax import lax

_U32 = dtypes.uint32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # Threefish's key-schedule parity constant


def u32(c: int) -> Any:
    """A uint32 scalar constant.

    Bound as a conversion of an int32 literal: a 0-d uint32 constant becomes a jaxpr literal
    whose Python value `eval_jaxpr` re-reads as int32 (core bug, reported), which breaks jit.
    """
    c = c & 0xFFFFFFFF
    signed = c - 2**32 if c >= 2**31 else c
    return lax.convert_element_type_p.bind(signed, new_dtype=_U32, weak_type=False)


def _rotl(x: Any, r: int) -> Any:
    return lax.bitwise_or(lax.shift_left(x, u32(r)), lax.shift_right_logical(x, u32(32 - r)))


def _hash(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """threefry2x32 on uint32 words; the keys may be scalars that broadcast against x."""
    k2 = lax.bitwise_xor(lax.bitwise_xor(k0, k1), u32(_PARITY))
    ks = (k0, k1, k2)
    x0, x1 = lax.add(x0, k0), lax.add(x1, k1)
    for block in range(5):  # 5 blocks of 4 rounds, then an injection: 20 rounds
        for r in _ROTATIONS[block % 2]:
            x0 = lax.add(x0, x1)
            x1 = lax.bitwise_xor(_rotl(x1, r), x0)
        i = block + 1
        x0 = lax.add(x0, ks[i % 3])
        x1 = lax.add(lax.add(x1, ks[(i + 1) % 3]), u32(i))
    return x0, x1


# ---- the primitive ------------------------------------------------------------------------------
# `threefry2x32` is a primitive, as in JAX: four uint32 operands of one shape, two outputs. Its
# evaluation is the hash written on lax ops, which eager dispatch fuses into one elementwise
# expression per output word (and into whatever consumes the bits).
threefry2x32_p = lax._prim("threefry2x32")
threefry2x32_p.multiple_results = True


@threefry2x32_p.def_abstract_eval
def _threefry_abstract(*avals: core.ShapedArray) -> list[core.ShapedArray]:
    shape = avals[0].shape
    for a in avals:
        if a.dtype != _U32:
            raise TypeError(f"threefry2x32 requires uint32 arguments, got {a.dtype.name}")
        if a.shape != shape:
            raise TypeError(
                f"threefry2x32 requires arguments of one shape, got {[a.shape for a in avals]}"
            )
    out = core.ShapedArray(shape, _U32)
    return [out, out]


def _threefry_impl(k0: Any, k1: Any, x0: Any, x1: Any) -> list[Any]:
    _threefry_abstract(*(core.get_aval(a) for a in (k0, k1, x0, x1)))
    return list(_hash(k0, k1, x0, x1))


threefry2x32_p.def_impl(_threefry_impl)
ad.nondifferentiable.add(threefry2x32_p)


def _threefry_batch(vals: list[Any], dims: list[Any]) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    front = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims, strict=True)]
    return threefry2x32_p.bind(*front), [0, 0]


batching.primitive_batchers[threefry2x32_p] = _threefry_batch


def threefry2x32(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """Hash counter words (x0, x1) under key words (k0, k1): uint32 values broadcast to one
    shape (the key words are usually scalars)."""
    args = [lax.to_array(a) for a in (k0, k1, x0, x1)]
    shapes = [core.get_aval(a).shape for a in args]
    nd = max(len(s) for s in shapes)
    padded = [(1,) * (nd - len(s)) + s for s in shapes]
    # NumPy broadcasting: a dimension's size is its one size other than 1 (0 included)
    shape = tuple(next((d for d in dims if d != 1), 1) for dims in zip(*padded, strict=True))
    if any(d not in (1, n) for p in padded for d, n in zip(p, shape, strict=True)):
        raise TypeError(f"threefry2x32: incompatible argument shapes {shapes}")
    args = [_broadcast_to(a, shape) for a in args]
    y0, y1 = threefry2x32_p.bind(*args)
    return y0, y1


def _broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    own = core.get_aval(x).shape
    if own == shape:
        return x
    lead = len(shape) - len(own)  # trailing-aligned, as NumPy broadcasting
    keep = tuple(i for i, d in enumerate(own) if d != 1)
    x = lax.reshape(x, tuple(own[i] for i in keep))
    return lax.broadcast_in_dim(x, shape, tuple(lead + i for i in keep))


# ---- counters -----------------------------------------------------------------------------------
def iota_2x32(shape: Sequence[int]) -> tuple[Any, Any]:
    """The flat index of every element of `shape` as a 64-bit count, as (hi, lo) uint32 words."""
    shape = tuple(shape)
    size = math.prod(shape)
    if size > 2**32:  # JAX allows up to 2**64; no webjax backend holds 2**32 elements
        raise NotImplementedError(f"random bits for {size} elements (more than 2**32)")
    lo = lax.reshape(lax.iota(_U32, size), shape)
    return lax.broadcast(u32(0), shape), lo


# ---- keys ---------------------------------------------------------------------------------------
def seed_words(seed: int) -> tuple[int, int]:
    """The key words of a Python integer seed, as JAX makes them.

    JAX converts the seed to int64 (so it must fit one) and takes (seed >> 32, seed & 0xFFFFFFFF);
    with x64 off that int64 becomes an int32 first, so the high word is 0.
    """
    if not -(2**63) <= seed < 2**63:
        raise OverflowError(f"Python int {seed} too large to convert to int64")
    hi = (seed % 2**64) >> 32 if config.x64_enabled() else 0
    return hi, seed & 0xFFFFFFFF


def split_words(k0: Any, k1: Any, shape: Sequence[int]) -> tuple[Any, Any]:
    """New key words for every index of `shape` (fold-like split)."""
    hi, lo = iota_2x32(shape)
    return threefry2x32(k0, k1, hi, lo)


def bits32(k0: Any, k1: Any, shape: Sequence[int]) -> Any:
    """32 random bits per element of `shape`: the two hashed words xor-ed together."""
    hi, lo = iota_2x32(shape)
    y0, y1 = threefry2x32(k0, k1, hi, lo)
    return lax.bitwise_xor(y0, y1)


def bits64_words(k0: Any, k1: Any, shape: Sequence[int]) -> tuple[Any, Any]:
    """64 random bits per element as (high, low) uint32 words."""
    hi, lo = iota_2x32(shape)
    return threefry2x32(k0, k1, hi, lo)


def fold_in_words(k0: Any, k1: Any, data: Any) -> tuple[Any, Any]:
    """Hash the seed words (0, data) of a uint32 scalar under the key."""
    return threefry2x32(k0, k1, u32(0), data)


def threefry_2x32(keypair: Any, count: Any) -> Any:
    """Hash the uint32 array `count` under the key words `keypair = (k0, k1)`: its elements,
    flattened (padded with a zero to an even length), are cut into halves that are hashed as
    word pairs; the result has `count`'s shape (the `jax.extend.random` function)."""
    k0, k1 = keypair
    count = lax.to_array(count)
    aval = core.get_aval(count)
    if aval.dtype.name != "uint32":
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {aval.dtype.name}")
    n = aval.size
    flat = lax.reshape(count, (n,))
    if n % 2:
        flat = lax.concatenate([flat, lax.full((1,), 0, aval.dtype)], 0)
    half = (n + 1) // 2
    x0 = lax.slice(flat, (0,), (half,))
    x1 = lax.slice(flat, (half,), (2 * half,))
    y0, y1 = threefry2x32(k0, k1, x0, x1)
    out = lax.concatenate([y0, y1], 0)
    if n % 2:
        out = lax.slice(out, (0,), (n,))
    return lax.reshape(out, aval.shape)
