"""sort (multi-operand, stable, JAX's key order) and top_k, on the kernel IR.

Short rows (at most `BITONIC_MIN`): every element is ranked against its whole row (a fused
reduction), the ranks inverted (a second one) and the operands re-indexed: three kernels,
O(n^2) work per row. Longer rows: a bitonic network, O(n log^2 n) (see below). Both are exact
and stable on every device. Keys follow JAX: -0.0 sorts as 0.0 and every NaN as +NaN, last.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import core, dtypes
from ..config import config
from ..core import ShapedArray
from ..dispatch import array as array_mod
from ..dispatch import devices, lazy, lowering
from ..interpreters import ad, batching
from ..interpreters.ad import Zero
from ..ir import exp as E
from ..ir import view
from ..ir.exp import Exp
from ..ir.ops import Op
from ..jit import jit
from . import lax
from .bitonic import BITONIC_MIN, bitonic_first, bitonic_source, sort_key
from .slicing import GatherDimensionNumbers, gather

sort_p = lax._prim("sort")
sort_p.multiple_results = True


@sort_p.def_abstract_eval
def _sort_abstract(
    *operands: ShapedArray, dimension: int, is_stable: bool, num_keys: int
) -> list[ShapedArray]:
    shape = operands[0].shape
    for o in operands:
        if o.shape != shape:
            raise TypeError(
                f"sort operands must all have the same shape, got {[x.shape for x in operands]}"
            )
    if not 0 <= dimension < max(len(shape), 1):
        raise ValueError(f"sort dimension {dimension} out of bounds for shape {shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and {len(operands)}")
    return list(operands)


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort one array or a sequence of arrays (lexicographically by the first num_keys)."""
    single = not isinstance(operand, (tuple, list))
    ops = [operand] if single else list(operand)
    nd = core.get_aval(ops[0]).ndim
    dim = dimension % nd if nd else 0
    outs = sort_p.bind(*ops, dimension=dim, is_stable=bool(is_stable), num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True) -> Any:
    return sort((keys, values), dimension, is_stable, 1)


# ---- evaluation -----------------------------------------------------------------------------
def _row_exps(exps: list[Exp], aval: ShapedArray, dim: int, out_index: Exp, j: Exp) -> list[Exp]:
    """Each operand at the output's row (from `out_index`) and position `j` along `dim`."""
    o = view.unravel(out_index, aval.shape)
    o[dim] = j
    pos = view.ravel(o, aval.shape)
    return [view.reindex(e, aval.size, pos) for e in exps]


def _rank_exp(
    keys: list[Exp], aval: ShapedArray, dim: int, descending: bool = False, total: bool = False
) -> Exp:
    """rank[i] = #{j in row : key_j before key_i, ties broken by position} (stable); `total`
    orders floats by the IEEE total order (see sort_key)."""
    n = aval.shape[dim]
    i_idx = E.idx(aval.size)
    j = E.ridx(n)
    mine = [sort_key(k, total) for k in keys]
    theirs = [sort_key(k, total) for k in _row_exps(keys, aval, dim, i_idx, j)]
    before = Op.CMPLT
    i_pos = view.unravel(i_idx, aval.shape)[dim]
    earlier = E.binary(Op.CMPLT, j, i_pos)
    result: Exp = earlier
    for a, b in zip(reversed(mine), reversed(theirs), strict=True):
        lt = E.binary(before, a, b) if descending else E.binary(before, b, a)
        result = E.binary(Op.OR, lt, E.binary(Op.AND, E.binary(Op.CMPEQ, a, b), result))
    return E.reduce(Op.ADD, E.cast(result, dtypes.int32), n)


def _source_exp(rank: Exp, aval: ShapedArray, dim: int, k_size: int) -> tuple[Exp, ShapedArray]:
    """src[..., k, ...] = the position j in the row whose rank is k (for k < k_size)."""
    n = aval.shape[dim]
    out_shape = tuple(k_size if a == dim else s for a, s in enumerate(aval.shape))
    out_aval = ShapedArray(out_shape, dtypes.int32)
    o = view.unravel(E.idx(out_aval.size), out_shape)
    k = o[dim]
    j = E.ridx(n)
    o[dim] = j
    rank_j = view.reindex(rank, aval.size, view.ravel(o, aval.shape))
    body = E.where(E.binary(Op.CMPEQ, rank_j, k), j, E.i32(0))
    return E.reduce(Op.ADD, body, n), out_aval


def _permute(
    exps: list[Exp], aval: ShapedArray, dim: int, src: Exp, src_aval: ShapedArray
) -> list[Exp]:
    o = view.unravel(E.idx(src_aval.size), src_aval.shape)
    o[dim] = src
    pos = view.ravel(o, aval.shape)
    return [view.reindex(e, aval.size, pos) for e in exps]


def _materialize(exp: Exp, aval: ShapedArray, device: Any) -> Exp:
    arr = array_mod.from_exp(exp, aval, device)
    arr._buffer()  # also while a jit program compiles, where reductions may stay expressions
    e = array_mod.exp_of(arr)
    assert e is not None
    return e


def _eager_program() -> bool:
    """Whether an eager call runs its network as a cached jit program: not while a program is
    compiling (the passes are built directly), nor under `disable_jit` (the program would
    call the impl again)."""
    return not lazy.fuse_epilogues and not config.jax_disable_jit


@functools.partial(jit, static_argnames=("dimension", "is_stable", "num_keys"))
def _sort_program(*operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list[Any]:
    """The bitonic network's passes, lowered once per shape (while compiling a program, the
    sort impl builds them directly)."""
    out: list[Any] = sort_p.bind(
        *operands, dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    return out


def _sort_impl(*operands: Any, dimension: int, is_stable: bool, num_keys: int) -> list[Any]:
    avals = [core.get_aval(o) for o in operands]
    aval = avals[0]
    device = devices.pick_device(operands)
    if aval.size == 0:
        return [array_mod.Array(a, device, None) for a in avals]
    exps = [lowering._input_exp(o, a, device) for o, a in zip(operands, avals, strict=True)]
    if aval.shape[dimension] > BITONIC_MIN:
        if _eager_program():  # eager: run the network as a cached program
            return _sort_program(
                *operands, dimension=dimension, is_stable=is_stable, num_keys=num_keys
            )
        src_b, big = bitonic_source(exps[:num_keys], aval, dimension, device)
        src_exp, src_aval = bitonic_first(src_b, aval, dimension, big, aval.shape[dimension])
        outs = _permute(exps, aval, dimension, src_exp, src_aval)
        return [array_mod.from_exp(e, a, device) for e, a in zip(outs, avals, strict=True)]
    rank_aval = ShapedArray(aval.shape, dtypes.int32)
    rank = _materialize(_rank_exp(exps[:num_keys], aval, dimension), rank_aval, device)
    src_exp, src_aval = _source_exp(rank, aval, dimension, aval.shape[dimension])
    src = _materialize(src_exp, src_aval, device)
    outs = _permute(exps, aval, dimension, src, src_aval)
    return [array_mod.from_exp(e, a, device) for e, a in zip(outs, avals, strict=True)]


sort_p.def_impl(_sort_impl)


def _sort_jvp(
    primals: list[Any], tangents: list[Any], *, dimension: int, is_stable: bool, num_keys: int
) -> tuple[list[Any], list[Any]]:
    shape = core.get_aval(primals[0]).shape
    iota = lax.broadcasted_iota(dtypes.int32, shape, dimension)
    outs = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    perm = outs[-1]
    t_out = []
    for t, p in zip(tangents, primals, strict=True):
        if isinstance(t, Zero):
            t_out.append(Zero(ad.tangent_aval(core.get_aval(p))))
        else:
            t_out.append(_take_along(t, perm, dimension))
    return outs[:-1], t_out


def _take_along(x: Any, idx: Any, dim: int) -> Any:
    """x permuted along `dim` by idx (same shape), through gather."""
    shape = core.get_aval(x).shape
    if core.get_aval(x).size == 0:  # nothing to permute (and gather's unit slices don't fit)
        return x
    nd = len(shape)
    coords = [lax.broadcasted_iota(dtypes.int32, shape, a) if a != dim else idx for a in range(nd)]
    full = lax.concatenate([lax.expand_dims(c, (nd,)) for c in coords], nd)
    dn = GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=tuple(range(nd)), start_index_map=tuple(range(nd))
    )
    return gather(x, full, dn, (1,) * nd, mode="clip")


ad.primitive_jvps[sort_p] = _sort_jvp


def _sort_batch(
    vals: list[Any], dims: list[Any], *, dimension: int, is_stable: bool, num_keys: int
) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    vals = [
        batching.bdim_at_front(v, d, size) if d is not None else batching.broadcast(v, size, 0)
        for v, d in zip(vals, dims, strict=True)
    ]
    outs = sort_p.bind(*vals, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


batching.primitive_batchers[sort_p] = _sort_batch


# ---- top_k ------------------------------------------------------------------------------------
top_k_p = lax._prim("top_k")
top_k_p.multiple_results = True


@top_k_p.def_abstract_eval
def _top_k_abstract(operand: ShapedArray, *, k: int, axis: int = -1) -> list[ShapedArray]:
    if not operand.shape:
        raise TypeError("top_k operand must have >= 1 dimension, got ()")
    if operand.dtype.kind == "c":
        raise ValueError("top_k is not compatible with complex inputs.")
    if not 0 <= k <= operand.shape[-1]:
        raise ValueError(f"k argument to top_k must be in [0, {operand.shape[-1]}], got {k}")
    shape = (*operand.shape[:-1], k)
    return [ShapedArray(shape, operand.dtype, operand.weak_type), ShapedArray(shape, dtypes.int32)]


def top_k(operand: Any, k: int, *, axis: int = -1) -> list[Any]:
    """The k largest entries along `axis` (the last by default) and their indices (ties: lower
    index first), as a list [values, indices] like JAX's: floats in XLA's total order (NaN
    first, 0.0 before -0.0, a NaN with its sign bit set last)."""
    nd = core.get_aval(operand).ndim
    ax = axis + nd if -nd <= axis < 0 else axis
    if not 0 <= ax < max(nd, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
    if nd == 0 or ax == nd - 1:
        return list(top_k_p.bind(operand, k=int(k)))
    perm = (*(i for i in range(nd) if i != ax), ax)
    inv = tuple(perm.index(i) for i in range(nd))
    outs = top_k_p.bind(lax.transpose(operand, perm), k=int(k))
    return [lax.transpose(o, inv) for o in outs]


def _top_k_impl(operand: Any, *, k: int, axis: int = -1) -> list[Any]:
    aval = core.get_aval(operand)
    outs = _top_k_abstract(aval, k=k)
    device = devices.pick_device([operand])
    if outs[0].size == 0:
        return [array_mod.Array(a, device, None) for a in outs]
    x = lowering._input_exp(operand, aval, device)
    dim = aval.ndim - 1
    if aval.shape[dim] > BITONIC_MIN:
        if _eager_program():  # eager: run the network as a cached program
            return _top_k_program(operand, k=k)
        src_b, big = bitonic_source([x], aval, dim, device, descending=True, total=True)
        src_exp, src_aval = bitonic_first(src_b, aval, dim, big, k)
        src = _materialize(src_exp, src_aval, device)
        (vals,) = _permute([x], aval, dim, src, src_aval)
        return [array_mod.from_exp(vals, outs[0], device), array_mod.from_exp(src, outs[1], device)]
    rank = _materialize(
        _rank_exp([x], aval, dim, descending=True, total=True),
        ShapedArray(aval.shape, dtypes.int32),
        device,
    )
    src_exp, src_aval = _source_exp(rank, aval, dim, k)
    src = _materialize(src_exp, src_aval, device)
    (vals,) = _permute([x], aval, dim, src, src_aval)
    return [array_mod.from_exp(vals, outs[0], device), array_mod.from_exp(src, outs[1], device)]


top_k_p.def_impl(_top_k_impl)


@functools.partial(jit, static_argnames=("k",))
def _top_k_program(operand: Any, *, k: int) -> list[Any]:
    out: list[Any] = top_k_p.bind(operand, k=k)
    return out


def _top_k_jvp(
    primals: list[Any], tangents: list[Any], *, k: int, axis: int = -1
) -> tuple[list[Any], list[Any]]:
    (x,), (t,) = primals, tangents
    vals, idx = top_k_p.bind(x, k=k)
    if isinstance(t, Zero):
        return [vals, idx], [Zero(ad.tangent_aval(core.get_aval(vals))), Zero(core.get_aval(idx))]
    shape = core.get_aval(idx).shape
    if core.get_aval(x).size == 0:  # so are the values
        zeros = lax.full(shape, 0, ad.tangent_aval(core.get_aval(vals)).dtype)
        return [vals, idx], [zeros, Zero(core.get_aval(idx))]
    nd = len(shape)
    coords = [lax.broadcasted_iota(dtypes.int32, shape, a) for a in range(nd - 1)] + [idx]
    full = lax.concatenate([lax.expand_dims(c, (nd,)) for c in coords], nd)
    dn = GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=tuple(range(nd)), start_index_map=tuple(range(nd))
    )
    t_vals = gather(ad.instantiate(t), full, dn, (1,) * nd, mode="clip")
    return [vals, idx], [t_vals, Zero(core.get_aval(idx))]


ad.primitive_jvps[top_k_p] = _top_k_jvp


def _top_k_batch(
    vals: list[Any], dims: list[Any], *, k: int, axis: int = -1
) -> tuple[list[Any], list[Any]]:
    (x,), (d,) = vals, dims
    nd = core.get_aval(x).ndim
    if d == nd - 1:  # keep the sorted axis last
        x = batching.moveaxis(x, d, 0)
        d = 0
    outs = top_k_p.bind(x, k=k)
    return outs, [d, d]


batching.primitive_batchers[top_k_p] = _top_k_batch


# ---- approx_max_k / approx_min_k ----------------------------------------------------------------
# JAX's approximate top-k is exact off TPU (XLA's CPU and GPU sort and slice): so is this one.
def _approx_k(operand: Any, k: int, dim: int, aggregate: bool, largest: bool) -> tuple[Any, Any]:
    aval = core.get_aval(operand)
    if aval.dtype.kind != "f":
        raise ValueError("operand must be a floating type")
    nd = aval.ndim
    if not -nd <= dim < nd:
        raise ValueError(f"reduction_dimension {dim} is out of bounds for rank {nd}")
    dim %= nd
    if not 0 < k <= aval.shape[dim]:
        raise ValueError(f"k must be in (0, {aval.shape[dim]}], got {k}")
    if not aggregate:
        raise NotImplementedError(
            "approx_max_k/approx_min_k with aggregate_to_topk=False (TPU's unsorted partial "
            "reduction); use aggregate_to_topk=True"
        )
    if largest:
        vals, idx = top_k(operand, k, axis=dim)
        return vals, idx
    # ascending with NaNs last, ties by index: the k smallest
    iota = lax.broadcasted_iota(dtypes.int32, aval.shape, dim)
    vals, idx = sort((operand, iota), dimension=dim, num_keys=1)
    limit = tuple(k if i == dim else s for i, s in enumerate(aval.shape))
    return lax.slice(vals, (0,) * nd, limit), lax.slice(idx, (0,) * nd, limit)


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """The k largest values along `reduction_dimension` (NaN largest) and their indices, sorted
    descending. `recall_target` and `reduction_input_size_override` tune TPU's approximation;
    here (as on JAX's CPU and GPU) the result is exact."""
    return _approx_k(lax.to_array(operand), int(k), reduction_dimension, aggregate_to_topk, True)


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """The k smallest values along `reduction_dimension` (NaNs never before a number) and
    their indices, sorted ascending; exact, as on JAX's CPU and GPU."""
    return _approx_k(lax.to_array(operand), int(k), reduction_dimension, aggregate_to_topk, False)
