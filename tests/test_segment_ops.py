"""`jax.ops` segment reductions (segment_sum/prod/max/min) against real JAX: values on every
backend, sorted indices under jit, bucket sizes, gradients and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.experimental
import webjax.image
import webjax.numpy as jnp
import webjax.ops
import webjax.typing
from check_grads import check_grads

jax = pytest.importorskip("jax")
R = np.random.RandomState(0)


def close(got: Any, want: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name", ["segment_sum", "segment_prod", "segment_max", "segment_min"])
def test_segments(device: Any, name: str) -> None:
    data = f32(8, 3)
    ids = np.array([0, 0, 1, 3, 3, -1, 5, 2], np.int32)
    wf, jf = getattr(webjax.ops, name), getattr(jax.ops, name)
    close(wf(jnp.asarray(data), jnp.asarray(ids), 4), jf(data, ids, 4), 1e-6)
    close(
        wf(jnp.asarray(data), jnp.asarray(ids), 6, bucket_size=3),
        jf(data, ids, 6, bucket_size=3),
        1e-6,
    )
    pos = np.array([0, 2, 1, 1, 0, 2, 2, 1], np.int32)
    close(wf(jnp.asarray(data), jnp.asarray(pos)), jf(data, pos), 1e-6)
    i = R.randint(-5, 5, 8).astype(np.int32)
    close(wf(jnp.asarray(i), jnp.asarray(pos), 3), jf(i, pos, 3))
    jitted = webjax.jit(lambda d, s: wf(d, s, 4, indices_are_sorted=True))
    srt = np.sort(np.abs(ids) % 4).astype(np.int32)
    close(
        jitted(jnp.asarray(data), jnp.asarray(srt)), jf(data, srt, 4, indices_are_sorted=True), 1e-6
    )


def test_segment_errors_and_grad() -> None:
    with pytest.raises(TypeError):
        webjax.ops.segment_sum(jnp.ones(3), jnp.array([0.0, 1.0, 2.0]))
    with pytest.raises(webjax.errors.ConcretizationTypeError):
        webjax.jit(lambda d, s: webjax.ops.segment_sum(d, s))(jnp.ones(3), jnp.arange(3))
    ids = jnp.array([0, 1, 0, 2])
    check_grads(lambda d: webjax.ops.segment_sum(d, ids, 3), (f32(4, 2),))


def test_segment_max_grad() -> None:
    """The cotangent goes to the maximal update(s) of each segment, ties shared as in JAX."""
    ids = jnp.array([0, 1, 0, 2])
    d = f32(4, 2)
    close(
        webjax.grad(lambda v: webjax.ops.segment_max(v, ids, 3).sum())(jnp.asarray(d)),
        jax.grad(lambda v: jax.ops.segment_max(v, np.array([0, 1, 0, 2]), 3).sum())(d),
    )
