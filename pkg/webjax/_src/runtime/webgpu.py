"""The webgpu backend: kernels as WGSL compute shaders (codegen.wgsl) on a WebGPU device.

The device comes from a host module: wgpu-py natively (hosts/webgpu_native.py), the browser's
`navigator.gpu` in Pyodide (hosts/webgpu_browser.py); both expose the same small API. Work is
batched: dispatches are encoded as they come and submitted on a read, on a write to a buffer
that queued work uses, or every `flush_every` dispatches. Freed buffers go to a size-keyed pool
(after the queued work that uses them is submitted), since buffer creation is slow; sizes are
multiples of 16 bytes so kernels may bind any buffer as an array of vec4. At start-up the
backend learns whether the adapter is a CPU implementation (the codegen's schedules differ),
probes which builtins round correctly (`probe_exact`) and, where the device has `shader-f16`,
whether it moves f16 between storage and f32 exactly (`probe_f16`: float16 buffers are then
bound as array<f16> instead of packed words). While the profiler records, kernels are timed with
timestamp queries where the adapter has them.
"""

from __future__ import annotations

import time
from typing import Any

from .. import profiler
from ..codegen.wgsl import attention as wgsl_attention
from ..codegen.wgsl import kernel as wgsl
from ..codegen.wgsl.program import WgslPass, WgslProgram
from ..dtypes import DType
from ..hosts import in_browser, webgpu_browser, webgpu_native
from ..ir.attention import AttentionKernel
from ..ir.kernel import Kernel
from .backend import Backend, register_backend

_POOL_BYTES = 256 << 20  # freed bytes kept for reuse
QUERIES = 4096  # timestamp queries per query set: two per kernel timed while profiling


class WebGPUBuffer:
    """A device buffer: `size` bytes allocated (a multiple of 16, at least 16: kernels may read
    any buffer as an array of vec4, whose last element must then cover the last value),
    `nbytes` asked."""

    __slots__ = ("buf", "nbytes", "size", "__weakref__")

    def __init__(self, buf: Any, nbytes: int, size: int) -> None:
        self.buf = buf
        self.nbytes = nbytes
        self.size = size

    def __repr__(self) -> str:
        return f"WebGPUBuffer({self.nbytes} bytes)"


class WebGPUExecutable:
    def __init__(self, kernel: Kernel, program: WgslProgram, pipelines: list[Any]) -> None:
        self.kernel = kernel
        self.program = program
        self.pipelines = pipelines  # one per pass
        self.source = program.source


def _probe_start(host: Any) -> tuple[list[Any], int]:
    source, a, b = wgsl.probe()
    bufs = [host.create_buffer(len(a)), host.create_buffer(len(b)), host.create_buffer(2 * len(a))]
    host.write_buffer(bufs[0], a)
    host.write_buffer(bufs[1], b)
    host.enqueue(host.create_pipeline(source, 3), 3, wgsl.PROBE_COUNT // wgsl.WORKGROUP, 1, bufs)
    host.submit()
    return bufs, 2 * len(a)


def probe_exact(host: Any) -> dict[str, int]:
    """Which builtins (sqrt, division) the device rounds correctly (wgsl.probe); {} when the
    probe cannot run, so that kernels keep the corrected versions."""
    bufs: list[Any] = []
    try:
        bufs, nbytes = _probe_start(host)
        return wgsl.probe_verdict(host.read_buffer(bufs[2], nbytes))
    except Exception:  # a device that cannot run the probe gets no shortcuts
        return {}
    finally:
        for b in bufs:
            host.destroy_buffer(b)


async def probe_exact_async(host: Any) -> dict[str, int]:
    bufs: list[Any] = []
    try:
        bufs, nbytes = _probe_start(host)
        return wgsl.probe_verdict(await host.read_buffer_async(bufs[2], nbytes))
    except Exception:
        return {}
    finally:
        for b in bufs:
            host.destroy_buffer(b)


def _probe_f16_start(host: Any) -> tuple[list[Any], int]:
    load, store, halves, words = wgsl.probe_f16()
    n = wgsl.F16_PROBE_COUNT
    bufs = [host.create_buffer(2 * n), host.create_buffer(4 * n)]
    bufs += [host.create_buffer(4 * n), host.create_buffer(2 * n)]
    host.write_buffer(bufs[0], halves)
    host.write_buffer(bufs[2], words)
    groups = n // wgsl.WORKGROUP
    host.enqueue(host.create_pipeline(load, 2), 2, groups, 1, bufs[:2])
    host.enqueue(host.create_pipeline(store, 2), 2, groups, 1, bufs[2:])
    host.submit()
    return bufs, n


def probe_f16(host: Any) -> dict[str, int]:
    """{"f16": 1} when the device has `shader-f16` and moves every f16 between storage and f32
    exactly (wgsl.probe_f16), else {"f16": 0}: float16 then stays packed in u32 words."""
    if not getattr(host, "shader_f16", False):
        return {"f16": 0}
    bufs: list[Any] = []
    try:
        bufs, n = _probe_f16_start(host)
        return wgsl.probe_f16_verdict(
            host.read_buffer(bufs[1], 4 * n), host.read_buffer(bufs[3], 2 * n)
        )
    except Exception:  # a device that cannot run the probe keeps the packed form
        return {"f16": 0}
    finally:
        for b in bufs:
            host.destroy_buffer(b)


async def probe_f16_async(host: Any) -> dict[str, int]:
    if not getattr(host, "shader_f16", False):
        return {"f16": 0}
    bufs: list[Any] = []
    try:
        bufs, n = _probe_f16_start(host)
        loaded = await host.read_buffer_async(bufs[1], 4 * n)
        return wgsl.probe_f16_verdict(loaded, await host.read_buffer_async(bufs[3], 2 * n))
    except Exception:
        return {"f16": 0}
    finally:
        for b in bufs:
            host.destroy_buffer(b)


async def _probe_async(host: Any) -> None:
    host.exact = await probe_exact_async(host)
    host.f16 = await probe_f16_async(host)


async def init_webgpu_async(power_preference: str = "high-performance") -> Any:
    """Open the browser's WebGPU device without blocking (works under plain `runPython` +
    `await`), with the start-up probes awaited (the backend's sync probes cannot wait there)."""
    return await webgpu_browser.open_device_async(power_preference, _probe_async)


def _open_host() -> Any:
    if in_browser():
        return webgpu_browser.open_device()
    return webgpu_native.open_device()


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
            # a CPU implementation (SwiftShader, lavapipe): kernels avoid workgroup barriers
            "cpu": int(bool(getattr(self.host, "is_cpu", False))),
        }
        exact = getattr(self.host, "exact", None)
        if exact is None:
            exact = self.host.exact = probe_exact(self.host)
        self.limits.update(exact)  # exact_sqrt, exact_div: the device's builtins round right
        f16 = getattr(self.host, "f16", None)
        if f16 is None:
            f16 = self.host.f16 = probe_f16(self.host)
        self.limits.update(f16)  # f16: float16 buffers are bound as array<f16>
        self.flush_every = 64
        self._cache: dict[Kernel, WebGPUExecutable] = {}
        self._pending: set[WebGPUBuffer] = set()  # buffers that queued work uses
        self._queued = 0
        self._deferred: list[WebGPUBuffer] = []  # freed while queued work still uses them
        self._pool: dict[int, list[Any]] = {}
        self._pool_bytes = 0
        self._in_use = self._peak = self._allocs = 0
        # Strong references to every device buffer we own: they must die only through
        # destroy_buffer, never through the cycle collector finalizing a GPUBuffer before the
        # LazyBuffer that frees it (which would pool a released buffer).
        self._live: dict[int, Any] = {}
        # profiling: kernels timed with timestamp queries, as (the profiler's event list, the
        # position its event will take, first and last query index)
        self._queries: Any = None
        self._queries_used = 0
        self._timed: list[tuple[list[dict[str, Any]], int, int, int]] = []

    def supports_dtype(self, dtype: DType) -> bool:
        return wgsl.supports_dtype(dtype)

    # -- memory -------------------------------------------------------------------------------
    def malloc(self, nbytes: int) -> WebGPUBuffer:
        if nbytes > self.max_buffer_bytes:
            raise MemoryError(
                f"webgpu: {nbytes} bytes exceed this device's buffer limit "
                f"({self.max_buffer_bytes} bytes)"
            )
        size = max(16, -(-nbytes // 16) * 16)
        free = self._pool.get(size)
        if free:
            self._pool_bytes -= size
            buf = free.pop()
        else:
            buf = self.host.create_buffer(size)
            self._live[id(buf)] = buf
        self._in_use += size
        self._peak = max(self._peak, self._in_use)
        self._allocs += 1
        return WebGPUBuffer(buf, nbytes, size)

    def memory_stats(self) -> dict[str, int]:
        return {
            "bytes_in_use": self._in_use,
            "peak_bytes_in_use": self._peak,
            "num_allocs": self._allocs,
            "pool_bytes": self._pool_bytes,  # free buffers kept for reuse
            "largest_alloc_size": self.max_buffer_bytes,
        }

    def free(self, handle: WebGPUBuffer) -> None:
        if handle.buf is None:
            return
        if handle in self._pending:
            self._deferred.append(handle)
        else:
            self._release(handle)

    def _release(self, handle: WebGPUBuffer) -> None:
        buf, handle.buf = handle.buf, None
        self._in_use -= handle.size
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
        if n % 16 and n < handle.size:
            # whole words for the queue, and zeros up to the vec4 that holds the last value
            data = bytes(data) + bytes(min(handle.size, -(-n // 16) * 16) - n)
        if n:
            self.host.write_buffer(handle.buf, data)

    def read(self, handle: WebGPUBuffer, nbytes: int) -> bytes:
        self.flush()
        data = self.host.read_buffer(handle.buf, nbytes)
        if self._timed:
            self._apply_times(self.host.read_timestamps(self._queries, self._queries_used))
        return data

    async def read_async(self, handle: WebGPUBuffer, nbytes: int) -> bytes:
        self.flush()
        data = await self.host.read_buffer_async(handle.buf, nbytes)
        if self._timed:
            q = self._queries
            self._apply_times(await self.host.read_timestamps_async(q, self._queries_used))
        return data

    # -- kernels ------------------------------------------------------------------------------
    def prepare(self, kernel: Kernel) -> WebGPUExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            program = self._render(kernel)
            pipelines = [self._compile(p) for p in program.passes]
            exe = self._cache[kernel] = WebGPUExecutable(kernel, program, pipelines)
        return exe

    async def prepare_async(self, kernel: Kernel) -> WebGPUExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            program = self._render(kernel)
            pipelines = [
                await self.host.create_pipeline_async(p.source, p.nbindings) for p in program.passes
            ]
            exe = self._cache[kernel] = WebGPUExecutable(kernel, program, pipelines)
        return exe

    def _render(self, kernel: Kernel) -> WgslProgram:
        if isinstance(kernel, AttentionKernel):  # a fused routine (ir/attention.py)
            return wgsl_attention.render(kernel, self.limits)
        return wgsl.render(kernel, self.max_args + 1, self.limits)

    def _compile(self, p: WgslPass) -> Any:
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
        first = self._time_kernel()
        for p, pipeline in zip(prog.passes, exe.pipelines, strict=True):
            last = p is prog.passes[-1]
            if last:
                bound = [*bufs, output.buf] if scratch is None else [*bufs, scratch.buf, output.buf]
            else:
                assert scratch is not None
                bound = [*bufs, scratch.buf]
            if first is None:
                self.host.enqueue(pipeline, p.nbindings, *p.workgroups, bound)
            else:  # timestamps at the start of the first pass and the end of the last
                begin = first if p is prog.passes[0] else None
                stamps = (self._queries, begin, first + 1 if last else None)
                self.host.enqueue(pipeline, p.nbindings, *p.workgroups, bound, stamps)
        self._pending.update(inputs)
        self._pending.add(output)
        if scratch is not None:
            self._pending.add(scratch)
            self.free(scratch)
        self._queued += len(prog.passes)
        if self._queued >= self.flush_every:
            self.flush()

    def _time_kernel(self) -> int | None:
        """While the profiler records (and the device has timestamp queries), the first of two
        query indices for the kernel being dispatched; its event then gets GPU times once the
        work is waited for (read, block_until_ready). Otherwise None."""
        events = profiler.open_events()  # the profiler's open trace, or None
        if events is None or not getattr(self.host, "timestamps", False):
            return None
        if self._queries is None:
            self._queries = self.host.create_query_set(QUERIES)
        if self._queries_used + 2 > QUERIES:
            return None  # full until the next wait: this kernel keeps host times
        first = self._queries_used
        self._queries_used += 2
        self._timed.append((events, len(events), first, first + 1))  # (appended after us)
        return first

    def _apply_times(self, times: list[int]) -> None:
        """Put GPU times (ns) into the timed kernels' events: durations as measured, starts on
        the host clock, anchored where the last kernel ended (about now)."""
        timed, self._timed = self._timed, []
        self._queries_used = 0
        ends = [times[e] for _, _, b, e in timed if 0 < times[b] <= times[e]]
        if not ends:
            return
        anchor_gpu, anchor_us = max(ends), time.perf_counter() * 1e6
        for events, pos, b, e in timed:
            t0, t1 = times[b], times[e]
            if pos < len(events) and 0 < t0 <= t1:
                event = events[pos]
                event["ts"] = anchor_us - (anchor_gpu - t0) / 1e3
                event["dur"] = (t1 - t0) / 1e3
                event["args"]["clock"] = "gpu"

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
        if self._timed:
            self._apply_times(self.host.read_timestamps(self._queries, self._queries_used))

    async def synchronize_async(self) -> None:
        self.flush()
        await self.host.wait_idle_async()
        if self._timed:
            q = self._queries
            self._apply_times(await self.host.read_timestamps_async(q, self._queries_used))


register_backend("webgpu", WebGPUBackend, priority=10)
