"""Products: matmul, dot, vdot, vecdot, inner, outer, tensordot, kron and einsum.

Every contraction is one lax.dot_general (whose batch/contracting dimension numbers say it all)
plus transposes and reshapes. einsum parses its subscripts, sums out labels used by one operand
only, and contracts pairwise in a greedy order that keeps intermediates small.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..lax import lax
from . import util
from .shape import moveaxis
from .ufuncs import multiply


def _operands(name: str, a: Any, b: Any, preferred_element_type: Any) -> tuple[Any, Any, Any]:
    a, b = util.promote_dtypes(*(x if util.is_scalar(x) else util.ensure_array(x) for x in (a, b)))
    pet = None
    if preferred_element_type is not None:
        pet = dtypes.canonicalize(dtypes.dtype(preferred_element_type))
    return a, b, pet


def _dot_general(a: Any, b: Any, dims: Any, pet: Any) -> Any:
    av = util.aval(a)
    if av.dtype.kind == "b" and pet is None:  # bool products are 'any(a and b)'
        out = lax.dot_general(util.convert(a, dtypes.int32), util.convert(b, dtypes.int32), dims)
        return lax.ne(out, lax.full((), 0, dtypes.int32))
    out = lax.dot_general(a, b, dims, preferred_element_type=pet)
    weak = av.weak_type and util.aval(b).weak_type
    if pet is None and util.aval(out).weak_type != weak:
        out = lax.convert_element_type(out, util.aval(out).dtype, weak)
    return out


def matmul(
    a: Any,
    b: Any,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    util.check_arraylike("matmul", a, b)
    a, b, pet = _operands("matmul", a, b, preferred_element_type)
    sa, sb = util.aval(a).shape, util.aval(b).shape
    for i, s in enumerate((sa, sb)):
        if not s:
            raise ValueError(
                f"matmul input operand {i} must have ndim at least 1, but it has ndim 0"
            )
    a_vec, b_vec = len(sa) == 1, len(sb) == 1
    if a_vec:
        a, sa = lax.reshape(a, (1, sa[0])), (1, sa[0])
    if b_vec:
        b, sb = lax.reshape(b, (sb[0], 1)), (sb[0], 1)
    batch = util.broadcast_shapes(sa[:-2], sb[:-2])
    a = util.broadcast_to(a, batch + sa[-2:])
    b = util.broadcast_to(b, batch + sb[-2:])
    nb = len(batch)
    bd = tuple(range(nb))
    out = _dot_general(a, b, (((nb + 1,), (nb,)), (bd, bd)), pet)
    drop = ([nb] if a_vec else []) + ([nb + 1] if b_vec else [])
    return lax.squeeze(out, drop) if drop else out


def dot(
    a: Any,
    b: Any,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    util.check_arraylike("dot", a, b)
    a, b, pet = _operands("dot", a, b, preferred_element_type)
    na, nb = util.aval(a).ndim, util.aval(b).ndim
    if na == 0 or nb == 0:
        out = multiply(a, b)
        return out if pet is None else util.convert(out, pet)
    contract = (na - 1,), ((0,) if nb == 1 else (nb - 2,))
    return _dot_general(a, b, (contract, ((), ())), pet)


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    util.check_arraylike("vdot", a, b)
    a, b = util.ensure_array(a), util.ensure_array(b)
    a, b = lax.reshape(a, (util.aval(a).size,)), lax.reshape(b, (util.aval(b).size,))
    return dot(_conj(a), b, preferred_element_type=preferred_element_type)


def _conj(x: Any) -> Any:
    """The complex conjugate (real arrays unchanged): vdot, vecdot and vecmat conjugate their
    first operand."""
    return lax.conj(x) if util.aval(x).dtype.kind == "c" else x


def vecdot(
    x1: Any,
    x2: Any,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    util.check_arraylike("jnp.vecdot", x1, x2)
    x1, x2, pet = _operands("vecdot", x1, x2, preferred_element_type)
    s1, s2 = util.aval(x1).shape, util.aval(x2).shape
    a1, a2 = util.canonical_axis(axis, len(s1)), util.canonical_axis(axis, len(s2))
    if s1[a1] != s2[a2]:
        raise ValueError(f"axes must match; got shapes {s1} and {s2} with {axis=}")
    x1, x2 = moveaxis(_conj(x1), a1, -1), moveaxis(x2, a2, -1)
    s1, s2 = util.aval(x1).shape, util.aval(x2).shape
    batch = util.broadcast_shapes(s1[:-1], s2[:-1])
    x1, x2 = util.broadcast_to(x1, batch + s1[-1:]), util.broadcast_to(x2, batch + s2[-1:])
    bd = tuple(range(len(batch)))
    return _dot_general(x1, x2, (((len(batch),), (len(batch),)), (bd, bd)), pet)


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    util.check_arraylike("inner", a, b)
    a, b, pet = _operands("inner", a, b, preferred_element_type)
    na, nb = util.aval(a).ndim, util.aval(b).ndim
    if na == 0 or nb == 0:
        return multiply(a, b)
    return _dot_general(a, b, (((na - 1,), (nb - 1,)), ((), ())), pet)


def outer(a: Any, b: Any, out: None = None) -> Any:
    util.check_arraylike("outer", a, b)
    a, b = util.ensure_array(a), util.ensure_array(b)
    a = lax.reshape(a, (util.aval(a).size, 1))
    return multiply(a, lax.reshape(b, (util.aval(b).size,)))


def kron(a: Any, b: Any) -> Any:
    util.check_arraylike("kron", a, b)
    a, b = util.ensure_array(a), util.ensure_array(b)
    sa, sb = util.aval(a).shape, util.aval(b).shape
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    # interleave axes: out[i0, j0, i1, j1, ...] = a[i0, i1, ...] * b[j0, j1, ...]
    a = lax.reshape(a, tuple(x for d in sa for x in (d, 1)))
    b = lax.reshape(b, tuple(x for d in sb for x in (1, d)))
    return lax.reshape(multiply(a, b), tuple(x * y for x, y in zip(sa, sb)))


def tensordot(
    a: Any,
    b: Any,
    axes: Any = 2,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    util.check_arraylike("tensordot", a, b)
    a, b, pet = _operands("tensordot", a, b, preferred_element_type)
    na, nb = util.aval(a).ndim, util.aval(b).ndim
    if isinstance(axes, int) or hasattr(axes, "__index__"):
        k = int(axes)
        if k > min(na, nb):
            raise TypeError(
                f"Number of tensordot axes (axes {k}) exceeds input ranks ({na} and {nb})"
            )
        ca, cb = tuple(range(na - k, na)), tuple(range(k))
    else:
        if len(axes) != 2:
            raise TypeError(
                "tensordot axes argument must be an int, a pair of ints, or a pair "
                f"of lists/tuples of ints; got {axes}"
            )
        xa, xb = axes
        xa = [xa] if isinstance(xa, int) else list(xa)
        xb = [xb] if isinstance(xb, int) else list(xb)
        if len(xa) != len(xb):
            raise TypeError(
                f"tensordot requires axes lists to have equal length, got {xa} and {xb}."
            )
        ca = tuple(util.canonical_axis(x, na) for x in xa)
        cb = tuple(util.canonical_axis(x, nb) for x in xb)
    return _dot_general(a, b, ((ca, cb), ((), ())), pet)


# ---- einsum ------------------------------------------------------------------------------------
def _parse(subscripts: str, shapes: Sequence[tuple[int, ...]]) -> tuple[list[str], str]:
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, out = s.split("->")
        explicit = True
    else:
        lhs, out, explicit = s, "", False
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(shapes)} operands")
    # '...' becomes fresh upper-case-free labels, right-aligned across operands
    used = set(s)
    fresh = [chr(c) for c in range(0x100, 0x200) if chr(c) not in used]
    ell_rank = 0
    for t, shp in zip(terms, shapes):
        if "..." in t:
            ell_rank = max(ell_rank, len(shp) - (len(t) - 3))
    ell = "".join(fresh[:ell_rank])
    new_terms = []
    for t, shp in zip(terms, shapes):
        if "..." in t:
            k = len(shp) - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - k :] if k else "")
        if len(t) != len(shp):
            raise ValueError(f"einsum: subscripts {t!r} do not match an operand of rank {len(shp)}")
        new_terms.append(t)
    if explicit:
        out = out.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for t in new_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    for c in out:
        if not any(c in t for t in new_terms):
            raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs")
    return new_terms, out


def _take_diagonal(x: Any, labels: str) -> tuple[Any, str]:
    """Collapse repeated labels within one operand ('ii->i') to their diagonal."""
    while True:
        dup = next((c for c in labels if labels.count(c) > 1), None)
        if dup is None:
            return x, labels
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        shape = util.aval(x).shape
        eye = lax.eq(
            lax.broadcasted_iota(dtypes.int32, shape, i),
            lax.broadcasted_iota(dtypes.int32, shape, j),
        )
        x = lax.select(eye, x, lax.full(shape, 0, util.aval(x).dtype))
        x = lax.reduce_sum(x, (j,)) if util.aval(x).dtype.kind != "b" else lax.reduce_or(x, (j,))
        labels = labels[:j] + labels[j + 1 :]


def _sum_out(x: Any, labels: str, keep: set[str]) -> tuple[Any, str]:
    axes = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    if util.aval(x).dtype.kind == "b":
        x = lax.reduce_or(x, axes)
    else:
        x = lax.reduce_sum(x, axes)
    return x, "".join(c for c in labels if c in keep)


def _contract(a: Any, la: str, b: Any, lb: str, keep: set[str], pet: Any) -> tuple[Any, str]:
    shared = [c for c in la if c in lb]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    dims = (
        (tuple(la.index(c) for c in contract), tuple(lb.index(c) for c in contract)),
        (tuple(la.index(c) for c in batch), tuple(lb.index(c) for c in batch)),
    )
    out = _dot_general(a, b, dims, pet)
    labels = (
        "".join(batch)
        + "".join(c for c in la if c not in shared)
        + "".join(c for c in lb if c not in shared)
    )
    return out, labels


def _size(labels: str, sizes: dict[str, int]) -> int:
    return math.prod(sizes[c] for c in labels)


def _from_sublists(first: Any, rest: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    """NumPy's interleaved form einsum(op0, sublist0, op1, sublist1, ..., [out_sublist]) as a
    subscripts string and the operands: axis labels are ints in [0, 52) or Ellipsis."""
    args = (first, *rest)
    operands = args[0::2][: len(args) // 2]
    sublists = list(args[1::2])
    out = args[-1] if len(args) % 2 else None

    def letters(sub: Any) -> str:
        text = ""
        for s in sub:
            if s is Ellipsis:
                text += "..."
                continue
            k = operator.index(s)
            if not 0 <= k < 52:
                raise ValueError(f"einsum: subscript {k} is not in the range [0, 52)")
            text += chr(ord("a") + k) if k < 26 else chr(ord("A") + k - 26)
        return text

    spec = ",".join(letters(sub) for sub in sublists)
    if out is not None:
        spec += "->" + letters(out)
    return spec, tuple(operands)


def einsum(
    subscripts: Any,
    /,
    *operands: Any,
    out: None = None,
    optimize: Any = "auto",
    precision: Any = None,
    preferred_element_type: Any = None,
    _dot_general: Any = None,
    out_sharding: Any = None,
) -> Any:
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists(subscripts, operands)
    ops = util.promote_dtypes(*(x if util.is_scalar(x) else util.ensure_array(x) for x in operands))
    pet = None
    if preferred_element_type is not None:
        pet = dtypes.canonicalize(dtypes.dtype(preferred_element_type))
    terms, out_labels = _parse(subscripts, [util.aval(x).shape for x in ops])
    # sizes per label; size-1 dims broadcast against the others (as NumPy allows for '...')
    sizes: dict[str, int] = {}
    for t, x in zip(terms, ops):
        for c, d in zip(t, util.aval(x).shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
            elif d not in (1, sizes[c]):
                raise ValueError(
                    f"einsum: size of label {c!r} is {d} in one operand and {sizes[c]} in another"
                )
    items = []
    for t, x in zip(terms, ops):
        full = tuple(sizes[c] for c in t)
        if util.aval(x).shape != full:
            x = util.broadcast_to(x, full)
        items.append(_take_diagonal(x, t))
    while True:
        # sum out labels that appear in one operand only and not in the output
        for k, (x, t) in enumerate(items):
            others = set(out_labels).union(*(set(u) for j, (_, u) in enumerate(items) if j != k))
            items[k] = _sum_out(x, t, others)
        if len(items) == 1:
            break
        i, j = _pick_pair(items, sizes, out_labels)
        (a, la), (b, lb) = items[i], items[j]
        rest = [it for k, it in enumerate(items) if k not in (i, j)]
        keep = set(out_labels).union(*(set(u) for _, u in rest))
        items = [*rest, _contract(a, la, b, lb, keep, pet)]
    x, labels = items[0]
    x = lax.transpose(x, tuple(labels.index(c) for c in out_labels))
    if pet is not None and util.aval(x).dtype is not pet:
        x = util.convert(x, pet)
    return x


def _pick_pair(
    items: list[tuple[Any, str]], sizes: dict[str, int], out_labels: str
) -> tuple[int, int]:
    """Greedy order: the pair whose result is smallest (ties: the leftmost pair)."""
    best: tuple[int, int, int] | None = None
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            la, lb = items[i][1], items[j][1]
            others = set(out_labels).union(
                *(set(u) for k, (_, u) in enumerate(items) if k not in (i, j))
            )
            result = {c for c in la + lb if c not in la or c not in lb or c in others}
            cost = _size("".join(result), sizes)
            if best is None or cost < best[0]:
                best = (cost, i, j)
    assert best is not None
    return best[1], best[2]


def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix-vector products over the last two / last axes, batch dimensions broadcast."""
    util.check_arraylike("matvec", x1, x2)
    a, b = (util.ensure_array(x) for x in (x1, x2))
    if util.aval(a).ndim < 2 or util.aval(b).ndim < 1:
        raise ValueError(
            f"matvec: x1 must be at least 2-D and x2 at least 1-D; got shapes "
            f"{util.aval(a).shape} and {util.aval(b).shape}"
        )
    if util.aval(a).shape[-1] != util.aval(b).shape[-1]:
        raise ValueError(
            f"matvec: contracting dimensions differ: {util.aval(a).shape} and {util.aval(b).shape}"
        )
    out = matmul(a, lax.expand_dims(b, (util.aval(b).ndim,)))
    return lax.squeeze(out, (util.aval(out).ndim - 1,))


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Vector-matrix products (x1 conjugated)."""
    util.check_arraylike("matvec", x1, x2)
    a, b = (util.ensure_array(x) for x in (x1, x2))
    a = _conj(a)
    if util.aval(a).ndim < 1 or util.aval(b).ndim < 2:
        raise ValueError(
            f"vecmat: x1 must be at least 1-D and x2 at least 2-D; got shapes "
            f"{util.aval(a).shape} and {util.aval(b).shape}"
        )
    if util.aval(a).shape[-1] != util.aval(b).shape[-2]:
        raise ValueError(
            f"vecmat: contracting dimensions differ: {util.aval(a).shape} and {util.aval(b).shape}"
        )
    out = matmul(lax.expand_dims(a, (util.aval(a).ndim - 1,)), b)
    return lax.squeeze(out, (util.aval(out).ndim - 2,))


def einsum_path(
    subscripts: Any, /, *operands: Any, optimize: Any = "auto"
) -> tuple[list[Any], str]:
    """The pairwise contraction order `einsum` uses (greedy: smallest intermediate first), in
    opt_einsum's convention (each step names positions in the current operand list; the result
    goes last), with a short text report instead of opt_einsum's PathInfo object."""
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists(subscripts, operands)
    shapes = [tuple(getattr(x, "shape", ())) if not util.is_scalar(x) else () for x in operands]
    terms, out_labels = _parse(subscripts, shapes)
    sizes: dict[str, int] = {}
    for t, s in zip(terms, shapes):
        for c, d in zip(t, s):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
    items: list[tuple[Any, str]] = [(None, t) for t in terms]
    path: list[tuple[int, ...]] = []
    lines = [f"  Complete contraction:  {subscripts}"]
    if len(items) == 1:
        path.append((0,))
    while len(items) > 1:
        i, j = _pick_pair(items, sizes, out_labels)
        la, lb = items[i][1], items[j][1]
        rest = [it for k, it in enumerate(items) if k not in (i, j)]
        keep = set(out_labels).union(*(set(u) for _, u in rest))
        result = "".join(dict.fromkeys(c for c in la + lb if c in keep))
        lines.append(f"  {la},{lb}->{result}")
        path.append((i, j))
        items = [*rest, (None, result)]
    return path, "\n".join(lines)
