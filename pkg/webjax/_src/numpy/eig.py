"""`jnp.linalg.eig`/`eigvals` and `jnp.roots`: the nonsymmetric eigensolver's users.

All three go through `lax.linalg.eig` (a host decomposition, as JAX's, see lax/eig.py), so
results are complex and come in LAPACK's order where NumPy is present.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..lax import lax, sorting, windowed
from ..lax.eig import eig as _lax_eig
from . import util
from .creation import asarray
from .shape import roll


class EigResult(tuple):
    """(eigenvalues, eigenvectors), as JAX's namedtuple-like result."""

    def __new__(cls, eigenvalues: Any, eigenvectors: Any) -> EigResult:
        return super().__new__(cls, (eigenvalues, eigenvectors))

    @property
    def eigenvalues(self) -> Any:
        return self[0]

    @property
    def eigenvectors(self) -> Any:
        return self[1]


def _square_inexact(a: Any, name: str) -> Any:
    (a,) = util.promote_dtypes_inexact(util.ensure_array(a))
    av = util.aval(a)
    if av.ndim < 2 or av.shape[-1] != av.shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got shape {av.shape}")
    return a


def eig(a: Any) -> Any:
    """Eigenvalues and right eigenvectors of square (nonsymmetric) matrices: a @ v = w * v."""
    a = _square_inexact(a, "eig")
    w, v = _lax_eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """The eigenvalues of square (nonsymmetric) matrices (complex)."""
    a = _square_inexact(a, "eigvals")
    return _lax_eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients p (highest degree first): the
    eigenvalues of its companion matrix, as JAX computes them."""
    (p,) = util.promote_dtypes_inexact(util.ensure_array(p))
    pav = util.aval(p)
    if pav.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if strip_zeros:
        values = util.concrete_array(p, "The error occurred in jnp.roots() with strip_zeros")
        lead = 0
        for v in values.tolist():
            if v != 0:
                break
            lead += 1
        p = p[lead:]
        return _roots_no_zeros(p)
    n = pav.shape[0]
    # Leading zeros without concrete values: roll them to the end, compute, mark with NaN
    is_zero = lax.eq(p, lax.full((), 0, pav.dtype))
    lead_mask = windowed.cumprod_p.bind(
        lax.convert_element_type(is_zero, dtypes.int32), axis=0, reverse=False
    )
    lead = lax.reduce_sum(lead_mask, (0,))
    allzero = lax.eq(lead, lax.full((), n, dtypes.int32))
    p = lax.select(lax.broadcast_in_dim(allzero, (n,), ()), lax.full((n,), 1, pav.dtype), p)
    r = _roots_no_zeros(roll(p, lax.neg(lead)))
    rav = util.aval(r)
    if rav.shape[0] == 0:
        return r
    zero = lax.convert_element_type(lax.eq(r, lax.full((), 0, rav.dtype)), dtypes.int32)
    order = sorting.sort((zero, lax.iota(dtypes.int32, rav.shape[0])), num_keys=1)[1]
    r = r[order]  # zero roots last, stably
    idx = lax.iota(dtypes.int32, rav.shape[0])
    keep = lax.lt(idx, lax.sub(lax.full((), rav.shape[0], dtypes.int32), lead))
    nan = asarray(complex(float("nan"), float("nan")), dtype=rav.dtype)
    return lax.select(keep, r, lax.broadcast_in_dim(nan, rav.shape, ()))


def _roots_no_zeros(p: Any) -> Any:
    pav = util.aval(p)
    cdt = dtypes.to_complex(pav.dtype) if pav.dtype.kind == "f" else pav.dtype
    n = pav.shape[0]
    if n < 2:
        return lax.full((0,), 0, cdt)
    m = n - 1
    row = lax.neg(lax.div(p[1:], p[0]))
    ones = lax.convert_element_type(
        lax.eq(
            lax.broadcasted_iota(dtypes.int32, (m, m), 0),
            lax.add(lax.broadcasted_iota(dtypes.int32, (m, m), 1), lax.full((), 1, dtypes.int32)),
        ),
        pav.dtype,
    )
    first = lax.eq(lax.broadcasted_iota(dtypes.int32, (m, m), 0), lax.full((), 0, dtypes.int32))
    companion = lax.select(first, lax.broadcast_in_dim(row, (m, m), (1,)), ones)
    return eigvals(companion)


__all__ = ["EigResult", "eig", "eigvals", "roots"]
