"""Recognising matrix products in kernels, for the codegens that tile them (wgsl, glsl).

`match(kernel, min_dim, min_macs)` finds a (batched) matrix product in a kernel:

    out[i] = epilogue(i, REDUCE(ADD, MUL(LOAD(a, ia), LOAD(b, ib)), K))

where, after writing the flat output index i in a mixed radix of "digits" (the cuts that the
kernel's own `//` and `%` by constants make), both load indices are affine in the digits and in
the reduction index r. Digits that only `a` reads are rows (M), digits that only `b` reads are
columns (N), the rest are batch dimensions; the strides are arbitrary (transposed operands and
outputs included). The Plan gives the extents and every stride: output element (batch digits
b, row m, column n) is at `sum(so_batch * b) + so_m * m + so_n * n`, and reads
`a.base + sum(a.s_batch * b) + a.s_mn * m + a.s_k * r` (b likewise, with n).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from .. import dtypes as dt
from .exp import Exp
from .kernel import Kernel
from .ops import Op

__all__ = ["Operand", "Plan", "match"]


@dataclass(frozen=True)
class Operand:
    slot: int
    base: int
    s_mn: int  # stride along its free dim (rows for a, columns for b)
    s_k: int
    s_batch: tuple[int, ...]


@dataclass(frozen=True)
class Plan:
    m: int
    n: int
    k: int
    batch: tuple[int, ...]  # batch digit ranges (least significant first)
    a: Operand
    b: Operand
    so_m: int
    so_n: int
    so_batch: tuple[int, ...]


_R = -1  # the reduction index's symbol; digits are 0..nd-1; None keys the constant
Aff = dict[Any, int]


def _rng(f: Aff, ranges: list[int], rsize: int) -> tuple[int, int]:
    lo = hi = f.get(None, 0)
    for s, c in f.items():
        if s is None:
            continue
        top = (rsize if s == _R else ranges[s]) - 1
        lo += min(0, c * top)
        hi += max(0, c * top)
    return lo, hi


def _affine(e: Exp, idx_form: Aff, ranges: list[int], rsize: int, memo: dict[int, Any]) -> Any:
    """e as {symbol: coefficient} (exactly, for every value of the symbols), or None."""
    if id(e) in memo:
        return memo[id(e)]
    out: Aff | None = None
    op = e.op
    if e.dtype is not dt.int32:
        out = None
    elif op is Op.CONST:
        out = {None: int(e.arg)}
    elif op is Op.IDX:
        out = dict(idx_form)
    elif op is Op.RIDX:
        out = {_R: 1}
    elif op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD):
        a = _affine(e.src[0], idx_form, ranges, rsize, memo)
        b = _affine(e.src[1], idx_form, ranges, rsize, memo)
        if a is not None and b is not None:
            out = _combine(op, a, b, ranges, rsize)
    memo[id(e)] = out
    return out


def _combine(op: Op, a: Aff, b: Aff, ranges: list[int], rsize: int) -> Aff | None:
    if op in (Op.ADD, Op.SUB):
        sign = 1 if op is Op.ADD else -1
        out = dict(a)
        for s, c in b.items():
            out[s] = out.get(s, 0) + sign * c
        return {s: c for s, c in out.items() if c}
    bconst = set(b) <= {None}
    if op is Op.MUL:
        if not bconst:
            if set(a) <= {None}:
                a, b = b, a
            else:
                return None
        v = b.get(None, 0)
        return {s: c * v for s, c in a.items() if c * v}
    if not bconst:
        return None
    k = b.get(None, 0)
    if k <= 0 or _rng(a, ranges, rsize)[0] < 0:
        return None  # C-style division of possibly negative values: not affine
    q0, r0 = divmod(a.get(None, 0), k)
    whole = {s: c // k for s, c in a.items() if s is not None and c % k == 0}
    rest = {s: c for s, c in a.items() if s is not None and c % k != 0}
    whole[None], rest[None] = q0, r0
    lo, hi = _rng(rest, ranges, rsize)
    if lo < 0 or hi >= k:
        return None
    res = whole if op is Op.DIV else rest
    return {s: c for s, c in res.items() if c}


def _chains(consts: list[int], size: int) -> list[list[int]]:
    """Candidate digit cuts: chains of divisors of `size`, each dividing the next, longest first."""
    pool = set(consts) | {a * b for a, b in itertools.combinations(consts, 2)}
    cands = sorted(c for c in pool if 1 < c < size and size % c == 0)
    out: list[list[int]] = []
    for n in range(min(len(cands), 6), -1, -1):
        for sub in itertools.combinations(cands, n):
            if all(sub[j + 1] % sub[j] == 0 for j in range(len(sub) - 1)):
                out.append(list(sub))
            if len(out) > 64:
                return out
    return out


def _merge(digits: list[int], coef: dict[int, int], ostride: list[int], ranges: list[int]) -> Any:
    """Several digits that behave as one (row-major) dimension: (extent, own stride, out stride)."""
    if not digits:
        return (1, 0, 0)
    ds = sorted(digits, key=lambda d: ostride[d])
    for lo, hi in itertools.pairwise(ds):
        if ostride[hi] != ostride[lo] * ranges[lo] or coef[hi] != coef[lo] * ranges[lo]:
            return None
    ext = 1
    for d in ds:
        ext *= ranges[d]
    return (ext, coef[ds[0]], ostride[ds[0]])


def _longest_run(
    digits: list[int], coef: dict[int, int], ostride: list[int], ranges: list[int]
) -> tuple[list[int], list[int]]:
    """(run, rest): the digits' longest chain that `_merge` takes as one dimension (the
    largest extent), and the others."""
    ds = sorted(digits, key=lambda d: ostride[d])
    best: list[int] = []
    best_ext = 0
    for start in range(len(ds)):
        run, ext = [ds[start]], ranges[ds[start]]
        for d in ds[start + 1 :]:
            lo = run[-1]
            if ostride[d] != ostride[lo] * ranges[lo] or coef[d] != coef[lo] * ranges[lo]:
                break
            run.append(d)
            ext *= ranges[d]
        if ext > best_ext:
            best, best_ext = run, ext
    return best, [d for d in digits if d not in best]


def match(kernel: Kernel, min_dim: int = 1, min_macs: int = 0) -> Plan | None:
    """A Plan when the kernel is a float32 matrix product with at least `min_dim` rows and
    columns and `min_macs` multiply-adds, else None."""
    red = kernel.reduction
    if red is None or red.arg[0] is not Op.ADD or red.dtype is not dt.float32:
        return None
    if kernel.out_dtype.itemsize != 4:
        return None
    body = red.src[0]
    if body.op is not Op.MUL or any(
        s.op is not Op.LOAD or s.dtype is not dt.float32 for s in body.src
    ):
        return None
    rsize = red.arg[1]
    size = kernel.size
    la, lb = body.src
    if la is lb:
        return None  # a sum of squares, not a product of two matrices
    consts: list[int] = []
    nodes = kernel.exp.toposort()
    has_idx: dict[int, bool] = {}
    for n in nodes:
        has_idx[id(n)] = n.op is Op.IDX or any(has_idx[id(s)] for s in n.src)
        if n.op in (Op.DIV, Op.MOD) and n.src[1].is_const and has_idx[id(n.src[0])]:
            consts.append(int(n.src[1].arg))
    for cuts in _chains(consts, size):
        bounds = [1, *cuts, size]
        ranges = [bounds[j + 1] // bounds[j] for j in range(len(bounds) - 1)]
        ostride = bounds[:-1]
        idx_form: Aff = {j: ostride[j] for j in range(len(ranges))}
        memo: dict[int, Any] = {}
        fa = _affine(la.src[0], idx_form, ranges, rsize, memo)
        fb = _affine(lb.src[0], idx_form, ranges, rsize, memo)
        if fa is None or fb is None:
            continue
        plan = _classify(fa, fb, la.arg, lb.arg, ranges, ostride, rsize)
        if plan is None or (plan.m == 1 and plan.n == 1):
            continue
        if plan.m < min_dim or plan.n < min_dim or plan.m * plan.n * plan.k < min_macs:
            return None
        return plan
    return None


def _classify(
    fa: Aff, fb: Aff, sa: int, sb: int, ranges: list[int], ostride: list[int], rsize: int
) -> Plan | None:
    rows, cols, batch = [], [], []
    for d in range(len(ranges)):
        if ranges[d] == 1:
            continue
        ca, cb = fa.get(d, 0), fb.get(d, 0)
        if ca and not cb:
            rows.append(d)
        elif cb and not ca:
            cols.append(d)
        else:
            batch.append(d)
    # digits of one operand that do not form one row-major dimension (a convolution's batch
    # digit, read by the patches only): the longest run is the dimension, the rest batch
    rows, rest_r = _longest_run(rows, fa, ostride, ranges)
    cols, rest_c = _longest_run(cols, fb, ostride, ranges)
    batch = sorted(batch + rest_r + rest_c)
    mr = _merge(rows, fa, ostride, ranges)
    mc = _merge(cols, fb, ostride, ranges)
    if mr is None or mc is None:
        return None
    a = Operand(sa, fa.get(None, 0), mr[1], fa.get(_R, 0), tuple(fa.get(d, 0) for d in batch))
    b = Operand(sb, fb.get(None, 0), mc[1], fb.get(_R, 0), tuple(fb.get(d, 0) for d in batch))
    return Plan(
        mr[0],
        mc[0],
        rsize,
        tuple(ranges[d] for d in batch),
        a,
        b,
        mr[2],
        mc[2],
        tuple(ostride[d] for d in batch),
    )
