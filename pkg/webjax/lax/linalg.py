"""webjax.lax.linalg: JAX's `lax.linalg` (factorization primitives and their wrappers)."""

from webjax._src.lax.eig import eig as eig
from webjax._src.lax.eig import eig_p as eig_p
from webjax._src.lax.linalg import *  # noqa: F403
from webjax._src.lax.linalg import __all__ as __all__
from webjax._src.lax.schur import hessenberg, hessenberg_p, householder_product, schur, schur_p
from webjax._src.lax.tridiagonal import tridiagonal, tridiagonal_solve

__all__ = [
    *__all__,
    "hessenberg",
    "hessenberg_p",
    "householder_product",
    "schur",
    "schur_p",
    "tridiagonal",
    "tridiagonal_solve",
]
