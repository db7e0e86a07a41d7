"""The backend protocol every device implements, device objects and the backend registry.

A backend owns untyped byte buffers and runs kernels (ir.kernel.Kernel) on them:
`prepare(kernel)` compiles (cached by the kernel value), `dispatch(exe, inputs, output)` queues
the work, `read`/`read_async` bring bytes back. Work may run asynchronously; reads wait for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .. import config as _config
from ..dtypes import DType
from ..hosts import BackendUnavailable, SyncReadError  # raised by hosts; importable from here too
from ..ir.kernel import Kernel


class Backend:
    platform: str = "?"
    max_args: int = 1 << 30  # input buffers per kernel
    max_buffer_bytes: int = 1 << 31
    # Whether a kernel may write the buffer it reads, element for element (in-place updates
    # into donated buffers). WebGPU forbids binding one buffer as both read and read-write.
    kernels_may_alias: bool = False
    # Whether a program may keep a reduction fused through a transpose after it (its output
    # written in another order): the tiled products of wgsl and glsl write any output layout;
    # wasm's tiled product writes row-major rows, so there a transposed product is computed
    # first and the transpose reads it (else it falls to the scalar reduction loop).
    fuses_transposed_reductions: bool = True

    def supports_dtype(self, dtype: DType) -> bool:
        return True

    def memory_stats(self) -> dict[str, int] | None:
        """JAX's `Device.memory_stats()`: bytes_in_use, peak_bytes_in_use, num_allocs and what
        else the backend knows (None where it keeps no account, as JAX's CPU client)."""
        return None

    # memory -------------------------------------------------------------------------------
    def malloc(self, nbytes: int) -> Any:
        raise NotImplementedError

    def free(self, handle: Any) -> None:
        raise NotImplementedError

    def write(self, handle: Any, data: bytes | bytearray | memoryview) -> None:
        raise NotImplementedError

    def read(self, handle: Any, nbytes: int) -> bytes:
        raise NotImplementedError

    async def read_async(self, handle: Any, nbytes: int) -> bytes:
        return self.read(handle, nbytes)

    # kernels ------------------------------------------------------------------------------
    def prepare(self, kernel: Kernel) -> Any:
        raise NotImplementedError

    async def prepare_async(self, kernel: Kernel) -> Any:
        return self.prepare(kernel)

    def dispatch(self, exe: Any, inputs: list[Any], output: Any) -> None:
        raise NotImplementedError

    def synchronize(self) -> None:
        """Block until all dispatched work finished (no-op for synchronous backends)."""

    async def synchronize_async(self) -> None:
        self.synchronize()


class Device:
    """A device as JAX shows it: `jax.devices()` entries, `x.device`."""

    _class_names = {
        "cpu": "CpuDevice",
        "wasm": "WasmDevice",
        "webgpu": "WebGPUDevice",
        "webgl": "WebGLDevice",
    }

    def __init__(self, platform: str, id: int = 0) -> None:
        self.platform = platform
        self.id = id
        self.process_index = 0
        # the backend this device object stands for: after clear_backends() a new device
        # object gets the new backend, and the old one (with its arrays) keeps the old
        self._backend: Backend | None = None
        self._generation = _GENERATION[0]

    @property
    def device_kind(self) -> str:
        return self.platform

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._backend = get_backend(self.platform)
        return self._backend

    def memory_stats(self) -> dict[str, int] | None:
        """The backend's memory account (`bytes_in_use`, `peak_bytes_in_use`, `num_allocs`,
        `pool_bytes`, and `bytes_reserved`/`bytes_limit` on wasm), or None (cpu)."""
        return self.backend.memory_stats()

    def __repr__(self) -> str:
        return f"{self._class_names.get(self.platform, 'Device')}(id={self.id})"

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (self.platform, self.id, self._generation) == (
            other.platform,
            other.id,
            other._generation,
        )

    def __hash__(self) -> int:
        return hash((self.platform, self.id))


# ---- registry ---------------------------------------------------------------------------------
# platform -> factory; the factory raises BackendUnavailable when the host lacks it.
_FACTORIES: dict[str, Callable[[], Backend]] = {}
_PRIORITY: list[str] = []  # preferred default first
_BACKENDS: dict[str, Backend] = {}
_UNAVAILABLE: dict[str, str] = {}
_DEVICES: dict[str, Device] = {}
_GENERATION = [0]  # bumped by clear_backends: devices of different generations differ


_PRIORITY_VALUE: dict[str, int] = {}


def register_backend(platform: str, factory: Callable[[], Backend], priority: int) -> None:
    """Higher priority wins the default device when available."""
    _FACTORIES[platform] = factory
    _PRIORITY_VALUE[platform] = priority
    _PRIORITY[:] = sorted(_FACTORIES, key=lambda p: -_PRIORITY_VALUE[p])


def known_platforms() -> list[str]:
    return list(_PRIORITY)


def get_backend(platform: str) -> Backend:
    backend = _BACKENDS.get(platform)
    if backend is not None:
        return backend
    if platform not in _FACTORIES:
        raise RuntimeError(
            f"Unknown backend '{platform}'. webjax knows: {', '.join(known_platforms())}."
        )
    if platform in _UNAVAILABLE:
        raise RuntimeError(f"Backend '{platform}' is not available: {_UNAVAILABLE[platform]}")
    try:
        backend = _FACTORIES[platform]()
    except SyncReadError:
        raise  # not a verdict on the host: the async initialisation can still succeed
    except BackendUnavailable as e:
        _UNAVAILABLE[platform] = str(e)
        raise RuntimeError(f"Backend '{platform}' is not available: {e}") from None
    _BACKENDS[platform] = backend
    return backend


def clear_backends() -> None:
    """Forget every backend and device made so far: the next use makes them again, probing
    each host afresh (a lost WebGL context is replaced by a new one). Device objects and arrays
    made before keep the backend they had: on a lost context they raise, naming the loss; they
    differ from the new devices (`jax.devices()` gives the new ones)."""
    _BACKENDS.clear()
    _UNAVAILABLE.clear()
    _DEVICES.clear()
    _DEFAULT.clear()
    _UNSETTLED.clear()
    _GENERATION[0] += 1


def unavailable_reason(platform: str) -> str | None:
    """Why `platform` cannot be used here (None if it can): it failed to start, or
    `jax_platforms` leaves it out."""
    wanted = requested_platforms()
    if wanted is not None and platform not in wanted:
        return f"not in jax_platforms ({','.join(wanted)})"
    return _unavailable(platform)


def _unavailable(platform: str) -> str | None:
    try:
        get_backend(platform)
    except SyncReadError as e:
        _UNSETTLED.add(platform)
        return str(e)
    except RuntimeError:
        return _UNAVAILABLE.get(platform, f"unknown backend '{platform}'")
    return None


def available_platforms() -> list[str]:
    """The platforms this host runs, best first (only those of `jax_platforms` where set, in
    its order)."""
    wanted = requested_platforms()
    if wanted is not None:
        return [p for p in wanted if p in _FACTORIES and _unavailable(p) is None]
    return [p for p in _PRIORITY if _unavailable(p) is None]


def device(platform: str) -> Device:
    backend = get_backend(platform)
    if platform not in _DEVICES:
        _DEVICES[platform] = Device(platform, 0)
        _DEVICES[platform]._backend = backend
    return _DEVICES[platform]


_DEFAULT: dict[tuple[Any, ...], str] = {}
_ENV_PLATFORM = os.environ.get("WEBJAX_PLATFORM", "")  # webjax's own: preferred, else the best
_UNSETTLED: set[str] = set()  # platforms whose start raised SyncReadError (may start later)


def requested_platforms() -> list[str] | None:
    """The platforms `jax_platforms` (JAX_PLATFORMS) allows, best first; None when unset."""
    wanted = _config.jax_platforms.value
    if not wanted:
        return None
    return [p.strip() for p in str(wanted).split(",") if p.strip()] or None


def _platform_error(platform: str) -> Exception | None:
    """JAX's error for a platform of `jax_platforms` that cannot start, or None."""
    hint = " (set JAX_PLATFORMS='' to automatically choose an available backend)"
    if platform not in _FACTORIES:
        return RuntimeError(
            f"Unable to initialize backend '{platform}': Backend '{platform}' is not in the "
            f"list of known backends: {known_platforms()}.{hint}"
        )
    reason = _unavailable(platform)
    if reason is None:
        return None
    if platform in _UNSETTLED:  # webgpu in a page before its async start: say how to start it
        return SyncReadError(reason)
    return RuntimeError(f"Unable to initialize backend '{platform}': {reason}{hint}")


def check_allowed(platform: str) -> None:
    """`jax.devices(platform)` for a platform left out of `jax_platforms`: JAX's error."""
    wanted = requested_platforms()
    if wanted is not None and platform not in wanted:
        raise RuntimeError(f"Unknown backend {platform}. Available backends are {wanted}")


def default_platform() -> str:
    """The first platform of jax_platforms (all must start), else jax_platform_name, else
    WEBJAX_PLATFORM where available, else the best available backend. Remembered until the
    settings or the registry change (every eager op asks)."""
    wanted = _config.jax_platforms.value
    named = _config.config.read("jax_platform_name")
    key = (wanted, named, len(_FACTORIES), len(_BACKENDS), len(_UNAVAILABLE))
    platform = _DEFAULT.get(key)
    if platform is None:
        _UNSETTLED.clear()
        platform = _pick_default(requested_platforms(), named)
        if not _UNSETTLED:  # no backend said "not yet" (webgpu before its async start)
            _DEFAULT[key] = platform
    return platform


def _pick_default(wanted: list[str] | None, named: str) -> str:
    if wanted is not None:
        for p in wanted:
            err = _platform_error(p)
            if err is not None:
                raise err
        return named if named in wanted else wanted[0]
    if named:
        reason = _unavailable(named)
        if reason is not None:
            raise RuntimeError(
                f"Unknown backend {named}. Available backends are {available_platforms()}"
            )
        return named
    for p in [w.strip() for w in _ENV_PLATFORM.split(",") if w.strip()]:
        if _unavailable(p) is None:
            return p
    avail = available_platforms()
    if not avail:
        raise RuntimeError("no webjax backend is available on this host")
    return avail[0]
