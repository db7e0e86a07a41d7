"""Browser WebAssembly host (Pyodide): generated modules run through the page's `WebAssembly`.

One `WebAssembly.Memory` shared by every kernel instance (imported as ("env", "memory")). Bytes
move with `JsBuffer.assign` / `to_bytes` on `Uint8Array` views (memcpy-speed, see DESIGN.md
section 2), never with `to_js` of large buffers. Growing the memory detaches every view of the
old ArrayBuffer, so the cached whole-memory view is rebuilt after each grow.

Chromium refuses synchronous `new WebAssembly.Module(bytes)` of large modules on the main
thread; then `instantiate` compiles asynchronously through JSPI (`run_sync`) when it can, and
`instantiate_async` is always available.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PAGE = 65536
MAX_PAGES = 65536  # 4 GiB


def _obj(**items: Any) -> Any:
    import js
    from pyodide.ffi import to_js

    return js.Object.fromEntries(to_js(list(items.items())))


class BrowserWasmHost:
    name = "browser"

    def __init__(self) -> None:
        import js

        self._js = js
        self.memory = js.WebAssembly.Memory.new(_obj(initial=1, maximum=MAX_PAGES))
        self._imports = _obj(env=_obj(memory=self.memory))
        self._refresh()

    def _refresh(self) -> None:
        self._u8 = self._js.Uint8Array.new(self.memory.buffer)
        self.nbytes = int(self._u8.length)

    # -- memory -----------------------------------------------------------------------------
    def grow_to(self, nbytes: int) -> None:
        if nbytes <= self.nbytes:
            return
        pages = -(-nbytes // PAGE)
        if pages > MAX_PAGES:
            raise MemoryError(f"wasm memory limit (4 GiB) exceeded: {nbytes} bytes requested")
        try:
            self.memory.grow(pages - self.nbytes // PAGE)
        except Exception as e:  # a RangeError when the browser refuses the allocation
            raise MemoryError(
                f"the browser refused to grow wasm memory to {nbytes} bytes: {e}"
            ) from None
        self._refresh()

    def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        mv = memoryview(data)
        if mv.nbytes == 0:
            return
        if not mv.c_contiguous or mv.format not in ("B", "b", "c"):
            mv = memoryview(mv.tobytes())
        self._u8.subarray(offset, offset + mv.nbytes).assign(mv)

    def read(self, offset: int, n: int) -> bytes:
        if n == 0:
            return b""
        out: bytes = self._u8.subarray(offset, offset + n).to_bytes()
        return out

    def fill(self, offset: int, byte: int, n: int) -> None:
        if n:
            self._u8.fill(byte, offset, offset + n)

    # -- code ---------------------------------------------------------------------------------
    def _bytes(self, wasm: bytes) -> Any:
        u8 = self._js.Uint8Array.new(len(wasm))
        u8.assign(wasm)
        return u8

    def _export(self, module: Any, export: str) -> Callable[..., Any]:
        instance = self._js.WebAssembly.Instance.new(module, self._imports)
        fn: Callable[..., Any] = getattr(instance.exports, export)
        return fn

    def validate(self, wasm: bytes) -> bool:
        """Whether this engine accepts `wasm` (feature probes: relaxed SIMD)."""
        try:
            return bool(self._js.WebAssembly.validate(self._bytes(wasm)))
        except Exception:
            return False

    def instantiate(self, wasm: bytes, export: str) -> Callable[..., Any]:
        WebAssembly = self._js.WebAssembly
        data = self._bytes(wasm)
        try:
            module = WebAssembly.Module.new(data)
        except Exception as e:
            if "RangeError" not in str(type(e)) + str(e):
                raise
            # too large for a synchronous compile on the main thread: compile asynchronously
            from pyodide.ffi import run_sync

            module = run_sync(WebAssembly.compile(data))
        return self._export(module, export)

    async def instantiate_async(self, wasm: bytes, export: str) -> Callable[..., Any]:
        module = await self._js.WebAssembly.compile(self._bytes(wasm))
        return self._export(module, export)


def available() -> str | None:
    try:
        import js
    except ImportError:
        return "not running in a browser (no `js` module)"
    if not hasattr(js, "WebAssembly"):
        return "this JavaScript engine has no WebAssembly"
    return None
