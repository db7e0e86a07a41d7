"""Named axes and collectives (psum & co.) under vmap, pmap, grad, jit and make_jaxpr, and
`flatten_util.ravel_pytree`, against real JAX: each program runs with `ns = webjax` and with
`ns = jax` and must give the same values, shapes, dtypes (weak types included) or errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import webjax
import webjax.numpy as jnp
from webjax import lax
from webjax.flatten_util import ravel_pytree

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
pytest.importorskip("jax.flatten_util")  # `jax.flatten_util` is a submodule to import

F = np.float32
X32 = np.arange(6, dtype=F).reshape(3, 2) * 0.5 - 1.0
X234 = np.linspace(-1.0, 1.5, 24, dtype=F).reshape(2, 3, 4)
X33 = np.array([[0.9, -0.3, 0.4], [0.2, 1.4, -0.6], [-0.5, 0.1, 1.1]], F)
X36 = np.linspace(-2.0, 2.0, 18, dtype=F).reshape(3, 6)
X323 = np.linspace(0.5, 3.0, 18, dtype=F).reshape(3, 2, 3)
I32 = np.arange(6, dtype=np.int32).reshape(3, 2) - 2
B3 = np.array([True, False, True])
V3 = np.array([0.5, -1.0, 2.0], F)
CYCLE = [(0, 1), (1, 2), (2, 0)]


# ---- comparing webjax with JAX -------------------------------------------------------------------
def _leaves(tree: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(tree)


def _describe(x: Any) -> tuple[Any, ...]:
    a = np.asarray(x)
    return a.shape, str(getattr(x, "dtype", a.dtype)), getattr(x, "weak_type", None)


def assert_same(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    g, w = _leaves(got), _leaves(want)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want), (got, want)
    for a, b in zip(g, w, strict=True):
        da, db = _describe(a), _describe(b)
        if None in (da[2], db[2]):  # a NumPy result (JAX's vmap may hand NumPy through)
            da, db = da[:2], db[:2]
        assert da == db, (da, db)
        if np.asarray(b).dtype.kind in "fcV" or "float" in da[1]:  # (bfloat16 is "V")
            np.testing.assert_allclose(
                np.asarray(a).astype(complex), np.asarray(b).astype(complex), rtol=rtol, atol=atol
            )
        else:
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def both(fn: Any, *args: Any) -> tuple[Any, Any]:
    return fn(webjax, *args), fn(jax, *args)


def check(fn: Any, *args: Any, **tol: Any) -> None:
    got, want = both(fn, *args)
    assert_same(got, want, **tol)


def _sets_sorted(message: str) -> str:
    """`message` with the items of each printed set sorted: a set literal's iteration order
    depends on the hash seed of the process that compiled it (JAX's .pyc or ours), so JAX's
    own message lists `{'varying', 'reduced', 'invarying'}` in a different order per install."""
    return re.sub(
        r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m[1].split(", "))) + "}", message
    )


def check_error(fn: Any, *args: Any) -> None:
    """Both raise the same exception type with the same message (up to set order)."""
    with pytest.raises(Exception) as want:
        fn(jax, *args)
    with pytest.raises(type(want.value)) as got:
        fn(webjax, *args)
    assert _sets_sorted(str(got.value)) == _sets_sorted(str(want.value))


def V(ns: Any, f: Any, name: str = "i", **kw: Any) -> Any:
    return ns.vmap(f, axis_name=name, **kw)


# ---- every collective under vmap(axis_name=...) -----------------------------------------------
PROGRAMS: dict[str, tuple[Any, tuple]] = {
    "psum": (lambda ns, x: V(ns, lambda y: ns.lax.psum(y, "i"))(x), (X32,)),
    "psum_in_axes_1": (lambda ns, x: V(ns, lambda y: ns.lax.psum(y, "i"), in_axes=1)(x), (X32,)),
    "psum_int": (lambda ns, x: V(ns, lambda y: ns.lax.psum(y, "i"))(x), (I32,)),
    "psum_bool": (lambda ns, x: V(ns, lambda y: ns.lax.psum(y, "i"))(x), (B3,)),
    "psum_python_int": (lambda ns, x: V(ns, lambda y: ns.lax.psum(1, "i"))(x), (X32,)),
    "psum_python_float": (lambda ns, x: V(ns, lambda y: y + ns.lax.psum(2.0, "i"))(x), (X32,)),
    "psum_closed_over_array": (
        lambda ns, x: V(ns, lambda y: y * ns.lax.psum(ns.numpy.asarray(V3), "i")[0])(x),
        (X32,),
    ),
    "psum_pytree": (
        lambda ns, x: V(ns, lambda y: ns.lax.psum({"a": y, "b": (y * 2, 1.0)}, "i"))(x),
        (X32,),
    ),
    "psum_positional": (lambda ns, x: V(ns, lambda y: ns.lax.psum(y, ("i", 0)))(x), (X234,)),
    "psum_positional_in_axes": (
        lambda ns, x: V(ns, lambda y: ns.lax.psum(y, ("i", 1)), in_axes=2)(x),
        (X234,),
    ),
    "psum_list_names": (lambda ns, x: V(ns, lambda y: ns.lax.psum(y, ["i"]))(x), (X32,)),
    "pmean": (lambda ns, x: V(ns, lambda y: ns.lax.pmean(y, "i"))(x), (X32,)),
    "pmean_int": (lambda ns, x: V(ns, lambda y: ns.lax.pmean(y, "i"))(x), (I32,)),
    "pmean_pytree": (
        lambda ns, x: V(ns, lambda y: ns.lax.pmean({"a": y, "b": (y * 2, 1.0)}, "i"))(x),
        (X32,),
    ),
    "pmax": (lambda ns, x: V(ns, lambda y: ns.lax.pmax(y, "i"))(x), (X32,)),
    "pmax_int": (lambda ns, x: V(ns, lambda y: ns.lax.pmax(y, "i"), in_axes=1)(x), (I32,)),
    "pmax_bool": (lambda ns, x: V(ns, lambda y: ns.lax.pmax(y, "i"))(x), (B3,)),
    "pmax_pytree_scalar": (lambda ns, x: V(ns, lambda y: ns.lax.pmax([y, 1.0], "i"))(x), (X32,)),
    "pmin": (lambda ns, x: V(ns, lambda y: ns.lax.pmin(y, "i"))(x), (X32,)),
    "pmin_unmapped": (
        lambda ns, x: V(ns, lambda y: ns.lax.pmin(ns.numpy.asarray(V3), "i") + y[0])(x),
        (X32,),
    ),
    "all_gather": (lambda ns, x: V(ns, lambda y: ns.lax.all_gather(y, "i"))(x), (X32,)),
    "all_gather_axis_1": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_gather(y, "i", axis=1), in_axes=1)(x),
        (X234,),
    ),
    "all_gather_axis_-1": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_gather(y, "i", axis=-1))(x),
        (X234,),
    ),
    "all_gather_tiled": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_gather(y, "i", tiled=True))(x),
        (X32,),
    ),
    "all_gather_tiled_axis_1": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_gather(y, "i", axis=1, tiled=True))(x),
        (X234,),
    ),
    "all_gather_pytree_unmapped": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_gather([y, 1.0], "i"))(x),
        (X32,),
    ),
    "axis_index": (lambda ns, x: V(ns, lambda y: y + ns.lax.axis_index("i"))(x), (X32,)),
    "axis_index_alone": (lambda ns, x: V(ns, lambda y: ns.lax.axis_index("i"))(x), (X32,)),
    "axis_size": (lambda ns, x: V(ns, lambda y: y * ns.lax.axis_size("i"))(x), (X32,)),
    "ppermute": (lambda ns, x: V(ns, lambda y: ns.lax.ppermute(y, "i", CYCLE))(x), (X32,)),
    "ppermute_axis_1": (
        lambda ns, x: V(
            ns, lambda y: ns.lax.ppermute(y * 2, "i", [(0, 2), (2, 0), (1, 1)]), in_axes=1
        )(x),
        (X234,),
    ),
    "pshuffle": (lambda ns, x: V(ns, lambda y: ns.lax.pshuffle(y, "i", [2, 0, 1]))(x), (X32,)),
    "psum_scatter": (lambda ns, x: V(ns, lambda y: ns.lax.psum_scatter(y, "i"))(x), (X33,)),
    "psum_scatter_tiled": (
        lambda ns, x: V(ns, lambda y: ns.lax.psum_scatter(y, "i", tiled=True))(x),
        (X36,),
    ),
    "psum_scatter_dim_1": (
        lambda ns, x: V(ns, lambda y: ns.lax.psum_scatter(y, "i", scatter_dimension=1))(x),
        (X323,),
    ),
    "all_to_all": (lambda ns, x: V(ns, lambda y: ns.lax.all_to_all(y, "i", 0, 0))(x), (X33,)),
    "all_to_all_split_1": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_to_all(y, "i", 1, 0))(x),
        (X323,),
    ),
    "all_to_all_tiled": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_to_all(y, "i", 1, 0, tiled=True))(x),
        (np.linspace(0, 1, 36, dtype=F).reshape(3, 2, 6),),
    ),
    "pswapaxes": (lambda ns, x: V(ns, lambda y: ns.lax.pswapaxes(y, "i", 0))(x), (X33,)),
    # nested named axes
    "nested_outer_name": (
        lambda ns, x: V(ns, V(ns, lambda y: ns.lax.psum(y, "i"), "j"))(x),
        (X234,),
    ),
    "nested_inner_name": (
        lambda ns, x: V(ns, V(ns, lambda y: ns.lax.pmax(y, "j"), "j"))(x),
        (X234,),
    ),
    "nested_tuple": (
        lambda ns, x: V(ns, V(ns, lambda y: ns.lax.psum(y, ("i", "j")), "j"))(x),
        (X234,),
    ),
    "nested_tuple_reversed": (
        lambda ns, x: V(ns, V(ns, lambda y: ns.lax.pmin(y, ("j", "i")), "j"))(x),
        (X234,),
    ),
    "nested_same_name": (lambda ns, x: V(ns, V(ns, lambda y: ns.lax.psum(y, "i")))(x), (X234,)),
    "nested_all_gather_outer": (
        lambda ns, x: V(ns, V(ns, lambda y: ns.lax.all_gather(y, "i", axis=1), "j"))(x),
        (X234,),
    ),
    "nested_axis_index_tuple": (
        lambda ns, x: V(ns, V(ns, lambda y: y * ns.lax.axis_index(("i", "j")), "j"))(x),
        (X234,),
    ),
    "nested_axis_size_tuple": (
        lambda ns, x: V(ns, V(ns, lambda y: ns.lax.axis_size(("i", "j")), "j"))(x),
        (X234,),
    ),
    "nested_ppermute_outer": (
        lambda ns, x: V(ns, V(ns, lambda y: ns.lax.ppermute(y, "i", [(0, 1), (1, 0)]), "j"))(x),
        (X234,),
    ),
    "nested_unnamed_inner": (
        lambda ns, x: V(ns, ns.vmap(lambda y: y + ns.lax.axis_index("i")))(x),
        (X234,),
    ),
    # jit and control flow
    "jit_inside": (lambda ns, x: V(ns, ns.jit(lambda y: ns.lax.psum(y, "i")))(x), (X32,)),
    "jit_outside": (lambda ns, x: ns.jit(V(ns, lambda y: ns.lax.pmean(y, "i")))(x), (X32,)),
    "jit_inside_constant": (
        lambda ns, x: V(ns, ns.jit(lambda y: y + ns.lax.psum(1, "i")))(x),
        (X32,),
    ),
    "jit_inside_unmapped_args": (
        lambda ns, x: V(
            ns, lambda y: ns.jit(lambda c: c * ns.lax.axis_index("i"))(ns.numpy.ones(2)) + y
        )(x),
        (X32,),
    ),
    "jit_nullary": (
        lambda ns, x: V(ns, lambda y: ns.jit(lambda: ns.lax.axis_index("i"))() + y)(x),
        (V3,),
    ),
    "axis_size_only": (
        lambda ns: ns.vmap(
            lambda: ns.lax.psum(ns.lax.axis_index("i"), "i"), axis_size=3, axis_name="i"
        )(),
        (),
    ),
    "jit_all_gather": (
        lambda ns, x: ns.jit(V(ns, ns.jit(lambda y: ns.lax.all_gather(y, "i", tiled=True))))(x),
        (X32,),
    ),
    "scan": (
        lambda ns, x: V(
            ns, lambda y: ns.lax.scan(lambda c, v: (c + ns.lax.psum(v, "i"), c * v), 0.0, y)
        )(x),
        (X32,),
    ),
    "cond": (
        lambda ns, x: V(
            ns,
            lambda y: ns.lax.cond(y[0] > -0.6, lambda v: ns.lax.psum(v, "i"), lambda v: v * 2, y),
        )(x),
        (X32,),
    ),
    "while": (
        lambda ns, x: V(
            ns,
            lambda y: ns.lax.while_loop(lambda c: ns.lax.psum(c, "i") < 20.0, lambda c: c + 1.0, y),
        )(x),
        (V3,),
    ),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_collective_programs(device: Any, name: str) -> None:
    fn, args = PROGRAMS[name]
    check(fn, *args)


# ---- derivatives --------------------------------------------------------------------------------
GRADS: dict[str, tuple[Any, tuple]] = {
    "vmap_grad_psum": (lambda ns, x: V(ns, ns.grad(lambda y: ns.lax.psum(y, "i")))(x), (V3,)),
    "vmap_grad_psum_sq": (
        lambda ns, x: V(ns, ns.grad(lambda y: ns.lax.psum(y * y, "i") * y))(x),
        (V3,),
    ),
    "vmap_grad_pmean": (
        lambda ns, x: V(ns, ns.grad(lambda y: ns.numpy.sin(ns.lax.pmean(y, "i")).sum()))(x),
        (X32,),
    ),
    "vmap_grad_all_gather": (
        lambda ns, x: V(ns, ns.grad(lambda y: (ns.lax.all_gather(y, "i") ** 2).sum()))(x),
        (X32,),
    ),
    "vmap_grad_all_gather_tiled": (
        lambda ns, x: V(
            ns,
            ns.grad(lambda y: (ns.lax.all_gather(y, "i", tiled=True) * ns.numpy.arange(6.0)).sum()),
        )(x),
        (X32,),
    ),
    "vmap_grad_psum_scatter": (
        lambda ns, x: V(ns, ns.grad(lambda y: (ns.lax.psum_scatter(y, "i") ** 2).sum()))(x),
        (X33,),
    ),
    "vmap_grad_ppermute": (
        lambda ns, x: V(ns, ns.grad(lambda y: (ns.lax.ppermute(y, "i", CYCLE) * y).sum()))(x),
        (X32,),
    ),
    "grad_vmap_psum": (
        lambda ns, x: ns.grad(lambda v: V(ns, lambda y: ns.lax.psum(y * y, "i"))(v).sum())(x),
        (V3,),
    ),
    "grad_vmap_pmean": (
        lambda ns, x: ns.grad(lambda v: (V(ns, lambda y: ns.lax.pmean(y, "i") * y)(v)).sum())(x),
        (X32,),
    ),
    "grad_vmap_all_gather": (
        lambda ns, x: ns.grad(lambda v: (V(ns, lambda y: ns.lax.all_gather(y, "i"))(v) ** 2).sum())(
            x
        ),
        (V3,),
    ),
    "jvp_vmap_psum": (
        lambda ns, x: V(ns, lambda y, t: ns.jvp(lambda z: ns.lax.psum(z * z, "i"), (y,), (t,)))(
            x, x * 2
        ),
        (V3,),
    ),
    "jacfwd_vmap_pmean": (
        lambda ns, x: ns.jacfwd(V(ns, lambda y: ns.lax.pmean(ns.numpy.sin(y), "i")))(x),
        (V3,),
    ),
    "jacrev_vmap_all_gather": (
        lambda ns, x: ns.jacrev(V(ns, lambda y: ns.lax.all_gather(y * y, "i")))(x),
        (V3,),
    ),
    "jit_vmap_grad_psum": (
        lambda ns, x: ns.jit(V(ns, ns.grad(ns.jit(lambda y: ns.lax.psum(y**3, "i")))))(x),
        (V3,),
    ),
    "vmap_grad_pmax_of_constant": (
        lambda ns, x: V(ns, ns.grad(lambda y: ns.lax.pmax(ns.lax.stop_gradient(y), "i") * y))(x),
        (V3,),
    ),
    "hessian_vmap_psum": (
        lambda ns, x: ns.hessian(lambda v: V(ns, lambda y: ns.lax.psum(y**3, "i"))(v).sum())(x),
        (V3,),
    ),
}


@pytest.mark.parametrize("name", GRADS)
def test_collective_derivatives(name: str) -> None:
    fn, args = GRADS[name]
    check(fn, *args, rtol=1e-5, atol=1e-5)


def test_custom_vjp_bwd_with_psum() -> None:
    """A custom_vjp whose bwd uses a collective, differentiated outside and inside the vmap."""

    def make(ns: Any) -> Any:
        @ns.custom_vjp
        def f(v: Any) -> Any:
            return v * 2

        f.defvjp(lambda v: (v * 2, v), lambda r, ct: (ns.lax.psum(ct, "i") * r,))
        return f

    check(lambda ns, x: ns.grad(lambda v: V(ns, make(ns))(v).sum())(x), V3)
    check(lambda ns, x: V(ns, ns.grad(make(ns)))(x), V3)


def test_custom_jvp_rule_with_psum() -> None:
    def make(ns: Any) -> Any:
        @ns.custom_jvp
        def f(v: Any) -> Any:
            return ns.numpy.sin(v)

        f.defjvp(lambda p, t: (ns.numpy.sin(p[0]), ns.lax.psum(t[0], "i") * ns.numpy.cos(p[0])))
        return f

    check(lambda ns, x: ns.grad(lambda v: V(ns, make(ns))(v).sum())(x), V3)
    check(lambda ns, x: ns.jacfwd(V(ns, make(ns)))(x), V3)


# ---- errors -------------------------------------------------------------------------------------
ERRORS: dict[str, tuple[Any, tuple]] = {
    "psum_unbound": (lambda ns, x: ns.lax.psum(ns.numpy.asarray(x), "i"), (V3,)),
    "psum_unbound_jit": (lambda ns, x: ns.jit(lambda y: ns.lax.psum(y, "i"))(x), (V3,)),
    "psum_unbound_make_jaxpr": (
        lambda ns, x: ns.make_jaxpr(lambda y: ns.lax.psum(y, "i"))(x),
        (V3,),
    ),
    "psum_other_name": (lambda ns, x: V(ns, lambda y: ns.lax.psum(y, "i"), "j")(x), (V3,)),
    "pmean_unbound": (lambda ns, x: ns.lax.pmean(ns.numpy.asarray(x), "i"), (V3,)),
    "pmax_unbound": (lambda ns, x: ns.lax.pmax(ns.numpy.asarray(x), "i"), (V3,)),
    "pmin_unbound_jit": (lambda ns, x: ns.jit(lambda y: ns.lax.pmin(y, "i"))(x), (V3,)),
    "all_gather_unbound": (lambda ns, x: ns.lax.all_gather(ns.numpy.asarray(x), "i"), (V3,)),
    "all_gather_unbound_jit": (
        lambda ns, x: ns.jit(lambda y: ns.lax.all_gather(y, "i"))(x),
        (V3,),
    ),
    "axis_index_unbound": (lambda ns: ns.lax.axis_index("i"), ()),
    "axis_index_unbound_jit": (lambda ns: ns.jit(lambda: ns.lax.axis_index("i"))(), ()),
    "axis_size_unbound": (lambda ns: ns.lax.axis_size("i"), ()),
    "ppermute_unbound": (
        lambda ns, x: ns.lax.ppermute(ns.numpy.asarray(x), "i", [(0, 0)]),
        (V3,),
    ),
    "ppermute_unbound_jit": (
        lambda ns, x: ns.jit(lambda y: ns.lax.ppermute(y, "i", [(0, 0)]))(x),
        (V3,),
    ),
    "psum_scatter_unbound": (lambda ns, x: ns.lax.psum_scatter(ns.numpy.asarray(x), "i"), (V3,)),
    "all_to_all_unbound": (
        lambda ns, x: ns.lax.all_to_all(ns.numpy.asarray(x), "i", 0, 0),
        (V3,),
    ),
    "grad_pmax": (lambda ns, x: V(ns, ns.grad(lambda y: ns.lax.pmax(y, "i")))(x), (V3,)),
    "grad_vmap_pmin": (
        lambda ns, x: ns.grad(lambda v: V(ns, lambda y: ns.lax.pmin(y, "i"))(v).sum())(x),
        (V3,),
    ),
    "axis_index_groups_in_vmap": (
        lambda ns, x: V(ns, lambda y: ns.lax.psum(y, "i", axis_index_groups=[[0, 1], [2, 3]]))(x),
        (np.ones(4, F),),
    ),
    "axis_index_groups_positional": (
        lambda ns, x: ns.lax.psum(x, 0, axis_index_groups=[[0]]),
        (V3,),
    ),
    "all_gather_tiled_scalar": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_gather(y, "i", tiled=True))(x),
        (V3,),
    ),
    "all_gather_bad_to": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_gather(y, "i", to="x"))(x),
        (V3,),
    ),
    "all_to_all_size": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_to_all(y, "i", 0, 0))(x),
        (X32,),
    ),
    "all_to_all_tiled_size": (
        lambda ns, x: V(ns, lambda y: ns.lax.all_to_all(y, "i", 0, 0, tiled=True))(x),
        (X32,),
    ),
    "pshuffle_not_a_permutation": (
        lambda ns, x: V(ns, lambda y: ns.lax.pshuffle(y, "i", [0, 0, 1]))(x),
        (X32,),
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_collective_errors(name: str) -> None:
    fn, args = ERRORS[name]
    check_error(fn, *args)


def test_psum_scatter_shape_errors() -> None:
    """JAX reports these from its shape rule when staging over a named axis; webjax checks
    under vmap too (JAX's vmap computes garbage or fails an assertion there)."""
    for tiled, msg in [
        (False, "reduce_scatter operand scatter dimension size 2 must match shard count 3"),
        (
            True,
            "tiled reduce_scatter operand scatter dimension size 2 must be divisible by "
            "shard_count 3",
        ),
    ]:
        for ns in (webjax, jax):
            f = ns.make_jaxpr(
                lambda y, t=tiled, ns=ns: ns.lax.psum_scatter(y, "i", tiled=t), axis_env=[("i", 3)]
            )
            with pytest.raises(ValueError, match=re.escape(msg)):
                f(X32[0])
        with pytest.raises(ValueError, match=re.escape(msg)):
            V(webjax, lambda y, t=tiled: lax.psum_scatter(y, "i", tiled=t))(X32)


def test_unsupported_collectives_name_the_gap() -> None:
    """A JAX collective webjax lacks (pbroadcast here) fails under vmap naming it."""
    p = webjax._src.core.Primitive("pbroadcast")
    with pytest.raises(NotImplementedError, match="'pbroadcast' over the named axis"):
        webjax.vmap(lambda x: p.bind(x, axis_name=("i",), source=0), axis_name="i")(V3)


# ---- make_jaxpr ----------------------------------------------------------------------------------
def prim_seq(jaxpr: Any) -> list[Any]:
    out: list[Any] = []
    for eqn in jaxpr.eqns:
        out.append(
            (
                eqn.primitive.name,
                {
                    k: str(v)
                    for k, v in sorted(eqn.params.items())
                    if not hasattr(v, "eqns") and not hasattr(v, "jaxpr")
                },
            )
        )
    return out


def test_make_jaxpr_axis_env_shows_collectives() -> None:
    def f(ns: Any) -> Any:
        lx = ns.lax
        return lambda v: (
            lx.psum(v, "i"),
            lx.pmax(v, "i"),
            lx.pmin(v, ("i", "j")),
            lx.pmean(v, "i"),
            lx.all_gather(v, "i"),
            lx.all_gather(v, "j", tiled=True),
            lx.axis_index("i"),
            lx.ppermute(v, "i", [(0, 1), (1, 0)]),
            lx.psum_scatter(v, "j"),
            lx.all_to_all(v, "j", 0, 0),
            lx.axis_size("i"),
        )

    env = [("i", 2), ("j", 3)]
    got = webjax.make_jaxpr(f(webjax), axis_env=env)(jnp.asarray(V3))
    want = jax.make_jaxpr(f(jax), axis_env=env)(V3)
    assert prim_seq(got.jaxpr) == prim_seq(want.jaxpr)
    assert [(v.aval.shape, str(v.aval.dtype)) for v in got.jaxpr.outvars] == [
        (v.aval.shape, str(v.aval.dtype)) for v in want.jaxpr.outvars
    ]
    text = str(got)
    for piece in (
        "psum[axes=('i',) axis_index_groups=None]",
        "axis_index[axis_name=i]",
        "ppermute[axis_name=('i',) perm=((0, 1), (1, 0))]",
    ):
        assert piece in text, text


def test_make_jaxpr_of_vmap_shows_positional_psum() -> None:
    for prim in ("psum", "pmax", "pmin"):
        got = webjax.make_jaxpr(V(webjax, lambda y, p=prim: getattr(lax, p)(y, "i")))(
            jnp.ones((3, 3))
        )
        want = jax.make_jaxpr(V(jax, lambda y, p=prim: getattr(jax.lax, p)(y, "i")))(
            np.ones((3, 3), F)
        )
        assert f"{prim}[axes=(0,) axis_index_groups=None]" in str(got), str(got)
        assert [e.primitive.name for e in got.eqns] == [e.primitive.name for e in want.eqns]


def test_jit_retraces_per_axis_size() -> None:
    g = webjax.jit(lambda v: v + lax.psum(1, "i"))
    np.testing.assert_array_equal(V(webjax, g)(np.zeros(3, F)), [3, 3, 3])
    np.testing.assert_array_equal(V(webjax, g)(np.zeros(4, F)), [4, 4, 4, 4])
    with pytest.raises(NameError, match="unbound axis name: i"):
        g(np.zeros(3, F))


# ---- beyond JAX: several named axes where JAX's vmap has no rule -------------------------------
def _nested(f: Any, x: Any) -> Any:
    out = V(webjax, V(webjax, f, "j"))(x)
    return np.asarray(out).reshape((-1, *out.shape[2:]))


@pytest.mark.parametrize(
    "names, flat",
    [
        (lambda z: lax.all_gather(z, ("i", "j")), lambda z: lax.all_gather(z, "k")),
        (
            lambda z: lax.all_gather(z, ("i", "j"), axis=1, tiled=True),
            lambda z: lax.all_gather(z, "k", axis=1, tiled=True),
        ),
        (
            lambda z: lax.psum_scatter(z.reshape(8)[:6], ("i", "j")),
            lambda z: lax.psum_scatter(z.reshape(8)[:6], "k"),
        ),
        (
            lambda z: lax.psum_scatter(jnp.tile(z, (3, 1)), ("i", "j"), tiled=True),
            lambda z: lax.psum_scatter(jnp.tile(z, (3, 1)), "k", tiled=True),
        ),
    ],
)
def test_tuple_axes_equal_one_flattened_axis(names: Any, flat: Any) -> None:
    """Over ('i', 'j') the collective sees one axis of size |i| * |j| in row-major order
    (JAX's vmap raises AssertionError / NotImplementedError here)."""
    x = np.linspace(-1, 1, 2 * 3 * 4 * 2, dtype=F).reshape(2, 3, 4, 2)
    want = V(webjax, flat, "k")(x.reshape(6, 4, 2))
    np.testing.assert_allclose(_nested(names, x), np.asarray(want), rtol=1e-6)


def test_all_gather_tuple_axes_minor_first() -> None:
    x = np.arange(6, dtype=F).reshape(2, 3)  # [i, j]
    got = V(webjax, V(webjax, lambda z: lax.all_gather(z, ("j", "i")), "j"))(x)
    np.testing.assert_array_equal(np.asarray(got)[1, 2], x.T.reshape(6))


def test_ppermute_partial_permutation_fills_zeros() -> None:
    """Destinations nobody sends to receive zeros (JAX's documented semantics; its vmap rule
    asserts a full permutation)."""
    got = V(webjax, lambda y: lax.ppermute(y, "i", [(0, 1), (1, 2)]))(X32)
    np.testing.assert_array_equal(np.asarray(got), np.stack([0 * X32[0], X32[0], X32[1]]))
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        V(webjax, lambda y: lax.ppermute(y, "i", [(0, 1), (1, 1)]))(X32)


# ---- pmap ---------------------------------------------------------------------------------------
X13 = np.array([[0.5, -1.0, 2.0]], F)

PMAPS: dict[str, tuple[Any, tuple]] = {
    "psum": (lambda ns, x: ns.pmap(lambda y: ns.lax.psum(y, "i"), axis_name="i")(x), (X13,)),
    "collectives": (
        lambda ns, x: ns.pmap(
            lambda y: (
                ns.lax.pmean(y, "i"),
                ns.lax.all_gather(y, "i"),
                y + ns.lax.axis_index("i"),
                ns.lax.ppermute(y, "i", [(0, 0)]),
                ns.lax.pmax(y, "i"),
                ns.lax.axis_size("i"),
            ),
            axis_name="i",
        )(x),
        (X13,),
    ),
    "unnamed": (lambda ns, x: ns.pmap(lambda y: ns.numpy.sin(y) * 2)(x), (X13,)),
    "in_axes_1": (lambda ns, x: ns.pmap(lambda y: y * 2, in_axes=1)(x), (X13.T.copy(),)),
    "in_axes_-1_out_axes_1": (
        lambda ns, x: ns.pmap(lambda y: y * 2, in_axes=-1, out_axes=1)(x),
        (X13.T.copy(),),
    ),
    "in_axes_none": (
        lambda ns, x, y: ns.pmap(lambda a, b: a + b, in_axes=(None, 0))(x, y),
        (V3, X13),
    ),
    "out_axes_none": (
        lambda ns, x: ns.pmap(
            lambda y: (y, ns.lax.psum(y, "i")), axis_name="i", out_axes=(0, None)
        )(x),
        (X13,),
    ),
    "scalar_output": (lambda ns, x: ns.pmap(lambda y: 1.0)(x), (X13,)),
    "static": (
        lambda ns, x: ns.pmap(lambda y, n: y * n, static_broadcasted_argnums=1)(x, 3),
        (X13,),
    ),
    "static_in_axes": (
        lambda ns, x: ns.pmap(lambda y, n: y * n, in_axes=(0, None), static_broadcasted_argnums=1)(
            x, 3
        ),
        (X13,),
    ),
    "kwargs": (lambda ns, x: ns.pmap(lambda a, b: a * b)(x, b=x), (X13,)),
    "pytree": (
        lambda ns, x: ns.pmap(lambda d: {"s": d["a"] + d["b"][0]})({"a": x, "b": (x * 2,)}),
        (X13,),
    ),
    "devices": (lambda ns, x: ns.pmap(lambda y: y * 2, devices=ns.devices())(x), (X13,)),
    "axis_size": (lambda ns, x: ns.pmap(lambda y: y * 2, axis_size=1)(x), (X13,)),
    "donate": (
        lambda ns, x: ns.pmap(lambda y: y * 2, donate_argnums=0)(ns.numpy.asarray(x)),
        (X13,),
    ),
    "jit_of_pmap": (
        lambda ns, x: ns.jit(ns.pmap(lambda y: ns.lax.psum(y * y, "i"), axis_name="i"))(x),
        (X13,),
    ),
    "grad_of_pmap": (
        lambda ns, x: ns.grad(
            lambda v: ns.pmap(
                lambda y: (ns.lax.all_gather(y, "i") * y).sum() + ns.lax.psum(y * y, "i").sum(),
                axis_name="i",
            )(v).sum()
        )(x),
        (X13,),
    ),
    "jvp_of_pmap": (
        lambda ns, x: ns.jvp(
            ns.pmap(lambda y: ns.lax.pmean(ns.numpy.sin(y), "i"), axis_name="i"), (x,), (x * 3,)
        ),
        (X13,),
    ),
    "jacfwd_of_pmap": (
        lambda ns, x: ns.jacfwd(ns.pmap(lambda y: ns.lax.psum(y**2, "i"), axis_name="i"))(x),
        (X13,),
    ),
    "vmap_of_grad_of_pmap": (
        lambda ns, x: ns.vmap(
            ns.grad(lambda v: ns.pmap(lambda y: ns.lax.psum(y**2, "i"), axis_name="i")(v).sum())
        )(x),
        (np.stack([X13, 2 * X13]),),
    ),
    "vmap_inside_pmap": (
        lambda ns, x: ns.pmap(
            V(ns, lambda y: ns.lax.psum(y, "j") + ns.lax.psum(y, "i"), "j"), axis_name="i"
        )(x),
        (X32[None],),
    ),
    "pmap_inside_vmap": (
        lambda ns, x: V(
            ns, ns.pmap(lambda y: ns.lax.psum(y, "j") * ns.lax.psum(y, "i"), axis_name="j")
        )(x),
        (X32[:, None],),
    ),
    "device_queries": (
        lambda ns: (
            ns.device_count(),
            ns.local_device_count(),
            ns.process_index(),
            ns.process_count(),
        ),
        (),
    ),
}


@pytest.mark.parametrize("name", PMAPS)
def test_pmap(device: Any, name: str) -> None:
    fn, args = PMAPS[name]
    got, want = both(fn, *args)
    assert_same(got, want, rtol=1e-5, atol=1e-5)
    for leaf in _leaves(got):
        assert isinstance(leaf, (webjax.Array, int)), type(leaf)


PMAP_ERRORS: dict[str, tuple[Any, tuple]] = {
    "size_2": (
        lambda ns, x: ns.pmap(lambda y: ns.lax.psum(y, "i"), axis_name="i")(x),
        (np.ones((2, 3), F),),
    ),
    "size_2_in_axes_1": (lambda ns, x: ns.pmap(lambda y: y, in_axes=1)(x), (np.ones((3, 2), F),)),
    "second_arg_size_2": (
        lambda ns, x, y: ns.pmap(lambda a, b: a + b)(x, y),
        (X13, np.ones((2, 3), F)),
    ),
    "size_0": (lambda ns, x: ns.pmap(lambda y: y, axis_name="i")(x), (np.ones((0, 3), F),)),
    "size_0_after_unmapped": (
        lambda ns, x, y: ns.pmap(lambda a, b: b, in_axes=(None, 0))(x, y),
        (V3, np.zeros((0, 3), F)),
    ),
    "size_0_in_axes_1": (lambda ns, x: ns.pmap(lambda y: y, in_axes=1)(x), (np.zeros((3, 0), F),)),
    "nothing_mapped": (lambda ns, x: ns.pmap(lambda y: y, in_axes=None)(x), (V3,)),
    "no_arguments": (lambda ns: ns.pmap(lambda: 1.0)(), ()),
    "scalar_argument": (lambda ns: ns.pmap(lambda y: y * 2)(3.0), ()),
    "axis_size_mismatch": (lambda ns, x: ns.pmap(lambda y: y, axis_size=2)(x), (X13,)),
    "static_missing": (
        lambda ns, x: ns.pmap(lambda y, n: y * n, static_broadcasted_argnums=1)(x),
        (X13,),
    ),
    "bad_in_axes": (lambda ns: ns.pmap(lambda y: y, in_axes=1.0), ()),
    "bad_out_axes": (lambda ns: ns.pmap(lambda y: y, out_axes=(0, "a")), ()),
    "empty_devices": (lambda ns: ns.pmap(lambda y: y, devices=[]), ()),
    "not_callable": (lambda ns: ns.pmap(3), ()),
    "out_axes_out_of_bounds": (lambda ns, x: ns.pmap(lambda y: y, out_axes=2)(x), (X13,)),
    "unbound_name": (lambda ns, x: ns.pmap(lambda y: ns.lax.psum(y, "i"))(x), (X13,)),
}


@pytest.mark.parametrize("name", PMAP_ERRORS)
def test_pmap_errors(name: str) -> None:
    fn, args = PMAP_ERRORS[name]
    check_error(fn, *args)


def test_pmap_in_axes_prefix_error() -> None:
    """JAX's wording of the first sentence differs; the explanation that follows is JAX's."""
    for ns in (webjax, jax):
        with pytest.raises(ValueError, match="But it was not a prefix"):
            ns.pmap(lambda y: y, in_axes=(0, 0))(X13)


def test_pmap_donates_and_jaxpr() -> None:
    x = jnp.asarray(X13)
    webjax.pmap(lambda y: y * 2, donate_argnums=0)(x)
    assert x.is_deleted()
    text = str(webjax.make_jaxpr(webjax.pmap(lambda y: lax.psum(y, "i"), axis_name="i"))(X13))
    assert "xla_pmap" in text and "psum[axes=('i',) axis_index_groups=None]" in text, text
    assert webjax.pmap(lambda y: y).__name__ == "<lambda>"
    assert "xla_pmap" in webjax.pmap(lambda y: y * 2).lower(X13).as_text()


# ---- ravel_pytree --------------------------------------------------------------------------------
TREES: dict[str, Any] = {
    "floats": lambda ns: {"w": ns.numpy.ones((2, 3)), "b": ns.numpy.arange(3.0)},
    "python_floats": lambda ns: [1.0, 2.0],
    "python_ints": lambda ns: (1, 2, 3),
    "empty": lambda ns: (),
    "none_leaves": lambda ns: {"a": None, "b": [ns.numpy.zeros(2)]},
    "mixed_int_float": lambda ns: {"a": ns.numpy.ones(2, "int32"), "b": 2.5},
    "mixed_narrow": lambda ns: {
        "a": ns.numpy.ones(2, "bfloat16"),
        "b": ns.numpy.zeros(3, "int8"),
        "c": True,
    },
    "complex_and_real": lambda ns: [ns.numpy.asarray(1 + 2j), 1.0],
    "scalars_and_matrix": lambda ns: (ns.numpy.float32(3.0), ns.numpy.eye(2), [ns.numpy.ones(1)]),
    "half": lambda ns: [ns.numpy.ones(2, "float16"), ns.numpy.ones(1, "float16")],
}


@pytest.mark.parametrize("name", TREES)
def test_ravel_pytree_round_trip(device: Any, name: str) -> None:
    def fn(ns: Any) -> Any:
        flat, unravel = ns.flatten_util.ravel_pytree(TREES[name](ns))
        return flat, unravel(flat), unravel(flat * 2 if flat.dtype != bool else flat)

    check(fn)


def test_ravel_pytree_unravel_checks_and_dtype_polymorphism() -> None:
    mixed = lambda ns: ns.flatten_util.ravel_pytree({"a": ns.numpy.ones(2, "int32"), "b": 2.5})[1]
    same = lambda ns: ns.flatten_util.ravel_pytree({"a": ns.numpy.ones(2), "b": ns.numpy.zeros(3)})[
        1
    ]
    check_error(lambda ns: mixed(ns)(ns.numpy.ones(3, "int32")))
    check_error(lambda ns: mixed(ns)(ns.numpy.ones(4)))
    check_error(lambda ns: same(ns)(ns.numpy.ones(4)))
    check(lambda ns: same(ns)(ns.numpy.ones(5, "int32")))  # no cast: the dtype passes through
    check(lambda ns: same(ns)(ns.numpy.ones((5, 1))))
    un = ravel_pytree([jnp.ones(2), 1.0])[1]
    assert un == ravel_pytree([jnp.zeros(2), 3.0])[1] and hash(un) is not None


def test_ravel_pytree_under_transformations() -> None:
    def f(ns: Any, p: Any) -> Any:
        flat, unravel = ns.flatten_util.ravel_pytree(p)
        back = unravel(ns.numpy.sin(flat))
        return (flat**2).sum() + back["b"] * back["a"].sum()

    p = {"a": np.array([0.5, -1.0], F), "b": np.float32(3.0)}
    check(lambda ns: ns.grad(lambda q: f(ns, q))(p))
    check(lambda ns: ns.jit(lambda q: f(ns, q))(p))
    check(lambda ns: ns.vmap(lambda a: f(ns, {"a": a, "b": np.float32(2.0)}))(X32))


def test_flatten_util_after_install_as_jax() -> None:
    code = (
        "import webjax; webjax.install_as_jax()\n"
        "import jax.flatten_util\n"
        "from jax.flatten_util import ravel_pytree\n"
        "import jax, jax.numpy as jnp\n"
        "assert jax.flatten_util is webjax.flatten_util\n"
        "assert ravel_pytree is jax.flatten_util.ravel_pytree\n"
        "flat, un = ravel_pytree({'a': jnp.ones(2), 'b': 3.0})\n"
        "y = jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')(jnp.ones((1, 2)))\n"
        "print(flat.shape, float(un(flat)['b']), y.shape)\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {"PYTHONPATH": str(root / "pkg"), "PATH": "/usr/bin:/bin", "WEBJAX_PLATFORM": "cpu"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["(3,)", "3.0", "(1,", "2)"]
