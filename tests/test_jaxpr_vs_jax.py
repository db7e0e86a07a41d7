"""make_jaxpr against real JAX: the sequence of primitives (recursively into sub-jaxprs), the
avals of invars/outvars, and for simple first-order functions the exact printed text."""

from __future__ import annotations

from typing import Any

import pytest

import webjax
import webjax.numpy as jnp
from webjax import lax

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")


def to_w(x: Any) -> Any:
    x = np.asarray(x)
    return lax.full((), x.item(), str(x.dtype)) if x.ndim == 0 else jnp.asarray(x)


def prim_seq(jaxpr: Any) -> list[Any]:
    """Pre-order: each equation's primitive name, then (nested) the sequences of its
    sub-jaxprs in parameter order. Works for webjax and JAX jaxprs alike."""
    out: list[Any] = []
    for eqn in jaxpr.eqns:
        out.append(eqn.primitive.name)
        for k in sorted(eqn.params):
            v = eqn.params[k]
            for sub in v if isinstance(v, (tuple, list)) else (v,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and hasattr(inner, "invars"):
                    out.append((k, prim_seq(inner)))
    return out


def avals(vs: Any) -> list[tuple]:
    return [(tuple(v.aval.shape), str(v.aval.dtype), bool(v.aval.weak_type)) for v in vs]


F = np.float32
X6 = np.linspace(-1.0, 1.5, 6, dtype=F)
M23 = np.arange(6, dtype=F).reshape(2, 3) * 0.5 - 1.0
V3 = np.array([0.5, -1.0, 2.0], F)


def _scan_body(c, x):
    return c * 0.5 + x, c * x


# name -> (function of (ns, *args), args). `ns` is webjax or jax.
CORPUS: dict[str, tuple[Any, tuple]] = {
    "sin": (lambda ns, x: ns.numpy.sin(x), (X6,)),
    "elementwise_chain": (lambda ns, x: ns.numpy.tanh(ns.numpy.sin(x) * 2.0 + 1.0), (X6,)),
    "exp_log": (lambda ns, x: ns.numpy.log1p(ns.numpy.exp(x)) - ns.numpy.log(x * x + 1.0), (X6,)),
    "python_scalars": (lambda ns, x: 2 * x - 1 + 3.5 / x, (X6,)),
    "int_python_scalar": (lambda ns, x: x * 3 + 1, (np.arange(4, dtype=np.int32),)),
    "div": (lambda ns, x, y: x / y, (X6, X6 + 3.0)),
    "sum": (lambda ns, x: ns.numpy.sum(x), (X6,)),
    "sum_axis": (lambda ns, x: ns.numpy.sum(x, axis=0), (M23,)),
    "max": (lambda ns, x: ns.numpy.max(x, axis=1), (M23,)),
    "mean": (lambda ns, x: ns.numpy.mean(x), (M23,)),
    "broadcast_add": (lambda ns, x, y: x + y, (M23, V3)),
    "broadcast_scalar_array": (lambda ns, x, y: x * y, (M23, np.float32(2.0))),
    "reshape": (lambda ns, x: x.reshape(3, 2), (M23,)),
    "transpose": (lambda ns, x: x.T, (M23,)),
    "slice_index": (lambda ns, x: x[1:4], (X6,)),
    "integer_index": (lambda ns, x: x[1], (M23,)),
    "dot_mv": (lambda ns, m, v: ns.lax.dot(m, v), (M23, V3)),
    "dot_mm": (lambda ns, a, b: ns.lax.dot(a, b), (M23, M23.T.copy())),
    "integer_pow": (lambda ns, x: x**3, (X6,)),
    "square_sum": (lambda ns, x: ns.numpy.sum(x**2), (X6,)),
    "select": (lambda ns, x: ns.lax.select(x > 0, x, -x), (X6,)),
    "clamp": (lambda ns, x: ns.lax.clamp(-0.5, x, 0.5), (X6,)),
    "astype": (lambda ns, x: x.astype(ns.numpy.int32), (X6,)),
    "concatenate": (lambda ns, x, y: ns.numpy.concatenate([x, y]), (X6, V3)),
    "iota": (lambda ns: ns.lax.iota(ns.numpy.int32, 5), ()),
    "stop_gradient": (lambda ns, x: ns.lax.stop_gradient(x) * x, (V3,)),
    "cond": (lambda ns, p, x: ns.lax.cond(p, ns.numpy.sin, ns.numpy.cos, x), (np.bool_(True), V3)),
    "switch": (
        lambda ns, i, x: ns.lax.switch(i, [ns.numpy.sin, lambda x: x * 2.0, ns.numpy.exp], x),
        (np.int32(1), V3),
    ),
    "scan": (lambda ns, c, xs: ns.lax.scan(_scan_body, c, xs), (np.float32(1.0), X6)),
    "fori_loop": (lambda ns, x: ns.lax.fori_loop(0, 3, lambda i, v: v * v, x), (V3,)),
    "while_loop": (
        lambda ns, x: ns.lax.while_loop(lambda v: ns.numpy.sum(v) < 10.0, lambda v: v * 2.0, x),
        (V3 + 2.0,),
    ),
    "jit_nested": (lambda ns, x: ns.jit(lambda y: ns.numpy.sin(y) * 2.0)(x) + 1.0, (V3,)),
    "vmap": (lambda ns, x: ns.vmap(lambda r: ns.numpy.sum(r * r))(x), (M23,)),
}

# Where webjax's jaxpr legitimately differs from JAX's: compare values only.
VALUE_ONLY: dict[str, tuple[str, Any, tuple]] = {
    # A different but correct tanh derivative: webjax uses 1 - y*y, JAX (1 - y) and y
    # separately plus add_any, and JAX keeps a dead reduce_sum of the primal output.
    "grad_tanh": (
        "derivative formula",
        lambda ns, x: ns.grad(lambda y: ns.numpy.sum(ns.numpy.tanh(y)))(x),
        (V3,),
    ),
    # A weakly typed scan carry: JAX converts inside the body each iteration, webjax once
    # before the loop. Same types and values.
    "scan_weak_carry": (
        "placement of the weak-type conversion",
        lambda ns, xs: ns.lax.scan(lambda c, x: (c + x, c * x), 0.0, xs),
        (X6,),
    ),
    # Inserting a unit axis: webjax reshapes, JAX broadcast_in_dim's; equivalent layouts.
    "expand_squeeze": (
        "reshape instead of broadcast_in_dim for a unit axis",
        lambda ns, x: ns.numpy.squeeze(ns.numpy.expand_dims(x, 0), 0),
        (V3,),
    ),
    "grad_of_scan": (
        "partial-evaluation layout of the linearized loop",
        lambda ns, x: ns.grad(lambda x: ns.lax.scan(lambda c, y: (c * y, None), 1.0, x)[0])(x),
        (V3,),
    ),
}


def _jaxprs(fn: Any, args: tuple) -> tuple[Any, Any]:
    w = webjax.make_jaxpr(lambda *a: fn(webjax, *a))(*[to_w(a) for a in args])
    r = jax.make_jaxpr(lambda *a: fn(jax, *a))(*args)
    return w, r


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_primitive_sequence_matches_jax(name):
    fn, args = CORPUS[name]
    w, r = _jaxprs(fn, args)
    assert prim_seq(w.jaxpr) == prim_seq(r.jaxpr), f"\nwebjax:\n{w}\njax:\n{r}"
    assert avals(w.jaxpr.invars) == avals(r.jaxpr.invars)
    assert avals(w.jaxpr.outvars) == avals(r.jaxpr.outvars)


@pytest.mark.parametrize("name", sorted(CORPUS) + sorted(VALUE_ONLY))
def test_values_match_jax(name):
    fn, args = CORPUS[name] if name in CORPUS else VALUE_ONLY[name][1:]
    got = fn(webjax, *[to_w(a) for a in args])
    want = fn(jax, *[jax.numpy.asarray(a) for a in args])
    g, w = webjax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert str(a.dtype) == str(b.dtype) and a.shape == b.shape and a.weak_type == b.weak_type
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(VALUE_ONLY))
def test_value_only_cases_have_matching_signatures(name):
    _, fn, args = VALUE_ONLY[name]
    w, r = _jaxprs(fn, args)
    assert avals(w.jaxpr.invars) == avals(r.jaxpr.invars)
    assert avals(w.jaxpr.outvars) == avals(r.jaxpr.outvars)


# ---- exact text for simple first-order functions ------------------------------------------------
TEXT_CASES: dict[str, tuple[Any, tuple]] = {
    "sin": (lambda ns, x: ns.numpy.sin(x), (X6,)),
    "mul_add": (lambda ns, x: x * 2.0 + x, (X6,)),
    "mul_add_2d": (lambda ns, x, y: x * y + 1.0, (M23, M23)),
    "reduce_sum": (lambda ns, x: ns.numpy.sum(x), (X6,)),
    "reduce_sum_axis": (lambda ns, x: ns.numpy.sum(x, axis=1), (M23,)),
    "reshape": (lambda ns, x: x.reshape(3, 2), (M23,)),
    "convert_element_type": (lambda ns, x: x.astype(ns.numpy.int32), (X6,)),
    "integer_pow": (lambda ns, x: x**3, (X6,)),
    "iota": (lambda ns: ns.lax.iota(ns.numpy.int32, 4), ()),
    "sin_chain": (lambda ns, x: ns.numpy.sin(ns.numpy.sin(x)) * x, (V3,)),
    "int_add": (lambda ns, x: x + 1, (np.arange(3, dtype=np.int32),)),
}


@pytest.mark.parametrize("name", sorted(TEXT_CASES))
def test_printed_jaxpr_matches_jax(name):
    fn, args = TEXT_CASES[name]
    w, r = _jaxprs(fn, args)
    assert str(w) == str(r)
