"""HTTP reads and the Cache API in the browser (Pyodide), for loading model files.

`range_read` asks for bytes [start, end) of a URL with a `Range:` header (`fetch`); the server's
answer says whether it honoured the range (206 and Content-Range, whose total is the file's
size) or sent the whole file (200). The Cache API keeps whole files (`download`, with progress
from the response's stream), so a model fetched once opens offline; a cached file is read
through `Blob.slice`, one tensor at a time, like the network.

`fetch` and the Cache API are promises. Python waits for them synchronously through JSPI
(`pyodide.ffi.run_sync`, when Python was entered through `runPythonAsync`); without JSPI, range
reads fall back to a synchronous XMLHttpRequest (binary through the x-user-defined charset),
and the Cache API, which has no synchronous form, raises SyncReadError naming the async call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import SyncReadError

_HELPER_JS = r"""
(() => {
  function rangeHeader(start, end) { return `bytes=${start}-${end - 1}`; }
  function total(contentRange) {
    const m = /\/(\d+)\s*$/.exec(contentRange || "");
    return m ? Number(m[1]) : -1;
  }
  function failed(url, status, statusText) {
    return new Error(`GET ${url}: HTTP ${status} ${statusText}`.trim());
  }
  return {
    async range(url, start, end) {
      const r = await fetch(url, {headers: {Range: rangeHeader(start, end)}});
      if (r.status !== 200 && r.status !== 206) throw failed(r.url || url, r.status, r.statusText);
      const body = new Uint8Array(await r.arrayBuffer());
      return [r.status, total(r.headers.get("Content-Range")), body];
    },
    rangeSync(url, start, end) {
      const x = new XMLHttpRequest();
      x.open("GET", url, false);
      x.setRequestHeader("Range", rangeHeader(start, end));
      x.overrideMimeType("text/plain; charset=x-user-defined");
      x.send();
      if (x.status !== 200 && x.status !== 206) throw failed(url, x.status, x.statusText);
      const text = x.responseText;
      const body = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) body[i] = text.charCodeAt(i) & 0xff;
      return [x.status, total(x.getResponseHeader("Content-Range")), body];
    },
    async cached(cacheName, url) {
      if (typeof caches === "undefined") return undefined;
      const cache = await caches.open(cacheName);
      const r = await cache.match(url);
      return r ? await r.blob() : undefined;  // undefined is None in Python (null is not)
    },
    async slice(blob, start, end) {
      return new Uint8Array(await blob.slice(start, end).arrayBuffer());
    },
    async download(cacheName, url, progress) {
      if (typeof caches === "undefined") {
        throw new Error("the Cache API is not available (it needs a secure context: https "
                        + "or localhost)");
      }
      const r = await fetch(url);
      if (!r.ok) throw failed(r.url || url, r.status, r.statusText);
      const length = Number(r.headers.get("Content-Length") || -1);
      const reader = r.body.getReader();
      const chunks = [];
      let loaded = 0;
      for (;;) {
        const {done, value} = await reader.read();
        if (done) break;
        chunks.push(value);
        loaded += value.length;
        if (progress) progress(loaded, length);
      }
      const blob = new Blob(chunks);
      const headers = {"Content-Length": String(blob.size),
                       "Content-Type": r.headers.get("Content-Type") || "application/octet-stream"};
      const cache = await caches.open(cacheName);
      await cache.put(url, new Response(blob, {headers}));
      return blob.size;
    },
    async evict(cacheName, url) {
      if (typeof caches === "undefined") return false;
      return await (await caches.open(cacheName)).delete(url);
    },
  };
})()
"""
_HELPER: Any = None


def _helper() -> Any:
    global _HELPER
    if _HELPER is None:
        from pyodide.code import run_js

        _HELPER = run_js(_HELPER_JS)
    return _HELPER


def _can_wait() -> bool:
    from pyodide.ffi import can_run_sync

    return bool(can_run_sync())


def _wait(start: Callable[[], Any], what: str) -> Any:
    """The value of the promise that `start()` makes, waited for through JSPI. Without JSPI
    SyncReadError, before anything starts (a started download would go on unseen)."""
    from pyodide.ffi import run_sync

    if not _can_wait():
        raise SyncReadError(
            f"{what} cannot wait for the browser here (Python was entered through plain "
            "pyodide.runPython, without JSPI): run it through pyodide.runPythonAsync, or use "
            f"the async call (`await webjax.safetensors.{what}_async(...)`)"
        )
    return run_sync(start())


def _js_error(e: Exception) -> OSError:
    return OSError(str(e).removeprefix("Error: "))


def _answer(result: Any) -> tuple[int, int | None, bytes]:
    status, size, body = result
    return int(status), (None if int(size) < 0 else int(size)), bytes(body.to_bytes())


def range_read(url: str, start: int, end: int) -> tuple[int, int | None, bytes]:
    """(HTTP status, the file's size from Content-Range or None, body) for bytes [start, end)."""
    from pyodide.ffi import JsException

    try:
        if _can_wait():
            return _answer(_wait(lambda: _helper().range(url, start, end), "open"))
        return _answer(_helper().rangeSync(url, start, end))
    except JsException as e:
        raise _js_error(e) from None


async def range_read_async(url: str, start: int, end: int) -> tuple[int, int | None, bytes]:
    from pyodide.ffi import JsException

    try:
        return _answer(await _helper().range(url, start, end))
    except JsException as e:
        raise _js_error(e) from None


class CachedFile:
    """A file in the Cache API: a Blob, read a slice at a time."""

    def __init__(self, blob: Any) -> None:
        self.blob = blob
        self.size = int(blob.size)

    def read(self, start: int, end: int) -> bytes:
        return bytes(_wait(lambda: _helper().slice(self.blob, start, end), "open").to_bytes())

    async def read_async(self, start: int, end: int) -> bytes:
        return bytes((await _helper().slice(self.blob, start, end)).to_bytes())

    def close(self) -> None:
        self.blob = None  # a JsProxy: the Blob goes when the last reference does


def cache_lookup(cache: str, url: str) -> CachedFile | None:
    """The cached file of `url`, or None (also where the Cache API cannot be waited for)."""
    if not _can_wait():
        return None
    blob = _wait(lambda: _helper().cached(cache, url), "open")
    return None if blob is None else CachedFile(blob)


async def cache_lookup_async(cache: str, url: str) -> CachedFile | None:
    blob = await _helper().cached(cache, url)
    return None if blob is None else CachedFile(blob)


def _progress_proxy(progress: Callable[[int, int | None], None] | None) -> Any:
    if progress is None:
        return None
    from pyodide.ffi import create_proxy

    return create_proxy(lambda loaded, total: progress(int(loaded), None if total < 0 else total))


def download(cache: str, url: str, progress: Callable[[int, int | None], None] | None) -> int:
    """Fetch all of `url` into the Cache API (calling `progress(loaded, total)` per chunk);
    the number of bytes stored."""
    from pyodide.ffi import JsException

    proxy = _progress_proxy(progress)
    try:
        return int(_wait(lambda: _helper().download(cache, url, proxy), "download"))
    except JsException as e:
        raise _js_error(e) from None
    finally:
        if proxy is not None:
            proxy.destroy()


async def download_async(
    cache: str, url: str, progress: Callable[[int, int | None], None] | None
) -> int:
    from pyodide.ffi import JsException

    proxy = _progress_proxy(progress)
    try:
        return int(await _helper().download(cache, url, proxy))
    except JsException as e:
        raise _js_error(e) from None
    finally:
        if proxy is not None:
            proxy.destroy()


def evict(cache: str, url: str) -> bool:
    return bool(_wait(lambda: _helper().evict(cache, url), "evict"))


async def evict_async(cache: str, url: str) -> bool:
    return bool(await _helper().evict(cache, url))
