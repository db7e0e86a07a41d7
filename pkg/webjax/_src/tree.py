"""The pytree functions users call (`jax.tree_util`, `jax.tree`): typed PRNG key arrays are
leaves there, as in JAX, where a key array is an array of a key dtype.

Internally a key array is a pytree node over its uint32 words (`random.PRNGKeyArray`), so that
every transformation flattens it to arrays it can trace; webjax's own code uses
`_src.tree_util` directly. These wrappers add "key arrays are leaves" to `is_leaf`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any

from . import tree_util as _tu
from .tree_util import PyTreeDef

# Types that user-facing pytree functions treat as leaves (random.py adds the key array).
OPAQUE: set[type] = set()

IsLeaf = Callable[[Any], bool] | None


def _leaf(is_leaf: IsLeaf) -> IsLeaf:
    if not OPAQUE:
        return is_leaf
    if is_leaf is None:
        return lambda x: type(x) in OPAQUE
    return lambda x: type(x) in OPAQUE or bool(is_leaf(x))


def _public(fun: Callable[..., Any]) -> Any:
    @functools.wraps(fun)
    def call(*args: Any, is_leaf: IsLeaf = None, **kwargs: Any) -> Any:
        return fun(*args, is_leaf=_leaf(is_leaf), **kwargs)

    return call


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
    return _tu.tree_flatten(tree, _leaf(is_leaf))


def tree_leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    return _tu.tree_leaves(tree, _leaf(is_leaf))


def tree_structure(tree: Any, is_leaf: IsLeaf = None) -> PyTreeDef:
    return _tu.tree_structure(tree, _leaf(is_leaf))


def tree_reduce(
    function: Callable[[Any, Any], Any], tree: Any, initializer: Any = ..., is_leaf: IsLeaf = None
) -> Any:
    return _tu.tree_reduce(function, tree, initializer, _leaf(is_leaf))


def all_leaves(iterable: Iterable[Any], is_leaf: IsLeaf = None) -> bool:
    return _tu.all_leaves(iterable, _leaf(is_leaf))


def _leaf_with_path(is_leaf: Callable[..., bool] | None, takes_path: bool) -> Any:
    """`is_leaf` as a predicate of (path, x), key arrays leaves."""
    if is_leaf is None:
        return (lambda _, x: type(x) in OPAQUE) if OPAQUE else None
    if not takes_path:
        one = is_leaf
        is_leaf = lambda _, x: one(x)
    two = is_leaf
    return lambda p, x: type(x) in OPAQUE or bool(two(p, x))


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[_tu.KeyPath, Any]], PyTreeDef]:
    return _tu.tree_flatten_with_path(tree, _leaf_with_path(is_leaf, is_leaf_takes_path), True)


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[_tu.KeyPath, Any]]:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    return _tu.tree_map_with_path(
        f,
        tree,
        *rest,
        is_leaf=_leaf_with_path(is_leaf, is_leaf_takes_path),
        is_leaf_takes_path=True,
    )


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: IsLeaf = None) -> Any:
    return _tu.tree_broadcast(prefix_tree, full_tree, _leaf(is_leaf))


def tree_reduce_associative(
    operation: Callable[[Any, Any], Any], tree: Any, *, identity: Any = ..., is_leaf: IsLeaf = None
) -> Any:
    return _tu.tree_reduce_associative(operation, tree, identity=identity, is_leaf=_leaf(is_leaf))


def is_tree_node(typ: type) -> bool:
    return _tu.is_tree_node(typ) and typ not in OPAQUE


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    if type(tree) in OPAQUE:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return _tu.flatten_one_level(tree)


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[_tu.KeyLeafPair], Hashable]:
    if type(tree) in OPAQUE:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return _tu.flatten_one_level_with_keys(tree)


class PyTreeRegistry:
    """The registry of pytree node types as users see it (JAX's `default_registry`)."""

    def flatten(self, tree: Any, leaf_predicate: IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree: Any) -> tuple[Iterable[Any], Hashable] | None:
        return flatten_one_level(tree) if is_tree_node(type(tree)) else None

    def flatten_one_level_with_keys(self, tree: Any) -> Any:
        return flatten_one_level_with_keys(tree) if is_tree_node(type(tree)) else None

    def flatten_with_path(
        self, tree: Any, leaf_predicate: Callable[[Any, Any], bool] | None = None
    ) -> tuple[list[tuple[_tu.KeyPath, Any]], PyTreeDef]:
        return tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def is_node(self, typ: type) -> bool:
        return is_tree_node(typ)

    def register_node(
        self,
        nodetype: type,
        flatten_func: Callable[..., Any],
        unflatten_func: Callable[..., Any],
        flatten_with_keys_func: Callable[..., Any] | None = None,
    ) -> None:
        _tu.register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)

    def register_dataclass_node(
        self, nodetype: type, data_fields: list[str], meta_fields: list[str]
    ) -> None:
        _tu.register_dataclass(nodetype, data_fields, meta_fields)


default_registry = PyTreeRegistry()


class RegistryView(Mapping[type, Any]):
    """The registered node types (key arrays, leaves to users, left out): what libraries read
    as the pytree registry's table to ask "is this type a node"."""

    def __getitem__(self, typ: type) -> Any:
        if typ in OPAQUE:
            raise KeyError(typ)
        return _tu._registry[typ]

    def __iter__(self) -> Iterator[type]:
        return (t for t in _tu._registry if t not in OPAQUE)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, typ: object) -> bool:
        return typ in _tu._registry and typ not in OPAQUE


registry_view = RegistryView()


tree_map = _public(_tu.tree_map)
tree_all = _public(_tu.tree_all)


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    if inner_treedef is None:  # the inner structure of the first entry, keys as leaves
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = tree_structure(first)
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def static(**kwargs: Any) -> Any:
    """A dataclass field that `register_dataclass` treats as static (part of the structure):
    `dataclasses.field(**kwargs)` with `metadata["static"] = True`."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
