"""The webgpu backend: kernels as WGSL compute shaders (codegen.wgsl) on a WebGPU device.

The device comes from a host module: wgpu-py natively (hosts/webgpu_native.py), the browser's
`navigator.gpu` in Pyodide (hosts/webgpu_browser.py); both expose the same small API. Work is
batched: dispatches are encoded as they come and submitted on a read, on a write to a buffer
that queued work uses, or every `flush_every` dispatches. Freed buffers go to a size-keyed pool
(after the queued work that uses them is submitted), since buffer creation is slow.
"""

from __future__ import annotations

from typing import Any

from ..codegen import wgsl
from ..dtypes import DType
from ..hosts import in_browser
from ..ir.kernel import Kernel
from .backend import Backend, register_backend

_POOL_BYTES = 256 << 20  # freed bytes kept for reuse


class WebGPUBuffer:
    """A device buffer: `size` bytes allocated (a multiple of 4, at least 4), `nbytes` asked."""

    __slots__ = ("buf", "nbytes", "size", "__weakref__")

    def __init__(self, buf: Any, nbytes: int, size: int) -> None:
        self.buf = buf
        self.nbytes = nbytes
        self.size = size

    def __repr__(self) -> str:
        return f"WebGPUBuffer({self.nbytes} bytes)"


class WebGPUExecutable:
    def __init__(self, kernel: Kernel, program: wgsl.WgslProgram, pipelines: list[Any]) -> None:
        self.kernel = kernel
        self.program = program
        self.pipelines = pipelines  # one per pass
        self.source = program.source


def _open_host() -> Any:
    if in_browser():
        from ..hosts.webgpu_browser import open_device as open_browser_device

        return open_browser_device()
    from ..hosts.webgpu_native import open_device as open_native_device

    return open_native_device()


class WebGPUBackend(Backend):
    platform = "webgpu"

    def __init__(self, host: Any = None) -> None:
        self.host = host if host is not None else _open_host()
        self.description: str = getattr(self.host, "description", "webgpu")
        self.max_args = self.host.max_storage_buffers - 1  # one binding is the output
        self.max_buffer_bytes = self.host.max_buffer_bytes
        # what the tiled matmul sizes its tiles by (WebGPU's default limits when not reported)
        self.limits = {
            "max_workgroup_storage": int(getattr(self.host, "max_workgroup_storage", 16384)),
            "max_invocations": int(getattr(self.host, "max_invocations", 256)),
        }
        self.flush_every = 64
        self._cache: dict[Kernel, WebGPUExecutable] = {}
        self._pending: set[WebGPUBuffer] = set()  # buffers that queued work uses
        self._queued = 0
        self._deferred: list[WebGPUBuffer] = []  # freed while queued work still uses them
        self._pool: dict[int, list[Any]] = {}
        self._pool_bytes = 0
        # Strong references to every device buffer we own: they must die only through
        # destroy_buffer, never through the cycle collector finalizing a GPUBuffer before the
        # LazyBuffer that frees it (which would pool a released buffer).
        self._live: dict[int, Any] = {}

    def supports_dtype(self, dtype: DType) -> bool:
        return wgsl.supports_dtype(dtype)

    # -- memory -------------------------------------------------------------------------------
    def malloc(self, nbytes: int) -> WebGPUBuffer:
        if nbytes > self.max_buffer_bytes:
            raise MemoryError(
                f"webgpu: {nbytes} bytes exceed this device's buffer limit "
                f"({self.max_buffer_bytes} bytes)"
            )
        size = max(4, -(-nbytes // 4) * 4)
        free = self._pool.get(size)
        if free:
            self._pool_bytes -= size
            return WebGPUBuffer(free.pop(), nbytes, size)
        buf = self.host.create_buffer(size)
        self._live[id(buf)] = buf
        return WebGPUBuffer(buf, nbytes, size)

    def free(self, handle: WebGPUBuffer) -> None:
        if handle.buf is None:
            return
        if handle in self._pending:
            self._deferred.append(handle)
        else:
            self._release(handle)

    def _release(self, handle: WebGPUBuffer) -> None:
        buf, handle.buf = handle.buf, None
        if self._pool_bytes + handle.size <= _POOL_BYTES:
            self._pool.setdefault(handle.size, []).append(buf)
            self._pool_bytes += handle.size
        else:
            self._live.pop(id(buf), None)
            self.host.destroy_buffer(buf)

    def trim(self) -> None:
        """Destroy the pooled (free) buffers."""
        for bufs in self._pool.values():
            for b in bufs:
                self._live.pop(id(b), None)
                self.host.destroy_buffer(b)
        self._pool.clear()
        self._pool_bytes = 0

    def write(self, handle: WebGPUBuffer, data: bytes | bytearray | memoryview) -> None:
        if handle in self._pending:
            self.flush()  # queued work must read the old contents first
        n = len(data) if not isinstance(data, memoryview) else data.nbytes
        if n % 4:
            data = bytes(data) + bytes(4 - n % 4)  # queue writes come in whole words
        if n:
            self.host.write_buffer(handle.buf, data)

    def read(self, handle: WebGPUBuffer, nbytes: int) -> bytes:
        self.flush()
        return self.host.read_buffer(handle.buf, nbytes)

    async def read_async(self, handle: WebGPUBuffer, nbytes: int) -> bytes:
        self.flush()
        return await self.host.read_buffer_async(handle.buf, nbytes)

    # -- kernels ------------------------------------------------------------------------------
    def prepare(self, kernel: Kernel) -> WebGPUExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            program = wgsl.render(kernel, self.max_args + 1, self.limits)
            pipelines = [self._compile(p) for p in program.passes]
            exe = self._cache[kernel] = WebGPUExecutable(kernel, program, pipelines)
        return exe

    async def prepare_async(self, kernel: Kernel) -> WebGPUExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            program = wgsl.render(kernel, self.max_args + 1, self.limits)
            pipelines = [
                await self.host.create_pipeline_async(p.source, p.nbindings) for p in program.passes
            ]
            exe = self._cache[kernel] = WebGPUExecutable(kernel, program, pipelines)
        return exe

    def _compile(self, p: wgsl.WgslPass) -> Any:
        try:
            return self.host.create_pipeline(p.source, p.nbindings)
        except Exception as e:
            numbered = "\n".join(
                f"{i + 1:4d}  {line}" for i, line in enumerate(p.source.splitlines())
            )
            raise RuntimeError(f"webgpu: shader compilation failed: {e}\n{numbered}") from e

    def dispatch(self, exe: WebGPUExecutable, inputs: list[Any], output: Any) -> None:
        prog = exe.program
        if len(inputs) != prog.nargs:
            raise ValueError(f"webgpu: kernel takes {prog.nargs} inputs, got {len(inputs)}")
        if prog.invocations == 0:
            return
        if any(h is output for h in inputs):
            # WebGPU forbids binding one buffer as read-only and writable storage at once.
            tmp = self.malloc(output.size)
            self.dispatch(exe, inputs, tmp)
            self.host.enqueue_copy(tmp.buf, output.buf, output.size)
            self._pending.add(output)
            self.free(tmp)
            return
        bufs = [h.buf for h in inputs]
        scratch = self.malloc(prog.scratch_bytes) if prog.scratch_bytes else None
        for p, pipeline in zip(prog.passes, exe.pipelines, strict=True):
            if p is prog.passes[-1]:
                bound = [*bufs, output.buf] if scratch is None else [*bufs, scratch.buf, output.buf]
            else:
                assert scratch is not None
                bound = [*bufs, scratch.buf]
            self.host.enqueue(pipeline, p.nbindings, *p.workgroups, bound)
        self._pending.update(inputs)
        self._pending.add(output)
        if scratch is not None:
            self._pending.add(scratch)
            self.free(scratch)
        self._queued += len(prog.passes)
        if self._queued >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Submit the queued work (it then runs asynchronously)."""
        if not self._pending:
            return
        self.host.submit()
        self._pending.clear()
        self._queued = 0
        deferred, self._deferred = self._deferred, []
        for h in deferred:
            self._release(h)

    def synchronize(self) -> None:
        self.flush()
        self.host.wait_idle()

    async def synchronize_async(self) -> None:
        self.flush()
        await self.host.wait_idle_async()


register_backend("webgpu", WebGPUBackend, priority=10)
