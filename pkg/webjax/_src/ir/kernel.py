"""Kernels: the unit of work every backend compiles.

A `Kernel` writes `out[i] = exp` for every flat output index `0 <= i < size`. `exp` reads its
inputs through `LOAD(slot)` nodes and holds at most one `REDUCE` (one reduction axis); whatever
surrounds the REDUCE is its epilogue. Kernels are values: equal kernels are `==` and hash the
same, so compiled executables are cached by them exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dtypes import DType
from . import scalar
from .exp import (
    Exp,
    add,
    binary,
    const,
    i32,
    idiv,
    idx,
    load,
    mod,
    mul,
    reduce,
    replace,
    ridx,
    where,
)
from .ops import Op


@dataclass(frozen=True)
class Kernel:
    exp: Exp
    size: int
    arg_dtypes: tuple[DType, ...]

    @property
    def out_dtype(self) -> DType:
        return self.exp.dtype

    @property
    def nargs(self) -> int:
        return len(self.arg_dtypes)

    @property
    def reduction(self) -> Exp | None:
        """The REDUCE node, if any."""
        for n in self.exp.toposort():
            if n.op is Op.REDUCE:
                return n
        return None

    def check(self) -> None:
        """Spec checker: raises AssertionError when the kernel breaks the IR contract."""
        reduces = [n for n in self.exp.toposort() if n.op is Op.REDUCE]
        assert len(reduces) <= 1, "at most one REDUCE per kernel"
        for n in self.exp.toposort():
            if n.op is Op.IDX:
                assert n.arg == self.size, f"IDX bound {n.arg} != kernel size {self.size}"
            if n.op is Op.LOAD:
                assert isinstance(n.arg, int) and 0 <= n.arg < self.nargs, n.arg
                assert self.arg_dtypes[n.arg] is n.dtype, (n.arg, n.dtype)
        if reduces:
            body_nodes = {id(n) for n in reduces[0].src[0].toposort()}
            for n in self.exp.toposort():
                if n.op is Op.RIDX:
                    assert id(n) in body_nodes, "RIDX outside the REDUCE body"
                    assert n.arg == reduces[0].arg[1], "RIDX bound != REDUCE size"
        else:
            assert not any(n.op is Op.RIDX for n in self.exp.toposort()), "RIDX without REDUCE"


def make_kernel(exp: Exp, size: int) -> tuple[Kernel, list[Any]]:
    """Turn an expression over buffer objects into a kernel over numbered slots.

    Buffers (any object with a `.dtype`) are numbered by first use in dependency order, so the
    same computation on different buffers gives the same (cached) kernel.
    """
    buffers: list[Any] = []
    slots: dict[int, int] = {}
    memo: dict[int, Exp] = {}
    for node in exp.toposort():
        src = tuple(memo[id(s)] for s in node.src)
        if node.op is Op.LOAD and not isinstance(node.arg, int):
            slot = slots.setdefault(id(node.arg), len(buffers))
            if slot == len(buffers):
                buffers.append(node.arg)
            memo[id(node)] = load(slot, src[0], node.dtype)
        elif all(a is b for a, b in zip(src, node.src, strict=True)):
            memo[id(node)] = node
        else:
            memo[id(node)] = Exp.make(node.op, node.dtype, src, node.arg)
    return Kernel(memo[id(exp)], size, tuple(b.dtype for b in buffers)), buffers


def split_reduction(kernel: Kernel, parts: int) -> tuple[Kernel, Kernel]:
    """The kernel as two: partial reductions, then the reduction of the partials.

    The first kernel writes `size * parts` values, `parts` per output in a row: partial `p` of
    output `i` combines reduction indices `[p * chunk, (p + 1) * chunk)` (the last chunk short,
    padded with the combiner's identity). The second kernel takes the partials as one more
    input (slot `nargs`), combines each output's `parts` values in order and applies the
    epilogue. For backends whose loops must stay short (a fragment shader's single loop).
    """
    red = kernel.reduction
    assert red is not None, "split_reduction needs a kernel with a REDUCE"
    combine, rsize = red.arg
    chunk = -(-rsize // parts)
    flat = idx(kernel.size * parts)
    out_i, part = idiv(flat, parts), mod(flat, parts)
    r = add(mul(part, chunk), ridx(chunk))
    body = replace(red.src[0], {idx(kernel.size): out_i, ridx(rsize): r})
    if chunk * parts != rsize:
        ident = const(scalar.identity(combine, red.dtype), red.dtype)
        body = where(binary(Op.CMPLT, r, i32(rsize)), body, ident)
    first = Kernel(reduce(combine, body, chunk), kernel.size * parts, kernel.arg_dtypes)
    slot = kernel.nargs
    out = idx(kernel.size)
    partial = load(slot, add(mul(out, parts), ridx(parts)), red.dtype)
    second = replace(kernel.exp, {red: reduce(combine, partial, parts)})
    return first, Kernel(second, kernel.size, (*kernel.arg_dtypes, red.dtype))
