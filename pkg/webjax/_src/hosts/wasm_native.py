"""Native WebAssembly host: runs generated modules with wasmtime (PyPI `wasmtime`).

One Engine/Store and one linear memory shared by every kernel instance (imported as
("env", "memory")). Byte copies go straight through the memory's base pointer with ctypes
(memmove/string_at), re-read after every grow because growing may move the memory.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import weakref
from collections.abc import Callable
from typing import Any

PAGE = 65536
MAX_PAGES = 65536  # 4 GiB: the wasm32 limit


MAX_INSTANCES = 1 << 24


class WasmtimeHost:
    name = "wasmtime"

    def __init__(self) -> None:
        import wasmtime  # lazily: `import webjax` must work without it

        self._wt = wasmtime
        config = wasmtime.Config()
        with contextlib.suppress(AttributeError):  # relaxed SIMD: the codegen probes for it
            config.wasm_relaxed_simd = True
        self.engine = wasmtime.Engine(config)
        self.store = wasmtime.Store(self.engine)
        # One instance per compiled kernel lives in this store for the process's lifetime;
        # wasmtime's default cap (10,000 instances) is reached by long sessions.
        self.store.set_limits(instances=MAX_INSTANCES)
        self.memory = wasmtime.Memory(
            self.store, wasmtime.MemoryType(wasmtime.Limits(1, MAX_PAGES))
        )
        self._base = 0
        self._objects: list[Any] = []  # modules and instances, closed before interpreter exit
        self._refresh()
        atexit.register(_close_at_exit, weakref.ref(self))

    def close(self) -> None:
        """Free the engine's objects now: wasmtime's finalizers fail during interpreter exit."""
        for obj in [*reversed(self._objects), self.memory, self.store, self.engine]:
            with contextlib.suppress(Exception):
                obj.close()
        self._objects.clear()

    def _refresh(self) -> None:
        ptr = self.memory.data_ptr(self.store)
        self._base = ctypes.cast(ptr, ctypes.c_void_p).value or 0
        self.nbytes = self.memory.data_len(self.store)

    # -- memory -----------------------------------------------------------------------------
    def grow_to(self, nbytes: int) -> None:
        """Make the memory at least `nbytes` long (whole pages)."""
        if nbytes <= self.nbytes:
            return
        pages = -(-nbytes // PAGE)
        if pages > MAX_PAGES:
            raise MemoryError(f"wasm memory limit (4 GiB) exceeded: {nbytes} bytes requested")
        self.memory.grow(self.store, pages - self.nbytes // PAGE)
        self._refresh()

    def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        if isinstance(data, bytes):
            ctypes.memmove(self._base + offset, data, len(data))
            return
        mv = memoryview(data)
        n = mv.nbytes
        if n == 0:
            return
        if mv.readonly or not mv.c_contiguous:
            ctypes.memmove(self._base + offset, mv.tobytes(), n)
        else:
            ctypes.memmove(self._base + offset, (ctypes.c_char * n).from_buffer(mv), n)

    def read(self, offset: int, n: int) -> bytes:
        if n == 0:
            return b""
        return ctypes.string_at(self._base + offset, n)

    def fill(self, offset: int, byte: int, n: int) -> None:
        if n:
            ctypes.memset(self._base + offset, byte, n)

    # -- code ---------------------------------------------------------------------------------
    def validate(self, wasm: bytes) -> bool:
        """Whether this engine accepts `wasm` (feature probes: relaxed SIMD)."""
        try:
            self._wt.Module.validate(self.engine, wasm)
        except Exception:
            return False
        return True

    def instantiate(self, wasm: bytes, export: str) -> Callable[..., Any]:
        wt = self._wt
        module = wt.Module(self.engine, wasm)
        instance = wt.Instance(self.store, module, [self.memory])
        self._objects += [module, instance]
        fn = instance.exports(self.store)[export]
        fast = _fast_caller(self.store, fn, len(fn.type(self.store).params))
        if fast is not None:
            return fast
        store = self.store

        def call(*args: int) -> None:
            fn(store, *args)

        return call


def _close_at_exit(ref: weakref.ref[WasmtimeHost]) -> None:
    host = ref()
    if host is not None:
        host.close()


def _fast_caller(store: Any, fn: Any, nparams: int) -> Callable[..., None] | None:
    """A call through wasmtime's unchecked C entry point (all-i32 signatures, built by us).

    The public `Func.__call__` re-reads the function type and boxes every argument: about
    40 us per call. This path costs a few us. It leans on wasmtime-py internals (`_ffi`,
    `Store._context`, `Func._func`); when those are missing the public path is used.
    """
    try:
        from wasmtime import Trap, WasmtimeError
        from wasmtime import _ffi as ffi

        context = store._context()
        func_ref = ctypes.byref(fn._func)
        call_unchecked = ffi.wasmtime_func_call_unchecked
        raw = (ffi.wasmtime_val_raw_t * max(nparams, 1))()
        trap_t = ffi.wasm_trap_t
    except (ImportError, AttributeError):  # pragma: no cover - other wasmtime versions
        return None

    def call(*args: int) -> None:
        for i, a in enumerate(args):
            raw[i].i32 = a
        trap = ctypes.POINTER(trap_t)()
        error = call_unchecked(context, func_ref, raw, nparams, ctypes.byref(trap))
        if error:
            raise WasmtimeError._from_ptr(error)
        if trap:
            raise Trap._from_ptr(trap)

    return call


def available() -> str | None:
    """None when wasmtime can be used, else the reason it cannot."""
    try:
        import wasmtime  # noqa: F401
    except ImportError:
        return "the `wasmtime` Python package is not installed (pip install wasmtime)"
    return None
