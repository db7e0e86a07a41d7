"""The wasm backend: kernels compiled to WebAssembly, one linear memory shared by all of them.

Buffers are byte ranges of that memory, handed out by a size-class allocator (16-byte aligned,
free lists per class, bump allocation above, the memory grown as needed; never shrunk). A kernel
is generated once (codegen.wasm), compiled and instantiated against the shared memory, and cached
by its Kernel value. The engine is wasmtime natively and `WebAssembly` in Pyodide (hosts/).

Threads: where the host has a worker pool (a cross-origin isolated page: hosts/wasm_browser.py)
the memory is shared and modules import it as shared. A kernel whose estimated work (`_work`)
reaches THREAD_MIN_WORK is also instantiated in the workers, with its output range cut into
one to four chunks per thread (codegen.wasm.split: at tile rows for tiled matmuls); its
dispatch runs the chunks on all threads and returns when they are done, so ordering and reads
are as single-threaded. Each chunk gets its own block of the scratch memory. Smaller kernels,
and every kernel elsewhere, run on the calling thread.

Reused blocks are zeroed on first use (write, dispatch, read) rather than in malloc: a kernel
overwrites its whole output, so only the bytes past it need zeroing (no 16 MiB memset before
a 16 MiB kernel), and only up to the buffer's size (its size class's slack is never read).
"""

from __future__ import annotations

from typing import Any

from ..codegen.wasm import attention as wasm_attention
from ..codegen.wasm import kernel as wasm_codegen
from ..dtypes import DType
from ..hosts import in_browser, wasm_browser, wasm_native
from ..ir.attention import AttentionKernel
from ..ir.kernel import Kernel
from .backend import Backend, BackendUnavailable, register_backend

_ALIGN = 16
_RESERVED = 64  # bytes below this are never handed out (address 0 stays unused)
# Estimated work (`_work`) from which a kernel is split over the worker pool: about 30-40 us
# on one thread. Measured in Chromium on 2 cores: below it a split's cost (FFI, publishing the
# job, waking a worker, cache lines moving between cores) eats the gain.
THREAD_MIN_WORK = 1 << 18
CHUNKS_PER_THREAD = 16
CHUNK_MIN_WORK = 1 << 18  # the least work of one chunk


def _size_class(n: int) -> int:
    """Round a request up: multiples of 16 below 1 KiB, then 8 classes per power of two."""
    n = max(n, _ALIGN)
    if n <= 1024:
        return (n + _ALIGN - 1) & -_ALIGN
    step = 1 << (n.bit_length() - 4)
    return (n + step - 1) & -step


class WasmBuffer:
    """A handle: byte offset `ptr` in the memory, `nbytes` requested, `cap` reserved. `dirty`:
    the block may hold a freed buffer's bytes, zeroed when first used (see WasmBackend)."""

    __slots__ = ("ptr", "nbytes", "cap", "live", "dirty")

    def __init__(self, ptr: int, nbytes: int, cap: int, dirty: bool = False) -> None:
        self.ptr, self.nbytes, self.cap, self.live, self.dirty = ptr, nbytes, cap, True, dirty

    def __repr__(self) -> str:
        return f"WasmBuffer(ptr={self.ptr}, nbytes={self.nbytes})"


class WasmExecutable:
    __slots__ = ("kernel", "fn", "wasm", "arg_sizes", "out_size", "scratch", "run", "chunks")

    def __init__(
        self,
        kernel: Kernel,
        fn: Any,
        wasm: bytes,
        scratch: int = 0,
        run: Any = None,
        chunks: int = 1,
    ) -> None:
        self.kernel = kernel
        self.fn = fn  # the kernel on the calling thread
        self.wasm = wasm
        self.scratch = scratch  # bytes of scratch memory the kernel takes after `hi`
        self.run = run  # the same call split over the worker pool (None: not split)
        self.chunks = chunks  # ranges `run` cuts the output into
        self.arg_sizes = tuple(d.itemsize for d in kernel.arg_dtypes)
        self.out_size = kernel.out_dtype.itemsize


def _make_host() -> Any:
    if in_browser():
        reason = wasm_browser.available()
        if reason is not None:
            raise BackendUnavailable(reason)
        return wasm_browser.BrowserWasmHost()
    reason = wasm_native.available()
    if reason is not None:
        raise BackendUnavailable(reason)
    return wasm_native.WasmtimeHost()


class WasmBackend(Backend):
    platform = "wasm"
    max_args = 200  # inputs per kernel (2 params each; engines allow 1000 params)
    max_buffer_bytes = (1 << 32) - (1 << 20)
    kernels_may_alias = True  # elementwise kernels load a vector before storing it
    fuses_transposed_reductions = False  # the tiled product writes row-major output

    def __init__(self, host: Any = None) -> None:
        self.host = host if host is not None else _make_host()
        self._cache: dict[Kernel, WasmExecutable] = {}
        self._free: dict[int, list[int]] = {}
        self._free_end: dict[int, int] = {}  # end offset -> start, for every free-listed block
        self._top = _RESERVED  # bump pointer
        self._high = _RESERVED  # memory below this may hold old data
        self.bytes_in_use = 0
        self.peak_bytes_in_use = 0
        self.num_allocs = 0
        self._scratch: WasmBuffer | None = None
        # relaxed SIMD (f32x4.relaxed_madd) where the engine validates it: probed once
        validate = getattr(self.host, "validate", None)
        self.relaxed_simd = bool(validate and validate(wasm_codegen.relaxed_probe()))
        # threads: the host's pool size (the calling thread included), 1 without a pool
        self.threads: int = int(getattr(self.host, "threads", 1))
        self.shared_memory = bool(getattr(self.host, "shared", False))
        self.parallel = self.threads > 1  # False: split kernels run on the calling thread
        self._kids = 0

    def supports_dtype(self, dtype: DType) -> bool:
        return wasm_codegen.supports_dtype(dtype)

    # -- memory -------------------------------------------------------------------------------
    def memory_stats(self) -> dict[str, int]:
        free = sum(cap * len(ptrs) for cap, ptrs in self._free.items())
        return {
            "bytes_in_use": self.bytes_in_use,
            "peak_bytes_in_use": self.peak_bytes_in_use,
            "num_allocs": self.num_allocs,
            "pool_bytes": free,  # free-listed blocks below the bump pointer
            "bytes_reserved": int(self.host.nbytes),  # the wasm memory's size (never shrinks)
            "bytes_limit": self.max_buffer_bytes,
        }

    def malloc(self, nbytes: int) -> WasmBuffer:
        if nbytes < 0:
            raise ValueError(f"negative allocation size {nbytes}")
        cap = _size_class(nbytes)
        free = self._free.get(cap)
        if free:
            ptr = free.pop()
            del self._free_end[ptr + cap]
            dirty = True
        else:
            ptr = self._top
            end = ptr + cap
            if end > self.host.nbytes:
                # grow geometrically so a run of allocations grows the memory rarely
                self.host.grow_to(max(end, min(self.host.nbytes * 3 // 2, 1 << 32)))
            dirty = ptr < self._high
            self._top = end
            self._high = max(self._high, end)
        self.bytes_in_use += cap
        self.peak_bytes_in_use = max(self.peak_bytes_in_use, self.bytes_in_use)
        self.num_allocs += 1
        return WasmBuffer(ptr, nbytes, cap, dirty)

    def _clean(self, handle: WasmBuffer, start: int = 0) -> None:
        """Zero a reused block's bytes from `start` to `nbytes`: buffers read as zeros where
        nothing was written, as fresh memory does. Deferred from malloc to the first write,
        dispatch or read, which mostly overwrite the buffer anyway (a kernel writes all its
        outputs). The size class's slack past `nbytes` is never read (kernels load within
        their inputs' lengths) and stays as it is: zeroing it cost a 2^20 + 64 element kernel
        0.5 MiB of memset per call."""
        handle.dirty = False
        if start < handle.nbytes:
            self.host.fill(handle.ptr + start, 0, handle.nbytes - start)

    def free(self, handle: WasmBuffer) -> None:
        if not handle.live:
            return
        handle.live = False
        self.bytes_in_use -= handle.cap
        if handle.ptr + handle.cap != self._top:
            self._free.setdefault(handle.cap, []).append(handle.ptr)
            self._free_end[handle.ptr + handle.cap] = handle.ptr
            return
        # the topmost block goes back to the bump region, with free blocks right below it
        top = handle.ptr
        while top in self._free_end:
            start = self._free_end.pop(top)
            self._free[top - start].remove(start)
            top = start
        self._top = top

    def write(self, handle: WasmBuffer, data: bytes | bytearray | memoryview) -> None:
        n = memoryview(data).nbytes
        if n > handle.nbytes:
            raise ValueError(f"write of {n} bytes into a {handle.nbytes}-byte wasm buffer")
        if handle.dirty:
            self._clean(handle, n)
        self.host.write(handle.ptr, data)

    def read(self, handle: WasmBuffer, nbytes: int) -> bytes:
        if nbytes > handle.nbytes:
            raise ValueError(f"read of {nbytes} bytes from a {handle.nbytes}-byte wasm buffer")
        if handle.dirty:
            self._clean(handle)
        return self.host.read(handle.ptr, nbytes)

    # -- kernels ------------------------------------------------------------------------------
    def _generate(self, kernel: Kernel) -> tuple[wasm_codegen.Module, list[int] | None]:
        """The module, and its cut points when the kernel is split over the worker pool."""
        if isinstance(kernel, AttentionKernel):  # a fused routine: one call, unsplit
            wasm = wasm_attention.generate(kernel, shared=self.shared_memory)
            return wasm_codegen.Module(wasm, 0, None), None
        mod = wasm_codegen.generate_module(
            kernel, relaxed=self.relaxed_simd, shared=self.shared_memory
        )
        work = _work(kernel, mod) if self.threads > 1 else 0
        if work < THREAD_MIN_WORK:
            return mod, None
        # Up to CHUNKS_PER_THREAD chunks per thread, so that a thread the OS preempts or wakes
        # late holds up less of the work (any thread takes the chunks left; a fused chain of
        # 2^24 elements ran 1.15x faster on 2 threads with 16 than with 4), each still worth a
        # split; a tiled matmul's chunks keep 128 rows or more (each packs all panels of b).
        most = work // CHUNK_MIN_WORK
        if mod.rows is not None:
            most = min(most, kernel.size // (mod.rows[1] * 128))
        parts = min(CHUNKS_PER_THREAD * self.threads, max(self.threads, most))
        cuts = wasm_codegen.split(kernel.size, parts, mod.rows)
        return mod, (cuts if len(cuts) > 2 else None)

    def _split_args(self, kernel: Kernel, scratch: int) -> tuple[int, int, int]:
        self._kids += 1
        return self._kids, 1 + 2 * kernel.nargs, (scratch + _ALIGN - 1) & -_ALIGN

    def prepare(self, kernel: Kernel) -> WasmExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            mod, cuts = self._generate(kernel)
            run = None
            try:
                if cuts is None:
                    fn = self.host.instantiate(mod.wasm, wasm_codegen.EXPORT)
                else:
                    kid, lo, stride = self._split_args(kernel, mod.scratch)
                    fn, run = self.host.instantiate_parallel(
                        mod.wasm, wasm_codegen.EXPORT, kid, cuts, lo, stride
                    )
            except MemoryError:
                raise
            except Exception as e:
                raise RuntimeError(
                    f"wasm: module compilation failed ({len(mod.wasm)} bytes): {e}"
                ) from e
            exe = WasmExecutable(
                kernel, fn, mod.wasm, mod.scratch, run, 1 if cuts is None else len(cuts) - 1
            )
            self._cache[kernel] = exe
        return exe

    async def prepare_async(self, kernel: Kernel) -> WasmExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            mod, cuts = self._generate(kernel)
            run = None
            try:
                if cuts is not None:
                    kid, lo, stride = self._split_args(kernel, mod.scratch)
                    fn, run = await self.host.instantiate_parallel_async(
                        mod.wasm, wasm_codegen.EXPORT, kid, cuts, lo, stride
                    )
                elif getattr(self.host, "instantiate_async", None) is not None:
                    fn = await self.host.instantiate_async(mod.wasm, wasm_codegen.EXPORT)
                else:
                    fn = self.host.instantiate(mod.wasm, wasm_codegen.EXPORT)
            except MemoryError:
                raise
            except Exception as e:
                raise RuntimeError(
                    f"wasm: module compilation failed ({len(mod.wasm)} bytes): {e}"
                ) from e
            chunks = 1 if cuts is None else len(cuts) - 1
            exe = WasmExecutable(kernel, fn, mod.wasm, mod.scratch, run, chunks)
            exe = self._cache.setdefault(kernel, exe)
        return exe

    def dispatch(self, exe: WasmExecutable, inputs: list[Any], output: Any) -> None:
        k = exe.kernel
        if len(inputs) != k.nargs:
            raise ValueError(f"kernel takes {k.nargs} inputs, got {len(inputs)}")
        if output.nbytes < k.size * exe.out_size:
            raise ValueError(
                f"output buffer of {output.nbytes} bytes is too small for {k.size} elements"
            )
        if k.size == 0:
            return
        for b in inputs:
            if b.dirty:  # never written: reads zeros
                self._clean(b)
        if output.dirty:
            self._clean(output, k.size * exe.out_size)
        args = [_i32(output.ptr)]
        args += [_i32(b.ptr) for b in inputs]
        args += [b.nbytes // s for b, s in zip(inputs, exe.arg_sizes, strict=True)]
        args += [0, k.size]
        if exe.run is not None and self.parallel:
            if exe.scratch:  # one block per chunk, 16-byte aligned
                stride = (exe.scratch + _ALIGN - 1) & -_ALIGN
                args.append(_i32(self._scratch_ptr(stride * exe.chunks)))
            exe.run(*args)
            return
        if exe.scratch:
            args.append(_i32(self._scratch_ptr(exe.scratch)))
        exe.fn(*args)

    def _scratch_ptr(self, nbytes: int) -> int:
        """One scratch region shared by all kernels (a kernel call, split or not, finishes
        before the next starts), grown on need."""
        s = self._scratch
        if s is None or s.cap < nbytes:
            if s is not None:
                self.free(s)
            s = self._scratch = self.malloc(nbytes)
        return s.ptr


def _work(kernel: Kernel, mod: wasm_codegen.Module) -> int:
    """A kernel's cost in units of about 0.13 ns (one element of a SIMD elementwise kernel):
    outputs x reduction length, a quarter of that for tiled matmuls (register tiles), more
    for transcendentals (float64 helper calls, several per element)."""
    red = kernel.reduction
    units = kernel.size * (red.arg[1] if red is not None else 1)
    if mod.rows is not None:
        return units // 4
    return units * (1 + 8 * wasm_codegen.helper_calls(kernel))


def _i32(p: int) -> int:
    return p - (1 << 32) if p >= 1 << 31 else p


register_backend("wasm", WasmBackend, priority=20)
