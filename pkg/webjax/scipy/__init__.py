"""webjax.scipy: `jax.scipy` (special functions so far)."""

from webjax.scipy import special
