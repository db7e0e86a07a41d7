"""Arrays of an extended dtype (typed PRNG keys) through jnp's functions that move elements.

An array of an extended dtype of shape S stands over element data of shape S + T (a threefry
key's two uint32 words: T = (2,)). The functions that only move, select or copy whole elements
(stack, concatenate, where, take, transpose, reshape, tile, split, ...) apply to such arrays as in
JAX: the function runs on the elements' flat positions (int32 arrays of the arrays' shapes), and
each result's elements are gathered from the data by position. One rule serves every such
function, with the function's own axis handling, broadcasting and errors.

The layer that defines an extended array type registers it here (`register`): how to reach its
data and how to wrap data back. The numpy layer knows no key types itself.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from .. import core, dtypes
from ..lax import lax, slicing

# type -> (its element data, the array of that type over given data)
_TYPES: dict[type, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {}


def register(cls: type, data_of: Callable[[Any], Any], wrap: Callable[[Any], Any]) -> None:
    """Make arrays of type `cls` (an extended dtype) go through the element-moving functions:
    `data_of(x)` is x's element data (shape x.shape + T), `wrap(data)` the array over data."""
    _TYPES[cls] = (data_of, wrap)


def is_extended(x: Any) -> bool:
    return type(x) in _TYPES


def _holds(a: Any) -> bool:
    return type(a) in _TYPES or (isinstance(a, (list, tuple)) and any(type(e) in _TYPES for e in a))


class _Positions:
    """The flat positions of the extended arrays of one call, and their data end to end."""

    def __init__(self) -> None:
        self.data: list[Any] = []
        self.wrap: Callable[[Any], Any] | None = None
        self.trailing: tuple[int, ...] | None = None
        self.count = 0

    def of(self, x: Any) -> Any:
        data_of, wrap = _TYPES[type(x)]
        data = data_of(x)
        shape = tuple(x.shape)
        trailing = tuple(core.get_aval(data).shape[len(shape) :])
        if self.trailing is not None and (trailing != self.trailing or wrap is not self.wrap):
            raise _mixed(x.dtype)
        self.wrap, self.trailing = wrap, trailing
        n = math.prod(shape)
        self.data.append(lax.reshape(data, (n, *trailing)))
        pos = lax.add(lax.iota(dtypes.int32, n), lax.full((), self.count, dtypes.int32))
        self.count += n
        return lax.reshape(pos, shape)

    def gather(self, pos: Any) -> Any:
        assert self.wrap is not None and self.trailing is not None
        aval = core.get_aval(pos)
        if aval.dtype is not dtypes.int32:
            raise TypeError(f"the result of a function of key arrays has dtype {aval.dtype}")
        flat = self.data[0] if len(self.data) == 1 else lax.concatenate(self.data, 0)
        taken = slicing.index_take(flat, [lax.reshape(pos, (aval.size,))], (0,))
        return self.wrap(lax.reshape(taken, (*aval.shape, *self.trailing)))


def _mixed(dtype: Any) -> ValueError:
    """JAX's error for an extended array meeting others: it has no type promotion."""
    return ValueError(f"dtype={dtype} is not a valid dtype for JAX type promotion.")


def moves_elements(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, which only moves, selects or copies elements of its array arguments, made to take
    extended arrays too (positionally, or in a list such as stack's). An argument list that mixes
    extended and other arrays is JAX's TypeError."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _TYPES or not any(_holds(a) for a in args):
            return fn(*args, **kwargs)
        positions = _Positions()
        new_args = []
        for a in args:
            if type(a) in _TYPES:
                a = positions.of(a)
            elif isinstance(a, (list, tuple)) and any(type(e) in _TYPES for e in a):
                if not all(type(e) in _TYPES for e in a):
                    raise _mixed(next(e.dtype for e in a if type(e) in _TYPES))
                a = [positions.of(e) for e in a]
            new_args.append(a)
        out = fn(*new_args, **kwargs)
        if isinstance(out, (list, tuple)):
            return type(out)(positions.gather(o) for o in out)
        return positions.gather(out)

    return wrapper


def selects_elements(fn: Callable[..., Any]) -> Callable[..., Any]:
    """moves_elements for where(condition, x, y): x and y are both extended or neither."""
    moving = moves_elements(fn)

    @functools.wraps(fn)
    def wrapper(condition: Any, *args: Any, **kwargs: Any) -> Any:
        if not _TYPES or not any(type(a) in _TYPES for a in args):
            return fn(condition, *args, **kwargs)
        if not all(type(a) in _TYPES for a in args[:2]) or type(condition) in _TYPES:
            raise _mixed(next(a.dtype for a in (condition, *args) if type(a) in _TYPES))
        return moving(condition, *args, **kwargs)

    return wrapper
