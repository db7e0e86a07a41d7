"""jax.debug.print / callback under transformations, compared with real JAX's output."""

from __future__ import annotations

import pytest

import webjax
import webjax.numpy as jnp


def _f(jax, jnp):
    def f(x):
        jax.debug.print("x = {}, sum {s}", x, s=x.sum())
        return x * 2

    return f


@pytest.mark.parametrize("how", ["eager", "jit", "grad", "vmap"])
def test_debug_print_matches_jax(capsys, how):
    rjax = pytest.importorskip("jax")

    def run(jax, np_):
        f = _f(jax, np_)
        x = np_.arange(4.0).reshape(2, 2)
        if how == "eager":
            f(x)
        elif how == "jit":
            jax.jit(f)(x)
        elif how == "grad":
            jax.grad(lambda v: f(v).sum())(x)
        else:
            jax.vmap(f)(x)
        return capsys.readouterr().out

    assert run(webjax, jnp) == run(rjax, rjax.numpy)


def test_callback_receives_values():
    seen = []
    webjax.jit(lambda x: webjax.debug.callback(seen.append, x) or x + 1)(jnp.arange(3))
    assert [v.tolist() for v in seen] == [[0, 1, 2]]
