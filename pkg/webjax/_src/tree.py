"""The pytree functions users call (`jax.tree_util`, `jax.tree`): typed PRNG key arrays are
leaves there, as in JAX, where a key array is an array of a key dtype.

Internally a key array is a pytree node over its uint32 words (`random.PRNGKeyArray`), so that
every transformation flattens it to arrays it can trace; webjax's own code uses
`_src.tree_util` directly. These wrappers add "key arrays are leaves" to `is_leaf`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
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


def tree_flatten_with_path(tree: Any, is_leaf: IsLeaf = None) -> Any:
    return _tu.tree_flatten_with_path(tree, _leaf(is_leaf))


def tree_leaves_with_path(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    return _tu.tree_leaves_with_path(tree, _leaf(is_leaf))


tree_map = _public(_tu.tree_map)
tree_map_with_path = _public(_tu.tree_map_with_path)
tree_all = _public(_tu.tree_all)


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    if inner_treedef is None:  # the inner structure of the first entry, keys as leaves
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = tree_structure(first)
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)
