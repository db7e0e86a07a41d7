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


def _prints_in_branches(jax):
    """Prints inside cond branches that return nothing (Optax's line-search diagnostics): the
    conds have no outputs, so only their effects keep them."""

    def maybe_print(c, msg, **kw):
        jax.lax.cond(c, lambda _: jax.debug.print(msg, **kw, ordered=True), lambda _: None, None)

    def diagnose(x):
        jax.debug.print("diagnosis")
        maybe_print(x < 0, "negative {x}", x=x)

    def f(x):
        maybe_print(x > 0, "positive {x}", x=x)
        jax.lax.cond(x > 5, lambda x: jax.debug.print("big {x}", x=x), diagnose, x)
        return x + 1

    def body(s):
        x, i = s
        x = jax.lax.cond(
            x < 100, lambda x: (maybe_print(x > 0, "loop {x}", x=x), x * 2)[1], lambda x: x, x
        )
        return x, i + 1

    return f, lambda x: jax.lax.while_loop(lambda s: s[1] < 2, body, (x, 0))


@pytest.mark.parametrize("how", ["eager", "jit"])
def test_debug_print_in_cond_branches_matches_jax(capsys, how):
    rjax = pytest.importorskip("jax")

    def run(jax):
        f, loop = _prints_in_branches(jax)
        wrap = jax.jit if how == "jit" else (lambda g: g)
        for x in (-2.0, 3.0, 7.0):
            wrap(f)(jax.numpy.float32(x))
        wrap(loop)(jax.numpy.float32(1.0))
        return capsys.readouterr().out

    got, want = run(webjax), run(rjax)
    assert "negative -2.0" in want
    assert got == want


def test_callback_receives_values():
    seen = []
    webjax.jit(lambda x: webjax.debug.callback(seen.append, x) or x + 1)(jnp.arange(3))
    assert [v.tolist() for v in seen] == [[0, 1, 2]]
