"""Reductions written on the reduce primitives of lax.py: argmax/argmin (an extremum
reduction, then a min-reduction over the indices that reach it) and `lax.reduce`, which maps
monoid computations (add, mul, max, min, and, or, xor, over tuples of operands) onto them.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..core import ShapedArray
from ..interpreters import partial_eval as pe
from ..tree_util import tree_flatten, tree_unflatten
from . import lax
from .lax import _arr, _aval, _axis


# ---- argmax / argmin ----------------------------------------------------------------------------
def _arg_extremum(name: str, reducer: Callable[[Any, Sequence[int]], Any]) -> Any:
    def fn(operand: Any, axis: int, index_dtype: Any) -> Any:
        operand = _arr(operand)
        aval = _aval(operand)
        if not isinstance(axis, int) or isinstance(axis, builtins.bool):
            raise TypeError(f"{name} axis must be an int, got {axis!r}")
        if not 0 <= axis < aval.ndim:
            raise ValueError(f"Invalid axis {axis} for operand shape {aval.shape}")
        if aval.dtype.kind == "c":  # no order on complex numbers here, as JAX's
            raise TypeError(
                f"{'gt' if name == 'argmax' else 'lt'} does not accept dtype {aval.dtype.name}."
            )
        idt = dtypes.canonicalize(dtypes.dtype(index_dtype))
        if idt.kind not in "iu":
            raise TypeError(f"index_dtype must be an integer type, but got {idt.name}")
        n = aval.shape[axis]
        if n == 0:
            raise ValueError(f"{name} requires a non-empty reduction axis, got shape {aval.shape}")
        keep = tuple(i for i in range(aval.ndim) if i != axis)
        ext = lax.broadcast_in_dim(reducer(operand, (axis,)), aval.shape, keep)
        hit = lax.eq(operand, ext)
        if aval.dtype.kind == "f":  # NaN is the extremum (the first one wins), as in JAX
            nan = lax.ne(operand, operand)
            any_nan = lax.broadcast_in_dim(lax.reduce_or(nan, (axis,)), aval.shape, keep)
            hit = lax.select(any_nan, nan, hit)
        idx = lax.broadcasted_iota(idt, aval.shape, axis)
        big = lax.full(aval.shape, n, idt)
        return lax.reduce_min(lax.select(hit, idx, big), (axis,))

    fn.__name__ = name
    fn.__doc__ = f"Index of the first {name[3:]}imum of `operand` along `axis` (NaN wins)."
    return fn


argmax = _arg_extremum("argmax", lax.reduce_max)
argmin = _arg_extremum("argmin", lax.reduce_min)


# ---- reduce -------------------------------------------------------------------------------------
_MONOIDS: dict[str, Callable[[Any, Sequence[int]], Any]] = {
    "add": lax.reduce_sum, "mul": lax.reduce_prod, "max": lax.reduce_max,
    "min": lax.reduce_min, "and": lax.reduce_and, "or": lax.reduce_or, "xor": lax.reduce_xor,
}  # fmt: skip
_COMBINE: dict[str, Callable[[Any, Any], Any]] = {
    "add": lax.add, "mul": lax.mul, "max": lax.max, "min": lax.min,
    "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
}  # fmt: skip


def _monoids(computation: Callable[..., Any], in_tree: Any, avals: list[ShapedArray]) -> list[str]:
    """The monoid of each output when `computation` combines operand i only with operand i by
    one of add/mul/max/min/and/or/xor (traced on scalars); NotImplementedError otherwise."""
    n = len(avals)

    def flat(*xs: Any) -> list[Any]:
        a = tree_unflatten(in_tree, list(xs[:n]))
        b = tree_unflatten(in_tree, list(xs[n:]))
        return [_arr(o) for o in tree_flatten(computation(a, b))[0]]

    jaxpr, consts, _ = pe.trace_to_jaxpr(flat, avals + avals)
    name = getattr(computation, "__name__", repr(computation))
    ops = [e.primitive.name for e in jaxpr.eqns]
    unsupported = NotImplementedError(
        f"lax.reduce: webjax maps only the monoid computations add, mul, max, min, and, or "
        f"(each output combining one operand with itself) onto its reduce primitives; the "
        f"computation {name!r} traces to {ops or 'no operation'}"
    )
    if consts or len(jaxpr.outvars) != n or len(jaxpr.eqns) != n:
        raise unsupported
    producer = {id(o): e for e in jaxpr.eqns for o in e.outvars}
    out = []
    for i, v in enumerate(jaxpr.outvars):
        eqn = producer.get(id(v))
        if eqn is None or eqn.primitive.name not in _MONOIDS or len(eqn.invars) != 2:
            raise unsupported
        pair = {id(jaxpr.invars[i]), id(jaxpr.invars[n + i])}
        if {id(x) for x in eqn.invars} != pair:
            raise unsupported
        out.append(eqn.primitive.name)
    return out


def reduce(
    operands: Any,
    init_values: Any,
    computation: Callable[[Any, Any], Any],
    dimensions: Sequence[int],
    out_sharding: Any = None,
) -> Any:
    """Reduce `operands` over `dimensions` with `computation`, starting from `init_values`.

    `computation` is traced on scalars; monoids (lax.add, mul, max, min, and, or, xor and their
    jnp/operator equivalents, elementwise over tuples of operands) map onto webjax's reduce
    primitives. Other computations raise NotImplementedError."""
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(
            "reduce: operands and init_values must have the same tree structure, got "
            f"{tree} and {init_tree}"
        )
    flat_ops = [_arr(x) for x in flat_ops]
    shapes = {_aval(x).shape for x in flat_ops}
    if len(shapes) > 1:
        raise ValueError(f"reduce: operands must have the same shape, got {sorted(shapes)}")
    avals = [ShapedArray((), _aval(x).dtype) for x in flat_ops]
    kinds = _monoids(computation, tree, avals)
    nd = _aval(flat_ops[0]).ndim if flat_ops else 0
    dims = tuple(sorted({_axis(d, nd, "dimension") for d in dimensions}))
    outs = []
    for x, init, kind in zip(flat_ops, flat_init, kinds):
        dt = _aval(x).dtype
        r = _MONOIDS[kind](x, dims) if dims else x
        if not lax._is_python_scalar(init):
            init = _arr(init)
        init = lax.convert_element_type(init, dt)
        if not _is_identity(init, kind, dt):
            r = _COMBINE[kind](lax.broadcast(init, _aval(r).shape), r)
        outs.append(r)
    return tree_unflatten(tree, outs)


def _is_identity(init: Any, kind: str, dt: Any) -> bool:
    if isinstance(init, core.Tracer):
        return False
    try:
        v = init.item() if hasattr(init, "item") else init
    except Exception:
        return False
    if kind == "add" or kind in ("or", "xor"):
        return bool(v == 0) and not (dt.kind == "f" and math.copysign(1.0, float(v)) < 0)
    if kind == "mul":
        return bool(v == 1)
    if kind == "and":
        return bool(v == (True if dt.kind == "b" else -1 if dt.kind == "i" else 2**dt.bits - 1))
    if dt.kind == "f":
        return bool(v == (-math.inf if kind == "max" else math.inf))
    if dt.kind == "b":
        return bool(v == (kind == "min"))
    lo, hi = (
        (0, 2**dt.bits - 1) if dt.kind == "u" else (-(2 ** (dt.bits - 1)), 2 ** (dt.bits - 1) - 1)
    )
    return bool(v == (lo if kind == "max" else hi))
