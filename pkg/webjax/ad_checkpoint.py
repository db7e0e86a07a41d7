"""webjax.ad_checkpoint: rematerialization (jax.ad_checkpoint)."""

from webjax._src.checkpoint import checkpoint, checkpoint_name, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
