"""Sparse @ sparse: bcoo_dot_general of two BCOOs, as JAX's bcoo_spdot_general. Per batch
element, every pair of entries whose contracted indices agree gives one product entry (an outer
comparison of the two index lists); duplicates are then summed to JAX's output nse.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import numpy as jnp
from ...vmap import vmap
from . import bcoo as bcoo_mod
from .bcoo import BCOO, _broadcast_batch
from .bcoo_layout import bcoo_sum_duplicates


def _spdot(lhs: BCOO, rhs: BCOO, dn: Any, preferred: Any) -> BCOO:
    (lc, rc), (lb, rb) = dn
    out = bcoo_mod.dot_out_aval(lhs, rhs, dn, preferred)
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError("bcoo_spdot_general with dense dimensions.")
    if (lb and max(lb) >= lhs.n_batch) or (rb and max(rb) >= rhs.n_batch):
        raise NotImplementedError(
            "bcoo_spdot_general: batch_dims must correspond to batch dimensions of the sparse "
            "representation."
        )
    for x, c in ((lhs, lc), (rhs, rc)):
        if c and (min(c) < x.n_batch or max(c) >= x.n_batch + x.n_sparse):
            raise NotImplementedError(
                "bcoo_spdot_general only supports contraction of sparse indices."
            )
    if rhs.n_batch > len(rb) and lhs.n_sparse > len(lc):
        raise ValueError(
            "bcoo_spdot_general: cannot have unused batch dims on rhs with unused sparse dims "
            "on lhs."
        )
    out_nse = (lhs.nse if lhs.n_sparse > len(lc) else 1) * (
        rhs.nse if rhs.n_sparse > len(rc) else 1
    )
    out_nb = lhs.n_batch + rhs.n_batch - len(lb)
    out_nse = min(out_nse, math.prod(out.shape[out_nb:]))
    dt = out.dtype
    (ld, li), (rd, ri) = _broadcast_batch(lhs), _broadcast_batch(rhs)
    lperm = [*lb, *(d for d in range(lhs.n_batch) if d not in lb)]
    rperm = [*rb, *(d for d in range(rhs.n_batch) if d not in rb)]
    ld = jnp.transpose(ld, (*lperm, lhs.n_batch))
    li = jnp.transpose(li, (*lperm, lhs.n_batch, lhs.n_batch + 1))
    rd = jnp.transpose(rd, (*rperm, rhs.n_batch))
    ri = jnp.transpose(ri, (*rperm, rhs.n_batch, rhs.n_batch + 1))
    l_sparse = lhs.shape[lhs.n_batch :]
    r_sparse = rhs.shape[rhs.n_batch :]
    l_c = [d - lhs.n_batch for d in lc]
    r_c = [d - rhs.n_batch for d in rc]
    l_f = [d for d in range(lhs.n_sparse) if d not in l_c]
    r_f = [d for d in range(rhs.n_sparse) if d not in r_c]
    sub_shape = (*(l_sparse[d] for d in l_f), *(r_sparse[d] for d in r_f))
    idt = jnp.result_type(li, ri)

    def one(ld: Any, li: Any, rd: Any, ri: Any) -> tuple[Any, Any]:
        l_i, r_i = li[:, np.asarray(l_c, np.int32)], ri[:, np.asarray(r_c, np.int32)]
        overlap = jnp.all(l_i[:, None] == r_i[None, :], axis=-1)
        l_ok = jnp.all(l_i < np.asarray([l_sparse[d] for d in l_c], np.int64).astype(l_i.dtype), -1)
        r_ok = jnp.all(r_i < np.asarray([r_sparse[d] for d in r_c], np.int64).astype(r_i.dtype), -1)
        prod = ld.astype(dt)[:, None] * rd.astype(dt)[None, :]
        data = jnp.where(overlap & l_ok[:, None] & r_ok[None, :], prod, 0).ravel()
        lj = jnp.broadcast_to(
            li[:, None, np.asarray(l_f, np.int32)], (li.shape[0], ri.shape[0], len(l_f))
        )
        rj = jnp.broadcast_to(
            ri[None, :, np.asarray(r_f, np.int32)], (li.shape[0], ri.shape[0], len(r_f))
        )
        ind = jnp.concatenate([lj.astype(idt), rj.astype(idt)], axis=-1).reshape(data.shape[0], -1)
        summed = bcoo_sum_duplicates(BCOO((data, ind), shape=sub_shape), nse=out_nse)
        return summed.data, summed.indices

    f = one
    for _ in range(rhs.n_batch - len(rb)):
        f = vmap(f, in_axes=(None, None, 0, 0))
    for _ in range(lhs.n_batch - len(lb)):
        f = vmap(f, in_axes=(0, 0, None, None))
    for _ in range(len(lb)):
        f = vmap(f)
    data, indices = f(ld, li, rd, ri)
    return BCOO((data, indices), shape=out.shape)


bcoo_mod.SPARSE_DOT.append(_spdot)
