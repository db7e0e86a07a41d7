"""Where a file's bytes come from: memory, a local file, an HTTP URL or a cached download.

Every source reads a byte range [start, end) on demand, so a lazily opened file costs its
header plus the tensors asked for. A URL is read with `Range:` requests: the first asks for
the start of the file (`PREFIX` bytes, which usually hold the whole header, so opening is one
round trip), then one request per tensor. A server that ignores ranges answers 200 with the
whole file, which then serves every read from memory. The host module (hosts/http_browser.py
in Pyodide, hosts/http_native.py natively) does the I/O.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from ..hosts import in_browser

PREFIX = 1 << 16
DEFAULT_CACHE = "webjax-models"


def http_host() -> Any:
    if in_browser():
        from ..hosts import http_browser

        return http_browser
    from ..hosts import http_native

    return http_native


def is_url(source: Any) -> bool:
    """An http(s) URL; in the browser also any other string naming no file of Pyodide's file
    system (a URL relative to the page)."""
    if not isinstance(source, str):
        return False
    if source.startswith(("http://", "https://")):
        return True
    return in_browser() and not os.path.exists(source)


class BytesSource:
    def __init__(self, data: bytes | bytearray | memoryview, description: str = "bytes") -> None:
        self.data = memoryview(data).cast("B")
        self.size = self.data.nbytes
        self.description = description

    def read(self, start: int, end: int) -> bytes:
        return self.data[start:end].tobytes()

    async def read_async(self, start: int, end: int) -> bytes:
        return self.read(start, end)

    def close(self) -> None:
        self.data.release()


class FileSource:
    """A local file, kept open until `close` (reads are positioned, so threads may share it)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.description = os.fspath(path)
        self.file = Path(path).open("rb")  # noqa: SIM115  (open until close())
        self.size = os.fstat(self.file.fileno()).st_size
        self._lock = threading.Lock()

    def read(self, start: int, end: int) -> bytes:
        if self.file.closed:
            raise ValueError(f"the safetensors file {self.description} is closed")
        if hasattr(os, "pread"):
            data = os.pread(self.file.fileno(), end - start, start)
        else:
            with self._lock:
                self.file.seek(start)
                data = self.file.read(end - start)
        if len(data) != end - start:
            raise OSError(f"{self.description}: the file shrank while it was open")
        return data

    async def read_async(self, start: int, end: int) -> bytes:
        return self.read(start, end)

    def close(self) -> None:
        self.file.close()


class CachedSource:
    """A file from the browser's Cache API (hosts.http_browser.CachedFile)."""

    def __init__(self, cached: Any, url: str) -> None:
        self.cached = cached
        self.size = cached.size
        self.description = f"{url} (cached)"

    def read(self, start: int, end: int) -> bytes:
        return self.cached.read(start, end)

    async def read_async(self, start: int, end: int) -> bytes:
        return await self.cached.read_async(start, end)

    def close(self) -> None:
        self.cached.close()


class HttpSource:
    """A URL read in byte ranges; `prefix` is the answer to the first request."""

    def __init__(self, url: str, size: int, prefix: bytes) -> None:
        self.url = url
        self.size = size
        self.prefix = prefix
        self.description = url
        self.requests = 1  # range requests made (the first included)

    def read(self, start: int, end: int) -> bytes:
        if end <= len(self.prefix):
            return self.prefix[start:end]
        self.requests += 1
        return self._checked(start, end, http_host().range_read(self.url, start, end))

    async def read_async(self, start: int, end: int) -> bytes:
        if end <= len(self.prefix):
            return self.prefix[start:end]
        self.requests += 1
        return self._checked(start, end, await http_host().range_read_async(self.url, start, end))

    def _checked(self, start: int, end: int, answer: tuple[int, int | None, bytes]) -> bytes:
        status, _, body = answer
        if status == 200 and len(body) == self.size:  # the range was ignored
            self.prefix = body
            return body[start:end]
        if status != 206 or len(body) != end - start:
            raise OSError(
                f"GET {self.url} bytes {start}-{end - 1}: expected 206 with {end - start} bytes, "
                f"got {status} with {len(body)}"
            )
        return body

    def close(self) -> None:
        self.prefix = b""


def _from_first_answer(url: str, answer: tuple[int, int | None, bytes]) -> Any:
    status, size, body = answer
    if status == 200:  # no range support: this is the whole file
        return BytesSource(body, url)
    if size is None:
        raise OSError(f"GET {url}: a 206 answer without the file's size in Content-Range")
    return HttpSource(url, size, body)


def _cache_hit(found: Any, url: str) -> Any:
    if isinstance(found, os.PathLike):
        source = FileSource(found)
        source.description = f"{url} (cached at {source.description})"
        return source
    return CachedSource(found, url)


def open_url(url: str, cache: str | None) -> Any:
    host = http_host()
    if cache is not None:
        found = host.cache_lookup(cache, url)
        if found is not None:
            return _cache_hit(found, url)
    try:
        return _from_first_answer(url, host.range_read(url, 0, PREFIX))
    except OSError as e:
        if in_browser() and cache is not None and not host._can_wait():
            raise OSError(
                f"{e}; the Cache API (where `download` keeps files for offline use) cannot be "
                "read without JSPI: use `await webjax.safetensors.open_async(url)`"
            ) from None
        raise


async def open_url_async(url: str, cache: str | None) -> Any:
    host = http_host()
    if cache is not None:
        found = await host.cache_lookup_async(cache, url)
        if found is not None:
            return _cache_hit(found, url)
    return _from_first_answer(url, await host.range_read_async(url, 0, PREFIX))


def open_source(source: Any, cache: str | None) -> Any:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return BytesSource(source)
    if is_url(source):
        return open_url(source, cache)
    if isinstance(source, (str, os.PathLike)):
        return FileSource(source)
    kind = type(source).__name__
    raise TypeError(f"a safetensors source must be bytes, a path or an http(s) URL, got {kind}")
