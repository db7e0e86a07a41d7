"""`jax.experimental.hijax`: the classes libraries derive "high-level" JAX types and primitives
from (Flax NNX's hijax variables). webjax has no high-level types: definitions are accepted, so
a library that only defines them imports and runs with the feature off (Flax's default), and
binding a HiPrimitive or making a hi-type value raises NotImplementedError naming what is
missing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import ShapedArray
from ..interpreters.ad import Zero, instantiate_zeros, is_undefined_primal
from ..refs import AbstractRef

AbstractValue = ShapedArray


def _missing(what: str) -> NotImplementedError:
    return NotImplementedError(f"{what}: webjax has no hijax (high-level JAX types)")


class HiPrimitive:
    """A primitive over high-level types; definable, never bindable here."""

    multiple_results = False

    def __init__(self, name: str) -> None:
        self.name = name

    def bind(self, *args: Any, **params: Any) -> Any:
        raise _missing(f"binding the hijax primitive {self.name!r}")

    def __repr__(self) -> str:
        return self.name


class VJPHiPrimitive(HiPrimitive):
    """A HiPrimitive with a user VJP; definable, never bindable here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _missing("VJPHiPrimitive")


class HiType:
    """The base class of a high-level abstract value."""

    has_qdd = False


class MutableHiType(HiType):
    """The base class of a mutable high-level abstract value (one with a QDD)."""

    has_qdd = True


class _Unavailable:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _missing(type(self).__name__)


class AvalQDD(_Unavailable):
    """An aval with its quasi-dynamic data."""


class AvalMutableQDD(_Unavailable):
    """A mutable aval with its quasi-dynamic data."""


class HiPspec(_Unavailable):
    """A partition spec of a high-level type."""


class TransformedRef(_Unavailable):
    """A ref seen through indexing transforms."""


class aval_method:
    """Marks a method of a hi-type's value as callable on its abstract value too."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else self.fun.__get__(obj, owner)


class aval_property(property):
    """A property of a hi-type's value readable on its abstract value too."""


_HITYPES: dict[type, Callable[..., Any]] = {}


def register_hitype(cls: type, to_aval: Callable[..., Any]) -> None:
    """Record `cls` as a high-level type (its values never reach a webjax transformation)."""
    _HITYPES[cls] = to_aval


class _EffectTypeSet(set):  # type: ignore[type-arg]
    def add_type(self, effect_type: type) -> None:
        self.add(effect_type)


control_flow_allowed_effects = _EffectTypeSet()

__all__ = [
    "AbstractRef",
    "AbstractValue",
    "AvalMutableQDD",
    "AvalQDD",
    "HiPrimitive",
    "HiPspec",
    "HiType",
    "MutableHiType",
    "ShapedArray",
    "TransformedRef",
    "VJPHiPrimitive",
    "Zero",
    "aval_method",
    "aval_property",
    "control_flow_allowed_effects",
    "instantiate_zeros",
    "is_undefined_primal",
    "register_hitype",
]
