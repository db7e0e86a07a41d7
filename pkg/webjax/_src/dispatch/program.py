"""Compiled jit programs: a jaxpr lowered once into a list of kernels.

The first call of a jitted function on a device runs its jaxpr *symbolically*: the inputs are
placeholder buffers, so eager lowering builds (and fuses) the kernel graph without running
anything. The pending kernels reachable from the outputs, in dependency order, are the
program; later calls only instantiate those kernels on the new input buffers (no lowering,
no tracing), still lazily. Jaxprs that need values while running (a `cond` index, a
`while_loop` predicate, a debug callback) cannot be precompiled and run eagerly instead.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from .. import config as _config
from .. import core
from ..core import ClosedJaxpr
from ..ir import exp as E
from ..ir.kernel import Kernel
from ..ir.ops import Op
from ..runtime.backend import Device
from . import array as array_mod
from . import lazy
from .array import Array
from .lazy import LazyBuffer, NeedsValues
from .lowering import ELEMENTWISE, MATERIALIZE_OPERANDS, PERMUTATIONS, is_view


class Placeholder(LazyBuffer):
    """An input of a program being compiled: it has no data."""

    __slots__ = ("position",)

    def __init__(self, device: Device, aval: Any, position: int) -> None:
        super().__init__(device, *array_mod.storage(aval))
        self.position = position


# A step input: ("arg", position) | ("step", index) | ("const", LazyBuffer)
Ref = tuple[str, Any]


class Program:
    def __init__(
        self, steps: list[tuple[Kernel, list[Ref]]], outputs: list[Any], arg_nbytes: list[int]
    ) -> None:
        self.steps = steps
        # per output: ("step", i, aval) | ("arg", position, aval) | ("exp", exp, aval)
        self.outputs = outputs
        self.arg_nbytes = arg_nbytes

        self._plans: dict[tuple[tuple[int, ...], bool], dict[int, int]] = {}

    def donation_plan(self, donate: tuple[int, ...], alias_ok: bool) -> dict[int, int]:
        """For donated argument positions: the step whose output may be written into that
        argument's buffer. The step must have the same byte size, come after every other step
        that reads the argument, and read it (if at all) only at the element it writes, where
        the backend lets a kernel write a buffer it reads (`alias_ok`). Program outputs are
        preferred; arguments returned as outputs keep their buffers."""
        key = (donate, alias_ok)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        plan = {}
        returned = {where for kind, where, _ in self.outputs if kind == "arg"}
        out_steps = {where for kind, where, _ in self.outputs if kind == "step"}
        taken: set[int] = set()
        for p in donate:
            if p in returned:
                continue
            reads = [i for i, (_, refs) in enumerate(self.steps) if ("arg", p) in refs]
            fits = []
            for i, (kernel, refs) in enumerate(self.steps):
                if i in taken or kernel.size * kernel.out_dtype.itemsize != self.arg_nbytes[p]:
                    continue
                if any(r > i for r in reads):
                    continue
                if i in reads and not (
                    alias_ok and _reads_in_place(kernel, refs.index(("arg", p)))
                ):
                    continue
                fits.append(i)
            if fits:
                best = next((i for i in reversed(fits) if i in out_steps), fits[-1])
                plan[p] = best
                taken.add(best)
        self._plans[key] = plan
        return plan

    def run(self, args: list[Array], device: Device, donate: tuple[int, ...] = ()) -> list[Array]:
        bufs: list[LazyBuffer | None] = []
        arg_bufs = [a._buffer() for a in args]
        into: dict[int, int] = {}  # step -> donated argument position
        if donate:
            alias_ok = getattr(device.backend, "kernels_may_alias", False)
            for p, step in self.donation_plan(donate, alias_ok).items():
                if _sole_owner(args[p], arg_bufs[p]):
                    into[step] = p
        readers: dict[int, list[LazyBuffer]] = {}
        for i, (kernel, refs) in enumerate(self.steps):
            inputs = [_resolve(r, arg_bufs, bufs) for r in refs]
            lb = LazyBuffer(device, kernel.out_dtype, kernel.size)
            lb.kernel = kernel
            lb.inputs = inputs
            bufs.append(lb)
            for kind, where in refs:
                if kind == "arg" and where in donate:
                    readers.setdefault(where, []).append(lb)
            donated = into.get(i)
            if donated is not None:
                donor = arg_bufs[donated]
                assert donor is not None
                lb.donor = (donor, readers.pop(donated, []))
        outs = []
        for kind, where, aval in self.outputs:
            if kind == "step":
                out = bufs[where]
                assert out is not None
                outs.append(Array(aval, device, lazy.load_all(out)))
            elif kind == "arg":
                outs.append(Array(aval, device, args[where]._exp))
            elif kind == "const":
                outs.append(Array(aval, device, lazy.load_all(where)))
            else:
                outs.append(Array(aval, device, where))
        return outs


def _reads_in_place(kernel: Kernel, slot: int) -> bool:
    """Whether `kernel` reads input `slot` only at the element it writes (and is not a
    reduction, whose codegen may use its output as an accumulator)."""
    if not isinstance(kernel, Kernel):  # a fused routine (ir/attention.py): never in place
        return False
    for n in kernel.exp.toposort():
        if n.op is Op.REDUCE:
            return False
        if n.op is Op.LOAD and n.arg == slot and n.src[0] is not E.idx(kernel.size):
            return False
    return True


def _sole_owner(arg: Array, lb: LazyBuffer | None) -> bool:
    """Whether `arg` is the only holder of `lb` (no other array, view or pending kernel reads
    it), so that its memory may be overwritten once the program's own reads are done.

    Counted by reference: `lb` is held by the expression reading it in full (arg._exp), the
    caller's list and the call itself; that expression only by `arg` and the call."""
    if lb is None or arg._exp is None or arg._exp.arg is not lb:
        return False
    return sys.getrefcount(lb) <= 4 and sys.getrefcount(arg._exp) <= 3


def materialize(x: Any) -> Any:
    """A jit output as its own buffer (pending), like the compiled path gives: outputs are
    not left as expressions that later steps would recompute."""
    if isinstance(x, Array) and x._exp is not None and x._exp.info[1]:
        x._buffer()
    return x


def _resolve(
    ref: Ref, arg_bufs: list[LazyBuffer | None], bufs: list[LazyBuffer | None]
) -> LazyBuffer:
    kind, where = ref
    if kind == "arg":
        lb = arg_bufs[where]
    elif kind == "step":
        lb = bufs[where]
    else:
        lb = where
    assert lb is not None
    return lb


_CACHE: dict[tuple[int, Device, tuple[Any, ...]], Program | None] = {}
_KEEP: dict[int, ClosedJaxpr] = {}  # keeps cached jaxprs alive so their ids stay unique


_compile_log = logging.getLogger("jax._src.interpreters.pxla")
_dispatch_log = logging.getLogger("jax._src.dispatch")


def compiling() -> bool:
    """Whether a program is being compiled (its arrays are symbolic: they hold no values)."""
    return lazy.fuse_epilogues


def run_jaxpr(
    closed: ClosedJaxpr, args: list[Any], donate: tuple[int, ...] = (), name: str = "jaxpr"
) -> list[Any] | None:
    """Run `closed` on concrete arrays through its compiled program; None if it cannot be
    compiled (the caller then evaluates it eagerly). Results may be written into the buffers
    of the `donate` argument positions (the caller deletes those arrays)."""
    if not args or not all(isinstance(a, Array) for a in args):
        return None
    device = args[0]._device
    if any(a._device != device or a._deleted for a in args):
        return None
    key = (id(closed), device, tuple(a.aval for a in args))
    if key not in _CACHE:
        _KEEP[id(closed)] = closed
        log = _config.log_compiles.value and not compiling()
        if log:
            _compile_log.warning(
                "Compiling jit(%s) with global shapes and types %r. Device: %s.",
                name,
                tuple(a.aval for a in args),
                device,
            )
        start = time.perf_counter()
        _CACHE[key] = _compile(closed, args, device)
        if log:
            took = time.perf_counter() - start
            what = "runs eagerly (it needs values while running)" if _CACHE[key] is None else ""
            _dispatch_log.warning(
                "Finished webjax compilation of jit(%s) in %.9f sec%s",
                name,
                took,
                f"; it {what}" if what else "",
            )
    program = _CACHE[key]
    if program is None:
        return None
    return program.run(args, device, donate)


# Host callbacks need real values at every call (a pure one too: compiling would call it on
# symbolic arrays first), so programs holding one run eagerly.
_EFFECTS = frozenset({"debug_callback", "io_callback", "pure_callback"})
# Calls whose body is simply evaluated: inline them so uses inside are counted too.
_TRANSPARENT = {"jit": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
                "checkpoint": "jaxpr"}  # fmt: skip


def _fuses_into(name: str, transposes: bool) -> bool:
    """Whether a reduction may stay an expression inside its single use `name` (through a
    transpose only where the device's products write any layout: `transposes`)."""
    if name == "transpose":
        return transposes
    return name in ELEMENTWISE or name in _TRANSPARENT or name in PERMUTATIONS


def _eval_fusing(
    jaxpr: Any, consts: list[Any], args: list[Any], transposes: bool = True
) -> list[Any]:
    """eval_jaxpr that keeps a reduction fused into its consumer only when that consumer is
    its single use, elementwise or a permutation (lowering.PERMUTATIONS: its consumers are
    then settled the same way; a transpose only with `transposes`, the device backend's
    `fuses_transposed_reductions`); otherwise the reduction becomes its own kernel."""
    uses: dict[int, list[str]] = {}
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if isinstance(v, core.Var):
                uses.setdefault(id(v), []).append(eqn.primitive.name)
    for v in jaxpr.outvars:
        if isinstance(v, core.Var):
            uses.setdefault(id(v), []).append("output")
    env: dict[int, Any] = {}

    def read(x: Any) -> Any:
        return x.val if isinstance(x, core.Literal) else env[id(x)]

    for v, c in zip(jaxpr.constvars, consts, strict=True):
        env[id(v)] = c

    def settle(v: Any, o: Any) -> None:
        u = uses.get(id(v), [])
        fused = isinstance(o, Array) and o._exp is not None and o._exp.info[2]
        if fused and (len(u) != 1 or not _fuses_into(u[0], transposes)):
            o._buffer()  # shared or re-indexed: compute the reduction once
        elif (
            len(u) > 1
            and isinstance(o, Array)
            and o._exp is not None
            and any(name in MATERIALIZE_OPERANDS for name in u)
            and not is_view(o._exp)
        ):
            # a contraction copies a computed operand into a buffer anyway: compute it once
            # there, and let its other uses read that buffer instead of recomputing it
            o._buffer()
        env[id(v)] = o

    for v, a in zip(jaxpr.invars, args, strict=True):
        settle(v, a)
    for eqn in jaxpr.eqns:
        ins = [read(x) for x in eqn.invars]
        body = _TRANSPARENT.get(eqn.primitive.name)
        if body is not None:
            inner = eqn.params[body]
            outs = _eval_fusing(inner.jaxpr, inner.consts, ins, transposes)
        else:
            outs = eqn.primitive.bind(*ins, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
        for v, o in zip(eqn.outvars, outs, strict=True):
            settle(v, o)
    return [read(v) for v in jaxpr.outvars]


def _has_effects(jaxpr: Any) -> bool:
    """Callbacks must see real values at every call: such programs run eagerly."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in _EFFECTS:
            return True
        for v in eqn.params.values():
            subs = v if isinstance(v, tuple) else (v,)
            for sub in subs:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and _has_effects(inner):
                    return True
    return False


def _compile(closed: ClosedJaxpr, args: list[Array], device: Device) -> Program | None:
    if _has_effects(closed.jaxpr):
        return None
    placeholders = [Placeholder(device, a.aval, i) for i, a in enumerate(args)]
    sym = [
        Array(a.aval, device, lazy.load_all(p) if a.aval.size else None)
        for a, p in zip(args, placeholders, strict=True)
    ]
    outer = lazy.fuse_epilogues  # programs compile inside programs (library composites)
    lazy.fuse_epilogues = True
    try:
        transposes = getattr(device.backend, "fuses_transposed_reductions", True)
        outs = _eval_fusing(closed.jaxpr, closed.consts, sym, transposes)
    except NeedsValues:
        return None
    finally:
        lazy.fuse_epilogues = outer
    if not all(isinstance(o, Array) for o in outs):
        return None
    step_of: dict[int, int] = {}
    steps: list[tuple[Kernel, list[Ref]]] = []
    by_id = {id(p): p.position for p in placeholders}

    alive: list[LazyBuffer] = []  # ids below must stay unique: nothing seen may be freed

    def ref(lb: LazyBuffer) -> Ref:
        """The step (or argument, or constant) producing `lb`, appending the steps it needs
        in dependency order (iteratively: programs can be thousands of kernels deep)."""
        stack: list[tuple[LazyBuffer, bool]] = [(lb, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in by_id or id(node) in step_of or node.kernel is None:
                continue
            if not expanded:
                stack.append((node, True))
                stack.extend((i, False) for i in reversed(node.inputs))
                continue
            alive.append(node)
            steps.append((node.kernel, [leaf(i) for i in node.inputs]))
            step_of[id(node)] = len(steps) - 1
        return leaf(lb)

    def leaf(lb: LazyBuffer) -> Ref:
        alive.append(lb)
        if id(lb) in by_id:
            return ("arg", by_id[id(lb)])
        if id(lb) in step_of:
            return ("step", step_of[id(lb)])
        assert lb.kernel is None
        return ("const", lb)  # realized data captured by the program (jaxpr consts)

    outputs: list[Any] = []
    for o in outs:
        e = o._exp
        if e is None or not e.info[1]:  # empty, or a constant: no buffers involved
            outputs.append(("exp", e, o.aval))
            continue
        n = array_mod.storage(o.aval)[1]
        if e.op is Op.LOAD and e.src[0] is E.idx(n) and id(e.arg) in by_id:
            outputs.append(("arg", by_id[id(e.arg)], o.aval))
            continue
        lb = lazy.as_buffer(e, n, device)
        kind, where = ref(lb)
        outputs.append((kind, where, o.aval))
    return Program(steps, outputs, [a.aval.size * a.aval.dtype.itemsize for a in args])
