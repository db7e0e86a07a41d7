"""webjax.scipy: `jax.scipy` (special functions and linear algebra)."""

from webjax.scipy import linalg, special, stats
