"""Losses: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss."""

from __future__ import annotations

from typing import Any

from webjax._src import dtypes
from webjax._src import numpy as jnp
from webjax._src.nn import functions as jnn
from webjax._src.onnx.ops.common import Node, dev
from webjax._src.onnx.registry import op


def _nll(node: Node, logp: Any, target: Any, weight: Any) -> Any:
    target = dev(target).astype(dtypes.int32)
    ignore = node.attr("ignore_index", None)
    c = logp.shape[1]
    keep = jnp.ones(target.shape, bool) if ignore is None else target != ignore
    safe = jnp.where(keep, target, jnp.zeros_like(target))
    picked = jnp.squeeze(jnp.take_along_axis(logp, safe[:, None], axis=1), 1)
    w = jnp.where(keep, jnp.ones(target.shape, logp.dtype), jnp.zeros(target.shape, logp.dtype))
    if weight is not None:
        w = w * jnp.take(dev(weight), safe, mode="clip")
    loss = -picked * w
    reduction = node.attr("reduction", "mean")
    del c
    if reduction == "none":
        return loss
    if reduction == "sum":
        return jnp.sum(loss)
    if reduction == "mean":
        return jnp.sum(loss) / jnp.sum(w)
    raise node.unsupported(f"reduction={reduction!r}")


@op("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(node: Node, x: Any, target: Any, weight: Any = None) -> Any:
    return _nll(node, dev(x), target, weight)


@op("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(node: Node, scores: Any, labels: Any, weight: Any = None) -> Any:
    logp = jnn.log_softmax(dev(scores), axis=1)
    return _nll(node, logp, labels, weight), logp
