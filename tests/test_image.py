"""`jax.image` (resize, scale_and_translate) against real JAX: every method, with and without
antialiasing, integer images, gradients and errors."""

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
jjnp = jax.numpy
R = np.random.RandomState(0)


def close(got: Any, want: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    "method", ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "area", "cubic-pytorch"]
)
def test_resize(device: Any, method: str) -> None:
    img = f32(5, 7, 3)
    for antialias in (True, False):
        for shape in ((9, 4, 3), (3, 11, 3), (5, 7, 3)):
            got = webjax.image.resize(jnp.asarray(img), shape, method, antialias=antialias)
            want = jax.image.resize(img, shape, method, antialias=antialias)
            close(got, want, 1e-5, 2e-6)
    i8 = R.randint(0, 255, (4, 4)).astype(np.uint8)
    close(
        webjax.image.resize(jnp.asarray(i8), (6, 3), "linear"),
        jax.image.resize(i8, (6, 3), "linear"),
        1e-5,
        1e-5,
    )


def test_scale_and_translate(device: Any) -> None:
    img = f32(6, 5, 2)
    for method in ("linear", "cubic", "lanczos3"):
        for antialias in (True, False):
            got = webjax.image.scale_and_translate(
                jnp.asarray(img),
                (8, 4, 2),
                (0, 1),
                jnp.array([1.7, 0.8]),
                jnp.array([0.3, -1.0]),
                method,
                antialias,
            )
            want = jax.image.scale_and_translate(
                img,
                (8, 4, 2),
                (0, 1),
                jjnp.array([1.7, 0.8]),
                jjnp.array([0.3, -1.0]),
                method,
                antialias,
            )
            close(got, want, 1e-5, 2e-6)
    with pytest.raises(ValueError, match="Nearest"):
        webjax.image.scale_and_translate(jnp.asarray(img), (8, 4, 2), (0,), [1.0], [0.0], "nearest")


def test_image_errors_and_grad() -> None:
    with pytest.raises(ValueError, match="shape must have length"):
        webjax.image.resize(jnp.ones((2, 2)), (3,), "linear")
    with pytest.raises(ValueError, match="Unknown resize method"):
        webjax.image.resize(jnp.ones((2, 2)), (3, 3), "bogus")
    assert webjax.image.ResizeMethod.from_string("bilinear") is webjax.image.ResizeMethod.LINEAR
    check_grads(lambda x: webjax.image.resize(x, (5, 3), "cubic"), (f32(3, 4),))
