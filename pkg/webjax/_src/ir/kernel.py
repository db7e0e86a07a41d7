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
from .exp import Exp, load
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
