"""webjax.scipy.sparse: `jax.scipy.sparse`."""

from webjax.scipy.sparse import linalg as linalg
