"""Detection: NonMaxSuppression (its output length depends on the values, so it runs on values
known at call time, outside jit)."""

from __future__ import annotations

from typing import Any

import numpy as np

from webjax._src.onnx.ops.common import Node, static
from webjax._src.onnx.registry import op


def _corners(boxes: np.ndarray, center: int) -> np.ndarray:
    if center:
        xc, yc, w, h = boxes.T
        return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=1)
    y1, x1, y2, x2 = boxes.T
    return np.stack(
        [np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)], axis=1
    )


def _iou(a: np.ndarray, b: np.ndarray) -> float:
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
    bx = static(node, boxes, why).astype(np.float64)
    sc = static(node, scores, why).astype(np.float64)
    limit = 0 if max_out is None else int(np.ravel(static(node, max_out, why))[0])
    iou_t = 0.0 if iou is None else float(np.ravel(static(node, iou, why))[0])
    score_t = None if score is None else float(np.ravel(static(node, score, why))[0])
    center = node.attr("center_point_box", 0)
    selected = []
    for b in range(sc.shape[0]):
        corners = _corners(bx[b], center)
        for c in range(sc.shape[1]):
            s = sc[b, c]
            order = np.argsort(-s, kind="stable")
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if score_t is not None and not s[i] > score_t:
                    break
                if all(_iou(corners[i], corners[k]) <= iou_t for k in kept):
                    kept.append(int(i))
            selected += [(b, c, k) for k in kept]
    return np.array(selected, dtype=np.int64).reshape(-1, 3)
