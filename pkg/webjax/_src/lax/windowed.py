"""Windowed reductions (`reduce_window` and friends) and cumulative reductions, with rules.

Primitives (JAX's names and params):

- `reduce_window_sum`, `reduce_window_max`, `reduce_window_min`: each output element is one
  fused REDUCE over its window; positions in the padding or between the points of the
  base-dilation lattice are masked to the identity (never materialized).
- `select_and_gather_add` (the tangent of a max/min window reduction: for each window, the
  tangent at the first position that attains the extremum) and its transpose
  `select_and_scatter_add`. They evaluate in three kernels: the window extremum, the first
  window offset attaining it (REDUCE over the window), then a gather (a pure re-indexing that
  fuses into its consumer) or a scatter (REDUCE over the windows covering each position).
- `cumsum`, `cumprod`, `cummax`, `cummin`: one REDUCE over the axis masked to the prefix
  (O(n^2) work, one kernel); `cumlogsumexp`: the running max, then one stable REDUCE.

Derivatives: `reduce_window_sum` is linear and its transpose is another `reduce_window_sum`
(the window slides over the stride-dilated cotangent, striding by the base dilation).
`cumsum` transposes to the reversed cumsum. `cumprod`'s tangent is the affine prefix scan
d[i] = x[i] d[i-1] + out[i-1] t[i] (log-depth, no division, exact at zeros); `cummax`/`cummin`
share the tangent among the prefix positions equal to the running extremum, like
`reduce_max`; `cumlogsumexp`'s tangent is the softmax-weighted prefix sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import core, dtypes
from ..core import Primitive, ShapedArray
from ..dispatch import lowering
from ..interpreters import ad, batching
from ..interpreters import partial_eval as pe
from ..interpreters.ad import Zero, is_undefined
from ..interpreters.batching import not_mapped
from ..ir import exp as E
from ..ir import scalar, view
from ..ir.exp import Exp
from ..ir.ops import Op
from . import control_flow, lax
from .convolution import padtype_to_pads

Pads = tuple[tuple[int, int], ...]
_WIDE = (dtypes.float16, dtypes.bfloat16)


def _aval(x: Any) -> ShapedArray:
    return x.aval if isinstance(x, (Zero, ad.UndefinedPrimal)) else core.get_aval(x)


def _dilate_dim(n: int, d: int) -> int:
    return 0 if n == 0 else 1 + d * (n - 1)


def _all(conds: list[Exp]) -> Exp | None:
    out: Exp | None = None
    for c in conds:
        if c.is_const and c.arg:
            continue
        out = c if out is None else E.binary(Op.AND, out, c)
    return out


# ---- window geometry -----------------------------------------------------------------------------
def _window_shape(
    shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Pads,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
    name: str,
) -> tuple[int, ...]:
    nd = len(shape)
    for pname, v in (
        ("window_dimensions", window_dimensions),
        ("window_strides", window_strides),
        ("padding", padding),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if len(v) != nd:
            raise TypeError(
                f"{name}: {pname} {tuple(v)} must have one entry per operand "
                f"dimension, for operand shape {tuple(shape)}"
            )
    for pname, v in (
        ("window_dimensions", window_dimensions),
        ("window_strides", window_strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if any(int(s) < 1 for s in v):
            raise TypeError(f"{name}: {pname} must have positive entries, got {tuple(v)}")
    out = []
    for n, k, s, (lo, hi), bd, wd in zip(
        shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        padded = _dilate_dim(n, bd) + lo + hi
        eff = _dilate_dim(k, wd)
        out.append(0 if padded < eff else (padded - eff) // s + 1)
    return tuple(out)


def _source(
    o: list[Exp],
    k: list[Exp],
    shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Pads,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> tuple[list[Exp], list[Exp]]:
    """Operand multi-index read by window position `o` at window offset `k`, and the
    conditions for it to be a real element (not padding or a base-dilation hole)."""
    index, conds = [], []
    for oi, ki, n, s, (lo, _), bd, wd in zip(
        o, k, shape, window_strides, padding, base_dilation, window_dilation, strict=True
    ):
        u = E.add(E.add(E.mul(oi, s), E.mul(ki, wd)), -lo)
        conds.append(E.binary(Op.CMPLE, E.i32(0), u))
        if bd > 1:
            conds.append(E.binary(Op.CMPEQ, E.mod(u, bd), E.i32(0)))
            u = E.idiv(u, bd)
        conds.append(E.binary(Op.CMPLT, u, E.i32(n)))
        index.append(u)
    return index, conds


def _normalize_window(
    shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    base_dilation: Sequence[int] | None,
    window_dilation: Sequence[int] | None,
) -> dict[str, Any]:
    nd = len(shape)
    wdims = tuple(int(k) for k in window_dimensions)
    strides = tuple(int(s) for s in window_strides)
    bdil = (1,) * nd if base_dilation is None else tuple(int(d) for d in base_dilation)
    wdil = (1,) * nd if window_dilation is None else tuple(int(d) for d in window_dilation)
    if isinstance(padding, str):
        if len(wdims) != nd or len(strides) != nd or len(bdil) != nd or len(wdil) != nd:
            raise TypeError(
                f"reduce_window: window parameters must have one entry per operand "
                f"dimension, for operand shape {tuple(shape)}"
            )
        pads = tuple(
            padtype_to_pads(
                [_dilate_dim(n, d) for n, d in zip(shape, bdil, strict=True)],
                [_dilate_dim(k, d) for k, d in zip(wdims, wdil, strict=True)],
                strides,
                padding,
            )
        )
    else:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    return {
        "window_dimensions": wdims,
        "window_strides": strides,
        "padding": pads,
        "base_dilation": bdil,
        "window_dilation": wdil,
    }


# ---- reduce_window_{sum,max,min} ----------------------------------------------------------------
_WINDOW_OPS = {"sum": Op.ADD, "max": Op.MAX, "min": Op.MIN}
reduce_window_sum_p = lax._prim("reduce_window_sum")
reduce_window_max_p = lax._prim("reduce_window_max")
reduce_window_min_p = lax._prim("reduce_window_min")
_WINDOW_PRIMS = {"sum": reduce_window_sum_p, "max": reduce_window_max_p, "min": reduce_window_min_p}


def _reduce_window_abstract(name: str) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, **window: Any) -> ShapedArray:
        if name == "sum" and x.dtype.kind == "b":
            raise TypeError("reduce_window_sum does not accept boolean operands")
        return x.update(shape=_window_shape(x.shape, name=f"reduce_window_{name}", **window))

    return rule


def _reduce_window_lower(op: Op) -> lowering.Rule:
    def rule(
        ins: list[Exp],
        avals: list[ShapedArray],
        out: ShapedArray,
        *,
        window_dimensions: tuple[int, ...],
        **window: Any,
    ) -> Exp:
        x_aval = avals[0]
        rsize = math.prod(window_dimensions)
        o = view.unravel(E.idx(out.size), out.shape)
        k = view.unravel(E.ridx(rsize), window_dimensions)
        index, conds = _source(o, k, x_aval.shape, **window)
        body = view.reindex(ins[0], x_aval.size, view.ravel(index, x_aval.shape))
        if op is Op.ADD and body.dtype in _WIDE:
            body = E.cast(body, dtypes.float32)
        valid = _all(conds)
        if valid is not None:
            body = E.where(valid, body, E.const(scalar.identity(op, body.dtype), body.dtype))
        return E.cast(E.reduce(op, body, rsize), out.dtype)

    return rule


for _name, _p in _WINDOW_PRIMS.items():
    _p.def_abstract_eval(_reduce_window_abstract(_name))
    lowering.register(_p, _reduce_window_lower(_WINDOW_OPS[_name]))


def _reduce_window_sum_transpose(
    ct: Any,
    x: Any,
    *,
    window_dimensions: tuple[int, ...],
    window_strides: tuple[int, ...],
    padding: Pads,
    base_dilation: tuple[int, ...],
    window_dilation: tuple[int, ...],
) -> list[Any]:
    # x[p] feeds window o at offset k when o*s + k*wd = p*bd + lo. With k' = K-1-k that is a
    # window sum over ct dilated by s, read at p*bd + k'*wd - ((K-1)*wd - lo).
    xa = x.aval
    if isinstance(ct, Zero):
        return [Zero(xa)]
    out_shape = _aval(ct).shape
    if 0 in out_shape:
        return [lax.full(xa.shape, 0, xa.dtype)]
    pads = []
    for n, m, k, s, (lo, _), bd, wd in zip(
        xa.shape,
        out_shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        keff = (k - 1) * wd
        new_lo = keff - lo
        pads.append((new_lo, (n - 1) * bd + keff + 1 - _dilate_dim(m, s) - new_lo))
    return [
        reduce_window_sum_p.bind(
            ct,
            window_dimensions=window_dimensions,
            window_strides=base_dilation,
            padding=tuple(pads),
            base_dilation=window_strides,
            window_dilation=window_dilation,
        )
    ]


def _window_linear_jvp(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    def jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        out = prim.bind(*primals, **params)
        if isinstance(tangents[0], Zero):
            return out, Zero(ad.tangent_aval(_aval(out)))
        return out, prim.bind(tangents[0], **params)

    return jvp


ad.primitive_jvps[reduce_window_sum_p] = _window_linear_jvp(reduce_window_sum_p)
ad.primitive_transposes[reduce_window_sum_p] = _reduce_window_sum_transpose


def _reduce_window_chooser_jvp(name: str) -> Callable[..., tuple[Any, Any]]:
    prim = _WINDOW_PRIMS[name]
    select_prim = lax.prims["ge" if name == "max" else "le"]

    def jvp(primals: list[Any], tangents: list[Any], **window: Any) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **window)
        if isinstance(t, Zero) or _aval(x).dtype.kind != "f":
            return out, Zero(ad.tangent_aval(_aval(out)))
        return out, select_and_gather_add_p.bind(t, x, select_prim=select_prim, **window)

    return jvp


ad.primitive_jvps[reduce_window_max_p] = _reduce_window_chooser_jvp("max")
ad.primitive_jvps[reduce_window_min_p] = _reduce_window_chooser_jvp("min")


def _insert_window_dim(window: dict[str, Any], d: int) -> dict[str, Any]:
    def ins(key: str, v: Any) -> tuple[Any, ...]:
        t = tuple(window[key])
        return t[:d] + (v,) + t[d:]

    return dict(
        window,
        window_dimensions=ins("window_dimensions", 1),
        window_strides=ins("window_strides", 1),
        padding=ins("padding", (0, 0)),
        base_dilation=ins("base_dilation", 1),
        window_dilation=ins("window_dilation", 1),
    )


def _reduce_window_batcher(prim: Primitive) -> Callable[..., tuple[Any, int]]:
    def rule(vals: Sequence[Any], dims: Sequence[Any], **window: Any) -> tuple[Any, int]:
        (x,), (d,) = vals, dims
        assert d is not None
        return prim.bind(x, **_insert_window_dim(window, d)), d

    return rule


for _p in _WINDOW_PRIMS.values():
    batching.primitive_batchers[_p] = _reduce_window_batcher(_p)


# ---- select_and_gather_add / select_and_scatter_add ---------------------------------------------
select_and_gather_add_p = lax._prim("select_and_gather_add")
select_and_scatter_add_p = lax._prim("select_and_scatter_add")


def _chooser(select_prim: Primitive) -> str:
    if select_prim.name not in ("ge", "le"):
        raise NotImplementedError(f"select_prim must be lax.ge_p or lax.le_p, got {select_prim}")
    return "max" if select_prim.name == "ge" else "min"


@select_and_gather_add_p.def_abstract_eval
def _sga_abstract(
    t: ShapedArray, x: ShapedArray, *, select_prim: Primitive, **window: Any
) -> ShapedArray:
    if t.shape != x.shape or t.dtype is not x.dtype:
        raise TypeError(
            f"select_and_gather_add: tangents {t.str_short(True)} and operand "
            f"{x.str_short(True)} must have the same shape and dtype"
        )
    return t.update(shape=_window_shape(x.shape, name="select_and_gather_add", **window))


@select_and_scatter_add_p.def_abstract_eval
def _ssa_abstract(
    s: ShapedArray, x: ShapedArray, *, select_prim: Primitive, **window: Any
) -> ShapedArray:
    expected = _window_shape(x.shape, name="select_and_scatter_add", **window)
    if s.shape != expected or s.dtype is not x.dtype:
        raise TypeError(
            f"select_and_scatter_add: source {s.str_short(True)} must have the window "
            f"output shape {expected} and the dtype of operand {x.str_short(True)}"
        )
    return s.update(shape=x.shape)


# Kernel-level helpers, bound only inside the evaluation rules above (on concrete arrays), so
# they need no transformation rules and stay out of the primitive catalogue.
_window_first_p = Primitive("window_first_index")
_window_gather_p = Primitive("window_gather")
_window_scatter_p = Primitive("window_scatter_add")


@_window_first_p.def_abstract_eval
def _first_abstract(x: ShapedArray, ext: ShapedArray, **window: Any) -> ShapedArray:
    return ShapedArray(ext.shape, dtypes.int32)


def _first_lower(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    window_dimensions: tuple[int, ...],
    **window: Any,
) -> Exp:
    """The first flat window offset whose element equals the window's extremum (the window
    size when none does, e.g. a window entirely in the padding)."""
    x_aval = avals[0]
    rsize = math.prod(window_dimensions)
    r = E.ridx(rsize)
    o = view.unravel(E.idx(out.size), out.shape)
    index, conds = _source(o, view.unravel(r, window_dimensions), x_aval.shape, **window)
    x = view.reindex(ins[0], x_aval.size, view.ravel(index, x_aval.shape))
    hit = E.binary(Op.CMPEQ, x, ins[1])
    valid = _all(conds)
    if valid is not None:
        hit = E.binary(Op.AND, valid, hit)
    return E.reduce(Op.MIN, E.where(hit, r, E.i32(rsize)), rsize)


@_window_gather_p.def_abstract_eval
def _gather_abstract(t: ShapedArray, first: ShapedArray, **window: Any) -> ShapedArray:
    return t.update(shape=first.shape)


def _gather_lower(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    window_dimensions: tuple[int, ...],
    **window: Any,
) -> Exp:
    t_aval = avals[0]
    first = ins[1]
    o = view.unravel(E.idx(out.size), out.shape)
    index, _ = _source(o, view.unravel(first, window_dimensions), t_aval.shape, **window)
    t = view.reindex(ins[0], t_aval.size, view.ravel(index, t_aval.shape))
    found = E.binary(Op.CMPLT, first, E.i32(math.prod(window_dimensions)))
    return E.where(found, t, E.const(0, t.dtype))


@_window_scatter_p.def_abstract_eval
def _scatter_abstract(
    s: ShapedArray, first: ShapedArray, *, operand_shape: tuple[int, ...], **window: Any
) -> ShapedArray:
    return s.update(shape=operand_shape)


def _scatter_lower(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    operand_shape: tuple[int, ...],
    window_dimensions: tuple[int, ...],
    window_strides: tuple[int, ...],
    padding: Pads,
    base_dilation: tuple[int, ...],
    window_dilation: tuple[int, ...],
) -> Exp:
    """For each operand position, the sum of the sources of the windows that selected it:
    a REDUCE over the window offsets k, the window o solving o*s + k*wd = p*bd + lo."""
    s_aval = avals[0]
    rsize = math.prod(window_dimensions)
    r = E.ridx(rsize)
    p = view.unravel(E.idx(out.size), out.shape)
    k = view.unravel(r, window_dimensions)
    index, conds = [], []
    for pi, ki, m, s, (lo, _), bd, wd in zip(
        p, k, s_aval.shape, window_strides, padding, base_dilation, window_dilation, strict=True
    ):
        v = E.add(E.binary(Op.SUB, E.mul(pi, bd), E.mul(ki, wd)), lo)
        conds.append(E.binary(Op.CMPLE, E.i32(0), v))
        if s > 1:
            conds.append(E.binary(Op.CMPEQ, E.mod(v, s), E.i32(0)))
            v = E.idiv(v, s)
        conds.append(E.binary(Op.CMPLT, v, E.i32(m)))
        index.append(v)
    flat = view.ravel(index, s_aval.shape)
    src = view.reindex(ins[0], s_aval.size, flat)
    chosen = view.reindex(ins[1], s_aval.size, flat)
    conds.append(E.binary(Op.CMPEQ, chosen, r))
    acc = dtypes.float32 if src.dtype in _WIDE else src.dtype
    valid = _all(conds)
    body = E.cast(src, acc)
    if valid is not None:
        body = E.where(valid, body, E.const(0, acc))
    return E.cast(E.reduce(Op.ADD, body, rsize), out.dtype)


lowering.register(_window_first_p, _first_lower)
lowering.register(_window_gather_p, _gather_lower)
lowering.register(_window_scatter_p, _scatter_lower)


def _first_index(x: Any, select_prim: Primitive, window: dict[str, Any]) -> Any:
    ext = _WINDOW_PRIMS[_chooser(select_prim)].bind(x, **window)
    return _window_first_p.bind(x, ext, **window)


@select_and_gather_add_p.def_impl
def _sga_impl(t: Any, x: Any, *, select_prim: Primitive, **window: Any) -> Any:
    return _window_gather_p.bind(t, _first_index(x, select_prim, window), **window)


@select_and_scatter_add_p.def_impl
def _ssa_impl(s: Any, x: Any, *, select_prim: Primitive, **window: Any) -> Any:
    first = _first_index(x, select_prim, window)
    return _window_scatter_p.bind(s, first, operand_shape=_aval(x).shape, **window)


def _sga_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    t, x = primals
    out = select_and_gather_add_p.bind(t, x, **params)
    if isinstance(tangents[0], Zero):
        return out, Zero(ad.tangent_aval(_aval(out)))
    return out, select_and_gather_add_p.bind(tangents[0], x, **params)


def _ssa_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    s, x = primals
    out = select_and_scatter_add_p.bind(s, x, **params)
    if isinstance(tangents[0], Zero):
        return out, Zero(ad.tangent_aval(_aval(out)))
    return out, select_and_scatter_add_p.bind(tangents[0], x, **params)


def _sga_transpose(ct: Any, t: Any, x: Any, **params: Any) -> list[Any]:
    if is_undefined(x):
        raise ValueError("select_and_gather_add is not linear in its operand")
    if isinstance(ct, Zero):
        return [Zero(_aval(t)), None]
    return [select_and_scatter_add_p.bind(ct, x, **params), None]


def _ssa_transpose(ct: Any, s: Any, x: Any, **params: Any) -> list[Any]:
    if is_undefined(x):
        raise ValueError("select_and_scatter_add is not linear in its operand")
    if isinstance(ct, Zero):
        return [Zero(_aval(s)), None]
    return [select_and_gather_add_p.bind(ct, x, **params), None]


ad.primitive_jvps[select_and_gather_add_p] = _sga_jvp
ad.primitive_jvps[select_and_scatter_add_p] = _ssa_jvp
ad.primitive_transposes[select_and_gather_add_p] = _sga_transpose
ad.primitive_transposes[select_and_scatter_add_p] = _ssa_transpose


def _select_batcher(prim: Primitive) -> Callable[..., tuple[Any, int]]:
    def rule(vals: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple[Any, int]:
        size = next(_aval(v).shape[d] for v, d in zip(vals, dims) if d is not not_mapped)
        a, b = (batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims))
        window = {k: v for k, v in params.items() if k != "select_prim"}
        window = _insert_window_dim(window, 0)
        return prim.bind(a, b, select_prim=params["select_prim"], **window), 0

    return rule


batching.primitive_batchers[select_and_gather_add_p] = _select_batcher(select_and_gather_add_p)
batching.primitive_batchers[select_and_scatter_add_p] = _select_batcher(select_and_scatter_add_p)


# ---- the user function ---------------------------------------------------------------------------
def _recognize(computation: Callable[..., Any], dtype: Any) -> str | None:
    """'sum', 'max' or 'min' when `computation` is lax.add/max/min or traces to one of them
    (jnp.add, jnp.maximum, operator.add, lambda x, y: x + y, ...)."""
    direct = {lax.add: "sum", lax.max: "max", lax.min: "min"}
    if computation in direct:
        return direct[computation]

    aval = ShapedArray((), dtype)
    try:
        closed = pe.trace_to_closed_jaxpr(lambda a, b: [computation(a, b)], [aval, aval])
    except Exception:
        return None
    jaxpr = closed.jaxpr
    names = {"add": "sum", "max": "max", "min": "min"}
    if len(jaxpr.eqns) != 1 or closed.consts:
        return None
    eqn = jaxpr.eqns[0]
    ins = {id(v) for v in eqn.invars}
    if (
        eqn.primitive.name in names
        and ins == {id(v) for v in jaxpr.invars}
        and len(eqn.invars) == 2
        and jaxpr.outvars[0] is eqn.outvars[0]
    ):
        return names[eqn.primitive.name]
    return None


def _is_identity(init: Any, which: str, dtype: Any) -> bool:
    if isinstance(init, core.Tracer):
        return False
    try:
        v = init.item() if hasattr(init, "item") else init
    except Exception:
        return False
    return bool(v == scalar.identity(_WINDOW_OPS[which], dtype))


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable[..., Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduce each window of `operand` with `computation`, starting from `init_value`. lax.add,
    lax.max and lax.min (and their equivalents) are window primitives; any other computation
    (or several operands) folds the window's strided views with it, one per window offset."""
    multi = isinstance(operand, (tuple, list))
    operands = list(operand) if multi else [operand]
    inits = list(init_value) if multi else [init_value]
    if len(operands) != len(inits):
        raise TypeError("reduce_window: operands and init_values must have the same length")
    shape = core.get_aval(operands[0]).shape
    if window_strides is None:
        window_strides = (1,) * len(shape)
    window = _normalize_window(
        shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    aval = core.get_aval(operands[0])
    which = None if multi else _recognize(computation, aval.dtype)
    if which is None:
        outs = _reduce_window_fold(operands, inits, computation, window)
        return type(operand)(outs) if multi else outs[0]
    out = _WINDOW_PRIMS[which].bind(operand, **window)
    if not _is_identity(init_value, which, aval.dtype):
        init = lax.convert_element_type(init_value, aval.dtype)
        init = lax.broadcast_in_dim(init, _aval(out).shape, ())
        out = {"sum": lax.add, "max": lax.max, "min": lax.min}[which](out, init)
    return out


def _reduce_window_fold(
    operands: list[Any], inits: list[Any], computation: Callable[..., Any], window: dict[str, Any]
) -> list[Any]:
    """Any reduce_window as a fold of strided slices: pad (and base-dilate) each operand with its
    init value, then combine the view at every window offset into the accumulator."""
    import itertools

    operands = [lax.to_array(x) for x in operands]
    avals = [core.get_aval(x) for x in operands]
    for av in avals[1:]:
        if av.shape != avals[0].shape:
            raise TypeError("reduce_window: all operands must have the same shape")
    inits = [lax.convert_element_type(v, av.dtype) for v, av in zip(inits, avals, strict=True)]
    wdims, strides = window["window_dimensions"], window["window_strides"]
    bdil, wdil, pads = window["base_dilation"], window["window_dilation"], window["padding"]
    cfg = [(lo, hi, d - 1) for (lo, hi), d in zip(pads, bdil, strict=True)]
    padded = [lax.pad(x, v, cfg) for x, v in zip(operands, inits, strict=True)]
    pshape = core.get_aval(padded[0]).shape
    spans = [(k - 1) * d + 1 for k, d in zip(wdims, wdil, strict=True)]
    out_shape = tuple(
        max(0, (n - span) // s + 1) for n, span, s in zip(pshape, spans, strides, strict=True)
    )
    accs = [lax.broadcast_in_dim(v, out_shape, ()) for v in inits]
    if 0 in out_shape:
        return accs
    for offset in itertools.product(*(range(k) for k in wdims)):
        starts = [o * d for o, d in zip(offset, wdil, strict=True)]
        limits = [st + (m - 1) * s + 1 for st, m, s in zip(starts, out_shape, strides, strict=True)]
        views = [lax.slice(x, starts, limits, strides) for x in padded]
        if len(accs) == 1:
            accs = [computation(accs[0], views[0])]
        else:
            accs = list(computation(tuple(accs), tuple(views)))
        accs = [lax.convert_element_type(a, av.dtype) for a, av in zip(accs, avals, strict=True)]
    return accs


# ---- cumulative reductions -----------------------------------------------------------------------
cumsum_p = lax._prim("cumsum")
cumprod_p = lax._prim("cumprod")
cummax_p = lax._prim("cummax")
cummin_p = lax._prim("cummin")
cumlogsumexp_p = lax._prim("cumlogsumexp")
_CUM_OPS = {cumsum_p: Op.ADD, cumprod_p: Op.MUL, cummax_p: Op.MAX, cummin_p: Op.MIN}
_CUM_KINDS = {  # complex: lowering_complex.py (cumsum per part; the others composed)
    cumsum_p: "fiuc",
    cumprod_p: "fiuc",
    cummax_p: "fiubc",
    cummin_p: "fiubc",
    cumlogsumexp_p: "fc",
}


def _cum_abstract(prim: Primitive) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        if not 0 <= axis < x.ndim:
            raise ValueError(
                f"{prim.name}: axis {axis} is out of bounds for array of rank {x.ndim}"
            )
        if x.dtype.kind not in _CUM_KINDS[prim]:
            raise TypeError(f"{prim.name} does not accept dtype {x.dtype.name}.")
        return x

    return rule


def _in_prefix(i: Exp, r: Exp, reverse: bool) -> Exp:
    return E.binary(Op.CMPLE, i, r) if reverse else E.binary(Op.CMPLE, r, i)


def _cum_lower(op: Op) -> lowering.Rule:
    def rule(
        ins: list[Exp], avals: list[ShapedArray], out: ShapedArray, *, axis: int, reverse: bool
    ) -> Exp:
        shape = avals[0].shape
        n = shape[axis]
        o = view.unravel(E.idx(out.size), shape)
        r = E.ridx(n)
        index = list(o)
        index[axis] = r
        body = view.reindex(ins[0], avals[0].size, view.ravel(index, shape))
        if op in (Op.ADD, Op.MUL) and body.dtype in _WIDE:
            body = E.cast(body, dtypes.float32)
        fill = E.const(scalar.identity(op, body.dtype), body.dtype)
        body = E.where(_in_prefix(o[axis], r, reverse), body, fill)
        return E.cast(E.reduce(op, body, n), out.dtype)

    return rule


for _p, _op in _CUM_OPS.items():
    _p.def_abstract_eval(_cum_abstract(_p))
    lowering.register(_p, _cum_lower(_op))
cumlogsumexp_p.def_abstract_eval(_cum_abstract(cumlogsumexp_p))


def _grid(x: Any, axis: int, role: str) -> Any:
    """`x` broadcast to its shape with a second copy of `axis` inserted after it: role 'i'
    puts x's axis on the first (output position), 'r' on the second (prefix position)."""
    shape = _aval(x).shape
    nd = len(shape)
    grid = shape[: axis + 1] + (shape[axis],) + shape[axis + 1 :]
    if role == "i":
        dims = tuple(j if j <= axis else j + 1 for j in range(nd))
    else:
        dims = tuple(j if j < axis else j + 1 for j in range(nd))
    return lax.broadcast_in_dim(x, grid, dims)


def _prefix_mask(shape: tuple[int, ...], axis: int, reverse: bool) -> Any:
    grid = shape[: axis + 1] + (shape[axis],) + shape[axis + 1 :]
    i = lax.broadcasted_iota(dtypes.int32, grid, axis)
    r = lax.broadcasted_iota(dtypes.int32, grid, axis + 1)
    return lax.le(i, r) if reverse else lax.le(r, i)


def _cumlogsumexp_complex(x: Any, axis: int, reverse: bool) -> Any:
    """As XLA folds each window: JAX's complex logaddexp (lax.complex_logaddexp) from -inf over
    the window's elements, lowest index first, here a scan along the axis. Forward that is the
    same order. Reversed, the scan runs from the end; what the order changes beyond rounding is
    that an element whose real part is -inf gives NaN only as the first of its fold (-inf + inf
    in the doubled operand) and otherwise nothing: so it is skipped, and its own output is
    NaN. A +inf or NaN part makes the rest NaN either way, as on JAX."""
    xa = _aval(x)
    if xa.size == 0:
        return x
    nd = xa.ndim
    front = (axis, *(d for d in range(nd) if d != axis))
    xs = lax.transpose(x, front)
    if reverse:
        xs = lax.rev(xs, (0,))
    init = lax.full(_aval(xs).shape[1:], complex(-math.inf, 0), xa.dtype)

    def step(acc: Any, xk: Any) -> tuple[Any, Any]:
        if not reverse:
            acc = lax.complex_logaddexp(acc, xk)
            return acc, acc
        first = lax.eq(lax.real(xk), lax.full((), -math.inf, _aval(lax.real(xk)).dtype))
        acc = lax.select(first, acc, lax.complex_logaddexp(acc, xk))
        return acc, lax.select(first, lax.full_like(acc, complex(math.nan, math.nan)), acc)

    _, ys = control_flow.scan(step, init, xs)
    if reverse:
        ys = lax.rev(ys, (0,))
    back = tuple(front.index(d) for d in range(nd))
    return lax.transpose(ys, back)


def _cumlogsumexp_impl(x: Any, *, axis: int, reverse: bool) -> Any:
    xa = _aval(x)
    if xa.dtype.kind == "c":
        return _cumlogsumexp_complex(x, axis, reverse)
    m = cummax_p.bind(x, axis=axis, reverse=reverse)
    m = lax.select(lax.is_finite(m), m, lax.full(xa.shape, 0, _aval(m).dtype))
    m = lax.convert_element_type(m, xa.dtype)
    diff = lax.sub(_grid(x, axis, "r"), _grid(m, axis, "i"))
    grid_shape = _aval(diff).shape
    neg_inf = lax.full(grid_shape, -math.inf, xa.dtype)
    terms = lax.exp(lax.select(_prefix_mask(xa.shape, axis, reverse), diff, neg_inf))
    return lax.add(m, lax.log(lax.reduce_sum(terms, (axis + 1,))))


cumlogsumexp_p.def_impl(_cumlogsumexp_impl)


def _cumsum_transpose(ct: Any, x: Any, *, axis: int, reverse: bool) -> list[Any]:
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


def _cumsum_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = cumsum_p.bind(x, **params)
    if isinstance(t, Zero) or _aval(x).dtype.kind not in "fc":
        return out, Zero(ad.tangent_aval(_aval(out)))
    return out, cumsum_p.bind(t, **params)


ad.primitive_jvps[cumsum_p] = _cumsum_jvp
ad.primitive_transposes[cumsum_p] = _cumsum_transpose


def _shift(a: Any, d: int, axis: int, fill: float) -> Any:
    """b[i] = a[i - d] along `axis` (fill for i < d)."""
    aval = _aval(a)
    n = aval.shape[axis]
    if d >= n:  # (an empty axis too) nothing is left of `a`
        return lax.full(aval.shape, fill, aval.dtype)
    limits = list(aval.shape)
    limits[axis] = n - d
    cut = lax.slice(a, (0,) * aval.ndim, limits)
    cfg = [(0, 0, 0)] * aval.ndim
    cfg[axis] = (d, 0, 0)
    return lax.pad(cut, lax.full((), fill, aval.dtype), cfg)


def _cumprod_jvp(
    primals: list[Any], tangents: list[Any], *, axis: int, reverse: bool
) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = cumprod_p.bind(x, axis=axis, reverse=reverse)
    if isinstance(t, Zero) or _aval(x).dtype.kind not in "fc":
        return out, Zero(ad.tangent_aval(_aval(out)))
    flip = (lambda v: lax.rev(v, (axis,))) if reverse else (lambda v: v)
    xs, ts, outs = flip(x), flip(t), flip(out)
    # d[i] = x[i] d[i-1] + out[i-1] t[i]: compose the affine maps (a, b) over doubling spans.
    a = xs
    b = lax.mul(_shift(outs, 1, axis, 1.0), ts)
    d, n = 1, _aval(x).shape[axis]
    while d < n:
        b = lax.add(b, lax.mul(a, _shift(b, d, axis, 0.0)))
        a = lax.mul(a, _shift(a, d, axis, 1.0))
        d *= 2
    return out, flip(b)


ad.primitive_jvps[cumprod_p] = _cumprod_jvp


def _cum_chooser_jvp(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    def jvp(
        primals: list[Any], tangents: list[Any], *, axis: int, reverse: bool
    ) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        xa = _aval(x)
        if isinstance(t, Zero) or xa.dtype.kind not in "fc":
            return out, Zero(ad.tangent_aval(_aval(out)))
        hit = lax.bitwise_and(
            _prefix_mask(xa.shape, axis, reverse),
            lax.eq(_grid(x, axis, "r"), _grid(out, axis, "i")),
        )
        w = lax.convert_element_type(hit, xa.dtype)
        count = lax.reduce_sum(w, (axis + 1,))
        total = lax.reduce_sum(lax.mul(w, _grid(ad.instantiate(t), axis, "r")), (axis + 1,))
        one = lax.full(xa.shape, 1, xa.dtype)
        return out, lax.div(total, lax.max(count, one))

    return jvp


ad.primitive_jvps[cummax_p] = _cum_chooser_jvp(cummax_p)
ad.primitive_jvps[cummin_p] = _cum_chooser_jvp(cummin_p)


def _cumlogsumexp_jvp(
    primals: list[Any], tangents: list[Any], *, axis: int, reverse: bool
) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = cumlogsumexp_p.bind(x, axis=axis, reverse=reverse)
    if isinstance(t, Zero):
        return out, Zero(ad.tangent_aval(_aval(out)))
    xa = _aval(x)
    diff = lax.sub(_grid(x, axis, "r"), _grid(out, axis, "i"))
    neg_inf = lax.full(_aval(diff).shape, -math.inf, xa.dtype)
    w = lax.exp(lax.select(_prefix_mask(xa.shape, axis, reverse), diff, neg_inf))
    return out, lax.reduce_sum(lax.mul(w, _grid(t, axis, "r")), (axis + 1,))


ad.primitive_jvps[cumlogsumexp_p] = _cumlogsumexp_jvp


def _cum_batcher(prim: Primitive) -> Callable[..., tuple[Any, int]]:
    def rule(
        vals: Sequence[Any], dims: Sequence[Any], *, axis: int, reverse: bool
    ) -> tuple[Any, int]:
        (x,), (d,) = vals, dims
        assert d is not None
        return prim.bind(x, axis=axis + 1 if axis >= d else axis, reverse=reverse), d

    return rule


for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    batching.primitive_batchers[_p] = _cum_batcher(_p)


def _cumulative(prim: Primitive) -> Callable[..., Any]:
    def fn(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        aval = core.get_aval(operand)
        ax = int(axis)
        if ax < 0:  # JAX's lax takes no negative axes here (jnp's functions do)
            raise ValueError("XLA operations do not allow negative axes")
        if ax >= aval.ndim:
            raise ValueError(f"axis {ax} is out of bounds for array of shape {aval.shape}")
        if aval.dtype.kind == "b":
            raise TypeError(
                f"{prim.name} does not accept dtype bool. Accepted dtypes are subtypes of number."
            )
        if prim is cumlogsumexp_p and aval.dtype.kind in "iu" and aval.shape[ax]:
            # as JAX, whose -inf starting value has no integer form (unless the scanned axis
            # is empty: (3, 0) along axis 0 raises, (0, 3) returns)
            raise OverflowError("cannot convert float infinity to integer")
        if prim is cumlogsumexp_p and aval.dtype.kind in "iu":  # empty: nothing to compute
            return lax.full(aval.shape, 0, aval.dtype)
        return prim.bind(operand, axis=ax, reverse=bool(reverse))

    fn.__name__ = prim.name
    fn.__qualname__ = prim.name
    fn.__doc__ = f"{prim.name} along `axis` (from the end when `reverse`), as jax.lax.{prim.name}."
    return fn


cumsum = _cumulative(cumsum_p)
cumprod = _cumulative(cumprod_p)
cummax = _cumulative(cummax_p)
cummin = _cumulative(cummin_p)
cumlogsumexp = _cumulative(cumlogsumexp_p)

__all__ = [
    "cumlogsumexp",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "reduce_window",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_sum_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
]


def reduce_window_shape_tuple(
    operand_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """Output shape of reduce_window (explicit (lo, hi) padding pairs)."""
    nd = len(operand_shape)
    return _window_shape(
        tuple(int(d) for d in operand_shape),
        tuple(int(d) for d in window_dimensions),
        tuple(int(d) for d in window_strides),
        tuple((int(lo), int(hi)) for lo, hi in padding),
        (1,) * nd if base_dilation is None else tuple(base_dilation),
        (1,) * nd if window_dilation is None else tuple(window_dilation),
        "reduce_window_shape_tuple",
    )
