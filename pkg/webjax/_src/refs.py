"""`jax.Ref`: a mutable array reference (`jax.new_ref`, `ref[idx]`, `ref[idx] = v`,
`jax.freeze`), eagerly.

A Ref holds an array and replaces it on every write (`.at[idx].set`); a write must match the
indexed shape and the dtype exactly, as JAX's do. JAX also lets a jitted or differentiated
function read and write refs as effects; webjax does not: a ref used while tracing raises
NotImplementedError."""

from __future__ import annotations

from typing import Any

from . import core
from .numpy import creation


class AbstractRef:
    """The type of a Ref: the abstract value of the array it holds."""

    def __init__(self, inner_aval: core.ShapedArray, memory_space: Any = None) -> None:
        self.inner_aval = inner_aval
        self.memory_space = memory_space

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: self.inner_aval.ndim)
    size = property(lambda self: self.inner_aval.size)
    weak_type = property(lambda self: self.inner_aval.weak_type)

    def __repr__(self) -> str:
        return f"Ref{{{self.inner_aval.str_short()}}}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractRef) and self.inner_aval == other.inner_aval

    def __hash__(self) -> int:
        return hash(("Ref", self.inner_aval))


def _untraced(what: str, *values: Any) -> None:
    # a ref read while tracing would be baked into the trace as a constant, and a later write
    # would not reach the cached program: refuse rather than go stale
    traced = not isinstance(core.find_cur_trace(), core.EvalTrace)
    if traced or any(isinstance(v, core.Tracer) for v in values):
        raise NotImplementedError(
            f"{what}: webjax has jax.Ref only outside transformations (no ref effects under "
            "jit, grad or vmap); read the ref outside and pass the array in"
        )


class Ref:
    """A mutable reference to an array (made by `jax.new_ref`)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    @property
    def aval(self) -> AbstractRef:
        return AbstractRef(core.get_aval(self._value))

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)

    def __len__(self) -> int:
        return len(self._value)

    def __getitem__(self, idx: Any) -> Any:
        _untraced("reading a jax.Ref", idx, *(idx if isinstance(idx, tuple) else ()))
        return self._value if idx is Ellipsis or idx == () else self._value[idx]

    def __setitem__(self, idx: Any, value: Any) -> None:
        _untraced("writing a jax.Ref", value, idx, *(idx if isinstance(idx, tuple) else ()))
        value = creation.asarray(value)
        whole = idx is Ellipsis or idx == ()
        expected = self._value.shape if whole else self._value[idx].shape
        # a write neither casts nor broadcasts (JAX's `swap` checks)
        if value.dtype != self._value.dtype:
            raise ValueError(
                f"Invalid dtype for `swap`. Ref dtype: {self._value.dtype}. "
                f"Value dtype: {value.dtype}. "
            )
        if value.shape != expected:
            raise ValueError(
                f"Invalid shape for `swap`. Ref shape: {self._value.shape}. Expected shape: "
                f"{expected}. Value shape: {value.shape}. "
            )
        self._value = value if whole else self._value.at[idx].set(value)

    def get(self) -> Any:
        return self[...]

    def set(self, value: Any) -> None:
        self[...] = value

    def __repr__(self) -> str:
        body = repr(self._value)
        return "Ref" + body[body.index("(") :] if body.startswith("Array(") else f"Ref({body})"


def new_ref(init_val: Any, *, memory_space: Any = None, kind: Any = None) -> Ref:
    """A Ref holding (a copy of) `init_val`."""
    _untraced("jax.new_ref", init_val)
    return Ref(creation.array(init_val))


def freeze(ref: Ref) -> Any:
    """The array a Ref holds (JAX consumes the ref; webjax leaves it usable)."""
    if not isinstance(ref, Ref):
        raise TypeError(f"freeze expects a jax.Ref, got {type(ref).__name__}")
    return ref._value


__all__ = ["AbstractRef", "Ref", "freeze", "new_ref"]
