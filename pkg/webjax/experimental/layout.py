"""webjax.experimental.layout: `jax.experimental.layout` (Layout, Format,
with_layout_constraint)."""

from webjax._src.experimental.layout import Format, Layout, with_layout_constraint

__all__ = ["Format", "Layout", "with_layout_constraint"]
