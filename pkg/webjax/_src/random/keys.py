"""jax.random's keys: raw uint32[2] threefry keys (JAX's legacy `PRNGKey`) and typed keys
(`jax.random.key`, a `PRNGKeyArray` over the same words), with the key-level operations
`split` and `fold_in` (threefry2x32 on partitionable counters, bit-exact with JAX).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import config, core, dtypes
from .. import tree as tree_public
from ..dispatch.basearray import Array
from ..dtypes import KEY_DTYPE, KeyDType
from ..jit import jit
from ..lax import lax
from ..numpy import creation, extended_dtypes
from ..numpy import indexing as jnp_indexing
from ..numpy.shape import ravel, reshape, squeeze, swapaxes, transpose
from ..tree_util import register_pytree_node
from . import threefry as prng

_U32 = dtypes.uint32


# ---- typed keys ----------------------------------------------------------------------------------
class PRNGKeyArray:
    """Typed keys (`jax.random.key`): shape S over uint32 words of shape S + (2,)."""

    __slots__ = ("_base",)

    def __init__(self, base: Any) -> None:
        self._base = base

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(core.get_aval(self._base).shape[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> KeyDType:
        return KEY_DTYPE

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized key array")
        return self.shape[0]

    def __getitem__(self, idx: Any) -> PRNGKeyArray:
        if idx is Ellipsis or (isinstance(idx, tuple) and Ellipsis in idx):
            raise NotImplementedError("Ellipsis indexing of key arrays")
        return PRNGKeyArray(self._base[idx])

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def reshape(self, *shape: Any, order: str = "C") -> PRNGKeyArray:
        dims = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return reshape(self, dims, order)

    # the element-moving methods, through jnp's functions (numpy/extended_dtypes.py)
    @property
    def T(self) -> PRNGKeyArray:
        return transpose(self)

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        perm = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        return transpose(self, perm or None)

    def ravel(self, order: str = "C") -> PRNGKeyArray:
        return ravel(self, order)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> PRNGKeyArray:
        return squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> PRNGKeyArray:
        return swapaxes(self, axis1, axis2)

    def take(self, indices: Any, axis: int | None = None, **kwargs: Any) -> PRNGKeyArray:
        return jnp_indexing.take(self, indices, axis, **kwargs)

    def copy(self) -> PRNGKeyArray:
        return self

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{self._base}"


register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None), lambda _, c: PRNGKeyArray(*c))
Array.register(PRNGKeyArray)  # typed keys are jax.Arrays, as in JAX
extended_dtypes.register(PRNGKeyArray, lambda k: k._base, PRNGKeyArray)


def _key_aval(keys: PRNGKeyArray) -> core.ShapedArray:
    """`jax.typeof(keys)`: ShapedArray(key<fry>[...]). Key dtypes are no array element types,
    so the aval is built around ShapedArray's dtype check; it is only ever inspected."""
    aval = object.__new__(core.ShapedArray)
    aval.shape, aval.weak_type = tuple(keys.shape), False
    aval.dtype = keys.dtype  # type: ignore[assignment]
    return aval


core.pytype_aval_mappings[PRNGKeyArray] = _key_aval
tree_public.OPAQUE.add(PRNGKeyArray)  # a leaf to users, as JAX's key arrays


def _is_typed(key: Any) -> bool:
    return isinstance(key, PRNGKeyArray)


def _check_data(name: str, data: Any) -> Any:
    aval = core.get_aval(data)
    if aval.dtype is not _U32 or not aval.shape or aval.shape[-1] != 2:
        raise TypeError(
            f"JAX encountered invalid PRNG key data: expected key_data.dtype = uint32 and "
            f"key_data.shape[-1] = 2 in {name}; got dtype={aval.dtype.name}, shape={aval.shape}"
        )
    return data


def _single_key(name: str, key: Any) -> tuple[Any, bool]:
    """The uint32[2] words of one key, and whether the key was typed."""
    typed = _is_typed(key)
    data = key._base if typed else _check_data(name, _asarray(key))
    if core.get_aval(data).shape != (2,):
        shape = core.get_aval(data).shape[:-1] if typed else core.get_aval(data).shape
        raise TypeError(
            f"{name} accepts a single key, but was given a key array of shape {shape} != (). "
            "Use jax.vmap for batching."
        )
    return data, typed


def _wrap(data: Any, typed: bool) -> Any:
    return PRNGKeyArray(data) if typed else data


def _asarray(x: Any) -> Any:
    if isinstance(x, core.Tracer) or hasattr(x, "aval"):
        return x
    return creation.asarray(x)


def _words(data: Any) -> tuple[Any, Any]:
    k0 = lax.reshape(lax.slice(data, (0,), (1,)), ())
    k1 = lax.reshape(lax.slice(data, (1,), (2,)), ())
    return k0, k1


def _stack_words(y0: Any, y1: Any) -> Any:
    nd = core.get_aval(y0).ndim
    return lax.concatenate([lax.expand_dims(y0, (nd,)), lax.expand_dims(y1, (nd,))], nd)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A raw uint32[2] threefry key from an integer seed (JAX's legacy key)."""
    _check_impl(impl)
    return _seed_data(seed)


def key(seed: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed threefry key from an integer seed."""
    _check_impl(impl)
    return PRNGKeyArray(_seed_data(seed))


def _check_impl(impl: Any) -> None:
    if impl is None:
        config.check_prng_impl()  # the default implementation (jax_default_prng_impl)
    elif str(impl) not in ("threefry2x32", "threefry"):
        raise NotImplementedError(f"PRNG implementation {impl!r}; webjax has threefry2x32 only")


def _seed_data(seed: Any) -> Any:
    if isinstance(seed, PRNGKeyArray):
        raise TypeError("PRNGKey accepts a scalar seed, but was given a key array.")
    if type(seed) is bool or isinstance(seed, float):
        raise TypeError(f"PRNGKey seed must be an integer; got {seed!r}")
    if isinstance(seed, int):
        hi, lo = prng.seed_words(seed)
        return creation.array([hi, lo], dtype=_U32)
    seed = _asarray(seed)
    aval = core.get_aval(seed)
    if aval.shape:
        raise TypeError(
            f"PRNGKey accepts a scalar seed, but was given an array of shape "
            f"{aval.shape} != (). Use jax.vmap for batching"
        )
    if aval.dtype.kind not in "iu":
        raise TypeError(f"PRNGKey seed must be an integer; got dtype {aval.dtype.name}")
    if aval.dtype.bits == 64:
        hi = lax.convert_element_type(
            lax.shift_right_logical(seed, lax.full((), 32, aval.dtype)), _U32
        )
    else:
        hi = prng.u32(0)
    lo = lax.convert_element_type(seed, _U32)
    return _stack_words(hi, lo)


def key_data(keys: Any) -> Any:
    """The uint32 words under a key array (raw keys pass through)."""
    return keys._base if _is_typed(keys) else _check_data("key_data", _asarray(keys))


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> PRNGKeyArray:
    """Typed keys over existing uint32[..., 2] words."""
    _check_impl(impl)
    return PRNGKeyArray(_check_data("wrap_key_data", _asarray(key_bits_array)))


def key_impl(keys: Any) -> str:
    return "threefry2x32"


# ---- key operations ------------------------------------------------------------------------------
def _split_data(data: Any, shape: tuple[int, ...]) -> Any:
    k0, k1 = _words(data)
    return _stack_words(*prng.split_words(k0, k1, shape))


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """`num` new keys (an int or a shape) derived from `key`."""
    data, typed = _single_key("split", key)
    shape = (int(num),) if isinstance(num, int) else core.canonicalize_shape(num)
    return _wrap(_split_jit(data, shape), typed)


def _fold_in_data(data: Any, x: Any) -> Any:
    k0, k1 = _words(data)
    return _stack_words(*prng.fold_in_words(k0, k1, x))


def fold_in(key: Any, data: Any) -> Any:
    """A new key that mixes the integer `data` into `key`."""
    kd, typed = _single_key("fold_in", key)
    if isinstance(data, int):
        x = prng.u32(data)
    else:
        x = _asarray(data)
        if core.get_aval(x).shape:
            raise TypeError(f"fold_in data must be a scalar, got shape {core.get_aval(x).shape}")
        x = lax.convert_element_type(x, _U32)
    return _wrap(_fold_in_jit(kd, x), typed)


_split_jit = jit(_split_data, static_argnums=(1,))
_fold_in_jit = jit(_fold_in_data)


def clone(key: Any) -> Any:
    """A copy of `key` (identity: webjax does not check key reuse)."""
    return key


def key_dtype(impl: Any = None) -> Any:
    """The dtype of typed keys (`key<fry>`, threefry2x32)."""
    _check_impl(impl)
    return KEY_DTYPE


__all__ = [
    "KeyDType", "PRNGKey", "PRNGKeyArray", "clone", "fold_in", "key", "key_data", "key_dtype",
    "key_impl", "split", "wrap_key_data",
]  # fmt: skip


# ---- the jax.extend.random spellings -------------------------------------------------------------
# webjax has one PRNG implementation; its name is what `impl=` arguments accept.
threefry_prng_impl = "threefry2x32"


def random_seed(seeds: Any, impl: Any) -> PRNGKeyArray:
    """A key array seeded by `seeds` under the implementation `impl`."""
    _check_impl(impl)
    return PRNGKeyArray(_seed_data(seeds))


def seed_with_impl(impl: Any, seed: Any) -> PRNGKeyArray:
    return random_seed(seed, impl)
