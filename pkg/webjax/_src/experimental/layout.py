"""`jax.experimental.layout`: `Layout` (the physical order of an array's dimensions), `Format`
(a layout with a sharding) and `with_layout_constraint`.

A layout says how elements are placed in memory, never what they are. webjax keeps every
buffer in row-major order, so a constraint is checked (types, ranks, a permutation) and the
values pass through unchanged, as JAX's do under any layout."""

from __future__ import annotations

from typing import Any

from ..core import get_aval
from ..sharding import Sharding
from ..tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten


class AutoLayout:
    """`Layout.AUTO`: let the compiler choose."""

    def __repr__(self) -> str:
        return "AUTO"


_AUTO = AutoLayout()


class Layout:
    """The order of an array's dimensions in memory, most major first, and its tiling."""

    AUTO = _AUTO

    def __init__(
        self,
        major_to_minor: tuple[int, ...],
        tiling: tuple[tuple[int, ...], ...] | None = None,
        sub_byte_element_size_in_bits: int = 0,
    ) -> None:
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(map(tuple, tiling))
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self) -> tuple[Any, ...]:
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __repr__(self) -> str:
        return (
            f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
            f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})"
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._key() == other._key()

    def update(self, **kwargs: Any) -> Layout:
        fields = {
            "major_to_minor": self.major_to_minor,
            "tiling": self.tiling,
            "sub_byte_element_size_in_bits": self.sub_byte_element_size_in_bits,
        }
        return Layout(**{**fields, **kwargs})

    def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError(
                "Length of major_to_minor and the rank of the value should match. Got "
                f"major_to_minor={self.major_to_minor} and shape={tuple(aval_shape)}"
            )
        if sorted(self.major_to_minor) != list(range(len(aval_shape))):
            raise ValueError(
                f"major_to_minor={self.major_to_minor} is not a permutation of the "
                f"dimensions of shape {tuple(aval_shape)}"
            )


class Format:
    """A layout (None, `Layout.AUTO` or a `Layout`) and a sharding (None or a `Sharding`)."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout: Any = None, sharding: Any = None) -> None:
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                f"Sharding has to be concrete when layout is of type {type(layout)}. Please "
                "pass a `jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` "
                f"to the sharding argument. Got sharding {sharding}"
            )
        if not isinstance(layout, (Layout, AutoLayout, type(None))):
            raise TypeError(
                "Invalid value received for the layout argument. Expected values are `None`, "
                f"`Layout.AUTO` or an instance of `Layout`. Got {layout} of type {type(layout)}"
            )
        if not isinstance(sharding, (Sharding, type(None))):
            raise TypeError(
                "Invalid value received for the sharding argument. Expected values are `None` "
                f"or an instance of `jax.Sharding`. Got {sharding} of type {type(sharding)}"
            )
        self.layout = layout
        self.sharding = sharding

    def __repr__(self) -> str:
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Format)
            and self.layout == other.layout
            and self.sharding == other.sharding
        )


def with_layout_constraint(x: Any, layouts: Any) -> Any:
    """`x` with each leaf constrained to the matching `Layout` (a prefix tree of `layouts`)."""
    leaves, tree = tree_flatten(x)
    prefix = tree_structure(layouts, is_leaf=lambda v: isinstance(v, Layout) or v is None)
    try:
        groups = prefix.flatten_up_to(x)
    except ValueError as e:
        raise ValueError(f"with_layout_constraint layouts: not a tree prefix of x: {e}") from None
    layout_leaves = tree_leaves(layouts, is_leaf=lambda v: isinstance(v, Layout) or v is None)
    flat: list[Any] = []
    for layout, group in zip(layout_leaves, groups, strict=True):
        flat += [layout] * len(tree_leaves(group))
    if any(not isinstance(layout, Layout) for layout in flat):
        raise ValueError(
            "layouts passed to `with_layout_constraint` must be of type `Layout`. Got "
            f"{[type(layout) for layout in flat]}"
        )
    for layout, leaf in zip(flat, leaves, strict=True):
        layout.check_compatible_aval(get_aval(leaf).shape)
    return tree_unflatten(tree, leaves)


__all__ = ["Format", "Layout", "with_layout_constraint"]
