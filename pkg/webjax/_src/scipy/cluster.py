"""`jax.scipy.cluster.vq`: `vq`, the nearest code (Euclidean distance) for each observation."""

from __future__ import annotations

from typing import Any

from .. import numpy as jnp
from ..numpy import util
from .signal import check_arraylike


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """(code, dist): for each of the M observations (rows of `obs`, or entries of a 1-d `obs`),
    the index of the closest of the K codes in `code_book` and the distance to it. The first
    of equally close codes wins. `check_finite` is accepted and unused, as in JAX."""
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs, code_book = util.promote_dtypes_inexact(
        util.ensure_array(obs), util.ensure_array(code_book)
    )
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    diff = obs[:, None, :] - code_book[None, :, :]  # (M, K, features)
    dist = jnp.sqrt(jnp.sum(diff * diff, axis=-1))
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
