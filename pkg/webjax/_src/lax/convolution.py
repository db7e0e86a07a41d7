"""conv_general_dilated: XLA's general convolution, with its lowering and transformation rules.

Semantics follow `jax.lax.conv_general_dilated`: window strides, explicit or 'SAME'/'VALID'
padding (negative padding allowed), lhs (input) and rhs (kernel) dilation, arbitrary layouts
through `ConvDimensionNumbers`, feature groups and batch groups. `conv_general_dilated_patches`
is a convolution with a one-hot kernel.

Lowering: one fused REDUCE per output element over (input feature within its group, kernel
window). The input position is computed from the output position, stride, dilations and
padding; positions in the padding or between the points of the lhs-dilation lattice read
zero through a masked load, so no padded or dilated copy is ever materialized.

Derivatives: the conv is bilinear; both transposes are convs again (the lhs cotangent is a
conv of the output cotangent with the flipped, feature-swapped kernel; the rhs cotangent a conv
of the input with the output cotangent, features and batch exchanging roles), derived per
spatial dimension below; the rules take the primitive's parameters as `**params` and pass on
those they do not change. Batching folds the mapped axis into the batch or feature dimensions
with reshapes (views), never a loop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import core, dtypes
from ..core import ShapedArray
from ..dispatch import array as array_mod
from ..dispatch import devices, lazy, lowering
from ..interpreters import ad, batching
from ..interpreters.ad import Zero, is_undefined
from ..interpreters.batching import not_mapped
from ..ir import exp as E
from ..ir import view
from ..ir.exp import Exp
from ..ir.ops import Op
from . import lax

Pads = tuple[tuple[int, int], ...]


class ConvDimensionNumbers(NamedTuple):
    """Dimension indices of (batch, feature, spatial...) for lhs and out, (out feature, in
    feature, spatial...) for rhs."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


# ---- dimension numbers and padding ---------------------------------------------------------------
def _spec_from_string(spec: str, first: str, second: str, order: str) -> tuple[int, ...]:
    """Axis indices of `spec` as (first, second, spatial in the order of `order`'s letters)."""
    spatial = sorted(
        (i for i, c in enumerate(spec) if c not in (first, second)),
        key=lambda i: order.index(spec[i]),
    )
    return (spec.index(first), spec.index(second), *spatial)


def conv_dimension_numbers(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any
) -> ConvDimensionNumbers:
    """Normalize `dimension_numbers` (None, a ConvDimensionNumbers, or three layout strings such
    as ('NHWC', 'HWIO', 'NHWC')) to a ConvDimensionNumbers of axis indices."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(
            f"convolution requires lhs and rhs ndim to be equal, got {nd} and {len(rhs_shape)}."
        )
    if nd < 2:
        raise TypeError(f"convolution requires operands of rank at least 2, got rank {nd}.")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(dimension_numbers) != 3:
        raise TypeError(
            f"convolution dimension_numbers must have three entries, got {dimension_numbers}"
        )
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs_s, rhs_s, out_s = dimension_numbers
        for s, pair, rank, what in (
            (lhs_s, "NC", nd, "lhs"),
            (rhs_s, "OI", nd, "rhs"),
            (out_s, "NC", nd, "out"),
        ):
            if len(s) != rank:
                raise TypeError(
                    f"convolution dimension_numbers[{('lhs', 'rhs', 'out').index(what)}] must "
                    f"have len equal to the ndim of {what} ({rank}), got {len(s)} ({s!r})."
                )
            if s.count(pair[0]) != 1 or s.count(pair[1]) != 1 or len(set(s)) != len(s):
                raise TypeError(
                    f"convolution dimension_numbers {what} spec {s!r} must contain "
                    f"{pair[0]!r} and {pair[1]!r} exactly once and no repeated letters."
                )
        sp = set(rhs_s) - set("OI")
        if set(lhs_s) - set("NC") != sp or set(out_s) - set("NC") != sp:
            raise TypeError(
                "convolution dimension_numbers must have the same spatial letters in lhs, rhs "
                f"and out, got {dimension_numbers}."
            )
        return ConvDimensionNumbers(
            _spec_from_string(lhs_s, "N", "C", rhs_s),
            _spec_from_string(rhs_s, "O", "I", rhs_s),
            _spec_from_string(out_s, "N", "C", rhs_s),
        )
    specs = tuple(tuple(int(i) for i in s) for s in dimension_numbers)
    for s in specs:
        if sorted(s) != list(range(nd)):
            raise TypeError(
                f"convolution dimension_numbers {dimension_numbers} are not "
                f"permutations of the {nd} operand axes."
            )
    return ConvDimensionNumbers(*specs)


def padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str,
) -> list[tuple[int, int]]:
    """Explicit (low, high) pads for 'SAME', 'SAME_LOWER' or 'VALID' padding."""
    kind = padding.upper() if isinstance(padding, str) else padding
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"Unknown padding type: {padding}.")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-n // s)
        total = max((out - 1) * s + k - n, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _dilate_dim(n: int, d: int) -> int:
    return 0 if n == 0 else 1 + d * (n - 1)


def _window_count(padded: int, window: int, stride: int) -> int:
    return 0 if padded < window else (padded - window) // stride + 1


def _ints(xs: Sequence[Any] | None, n: int, default: int = 1) -> tuple[int, ...]:
    return (default,) * n if xs is None else tuple(int(x) for x in xs)


# ---- the primitive -------------------------------------------------------------------------------
conv_general_dilated_p = lax._prim("conv_general_dilated")


def _spatial(shape: Sequence[int], spec: Sequence[int]) -> list[int]:
    return [shape[a] for a in spec[2:]]


@conv_general_dilated_p.def_abstract_eval
def _conv_abstract(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    window_strides: tuple[int, ...],
    padding: Pads,
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    preferred_element_type: Any = None,
    **_: Any,
) -> ShapedArray:
    lspec, rspec, ospec = dimension_numbers
    nsp = lhs.ndim - 2
    if lhs.ndim != rhs.ndim or len(lspec) != lhs.ndim:
        raise TypeError(
            f"convolution operands must have equal ranks matching the dimension "
            f"numbers, got {lhs.shape}, {rhs.shape} and {dimension_numbers}"
        )
    for name, v in (
        ("window_strides", window_strides),
        ("padding", padding),
        ("lhs_dilation", lhs_dilation),
        ("rhs_dilation", rhs_dilation),
    ):
        if len(v) != nsp:
            raise TypeError(
                f"conv_general_dilated {name} must have {nsp} entries (one per "
                f"spatial dimension), got {v}"
            )
    for name, v in (
        ("window_strides", window_strides),
        ("lhs_dilation", lhs_dilation),
        ("rhs_dilation", rhs_dilation),
    ):
        if any(s < 1 for s in v):
            raise ValueError(f"conv_general_dilated {name} must be positive, got {v}")
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1:
        raise ValueError("feature_group_count and batch_group_count must be positive integers")
    if g > 1 and b > 1:
        raise ValueError(
            "At most one of feature_group_count and batch_group_count may be > 1, "
            f"got feature_group_count={g} and batch_group_count={b}"
        )
    n, c = lhs.shape[lspec[0]], lhs.shape[lspec[1]]
    o, i = rhs.shape[rspec[0]], rhs.shape[rspec[1]]
    if c % g:
        raise ValueError(
            f"conv_general_dilated feature_group_count must divide lhs feature "
            f"dimension size, but {g} does not divide {c}."
        )
    if c // g != i:
        raise ValueError(
            "conv_general_dilated lhs feature dimension size divided by feature_group_count "
            f"must equal the rhs input feature dimension size, but {c} // {g} != {i}."
        )
    if o % g:
        raise ValueError(
            f"conv_general_dilated rhs output feature dimension size must be a "
            f"multiple of feature_group_count, but {o} is not a multiple of {g}."
        )
    if n % b:
        raise ValueError(
            f"conv_general_dilated batch_group_count must divide lhs batch "
            f"dimension size, but {b} does not divide {n}."
        )
    if o % b:
        raise ValueError(
            f"conv_general_dilated rhs output feature dimension size must be a "
            f"multiple of batch_group_count, but {o} is not a multiple of {b}."
        )
    if lhs.dtype is not rhs.dtype and preferred_element_type is None:
        raise TypeError(
            f"conv_general_dilated requires operands of the same dtype, got "
            f"{lhs.dtype.name} and {rhs.dtype.name}."
        )
    if lhs.dtype.kind == "b" or rhs.dtype.kind == "b":
        raise TypeError("conv_general_dilated does not accept boolean operands")
    spatial = []
    for k, (size, ksize) in enumerate(
        zip(_spatial(lhs.shape, lspec), _spatial(rhs.shape, rspec), strict=True)
    ):
        lo, hi = padding[k]
        padded = _dilate_dim(size, lhs_dilation[k]) + lo + hi
        spatial.append(
            _window_count(max(padded, 0), _dilate_dim(ksize, rhs_dilation[k]), window_strides[k])
        )
    shape = [0] * lhs.ndim
    shape[ospec[0]], shape[ospec[1]] = n // b, o
    for k, s in enumerate(spatial):
        shape[ospec[2 + k]] = s
    dt = preferred_element_type if preferred_element_type is not None else lhs.dtype
    return ShapedArray(tuple(shape), dt, lhs.weak_type and rhs.weak_type)


def _dilated_source(u: Exp, dilation: int, size: int) -> tuple[Exp, list[Exp]]:
    """Index into an axis of `size` elements dilated by `dilation`, read at dilated position
    `u`, with the conditions for `u` to be a real element (not a hole or out of range)."""
    conds = [E.binary(Op.CMPLE, E.i32(0), u)]
    if dilation == 1:
        conds.append(E.binary(Op.CMPLT, u, E.i32(size)))
        return u, conds
    q = E.idiv(u, dilation)
    conds += [E.binary(Op.CMPEQ, E.mod(u, dilation), E.i32(0)), E.binary(Op.CMPLT, q, E.i32(size))]
    return q, conds


def _all(conds: list[Exp]) -> Exp | None:
    out: Exp | None = None
    for c in conds:
        if c.is_const and c.arg:
            continue
        out = c if out is None else E.binary(Op.AND, out, c)
    return out


def _conv_lower(
    ins: list[Exp],
    avals: list[ShapedArray],
    out: ShapedArray,
    *,
    window_strides: tuple[int, ...],
    padding: Pads,
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    **_: Any,
) -> Exp:
    la, ra = avals
    lspec, rspec, ospec = dimension_numbers
    nsp = la.ndim - 2
    n_out, o_feat = la.shape[lspec[0]] // batch_group_count, ra.shape[rspec[0]]
    in_feat = ra.shape[rspec[1]]
    ksizes = _spatial(ra.shape, rspec)
    lsizes = _spatial(la.shape, lspec)
    rsize = in_feat * math.prod(ksizes)
    o = view.unravel(E.idx(out.size), out.shape)
    r = view.unravel(E.ridx(rsize), [in_feat, *ksizes])
    f, i = o[ospec[1]], r[0]
    li: list[Exp] = [E.i32(0)] * la.ndim
    ri: list[Exp] = [E.i32(0)] * ra.ndim
    feature = i
    if feature_group_count > 1:
        group = E.idiv(f, o_feat // feature_group_count)
        feature = E.add(E.mul(group, in_feat), i)
    batch = o[ospec[0]]
    if batch_group_count > 1:
        group = E.idiv(f, o_feat // batch_group_count)
        batch = E.add(E.mul(group, n_out), batch)
    li[lspec[0]], li[lspec[1]] = batch, feature
    ri[rspec[0]], ri[rspec[1]] = f, i
    conds: list[Exp] = []
    for d in range(nsp):
        k = r[1 + d]
        ri[rspec[2 + d]] = k
        u = E.add(
            E.add(E.mul(o[ospec[2 + d]], window_strides[d]), E.mul(k, rhs_dilation[d])),
            -padding[d][0],
        )
        src, c = _dilated_source(u, lhs_dilation[d], lsizes[d])
        li[lspec[2 + d]] = src
        conds += c
    lhs = view.reindex(ins[0], la.size, view.ravel(li, la.shape))
    rhs = view.reindex(ins[1], ra.size, view.ravel(ri, ra.shape))
    acc = out.dtype
    if acc in (dtypes.float16, dtypes.bfloat16):
        acc = dtypes.float32
    lhs, rhs = E.cast(lhs, acc), E.cast(rhs, acc)
    valid = _all(conds)
    if valid is not None:
        lhs = E.where(valid, lhs, E.const(0, acc))
    return E.cast(E.reduce(Op.ADD, E.binary(Op.MUL, lhs, rhs), rsize), out.dtype)


lowering.register(conv_general_dilated_p, _conv_lower)

# Past this many multiply-adds, a convolution runs as im2col + matmul: the patches are
# gathered once into a buffer (one kernel) and the contraction is a plain matmul that the
# backends' tiled matmul paths recognise.
IM2COL_MIN_FLOPS = 1 << 20


def _conv_impl(lhs: Any, rhs: Any, **params: Any) -> Any:
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    out = conv_general_dilated_p.abstract_eval(la, ra, **params)  # type: ignore[misc]
    lspec, rspec, ospec = params["dimension_numbers"]
    nsp = la.ndim - 2
    in_feat = ra.shape[rspec[1]]
    ksizes = _spatial(ra.shape, rspec)
    rsize = in_feat * math.prod(ksizes)
    eligible = (
        params["feature_group_count"] == 1
        and params["batch_group_count"] == 1
        and out.dtype is dtypes.float32
        and la.dtype is dtypes.float32
        and ra.dtype is dtypes.float32
        and out.size * rsize >= IM2COL_MIN_FLOPS
    )
    if not eligible:
        return lowering.apply_primitive(conv_general_dilated_p, lhs, rhs, **params)
    device = devices.pick_device([lhs, rhs])
    xe = lowering._input_exp(lhs, la, device)
    we = lowering._input_exp(rhs, ra, device)
    if math.prod(ksizes) > math.prod(params["window_strides"]):
        # overlapping windows read each input element several times: compute an elementwise
        # producer (a normalization, an activation) once instead of in every patch it is in
        xe = lowering._materialized(xe, la, device)
    n, o_feat = la.shape[lspec[0]], ra.shape[rspec[0]]
    osp = [out.shape[ospec[2 + d]] for d in range(nsp)]
    ssize = math.prod(osp)
    lsizes = _spatial(la.shape, lspec)
    # patches[r, t], t = (b, s): the lhs element multiplying kernel position r for output
    # position s of batch element b
    cols = n * ssize
    psize = rsize * cols
    r, t = view.unravel(E.idx(psize), [rsize, cols])
    b, sidx = view.unravel(t, [n, ssize])
    rr = view.unravel(r, [in_feat, *ksizes])
    ss = view.unravel(sidx, osp)
    li: list[Exp] = [E.i32(0)] * la.ndim
    li[lspec[0]], li[lspec[1]] = b, rr[0]
    conds: list[Exp] = []
    for d in range(nsp):
        u = E.add(
            E.add(
                E.mul(ss[d], params["window_strides"][d]),
                E.mul(rr[1 + d], params["rhs_dilation"][d]),
            ),
            -params["padding"][d][0],
        )
        src, c = _dilated_source(u, params["lhs_dilation"][d], lsizes[d])
        li[lspec[2 + d]] = src
        conds += c
    value = view.reindex(xe, la.size, view.ravel(li, la.shape))
    valid = _all(conds)
    if valid is not None:
        value = E.where(valid, value, E.const(0.0, dtypes.float32))
    # (a 1x1 window at stride 1 without padding reads the input in its own layout: no copy)
    patches = lazy.as_buffer(value, psize, device)
    # the kernel as a row-major (O, R) matrix
    wo, wr = view.unravel(E.idx(o_feat * rsize), [o_feat, rsize])
    wk = view.unravel(wr, [in_feat, *ksizes])
    ri: list[Exp] = [E.i32(0)] * ra.ndim
    ri[rspec[0]], ri[rspec[1]] = wo, wk[0]
    for d in range(nsp):
        ri[rspec[2 + d]] = wk[1 + d]
    if tuple(rspec) != tuple(range(ra.ndim)):
        we = view.reindex(we, ra.size, view.ravel(ri, ra.shape))
    # (an OI... kernel already is that matrix: its buffer, when it has one)
    w2 = lazy.as_buffer(we, o_feat * rsize, device)
    # a plain (O, R) @ (R, B*S) matmul: the form every backend's tiled path recognises
    i = E.idx(o_feat * cols)
    row, col = E.idiv(i, cols), E.mod(i, cols)
    k = E.ridx(rsize)
    wl = E.load(w2, E.add(E.mul(row, rsize), k), dtypes.float32)
    pl = E.load(patches, E.add(E.mul(k, cols), col), dtypes.float32)
    prod = lazy.schedule(E.reduce(Op.ADD, E.binary(Op.MUL, wl, pl), rsize), o_feat * cols, device)
    # the output in its layout is a view of that product
    oc = view.unravel(E.idx(out.size), out.shape)
    ob, of = oc[ospec[0]], oc[ospec[1]]
    os_flat = view.ravel([oc[ospec[2 + d]] for d in range(nsp)], osp)
    value = E.load(prod, E.add(E.add(E.mul(of, cols), E.mul(ob, ssize)), os_flat), dtypes.float32)
    return array_mod.from_exp(value, out, device)


conv_general_dilated_p.def_impl(_conv_impl)


# ---- user-facing functions -----------------------------------------------------------------------
def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """General n-d convolution (cross-correlation, as in XLA) with dilations and groups."""
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    dnums = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    ldil = _ints(lhs_dilation, nsp)
    rdil = _ints(rhs_dilation, nsp)
    strides = _ints(window_strides, nsp)
    if isinstance(padding, str):
        if any(d != 1 for d in ldil):
            raise ValueError(
                "String padding is not implemented for transposed convolution using this op. "
                "Please either exactly specify the required padding or use conv_transpose."
            )
        window = [
            _dilate_dim(k, d) for k, d in zip(_spatial(ra.shape, dnums.rhs_spec), rdil, strict=True)
        ]
        pads = tuple(padtype_to_pads(_spatial(la.shape, dnums.lhs_spec), window, strides, padding))
    else:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    pet = (
        None
        if preferred_element_type is None
        else dtypes.canonicalize(dtypes.dtype(preferred_element_type))
    )
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=strides,
        padding=pads,
        lhs_dilation=ldil,
        rhs_dilation=rdil,
        dimension_numbers=dnums,
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count),
        precision=precision,
        preferred_element_type=pet,
    )


def conv(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Convolution in NCHW/OIHW layout without dilation."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Convolution in NCHW/OIHW layout with explicit padding and dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _conv_transpose_pads(k: int, s: int, padding: str) -> tuple[int, int]:
    """Padding of the lhs-dilated input that makes a conv the gradient-style transpose of a
    strided conv with a kernel of (dilated) size `k` and stride `s`."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError("Padding mode must be `SAME` or `VALID`.")
    return lo, total - lo


_TRANSPOSE_LAYOUTS = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: Any,
    rhs: Any,
    strides: Sequence[int],
    padding: Any,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Transposed convolution ("deconvolution"): a conv of the stride-dilated input."""
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    nd = la.ndim
    if nd != ra.ndim or nd < 2:
        raise TypeError(
            f"conv_transpose requires operands of equal rank >= 2, got {la.shape} and {ra.shape}"
        )
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_LAYOUTS:
            raise ValueError(f"No default dimension numbers for conv_transpose of rank {nd}")
        dimension_numbers = _TRANSPOSE_LAYOUTS[nd]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = nd - 2
    rdil = _ints(rhs_dilation, nsp)
    if isinstance(padding, str):
        ks = [_dilate_dim(k, d) for k, d in zip(_spatial(ra.shape, dn.rhs_spec), rdil, strict=True)]
        pads: Any = [
            _conv_transpose_pads(k, int(s), padding.upper())
            for k, s in zip(ks, strides, strict=True)
        ]
    else:
        pads = padding
    if transpose_kernel:
        rhs = lax.rev(rhs, dn.rhs_spec[2:])
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = lax.transpose(rhs, perm)
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * nsp,
        pads,
        strides,
        rdil,
        dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_patches(
    lhs: Any,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The patches `conv_general_dilated` would see, flattened into the output feature
    dimension as (input feature, *filter positions in rhs-spec order)."""
    lhs = lax.to_array(lhs)
    filter_shape = tuple(int(n) for n in filter_shape)
    lshape = core.get_aval(lhs).shape
    dn = conv_dimension_numbers(lshape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    k = math.prod(filter_shape)
    channels = lshape[lhs_spec[1]]
    dt = core.get_aval(lhs).dtype
    eye = lax.convert_element_type(
        lax.eq(
            lax.broadcasted_iota(dtypes.int32, (k, k), 0),
            lax.broadcasted_iota(dtypes.int32, (k, k), 1),
        ),
        dt,
    )
    kernel = lax.broadcast_in_dim(eye, (channels, k, k), (1, 2))
    kernel = lax.reshape(kernel, (channels * k, 1, *filter_shape))
    # axes 0 and 1 (out, in features) move to rhs_spec[0] and rhs_spec[1]; spatial keep order
    nd = len(filter_shape) + 2
    rest = iter(range(2, nd))
    src = [0 if d == rhs_spec[0] else 1 if d == rhs_spec[1] else next(rest) for d in range(nd)]
    kernel = lax.transpose(kernel, src)
    return conv_general_dilated(
        lhs,
        kernel,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dn,
        feature_group_count=channels,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


# ---- derivatives ---------------------------------------------------------------------------------
def _conv_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    lhs, rhs = primals
    tl, tr = tangents
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    t: Any = Zero(ad.tangent_aval(core.get_aval(out)))
    if not isinstance(tl, Zero):
        t = conv_general_dilated_p.bind(tl, rhs, **params)
    if not isinstance(tr, Zero):
        t = ad.add_maybe_zero(t, conv_general_dilated_p.bind(lhs, tr, **params))
    return out, t


def _aval(x: Any) -> ShapedArray:
    return x.aval if isinstance(x, (Zero, ad.UndefinedPrimal)) else core.get_aval(x)


def _inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _canonical(nd: int) -> ConvDimensionNumbers:
    iota = tuple(range(nd))
    return ConvDimensionNumbers(iota, iota, iota)


def _pet(a: Any, b: Any, want: Any) -> Any:
    """preferred_element_type for a transpose conv: None when no conversion is involved."""
    da, db = _aval(a).dtype, _aval(b).dtype
    return None if da is db is want else want


def _conv_transpose_lhs(ct: Any, rhs: Any, lhs_aval: ShapedArray, **params: Any) -> Any:
    # out[o] reads lhs[p] through kernel tap k where o*s + k*rd = p*ld + lo. With the flipped
    # tap k' = K-1-k that is a conv over ct dilated by s: p*ld + k'*rd - ((K-1)*rd - lo).
    lspec, rspec, ospec = params["dimension_numbers"]
    strides, ldil, rdil = params["window_strides"], params["lhs_dilation"], params["rhs_dilation"]
    batch_groups = params["batch_group_count"]
    nd = lhs_aval.ndim
    ctc = lax.transpose(ct, ospec)
    w = lax.transpose(rhs, rspec)
    o_feat, in_feat, *ks = _aval(w).shape
    groups = params["feature_group_count"] * batch_groups  # at most one of them exceeds 1
    og = o_feat // groups
    w = lax.reshape(w, (groups, og, in_feat, *ks))
    w = lax.transpose(w, (0, 2, 1, *range(3, nd + 1)))
    w = lax.reshape(w, (groups * in_feat, og, *ks))
    w = lax.rev(w, tuple(range(2, nd)))
    lsizes = _spatial(lhs_aval.shape, lspec)
    osizes = list(_aval(ctc).shape[2:])
    pads = []
    for d, k in enumerate(ks):
        keff = (k - 1) * rdil[d]
        lo = keff - params["padding"][d][0]
        hi = (lsizes[d] - 1) * ldil[d] + keff + 1 - _dilate_dim(osizes[d], strides[d]) - lo
        pads.append((lo, hi))
    res = conv_general_dilated_p.bind(
        ctc,
        w,
        **dict(
            params,
            window_strides=ldil,
            padding=tuple(pads),
            lhs_dilation=strides,
            dimension_numbers=_canonical(nd),
            feature_group_count=groups,
            batch_group_count=1,
            preferred_element_type=_pet(ctc, w, lhs_aval.dtype),
        ),
    )
    if batch_groups > 1:  # features (group, c) -> batch (group, n)
        nb, _, *sp = _aval(res).shape
        res = lax.reshape(res, (nb, batch_groups, in_feat, *sp))
        res = lax.transpose(res, (1, 0, *range(2, nd + 1)))
        res = lax.reshape(res, (batch_groups * nb, in_feat, *sp))
    return lax.transpose(res, _inverse(lspec))


def _conv_transpose_rhs(ct: Any, lhs: Any, rhs_aval: ShapedArray, **params: Any) -> Any:
    # rhs tap k pairs lhs[p] with out[o] where p*ld = k*rd + o*s - lo: a conv producing k,
    # striding by rd, with ct as kernel dilated by s; lhs features act as the batch.
    lspec, rspec, ospec = params["dimension_numbers"]
    strides, ldil, rdil = params["window_strides"], params["lhs_dilation"], params["rhs_dilation"]
    nd = rhs_aval.ndim
    swap = (1, 0, *range(2, nd))
    x = lax.transpose(lhs, tuple(lspec[i] for i in swap))
    kern = lax.transpose(ct, tuple(ospec[i] for i in swap))
    lsizes = list(_aval(x).shape[2:])
    osizes = list(_aval(kern).shape[2:])
    ks = _spatial(rhs_aval.shape, rspec)
    pads = []
    for d, k in enumerate(ks):
        lo = params["padding"][d][0]
        hi = (
            (k - 1) * rdil[d]
            + _dilate_dim(osizes[d], strides[d])
            - _dilate_dim(lsizes[d], ldil[d])
            - lo
        )
        pads.append((lo, hi))
    res = conv_general_dilated_p.bind(
        x,
        kern,
        **dict(
            params,
            window_strides=rdil,
            padding=tuple(pads),
            rhs_dilation=strides,
            dimension_numbers=_canonical(nd),
            feature_group_count=params["batch_group_count"],
            batch_group_count=params["feature_group_count"],
            preferred_element_type=_pet(x, kern, rhs_aval.dtype),
        ),
    )
    res = lax.transpose(res, swap)  # (O, I, k...)
    return lax.transpose(res, _inverse(rspec))


def _conv_transpose_rule(ct: Any, lhs: Any, rhs: Any, **params: Any) -> list[Any]:
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError("conv_general_dilated is not linear in both operands at once")
    la, ra = _aval(lhs), _aval(rhs)
    if isinstance(ct, Zero):
        return [Zero(la) if is_undefined(lhs) else None, Zero(ra) if is_undefined(rhs) else None]
    if 0 in _aval(ct).shape or la.size == 0 or ra.size == 0:
        zeros = lambda a: lax.full(a.shape, 0, a.dtype)
        return [zeros(la) if is_undefined(lhs) else None, zeros(ra) if is_undefined(rhs) else None]
    if is_undefined(lhs):
        return [_conv_transpose_lhs(ct, rhs, la, **params), None]
    return [None, _conv_transpose_rhs(ct, lhs, ra, **params)]


ad.primitive_jvps[conv_general_dilated_p] = _conv_jvp
ad.primitive_transposes[conv_general_dilated_p] = _conv_transpose_rule


# ---- batching ------------------------------------------------------------------------------------
def _merge(x: Any, axis: int, count: int = 2) -> Any:
    """Merge `count` adjacent axes starting at `axis` into one."""
    s = core.get_aval(x).shape
    return lax.reshape(x, (*s[:axis], math.prod(s[axis : axis + count]), *s[axis + count :]))


def _split(x: Any, axis: int, sizes: Sequence[int]) -> Any:
    s = core.get_aval(x).shape
    return lax.reshape(x, (*s[:axis], *sizes, *s[axis + 1 :]))


def _swap(x: Any, axis: int) -> Any:
    """Swap axes `axis` and `axis + 1`."""
    perm = list(range(core.get_aval(x).ndim))
    perm[axis], perm[axis + 1] = perm[axis + 1], perm[axis]
    return lax.transpose(x, perm)


def _fold_grouped(x: Any, axis: int, groups: int) -> Any:
    """x has the mapped axis V at `axis` right before an axis of size groups*M laid out as
    (group, m): merge them into one axis laid out as (group, v, m)."""
    size = core.get_aval(x).shape[axis + 1]
    x = _split(x, axis + 1, (groups, size // groups))
    return _merge(_swap(x, axis), axis, 3)


def _unfold_grouped(x: Any, axis: int, groups: int, v: int) -> Any:
    """Inverse of `_fold_grouped`: the (group, v, m) axis becomes V followed by (group, m)."""
    size = core.get_aval(x).shape[axis]
    x = _swap(_split(x, axis, (groups, v, size // (groups * v))), axis)
    return _merge(x, axis + 1)


def _conv_batcher(vals: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple[Any, int]:
    lhs, rhs = vals
    dl, dr = dims
    lspec, rspec, ospec = params["dimension_numbers"]
    g, b = params["feature_group_count"], params["batch_group_count"]
    if dl is not not_mapped and dr is not not_mapped:
        v = core.get_aval(lhs).shape[dl]
        rhs = _merge(batching.moveaxis(rhs, dr, rspec[0]), rspec[0])
        if b == 1:  # the mapped axis becomes more feature groups
            lhs = _merge(batching.moveaxis(lhs, dl, lspec[1]), lspec[1])
            new = dict(params, feature_group_count=g * v)
        else:  # ... or more batch groups
            lhs = _merge(batching.moveaxis(lhs, dl, lspec[0]), lspec[0])
            new = dict(params, batch_group_count=b * v)
        out = conv_general_dilated_p.bind(lhs, rhs, **new)
        o = core.get_aval(out).shape[ospec[1]]
        return _split(out, ospec[1], (v, o // v)), ospec[1]
    if dl is not not_mapped:
        v = core.get_aval(lhs).shape[dl]
        lhs = _fold_grouped(batching.moveaxis(lhs, dl, lspec[0]), lspec[0], b)
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        n = core.get_aval(out).shape[ospec[0]]
        return _split(out, ospec[0], (v, n // v)), ospec[0]
    assert dr is not not_mapped
    v = core.get_aval(rhs).shape[dr]
    rhs = _fold_grouped(batching.moveaxis(rhs, dr, rspec[0]), rspec[0], g * b)
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    return _unfold_grouped(out, ospec[1], g * b, v), ospec[1]


batching.primitive_batchers[conv_general_dilated_p] = _conv_batcher

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_general_dilated_patches",
    "conv_transpose",
    "conv_with_general_padding",
    "padtype_to_pads",
]


# ---- shape helpers (JAX's public shape arithmetic of convolutions) ------------------------------
def conv_general_permutations(dimension_numbers: Any) -> tuple[tuple[int, ...], ...]:
    """(lhs, rhs, out) axis permutations to (N, C, spatial...) / (O, I, spatial...) of layout
    strings such as ('NHWC', 'HWIO', 'NHWC')."""
    lhs_s, rhs_s, out_s = dimension_numbers
    nd = len(lhs_s)
    dn = conv_dimension_numbers((1,) * nd, (1,) * len(rhs_s), (lhs_s, rhs_s, out_s))
    return dn.lhs_spec, dn.rhs_spec, dn.out_spec


def _space_out(padded: int, k: int, s: int) -> int:
    return (padded - k) // s + 1 if padded >= k else 0


def conv_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    strides: Sequence[int],
    pads: Any,
    batch_group_count: int = 1,
) -> tuple[int, ...]:
    """Output shape of a convolution of NC... lhs and OI... rhs (pads: (lo, hi) pairs or a
    padding name)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            f"Wrong number of explicit pads for convolution: expected "
            f"{len(lhs_shape) - 2}, got {len(pads)}."
        )
    space = tuple(
        _space_out(int(n) + int(lo) + int(hi), int(k), int(s))
        for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads, strict=True)
    )
    return (int(lhs_shape[0]) // batch_group_count, int(rhs_shape[0]), *space)


def _permuted(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(shape[i]) for i in perm)


def _unpermuted(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    out = [0] * len(perm)
    for v, i in zip(shape, perm, strict=True):
        out[i] = v
    return tuple(out)


def conv_general_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """Output shape of conv_general_dilated (no dilation) in the layouts of
    `dimension_numbers`."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(
        _permuted(lhs_shape, lp), _permuted(rhs_shape, rp), window_strides, padding
    )
    return _unpermuted(out, op)


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """Output shape of conv_transpose in the layouts of `dimension_numbers`: each spatial size
    is (n - 1) * stride + 2 - k plus the transposed convolution's padding."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = _permuted(lhs_shape, lp), _permuted(rhs_shape, rp)
    if isinstance(padding, str):
        padding = [_conv_transpose_pads(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    space = tuple(
        (n - 1) * int(s) - k + 2 + int(lo) + int(hi)
        for n, k, s, (lo, hi) in zip(lhs_t[2:], rhs_t[2:], window_strides, padding, strict=True)
    )
    return _unpermuted((lhs_t[0], rhs_t[0], *space), op)
