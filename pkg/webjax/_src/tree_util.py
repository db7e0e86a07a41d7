"""Pytrees in pure Python: JAX's `tree_util` semantics without its C++ core.

Containers: tuple, list, dict (sorted keys), None (no leaves), namedtuples, and registered
classes/dataclasses. A `PyTreeDef` is a hashable, comparable description of a structure.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple, TypeVar


class _Node(NamedTuple):
    to_iter: Callable[[Any], tuple[Iterable[Any], Hashable]]
    from_iter: Callable[[Hashable, Iterable[Any]], Any]
    keys: Callable[[Any, Hashable], list[Any]] | None


_registry: dict[type, _Node] = {}


# ---- key path entries ----------------------------------------------------------------------------
# A key path names a leaf's place in a tree: one entry per level (JAX's type names).
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyLeafPair = tuple[KeyEntry, Any]
KeyPath = tuple[KeyEntry, ...]


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """The key path as a string: `['a'][0].b`, or with `simple=True` the bare keys (`a`, `0`,
    `b`) joined by `separator`."""
    return separator.join(_simple_entrystr(k) if simple else str(k) for k in keys)


def _simple_entrystr(key: Any) -> str:
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, (DictKey, FlattenedIndexKey)):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return str(key.name)
    return str(key)


# ---- registration ------------------------------------------------------------------------------
def register_pytree_node(
    nodetype: type,
    flatten_func: Callable,
    unflatten_func: Callable,
    flatten_with_keys_func: Callable | None = None,
) -> None:
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")

    def keys(x: Any, aux: Hashable) -> list[Any]:
        if flatten_with_keys_func is not None:
            return [k for k, _ in flatten_with_keys_func(x)[0]]
        return [FlattenedIndexKey(i) for i in range(len(list(flatten_func(x)[0])))]

    _registry[nodetype] = _Node(flatten_func, unflatten_func, keys)


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable,
    unflatten_func: Callable,
    flatten_func: Callable | None = None,
) -> None:
    def flat(x: Any) -> Any:
        if flatten_func is not None:
            return flatten_func(x)
        kids, aux = flatten_with_keys(x)
        return [v for _, v in kids], aux

    register_pytree_node(nodetype, flat, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type) -> type:
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)  # type: ignore
    return cls


def register_pytree_with_keys_class(cls: type) -> type:
    """Register a class with `tree_flatten_with_keys` and `tree_unflatten` methods (and
    `tree_flatten`, used when present) as a pytree node with keys."""
    flat = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(
        cls,
        lambda x: x.tree_flatten_with_keys(),
        cls.tree_unflatten,  # type: ignore[attr-defined]
        flat,
    )
    return cls


def register_static(cls: type) -> type:
    """Register `cls` as a pytree node without leaves: its instances are part of the tree
    structure (so `jit` treats them as static). Instances must be hashable."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def register_dataclass(
    nodetype: type,
    data_fields: Iterable[str] | None = None,
    meta_fields: Iterable[str] | None = None,
    drop_fields: Iterable[str] = (),
) -> type:
    """Register a dataclass (or, with both field lists, any class built by keyword) as a pytree:
    `data_fields` are children, `meta_fields` part of the structure. Without the lists the
    fields come from the dataclass, `metadata={"static": True}` marking the meta ones."""
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must both be specified when "
                f"either is specified. Got {data_fields=} {meta_fields=}."
            )
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when nodetype "
                f"is not a dataclass. Got {nodetype=}."
            )
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if {*meta, *data} != init_fields:
            msg = (
                "data_fields and meta_fields must include all dataclass fields with "
                "``init=True`` and only them."
            )
            if missing := init_fields - {*meta, *data}:
                msg += (
                    f" Missing fields: {missing}. Add them to drop_fields to suppress this error."
                )
            if unexpected := {*meta, *data} - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    if overlap := set(data) & set(meta):
        raise ValueError(
            f"data_fields and meta_fields must not overlap. Overlapping fields: {overlap}."
        )

    def flatten(x: Any) -> Any:
        return tuple(getattr(x, n) for n in data), tuple(getattr(x, n) for n in meta)

    def unflatten(aux: Any, kids: Iterable[Any]) -> Any:
        kw = dict(zip(meta, aux, strict=True))
        kw.update(zip(data, kids, strict=True))
        return nodetype(**kw)

    def with_keys(x: Any) -> Any:
        return [(GetAttrKey(n), getattr(x, n)) for n in data], tuple(getattr(x, n) for n in meta)

    register_pytree_node(nodetype, flatten, unflatten, with_keys)
    return nodetype


def _dict_flatten(d: dict) -> tuple[list[Any], Hashable]:
    keys = sorted(d)
    return [d[k] for k in keys], tuple(keys)


register_pytree_node(
    tuple,
    lambda t: (t, None),
    lambda _, c: tuple(c),
    lambda t: ([(SequenceKey(i), v) for i, v in enumerate(t)], None),
)
register_pytree_node(
    list,
    lambda t: (t, None),
    lambda _, c: list(c),
    lambda t: ([(SequenceKey(i), v) for i, v in enumerate(t)], None),
)
register_pytree_node(
    dict,
    _dict_flatten,
    lambda keys, c: dict(zip(keys, c, strict=True)),
    lambda d: ([(DictKey(k), d[k]) for k in sorted(d)], tuple(sorted(d))),
)
register_pytree_node(type(None), lambda _: ((), None), lambda _, c: None)
register_pytree_node(
    OrderedDict,
    lambda d: (list(d.values()), tuple(d.keys())),
    lambda keys, c: OrderedDict(zip(keys, c, strict=True)),
    lambda d: ([(DictKey(k), v) for k, v in d.items()], tuple(d.keys())),
)
register_pytree_node(
    defaultdict,
    lambda d: ([d[k] for k in sorted(d)], (d.default_factory, tuple(sorted(d)))),
    lambda aux, c: defaultdict(aux[0], zip(aux[1], c, strict=True)),
    lambda d: ([(DictKey(k), d[k]) for k in sorted(d)], (d.default_factory, tuple(sorted(d)))),
)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_for(x: Any) -> tuple[Any, _Node] | None:
    t = type(x)
    node = _registry.get(t)
    if node is not None:
        return t, node
    if _is_namedtuple(x):
        return t, _NAMEDTUPLE
    return None


_NAMEDTUPLE = _Node(
    lambda t: (tuple(t), None),
    lambda _, c: c,  # rebuilt with the type in PyTreeDef.unflatten
    lambda t, _: [GetAttrKey(f) for f in type(t)._fields],
)


# ---- treedefs ------------------------------------------------------------------------------------
class PyTreeDef:
    """A tree structure: node type, auxiliary data and children (leaves are `*`)."""

    __slots__ = ("kind", "aux", "children", "num_leaves", "num_nodes", "_hash")
    num_leaves: int
    num_nodes: int

    def __init__(self, kind: Any, aux: Any, children: tuple[PyTreeDef, ...]) -> None:
        self.kind = kind  # None for a leaf
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)
        self.num_nodes = 1 + sum(c.num_nodes for c in children)
        self._hash: int | None = None

    def _key(self) -> Any:
        return (self.kind, _hashable(self.aux), tuple(c._key() for c in self.children))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"Too {'few' if len(leaves) < self.num_leaves else 'many'} leaves for PyTreeDef; "
                f"expected {self.num_leaves}, got {len(leaves)}."
            )
        it = iter(leaves)
        return self._build(it)

    def _build(self, it: Any) -> Any:
        if self.kind is None:
            return next(it)
        kids = [c._build(it) for c in self.children]
        if self.kind in _registry:
            return _registry[self.kind].from_iter(self.aux, kids)
        return self.kind(*kids)  # namedtuple

    @property
    def node_data(self) -> Any:
        return (self.kind, self.aux)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        out: list[Any] = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, tree: Any, out: list[Any]) -> None:
        if self.kind is None:
            out.append(tree)
            return
        found = _node_for(tree)
        if found is None or found[0] is not self.kind:
            raise ValueError(
                f"Tree structure mismatch: expected {self.kind.__name__}, got "
                f"{type(tree).__name__} ({tree!r:.80})."
            )
        kids, aux = found[1].to_iter(tree)
        kids = list(kids)
        if len(kids) != len(self.children) or _hashable(aux) != _hashable(self.aux):
            raise ValueError(
                f"Tree structure mismatch: expected {self}, got a {self.kind.__name__} with "
                f"different contents ({tree!r:.80})."
            )
        for c, k in zip(self.children, kids, strict=True):
            c._flatten_up_to(k, out)

    def __repr__(self) -> str:
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        if self.kind is None:
            return "*"
        kids = [c._str() for c in self.children]
        if self.kind is tuple:
            return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
        if self.kind is list:
            return "[" + ", ".join(kids) + "]"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, kids)) + "}"
        if self.kind is type(None):
            return "None"
        if self.kind not in _registry:  # a namedtuple
            return f"CustomNode(namedtuple[{self.kind.__name__}], [{', '.join(kids)}])"
        return f"CustomNode({self.kind.__name__}[{self.aux}], [{', '.join(kids)}])"

    def __reduce__(self) -> Any:
        raise TypeError("PyTreeDef is not picklable in webjax")


def _hashable(aux: Any) -> Any:
    try:
        hash(aux)
        return aux
    except TypeError:
        return repr(aux)


_LEAF = PyTreeDef(None, None, ())


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    leaves: list[Any] = []
    treedef = _flatten(tree, is_leaf, leaves)
    return leaves, treedef


def _flatten(tree: Any, is_leaf: Any, leaves: list[Any]) -> PyTreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    found = _node_for(tree)
    if found is None:
        leaves.append(tree)
        return _LEAF
    kind, node = found
    kids, aux = node.to_iter(tree)
    return PyTreeDef(kind, aux, tuple(_flatten(k, is_leaf, leaves) for k in kids))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others, strict=True))


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = ...,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    leaves = tree_leaves(tree, is_leaf)
    if initializer is ...:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return all(tree_structure(x, is_leaf) == _LEAF for x in iterable)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.kind is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return list(treedef.children)


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    return PyTreeDef(tuple, None, tuple(treedefs))


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    flat = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(flat[0])
    inner = [inner_treedef.flatten_up_to(x) for x in flat]
    columns = zip(*inner, strict=True) if inner else [[] for _ in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten(outer_treedef.unflatten(col) for col in columns)


def _keys_of(tree: Any, kind: Any) -> list[Any]:
    if kind in (tuple, list):
        return [SequenceKey(i) for i in range(len(tree))]
    if kind in (dict, defaultdict):
        return [DictKey(k) for k in sorted(tree)]
    if kind is OrderedDict:
        return [DictKey(k) for k in tree]
    node = _registry.get(kind, _NAMEDTUPLE)
    _, aux = node.to_iter(tree)
    return node.keys(tree, aux) if node.keys else []


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """(key path, leaf) pairs and the structure; `is_leaf` gets `(path, x)` when
    `is_leaf_takes_path`."""
    out: list[tuple[KeyPath, Any]] = []
    stop = None
    if is_leaf is not None:
        stop = is_leaf if is_leaf_takes_path else (lambda _, x: is_leaf(x))

    def walk(x: Any, path: KeyPath) -> PyTreeDef:
        if stop is not None and stop(path, x):
            out.append((path, x))
            return _LEAF
        found = _node_for(x)
        if found is None:
            out.append((path, x))
            return _LEAF
        kind, node = found
        kids, aux = node.to_iter(x)
        kids = list(kids)
        keys = _keys_of(x, kind)
        return PyTreeDef(
            kind, aux, tuple(walk(c, (*path, k)) for k, c in zip(keys, kids, strict=True))
        )

    treedef = walk(tree, ())
    return out, treedef


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(p, x, *xs) for (p, x), *xs in zip(pairs, *others, strict=True))


def tree_reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: Any,
    *,
    identity: Any = ...,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Reduce the leaves pairwise as a balanced tree (`operation` must be associative)."""

    def reduce(xs: list[Any]) -> Any:
        if not xs:
            if identity is ...:
                raise TypeError("Must specify identity for parallel reduction of empty sequence.")
            return identity
        if len(xs) == 1:
            return xs[0]
        mid = len(xs) // 2
        return operation(reduce(xs[:mid]), reduce(xs[mid:]))

    return reduce(tree_leaves(tree, is_leaf))


def is_tree_node(typ: type) -> bool:
    """Whether `typ` is a pytree node type: built-in, registered, or a namedtuple type."""
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node() expects a type, got {typ!r}")
    return typ in _registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """The children of the node `tree` (not flattened further) and its auxiliary data."""
    found = _node_for(tree)
    if found is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    kids, aux = found[1].to_iter(tree)
    return tuple(kids), aux


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[KeyLeafPair], Hashable]:
    """As `flatten_one_level`, each child paired with its key."""
    found = _node_for(tree)
    if found is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    kids, aux = found[1].to_iter(tree)
    return tuple(zip(_keys_of(tree, found[0]), kids, strict=True)), aux


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """`full_tree`'s structure, each leaf the leaf of `prefix_tree` above it."""
    prefix = tree_structure(prefix_tree, is_leaf)
    try:
        subtrees = prefix.flatten_up_to(full_tree)
    except ValueError as e:
        raise ValueError(f"broadcast_prefix prefix_tree is not a tree prefix: {e}") from None
    leaves: list[Any] = []
    for leaf, sub in zip(tree_leaves(prefix_tree, is_leaf), subtrees, strict=True):
        leaves.extend([leaf] * tree_structure(sub).num_leaves)
    return tree_structure(full_tree).unflatten(leaves)


class Partial(functools.partial):
    """A functools.partial that is a pytree (its arguments are leaves), like jax.tree_util's."""

    def __new__(cls, func: Callable[..., Any], *args: Any, **kw: Any) -> Partial:
        if isinstance(func, functools.partial):
            original = func
            func = func.func
            args = original.args + args
            kw = {**original.keywords, **kw}
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)
