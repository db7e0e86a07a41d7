"""`jax.ops`: segment reductions as scatters into an identity-filled output (JAX's algorithm,
including `bucket_size`: per-bucket partial results, then a reduction over the buckets)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import core, dtypes
from .lax import lax, slicing
from .numpy import util


def _identity(kind: str, dt: Any) -> Any:
    if kind == "add":
        return False if dt.kind == "b" else 0
    if kind == "mul":
        return True if dt.kind == "b" else 1
    if dt.kind == "f":
        return -math.inf if kind == "max" else math.inf
    if dt.kind == "b":
        return kind == "min"
    if dt.kind == "u":
        return 0 if kind == "max" else 2**dt.bits - 1
    lo, hi = -(2 ** (dt.bits - 1)), 2 ** (dt.bits - 1) - 1
    return lo if kind == "max" else hi


_SCATTER: dict[str, Callable[..., Any]] = {
    "add": slicing.scatter_add, "mul": slicing.scatter_mul, "max": slicing.scatter_max,
    "min": slicing.scatter_min,
}  # fmt: skip
_REDUCE: dict[str, Callable[..., Any]] = {
    "add": lax.reduce_sum, "mul": lax.reduce_prod, "max": lax.reduce_max, "min": lax.reduce_min,
}  # fmt: skip


def _segment(
    name: str,
    kind: str,
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    indices_are_sorted: bool,
    unique_indices: bool,
    bucket_size: Any,
    mode: Any,
) -> Any:
    data = util.ensure_array(data)
    ids = util.ensure_array(segment_ids)
    ia = util.aval(ids)
    if ia.dtype.kind not in "iu":
        raise TypeError(f"{name}: segment_ids must be integers, got dtype {ia.dtype.name}")
    mode = slicing.GatherScatterMode.FILL_OR_DROP if mode is None else mode
    if num_segments is None:
        ids_c = core.concrete_or_error(lambda v: v, ids, f"{name}() `num_segments` argument.")
        num_segments = (
            int(lax.reduce_max(ids_c, tuple(range(ia.ndim))).item()) + 1 if ia.size else 0
        )
    num_segments = core.concrete_or_error(int, num_segments, f"{name}() `num_segments` argument.")
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    da = util.aval(data)
    rest = da.shape[ia.ndim :] if da.ndim >= ia.ndim else ()
    updates = util.broadcast_to(data, (*ia.shape, *rest))
    ident = _identity(kind, da.dtype)
    i32 = dtypes.int32
    ids32 = lax.convert_element_type(ids, i32)
    if bucket_size is None:
        out = lax.full((num_segments, *rest), ident, da.dtype)
        idx = lax.expand_dims(ids32, (ia.ndim,))
        dn = slicing.ScatterDimensionNumbers(
            update_window_dims=tuple(range(ia.ndim, ia.ndim + len(rest))),
            inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,),
        )
        return _SCATTER[kind](
            out,
            idx,
            updates,
            dn,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
        )
    if ia.ndim != 1:
        raise NotImplementedError(f"{name} with bucket_size needs 1-d segment_ids")
    n = ia.shape[0]
    nb = -(-n // int(bucket_size))
    out = lax.full((nb, num_segments, *rest), ident, da.dtype)
    bucket = lax.div(lax.iota(i32, n), lax.full((), int(bucket_size), i32))
    idx = lax.concatenate([lax.expand_dims(bucket, (1,)), lax.expand_dims(ids32, (1,))], 1)
    dn = slicing.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, 1 + len(rest))),
        inserted_window_dims=(0, 1),
        scatter_dims_to_operand_dims=(0, 1),
    )
    out = _SCATTER[kind](
        out,
        idx,
        updates,
        dn,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )
    return _REDUCE[kind](out, (0,))


def _make(kind: str, name: str, doc: str) -> Any:
    def fn(
        data: Any,
        segment_ids: Any,
        num_segments: int | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        bucket_size: int | None = None,
        mode: Any = None,
        out_sharding: Any = None,
    ) -> Any:
        return _segment(
            name,
            kind,
            data,
            segment_ids,
            num_segments,
            indices_are_sorted,
            unique_indices,
            bucket_size,
            mode,
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


segment_sum = _make("add", "segment_sum", "Sum of `data` over each segment id (0 if empty).")
segment_prod = _make("mul", "segment_prod", "Product of `data` per segment id (1 if empty).")
segment_max = _make("max", "segment_max", "Maximum of `data` per segment id (-inf if empty).")
segment_min = _make("min", "segment_min", "Minimum of `data` per segment id (+inf if empty).")

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
