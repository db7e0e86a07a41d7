"""The tracing core: Primitive/bind, ShapedArray and weak types, jaxpr evaluation and type
checking, and the dtype promotion lattice against real JAX."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

import webjax
import webjax.numpy as jnp
from webjax import lax
from webjax._src import core
from webjax._src.core import JaxprTypeError, ShapedArray, check_jaxpr, eval_jaxpr

np = pytest.importorskip("numpy")


@pytest.fixture
def rjax():
    return pytest.importorskip("jax")


# ---- Primitive / bind ----------------------------------------------------------------------------
def _make_prim() -> core.Primitive:
    p = core.Primitive("twice_plus")

    @p.def_impl
    def _impl(x, *, c):
        return lax.add(lax.mul(x, 2.0), c)

    @p.def_abstract_eval
    def _abstract(x, *, c):
        return x

    return p


def test_primitive_bind_eager_and_traced():
    p = _make_prim()
    assert repr(p) == p.name == "twice_plus"
    x = jnp.asarray(np.array([1.0, 2.0], np.float32))
    assert p.bind(x, c=1.0).tolist() == [3.0, 5.0]
    closed = webjax.make_jaxpr(lambda x: p.bind(x, c=1.0))(x)
    assert [e.primitive.name for e in closed.eqns] == ["twice_plus"]
    assert closed.eqns[0].params == {"c": 1.0}
    assert closed.out_avals == [ShapedArray((2,), "float32")]
    jf = webjax.jit(lambda x: p.bind(x, c=0.5))
    assert jf(x).tolist() == [2.5, 4.5]
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, x)
    assert out.tolist() == [3.0, 5.0]


def test_primitive_without_rules():
    p = core.Primitive("no_rules")
    with pytest.raises(NotImplementedError):
        p.bind(jnp.zeros(2))
    q = _make_prim()
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'twice_plus'"):
        webjax.grad(lambda x: q.bind(x, c=1.0))(1.0)
    with pytest.raises(NotImplementedError):
        webjax.vmap(lambda x: q.bind(x, c=1.0))(jnp.zeros(2))


def test_primitive_multiple_results():
    p = core.Primitive("split2")
    p.multiple_results = True
    p.def_impl(lambda x: [lax.neg(x), lax.mul(x, x)])
    p.def_abstract_eval(lambda x: [x, x])
    a, b = p.bind(jnp.arange(3))
    assert a.tolist() == [0, -1, -2] and b.tolist() == [0, 1, 4]
    closed = webjax.make_jaxpr(lambda x: p.bind(x))(jnp.arange(3))
    assert len(closed.jaxpr.outvars) == 2 and len(closed.eqns) == 1


# ---- ShapedArray and weak types ------------------------------------------------------------------
def test_shaped_array_basics(rjax):
    a = ShapedArray((2, 3), "float32", weak_type=True)
    r = rjax.core.ShapedArray((2, 3), np.dtype("float32"), weak_type=True)
    assert repr(a) == repr(r)
    assert a.shape == (2, 3) and a.ndim == 2 and a.size == 6 and a.weak_type
    assert a == ShapedArray((2, 3), jnp.float32, weak_type=True)
    assert hash(a) == hash(ShapedArray((2, 3), "float32", weak_type=True))
    assert a != ShapedArray((2, 3), "float32")
    assert a.strip_weak_type() == ShapedArray((2, 3), "float32")
    assert a.update(shape=(4,)) == ShapedArray((4,), "float32", weak_type=True)
    assert a.str_short() == r.str_short() == "float32[2,3]"  # JAX's default: full dtype names
    assert a.str_short(short_dtypes=True) == r.str_short(short_dtypes=True) == "f32[2,3]"


def test_shaped_array_accepts_numpy_dtypes(rjax):
    # JAX accepts NumPy scalar types as dtypes everywhere (jnp.zeros(2, np.float32), ...)
    assert ShapedArray((2,), np.float32) == ShapedArray((2,), "float32")
    assert jnp.zeros(2, np.int32).dtype == jnp.int32
    assert ShapedArray((), np.dtype("int32")).dtype == jnp.int32


@pytest.mark.parametrize(
    "value, dtype, weak",
    [(1, "int32", True), (1.5, "float32", True), (True, "bool", False)],
)
def test_python_scalar_avals(rjax, value, dtype, weak):
    a = core.get_aval(value)
    assert a == ShapedArray((), dtype, weak_type=weak)
    r = rjax.numpy.asarray(value)
    assert str(r.dtype) == dtype and r.weak_type == weak
    assert jnp.asarray(value).weak_type == weak


def test_get_aval_rejects_non_arrays():
    with pytest.raises(TypeError):
        core.get_aval("a string")
    assert not core.is_valid_jaxtype(object())
    assert core.is_valid_jaxtype(jnp.zeros(2))


def test_weak_type_propagation(rjax):
    cases = [
        lambda ns: ns.numpy.asarray(1.0) * 2,
        lambda ns: ns.numpy.asarray(1.0) + ns.numpy.zeros((), "float32"),
        lambda ns: ns.numpy.zeros(2, "int32") + 1,
        lambda ns: ns.numpy.zeros(2, "bfloat16") + 1.5,
        lambda ns: ns.numpy.sin(ns.numpy.asarray(1.0)),
        lambda ns: ns.numpy.asarray(1) * 2.5,
        lambda ns: ns.numpy.sum(ns.numpy.asarray(1.0) * ns.numpy.ones(()) + 1),
        lambda ns: ns.lax.convert_element_type(1.0, "float32"),
    ]
    for i, f in enumerate(cases):
        got, want = f(webjax), f(rjax)
        assert (str(got.dtype), got.weak_type) == (str(want.dtype), want.weak_type), i


def test_tracer_avals_under_jit():
    seen = []

    @webjax.jit
    def f(x, y):
        seen.append((core.get_aval(x), core.get_aval(y)))
        return x

    f(1.0, jnp.zeros((2, 3), jnp.int8))
    assert seen == [(ShapedArray((), "float32", True), ShapedArray((2, 3), "int8"))]


# ---- jaxprs: evaluation and type checking --------------------------------------------------------
def _sample():
    def f(x, y):
        z = lax.sin(x) * y
        return lax.reduce_sum(z, (0,)), z + 1.0

    x = jnp.asarray(np.array([0.5, 1.0], np.float32))
    y = jnp.asarray(np.array([2.0, -1.0], np.float32))
    return f, (x, y), webjax.make_jaxpr(f)(x, y)


def test_eval_jaxpr_matches_function():
    f, args, closed = _sample()
    got = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    want = f(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    got2 = core.jaxpr_as_fun(closed)(*args)
    assert [np.asarray(a).tolist() for a in got2] == [np.asarray(a).tolist() for a in got]
    with pytest.raises(TypeError):
        eval_jaxpr(closed.jaxpr, closed.consts, args[0])


def test_eval_jaxpr_with_consts():
    c = jnp.asarray(np.array([10.0, 20.0], np.float32))
    closed = webjax.make_jaxpr(lambda x: x * c)(jnp.zeros(2))
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, jnp.ones(2))
    assert out.tolist() == [10.0, 20.0]


def test_eval_jaxpr_under_transformations():
    _, args, closed = _sample()

    def g(x):
        return eval_jaxpr(closed.jaxpr, closed.consts, x, args[1])[0]

    np.testing.assert_allclose(
        np.asarray(webjax.grad(g)(args[0])),
        np.cos([0.5, 1.0]) * np.array([2.0, -1.0]),
        rtol=1e-6,
    )


def test_check_jaxpr_accepts_traced_jaxprs():
    for f, args in [
        (_sample()[0], _sample()[1]),
        (lambda x: lax.cond(x > 0, lax.sin, lax.cos, x), (1.0,)),
        (lambda x: lax.scan(lambda c, y: (c + y, c), 0.0, x), (jnp.zeros(3),)),
        (webjax.grad(lambda x: lax.tanh(x) * x), (1.0,)),
    ]:
        check_jaxpr(webjax.make_jaxpr(f)(*args).jaxpr)


def test_check_jaxpr_catches_use_before_definition():
    _, _, closed = _sample()
    bad = copy.copy(closed.jaxpr)
    bad.eqns = list(reversed(closed.jaxpr.eqns))
    with pytest.raises(JaxprTypeError):
        check_jaxpr(bad)


def test_check_jaxpr_catches_wrong_output_type():
    _, _, closed = _sample()
    jaxpr = closed.jaxpr
    eqn = jaxpr.eqns[0]
    wrong = core.Var(ShapedArray((3,), "float32"))
    bad_eqn = core.JaxprEqn(eqn.primitive, eqn.invars, [wrong], eqn.params)
    rest = [
        core.JaxprEqn(
            e.primitive,
            [wrong if v is eqn.outvars[0] else v for v in e.invars],
            e.outvars,
            e.params,
        )
        for e in jaxpr.eqns[1:]
    ]
    bad = core.Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, [bad_eqn, *rest])
    with pytest.raises(JaxprTypeError):
        check_jaxpr(bad)
    wrong_dtype = core.Var(ShapedArray(eqn.outvars[0].aval.shape, "int32"))
    bad_eqn = core.JaxprEqn(eqn.primitive, eqn.invars, [wrong_dtype], eqn.params)
    bad = core.Jaxpr(jaxpr.constvars, jaxpr.invars, [wrong_dtype], [bad_eqn])
    with pytest.raises(JaxprTypeError):
        check_jaxpr(bad)


def test_check_jaxpr_catches_double_binding_and_undefined_outvar():
    _, _, closed = _sample()
    jaxpr = closed.jaxpr
    e0 = jaxpr.eqns[0]
    dup = core.JaxprEqn(e0.primitive, e0.invars, e0.outvars, e0.params)
    bad = core.Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, [e0, dup, *jaxpr.eqns[1:]])
    with pytest.raises(JaxprTypeError):
        check_jaxpr(bad)
    stray = core.Var(ShapedArray((2,), "float32"))
    bad = core.Jaxpr(jaxpr.constvars, jaxpr.invars, [stray], jaxpr.eqns)
    with pytest.raises(JaxprTypeError):
        check_jaxpr(bad)
    bad = core.Jaxpr(jaxpr.constvars, [jaxpr.invars[0], jaxpr.invars[0]], jaxpr.outvars, [])
    with pytest.raises(JaxprTypeError):
        check_jaxpr(bad)


def test_check_jaxpr_checks_primitive_typing_rules():
    # mul of f32[2] and i32[2] is ill-typed: the abstract evaluation rule must reject it
    x = core.Var(ShapedArray((2,), "float32"))
    y = core.Var(ShapedArray((2,), "int32"))
    out = core.Var(ShapedArray((2,), "float32"))
    mul_p = webjax._src.lax.lax.prims["mul"]
    bad = core.Jaxpr([], [x, y], [out], [core.JaxprEqn(mul_p, [x, y], [out], {})])
    with pytest.raises(TypeError):
        check_jaxpr(bad)


# ---- the promotion lattice vs real JAX -----------------------------------------------------------
DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "uint8",
    "uint16",
    "uint32",
    "float16",
    "bfloat16",
    "float32",
]


def _add_dtype(ns: Any, a: str, b: str) -> str:
    x = ns.numpy.zeros(2, a)
    y = ns.numpy.zeros(2, b)
    return str((x + y).dtype) if a != "bool" or b != "bool" else str((x | y).dtype)


def test_promotion_all_pairs(rjax):
    bad = []
    for a, b in itertools.product(DTYPES, DTYPES):
        want = _add_dtype(rjax, a, b)
        try:
            got = _add_dtype(webjax, a, b)
        except Exception as e:
            got = f"{type(e).__name__}: {e}"
        if got != want:
            bad.append((a, b, got, want))
    assert not bad, bad


@pytest.mark.parametrize("scalar", [True, 2, 1.5])
def test_promotion_with_weak_python_scalars(rjax, scalar):
    bad = []
    for a in DTYPES:
        if a == "bool" and isinstance(scalar, bool):
            continue
        for order in ("array_first", "scalar_first"):

            def f(ns, a=a, order=order):
                x = ns.numpy.zeros(2, a)
                out = x * scalar if order == "array_first" else scalar * x
                return str(out.dtype), bool(out.weak_type)

            want = f(rjax)
            try:
                got = f(webjax)
            except Exception as e:
                got = (f"{type(e).__name__}: {e}", None)
            if got != want:
                bad.append((a, order, got, want))
    assert not bad, bad


def test_promotion_of_weak_arrays(rjax):
    bad = []
    for a in DTYPES:
        for w in (1, 1.5):

            def f(ns, a=a, w=w):
                out = ns.numpy.zeros(2, a) - ns.numpy.asarray(w)  # a weak 0-d array
                return str(out.dtype), bool(out.weak_type)

            if f(rjax) != f(webjax):
                bad.append((a, w, f(webjax), f(rjax)))
    assert not bad, bad


def test_promotion_under_jit_matches_eager():
    for a, b in [("int8", "uint8"), ("bfloat16", "float16"), ("uint32", "int32")]:
        eager = (jnp.zeros(2, a) + jnp.zeros(2, b)).dtype
        jitted = webjax.jit(lambda x, y: x + y)(jnp.zeros(2, a), jnp.zeros(2, b)).dtype
        assert eager == jitted


def test_jnp_promote_types_and_result_type(rjax):
    if not hasattr(jnp, "promote_types") or not hasattr(jnp, "result_type"):
        pytest.fail("webjax.numpy lacks promote_types/result_type (jax.numpy has both)")
    for a, b in itertools.product(DTYPES, DTYPES):
        assert str(jnp.promote_types(a, b)) == str(rjax.numpy.promote_types(a, b)), (a, b)
        assert str(jnp.result_type(a, b)) == str(rjax.numpy.result_type(a, b)), (a, b)
