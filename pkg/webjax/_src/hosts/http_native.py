"""HTTP reads and a file cache natively (CPython): the same calls as http_browser.py.

Range reads go through urllib with a `Range:` header. The cache, the native stand-in for the
browser's Cache API, is a directory: $WEBJAX_CACHE_DIR, else ~/.cache/webjax, one folder per
cache name and one file per URL (named by the URL's SHA-256), written under a temporary name
and renamed when complete, so an interrupted download never looks cached.
"""

from __future__ import annotations

import hashlib
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

_CHUNK = 1 << 20
_TIMEOUT_S = 60


def _fail(url: str, e: Exception) -> OSError:
    if isinstance(e, urllib.error.HTTPError):
        return OSError(f"GET {url}: HTTP {e.code} {e.reason}")
    return OSError(f"GET {url}: {getattr(e, 'reason', e)}")


def range_read(url: str, start: int, end: int) -> tuple[int, int | None, bytes]:
    """(HTTP status, the file's size from Content-Range or None, body) for bytes [start, end)."""
    request = urllib.request.Request(url, headers={"Range": f"bytes={start}-{end - 1}"})
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as r:
            found = re.search(r"/(\d+)\s*$", r.headers.get("Content-Range") or "")
            return r.status, int(found.group(1)) if found else None, r.read()
    except (urllib.error.URLError, OSError) as e:
        raise _fail(url, e) from None


async def range_read_async(url: str, start: int, end: int) -> tuple[int, int | None, bytes]:
    return range_read(url, start, end)


def cache_dir(cache: str) -> Path:
    root = os.environ.get("WEBJAX_CACHE_DIR") or Path.home() / ".cache" / "webjax"
    return Path(root) / cache


def cache_path(cache: str, url: str) -> Path:
    return cache_dir(cache) / hashlib.sha256(url.encode()).hexdigest()


def cache_lookup(cache: str, url: str) -> Path | None:
    path = cache_path(cache, url)
    return path if path.is_file() else None


async def cache_lookup_async(cache: str, url: str) -> Path | None:
    return cache_lookup(cache, url)


def download(cache: str, url: str, progress: Callable[[int, int | None], None] | None) -> int:
    """Fetch all of `url` into the cache (calling `progress(loaded, total)` per chunk); the
    number of bytes stored."""
    path = cache_path(cache, url)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    loaded = 0
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as r, partial.open("wb") as f:
            length = r.headers.get("Content-Length")
            total = int(length) if length is not None else None
            while chunk := r.read(_CHUNK):
                f.write(chunk)
                loaded += len(chunk)
                if progress is not None:
                    progress(loaded, total)
        partial.replace(path)
    except (urllib.error.URLError, OSError) as e:
        partial.unlink(missing_ok=True)
        raise _fail(url, e) from None
    return loaded


async def download_async(
    cache: str, url: str, progress: Callable[[int, int | None], None] | None
) -> int:
    return download(cache, url, progress)


def evict(cache: str, url: str) -> bool:
    path = cache_path(cache, url)
    if not path.is_file():
        return False
    path.unlink()
    return True


async def evict_async(cache: str, url: str) -> bool:
    return evict(cache, url)
