"""WebGPU on CPython through wgpu-py (wgpu-native): Vulkan/Metal/D3D12, or Mesa lavapipe on CPU.

The host API shared with webgpu_browser.py: buffers, pipelines (explicit layouts, one cached per
binding count), a queue of dispatches encoded into one command buffer per `submit()`, and
reads through a staging buffer. `wgpu` is imported lazily so `import webjax` works without it.
"""

from __future__ import annotations

import os
import struct
from typing import Any

from . import BackendUnavailable

_MAX_GROUPS = 4096  # cached bind groups (the cache restarts when full)


class NativeWebGPU:
    """One wgpu device plus the queue of encoded-but-unsubmitted work."""

    def __init__(self, wgpu: Any, adapter: Any, device: Any) -> None:
        self._wgpu = wgpu
        self.adapter = adapter
        self.device = device
        self.description = str(adapter.summary)
        info = adapter.info
        self.is_cpu = str(info.get("adapter_type", "")).upper() == "CPU" or any(
            name in self.description.lower() for name in ("llvmpipe", "lavapipe", "swiftshader")
        )
        limits = device.limits
        self.max_storage_buffers = int(limits["max-storage-buffers-per-shader-stage"])
        self.max_buffer_bytes = min(
            int(limits["max-storage-buffer-binding-size"]), int(limits["max-buffer-size"])
        )
        self.max_workgroup_storage = int(limits["max-compute-workgroup-storage-size"])
        self.max_invocations = min(
            int(limits["max-compute-invocations-per-workgroup"]),
            int(limits["max-compute-workgroup-size-x"]),
        )
        self.exact: dict[str, int] | None = None  # which builtins round right (runtime probe)
        self.shader_f16 = "shader-f16" in device.features  # f16 in shaders and storage
        self.f16: dict[str, int] | None = None  # whether kernels bind float16 as f16 (probe)
        self.timestamps = "timestamp-query" in device.features  # GPU times in profiles
        bu = wgpu.BufferUsage
        self._usage = bu.STORAGE | bu.COPY_SRC | bu.COPY_DST
        self._layouts: dict[int, tuple[Any, Any]] = {}
        self._work: list[tuple[Any, ...]] = []
        self._probe: Any = None
        self._groups: dict[tuple[int, ...], Any] = {}
        self._groups_of: dict[int, list[tuple[int, ...]]] = {}  # buffer id -> its group keys

    # -- buffers -----------------------------------------------------------------------------
    def create_buffer(self, nbytes: int) -> Any:
        return self.device.create_buffer(size=nbytes, usage=self._usage)

    def destroy_buffer(self, buf: Any) -> None:
        for key in self._groups_of.pop(id(buf), ()):
            self._groups.pop(key, None)
        buf.destroy()

    def write_buffer(self, buf: Any, data: bytes | bytearray | memoryview) -> None:
        self.device.queue.write_buffer(buf, 0, data)

    def read_buffer(self, buf: Any, nbytes: int) -> bytes:
        size = -(-nbytes // 4) * 4
        if size == 0:
            return b""
        return bytes(self.device.queue.read_buffer(buf, 0, size))[:nbytes]

    async def read_buffer_async(self, buf: Any, nbytes: int) -> bytes:
        return self.read_buffer(buf, nbytes)

    # -- pipelines ---------------------------------------------------------------------------
    def _layout(self, nbindings: int) -> tuple[Any, Any]:
        layout = self._layouts.get(nbindings)
        if layout is None:
            w = self._wgpu
            entries = [
                {
                    "binding": i,
                    "visibility": w.ShaderStage.COMPUTE,
                    "buffer": {
                        "type": w.BufferBindingType.storage
                        if i == nbindings - 1
                        else w.BufferBindingType.read_only_storage
                    },
                }
                for i in range(nbindings)
            ]
            bgl = self.device.create_bind_group_layout(entries=entries)
            pl = self.device.create_pipeline_layout(bind_group_layouts=[bgl])
            layout = self._layouts[nbindings] = (bgl, pl)
        return layout

    def create_pipeline(self, source: str, nbindings: int) -> Any:
        _, pl = self._layout(nbindings)
        module = self.device.create_shader_module(code=source)
        return self.device.create_compute_pipeline(
            layout=pl, compute={"module": module, "entry_point": "main"}
        )

    async def create_pipeline_async(self, source: str, nbindings: int) -> Any:
        return self.create_pipeline(source, nbindings)

    # -- work --------------------------------------------------------------------------------
    def enqueue(
        self,
        pipeline: Any,
        nbindings: int,
        gx: int,
        gy: int,
        bufs: list[Any],
        stamps: tuple[Any, int | None, int | None] | None = None,
    ) -> None:
        """Queue a dispatch; `stamps` = (query set, index written at the start, at the end):
        the dispatch then gets a compute pass of its own with those timestamp writes."""
        # Bind groups are cached by their buffers (pooled buffers come back with the same
        # objects): creating one costs tens of microseconds through wgpu-py.
        key = (nbindings, *map(id, bufs))
        group = self._groups.get(key)
        if group is None:
            if len(self._groups) >= _MAX_GROUPS:
                self._groups.clear()
                self._groups_of.clear()
            bgl, _ = self._layout(nbindings)
            entries = [
                {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                for i, b in enumerate(bufs)
            ]
            group = self._groups[key] = self.device.create_bind_group(layout=bgl, entries=entries)
            for b in bufs:
                self._groups_of.setdefault(id(b), []).append(key)
        self._work.append((pipeline, group, gx, gy, stamps))

    def enqueue_copy(self, src: Any, dst: Any, nbytes: int) -> None:
        self._work.append((None, src, dst, nbytes))

    def submit(self) -> None:
        if not self._work:
            return
        encoder = self.device.create_command_encoder()
        cpass = None
        pipeline = group = None  # skip re-setting what is already bound (each call ~15 us)
        for item in self._work:
            if item[0] is None:  # a copy: outside any compute pass
                if cpass is not None:
                    cpass.end()
                    cpass = pipeline = group = None
                encoder.copy_buffer_to_buffer(item[1], 0, item[2], 0, item[3])
                continue
            if item[4] is not None:  # timed: a pass of its own
                if cpass is not None:
                    cpass.end()
                qs, begin, end = item[4]
                writes: dict[str, Any] = {"query_set": qs}
                if begin is not None:
                    writes["beginning_of_pass_write_index"] = begin
                if end is not None:
                    writes["end_of_pass_write_index"] = end
                cpass = encoder.begin_compute_pass(timestamp_writes=writes)
                pipeline = group = None
            elif cpass is None:
                cpass = encoder.begin_compute_pass()
            if item[0] is not pipeline:
                pipeline = item[0]
                cpass.set_pipeline(pipeline)
            if item[1] is not group:
                group = item[1]
                cpass.set_bind_group(0, group)
            cpass.dispatch_workgroups(item[2], item[3], 1)
            if item[4] is not None:
                cpass.end()
                cpass = pipeline = group = None
        if cpass is not None:
            cpass.end()
        self._work.clear()
        self.device.queue.submit([encoder.finish()])

    # -- timestamps (profiler) ----------------------------------------------------------------
    def create_query_set(self, count: int) -> Any:
        return self.device.create_query_set(type=self._wgpu.QueryType.timestamp, count=count)

    def read_timestamps(self, query_set: Any, count: int) -> list[int]:
        """Nanosecond timestamps 0..count-1 of `query_set` (after the work queued so far)."""
        bu = self._wgpu.BufferUsage
        buf = self.device.create_buffer(size=8 * count, usage=bu.QUERY_RESOLVE | bu.COPY_SRC)
        encoder = self.device.create_command_encoder()
        encoder.resolve_query_set(query_set, 0, count, buf, 0)
        self.device.queue.submit([encoder.finish()])
        data = bytes(self.device.queue.read_buffer(buf, 0, 8 * count))
        buf.destroy()
        return list(struct.unpack(f"<{count}Q", data))

    async def read_timestamps_async(self, query_set: Any, count: int) -> list[int]:
        return self.read_timestamps(query_set, count)

    def wait_idle(self) -> None:
        # A read completes after all submitted work (one queue, in order). wgpu-py 0.32's
        # on_submitted_work_done_sync() fails with its bundled wgpu-native, so read 4 bytes.
        if self._probe is None:
            self._probe = self.create_buffer(4)
        self.device.queue.read_buffer(self._probe, 0, 4)

    async def wait_idle_async(self) -> None:
        self.wait_idle()


def open_device() -> NativeWebGPU:
    """The best wgpu adapter's device, or BackendUnavailable saying why there is none.

    WEBJAX_WEBGPU_ADAPTER=<text> picks the first adapter whose summary contains the text.
    """
    try:
        import wgpu
    except ImportError as e:
        raise BackendUnavailable(f"the wgpu package (wgpu-py) is not installed ({e})") from None
    wanted = os.environ.get("WEBJAX_WEBGPU_ADAPTER", "").lower()
    try:
        if wanted:
            found = [a for a in wgpu.gpu.enumerate_adapters_sync() if wanted in a.summary.lower()]
            adapter = found[0] if found else None
        else:
            adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception as e:  # wgpu raises plain errors when no driver loads
        raise BackendUnavailable(f"wgpu found no GPU adapter: {e}") from None
    if adapter is None:
        what = f" matching WEBJAX_WEBGPU_ADAPTER={wanted!r}" if wanted else ""
        raise BackendUnavailable(
            f"wgpu found no GPU adapter{what} (on Linux without a GPU, install Mesa's "
            "lavapipe Vulkan driver: mesa-vulkan-drivers)"
        )
    al = adapter.limits
    limits = {
        k: al[k]
        for k in (
            "max-storage-buffers-per-shader-stage",
            "max-storage-buffer-binding-size",
            "max-buffer-size",
            "max-compute-workgroup-storage-size",
            "max-compute-invocations-per-workgroup",
            "max-compute-workgroup-size-x",
        )
    }
    # timestamps for the profiler; f16 storage for float16 buffers (where the probe passes)
    features = [f for f in ("timestamp-query", "shader-f16") if f in adapter.features]
    try:
        device = adapter.request_device_sync(required_features=features, required_limits=limits)
    except Exception as e:
        raise BackendUnavailable(f"wgpu could not open {adapter.summary}: {e}") from None
    return NativeWebGPU(wgpu, adapter, device)
