"""Autodiff, jit and their compositions: derivative rules of every lax primitive (check_grads
orders 1 and 2; the elementwise ones and reductions in float32 through the primitive table,
tests/test_primitives.py), the grad/jvp/vjp/jacobian API, jit caching, compositions with
vmap, and JAX's error types. Real JAX, where installed, is the oracle for values and API details.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from primitive_table import RECORDS as PRIMITIVE_TABLE
from webjax import lax
from webjax._src import core
from webjax._src.api import coverage
from webjax._src.interpreters import ad
from webjax._src.lax import ad_rules
from webjax._src.lax import lax as lax_internal
from webjax.lax import linalg as _la

np = pytest.importorskip("numpy")


@pytest.fixture
def rjax():
    return pytest.importorskip("jax")


def f32(*vals: Any) -> np.ndarray:
    return np.asarray(vals, dtype=np.float32)


def a32(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float32)
    return lax.full((), float(x), "float32") if x.ndim == 0 else jnp.asarray(x)


def assert_tree_close(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    g, gt = webjax.tree_util.tree_flatten(got)
    w = _real_leaves(want)
    assert len(g) == len(w), (gt, want)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol)


def _real_leaves(tree: Any) -> list[Any]:
    try:
        import jax

        return jax.tree_util.tree_leaves(tree)
    except ImportError:
        return webjax.tree_util.tree_leaves(tree)


def errors() -> Any:
    """webjax.errors (JAX exposes jax.errors); imported lazily so a missing module fails only
    the tests that need it."""
    import importlib

    return importlib.import_module("webjax.errors")


def prim_names(fn: Any, *args: Any) -> set[str]:
    names: set[str] = set()

    def walk(jaxpr: Any) -> None:
        for e in jaxpr.eqns:
            names.add(e.primitive.name)
            for v in e.params.values():
                for sub in v if isinstance(v, (tuple, list)) else (v,):
                    if isinstance(sub, core.ClosedJaxpr):
                        walk(sub.jaxpr)
                    elif isinstance(sub, core.Jaxpr):
                        walk(sub)

    walk(webjax.make_jaxpr(fn)(*args).jaxpr)
    return names


# ---- derivative rules of every differentiable lax primitive ------------------------------------
X = f32(0.3, -1.2, 0.7)  # generic
Y = f32(-0.8, 0.5, 1.9)
Z = (X + 1j * Y).astype(np.complex64)  # complex
POS = f32(0.6, 1.3, 2.2)  # > 0
M23 = np.arange(6, dtype=np.float32).reshape(2, 3) * 0.3 - 0.7
NONSYM = np.array([[1.0, 2.0, 0.0], [-3.0, 1.0, 1.0], [0.5, 0.0, 2.0]], np.float32)
# Eigenvalue derivatives need eigenvector ones at second order, which JAX does not define.
FIRST_ORDER_ONLY = {"eig"}
M32 = np.arange(6, dtype=np.float32).reshape(3, 2) * -0.2 + 0.4
_A33 = f32(0.9, -0.3, 0.4, 0.2, 1.4, -0.6, -0.5, 0.1, 1.1).reshape(3, 3)
B223 = np.arange(12, dtype=np.float32).reshape(2, 2, 3) * 0.1 - 0.5
B232 = np.arange(12, dtype=np.float32).reshape(2, 3, 2) * -0.15 + 0.3
_P = lax_internal.prims


def _bind(name: str, **params: Any) -> Any:
    return lambda *xs: _P[name].bind(*xs, **params)


_sl = __import__("webjax._src.lax.slicing", fromlist=["slicing"])
_win = __import__("webjax._src.lax.windowed", fromlist=["windowed"])
_WIN1 = {"window_dimensions": (2,), "window_strides": (1,), "padding": ((0, 0),),
         "base_dilation": (1,), "window_dilation": (1,)}  # fmt: skip
_SDN = _sl.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


def _int_reduce(reduce: Any, y: Any) -> Any:
    """`reduce` over axis "i" of int(4 y), as floats (inputs stay away from integers)."""
    return lax.convert_element_type(
        reduce(lax.convert_element_type(y * 4, "int32"), "i"), "float32"
    )


def _pmap_vmap(f: Any) -> Any:
    """`f` per example of a vmap (axis "j") inside a pmap (axis "i", size 1)."""
    return webjax.pmap(webjax.vmap(f, axis_name="j"), axis_name="i")


# name -> list of (function, args): inputs lie inside each function's domain, away from kinks.
# The elementwise primitives and reductions in float32 are the primitive table's
# (tests/test_primitives.py); their complex cases stay here.
CASES: dict[str, list[tuple[Any, tuple]]] = {
    "abs": [(lax.abs, (Z,))],
    "real": [(lax.real, (Z,))],
    "imag": [(lax.imag, (Z,))],
    "complex": [(lax.complex, (X, Y)), (lambda x: lax.complex(x, 2.0), (X,))],
    "conj": [(lax.conj, (Z,)), (lax.conj, (X,)), (lambda z: lax.mul(lax.conj(z), z), (Z,))],
    "add_any": [(_bind("add_any"), (X, Y))],
    # Collectives: psum/pmax/pmin under vmap stage as positional reductions; the others show in
    # the body of a pmap (size 1) around a vmap over a second named axis.
    "all_gather": [
        (lambda x: _pmap_vmap(lambda z: lax.all_gather(z, ("i", "j")) * z)(x), (M23[None],)),
        (
            lambda x: _pmap_vmap(lambda z: lax.all_gather(z, ("j", "i"), tiled=True))(x),
            (M23[None],),
        ),
    ],
    "all_to_all": [
        (
            lambda x: _pmap_vmap(lambda z: lax.all_to_all(lax.expand_dims(z * z, (0,)), "i", 0, 1))(
                x
            ),
            (M23[None],),
        ),
    ],
    # JAX gives pmax/pmin no derivative: these reduce integers (zero tangents) and compose.
    "pmax": [
        (lambda x: webjax.vmap(lambda y: _int_reduce(lax.pmax, y) * y, axis_name="i")(x), (X,))
    ],
    "pmin": [
        (lambda x: webjax.vmap(lambda y: _int_reduce(lax.pmin, y) * y, axis_name="i")(x), (X,))
    ],
    "ppermute": [
        (lambda x: _pmap_vmap(lambda z: lax.ppermute(z * z, "i", [(0, 0)]))(x), (M23[None],))
    ],
    "psum": [
        (lambda x: webjax.vmap(lambda y: lax.psum(y * y, "i") * y, axis_name="i")(x), (X,)),
        (lambda x: webjax.vmap(lambda y: lax.psum(lax.sin(y), ("i", 0)), axis_name="i")(x), (M23,)),
        (
            lambda x: webjax.vmap(lambda y: lax.pmean(y * y, "i"), axis_name="i", in_axes=1)(x),
            (M23,),
        ),
    ],
    "reduce_scatter": [
        (lambda x: _pmap_vmap(lambda z: lax.psum_scatter(z * z, ("j", "i")))(x), (_A33[None],)),
        (
            lambda x: _pmap_vmap(lambda z: lax.psum_scatter(z, ("i", "j"), tiled=True) ** 2)(x),
            (_A33[None],),
        ),
    ],
    "broadcast_in_dim": [(lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), (X,))],
    "clamp": [
        (lambda x: lax.clamp(-0.4, x, 0.45), (X,)),
        (lambda lo, x, hi: lax.clamp(lo, x, hi), (X - 0.05, Y, X + 0.7)),
    ],
    "concatenate": [(lambda x, y: lax.concatenate([x, y, x], 0), (X, Y[:2]))],
    "convert_element_type": [
        (_bind("convert_element_type", new_dtype=np.dtype("float32"), weak_type=True), (X,))
    ],
    "div": [(lax.div, (Z, Z + 2))],
    "dot_general": [
        (lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), (M23, M32)),
        (lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (B223, B232)),
        (lambda a, b: lax.dot(a, b), (X, Y)),
    ],
    "dynamic_slice": [(lambda x: lax.dynamic_slice(x, (jnp.array(1),), (2,)), (X,))],
    "gather": [
        (
            lambda x: _sl.gather(
                x,
                jnp.array([[1], [0], [1]]),
                _sl.GatherDimensionNumbers(
                    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
                ),
                (1, 3),
            ),
            (M23,),
        )
    ],
    "scatter-add": [
        (
            lambda x, u: _sl.scatter_add(x, jnp.array([[1], [0], [1]]), u, _SDN),
            (M23, M23[:1].repeat(3, 0)),
        )
    ],
    "scatter": [(lambda x, u: _sl.scatter(x, jnp.array([[1]]), u, _SDN), (M23, M23[:1] * 2))],
    "scatter-mul": [
        (
            lambda x, u: _sl.scatter_mul(x, jnp.array([[1]]), u, _SDN, unique_indices=True),
            (M23, M23[:1] * 2),
        )
    ],
    "scatter-min": [
        (lambda x, u: _sl.scatter_min(x, jnp.array([[0]]), u, _SDN), (M23, M23[:1] + 0.3))
    ],
    "scatter-max": [
        (lambda x, u: _sl.scatter_max(x, jnp.array([[0]]), u, _SDN), (M23, M23[:1] + 0.3))
    ],
    "conv_general_dilated": [
        (
            lambda x, w: lax.conv(x, w, (1,), "SAME"),
            (f32(0.3, -1.2, 0.7, 0.5).reshape(1, 1, 4), f32(0.2, -0.4).reshape(1, 1, 2)),
        ),
    ],
    "reduce_window_sum": [
        (lambda x: lax.reduce_window(x, 0.0, lax.add, (2,), (1,), "VALID"), (X,)),
    ],
    "reduce_window_max": [
        (lambda x: lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID"), (X,)),
    ],
    "reduce_window_min": [
        (lambda x: lax.reduce_window(x, np.inf, lax.min, (2,), (1,), "VALID"), (X,)),
    ],
    "select_and_gather_add": [
        (
            lambda t: _win.select_and_gather_add_p.bind(
                t, jnp.asarray(X), select_prim=_P["ge"], **_WIN1
            ),
            (Y,),
        ),
    ],
    "select_and_scatter_add": [
        (
            lambda s: _win.select_and_scatter_add_p.bind(
                s, jnp.asarray(X), select_prim=_P["ge"], **_WIN1
            ),
            (f32(0.4, -0.3),),
        ),
    ],
    "cumsum": [(lambda x: lax.cumsum(x), (X,)), (lambda x: lax.cumsum(x, reverse=True), (X,))],
    "cumprod": [(lambda x: lax.cumprod(x), (X,))],
    "cummax": [(lambda x: lax.cummax(x), (X,))],
    "cummin": [(lambda x: lax.cummin(x), (X,))],
    "cumlogsumexp": [(lambda x: lax.cumlogsumexp(x), (X,))],
    "sort": [
        (lambda x: lax.sort(x), (f32(0.3, -1.2, 0.7, 0.1),)),
        (lambda x, y: lax.sort((x, y), num_keys=1)[1], (X, Y)),
    ],
    "top_k": [(lambda x: lax.top_k(x, 2)[0], (f32(0.3, -1.2, 0.7, 0.1),))],
    # linear algebra: gauge-invariant functions of the factors (signs of vectors are free)
    "cholesky": [(lambda a: _la.cholesky(a @ a.T + 3.0 * jnp.eye(3)), (_A33,))],
    "triangular_solve": [
        (
            lambda a, b: _la.triangular_solve(a + 3.0 * jnp.eye(3), b, left_side=True, lower=True),
            (_A33, M32 * 1.0),
        ),
    ],
    "lu": [(lambda a: _la.lu(a)[0], (_A33,))],
    "qr": [(lambda a: jnp.abs(_la.qr(a, full_matrices=False)[1]), (_A33,))],
    "eigh": [(lambda a: _la.eigh(a + a.T)[1], (_A33,))],
    "svd": [(lambda a: _la.svd(a, compute_uv=False), (_A33,))],
    "dynamic_update_slice": [
        (lambda x, u: lax.dynamic_update_slice(x, u, (jnp.array(1),)), (X, Y[:2]))
    ],
    "eig": [
        (
            lambda m: _la.eig(m, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[
                0
            ],
            (NONSYM,),
        )
    ],
    "exp": [(lax.exp, (Z,))],
    "fft": [
        (lambda z: lax.fft(z, "FFT", (3,)), (Z,)),
        (lambda z: lax.fft(z, lax.FftType.IFFT, (3,)), (Z,)),
        (lambda x: lax.fft(x, "RFFT", (3,)), (X,)),
        (lambda z: lax.fft(z, "IRFFT", (4,)), (Z,)),
        (lambda x: lax.fft(x, "RFFT", (2, 3)), (M23,)),
        (lambda x: lax.fft(lax.fft(x, "RFFT", (2, 3)), "IRFFT", (2, 3)) * x, (M23,)),
    ],
    "integer_pow": [
        (lambda x: lax.integer_pow(x, 3), (X,)),
        (lambda x: lax.integer_pow(x, -2), (POS,)),
        (lambda x: lax.integer_pow(x, 1), (X,)),
    ],
    "log": [(lax.log, (Z,))],
    "mul": [(lax.mul, (Z, Z[::-1]))],
    "pad": [
        (lambda x, p: lax.pad(x, p, [(1, 2, 1)]), (X, f32(0.5).reshape(()))),
        (lambda x: lax.pad(x, 0.0, [(-1, 1, 0), (0, -1, 1)]), (M23,)),
    ],
    "reshape": [(lambda x: lax.reshape(x, (3, 2)), (M23,))],
    "rev": [(lambda x: lax.rev(x, (0, 1)), (M23,))],
    "select_n": [
        (lambda x, y: lax.select(jnp.array([True, False, True]), x, y), (X, Y)),
        (lambda x, y: lax.select_n(jnp.array([0, 2, 1]), x, y, x * y), (X, Y)),
    ],
    "slice": [(lambda x: lax.slice(x, (0, 1), (2, 3), (1, 2)), (M23,))],
    "sqrt": [(lax.sqrt, (Z,))],
    "squeeze": [(lambda x: lax.squeeze(x, (0,)), (X.reshape(1, 3),))],
    "transpose": [(lambda x: lax.transpose(x, (1, 0)), (M23,))],
}


def differentiable_prims() -> list[str]:
    # (schur, hessenberg: no derivative in JAX either; differentiating them raises)
    nondiff = {p.name for p in ad.nondifferentiable} | set(coverage.UNDIFFERENTIATED_IN_JAX)
    names = set(ad_rules.coverage()) | set(lax_internal.prims)
    return sorted(n for n in names if n not in nondiff)


def test_case_table_matches_primitives():
    stale = sorted(set(CASES) - set(differentiable_prims()))
    assert not stale, f"cases for primitives that are gone or nondifferentiable: {stale}"


def test_every_differentiable_primitive_has_a_case():
    in_op_table = {r.prim for r in PRIMITIVE_TABLE if r.differentiable}
    missing = sorted(set(differentiable_prims()) - set(CASES) - in_op_table)
    assert not missing, f"differentiable primitives without a check_grads case: {missing}"


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_primitive_derivatives(name, order):
    for fn, args in CASES[name]:
        assert name in prim_names(fn, *args), f"the case for {name} does not bind it"
        if order == 2 and name in FIRST_ORDER_ONLY:
            with pytest.raises(NotImplementedError, match="derivatives of eigenvectors"):
                check_grads(fn, args, order=order)
            continue
        check_grads(fn, args, order=order)


def test_check_grads_catches_a_wrong_rule():
    @webjax.custom_jvp
    def f(x):
        return lax.sin(x)

    f.defjvp(lambda p, t: (lax.sin(p[0]), lax.cos(p[0]) * t[0] * 1.1))
    with pytest.raises(AssertionError):
        check_grads(f, (X,), order=1, modes=("fwd",))


# ---- grad / value_and_grad -----------------------------------------------------------------------
def test_grad_argnums(rjax):
    def f(ns, x, y, z):
        return ns.numpy.sum(ns.numpy.sin(x) * y + z**2)

    x, y, z = f32(0.1, 0.2), f32(1.0, -2.0), f32(0.5, 0.25)
    for argnums in (0, 2, -1, (0,), (0, 2), (2, 0)):
        got = webjax.grad(functools.partial(f, webjax), argnums=argnums)(*map(a32, (x, y, z)))
        want = rjax.grad(functools.partial(f, rjax), argnums=argnums)(x, y, z)
        if isinstance(argnums, tuple):
            assert isinstance(got, tuple) and len(got) == len(argnums)
        assert_tree_close(got, want)


def test_grad_bad_argnums():
    with pytest.raises(TypeError):
        webjax.grad(lambda x: x, argnums=1)(1.0)


def test_value_and_grad_has_aux(rjax):
    def f(ns, p, x):
        y = ns.numpy.tanh(p["w"] * x + p["b"])
        return ns.numpy.sum(y**2), {"y": y, "n": 3}

    p = {"w": f32(0.5, -0.3), "b": f32(0.1, 0.2)}
    x = f32(1.0, 2.0)
    (v, aux), g = webjax.value_and_grad(functools.partial(f, webjax), has_aux=True)(
        webjax.tree_util.tree_map(a32, p), a32(x)
    )
    (rv, raux), rg = rjax.value_and_grad(functools.partial(f, rjax), has_aux=True)(p, x)
    assert_tree_close(v, rv)
    assert_tree_close(g, rg)
    assert aux["n"] == 3
    assert_tree_close(aux["y"], raux["y"])
    assert not isinstance(aux["y"], core.Tracer)
    g2, aux2 = webjax.grad(functools.partial(f, webjax), has_aux=True)(
        webjax.tree_util.tree_map(a32, p), a32(x)
    )
    assert_tree_close(g2, rg)
    assert sorted(aux2) == ["n", "y"]


def test_grad_of_python_scalar_and_weak_types(rjax):
    g = webjax.grad(lambda x: x * x)(3.0)
    assert float(g) == 6.0 and g.dtype == jnp.float32
    assert g.weak_type == rjax.grad(lambda x: x * x)(3.0).weak_type


def test_grad_int_input_is_type_error():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        webjax.grad(lambda x: x * 2.0)(jnp.array(3))
    with pytest.raises(TypeError):
        webjax.grad(lambda x: x * 2.0)(3)


def test_grad_allow_int(rjax):
    def f(ns, x, n):
        return ns.numpy.sum(x * n)

    x, n = f32(1.0, 2.0), np.array([3, 4], np.int32)
    gx, gn = webjax.grad(functools.partial(f, webjax), argnums=(0, 1), allow_int=True)(
        a32(x), jnp.asarray(n)
    )
    rgx, rgn = rjax.grad(functools.partial(f, rjax), argnums=(0, 1), allow_int=True)(x, n)
    assert_tree_close(gx, rgx)
    assert gn.shape == rgn.shape == (2,)
    assert str(gn.dtype) == str(rgn.dtype)  # float0, JAX's tangent type of integers


def test_grad_non_scalar_output_is_type_error():
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        webjax.grad(lambda x: x * 2.0)(a32(X))
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        webjax.grad(lambda x: (x, x))(1.0)


def test_grad_integer_output_is_type_error():
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        webjax.grad(lambda x: lax.convert_element_type(x, "int32"))(1.0)


def test_grad_has_aux_needs_pair():
    with pytest.raises((TypeError, ValueError)):
        webjax.grad(lambda x: x * 2.0, has_aux=True)(1.0)


def test_grad_closure_and_kwargs(rjax):
    c = f32(1.5, -0.5)

    def f(ns, x, *, scale):
        return ns.numpy.sum(ns.numpy.exp(x * c) * scale)

    got = webjax.grad(functools.partial(f, webjax))(a32(X[:2]), scale=2.0)
    want = rjax.grad(functools.partial(f, rjax))(X[:2], scale=2.0)
    assert_tree_close(got, want)


def test_grad_of_tanh_chain(rjax):
    def f(ns, x):
        for _ in range(4):
            x = ns.numpy.tanh(x)
        return x

    for n in range(4):
        gw, gr = webjax.grad, rjax.grad
        fw, fr = functools.partial(f, webjax), functools.partial(f, rjax)
        for _ in range(n):
            fw, fr = gw(fw), gr(fr)
        assert_tree_close(gw(fw)(0.4), gr(fr)(0.4), rtol=1e-4, atol=1e-5)


# ---- jvp / vjp / linearize API ------------------------------------------------------------------
def test_jvp_pytrees_and_has_aux(rjax):
    def f(ns, p):
        return {"a": ns.numpy.sin(p[0]) * p[1], "b": (p[0] ** 3,)}, p[1] * 2

    p = (f32(0.1, 0.5), f32(2.0, 3.0))
    t = (f32(1.0, -1.0), f32(0.5, 0.5))
    po, to, aux = webjax.jvp(
        functools.partial(f, webjax),
        (tuple(map(a32, p)),),
        (tuple(map(a32, t)),),
        has_aux=True,
    )
    rpo, rto, raux = rjax.jvp(functools.partial(f, rjax), (p,), (t,), has_aux=True)
    assert_tree_close(po, rpo)
    assert_tree_close(to, rto)
    assert_tree_close(aux, raux)
    assert sorted(po) == ["a", "b"] and isinstance(po["b"], tuple)


def test_jvp_argument_errors():
    with pytest.raises(TypeError, match="must be tuples or lists"):
        webjax.jvp(lax.sin, a32(X), a32(X))
    with pytest.raises(TypeError, match="same tree structure"):
        webjax.jvp(lambda a, b: a, (1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        webjax.jvp(lax.sin, (a32(X),), (a32(X[:2]),))


MISMATCH = r"primal and tangent arguments to jax\.jvp do not match"


def test_jvp_tangent_dtype_mismatch_is_type_error(rjax):
    with pytest.raises(TypeError, match=MISMATCH):
        rjax.jvp(rjax.numpy.sin, (X,), (X.astype(np.float16),))
    with pytest.raises(TypeError, match=MISMATCH):
        webjax.jvp(lax.sin, (a32(X),), (jnp.asarray(X.astype(np.float16)),))
    with pytest.raises(TypeError, match=MISMATCH):
        webjax.jvp(lax.sin, (a32(X),), (jnp.asarray(np.array([1, 2, 3], np.int32)),))


def test_jvp_integer_primal_gets_zero_tangent():
    # JAX wants float0 tangents for integer primals; the output tangent is zero.
    x = jnp.array([1, 2, 3])
    _, t = webjax.jvp(lambda x, y: x * 2 + y, (a32(X), x), (a32(Y), jnp.zeros(3, jnp.int32)))
    np.testing.assert_allclose(np.asarray(t), Y * 2, rtol=1e-6)


def test_vjp_pytrees_and_has_aux(rjax):
    def f(ns, x, y):
        return {"s": ns.numpy.sum(x * y), "v": ns.numpy.exp(x)}, "aux"

    x, y = f32(0.1, 0.7), f32(-1.0, 2.0)
    out, pb, aux = webjax.vjp(functools.partial(f, webjax), a32(x), a32(y), has_aux=True)
    rout, rpb, raux = rjax.vjp(functools.partial(f, rjax), x, y, has_aux=True)
    assert aux == raux == "aux"
    assert_tree_close(out, rout)
    ct = {"s": 1.5, "v": f32(2.0, -3.0)}
    got = pb({"s": a32(1.5), "v": a32(ct["v"])})
    want = rpb({"s": np.float32(1.5), "v": ct["v"]})
    assert isinstance(got, tuple) and len(got) == 2
    assert_tree_close(got, want)


def test_vjp_cotangent_errors():
    _, pb = webjax.vjp(lambda x: (x, x), a32(X))
    with pytest.raises(ValueError):
        pb(a32(X))  # wrong tree structure
    _, pb = webjax.vjp(lambda x: x, a32(X))
    with pytest.raises(ValueError):
        pb(a32(X[:2]))  # wrong shape


def test_vjp_unused_input_gets_zeros():
    _, pb = webjax.vjp(lambda x, y: x * 2.0, a32(X), a32(Y))
    _, gy = pb(a32(Y))
    np.testing.assert_allclose(np.asarray(gy), np.zeros(3))
    assert gy.dtype == jnp.float32 and gy.shape == (3,)


def test_linearize(rjax):
    def f(ns, x, y):
        return ns.numpy.sin(x) * y, ns.numpy.sum(x * x)

    x, y = f32(0.1, 0.5), f32(2.0, 3.0)
    out, f_jvp = webjax.linearize(functools.partial(f, webjax), a32(x), a32(y))
    rout, rf_jvp = rjax.linearize(functools.partial(f, rjax), x, y)
    assert_tree_close(out, rout)
    for tx, ty in [(f32(1.0, 0.0), f32(0.0, 1.0)), (f32(0.3, -2.0), f32(1.0, 1.0))]:
        assert_tree_close(f_jvp(a32(tx), a32(ty)), rf_jvp(tx, ty))


def test_linearize_has_aux():
    _, f_jvp, aux = webjax.linearize(lambda x: (lax.sin(x), x * 2), a32(X), has_aux=True)
    np.testing.assert_allclose(np.asarray(aux), X * 2)
    np.testing.assert_allclose(np.asarray(f_jvp(a32(Y))), np.cos(X) * Y, rtol=1e-5)


# ---- jacobians ---------------------------------------------------------------------------------
def _jac_fun(ns, p, x):
    y = ns.numpy.tanh(p["w"] * x) + p["b"][0]
    return {"y": y, "s": (ns.numpy.sum(y * y),)}


@pytest.mark.parametrize("which", ["jacfwd", "jacrev", "jacobian"])
def test_jacobians_pytree_in_out(rjax, which):
    p = {"w": f32(0.5, -1.0, 2.0), "b": (f32(0.25).reshape(()),)}
    x = f32(1.0, 0.5, -0.5)
    for argnums in (0, 1, (0, 1)):
        got = getattr(webjax, which)(functools.partial(_jac_fun, webjax), argnums=argnums)(
            webjax.tree_util.tree_map(a32, p), a32(x)
        )
        want = getattr(rjax, which)(functools.partial(_jac_fun, rjax), argnums=argnums)(p, x)
        assert str(webjax.tree_util.tree_structure(got)) == str(rjax.tree_util.tree_structure(want))
        assert_tree_close(got, want, rtol=1e-5, atol=1e-6)


def test_jacobian_matrix_shapes(rjax):
    def f(ns, x):
        return ns.numpy.sin(x).reshape(2, 3) * 2.0

    x = np.linspace(-1, 1, 6, dtype=np.float32)
    for name in ("jacfwd", "jacrev"):
        got = getattr(webjax, name)(functools.partial(f, webjax))(jnp.asarray(x))
        want = getattr(rjax, name)(functools.partial(f, rjax))(x)
        assert got.shape == want.shape == (2, 3, 6)
        assert_tree_close(got, want)


def test_jacrev_has_aux(rjax):
    def f(ns, x):
        return ns.numpy.sin(x) * 3.0, ns.numpy.sum(x)

    got, aux = webjax.jacrev(functools.partial(f, webjax), has_aux=True)(a32(X))
    want, raux = rjax.jacrev(functools.partial(f, rjax), has_aux=True)(X)
    assert_tree_close(got, want)
    assert_tree_close(aux, raux)


def test_hessian(rjax):
    def f(ns, x):
        return ns.numpy.sum(ns.numpy.tanh(x) ** 2 * x[0]) + ns.numpy.sum(ns.numpy.exp(x) * x)

    got = webjax.hessian(functools.partial(f, webjax))(a32(X))
    want = rjax.hessian(functools.partial(f, rjax))(X)
    assert got.shape == (3, 3)
    assert_tree_close(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got), np.asarray(got).T, rtol=1e-5, atol=1e-6)


def test_hessian_pytree(rjax):
    def f(ns, p):
        return ns.numpy.sum(p["a"] ** 2 * p["b"]) + ns.numpy.sum(ns.numpy.sin(p["a"]))

    p = {"a": f32(0.5, 1.0), "b": f32(2.0, -1.0)}
    got = webjax.hessian(functools.partial(f, webjax))(webjax.tree_util.tree_map(a32, p))
    want = rjax.hessian(functools.partial(f, rjax))(p)
    assert_tree_close(got, want, rtol=1e-5)


# ---- jit -----------------------------------------------------------------------------------------
def _corpus(ns):
    lx, np_ = ns.lax, ns.numpy
    return {
        "chain": lambda x: np_.tanh(np_.sin(x) * 2.0 + 1.0) / (1.0 + x * x),
        "reduce": lambda x: (np_.sum(x * x), np_.max(x), np_.mean(x)),
        "reshape": lambda x: (x.reshape(3, 2) * 2).reshape(6)[::2],
        "broadcast": lambda x: x.reshape(6, 1) + x.reshape(1, 6),
        "dot": lambda x: lx.dot(x.reshape(2, 3), x.reshape(3, 2)),
        "int_ops": lambda x: (lx.convert_element_type(x * 10, np_.int32) % 3) * 2 + 1,
        "pytree": lambda x: {"a": x + 1, "b": [x * 2, (np_.sum(x),)]},
        "index": lambda x: x[1:4] * x[0] + x[-1],
        "at": lambda x: x.at[2].set(7.0).at[0].add(1.0),
        "cmp": lambda x: lx.select(x > 0.0, x, -x * 0.5),
        "clamp": lambda x: lx.clamp(-0.5, x, 0.5),
        "python_scalars": lambda x: 2 * x - 1 + 3.5 * x,
        "pad_rev": lambda x: lx.rev(lx.pad(x, 0.0, [(1, 1, 1)]), (0,)),
        "round": lambda x: (
            lx.round(x * 2.0),
            lx.round(x * 2.0, lx.RoundingMethod.TO_NEAREST_EVEN),
        ),
    }


@pytest.mark.parametrize("name", sorted(_corpus(webjax)))
def test_jit_matches_eager_and_jax(rjax, name):
    x = np.linspace(-1.5, 2.0, 6, dtype=np.float32)
    f = _corpus(webjax)[name]
    eager = f(jnp.asarray(x))
    jitted = webjax.jit(f)
    got = jitted(jnp.asarray(x))
    assert_tree_close(got, eager, rtol=1e-6, atol=1e-6)
    want = _corpus(rjax)[name](rjax.numpy.asarray(x))
    assert_tree_close(got, want, rtol=2e-6, atol=1e-6)
    for g, w in zip(webjax.tree_util.tree_leaves(got), rjax.tree_util.tree_leaves(want)):
        assert str(g.dtype) == str(w.dtype)
    jitted(jnp.asarray(x * 0.5))
    assert jitted.trace_count == 1


def test_jit_retraces_on_new_shapes_dtypes_and_statics():
    calls = []

    def f(x, n):
        calls.append(1)
        return x * n

    jf = webjax.jit(f, static_argnums=1)
    jf(jnp.zeros(3), 2)
    jf(jnp.ones(3), 2)
    assert jf.trace_count == 1 and len(calls) == 1
    jf(jnp.ones(4), 2)  # new shape
    assert jf.trace_count == 2
    jf(jnp.ones(4, jnp.int32), 2)  # new dtype
    assert jf.trace_count == 3
    jf(jnp.ones(4, jnp.int32), 3)  # new static value
    assert jf.trace_count == 4
    jf(jnp.ones(4, jnp.int32), 3)
    assert jf.trace_count == 4 and len(calls) == 4


def test_jit_closing_over_an_enclosing_tracer(rjax):
    """A jitted function may close over values of an enclosing grad/vmap/jit: they become
    arguments of the jit (and such traces are not cached: the next call closes over others)."""
    x = f32(0.0, 1.0, 2.0)

    def programs(ns):
        jit, grad, vmap, np_ = ns.jit, ns.grad, ns.vmap, ns.numpy
        return [
            grad(lambda s: jit(lambda y: y * s)(x).sum())(2.0),
            grad(lambda s: vmap(jit(lambda y: np_.sin(y * s)))(x).sum())(0.5),
            vmap(lambda s: jit(lambda y: y * s)(x))(np_.arange(2.0)),
            jit(lambda s: jit(lambda y: y * s)(x))(3.0),
            ns.hessian(lambda s: jit(lambda y: np_.sin(y * s))(x).sum())(0.5),
            jit(grad(lambda s: jit(lambda y: (y * s) ** 2)(x).sum()))(1.5),
        ]

    for got, want in zip(programs(webjax), programs(rjax), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)
    inner = webjax.jit(lambda y, s: y * s)
    outer = lambda s: webjax.jit(lambda y: inner(y, s))(jnp.asarray(x)).sum()
    assert float(webjax.grad(outer)(2.0)) == 3.0 and float(webjax.grad(outer)(5.0)) == 3.0


def test_jit_weak_type_retraces():
    jf = webjax.jit(lambda x: x * 2)
    jf(1.0)
    jf(2.0)
    assert jf.trace_count == 1
    r = jf(lax.full((), 3.0, "float32"))
    assert r.dtype == jnp.float32
    assert jf.trace_count == 2  # a strong f32[] differs from a weak f32[]


def test_jit_constant_outputs_are_arrays(rjax):
    got = webjax.jit(lambda x: (x, 1.0, 2))(2.0)
    want = rjax.jit(lambda x: (x, 1.0, 2))(2.0)
    for g, w in zip(got, want):
        assert isinstance(g, webjax.Array), repr(g)
        assert str(g.dtype) == str(w.dtype) and g.weak_type == w.weak_type


def test_jit_static_argnames_and_kwargs():
    def f(x, *, mode):
        return x + 1.0 if mode == "inc" else x - 1.0

    jf = webjax.jit(f, static_argnames="mode")
    assert jf(jnp.zeros(2), mode="inc").tolist() == [1.0, 1.0]
    assert jf(jnp.zeros(2), mode="dec").tolist() == [-1.0, -1.0]
    assert jf(jnp.zeros(2), mode="inc").tolist() == [1.0, 1.0]
    assert jf.trace_count == 2


def test_jit_unhashable_static_is_value_error():
    jf = webjax.jit(lambda x, s: x, static_argnums=1)
    with pytest.raises(ValueError):
        jf(jnp.zeros(2), [1, 2])


def test_jit_lower_as_text():
    jf = webjax.jit(lambda x: lax.sin(x) * 2.0)
    text = jf.lower(jnp.zeros(3)).as_text()
    assert isinstance(text, str) and "sin" in text


def test_jit_donate_argnums_accepted():
    jf = webjax.jit(lambda x: x + 1.0, donate_argnums=0)
    assert jf(jnp.zeros(2)).tolist() == [1.0, 1.0]


def test_jit_nested_and_closure_constants():
    c = jnp.asarray(f32(1.0, 2.0, 3.0))
    inner = webjax.jit(lambda x: x * c)
    outer = webjax.jit(lambda x: inner(x) + inner(x * 2.0))
    np.testing.assert_allclose(np.asarray(outer(a32(X))), X * 3 * np.array([1, 2, 3]), rtol=1e-6)


# ---- compositions with jit / vmap vs JAX ---------------------------------------------------------
def _loss(ns, w, x, y):
    pred = ns.numpy.tanh(ns.lax.dot(x, w))
    return ns.numpy.sum((pred - y) ** 2)


W = f32(0.2, -0.4, 0.6)
XB = np.arange(12, dtype=np.float32).reshape(4, 3) * 0.1 - 0.5
YB = f32(0.1, -0.2, 0.3, 0.0)


@pytest.mark.parametrize("combo", ["grad_jit", "jit_grad", "jit_grad_jit", "value_and_grad_jit"])
def test_grad_and_jit_compose(rjax, combo):
    def build(ns):
        loss = functools.partial(_loss, ns)
        return {
            "grad_jit": ns.grad(ns.jit(loss)),
            "jit_grad": ns.jit(ns.grad(loss)),
            "jit_grad_jit": ns.jit(ns.grad(ns.jit(loss))),
            "value_and_grad_jit": ns.value_and_grad(ns.jit(loss)),
        }[combo]

    got = build(webjax)(a32(W), jnp.asarray(XB), jnp.asarray(YB))
    want = build(rjax)(W, XB, YB)
    assert_tree_close(got, want, rtol=1e-5)


@pytest.mark.parametrize("combo", ["vmap_jit", "jit_vmap", "vmap_grad", "jit_vmap_grad"])
def test_vmap_and_jit_grad_compose(rjax, combo):
    def build(ns):
        def per_example(w, x, y):
            return _loss(ns, w, x, y)

        g = ns.grad(per_example)
        return {
            "vmap_jit": ns.vmap(ns.jit(per_example), in_axes=(None, 0, 0)),
            "jit_vmap": ns.jit(ns.vmap(per_example, in_axes=(None, 0, 0))),
            "vmap_grad": ns.vmap(g, in_axes=(None, 0, 0)),
            "jit_vmap_grad": ns.jit(ns.vmap(g, in_axes=(None, 0, 0))),
        }[combo]

    got = build(webjax)(a32(W), jnp.asarray(XB), jnp.asarray(YB))
    want = build(rjax)(W, XB, YB)
    assert got.shape == want.shape
    assert_tree_close(got, want, rtol=1e-5)


def test_per_example_gradients_match_loop():
    g = webjax.grad(functools.partial(_loss, webjax))
    batched = webjax.vmap(g, in_axes=(None, 0, 0))(a32(W), jnp.asarray(XB), jnp.asarray(YB))
    for i in range(4):
        one = g(a32(W), jnp.asarray(XB[i]), a32(YB[i]))
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(one), rtol=1e-5, atol=1e-7)


def test_grad_of_vmap_and_jacfwd_of_jit(rjax):
    def build(ns):
        f = ns.vmap(lambda x: ns.numpy.sin(x) * x)
        return ns.grad(lambda x: ns.numpy.sum(f(x))), ns.jacfwd(ns.jit(f)), ns.jacrev(f)

    for gw, gr in zip(build(webjax), build(rjax)):
        assert_tree_close(gw(a32(X)), gr(X), rtol=1e-5)


# ---- stop_gradient / linear_transpose / eval_shape / checkpoint ----------------------------------
def test_stop_gradient(rjax):
    def f(ns, x):
        return ns.numpy.sum(x * ns.lax.stop_gradient(x) + ns.lax.stop_gradient(x**3))

    got = webjax.grad(functools.partial(f, webjax))(a32(X))
    assert_tree_close(got, rjax.grad(functools.partial(f, rjax))(X))
    assert_tree_close(got, X)
    assert webjax.stop_gradient is lax.stop_gradient or callable(webjax.stop_gradient)
    out = webjax.stop_gradient({"a": a32(X), "b": (1.0,)})
    assert sorted(out) == ["a", "b"]

    # second order: the stopped factor blocks the outer derivative as well
    def h(ns, x):
        return ns.grad(lambda y: y * ns.lax.stop_gradient(y) ** 2 + y**3)(x)

    got = webjax.grad(functools.partial(h, webjax))(2.0)
    assert_tree_close(got, rjax.grad(functools.partial(h, rjax))(2.0))


def test_linear_transpose(rjax):
    def f(ns, x, y):
        return {"a": x * 2.0 - y, "b": ns.numpy.sum(x)}

    x, y = f32(1.0, 2.0), f32(3.0, 4.0)
    ft = webjax.linear_transpose(functools.partial(f, webjax), a32(x), a32(y))
    rft = rjax.linear_transpose(functools.partial(f, rjax), x, y)
    ct = {"a": f32(1.0, -1.0), "b": np.float32(0.5)}
    got = ft({"a": a32(ct["a"]), "b": a32(0.5)})
    assert isinstance(got, tuple) and len(got) == 2
    assert_tree_close(got, rft(ct))


def test_linear_transpose_of_matvec(rjax):
    m = jnp.asarray(M23)
    ft = webjax.linear_transpose(lambda v: lax.dot(m, v), webjax.ShapeDtypeStruct((3,), "float32"))
    (got,) = ft(a32(f32(1.0, 2.0)))
    np.testing.assert_allclose(np.asarray(got), M23.T @ f32(1.0, 2.0), rtol=1e-6)


def test_eval_shape(rjax):
    def f(ns, p, x):
        return {"y": ns.lax.dot(x, p["w"]) + p["b"], "n": ns.numpy.sum(x, axis=0).astype("int32")}

    p = {"w": np.zeros((3, 4), np.float32), "b": np.zeros(4, np.float32)}
    x = np.zeros((2, 3), np.float32)
    got = webjax.eval_shape(
        functools.partial(f, webjax),
        webjax.tree_util.tree_map(lambda a: webjax.ShapeDtypeStruct(a.shape, a.dtype), p),
        webjax.ShapeDtypeStruct((2, 3), jnp.float32),
    )
    want = rjax.eval_shape(functools.partial(f, rjax), p, x)
    assert got["y"].shape == want["y"].shape == (2, 4)
    assert str(got["y"].dtype) == str(want["y"].dtype)
    assert got["n"].shape == (3,) and str(got["n"].dtype) == "int32"
    assert isinstance(got["y"], webjax.ShapeDtypeStruct)


def test_eval_shape_runs_no_computation():
    calls = []

    def f(x):
        calls.append(type(x))
        return x * 2.0

    out = webjax.eval_shape(f, jnp.zeros((1000, 1000)))
    assert out.shape == (1000, 1000) and len(calls) == 1 and issubclass(calls[0], core.Tracer)


def test_checkpoint_values_and_grads(rjax):
    def f(ns, x):
        g = ns.checkpoint(lambda y: ns.numpy.sin(ns.numpy.sin(y)))
        return ns.numpy.sum(g(x) * x)

    assert_tree_close(
        webjax.grad(functools.partial(f, webjax))(a32(X)),
        rjax.grad(functools.partial(f, rjax))(X),
        rtol=1e-5,
    )


# ---- errors ------------------------------------------------------------------------------------
def test_vmap_wrong_in_axes_is_value_error():
    with pytest.raises(ValueError):
        webjax.vmap(lambda x: x, in_axes=1)(jnp.zeros(3))  # axis out of range
    with pytest.raises(ValueError):
        webjax.vmap(lambda x, y: x + y, in_axes=(0, 0, 0))(jnp.zeros(3), jnp.zeros(3))
    with pytest.raises(ValueError):
        webjax.vmap(lambda x, y: x + y)(jnp.zeros(3), jnp.zeros(4))  # inconsistent sizes


def test_leaked_tracer_is_unexpected_tracer_error():
    leaked = []

    @webjax.jit
    def f(x):
        leaked.append(x)
        return x

    f(jnp.zeros(2))
    with pytest.raises(errors().UnexpectedTracerError):
        leaked[0] + 1.0
    grads = []
    webjax.grad(lambda x: (grads.append(x), x * 2.0)[1])(1.0)
    with pytest.raises(errors().UnexpectedTracerError):
        lax.sin(grads[0])


def test_errors_module_is_importable():
    import importlib

    errors = importlib.import_module("webjax.errors")  # JAX exposes jax.errors
    assert webjax.errors is errors
    for name in (
        "ConcretizationTypeError",
        "TracerBoolConversionError",
        "TracerIntegerConversionError",
        "TracerArrayConversionError",
        "UnexpectedTracerError",
    ):
        assert getattr(errors, name) is getattr(core, name)


def test_bool_of_tracer_under_jit():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(errors().TracerBoolConversionError):
        webjax.jit(f)(1.0)
    assert issubclass(core.TracerBoolConversionError, core.ConcretizationTypeError)
    assert issubclass(core.ConcretizationTypeError, TypeError)


def test_int_of_tracer_under_jit():
    with pytest.raises(errors().ConcretizationTypeError):
        webjax.jit(lambda x: x * int(x))(jnp.array(2))
    with pytest.raises(errors().ConcretizationTypeError):
        webjax.jit(lambda x: float(x))(1.0)
    with pytest.raises(errors().TracerArrayConversionError):
        webjax.jit(lambda x: np.asarray(x))(1.0)


def test_concrete_python_control_flow_under_grad(rjax):
    # grad traces with concrete values in JAX: Python control flow on values works.
    def f(ns, x):
        return ns.numpy.sin(x) if x > 0 else ns.numpy.cos(x)

    for v in (0.5, -0.5):
        assert_tree_close(
            webjax.grad(functools.partial(f, webjax))(v), rjax.grad(functools.partial(f, rjax))(v)
        )


def test_vmap_of_bool_is_error():
    with pytest.raises(errors().ConcretizationTypeError):
        webjax.vmap(lambda x: x if x > 0 else -x)(jnp.asarray(X))


def test_jit_non_array_argument_is_type_error():
    with pytest.raises(TypeError):
        webjax.jit(lambda s: s)("a string")


class _Pt(NamedTuple):
    x: Any
    y: Any


def test_grad_namedtuple_argument(rjax):
    def f(ns, p):
        return ns.numpy.sum(p.x * p.y**2)

    got = webjax.grad(functools.partial(f, webjax))(_Pt(a32(X), a32(Y)))
    want = rjax.grad(functools.partial(f, rjax))(_Pt(X, Y))
    assert isinstance(got, _Pt)
    assert_tree_close(got, want)


def test_make_jaxpr_of_grad_is_closed():
    closed = webjax.make_jaxpr(webjax.grad(lambda x: lax.sin(x) * x))(1.0)
    (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, a32(0.5))
    assert math.isclose(float(out), math.cos(0.5) * 0.5 + math.sin(0.5), rel_tol=1e-6)


# ---- on every backend ---------------------------------------------------------------------------
def test_grad_jit_vmap_on_device(device):
    def loss(w, x):
        return jnp.sum(jnp.tanh(lax.dot(x, w)) ** 2)

    w, xb = a32(W), jnp.asarray(XB)
    per_ex = webjax.jit(webjax.vmap(webjax.grad(loss), in_axes=(None, 0)))(w, xb)
    full = webjax.grad(lambda w: loss(w, xb))(w)
    np.testing.assert_allclose(np.asarray(per_ex).sum(0), np.asarray(full), rtol=1e-5, atol=1e-6)
    t = np.tanh(XB @ W)
    np.testing.assert_allclose(np.asarray(full), XB.T @ (2 * t * (1 - t * t)), rtol=1e-5, atol=1e-6)
