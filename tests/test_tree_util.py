"""Pytrees: webjax.tree_util / webjax.tree against real jax.tree_util (leaves, str(treedef),
key paths), plus registration of custom nodes."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
from typing import Any, NamedTuple

import numpy as np
import pytest

import webjax
from webjax import tree_util as tu


@pytest.fixture
def rtu():
    return pytest.importorskip("jax").tree_util


class Point(NamedTuple):
    x: Any
    y: Any


TREES = [
    1,
    None,
    (),
    [],
    {},
    (1,),
    (1, 2),
    [1, [2, (3, None)]],
    {"b": 1, "a": 2, "c": [3, 4]},
    {"z": {"y": (1, 2)}, "a": None},
    Point(1, (2, 3)),
    [Point(x=[1], y=None)],
    collections.OrderedDict([("b", 1), ("a", 2)]),
    (None, [None, 1]),
    {1: "x", 0: "y"},
    ((((1,),),),),
]


@pytest.mark.parametrize("tree", TREES, ids=[repr(t)[:40] for t in TREES])
def test_flatten_matches_jax(rtu, tree):
    leaves, td = tu.tree_flatten(tree)
    rleaves, rtd = rtu.tree_flatten(tree)
    assert leaves == rleaves
    assert td.num_leaves == rtd.num_leaves
    assert td.num_nodes == rtd.num_nodes
    assert str(td) == str(rtd)
    assert tu.tree_unflatten(td, leaves) == tree
    assert type(tu.tree_unflatten(td, leaves)) is type(tree)
    assert tu.tree_leaves(tree) == rtu.tree_leaves(tree)


@pytest.mark.parametrize("tree", TREES, ids=[repr(t)[:40] for t in TREES])
def test_paths_match_jax(rtu, tree):
    got = [(tu.keystr(p), v) for p, v in tu.tree_flatten_with_path(tree)[0]]
    want = [(rtu.keystr(p), v) for p, v in rtu.tree_flatten_with_path(tree)[0]]
    assert got == want
    assert str(tu.tree_flatten_with_path(tree)[1]) == str(rtu.tree_flatten_with_path(tree)[1])


def test_dict_keys_sorted_and_unflatten_order():
    leaves, td = tu.tree_flatten({"b": 2, "a": 1})
    assert leaves == [1, 2]
    out = tu.tree_unflatten(td, [10, 20])
    assert out == {"a": 10, "b": 20}


def test_keystr_variants(rtu):
    tree = {"a": [1, Point(2, 3)]}
    for (p, _), (rp, _) in zip(tu.tree_leaves_with_path(tree), rtu.tree_leaves_with_path(tree)):
        assert tu.keystr(p) == rtu.keystr(rp)
        assert tu.keystr(p, simple=True, separator="/") == rtu.keystr(
            rp, simple=True, separator="/"
        )


def test_tree_map_multiple_trees_and_is_leaf(rtu):
    a = {"x": (1, 2), "y": [3]}
    b = {"x": (10, 20), "y": [30]}
    assert tu.tree_map(lambda u, v: u + v, a, b) == rtu.tree_map(lambda u, v: u + v, a, b)
    is_leaf = lambda t: isinstance(t, tuple)
    got = tu.tree_map(lambda t: len(t) if isinstance(t, tuple) else t, a, is_leaf=is_leaf)
    want = rtu.tree_map(lambda t: len(t) if isinstance(t, tuple) else t, a, is_leaf=is_leaf)
    assert got == want == {"x": 2, "y": [3]}
    assert tu.tree_leaves(a, is_leaf=is_leaf) == rtu.tree_leaves(a, is_leaf=is_leaf)
    # None is an empty node, not a leaf, unless is_leaf says so
    assert tu.tree_map(lambda x: 0, [None, 1]) == [None, 0]
    got = tu.tree_map(lambda x: 0, [None, 1], is_leaf=lambda x: x is None)
    assert got == rtu.tree_map(lambda x: 0, [None, 1], is_leaf=lambda x: x is None) == [0, 0]


def test_tree_map_structure_mismatch_is_value_error(rtu):
    with pytest.raises(ValueError):
        rtu.tree_map(lambda a, b: a, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError):
        tu.tree_map(lambda a, b: a, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError):
        tu.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})
    # the second tree may have subtrees where the first has leaves (a prefix)
    assert tu.tree_map(lambda a, b: (a, b), [1, 2], [(3, 4), 5]) == [(1, (3, 4)), (2, 5)]


def test_tree_reduce_and_all(rtu):
    t = {"a": [1, 2], "b": (3, {"c": 4})}
    assert tu.tree_reduce(lambda a, b: a + b, t) == rtu.tree_reduce(lambda a, b: a + b, t) == 10
    assert tu.tree_reduce(lambda a, b: a * b, t, 10) == 240
    assert tu.tree_all([True, (True, 1)]) and not tu.tree_all([True, (0,)])
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])


def test_tree_structure_equality_and_hash(rtu):
    s1 = tu.tree_structure({"a": 1, "b": (2, 3)})
    s2 = tu.tree_structure({"b": ("x", "y"), "a": None.__class__})
    assert s1 == s2 and hash(s1) == hash(s2)
    assert s1 != tu.tree_structure({"a": 1, "b": [2, 3]})
    assert s1 != tu.tree_structure({"a": 1, "c": (2, 3)})
    assert tu.tree_structure((1, 2)) != tu.tree_structure([1, 2])
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))
    assert len({s1, s2, tu.tree_structure(1)}) == 2
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_leaf(tu.tree_structure((1,)))
    kids = tu.treedef_children(tu.tree_structure((1, [2, 3])))
    rkids = rtu.treedef_children(rtu.tree_structure((1, [2, 3])))
    assert [str(k) for k in kids] == [str(k) for k in rkids]
    assert str(tu.treedef_tuple(kids)) == str(rtu.treedef_tuple(rkids))


def test_unflatten_wrong_number_of_leaves():
    td = tu.tree_structure((1, 2))
    with pytest.raises(ValueError):
        tu.tree_unflatten(td, [1])
    with pytest.raises(ValueError):
        tu.tree_unflatten(td, [1, 2, 3])


def test_tree_transpose(rtu):
    tree = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure({"a": 0, "b": 0})
    got = tu.tree_transpose(outer, inner, tree)
    want = rtu.tree_transpose(
        rtu.tree_structure([0, 0, 0]), rtu.tree_structure({"a": 0, "b": 0}), tree
    )
    assert got == want == {"a": [1, 3, 5], "b": [2, 4, 6]}


def test_all_leaves(rtu):
    for it in ([1, 2, 3], [1, (2,)], [None], [], [Point(1, 2)]):
        assert tu.all_leaves(it) == rtu.all_leaves(it), it
    assert tu.all_leaves([(1,)], is_leaf=lambda x: isinstance(x, tuple))


# ---- custom nodes --------------------------------------------------------------------------------
class Box:
    def __init__(self, value: Any, meta: str) -> None:
        self.value, self.meta = value, meta

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and (self.value, self.meta) == (other.value, other.meta)


def _register_box(mod: Any) -> None:
    with contextlib.suppress(ValueError):  # registered by an earlier test in this process
        mod.register_pytree_node(
            Box, lambda b: ((b.value,), b.meta), lambda meta, kids: Box(kids[0], meta)
        )


def test_register_pytree_node(rtu):
    _register_box(tu)
    _register_box(rtu)
    tree = [Box((1, 2), "m"), 3]
    leaves, td = tu.tree_flatten(tree)
    rleaves, rtd = rtu.tree_flatten(tree)
    assert leaves == rleaves == [1, 2, 3]
    assert str(td) == str(rtd)
    assert tu.tree_unflatten(td, [4, 5, 6]) == [Box((4, 5), "m"), 6]
    assert tu.tree_structure(Box(1, "m")) != tu.tree_structure(Box(1, "n"))
    got = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(tree)[0]]
    want = [rtu.keystr(p) for p, _ in rtu.tree_flatten_with_path(tree)[0]]
    assert got == want
    with pytest.raises(ValueError):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, k: Box(None, a))


@tu.register_pytree_node_class
class Pair:
    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def tree_flatten(self) -> Any:
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux: Any, children: Any) -> Any:
        return cls(*children)


def test_register_pytree_node_class_through_transformations():
    import webjax.numpy as jnp

    p = Pair(jnp.ones(2), jnp.zeros(2))
    out = webjax.jit(lambda p: Pair(p.a * 2.0, p.b + p.a))(p)
    assert isinstance(out, Pair)
    assert out.a.tolist() == [2.0, 2.0] and out.b.tolist() == [1.0, 1.0]
    g = webjax.grad(lambda p: (p.a * p.b).sum())(p)
    assert isinstance(g, Pair) and g.a.tolist() == [0.0, 0.0] and g.b.tolist() == [1.0, 1.0]
    assert tu.tree_leaves(Pair(1, Pair(2, 3))) == [1, 2, 3]


@dataclasses.dataclass
class Params:
    w: Any
    b: Any
    name: str = dataclasses.field(default="p", metadata={"static": True})


def test_register_dataclass(rtu):
    tu.register_dataclass(Params, data_fields=["w", "b"], meta_fields=["name"])
    p = Params(1, (2, 3), "layer")
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    assert tu.tree_unflatten(td, [4, 5, 6]) == Params(4, (5, 6), "layer")
    assert td != tu.tree_structure(Params(1, (2, 3), "other"))
    assert [tu.keystr(k) for k, _ in tu.tree_flatten_with_path(p)[0]] == [".w", ".b[0]", ".b[1]"]


def test_register_dataclass_infers_fields():
    @dataclasses.dataclass
    class P2:
        u: Any
        tag: str = dataclasses.field(default="t", metadata={"static": True})

    tu.register_dataclass(P2)
    leaves, td = tu.tree_flatten(P2([1, 2], "x"))
    assert leaves == [1, 2]
    assert tu.tree_unflatten(td, [7, 8]) == P2([7, 8], "x")


def test_partial_is_pytree(rtu):
    import functools

    p = tu.Partial(functools.partial, 3)
    p = tu.Partial(lambda a, b: a + b, 1)
    assert p(2) == 3
    assert tu.tree_leaves(p) == [1]


# ---- jax.tree.* aliases --------------------------------------------------------------------------
def test_tree_aliases(rtu):
    import jax

    t = {"a": [1, 2], "b": (3, None)}
    assert webjax.tree.leaves(t) == jax.tree.leaves(t)
    assert str(webjax.tree.structure(t)) == str(jax.tree.structure(t))
    assert webjax.tree.map(lambda x: x * 2, t) == jax.tree.map(lambda x: x * 2, t)
    leaves, td = webjax.tree.flatten(t)
    assert webjax.tree.unflatten(td, leaves) == t
    assert webjax.tree.reduce(lambda a, b: a + b, t) == 6
    assert webjax.tree.all(t) is jax.tree.all(t)
    got = [(tu.keystr(p), v) for p, v in webjax.tree.leaves_with_path(t)]
    assert got == [(rtu.keystr(p), v) for p, v in jax.tree.leaves_with_path(t)]
    got = webjax.tree.map_with_path(lambda p, x: tu.keystr(p), t)
    assert got == jax.tree.map_with_path(lambda p, x: rtu.keystr(p), t)
    assert webjax.tree_util.tree_map is webjax.tree.map


TYPED_KEY_PROGRAM = """
k = jax.random.key(0)
state = {"k": k, "w": jnp.ones(2), "ks": jax.random.split(k, 3)}
out.append([getattr(x, "shape", None) for x in jax.tree_util.tree_leaves(state)])
out.append(jax.tree.map(lambda x: x.shape, state))
out.append(jax.tree_util.tree_structure(state).num_leaves)
out.append(str(jax.tree_util.tree_flatten_with_path(state)[0][0][0]))
out.append(jax.tree.all(jax.tree.map(lambda x: True, state)))
out.append(jax.tree.reduce(lambda a, b: a + 1, state, 0))
out.append(jax.tree.transpose(jax.tree.structure([0, 0]), None, [state, state])["k"][1].shape)


@jax.jit
def step(state):
    k1, k2 = jax.random.split(state["k"])
    return {"k": k1, "w": state["w"] + jax.random.normal(k2, (2,)), "ks": state["ks"]}


s2 = step(state)
out.append(jax.tree.map(lambda x: x.shape, s2))
out.append(jax.random.key_data(s2["k"]).tolist())
out.append(jax.vmap(lambda kk: jax.random.uniform(kk))(state["ks"]).tolist())
"""


def test_typed_keys_are_leaves_to_users():
    # jax.tree_util / jax.tree see a key array as one leaf (JAX's key arrays are arrays of a
    # key dtype); transformations still trace through it
    jax = pytest.importorskip("jax")

    def run(mod, jnp_mod):
        out: list = []
        exec(TYPED_KEY_PROGRAM, {"jax": mod, "jnp": jnp_mod, "out": out})
        return out

    got = run(webjax, webjax.numpy)
    want = run(jax, jax.numpy)
    assert got[:-1] == want[:-1]
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-6)


# ---- the rest of jax.tree_util: one level, broadcast, keys classes, static, registry ----------
ONE_LEVEL = [
    {"b": 1, "a": (2, 3)},
    [1, [2]],
    (1, None),
    Point(1, [2]),
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.defaultdict(int, {"b": 1, "a": 2}),
    None,
]


@pytest.mark.parametrize("tree", ONE_LEVEL, ids=[repr(t)[:30] for t in ONE_LEVEL])
def test_flatten_one_level_matches_jax(rtu, tree):
    kids, _ = tu.flatten_one_level(tree)
    rkids, _ = rtu.flatten_one_level(tree)
    assert list(kids) == list(rkids)
    pairs, _ = tu.flatten_one_level_with_keys(tree)
    rpairs, _ = rtu.flatten_one_level_with_keys(tree)
    if isinstance(tree, Point):  # jaxlib 0.10.2 names every field of a namedtuple by its first
        rpairs = [(rtu.GetAttrKey(f), v) for f, (_, v) in zip(Point._fields, rpairs)]
    assert [(str(k), v) for k, v in pairs] == [(str(k), v) for k, v in rpairs]
    assert tu.is_tree_node(type(tree)) is rtu.is_tree_node(type(tree)) is True
    assert tu.default_registry.is_node(type(tree))


def test_flatten_one_level_of_a_leaf(rtu):
    for mod in (tu, rtu):
        with pytest.raises(ValueError, match="can't tree-flatten type"):
            mod.flatten_one_level(1.0)
        assert mod.is_tree_node(int) is False
        assert mod.default_registry.flatten_one_level(1.0) is None


def test_tree_broadcast_and_reduce_associative(rtu):
    import jax

    cases = [
        ([1, 2], [(3, 4), {"a": 5, "b": (6,)}], None),
        (1, {"x": [1, 2], "y": None}, None),
        ({"a": 0, "b": 1}, {"a": (1, 2), "b": [3]}, None),
        ([(1, 2), 3], [(7, 8), [9, 9]], lambda x: isinstance(x, tuple)),
    ]
    for prefix, full, is_leaf in cases:
        want = rtu.tree_broadcast(prefix, full, is_leaf=is_leaf)
        assert tu.tree_broadcast(prefix, full, is_leaf=is_leaf) == want
        assert webjax.tree.broadcast(prefix, full, is_leaf=is_leaf) == want
    with pytest.raises(ValueError):
        rtu.tree_broadcast([1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        tu.tree_broadcast([1, 2], [1, 2, 3])
    seen: list = []

    def op(a, b):
        seen.append((a, b))
        return a + b

    t = {"a": [1, 2, 3], "b": (4, 5)}
    assert tu.tree_reduce_associative(op, t) == 15
    mine, seen[:] = list(seen), []
    assert rtu.tree_reduce_associative(op, t) == 15
    assert mine == seen  # the same pairing order
    assert webjax.tree.reduce_associative(op, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(op, [])
    assert jax.tree.reduce_associative(op, [], identity=0) == 0


def test_is_leaf_takes_path(rtu):
    t = {"a": [1, 2], "b": {"c": [3, 4]}}
    stop = lambda p, x: len(p) == 2
    for fn in ("tree_flatten_with_path", "tree_leaves_with_path"):
        got = getattr(tu, fn)(t, stop, is_leaf_takes_path=True)
        want = getattr(rtu, fn)(t, stop, is_leaf_takes_path=True)
        if fn == "tree_flatten_with_path":
            assert str(got[1]) == str(want[1])
            got, want = got[0], want[0]
        assert [(tu.keystr(p), v) for p, v in got] == [(rtu.keystr(p), v) for p, v in want]
    f = lambda p, x: tu.keystr(p, simple=True, separator="/")
    rf = lambda p, x: rtu.keystr(p, simple=True, separator="/")
    got = tu.tree_map_with_path(f, t, is_leaf=stop, is_leaf_takes_path=True)
    assert got == rtu.tree_map_with_path(rf, t, is_leaf=stop, is_leaf_takes_path=True)


def test_keystr_simple_of_every_key_kind(rtu):
    _register_box(tu)
    _register_box(rtu)
    t = {"a": [Point(1, Box(2, "m"))], "3": collections.OrderedDict(z=4)}
    got = [tu.keystr(p, simple=True, separator="|") for p, _ in tu.tree_leaves_with_path(t)]
    want = [rtu.keystr(p, simple=True, separator="|") for p, _ in rtu.tree_leaves_with_path(t)]
    assert got == want
    got = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(t)]
    assert got == [rtu.keystr(p) for p, _ in rtu.tree_leaves_with_path(t)]


def _keys_class(mod: Any) -> type:
    @mod.register_pytree_with_keys_class
    class Named:
        def __init__(self, x: Any, y: Any) -> None:
            self.x, self.y = x, y

        def tree_flatten_with_keys(self) -> Any:
            return ((mod.GetAttrKey("x"), self.x), (mod.DictKey("why"), self.y)), "aux"

        @classmethod
        def tree_unflatten(cls, aux: Any, kids: Any) -> Any:
            return cls(*kids)

    return Named


def test_register_pytree_with_keys_class_and_static(rtu):
    Named, RNamed = _keys_class(tu), _keys_class(rtu)
    got = tu.tree_flatten_with_path([Named(1, (2, 3))])
    want = rtu.tree_flatten_with_path([RNamed(1, (2, 3))])
    assert [(tu.keystr(p), v) for p, v in got[0]] == [(rtu.keystr(p), v) for p, v in want[0]]
    assert tu.tree_leaves(tu.tree_unflatten(got[1], [4, 5, 6])[0].y) == [5, 6]

    class Tag(str):
        pass

    tu.register_static(Tag)
    leaves, td = tu.tree_flatten({"t": Tag("add"), "v": 1})
    assert leaves == [1] and tu.tree_unflatten(td, [2]) == {"t": "add", "v": 2}
    assert td != tu.tree_structure({"t": Tag("sub"), "v": 1})
    calls = []

    @webjax.jit
    def f(x, tag):
        calls.append(tag)
        return x + 1 if tag == "add" else x - 1

    assert float(f(1.0, Tag("add"))) == 2.0 and float(f(1.0, Tag("sub"))) == 0.0
    assert len(calls) == 2


def test_register_dataclass_checks_and_static_field(rtu):
    import jax

    for mod, tree in ((tu, webjax.tree), (rtu, jax.tree)):

        @dataclasses.dataclass
        class Op:
            x: Any
            op: str = tree.static(default="add")

        mod.register_dataclass(Op)
        leaves, td = mod.tree_flatten(Op(1))
        assert leaves == [1] and mod.tree_unflatten(td, [5]) == Op(5)

        @dataclasses.dataclass
        class Two:
            a: Any
            b: Any

        with pytest.raises(TypeError, match="must both be specified"):
            mod.register_dataclass(Two, data_fields=["a"])
        with pytest.raises(ValueError, match="Missing fields"):
            mod.register_dataclass(Two, data_fields=["a"], meta_fields=[])
        with pytest.raises(ValueError, match="overlap"):
            mod.register_dataclass(Two, data_fields=["a", "b"], meta_fields=["a"], drop_fields=[])
        mod.register_dataclass(Two, data_fields=["a"], meta_fields=[], drop_fields=["b"])


def test_default_registry_and_key_types(rtu):
    t = {"a": (1, 2), "b": None}
    leaves, td = tu.default_registry.flatten(t)
    rleaves, rtd = rtu.default_registry.flatten(t)
    assert leaves == rleaves and str(td) == str(rtd)
    got = tu.default_registry.flatten_with_path(t, lambda p, x: isinstance(x, tuple))[0]
    want = rtu.default_registry.flatten_with_path(t, lambda p, x: isinstance(x, tuple))[0]
    assert [(tu.keystr(p), v) for p, v in got] == [(rtu.keystr(p), v) for p, v in want]
    assert tu.KeyPath == tuple[tu.KeyEntry, ...]
    # key arrays are leaves to users, as JAX's
    k = webjax.random.key(0)
    assert not tu.is_tree_node(type(k))
    with pytest.raises(ValueError):
        tu.flatten_one_level(k)
