"""webjax.ad_checkpoint: rematerialization (jax.ad_checkpoint)."""

from __future__ import annotations

from typing import Any

from webjax._src.checkpoint import checkpoint, checkpoint_policies, remat
from webjax._src.tree_util import tree_map


def checkpoint_name(x: Any, name: str) -> Any:
    """Tag the values of `x` with `name` for name-based checkpoint policies.

    webjax's checkpoint recomputes every residual whatever the policy says, so a tag changes
    nothing about the values: each leaf is returned as it is."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name expects a string name, got {name!r}")
    return tree_map(lambda v: v, x)


__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
