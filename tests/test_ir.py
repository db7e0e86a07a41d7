"""The kernel IR alone: hash-consing, simplifier rules (checked by evaluating both sides), and
movement views against NumPy strided views."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webjax._src import dtypes as dt
from webjax._src.codegen import pyref
from webjax._src.ir import exp as E
from webjax._src.ir import scalar, view
from webjax._src.ir.kernel import Kernel
from webjax._src.ir.ops import Op

np = pytest.importorskip("numpy")


def evaluate(e: E.Exp, i: int) -> int:
    """Evaluate an index expression at IDX = i with the reference semantics."""
    memo: dict[int, object] = {}
    for n in e.toposort():
        if n.op is Op.CONST:
            v = n.arg
        elif n.op is Op.IDX:
            v = i
        else:
            args = tuple(memo[id(s)] for s in n.src)
            v = scalar.apply(n.op, n.dtype, args, n.src[0].dtype)
        memo[id(n)] = v
    return memo[id(e)]  # type: ignore[return-value]


def test_hash_consing_and_exact_constants():
    a = E.add(E.mul(E.idx(12), 3), 1)
    b = E.add(E.mul(E.idx(12), 3), 1)
    assert a is b
    assert E.const(0.0, dt.float32) is not E.const(-0.0, dt.float32)
    assert E.const(float("nan"), dt.float32) is E.const(float("nan"), dt.float32)
    assert E.const(1, dt.int32) is not E.const(1, dt.uint32)


def test_simplifier_rules():
    i = E.idx(24)
    assert E.idiv(E.add(E.mul(E.idiv(i, 6), 6), E.mod(i, 6)), 6) is E.idiv(i, 6)
    assert E.mod(E.add(E.mul(i, 6), 5), 6) is E.i32(5)
    assert E.idiv(i, 24) is E.i32(0)
    assert E.mod(i, 24) is i
    assert E.add(E.mul(E.idiv(i, 4), 4), E.mod(i, 4)) is i
    assert E.binary(Op.CMPLT, i, E.i32(24)) is E.const(True, dt.bool_)
    # float rewrites stay IEEE-exact: x + 0.0 is not x (it turns -0.0 into 0.0)
    x = E.load(0, i, dt.float32)
    assert E.binary(Op.ADD, x, E.const(0.0, dt.float32)) is not x
    assert E.binary(Op.MUL, x, E.const(1.0, dt.float32)) is x


def test_row_major_index_round_trip_simplifies():
    # ravel(unravel(i)) is i again: the digit terms of a row-major index merge back, also
    # under an outer term ((y + (x / k) * k) + x % k) and through a middle digit
    # (((x / k) % m) * k + x % k = x % (k * m) for x >= 0)
    for shape in ([64, 56, 56], [4, 16, 49, 64], [3, 1, 7], [2, 3, 4, 5]):
        i = E.idx(math.prod(shape))
        assert view.ravel(view.unravel(i, shape), shape) is i
    i = E.idx(6 * 35)
    assert E.add(E.mul(E.mod(E.idiv(i, 5), 7), 5), E.mod(i, 5)) is E.mod(i, 35)
    y = E.mul(E.idiv(i, 35), 100)
    got = E.add(E.add(y, E.mul(E.idiv(E.mod(i, 35), 5), 5)), E.mod(E.mod(i, 35), 5))
    assert got is E.add(y, E.mod(i, 35))


def _raw(op: Op, a: E.Exp, b: E.Exp | int) -> E.Exp:
    """a op b as a node, without the simplifier."""
    b = b if isinstance(b, E.Exp) else E.i32(b)
    return E.Exp.make(op, a.dtype, (a, b))


@settings(max_examples=200, deadline=None)
@given(size=st.integers(1, 300), off=st.integers(-40, 40), k=st.integers(1, 9), m=st.integers(1, 9))
def test_merged_digits_match_c_semantics(size, off, k, m):
    """(y + ((x / k) % m) * k) + x % k and (x / k) * k + x % k, simplified, against the same
    unsimplified nodes, for x of either sign (the middle-digit rule needs x >= 0)."""
    i = E.idx(size)
    x = E.add(i, off)
    mid = _raw(Op.MUL, _raw(Op.MOD, _raw(Op.DIV, x, k), m), k)
    whole = _raw(Op.MUL, _raw(Op.DIV, x, k), k)
    y = E.mul(i, 3)
    for p in (mid, whole):
        raw = _raw(Op.ADD, _raw(Op.ADD, y, p), _raw(Op.MOD, x, k))
        simple = E.add(E.add(y, E.substitute(p, lambda n: None)), E.mod(x, k))
        for n in range(size):
            assert evaluate(simple, n) == evaluate(raw, n)


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(1, 200),
    a=st.integers(-7, 7),
    b=st.integers(-20, 20),
    k=st.integers(1, 9),
    j=st.integers(1, 9),
)
def test_simplified_index_math_matches_reference(size, a, b, k, j):
    """Every rewrite must agree with evaluating the unsimplified C semantics."""
    i = E.idx(size)
    exprs = [
        E.idiv(E.add(E.mul(i, a), b), k),
        E.mod(E.add(E.mul(i, a), b), k),
        E.idiv(E.idiv(i, k), j),
        E.mod(E.add(E.mul(E.idiv(i, k), k), E.mod(i, k)), j),
        E.add(E.mul(E.add(i, a), j), b),
    ]
    for e in exprs:
        for n in range(size):
            want = _naive(e, n)
            assert evaluate(e, n) == want


def _naive(e: E.Exp, i: int) -> int:
    # rebuild bottom-up without simplification: Exp.make, then evaluate
    memo: dict[int, int] = {}
    for n in e.toposort():
        if n.op is Op.CONST:
            memo[id(n)] = n.arg
        elif n.op is Op.IDX:
            memo[id(n)] = i
        else:
            memo[id(n)] = scalar.apply(n.op, n.dtype, tuple(memo[id(s)] for s in n.src))
    return memo[id(e)]


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
)
def test_views_match_numpy(shape, data):
    """transpose / broadcast / reduce index maps against NumPy's strided views."""
    shape = tuple(shape)
    base = np.arange(int(np.prod(shape)))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    out_size = int(np.prod(shape))
    idx = view.transpose_index(E.idx(out_size), shape, perm)
    want = base.reshape(shape).transpose(perm).ravel()
    assert [evaluate(idx, n) for n in range(out_size)] == want.tolist()
    # broadcast a size-1-ized version of the shape to the full shape
    small = tuple(1 if data.draw(st.booleans()) else d for d in shape)
    sidx = view.broadcast_index(E.idx(out_size), small, shape, tuple(range(len(shape))))
    sbase = np.arange(int(np.prod(small))).reshape(small)
    want_b = np.broadcast_to(sbase, shape).ravel()
    assert [evaluate(sidx, n) for n in range(out_size)] == want_b.tolist()


def test_every_op_on_the_reference_executor():
    """Each unary/binary op compiles through pyref and agrees with scalar.apply."""
    for op, d in itertools.product(
        [Op.ADD, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.MIN], [dt.int32, dt.float32]
    ):
        a = E.load(0, E.idx(4), d)
        b = E.load(1, E.idx(4), d)
        k = Kernel(E.binary(op, a, b), 4, (d, d))
        k.check()
        fn = pyref.compile_kernel(k)
        xs = [scalar.normalize(d, v) for v in (7, -7, 0, 3)]
        ys = [scalar.normalize(d, v) for v in (2, 2, 5, 0)]
        out = [0] * 4
        fn(out, xs, ys)
        want = [scalar.apply(op, d, (x, y)) for x, y in zip(xs, ys)]
        assert [repr(v) for v in out] == [repr(v) for v in want]  # NaN-aware, sign-aware
