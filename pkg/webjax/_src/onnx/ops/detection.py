"""Detection: NonMaxSuppression (its output length depends on the values, so it runs on values
known at call time, outside jit)."""

from __future__ import annotations

from typing import Any

from webjax._src.onnx import host
from webjax._src.onnx.ops.common import Node, scalar, static
from webjax._src.onnx.registry import op

Box = tuple[float, float, float, float]


def _corners(box: list[float], center: int) -> Box:
    """(y1, x1, y2, x2) with y1 <= y2 and x1 <= x2."""
    if center:
        xc, yc, w, h = box
        return (yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2)
    y1, x1, y2, x2 = box
    return (min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2))


def _iou(a: Box, b: Box) -> float:
    h = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    w = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = h * w
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return 0.0 if union <= 0 else inter / union


@op("NonMaxSuppression")
def non_max_suppression(
    node: Node, boxes: Any, scores: Any, max_out: Any = None, iou: Any = None, score: Any = None
) -> Any:
    why = "inputs (NonMaxSuppression's output length depends on them)"
    bx = static(node, boxes, why).astype(host.float64).tolist()  # [batch, boxes, 4]
    sc = static(node, scores, why).astype(host.float64).tolist()  # [batch, classes, boxes]
    limit = 0 if max_out is None else int(scalar(node, max_out, why))
    iou_t = 0.0 if iou is None else float(scalar(node, iou, why))
    score_t = None if score is None else float(scalar(node, score, why))
    center = node.attr("center_point_box", 0)
    selected = []
    for b, per_class in enumerate(sc):
        corners = [_corners(box, center) for box in bx[b]]
        for c, s in enumerate(per_class):
            order = sorted(range(len(s)), key=lambda i: -s[i])  # stable: ties keep box order
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if score_t is not None and not s[i] > score_t:
                    break
                if all(_iou(corners[i], corners[k]) <= iou_t for k in kept):
                    kept.append(i)
            selected += [[b, c, k] for k in kept]
    if not selected:
        return host.zeros((0, 3), host.int64)
    return host.asarray(selected, host.int64)
