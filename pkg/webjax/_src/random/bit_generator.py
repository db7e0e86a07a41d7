"""lax.rng_bit_generator: stateless random bits from a uint32[4] key, with the bits of XLA's
CPU bit generators (checked against real JAX), as a primitive of its own.

THREE_FRY: key words (k0, k1) key threefry2x32; words (k2, k3) are a 64-bit counter c. The
output is made of pairs (y0, y1) = threefry((k0, k1), c + i): along the first even dimension
of the shape (or, with none, the largest one padded to even), the two words of a pair are
adjacent halves, and the result is sliced back to the shape. PHILOX (and DEFAULT, XLA's CPU
default): Philox-4x32-10 under key (k0, k1) of counters (c + i, k0, k1), four words each, in
order. Narrow dtypes keep one word's low bits per element; uint64 takes two words. The new key
is the counter advanced past the words used.
"""

from __future__ import annotations

import enum
import math
import warnings
from typing import Any

from .. import config, core, dtypes
from ..interpreters import ad, batching
from ..lax import lax
from .threefry import threefry2x32, u32

_U32 = dtypes.uint32


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of rng_bit_generator (XLA's names)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


def _carry(total: Any, before: Any) -> Any:
    return lax.convert_element_type(lax.lt(total, before), _U32)


def _add_counter(lo: Any, hi: Any, n: Any) -> tuple[Any, Any, Any]:
    """(lo, hi) + n as a 64-bit counter of uint32 words (n < 2**32), and the carry out."""
    s = lax.add(lo, n)
    t = lax.add(hi, _carry(s, lo))
    return s, t, _carry(t, hi)


def _mulhilo(a: Any, m: int) -> tuple[Any, Any]:
    """(high, low) words of the 64-bit product a * m of uint32 a and constant m."""
    return lax.mulhi(a, u32(m)), lax.mul(a, u32(m))


_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _philox(c: list[Any], k0: Any, k1: Any) -> list[Any]:
    for _ in range(10):
        hi0, lo0 = _mulhilo(c[0], _PHILOX_M[0])
        hi1, lo1 = _mulhilo(c[2], _PHILOX_M[1])
        c = [
            lax.bitwise_xor(lax.bitwise_xor(hi1, c[1]), k0),
            lo1,
            lax.bitwise_xor(lax.bitwise_xor(hi0, c[3]), k1),
            lo0,
        ]
        k0, k1 = lax.add(k0, u32(_PHILOX_W[0])), lax.add(k1, u32(_PHILOX_W[1]))
    return c


def _counters(key: Any, n: int) -> tuple[Any, Any, Any, Any, Any, Any]:
    """Key words, counter words of n steps from the key's counter (and their carries out of
    64 bits), the new key."""
    k = [lax.squeeze(lax.slice(key, (i,), (i + 1,)), (0,)) for i in range(4)]
    idx = lax.iota(_U32, n)
    lo, hi, carry = _add_counter(lax.broadcast(k[2], (n,)), lax.broadcast(k[3], (n,)), idx)
    new_lo, new_hi, _ = _add_counter(k[2], k[3], u32(n))
    new_key = lax.concatenate([lax.broadcast(v, (1,)) for v in (k[0], k[1], new_lo, new_hi)], 0)
    return k[0], k[1], lo, hi, new_key, carry


def _threefry_words(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """uint32 words of `shape` in XLA's three-fry layout, and the new key."""
    if not shape:
        shape = (1,)
    even = [i for i, d in enumerate(shape) if d % 2 == 0]
    split = even[0] if even else max(range(len(shape)), key=lambda i: (shape[i], -i))
    padded = list(shape)
    padded[split] += padded[split] % 2
    half = list(padded)
    half[split] //= 2
    k0, k1, lo, hi, new_key, _ = _counters(key, math.prod(half))
    y0, y1 = threefry2x32(k0, k1, lo, hi)
    # the pair axis right after the split dimension, then merged into it
    words = lax.concatenate(
        [lax.reshape(y, (*half[: split + 1], 1, *half[split + 1 :])) for y in (y0, y1)],
        split + 1,
    )
    words = lax.reshape(words, tuple(padded))
    return lax.slice(words, (0,) * len(shape), shape), new_key


def _philox_words(key: Any, n: int) -> tuple[Any, Any]:
    m = -(-n // 4)
    k0, k1, lo, hi, new_key, carry = _counters(key, m)
    # a 128-bit counter: the carry out of (lo, hi) runs on into the key words
    c2, c3, _ = _add_counter(lax.broadcast(k0, (m,)), lax.broadcast(k1, (m,)), carry)
    ys = _philox([lo, hi, c2, c3], k0, k1)
    words = lax.reshape(lax.concatenate([lax.reshape(y, (m, 1)) for y in ys], 1), (4 * m,))
    return lax.slice(words, (0,), (n,)), new_key


def _generate(key: Any, shape: tuple[int, ...], dtype: Any, algorithm: Any) -> list[Any]:
    n = math.prod(shape)
    if n == 0:
        return [key, lax.full(shape, 0, dtype)]
    wide = dtype == dtypes.uint64
    words: tuple[Any, ...]
    if algorithm == RandomAlgorithm.RNG_THREE_FRY:
        if wide:  # one pair per element: (low, high) words
            k0, k1, lo, hi, new_key, _ = _counters(key, n)
            y0, y1 = threefry2x32(k0, k1, lo, hi)
            words = (lax.reshape(y0, shape), lax.reshape(y1, shape))
        else:
            w, new_key = _threefry_words(key, shape)
            words = (lax.reshape(w, shape),)
    else:
        w, new_key = _philox_words(key, 2 * n if wide else n)
        if wide:
            pairs = lax.reshape(w, (n, 2))
            words = tuple(lax.reshape(lax.slice(pairs, (0, j), (n, j + 1)), shape) for j in (0, 1))
        else:
            words = (lax.reshape(w, shape),)
    if wide:
        lo64, hi64 = (lax.convert_element_type(v, dtype) for v in words)
        bits = lax.bitwise_or(lo64, lax.shift_left(hi64, lax.full((), 32, dtype)))
    else:  # narrower dtypes keep each word's low bits
        bits = lax.convert_element_type(words[0], dtype)
    return [new_key, bits]


rng_bit_generator_p = core.Primitive("rng_bit_generator")
rng_bit_generator_p.multiple_results = True


@rng_bit_generator_p.def_abstract_eval
def _rbg_abstract(
    key: core.ShapedArray, *, shape: Any, dtype: Any, algorithm: Any, out_sharding: Any
) -> list[core.ShapedArray]:
    return [core.ShapedArray(key.shape, key.dtype), core.ShapedArray(tuple(shape), dtype)]


@rng_bit_generator_p.def_impl
def _rbg_impl(key: Any, *, shape: Any, dtype: Any, algorithm: Any, out_sharding: Any) -> list:
    return _generate(key, tuple(shape), dtype, algorithm)


ad.nondifferentiable.add(rng_bit_generator_p)


def _rbg_batch(vals: list[Any], dims: list[Any], **params: Any) -> tuple[list[Any], list[Any]]:
    """JAX's rule, kept for identical bits: the batch's bits are one draw of shape
    (batch, *shape) from the first key, and only the first key advances."""
    (keys,), (d,) = vals, dims
    size = core.get_aval(keys).shape[d]
    keys = batching.bdim_at_front(keys, d, size)
    first = lax.squeeze(lax.slice(keys, (0, 0), (1, 4)), (0,))
    new_key, bits = rng_bit_generator_p.bind(
        first, **{**params, "shape": (size, *tuple(params["shape"]))}
    )
    rest = lax.slice(keys, (1, 0), (size, 4))
    new_keys = lax.concatenate([lax.broadcast(new_key, (1,)), rest], 0)
    return [new_keys, bits], [0, 0]


batching.primitive_batchers[rng_bit_generator_p] = _rbg_batch

_BIT_DTYPES = ("uint8", "uint16", "uint32", "uint64")


def rng_bit_generator(
    key: Any,
    shape: Any,
    dtype: Any = dtypes.uint32,
    algorithm: Any = RandomAlgorithm.RNG_DEFAULT,
    *,
    out_sharding: Any = None,
) -> tuple[Any, Any]:
    """(new_key, bits): uniformly random bits of `shape` and unsigned `dtype` from a uint32[4]
    `key`, with XLA's CPU bit generators (DEFAULT is PHILOX, as on XLA's CPU)."""
    shape = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    dt = dtypes.dtype(dtype)
    if dt.name not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dt.name}")
    if dt == dtypes.uint64 and not config.x64_enabled():
        warnings.warn(
            "Explicitly requested dtype uint64 requested in rng_bit_generator is not available, "
            "and will be truncated to dtype uint32. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
            "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
            stacklevel=2,
        )
        dt = _U32
    key = lax.to_array(key)
    aval = core.get_aval(key)
    if aval.shape != (4,) or aval.dtype != _U32:
        raise TypeError(
            f"rng_bit_generator: the key must be a uint32[4] array, got "
            f"{aval.dtype.name}{list(aval.shape)}"
        )
    if not isinstance(algorithm, RandomAlgorithm):
        raise TypeError(
            f"rng_bit_generator: algorithm must be a lax.RandomAlgorithm, got {algorithm!r}"
        )
    outs = rng_bit_generator_p.bind(
        key, shape=shape, dtype=dt, algorithm=algorithm, out_sharding=out_sharding
    )
    return outs[0], outs[1]


__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_bit_generator_p"]
