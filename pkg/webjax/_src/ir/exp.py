"""Hash-consed scalar expressions: the body of every kernel.

An `Exp` is interned by (op, dtype, arg, children): structurally equal expressions are the same
object, so equality is identity, hashing is O(1) and cache keys are exact. The intern table is
weak, so expressions die with their users. Builders fold constants and simplify index
arithmetic with range analysis (tinygrad's symbolic idea, written for C-style idiv/mod):
`(i * 6 + j) // 6 -> i` when `0 <= j < 6`.
"""

from __future__ import annotations

import math
import typing
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from .. import dtypes as dt
from ..dtypes import DType
from . import scalar
from .ops import BINARY, COMMUTATIVE, COMPARE, FLOAT_ONLY, REDUCERS, UNARY, Op

# The intern table: key -> weak reference to the node, removed by the reference's callback when
# the node dies (a plain dict and KeyedRef: WeakValueDictionary's Python-level `get` costs
# more than the rest of `make`, which every eager op and jit call runs many times).
_INTERN: dict[tuple[Any, ...], weakref.KeyedRef] = {}


def _forget(ref: weakref.KeyedRef) -> None:
    if _INTERN.get(ref.key) is ref:  # not a newer node under the same key
        del _INTERN[ref.key]


def interned() -> int:
    """How many live nodes the intern table holds (tests check that it does not leak)."""
    return len(_INTERN)


_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _arg_key(arg: Any) -> Any:
    t = type(arg)
    if t is int or t is str or arg is None:  # the common cases first (exact types)
        return arg
    if isinstance(arg, float):  # distinguishes -0.0, and -NaN from NaN (bitcasts see signs)
        return ("f", arg.hex(), math.copysign(1.0, arg) < 0)
    if isinstance(arg, bool):
        return ("b", arg)
    if isinstance(arg, (int, str, Op, DType)) or arg is None:
        return arg
    if isinstance(arg, tuple):
        return tuple(_arg_key(a) for a in arg)
    return ("obj", id(arg))  # buffers: identity (the node keeps the object alive)


class Exp:
    """One IR node. Never construct directly: use `Exp.make` or the builders below."""

    __slots__ = ("op", "dtype", "src", "arg", "_range", "_info", "_bufs", "__weakref__")

    op: Op
    dtype: DType
    src: tuple[Exp, ...]
    arg: Any
    _range: tuple[int, int] | tuple[()] | None
    _info: tuple[int, bool, bool] | None
    _bufs: frozenset[int] | None

    @staticmethod
    def make(op: Op, dtype: DType, src: tuple[Exp, ...] = (), arg: Any = None) -> Exp:
        key = (op, id(dtype), _arg_key(arg), tuple(map(id, src)))  # dtypes are singletons
        ref = _INTERN.get(key)
        node = ref() if ref is not None else None
        if node is None:
            node = object.__new__(Exp)
            node.op, node.dtype, node.src, node.arg = op, dtype, src, arg
            node._range = None
            node._info = None
            node._bufs = None
            _INTERN[key] = weakref.KeyedRef(node, _forget, key)
        return node

    def __repr__(self) -> str:
        return render(self)

    def __reduce__(self) -> Any:
        raise TypeError("Exp nodes are not picklable")

    # -- traversal ---------------------------------------------------------------------------
    def toposort(self) -> list[Exp]:
        """Nodes in dependency order (children first), each once."""
        order: list[Exp] = []
        seen: set[int] = set()
        stack: list[tuple[Exp, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((s, False) for s in reversed(node.src) if id(s) not in seen)
        return order

    def walk(self) -> Iterator[Exp]:
        return iter(self.toposort())

    # -- ranges ------------------------------------------------------------------------------
    @property
    def vrange(self) -> tuple[int, int] | None:
        """Inclusive integer bounds, or None for non-integer / unknown."""
        if self._range is None:
            self._range = _compute_range(self) or ()
        return self._range or None

    @property
    def info(self) -> tuple[int, bool, bool]:
        """(size estimate, reads a buffer, holds a REDUCE), cached per node: O(1) per op in
        eager chains. The size counts shared children once per use (an upper bound)."""
        if self._info is None:
            size, load, red = 1, self.op is Op.LOAD, self.op is Op.REDUCE
            for s in self.src:
                n, ld, rd = s.info
                size, load, red = min(size + n, 1 << 30), load or ld, red or rd
            self._info = (size, load, red)
        return self._info

    def exact_size(self) -> int:
        """The number of distinct nodes; remembered so that parents' estimates tighten."""
        n = len(self.toposort())
        info = self.info
        self._info = (n, info[1], info[2])
        return n

    @property
    def buffer_ids(self) -> frozenset[int]:
        """ids of the buffer objects (non-slot LOAD args) this expression reads, cached."""
        if self._bufs is None:
            ids: set[int] = set()
            if self.op is Op.LOAD and not isinstance(self.arg, int):
                ids.add(id(self.arg))
            for s in self.src:
                ids |= s.buffer_ids
            self._bufs = frozenset(ids)
        return self._bufs

    @property
    def is_const(self) -> bool:
        return self.op is Op.CONST


# ---- range analysis ---------------------------------------------------------------------------
def _dtype_range(d: DType) -> tuple[int, int] | None:
    if d.kind in "iu":
        return dt.iinfo_bounds(d)
    if d.kind == "b":
        return (0, 1)
    return None


def _compute_range(e: Exp) -> tuple[int, int] | None:
    d = e.dtype
    if d.kind not in "iub":
        return None
    full = _dtype_range(d)
    r = _raw_range(e)
    if r is None or full is None:
        return full
    if r[0] < full[0] or r[1] > full[1]:
        return full  # may wrap: give up precision
    return r


def _raw_range(e: Exp) -> tuple[int, int] | None:
    op = e.op
    if op is Op.CONST:
        v = int(e.arg)
        return (v, v)
    if op in (Op.IDX, Op.RIDX):
        return (0, max(int(e.arg) - 1, 0))
    if op is Op.CAST and e.src[0].dtype.kind in "iub":
        return e.src[0].vrange
    maybe = [s.vrange for s in e.src]
    if op is Op.WHERE:
        a, b = maybe[1], maybe[2]
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if any(r is None for r in maybe):
        return None
    rs = typing.cast(list[tuple[int, int]], maybe)
    if op is Op.ADD:
        return (rs[0][0] + rs[1][0], rs[0][1] + rs[1][1])
    if op is Op.SUB:
        return (rs[0][0] - rs[1][1], rs[0][1] - rs[1][0])
    if op is Op.MUL:
        c = [x * y for x in rs[0] for y in rs[1]]
        return (min(c), max(c))
    if op in (Op.DIV, Op.MOD) and e.src[1].is_const and int(e.src[1].arg) > 0 and rs[0][0] >= 0:
        k = int(e.src[1].arg)
        if op is Op.DIV:
            return (rs[0][0] // k, rs[0][1] // k)
        return (0, min(k - 1, rs[0][1]))
    if op is Op.MAX:
        return (max(rs[0][0], rs[1][0]), max(rs[0][1], rs[1][1]))
    if op is Op.MIN:
        return (min(rs[0][0], rs[1][0]), min(rs[0][1], rs[1][1]))
    return None


# ---- builders --------------------------------------------------------------------------------
def const(value: Any, dtype: DType) -> Exp:
    return Exp.make(Op.CONST, dtype, (), scalar.normalize(dtype, value))


def idx(size: int) -> Exp:
    return Exp.make(Op.IDX, dt.int32, (), int(size))


def ridx(size: int) -> Exp:
    return Exp.make(Op.RIDX, dt.int32, (), int(size))


def load(buffer: Any, index: Exp, dtype: DType) -> Exp:
    assert index.dtype is dt.int32, index.dtype
    return Exp.make(Op.LOAD, dtype, (index,), buffer)


def unary(op: Op, x: Exp) -> Exp:
    assert op in UNARY and op not in (Op.CAST, Op.BITCAST), op
    if op in FLOAT_ONLY and x.dtype.kind != "f" and op is not Op.ISFINITE:
        raise TypeError(f"{op.value} needs a float operand, got {x.dtype}")
    out = dt.bool_ if op is Op.ISFINITE else x.dtype
    if x.is_const:
        return const(scalar.apply(op, out, (x.arg,), x.dtype), out)
    if op is Op.NEG and x.op is Op.NEG:
        return x.src[0]
    if op is Op.NOT and x.op is Op.NOT:
        return x.src[0]
    return Exp.make(op, out, (x,))


def cast(x: Exp, dtype: DType) -> Exp:
    if x.dtype is dtype:
        return x
    if x.is_const:
        return const(scalar.cast(x.arg, x.dtype, dtype), dtype)
    return Exp.make(Op.CAST, dtype, (x,))


def bitcast(x: Exp, dtype: DType) -> Exp:
    if x.dtype is dtype:
        return x
    if x.dtype.itemsize != dtype.itemsize:
        raise TypeError(f"bitcast between {x.dtype} and {dtype} changes the width")
    if x.is_const:
        return const(scalar.bitcast(x.arg, x.dtype, dtype), dtype)
    return Exp.make(Op.BITCAST, dtype, (x,))


def where(c: Exp, t: Exp, f: Exp) -> Exp:
    assert c.dtype is dt.bool_ and t.dtype is f.dtype, (c.dtype, t.dtype, f.dtype)
    if c.is_const:
        return t if c.arg else f
    if t is f:
        return t
    return Exp.make(Op.WHERE, t.dtype, (c, t, f))


def reduce(op: Op, body: Exp, size: int) -> Exp:
    assert op in REDUCERS, op
    if size == 0:
        return const(scalar.identity(op, body.dtype), body.dtype)
    return Exp.make(Op.REDUCE, body.dtype, (body,), (op, int(size)))


def binary(op: Op, a: Exp, b: Exp) -> Exp:
    assert op in BINARY, op
    if a.dtype is not b.dtype:
        raise TypeError(f"{op.value} operands differ in dtype: {a.dtype} vs {b.dtype}")
    out = dt.bool_ if op in COMPARE else a.dtype
    if a.is_const and b.is_const:
        return const(scalar.apply(op, out, (a.arg, b.arg), a.dtype), out)
    if op in COMMUTATIVE and a.is_const:
        a, b = b, a  # constants on the right
    simplified = _simplify(op, a, b) if a.dtype.kind in "iu" else _simplify_float(op, a, b)
    if simplified is not None:
        return simplified
    return Exp.make(op, out, (a, b))


def _simplify_float(op: Op, a: Exp, b: Exp) -> Exp | None:
    # Only rewrites that are exact in IEEE arithmetic (x*1, x/1, x-0, x+(-0)).
    if not b.is_const:
        return None
    v = b.arg
    if op in (Op.MUL, Op.DIV) and v == 1.0:
        return a
    if op is Op.SUB and v == 0.0 and str(v) == "0.0":
        return a
    if op is Op.ADD and v == 0.0 and str(v) == "-0.0":
        return a
    return None


def _terms(e: Exp) -> list[Exp]:
    if e.op is Op.ADD:
        return _terms(e.src[0]) + _terms(e.src[1])
    return [e]


def _coef(e: Exp) -> int:
    if e.is_const:
        return int(e.arg)
    if e.op is Op.MUL and e.src[1].is_const:
        return int(e.src[1].arg)
    return 1


def _sum(terms: list[Exp], dtype: DType) -> Exp:
    if not terms:
        return const(0, dtype)
    acc = terms[0]
    for t in terms[1:]:
        acc = binary(Op.ADD, acc, t)
    return acc


def _div_exact(t: Exp, k: int) -> Exp:
    if t.is_const:
        return const(int(t.arg) // k, t.dtype)
    return binary(Op.MUL, t.src[0], const(int(t.src[1].arg) // k, t.dtype))


def _simplify(op: Op, a: Exp, b: Exp) -> Exp | None:
    """Integer rewrites valid under wrap-around semantics when ranges prove no wrap."""
    d = a.dtype
    if b.is_const:
        v = int(b.arg)
        if op in (Op.ADD, Op.SUB, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.SHRL) and v == 0:
            return a
        if op in (Op.MUL, Op.DIV) and v == 1:
            return a
        if op is Op.MUL and v == 0:
            return b
        if op is Op.MOD and v == 1:
            return const(0, d)
        if op is Op.ADD and a.op is Op.ADD and a.src[1].is_const:  # (x + c1) + c2
            return binary(Op.ADD, a.src[0], const(int(a.src[1].arg) + v, d))
        if op is Op.MUL and a.op is Op.MUL and a.src[1].is_const:  # (x * c1) * c2
            return binary(Op.MUL, a.src[0], const(int(a.src[1].arg) * v, d))
        ra = a.vrange
        exact = ra is not None and ra != _dtype_range(d)  # a proven range: nothing wrapped
        if op in (Op.DIV, Op.MOD) and v > 0 and exact and ra is not None and ra[0] >= 0:
            return _simplify_divmod(op, a, v)
        if op in COMPARE and ra is not None:
            return _fold_compare(op, ra, (v, v))
    if op is Op.ADD:
        for p, q in ((a, b), (b, a)):
            merged = _merge_digits(p, q)
            if merged is not None:
                return merged
        if a.op is Op.ADD:  # (y + p) + q with p + q merging: a row-major index's last terms
            for keep, p in ((a.src[0], a.src[1]), (a.src[1], a.src[0])):
                for u, w in ((p, b), (b, p)):
                    merged = _merge_digits(u, w)
                    if merged is not None:
                        return binary(Op.ADD, keep, merged)
    if op in COMPARE and a.vrange is not None and b.vrange is not None:
        return _fold_compare(op, a.vrange, b.vrange)
    return None


def _merge_digits(p: Exp, q: Exp) -> Exp | None:
    """p + q for p = (x / k) * k or ((x / k) % m) * k and q = x % k: x, or x % (k * m) (the
    digits of x below k*m put back together; C semantics, the first for any sign, the second
    where x is proven non-negative). None if p + q is not of that form."""
    if not (p.op is Op.MUL and p.src[1].is_const and q.op is Op.MOD and q.src[1].is_const):
        return None
    k = int(q.src[1].arg)
    x = q.src[0]
    if int(p.src[1].arg) != k or k <= 0:
        return None
    d = p.src[0]
    if d.op is Op.DIV and d.src[0] is x and d.src[1].is_const and int(d.src[1].arg) == k:
        return x
    if d.op is not Op.MOD or not d.src[1].is_const:
        return None
    m = int(d.src[1].arg)
    inner = d.src[0]
    if not (inner.op is Op.DIV and inner.src[0] is x and inner.src[1].is_const):
        return None
    rx = x.vrange
    if int(inner.src[1].arg) != k or m <= 0 or rx is None or rx[0] < 0 or k * m >= 1 << 31:
        return None
    return binary(Op.MOD, x, const(k * m, x.dtype))


def _simplify_divmod(op: Op, a: Exp, k: int) -> Exp | None:
    ra = a.vrange
    assert ra is not None
    if ra[1] < k:
        return const(0, a.dtype) if op is Op.DIV else a
    if op is Op.DIV and a.op is Op.DIV and a.src[1].is_const and int(a.src[1].arg) > 0:
        return binary(Op.DIV, a.src[0], const(int(a.src[1].arg) * k, a.dtype))
    terms = _terms(a)
    whole = [t for t in terms if _coef(t) % k == 0]
    if not whole:
        return None
    rest = [t for t in terms if _coef(t) % k != 0]
    r = _sum(rest, a.dtype)
    rr = r.vrange
    if rr is None or rr[0] < 0:
        return None
    if op is Op.MOD:
        return binary(Op.MOD, r, const(k, a.dtype))
    q = _sum([_div_exact(t, k) for t in whole], a.dtype)
    return binary(Op.ADD, q, binary(op, r, const(k, a.dtype)))


def _fold_compare(op: Op, ra: tuple[int, int], rb: tuple[int, int]) -> Exp | None:
    true, false = const(True, dt.bool_), const(False, dt.bool_)
    if op is Op.CMPLT:
        return true if ra[1] < rb[0] else false if ra[0] >= rb[1] else None
    if op is Op.CMPLE:
        return true if ra[1] <= rb[0] else false if ra[0] > rb[1] else None
    disjoint = ra[1] < rb[0] or rb[1] < ra[0]
    if op is Op.CMPEQ:
        return false if disjoint else true if ra[0] == ra[1] == rb[0] == rb[1] else None
    if op is Op.CMPNE:
        return true if disjoint else false if ra[0] == ra[1] == rb[0] == rb[1] else None
    return None


# Operator-style shorthands for index arithmetic in int32.
def i32(v: int) -> Exp:
    return const(v, dt.int32)


def add(a: Exp, b: Exp | int) -> Exp:
    return binary(Op.ADD, a, b if isinstance(b, Exp) else const(b, a.dtype))


def mul(a: Exp, b: Exp | int) -> Exp:
    return binary(Op.MUL, a, b if isinstance(b, Exp) else const(b, a.dtype))


def idiv(a: Exp, b: Exp | int) -> Exp:
    return binary(Op.DIV, a, b if isinstance(b, Exp) else const(b, a.dtype))


def mod(a: Exp, b: Exp | int) -> Exp:
    return binary(Op.MOD, a, b if isinstance(b, Exp) else const(b, a.dtype))


# ---- rewriting ------------------------------------------------------------------------------
def rebuild(node: Exp, src: tuple[Exp, ...]) -> Exp:
    """Rebuild `node` over new children through the simplifying builders."""
    op = node.op
    if op in BINARY:
        return binary(op, src[0], src[1])
    if op is Op.CAST:
        return cast(src[0], node.dtype)
    if op is Op.BITCAST:
        return bitcast(src[0], node.dtype)
    if op in UNARY:
        return unary(op, src[0])
    if op is Op.WHERE:
        return where(*src)
    if op is Op.REDUCE:
        return reduce(node.arg[0], src[0], node.arg[1])
    return Exp.make(op, node.dtype, src, node.arg)


def substitute(root: Exp, fn: Callable[[Exp], Exp | None]) -> Exp:
    """Bottom-up rewrite: `fn(node)` returns a replacement or None to keep (rebuilt) node."""
    memo: dict[int, Exp] = {}
    for node in root.toposort():
        rep = fn(node)
        if rep is None:
            new_src = tuple(memo[id(s)] for s in node.src)
            if all(n is o for n, o in zip(new_src, node.src, strict=True)):
                rep = node
            else:
                rep = rebuild(node, new_src)
        memo[id(node)] = rep
    return memo[id(root)]


def replace(root: Exp, mapping: dict[Exp, Exp]) -> Exp:
    """Replace whole nodes (e.g. an IDX by an index expression)."""
    if not mapping:
        return root
    return substitute(root, lambda n: mapping.get(n))


# ---- printing -------------------------------------------------------------------------------
_INFIX = {
    Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.DIV: "/", Op.MOD: "%", Op.AND: "&", Op.OR: "|",
    Op.XOR: "^", Op.CMPLT: "<", Op.CMPLE: "<=", Op.CMPEQ: "==", Op.CMPNE: "!=",
    Op.SHL: "<<", Op.SHR: ">>",
}  # fmt: skip


def render(e: Exp) -> str:
    """A compact, human-readable form (used in profiler events and error messages)."""
    names: dict[int, str] = {}
    for n in e.toposort():
        s = [names[id(c)] for c in n.src]
        if n.op is Op.CONST:
            r = repr(n.arg)
        elif n.op is Op.IDX:
            r = "i"
        elif n.op is Op.RIDX:
            r = "r"
        elif n.op is Op.LOAD:
            slot = n.arg if isinstance(n.arg, int) else f"buf{id(n.arg) % 10000}"
            r = f"in{slot}[{s[0]}]"
        elif n.op in _INFIX:
            r = f"({s[0]} {_INFIX[n.op]} {s[1]})"
        elif n.op in (Op.CAST, Op.BITCAST):
            r = f"{n.op.value}<{n.dtype}>({s[0]})"
        elif n.op is Op.REDUCE:
            r = f"{n.arg[0].value}_r<{n.arg[1]}>({s[0]})"
        else:
            r = f"{n.op.value}({', '.join(s)})"
        names[id(n)] = r
    return names[id(e)]
