"""jax.experimental.layout: Layout/Format behave as JAX's (equality, repr, errors) and
with_layout_constraint passes values through (eager, jit, grad) with JAX's checks."""

from __future__ import annotations

import numpy as np
import pytest

import webjax
import webjax.experimental.layout
import webjax.numpy as jnp
from webjax.experimental.layout import Layout, with_layout_constraint

rjax = pytest.importorskip("jax")
rlayout = pytest.importorskip("jax.experimental.layout")


def test_layout_and_format_match_jax() -> None:
    for mod, sh in (
        (rlayout, rjax.sharding.SingleDeviceSharding(rjax.devices()[0])),
        (webjax.experimental.layout, webjax.sharding.SingleDeviceSharding(webjax.devices()[0])),
    ):
        lay = mod.Layout((1, 0))
        assert lay == mod.Layout((1, 0)) and lay != mod.Layout((0, 1))
        assert hash(lay) == hash(mod.Layout((1, 0)))
        assert lay.update(major_to_minor=(0, 1)) == mod.Layout((0, 1))
        fmt = mod.Format(lay, sh)
        assert fmt == mod.Format(mod.Layout((1, 0)), sh) and fmt.layout == lay
        assert repr(mod.Format()) == "Format(layout=None, sharding=None)"
        assert repr(mod.Layout.AUTO) == "AUTO"
        with pytest.raises(ValueError, match="Sharding has to be concrete"):
            mod.Format(lay)
        with pytest.raises(TypeError, match="layout argument"):
            mod.Format(sh)
    assert repr(Layout((1, 0))) == repr(rlayout.Layout((1, 0)))


@pytest.mark.parametrize("order", [(1, 0), (0, 1)])
def test_with_layout_constraint_keeps_values(order: tuple[int, int]) -> None:
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(with_layout_constraint(x, Layout(order)), np.asarray(x))
    f = webjax.jit(lambda v: with_layout_constraint(v, Layout(order)) * 2)
    np.testing.assert_array_equal(f(x), 2 * np.asarray(x))
    g = webjax.grad(lambda v: jnp.sum(with_layout_constraint(v, Layout(order)) ** 2))(x)
    np.testing.assert_array_equal(g, 2 * np.asarray(x))
    tree = {"a": x, "b": (x[0],)}
    out = with_layout_constraint(tree, {"a": Layout(order), "b": (Layout((0,)),)})
    np.testing.assert_array_equal(out["b"][0], np.asarray(x[0]))


def test_with_layout_constraint_errors_match_jax() -> None:
    for wlc, lay, arr in (
        (with_layout_constraint, Layout, jnp.ones((2, 3))),
        (rlayout.with_layout_constraint, rlayout.Layout, rjax.numpy.ones((2, 3))),
    ):
        with pytest.raises(ValueError, match="Length of major_to_minor"):
            wlc(arr, lay((0,)))
        with pytest.raises(ValueError, match="must be of type `Layout`"):
            wlc(arr, None)
