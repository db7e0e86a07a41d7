"""Lazy device buffers and the eager scheduler: where arrays meet kernels.

An eager array's value is a kernel-IR expression over its flat index (`IDX`), whose leaves
load from `LazyBuffer`s. Elementwise and movement primitives only compose expressions; a buffer
is *scheduled* (becomes a pending kernel) when a reduction needs its own kernel or an
expression grows too large, and *executed* only when someone reads it. Work whose result is
dropped before a read never runs.
"""

from __future__ import annotations

import collections
import contextlib
import struct
from typing import Any

from .. import config as _config
from .. import profiler
from ..dtypes import STRUCT_FORMATS, DType, carrier
from ..ir import exp as E
from ..ir.exp import Exp
from ..ir.kernel import Kernel, make_kernel
from ..ir.ops import Op
from ..runtime.backend import Backend, Device

# Schedule an expression as its own kernel past this many nodes (bounds recompilation and
# recomputation in long eager chains).
MAX_FUSED_NODES = 256


# Device buffers currently held, per platform (tests check that loops do not leak).
live_buffers: collections.Counter[str] = collections.Counter()


class NeedsValues(Exception):
    """Data was needed from a buffer that has none (an input of a program being compiled)."""


class LazyBuffer:
    """A device buffer that exists (`handle`) or will once its kernel runs (`kernel`)."""

    __slots__ = ("device", "dtype", "size", "handle", "kernel", "inputs", "donor", "__weakref__")

    def __init__(self, device: Device, dtype: DType, size: int) -> None:
        self.device = device
        self.dtype = dtype
        self.size = size
        self.handle: Any = None
        self.kernel: Kernel | None = None
        self.inputs: list[LazyBuffer] = []
        # (donated buffer, the pending kernels that read it): this kernel may write into the
        # donated buffer's memory once those have run (jit with donate_argnums)
        self.donor: tuple[LazyBuffer, list[LazyBuffer]] | None = None

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def backend(self) -> Backend:
        return self.device.backend

    @property
    def realized(self) -> bool:
        return self.handle is not None

    def __del__(self) -> None:
        # (a KeyboardInterrupt, the REPL's Stop, may land inside __init__ before `handle` is
        # set: the half-made buffer holds nothing to free)
        handle = getattr(self, "handle", None)
        if handle is not None:
            self.handle = None
            live_buffers[self.device.platform] -= 1
            # At interpreter shutdown there may be nothing left to free into.
            with contextlib.suppress(Exception):
                self.device.backend.free(handle)

    def delete(self) -> None:
        self.__del__()
        self.kernel = None
        self.inputs = []


def from_bytes(device: Device, dtype: DType, size: int, data: bytes | memoryview) -> LazyBuffer:
    lb = LazyBuffer(device, dtype, size)
    backend = device.backend
    if not backend.supports_dtype(dtype):
        raise TypeError(f"The {device.platform} backend does not support dtype {dtype.name}.")
    lb.handle = backend.malloc(lb.nbytes)
    live_buffers[device.platform] += 1
    if lb.nbytes:
        backend.write(lb.handle, data)
    return lb


def _buffers(exp: Exp) -> frozenset[int]:
    return exp.buffer_ids


def _split_inputs(exp: Exp, size: int, device: Device, limit: int) -> Exp:
    """Materialize sub-expressions until the kernel reads at most `limit` buffers.

    Any sub-expression outside a reduction body is itself a value over the same flat index,
    so it can become its own kernel; the largest one that fits goes first."""
    while len(_buffers(exp)) > limit:
        best: Exp | None = None
        best_n = 0
        for node in exp.toposort():
            if node is exp or node.op in (Op.LOAD, Op.CONST, Op.IDX, Op.RIDX, Op.REDUCE):
                continue
            if any(n.op in (Op.RIDX, Op.REDUCE) for n in node.toposort()):
                continue
            n = len(_buffers(node))
            if best_n < n <= limit:
                best, best_n = node, n
        if best is None or best_n < 2:
            raise ValueError(
                f"a kernel would read {len(_buffers(exp))} buffers; the {device.platform} "
                f"device allows {limit} and the expression cannot be split further"
            )
        part = schedule(best, size, device)
        exp = E.replace(exp, {best: load_all(part)})
    return exp


def schedule(exp: Exp, size: int, device: Device) -> LazyBuffer:
    """Turn an expression into a pending kernel writing a new buffer (nothing runs yet)."""
    limit = device.backend.max_args
    if limit < (1 << 20) and len(_buffers(exp)) > limit:
        exp = _split_inputs(exp, size, device, limit)
    kernel, inputs = make_kernel(exp, size)
    backend = device.backend
    if not backend.supports_dtype(kernel.out_dtype):
        raise TypeError(
            f"The {device.platform} backend does not support dtype {kernel.out_dtype.name}."
        )
    lb = LazyBuffer(device, exp.dtype, size)
    lb.kernel = kernel
    lb.inputs = inputs
    return lb


def load_all(lb: LazyBuffer) -> Exp:
    """The expression reading every element of `lb` in order."""
    return E.load(lb, E.idx(lb.size), lb.dtype)


def as_buffer(exp: Exp, size: int, device: Device) -> LazyBuffer:
    """The buffer holding `exp`: the one it already reads in full, or a newly scheduled one."""
    if exp.op is Op.LOAD and isinstance(exp.arg, LazyBuffer):
        lb = exp.arg
        if lb.size == size and exp.src[0] is E.idx(size):
            return lb
    return schedule(exp, size, device)


# While a jit program is compiled, reductions may stay expressions so that a single-use
# elementwise epilogue fuses into their kernel (the program compiler knows the uses).
fuse_epilogues = False


def needs_schedule(exp: Exp) -> bool:
    """The eager fusion policy: reductions get their own kernel; long chains are cut."""
    size, _, has_reduce = exp.info
    if has_reduce and not fuse_epilogues:
        return True
    # The cached size over-counts shared nodes: only then pay for the exact count, and cut
    # already past 3/4 of the limit (an exact count close to it would be paid for again after
    # every few ops: `y = y + x` in a loop spent a fifth of its time counting).
    return size > MAX_FUSED_NODES and exp.exact_size() > MAX_FUSED_NODES * 3 // 4


def execute(target: LazyBuffer) -> None:
    """Run every pending kernel `target` depends on, inputs first."""
    if target.realized:
        return
    for i in target.inputs:
        if i.handle is None:
            break
    else:  # the common case: one kernel whose inputs exist
        if target.kernel is not None:
            _run(target)
            return
    order: list[LazyBuffer] = []
    seen: set[int] = set()
    stack: list[tuple[LazyBuffer, bool]] = [(target, False)]
    while stack:
        lb, expanded = stack.pop()
        if expanded:
            order.append(lb)
            continue
        if lb.realized or id(lb) in seen:
            continue
        if lb.kernel is None:
            if type(lb) is not LazyBuffer:  # a program input (no data yet)
                raise NeedsValues("a value was read while compiling a jit program")
            raise RuntimeError("Array has been deleted")
        seen.add(id(lb))
        stack.append((lb, True))
        stack.extend((i, False) for i in lb.inputs if not i.realized)
    # run in order, letting go of each buffer as it is run: an intermediate is freed once its
    # last reader has run (a deep graph's peak memory is its live frontier, not its sum)
    order.reverse()
    del lb
    while order:
        _run(order.pop())


def _run(lb: LazyBuffer) -> None:
    kernel = lb.kernel
    if kernel is None:
        raise RuntimeError("Array has been deleted")
    backend = lb.device.backend
    # Allocate before compiling: an array the device cannot hold is a MemoryError naming the
    # device's limit, not a compiler's complaint about an index past 32 bits.
    donor = _ready_donor(lb) if lb.donor is not None else None
    handle = donor.handle if donor is not None else backend.malloc(lb.nbytes)
    try:
        exe = backend.prepare(kernel)
        if lb.size:
            for i in lb.inputs:
                if i.handle is None:
                    raise RuntimeError("Array has been deleted")
            if _config.debug_level():
                _debug_dispatch(lb.device.platform, kernel, exe)
            if profiler.open_events() is None:  # not recording: count the dispatch only
                count = profiler.dispatch_count
                count[lb.device.platform] = count.get(lb.device.platform, 0) + 1
                backend.dispatch(exe, [i.handle for i in lb.inputs], handle)
            else:
                with profiler.kernel_event(lb.device.platform, kernel, exe):
                    backend.dispatch(exe, [i.handle for i in lb.inputs], handle)
    except BaseException:
        # a failed compile or launch, or KeyboardInterrupt: nothing leaks, and the buffer stays
        # pending, so a later read runs it again
        if donor is None:  # a donor keeps its memory
            backend.free(handle)
        raise
    lb.handle = handle
    if donor is not None:
        donor.handle = None  # the memory moved to `lb`, not freed: the live count stays
    else:
        live_buffers[lb.device.platform] += 1
    lb.kernel = None
    lb.inputs = []


def _ready_donor(lb: LazyBuffer) -> LazyBuffer | None:
    """The donated buffer whose memory `lb` takes, once every other kernel reading it has run;
    None when it holds no data (it was never computed)."""
    assert lb.donor is not None
    donor, readers = lb.donor
    lb.donor = None
    for r in readers:
        if r is not lb:
            execute(r)
    if donor.handle is None or donor.device != lb.device or donor.nbytes != lb.nbytes:
        return None
    return donor


def _debug_dispatch(platform: str, kernel: Kernel, exe: Any) -> None:
    level = _config.debug_level()
    red = kernel.reduction
    what = f"reduce[{red.arg[1]}]" if red is not None else "elementwise"
    print(
        f"[webjax] dispatch {platform}: {what} kernel of {kernel.size} x "
        f"{kernel.out_dtype.name}, {kernel.nargs} inputs"
    )
    if level >= 3:
        print(f"[webjax]   ir: {kernel.exp!r}")
    if level >= 4:
        print(f"[webjax]   source:\n{getattr(exe, 'source', '(binary)')}")


def read_bytes(lb: LazyBuffer) -> bytes:
    execute(lb)
    return lb.device.backend.read(lb.handle, lb.nbytes)


async def read_bytes_async(lb: LazyBuffer) -> bytes:
    execute(lb)
    return await lb.device.backend.read_async(lb.handle, lb.nbytes)


# ---- host values <-> bytes ---------------------------------------------------------------------
def pack(values: list[Any], dtype: DType) -> bytes:
    dtype = carrier(dtype)  # narrow types: their values in the carrier type
    if dtype.kind == "c":  # interleaved (real, imaginary) pairs
        pairs = [p for v in values for p in (complex(v).real, complex(v).imag)]
        return struct.pack(f"<{len(pairs)}{'d' if dtype.itemsize == 16 else 'f'}", *pairs)
    if dtype.name == "bfloat16":
        f32 = struct.pack(f"<{len(values)}f", *values)
        return b"".join(f32[i + 2 : i + 4] for i in range(0, len(f32), 4))
    return struct.pack(f"<{len(values)}{STRUCT_FORMATS[dtype.name]}", *values)


def unpack(data: bytes, dtype: DType, count: int) -> list[Any]:
    dtype = carrier(dtype)
    if dtype.kind == "c":
        code = "d" if dtype.itemsize == 16 else "f"
        flat = struct.unpack(f"<{2 * count}{code}", data[: count * dtype.itemsize])
        return [complex(flat[i], flat[i + 1]) for i in range(0, 2 * count, 2)]
    if dtype.name == "bfloat16":
        widened = b"".join(b"\0\0" + data[i : i + 2] for i in range(0, 2 * count, 2))
        return list(struct.unpack(f"<{count}f", widened))
    fmt = STRUCT_FORMATS[dtype.name]
    return list(struct.unpack(f"<{count}{fmt}", data[: count * dtype.itemsize]))
