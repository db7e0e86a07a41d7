"""WebGPU in the browser (Pyodide): `navigator.gpu` driven through a small JS helper.

The helper (JS source below, evaluated once) keeps the hot paths to one FFI crossing each:
`dispatch` builds the bind group and queues the dispatch in JS, `flush` encodes and submits the
queue, `read` maps a staging copy. WebGPU's device request and buffer mapping are promises:
Python can only wait for them synchronously through JSPI (`pyodide.ffi.run_sync`, available
when Python was entered via `runPythonAsync`). Under plain `runPython` the sync paths raise
SyncReadError naming the async alternative (`await webjax.init_webgpu_async()`,
`await x.block_until_ready_async()`, `await webjax.read_async(x)`).

A lost device (`GPUDevice.lost`; `lose_device()` forces it for tests) makes every later call
raise, naming the loss, as a lost WebGL context does; after `webjax.clear_backends()` the
opening functions request a fresh device while the lost one's arrays keep raising.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from . import BackendUnavailable, SyncReadError, js_runtime

_HELPER_JS = r"""
(() => {
  const layouts = new WeakMap();  // device -> (bindings -> [bind group layout, pipeline layout])
  let queue = [];
  let lastError = undefined;
  const lostWhy = new WeakMap();  // device -> why it was lost
  function layoutFor(device, n) {
    let byCount = layouts.get(device);
    if (!byCount) { byCount = new Map(); layouts.set(device, byCount); }
    let l = byCount.get(n);
    if (!l) {
      const entries = [];
      for (let i = 0; i < n; i++) {
        entries.push({binding: i, visibility: GPUShaderStage.COMPUTE,
                      buffer: {type: i == n - 1 ? "storage" : "read-only-storage"}});
      }
      const bgl = device.createBindGroupLayout({entries});
      l = [bgl, device.createPipelineLayout({bindGroupLayouts: [bgl]})];
      byCount.set(n, l);
    }
    return l;
  }
  return {
    async init(powerPreference) {
      if (!navigator.gpu) return undefined;
      const adapter = await navigator.gpu.requestAdapter({powerPreference});
      if (!adapter) return undefined;
      const A = adapter.limits;
      const requiredLimits = {
        maxStorageBuffersPerShaderStage: A.maxStorageBuffersPerShaderStage,
        maxStorageBufferBindingSize: A.maxStorageBufferBindingSize,
        maxBufferSize: A.maxBufferSize,
        maxComputeWorkgroupStorageSize: A.maxComputeWorkgroupStorageSize,
        maxComputeInvocationsPerWorkgroup: A.maxComputeInvocationsPerWorkgroup,
        maxComputeWorkgroupSizeX: A.maxComputeWorkgroupSizeX,
      };
      const requiredFeatures = ["timestamp-query", "shader-f16"].filter(
        (f) => adapter.features.has(f));
      const device = await adapter.requestDevice({requiredLimits, requiredFeatures});
      queue = [];  // a new device only replaces a lost one: its queued work is gone
      device.lost.then((i) => {
        if (!lostWhy.has(device)) {
          lostWhy.set(device, "GPUDevice.lost: " + i.reason + (i.message ? ", " + i.message : ""));
        }
      });
      device.addEventListener("uncapturederror", (e) => {
        const message = String(e.error && e.error.message || e.error);
        if (lastError === undefined) lastError = message;  // the first error is the cause
        console.error("webjax webgpu:", message);
      });
      const info = adapter.info || {};
      const L = device.limits;
      const names = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
      return {
        device,
        description: names,
        isCpu: Boolean(info.isFallbackAdapter || adapter.isFallbackAdapter ||
                       /swiftshader|llvmpipe|lavapipe/i.test(names)),
        maxStorageBuffers: L.maxStorageBuffersPerShaderStage,
        maxBufferBytes: Math.min(L.maxStorageBufferBindingSize, L.maxBufferSize),
        maxWorkgroupStorage: L.maxComputeWorkgroupStorageSize,
        maxInvocations: Math.min(L.maxComputeInvocationsPerWorkgroup, L.maxComputeWorkgroupSizeX),
        timestamps: device.features.has("timestamp-query"),
        shaderF16: device.features.has("shader-f16"),
      };
    },
    createBuffer(device, size) {
      return device.createBuffer({size,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST});
    },
    write(device, buf, u8) { device.queue.writeBuffer(buf, 0, u8); },
    // the pipeline, and a promise of its validation errors ("" when it compiled)
    pipeline(device, code, n) {
      device.pushErrorScope("validation");
      const module = device.createShaderModule({code});
      const pipeline = device.createComputePipeline(
        {layout: layoutFor(device, n)[1], compute: {module, entryPoint: "main"}});
      const errors = device.popErrorScope().then((e) => (e ? String(e.message) : ""));
      return {pipeline, errors};
    },
    async pipelineAsync(device, code, n) {
      const module = device.createShaderModule({code});
      return await device.createComputePipelineAsync(
        {layout: layoutFor(device, n)[1], compute: {module, entryPoint: "main"}});
    },
    dispatch(device, pipeline, n, gx, gy, ...bufs) {
      const entries = bufs.map((buffer, i) => ({binding: i, resource: {buffer}}));
      const group = device.createBindGroup({layout: layoutFor(device, n)[0], entries});
      queue.push([pipeline, group, gx, gy, null]);
    },
    // a dispatch in a compute pass of its own, writing timestamps `begin`, `end` (-1: none)
    dispatchTimed(device, pipeline, n, gx, gy, querySet, begin, end, ...bufs) {
      const entries = bufs.map((buffer, i) => ({binding: i, resource: {buffer}}));
      const group = device.createBindGroup({layout: layoutFor(device, n)[0], entries});
      const writes = {querySet};
      if (begin >= 0) writes.beginningOfPassWriteIndex = begin;
      if (end >= 0) writes.endOfPassWriteIndex = end;
      queue.push([pipeline, group, gx, gy, writes]);
    },
    copy(src, dst, size) { queue.push([null, src, dst, size]); },
    flush(device) {
      if (!queue.length) return;
      const enc = device.createCommandEncoder();
      let pass = null;
      for (const [p, a, b, c, writes] of queue) {
        if (p === null) {
          if (pass) { pass.end(); pass = null; }
          enc.copyBufferToBuffer(a, 0, b, 0, c);
          continue;
        }
        if (writes) {
          if (pass) pass.end();
          pass = enc.beginComputePass({timestampWrites: writes});
        } else if (!pass) {
          pass = enc.beginComputePass();
        }
        pass.setPipeline(p);
        pass.setBindGroup(0, a);
        pass.dispatchWorkgroups(b, c, 1);
        if (writes) { pass.end(); pass = null; }
      }
      if (pass) pass.end();
      queue = [];
      device.queue.submit([enc.finish()]);
    },
    async read(device, buf, size) {
      const padded = Math.max(4, Math.ceil(size / 4) * 4);
      const staging = device.createBuffer(
        {size: padded, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buf, 0, staging, 0, padded);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const out = new Uint8Array(staging.getMappedRange(), 0, size).slice();
      staging.unmap();
      staging.destroy();
      return out;
    },
    async idle(device) { await device.queue.onSubmittedWorkDone(); },
    querySet(device, count) { return device.createQuerySet({type: "timestamp", count}); },
    async timestamps(device, querySet, count) {  // nanoseconds, as doubles
      const resolve = device.createBuffer(
        {size: 8 * count, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC});
      const staging = device.createBuffer(
        {size: 8 * count, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
      const enc = device.createCommandEncoder();
      enc.resolveQuerySet(querySet, 0, count, resolve, 0);
      enc.copyBufferToBuffer(resolve, 0, staging, 0, 8 * count);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const out = Float64Array.from(new BigUint64Array(staging.getMappedRange()), Number);
      staging.unmap();
      staging.destroy();
      resolve.destroy();
      return out;
    },
    takeError() { const e = lastError; lastError = undefined; return e; },
    lost(device) { return lostWhy.get(device) || ""; },
    loseDevice(device) {  // fault injection for tests
      if (!lostWhy.has(device)) lostWhy.set(device, "GPUDevice.destroy()");
      queue = [];
      device.destroy();
    },
  };
})()
"""

_HELPER: Any = None
_DEVICE: BrowserWebGPU | None = None

_ASYNC_HINT = (
    "Run Python through pyodide.runPythonAsync (or PyScript / an async cell) so webjax can wait "
    "synchronously, or use the async API: {what}"
)


def _helper() -> Any:
    global _HELPER
    if _HELPER is None:
        from pyodide.code import run_js

        _HELPER = run_js(_HELPER_JS)
    return _HELPER


def _wait(promise: Any, what: str) -> Any:
    """Block on a JS promise through JSPI, or raise SyncReadError naming the async call."""
    from pyodide.ffi import can_run_sync, run_sync

    if not can_run_sync():
        raise SyncReadError(
            "webgpu: a synchronous wait on the GPU is impossible here (Python was entered "
            "through plain pyodide.runPython, without JSPI). " + _ASYNC_HINT.format(what=what)
        )
    return run_sync(promise)


def _raise_compile_error(error: str) -> None:
    if error:
        raise RuntimeError(
            f"webgpu: shader compilation failed: {error} (reported at this wait: the kernels "
            "submitted with it did not run)"
        )


class BrowserWebGPU:
    """The browser's GPUDevice behind the host API that runtime/webgpu.py uses."""

    def __init__(self, info: Any) -> None:
        self.h = _helper()
        self.device = info.device
        self.description = str(info.description) or "WebGPU"
        self.is_cpu = bool(info.isCpu)
        self.max_storage_buffers = int(info.maxStorageBuffers)
        self.max_buffer_bytes = int(info.maxBufferBytes)
        self.max_workgroup_storage = int(info.maxWorkgroupStorage)
        self.max_invocations = int(info.maxInvocations)
        self.exact: dict[str, int] | None = None  # which builtins round right (runtime probe)
        self.shader_f16 = bool(info.shaderF16)  # f16 in shaders and storage
        self.f16: dict[str, int] | None = None  # whether kernels bind float16 as f16 (probe)
        self.timestamps = bool(info.timestamps)  # timestamp queries: GPU times in profiles
        self._verdicts: list[Any] = []  # compile checks not yet awaited (no JSPI to wait)

    @property
    def lost(self) -> str | None:
        """Why the device was lost, or None while it works."""
        return str(self.h.lost(self.device)) or None

    def lose_device(self) -> bool:
        """Lose the device on purpose (`GPUDevice.destroy()`), as a GPU reset would: every
        later call raises, naming the loss."""
        self.h.loseDevice(self.device)
        return True

    def _live(self) -> None:
        why = self.lost
        if why is not None:
            raise RuntimeError(
                f"webgpu: the GPU device was lost ({why}); arrays on it are gone: "
                "webjax.clear_backends() makes a fresh device on next use"
            )

    def _check(self) -> None:
        self._live()
        err = self.h.takeError()
        if err is not None:
            raise RuntimeError(f"webgpu: {err}")

    def create_buffer(self, nbytes: int) -> Any:
        return self.h.createBuffer(self.device, nbytes)

    def destroy_buffer(self, buf: Any) -> None:
        buf.destroy()

    def write_buffer(self, buf: Any, data: bytes | bytearray | memoryview) -> None:
        import js

        u8 = js.Uint8Array.new(len(data) if not isinstance(data, memoryview) else data.nbytes)
        u8.assign(data)  # one memcpy into JS memory
        self.h.write(self.device, buf, u8)

    def read_buffer(self, buf: Any, nbytes: int) -> bytes:
        what = "`await x.block_until_ready_async()` or `await webjax.read_async(x)`"
        self._live()
        self._wait_verdicts(what)
        data = _wait(self.h.read(self.device, buf, nbytes), what)
        self._check()
        return bytes(data.to_bytes())

    async def read_buffer_async(self, buf: Any, nbytes: int) -> bytes:
        self._live()
        await self._await_verdicts()
        data = await self.h.read(self.device, buf, nbytes)
        self._check()
        return bytes(data.to_bytes())

    def create_pipeline(self, source: str, nbindings: int) -> Any:
        """The compute pipeline; raises when the shader does not compile. The browser reports
        that asynchronously: through JSPI this waits for the verdict, so an invalid pipeline is
        never cached or dispatched (one would void its whole submit: stale outputs). Without
        JSPI the verdict is awaited before the next read or wait instead."""
        from pyodide.ffi import can_run_sync, run_sync

        self._live()
        made = self.h.pipeline(self.device, source, nbindings)
        if can_run_sync():
            error = str(run_sync(made.errors))
            if error:
                raise RuntimeError(error)
        else:
            self._verdicts.append(made.errors)
        return made.pipeline

    async def create_pipeline_async(self, source: str, nbindings: int) -> Any:
        self._live()
        try:
            return await self.h.pipelineAsync(self.device, source, nbindings)
        except Exception as e:  # createComputePipelineAsync rejects with a GPUPipelineError
            message = str(getattr(e, "message", e))
            raise RuntimeError(f"webgpu: shader compilation failed: {message}") from None

    async def _await_verdicts(self) -> None:
        verdicts, self._verdicts = self._verdicts, []
        for v in verdicts:
            _raise_compile_error(str(await v))

    def _wait_verdicts(self, what: str) -> None:
        verdicts, self._verdicts = self._verdicts, []
        for v in verdicts:
            _raise_compile_error(str(_wait(v, what)))

    def enqueue(
        self,
        pipeline: Any,
        nbindings: int,
        gx: int,
        gy: int,
        bufs: list[Any],
        stamps: tuple[Any, int | None, int | None] | None = None,
    ) -> None:
        # (no loss check per dispatch: work queued on a lost device never runs, and the next
        # submit, read or wait raises)
        if stamps is None:
            self.h.dispatch(self.device, pipeline, nbindings, gx, gy, *bufs)
        else:
            qs, begin, end = stamps
            b, e = -1 if begin is None else begin, -1 if end is None else end
            self.h.dispatchTimed(self.device, pipeline, nbindings, gx, gy, qs, b, e, *bufs)

    def enqueue_copy(self, src: Any, dst: Any, nbytes: int) -> None:
        self.h.copy(src, dst, nbytes)

    def submit(self) -> None:
        self._live()
        self.h.flush(self.device)

    def create_query_set(self, count: int) -> Any:
        return self.h.querySet(self.device, count)

    def read_timestamps(self, query_set: Any, count: int) -> list[int]:
        data = _wait(self.h.timestamps(self.device, query_set, count), "`await` the read")
        return [int(t) for t in data.to_py()]

    async def read_timestamps_async(self, query_set: Any, count: int) -> list[int]:
        data = await self.h.timestamps(self.device, query_set, count)
        return [int(t) for t in data.to_py()]

    def wait_idle(self) -> None:
        self._live()
        self._wait_verdicts("`await x.block_until_ready_async()`")
        _wait(self.h.idle(self.device), "`await x.block_until_ready_async()`")
        self._check()

    async def wait_idle_async(self) -> None:
        self._live()
        await self._await_verdicts()
        await self.h.idle(self.device)
        self._check()


def _has_webgpu() -> bool:
    import js

    navigator = getattr(js, "navigator", None)  # Node.js 20 has none, Node.js 21+ one without gpu
    return navigator is not None and bool(getattr(navigator, "gpu", None))


def _no_adapter() -> BackendUnavailable:
    runtime = js_runtime()
    if runtime is not None:
        return BackendUnavailable(
            f"{runtime} offers WebGPU (navigator.gpu) but no adapter: no Vulkan driver found "
            "(on Linux without a GPU, Mesa's lavapipe: apt-get install mesa-vulkan-drivers)"
        )
    return BackendUnavailable(
        "this browser offers WebGPU but no adapter (GPU blocklisted or disabled; Chromium "
        "needs --enable-unsafe-webgpu on Linux)"
    )


def _no_gpu() -> BackendUnavailable:
    runtime = js_runtime()
    if runtime is not None:
        return BackendUnavailable(
            f"{runtime} has no WebGPU (navigator.gpu is missing; Deno and browsers have it, "
            "Node.js does not): use the wasm device here"
        )
    return BackendUnavailable(
        "navigator.gpu is missing: this browser has no WebGPU, or the page is not a secure "
        "context (serve it from https:// or http://localhost)"
    )


async def open_device_async(
    power_preference: str, probe: Callable[[BrowserWebGPU], Awaitable[None]]
) -> BrowserWebGPU:
    """Open the WebGPU device without blocking (works under plain `runPython` + `await`).

    `probe` (the runtime's start-up probes, awaited here since the backend's sync probes cannot
    wait) runs on the new device before it becomes the one `open_device` returns.
    """
    global _DEVICE
    if _DEVICE is None or _DEVICE.lost is not None:
        if not _has_webgpu():
            raise _no_gpu()
        info = await _helper().init(power_preference)
        if info is None:
            raise _no_adapter()
        device = BrowserWebGPU(info)
        await probe(device)
        _DEVICE = device
    return _DEVICE


def open_device() -> BrowserWebGPU:
    """The device for the backend factory: ready (a fresh one once the last was lost), opened
    through JSPI, or a clear error."""
    global _DEVICE
    if _DEVICE is not None and _DEVICE.lost is None:
        return _DEVICE
    if not _has_webgpu():
        raise _no_gpu()
    info = _wait(_helper().init("high-performance"), "`await webjax.init_webgpu_async()` first")
    if info is None:
        raise _no_adapter()
    _DEVICE = BrowserWebGPU(info)
    return _DEVICE
