"""The stages of a jitted function: `jit(f).trace(*args)` -> Traced, `.lower()` -> Lowered,
`.compile()` -> Compiled, callable on arguments of the traced types.

webjax compiles a jaxpr into kernels on first call; the stages are views of that one staged
program: `as_text()` is the jaxpr, `cost_analysis()` webjax's count of it (one flop per output
element of an arithmetic equation, 2·m·n·k for a matrix product; not XLA's figures).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from . import core
from .core import ClosedJaxpr, ShapedArray
from .tree_util import PyTreeDef, tree_flatten, tree_unflatten

_STRUCTURAL = frozenset({
    "reshape", "broadcast_in_dim", "transpose", "squeeze", "expand_dims", "slice",
    "dynamic_slice", "concatenate", "pad", "rev", "convert_element_type", "copy", "iota",
})  # fmt: skip


@runtime_checkable
class Wrapped(Protocol):
    """A function transformed by `jit`: callable, traceable and lowerable."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Traced: ...

    def lower(self, *args: Any, **kwargs: Any) -> Lowered: ...


class ArgInfo:
    """An argument's type as traced, and whether it is donated."""

    def __init__(self, aval: ShapedArray, donated: bool) -> None:
        self._aval = aval
        self.donated = donated

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        return self._aval.dtype

    def __repr__(self) -> str:
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class Stage:
    """What every stage knows: the traced program and its argument and result structure."""

    def __init__(
        self,
        closed: ClosedJaxpr,
        in_tree: PyTreeDef,
        out_tree: PyTreeDef,
        name: str,
        donated: tuple[int, ...],
        run: Callable[[list[Any]], list[Any]],
        out_struct: Callable[[ShapedArray], Any],
    ) -> None:
        self._closed = closed
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.fun_name = name
        self.name = name
        self.donate_argnums = donated
        self._run = run
        self._out_struct = out_struct

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._closed

    @property
    def in_avals(self) -> Any:
        return tree_unflatten(self.in_tree, list(self._closed.in_avals))

    @property
    def out_avals(self) -> Any:
        return tree_unflatten(self.out_tree, list(self._closed.out_avals))

    @property
    def args_info(self) -> Any:
        infos = [ArgInfo(a, i in self.donate_argnums) for i, a in enumerate(self._closed.in_avals)]
        return tree_unflatten(self.in_tree, infos)

    @property
    def out_info(self) -> Any:
        return tree_unflatten(self.out_tree, [self._out_struct(a) for a in self._closed.out_avals])

    def _next(self, cls: type) -> Any:
        return cls(
            self._closed,
            self.in_tree,
            self.out_tree,
            self.fun_name,
            self.donate_argnums,
            self._run,
            self._out_struct,
        )


class Traced(Stage):
    def lower(self, *, lowering_platforms: Any = None, _private_parameters: Any = None) -> Lowered:
        return self._next(Lowered)


class Lowered(Stage):
    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The staged program as text (webjax's jaxpr; JAX prints StableHLO)."""
        return str(self._closed)

    def compiler_ir(self, dialect: str | None = None) -> ClosedJaxpr:
        """The program in `dialect`: webjax's one is "jaxpr" (its kernels are generated from
        the jaxpr, never through XLA), so "stablehlo" (JAX's default) and "hlo" raise."""
        if dialect != "jaxpr":
            asked = "stablehlo" if dialect is None else dialect
            raise NotImplementedError(
                f"webjax does not lower through XLA, so there is no {asked} module; "
                "compiler_ir(dialect='jaxpr') and as_text() give the staged jaxpr"
            )
        return self._closed

    def compile(self, compiler_options: Any = None) -> Compiled:
        return self._next(Compiled)

    def cost_analysis(self) -> dict[str, float]:
        return _cost(self._closed)


class Compiled(Stage):
    def as_text(self) -> str:
        return str(self._closed)

    def cost_analysis(self) -> dict[str, float]:
        return _cost(self._closed)

    def memory_analysis(self) -> None:
        return None

    @property
    def input_shardings(self) -> Any:
        return tree_unflatten(self.in_tree, [None] * self.in_tree.num_leaves)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was "
                f"called with: compiled with {self.in_tree}, called with {tree}"
            )
        avals = [core.get_aval(x) for x in flat]
        bad = [
            f"Argument {i} compiled with {want.str_short()} and called with {got.str_short()}"
            for i, (want, got) in enumerate(zip(self._closed.in_avals, avals, strict=True))
            if (want.shape, want.dtype) != (got.shape, got.dtype)
        ]
        if bad:
            raise TypeError(
                "Argument types differ from the types for which this computation was compiled. "
                "The mismatches are:\n" + "\n".join(bad)
            )
        return tree_unflatten(self.out_tree, self._run(flat))

    call = __call__


def _cost(closed: ClosedJaxpr) -> dict[str, float]:
    flops = 0
    for eqn in closed.jaxpr.eqns:
        name = eqn.primitive.name
        if name in _STRUCTURAL:
            continue
        out = sum(math.prod(v.aval.shape) for v in eqn.outvars)
        if name == "dot_general":
            (lc, _), _ = eqn.params["dimension_numbers"]
            lhs = eqn.invars[0].aval.shape
            out *= 2 * math.prod(lhs[d] for d in lc)
        flops += out
    touched = [*closed.jaxpr.invars, *closed.jaxpr.outvars]
    nbytes = sum(
        math.prod(v.aval.shape) * v.aval.dtype.itemsize for v in touched if hasattr(v, "aval")
    )
    return {"flops": float(flops), "bytes accessed": float(nbytes)}


def _plain_struct(aval: ShapedArray) -> Any:
    return aval


# What `out_info` shows for a result type: the api layer installs ShapeDtypeStruct.
out_struct: list[Callable[[ShapedArray], Any]] = [_plain_struct]


__all__ = ["ArgInfo", "Compiled", "Lowered", "Stage", "Traced", "Wrapped"]
