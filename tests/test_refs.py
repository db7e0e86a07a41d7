"""jax.Ref (new_ref, reads and writes by index, freeze) eagerly, against real JAX; under
transformations webjax refuses refs with NotImplementedError (never a stale constant)."""

from __future__ import annotations

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp

rjax = pytest.importorskip("jax")


def program(jax):
    r = jax.new_ref(jax.numpy.arange(4.0))
    out = [r[...], r[1:3], r.shape, str(r.dtype), str(jax.typeof(r)), isinstance(r, jax.Ref)]
    r[1] = 7.0
    r[2:] = jax.numpy.ones(2) * 3
    out.append(r[...])
    r[...] = jax.numpy.full(4, 0.5)
    out.append(jax.freeze(r))
    i = jax.new_ref(jax.numpy.zeros((2, 2), jax.numpy.int32))
    i[0, 1] = 2
    out.append(i[...])
    for bad in (
        lambda: r.__setitem__(1, 7),
        lambda: r.__setitem__(..., 0.5),
        lambda: i.__setitem__((0, 1), 2.9),
        lambda: r.__setitem__(slice(1, 3), r[...]),
    ):
        try:
            bad()
        except ValueError as e:
            out.append(str(e)[:60])
    out.append(r[...])
    return out


def test_ref_like_jax() -> None:
    got, want = program(webjax), program(rjax)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if hasattr(w, "shape") and not isinstance(w, tuple):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
            assert str(g.dtype) == str(w.dtype)
        else:
            assert g == w


def test_ref_under_transformations_raises() -> None:
    r = webjax.new_ref(jnp.arange(3.0))
    with pytest.raises(NotImplementedError, match=r"jax\.Ref"):
        webjax.jit(lambda x: r[...] + x)(1.0)
    with pytest.raises(NotImplementedError, match=r"jax\.Ref"):
        webjax.grad(lambda x: (r[...] * x).sum())(1.0)
    with pytest.raises(TypeError, match="abstract array"):
        webjax.jit(lambda r: r[...])(r)
    np.testing.assert_array_equal(np.asarray(r[...]), [0.0, 1.0, 2.0])  # untouched


def test_hijax_definitions_import_and_refuse_use() -> None:
    from webjax.experimental import hijax

    class P(hijax.HiPrimitive):
        pass

    p = P("mine")
    with pytest.raises(NotImplementedError, match="hijax"):
        p.bind(1.0)
    hijax.control_flow_allowed_effects.add_type(int)
    with pytest.raises(NotImplementedError, match="hijax"):
        hijax.AvalQDD(None, None)
