"""The `*_p` names of JAX's primitives that webjax builds from others (argmax_p, square_p,
igamma_p, reduce_p, ...): each binds with JAX's operands and params and gives what binding
JAX's primitive gives (reduce and scatter-sub: what the lax function binding them gives, as
JAX's need jaxprs among their params), eagerly, under jit, grad (where JAX differentiates it)
and vmap (the special functions: eagerly and under jit), on every device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
from jax_compare import assert_same, run

jax = pytest.importorskip("jax")

X = np.array([[0.5, -1.25, 3.0], [2.0, 0.75, -0.5]], np.float32)


def _dnums(lax: Any) -> Any:
    return lax.ScatterDimensionNumbers((1,), (0,), (0,))


# name -> (function of (lax, jnp) binding the primitive on X, differentiable in X?)
CASES: dict[str, Any] = {
    "argmax": (lambda lax, jnp, x: lax.argmax_p.bind(x, axes=(1,), index_dtype=jnp.int32), 0),
    "argmin": (lambda lax, jnp, x: lax.argmin_p.bind(x, axes=(0,), index_dtype=jnp.int32), 0),
    "square": (lambda lax, jnp, x: lax.square_p.bind(x), 1),
    "tile": (lambda lax, jnp, x: lax.tile_p.bind(x, reps=(2, 1)), 1),
    "split": (lambda lax, jnp, x: lax.split_p.bind(x, sizes=(1, 2), axis=1)[1], 1),
    "copy": (lambda lax, jnp, x: lax.copy_p.bind(x), 1),
    "reduce_precision": (
        lambda lax, jnp, x: lax.reduce_precision_p.bind(x, exponent_bits=5, mantissa_bits=2),
        0,
    ),
    "optimization_barrier": (lambda lax, jnp, x: lax.optimization_barrier_p.bind(x, x)[1], 1),
    "bessel_i0e": (lambda lax, jnp, x: lax.bessel_i0e_p.bind(x), 1),
    "bessel_i1e": (lambda lax, jnp, x: lax.bessel_i1e_p.bind(x), 1),
    "igamma": (lambda lax, jnp, x: lax.igamma_p.bind(x * x + 0.5, jnp.abs(x)), 1),
    "igammac": (lambda lax, jnp, x: lax.igammac_p.bind(x * x + 0.5, jnp.abs(x)), 1),
    "igamma_grad_a": (lambda lax, jnp, x: lax.igamma_grad_a_p.bind(x * x + 0.5, jnp.abs(x)), 0),
    "polygamma": (lambda lax, jnp, x: lax.polygamma_p.bind(jnp.ones_like(x), jnp.abs(x) + 1), 1),
    "zeta": (lambda lax, jnp, x: lax.zeta_p.bind(x * x + 1.5, jnp.abs(x) + 1), 0),
    "regularized_incomplete_beta": (  # JAX differentiates it only in x
        lambda lax, jnp, x: lax.regularized_incomplete_beta_p.bind(
            jnp.full_like(x, 0.5), jnp.full_like(x, 2.0), jnp.abs(x) / 4
        ),
        1,
    ),
    "reduce": (
        lambda lax, jnp, x: (
            lax.reduce_p.bind(x, np.float32(0), computation=lax.add, jaxpr=None, dimensions=(0,))[0]
            if lax is webjax.lax
            else lax.reduce(x, np.float32(0), lax.add, (0,))
        ),
        1,
    ),
    "approx_top_k": (
        lambda lax, jnp, x: lax.approx_top_k_p.bind(
            x,
            k=2,
            reduction_dimension=-1,
            recall_target=0.95,
            is_max_k=True,
            reduction_input_size_override=-1,
            aggregate_to_topk=True,
        )[0],
        1,
    ),
    "scatter_sub": (
        lambda lax, jnp, x: (
            lax.scatter_sub(
                x, np.array([[0]], np.int32), jnp.ones((1, 3), jnp.float32), _dnums(lax)
            )
            if lax is jax.lax
            else lax.scatter_sub_p.bind(
                x,
                np.array([[0]], np.int32),
                jnp.ones((1, 3), jnp.float32),
                update_jaxpr=None,
                update_consts=(),
                dimension_numbers=_dnums(lax),
                indices_are_sorted=True,
                unique_indices=True,
                mode=lax.GatherScatterMode.FILL_OR_DROP,
            )
        ),
        1,
    ),
}


SPECIAL = {"igamma", "igammac", "igamma_grad_a", "polygamma", "zeta", "regularized_incomplete_beta"}
SPECIAL |= {"bessel_i0e", "bessel_i1e"}


def _lib(lax: Any) -> Any:
    return webjax if lax is webjax.lax else jax


@pytest.mark.parametrize("name", sorted(CASES))
def test_composite_primitive_binds_as_jax(name: str, device: Any) -> None:
    fn, differentiable = CASES[name]

    def program(lax: Any, jnp: Any) -> Any:
        lib = _lib(lax)
        out = [fn(lax, jnp, X), lib.jit(lambda x: fn(lax, jnp, x))(X)]
        if name in SPECIAL:  # their vmap and grad: tests/test_lax_special.py
            return out
        out.append(lib.vmap(lambda row: fn(lax, jnp, row[None])[0])(X))
        if differentiable:
            out.append(lib.grad(lambda x: jnp.sum(jnp.sin(fn(lax, jnp, x))))(X))
        return out  # eager, jit, vmap, grad

    want, _ = run(program, (jax.lax, jax.numpy))
    got, _ = run(program, (webjax.lax, webjax.numpy))
    if isinstance(want, Exception):
        raise want
    if isinstance(got, Exception):
        raise got
    assert_same(got, want, rtol=2e-5, atol=2e-6)


def test_reduce_window_p_takes_a_jaxpr() -> None:
    j = webjax.make_jaxpr(webjax.lax.max)(np.float32(0), np.float32(0))
    (out,) = webjax.lax.reduce_window_p.bind(
        X,
        np.float32(-np.inf),
        jaxpr=j.jaxpr,
        consts=j.consts,
        window_dimensions=(1, 2),
        window_strides=(1, 1),
        padding=((0, 0), (0, 0)),
        base_dilation=(1, 1),
        window_dilation=(1, 1),
    )
    want = jax.lax.reduce_window(X, -np.inf, jax.lax.max, (1, 2), (1, 1), "VALID")
    np.testing.assert_array_equal(np.asarray(out), np.asarray(want))


def test_composite_primitives_are_in_the_public_namespace() -> None:
    for name in CASES:
        p = getattr(webjax.lax, f"{name}_p")
        assert p.name == getattr(jax.lax, f"{name}_p").name
