"""The wasm backend: kernels compiled to WebAssembly, one linear memory shared by all of them.

Buffers are byte ranges of that memory, handed out by a size-class allocator (16-byte aligned,
free lists per class, bump allocation above, the memory grown as needed; never shrunk). A kernel
is generated once (codegen.wasm), compiled and instantiated against the shared memory, and cached
by its Kernel value. The engine is wasmtime natively and `WebAssembly` in Pyodide (hosts/).
"""

from __future__ import annotations

from typing import Any

from ..codegen import wasm as wasm_codegen
from ..dtypes import DType
from ..ir.kernel import Kernel
from .backend import Backend, BackendUnavailable, register_backend

_ALIGN = 16
_RESERVED = 64  # bytes below this are never handed out (address 0 stays unused)


def _size_class(n: int) -> int:
    """Round a request up: multiples of 16 below 1 KiB, then 8 classes per power of two."""
    n = max(n, _ALIGN)
    if n <= 1024:
        return (n + _ALIGN - 1) & -_ALIGN
    step = 1 << (n.bit_length() - 4)
    return (n + step - 1) & -step


class WasmBuffer:
    """A handle: byte offset `ptr` in the memory, `nbytes` requested, `cap` reserved."""

    __slots__ = ("ptr", "nbytes", "cap", "live")

    def __init__(self, ptr: int, nbytes: int, cap: int) -> None:
        self.ptr, self.nbytes, self.cap, self.live = ptr, nbytes, cap, True

    def __repr__(self) -> str:
        return f"WasmBuffer(ptr={self.ptr}, nbytes={self.nbytes})"


class WasmExecutable:
    __slots__ = ("kernel", "fn", "wasm", "arg_sizes", "out_size", "scratch")

    def __init__(self, kernel: Kernel, fn: Any, wasm: bytes, scratch: int = 0) -> None:
        self.kernel = kernel
        self.fn = fn
        self.wasm = wasm
        self.scratch = scratch  # bytes of scratch memory the kernel takes after `hi`
        self.arg_sizes = tuple(d.itemsize for d in kernel.arg_dtypes)
        self.out_size = kernel.out_dtype.itemsize


def _make_host() -> Any:
    from ..hosts import in_browser

    if in_browser():
        from ..hosts import wasm_browser

        reason = wasm_browser.available()
        if reason is not None:
            raise BackendUnavailable(reason)
        return wasm_browser.BrowserWasmHost()
    from ..hosts import wasm_native

    reason = wasm_native.available()
    if reason is not None:
        raise BackendUnavailable(reason)
    return wasm_native.WasmtimeHost()


class WasmBackend(Backend):
    platform = "wasm"
    max_args = 200  # inputs per kernel (2 params each; engines allow 1000 params)
    max_buffer_bytes = (1 << 32) - (1 << 20)
    kernels_may_alias = True  # elementwise kernels load a vector before storing it

    def __init__(self, host: Any = None) -> None:
        self.host = host if host is not None else _make_host()
        self._cache: dict[Kernel, WasmExecutable] = {}
        self._free: dict[int, list[int]] = {}
        self._free_end: dict[int, int] = {}  # end offset -> start, for every free-listed block
        self._top = _RESERVED  # bump pointer
        self._high = _RESERVED  # memory below this may hold old data
        self.bytes_in_use = 0
        self._scratch: WasmBuffer | None = None
        # relaxed SIMD (f32x4.relaxed_madd) where the engine validates it: probed once
        validate = getattr(self.host, "validate", None)
        self.relaxed_simd = bool(validate and validate(wasm_codegen.relaxed_probe()))

    def supports_dtype(self, dtype: DType) -> bool:
        return wasm_codegen.supports_dtype(dtype)

    # -- memory -------------------------------------------------------------------------------
    def malloc(self, nbytes: int) -> WasmBuffer:
        if nbytes < 0:
            raise ValueError(f"negative allocation size {nbytes}")
        cap = _size_class(nbytes)
        free = self._free.get(cap)
        if free:
            ptr = free.pop()
            del self._free_end[ptr + cap]
            self.host.fill(ptr, 0, cap)  # reused memory: zero it, as fresh memory is
        else:
            ptr = self._top
            end = ptr + cap
            if end > self.host.nbytes:
                # grow geometrically so a run of allocations grows the memory rarely
                self.host.grow_to(max(end, min(self.host.nbytes * 3 // 2, 1 << 32)))
            if ptr < self._high:
                self.host.fill(ptr, 0, min(cap, self._high - ptr))
            self._top = end
            self._high = max(self._high, end)
        self.bytes_in_use += cap
        return WasmBuffer(ptr, nbytes, cap)

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
        if n > handle.cap:
            raise ValueError(f"write of {n} bytes into a {handle.nbytes}-byte wasm buffer")
        self.host.write(handle.ptr, data)

    def read(self, handle: WasmBuffer, nbytes: int) -> bytes:
        if nbytes > handle.cap:
            raise ValueError(f"read of {nbytes} bytes from a {handle.nbytes}-byte wasm buffer")
        return self.host.read(handle.ptr, nbytes)

    # -- kernels ------------------------------------------------------------------------------
    def prepare(self, kernel: Kernel) -> WasmExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            wasm, scratch = wasm_codegen.generate_ex(kernel, relaxed=self.relaxed_simd)
            fn = self.host.instantiate(wasm, wasm_codegen.EXPORT)
            exe = self._cache[kernel] = WasmExecutable(kernel, fn, wasm, scratch)
        return exe

    async def prepare_async(self, kernel: Kernel) -> WasmExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            wasm, scratch = wasm_codegen.generate_ex(kernel, relaxed=self.relaxed_simd)
            compile_async = getattr(self.host, "instantiate_async", None)
            if compile_async is not None:
                fn = await compile_async(wasm, wasm_codegen.EXPORT)
            else:
                fn = self.host.instantiate(wasm, wasm_codegen.EXPORT)
            exe = self._cache.setdefault(kernel, WasmExecutable(kernel, fn, wasm, scratch))
        return exe

    def dispatch(self, exe: WasmExecutable, inputs: list[Any], output: Any) -> None:
        k = exe.kernel
        if len(inputs) != k.nargs:
            raise ValueError(f"kernel takes {k.nargs} inputs, got {len(inputs)}")
        if output.cap < k.size * exe.out_size:
            raise ValueError(
                f"output buffer of {output.nbytes} bytes is too small for {k.size} elements"
            )
        if k.size == 0:
            return
        args = [_i32(output.ptr)]
        args += [_i32(b.ptr) for b in inputs]
        args += [b.nbytes // s for b, s in zip(inputs, exe.arg_sizes, strict=True)]
        args += [0, k.size]
        if exe.scratch:
            args.append(_i32(self._scratch_ptr(exe.scratch)))
        exe.fn(*args)

    def _scratch_ptr(self, nbytes: int) -> int:
        """One scratch block shared by all kernels (kernels run one at a time), grown on need."""
        s = self._scratch
        if s is None or s.cap < nbytes:
            if s is not None:
                self.free(s)
            s = self._scratch = self.malloc(nbytes)
        return s.ptr


def _i32(p: int) -> int:
    return p - (1 << 32) if p >= 1 << 31 else p


register_backend("wasm", WasmBackend, priority=20)
