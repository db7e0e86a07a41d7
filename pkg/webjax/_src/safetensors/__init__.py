"""`webjax.safetensors`: load and save the safetensors format, eagerly or a tensor at a time.

`load(source)` reads every tensor of bytes, a path or a URL into arrays; `open(source)` reads
the header and then each tensor (or a slice of one) on request, like the reference package's
`safe_open`; `save(tree)` writes a pytree of arrays, naming leaves by their key paths joined
with '.' (`params.Dense_0.kernel`), byte for byte as the reference package writes the same
tensors. In the browser a URL is read with HTTP range requests, and `download(url)` keeps a
whole file in the Cache API so that it opens offline. Format: format.py; dtypes: convert.py;
byte sources and the network: sources.py (over hosts/http_*.py).
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Iterator
from typing import Any

from ..tree_util import keystr, tree_flatten_with_path, tree_unflatten
from . import convert, sources
from .format import (
    METADATA_KEY,
    FileDType,
    Header,
    SafetensorError,
    TensorInfo,
    check_metadata,
    header_length,
    parse_header,
    write_header,
)
from .sources import DEFAULT_CACHE

Progress = Callable[[int, "int | None"], None] | bool | None


# ---- opening ----------------------------------------------------------------------------------
def _read_header(source: Any) -> Header:
    n = header_length(source.read(0, min(8, source.size)), source.size)
    return parse_header(source.read(8, 8 + n), source.size)


async def _read_header_async(source: Any) -> Header:
    n = header_length(await source.read_async(0, min(8, source.size)), source.size)
    return parse_header(await source.read_async(8, 8 + n), source.size)


def _check_framework(framework: str) -> None:
    if framework not in convert.FRAMEWORKS:
        raise ValueError(f"framework must be one of {convert.FRAMEWORKS}, got {framework!r}")


class SafeOpen:
    """An open safetensors file: the header is read, tensors are read when asked for.

    A context manager (`with webjax.safetensors.open(path) as f: f.get_tensor("w")`); `close`
    releases the file. `framework="numpy"` gives NumPy arrays instead of webjax arrays.
    """

    def __init__(self, source: Any, header: Header, framework: str, device: Any) -> None:
        self._source = source
        self._header = header
        self.framework = framework
        self.device = device

    @property
    def source(self) -> Any:
        """Where the bytes come from (for a URL: its `requests` counts the reads made)."""
        return self._source

    def keys(self) -> list[str]:
        """Tensor names, sorted (as the reference package lists them)."""
        return sorted(self._header.tensors)

    def offset_keys(self) -> list[str]:
        """Tensor names in the order of their data in the file."""
        return [t.name for t in sorted(self._header.tensors.values(), key=lambda t: t.start)]

    def metadata(self) -> dict[str, str] | None:
        return None if self._header.metadata is None else dict(self._header.metadata)

    def __contains__(self, name: object) -> bool:
        return name in self._header.tensors

    def __iter__(self) -> Iterator[str]:
        return iter(self.offset_keys())

    def __len__(self) -> int:
        return len(self._header.tensors)

    def info(self, name: str) -> TensorInfo:
        """Where tensor `name` lies in the file, its file dtype and its shape."""
        self._check_open()
        try:
            return self._header.tensors[name]
        except KeyError:
            raise KeyError(f"no tensor named {name!r} in {self._source.description}") from None

    def get_tensor(self, name: str) -> Any:
        """Tensor `name`, reading only its bytes."""
        info = self.info(name)
        data = self._source.read(info.start, info.end)
        return convert.convert(data, info, self.framework, self.device)

    async def get_tensor_async(self, name: str) -> Any:
        info = self.info(name)
        data = await self._source.read_async(info.start, info.end)
        return convert.convert(data, info, self.framework, self.device)

    def get_slice(self, name: str) -> TensorSlice:
        """A view of tensor `name` that reads only the bytes an index touches (`[0:2, 5]`)."""
        return TensorSlice(self, self.info(name))

    def tensors(self) -> dict[str, Any]:
        """Every tensor, reading all the data in one pass (one request for a URL)."""
        return _all_tensors(self, self._read_data())

    async def tensors_async(self) -> dict[str, Any]:
        return _all_tensors(self, await self._read_data_async())

    def _data_span(self) -> tuple[int, int]:
        self._check_open()
        return self._header.data_start, self._header.file_size

    def _read_data(self) -> bytes:
        return self._source.read(*self._data_span())

    async def _read_data_async(self) -> bytes:
        return await self._source.read_async(*self._data_span())

    def _check_open(self) -> None:
        if self._source is None:
            raise ValueError("the safetensors file is closed")

    def close(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None

    def __enter__(self) -> SafeOpen:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        where = "closed" if self._source is None else self._source.description
        return f"<webjax.safetensors file {where}: {len(self)} tensors>"


def _all_tensors(f: SafeOpen, data: bytes) -> dict[str, Any]:
    base = f._header.data_start
    view = memoryview(data)
    out = {}
    for name in f.offset_keys():
        info = f._header.tensors[name]
        chunk = view[info.start - base : info.end - base].tobytes()
        out[name] = convert.convert(chunk, info, f.framework, f.device)
    return out


class TensorSlice:
    """`f.get_slice(name)`: shape and dtype without reading; indexing reads the covering bytes.

    Basic indexing only (ints, slices with any step, `...`), as the reference package allows.
    """

    def __init__(self, file: SafeOpen, info: TensorInfo) -> None:
        self._file = file
        self._info = info

    def get_shape(self) -> list[int]:
        return list(self._info.shape)

    def get_dtype(self) -> str:
        return self._info.dtype.name

    @property
    def shape(self) -> tuple[int, ...]:
        return self._info.shape

    def __len__(self) -> int:
        if not self._info.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._info.shape[0]

    def __getitem__(self, index: Any) -> Any:
        dims, out_shape = _basic_index(index, self._info.shape)
        first, last = _element_span(dims, self._info.shape)
        size = self._info.dtype.bits // 8
        if size == 0 or self._info.dtype.bits % 8:
            raise TypeError(f"slices of {self._info.dtype.name} tensors are not supported")
        f = self._file
        f._check_open()
        if first is None:  # nothing selected
            data = b""
        else:
            start = self._info.start + first * size
            covering = f._source.read(start, self._info.start + (last + 1) * size)
            data = _gather(covering, dims, self._info.shape, first, size)
        shaped = TensorInfo(self._info.name, self._info.dtype, out_shape, 0, len(data))
        return convert.convert(data, shaped, f.framework, f.device)


def _basic_index(index: Any, shape: tuple[int, ...]) -> tuple[list[range | int], tuple[int, ...]]:
    """Per dimension an int or a range of positions; and the result's shape."""
    items = list(index) if isinstance(index, tuple) else [index]
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [slice(None)] * (len(shape) - len(items) + 1)
    if len(items) > len(shape):
        raise IndexError(
            f"too many indices for tensor: tensor is {len(shape)}-dimensional, but "
            f"{len(items)} were indexed"
        )
    items += [slice(None)] * (len(shape) - len(items))
    dims: list[range | int] = []
    out_shape: list[int] = []
    for axis, (item, n) in enumerate(zip(items, shape, strict=True)):
        if isinstance(item, slice):
            r = range(*item.indices(n))
            dims.append(r)
            out_shape.append(len(r))
        elif hasattr(item, "__index__") and not isinstance(item, bool):
            i = item.__index__()
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            dims.append(i % n)
        else:
            raise TypeError(
                f"safetensors slices take ints, slices and '...', got {type(item).__name__}"
            )
    return dims, tuple(out_shape)


def _element_span(dims: list[range | int], shape: tuple[int, ...]) -> tuple[int | None, int]:
    """Flat indices of the first and last element selected (None where nothing is)."""
    lo, hi = [], []
    for d in dims:
        if isinstance(d, int):
            lo.append(d)
            hi.append(d)
        elif len(d) == 0:
            return None, -1
        else:
            lo.append(min(d[0], d[-1]))
            hi.append(max(d[0], d[-1]))
    return _flat(lo, shape), _flat(hi, shape)


def _flat(position: list[int], shape: tuple[int, ...]) -> int:
    flat = 0
    for p, n in zip(position, shape, strict=True):
        flat = flat * n + p
    return flat


_VIEW_FORMATS = {1: "B", 2: "H", 4: "I", 8: "Q"}


def _gather(
    data: bytes, dims: list[range | int], shape: tuple[int, ...], first: int, size: int
) -> bytes:
    """The selected elements of `data`, which holds elements `first`... of a row-major tensor
    of `shape`: a strided memoryview slice per innermost run."""
    if not dims:
        return data
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    view = memoryview(data).cast(_VIEW_FORMATS[size])  # type: ignore[call-overload]
    parts: list[bytes] = []
    innermost = len(dims) - 1

    def walk(axis: int, offset: int) -> None:  # offset: element index of this block's origin
        d = dims[axis]
        if axis < innermost:
            for i in [d] if isinstance(d, int) else d:
                walk(axis + 1, offset + i * strides[axis])
        elif isinstance(d, int):
            parts.append(view[offset + d : offset + d + 1].tobytes())
        else:
            lo, hi = offset + d[0], offset + d[-1]  # first and last element, in reading order
            stop = hi + 1 if d.step > 0 else (hi - 1 if hi > 0 else None)
            parts.append(view[lo : stop : d.step].tobytes())

    walk(0, -first)
    return b"".join(parts)


def open(
    source: bytes | str | os.PathLike[str],
    framework: str = "webjax",
    *,
    device: Any = None,
    cache: str | None = DEFAULT_CACHE,
) -> SafeOpen:
    """Open a safetensors file (bytes, a path, or an http(s) URL; in the browser also a URL
    relative to the page where no such file exists locally) and read its header.

    `device`: where arrays go (default: the default device, uncommitted). For a URL, `cache`
    names the cache that `download` fills (checked first; None: always the network)."""
    _check_framework(framework)
    src = sources.open_source(source, cache)
    try:
        header = _read_header(src)
    except BaseException:
        src.close()
        raise
    return SafeOpen(src, header, framework, device)


safe_open = open


def open_url(
    url: str, framework: str = "webjax", *, device: Any = None, cache: str | None = DEFAULT_CACHE
) -> SafeOpen:
    """`open` for a URL (in the browser also a relative one, resolved against the page)."""
    _check_framework(framework)
    source = sources.open_url(url, cache)
    try:
        header = _read_header(source)
    except BaseException:
        source.close()
        raise
    return SafeOpen(source, header, framework, device)


async def open_async(
    source: bytes | str | os.PathLike[str],
    framework: str = "webjax",
    *,
    device: Any = None,
    cache: str | None = DEFAULT_CACHE,
) -> SafeOpen:
    """`open` without blocking the page: for URLs in Pyodide where Python runs without JSPI
    (then read tensors with `await f.get_tensor_async(name)`)."""
    _check_framework(framework)
    if sources.is_url(source):
        assert isinstance(source, str)
        src = await sources.open_url_async(source, cache)
    else:
        src = sources.open_source(source, cache)
    try:
        header = await _read_header_async(src)
    except BaseException:
        src.close()
        raise
    return SafeOpen(src, header, framework, device)


# ---- loading ----------------------------------------------------------------------------------
def load(
    source: bytes | str | os.PathLike[str],
    framework: str = "webjax",
    *,
    device: Any = None,
    cache: str | None = DEFAULT_CACHE,
) -> dict[str, Any]:
    """Every tensor of a safetensors file (bytes, a path, or an http(s) URL), by name, in the
    file's order."""
    with open(source, framework, device=device, cache=cache) as f:
        if isinstance(f.source, sources.FileSource):  # a tensor in memory at a time
            return {name: f.get_tensor(name) for name in f.offset_keys()}
        return f.tensors()


def load_url(
    url: str, framework: str = "webjax", *, device: Any = None, cache: str | None = DEFAULT_CACHE
) -> dict[str, Any]:
    """`load` for a URL: the header, then all the data in one range request (or from the cache
    that `download` fills)."""
    with open_url(url, framework, device=device, cache=cache) as f:
        return f.tensors()


async def load_async(
    source: bytes | str | os.PathLike[str],
    framework: str = "webjax",
    *,
    device: Any = None,
    cache: str | None = DEFAULT_CACHE,
) -> dict[str, Any]:
    """`load` without blocking the page (a URL's data in one request, as `load_url`)."""
    f = await open_async(source, framework, device=device, cache=cache)
    with f:
        return await f.tensors_async()


# ---- downloading ------------------------------------------------------------------------------
def _progress_callback(progress: Progress, url: str) -> Callable[[int, int | None], None] | None:
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    shown = [-1]

    def report(loaded: int, total: int | None) -> None:
        if total:
            percent = 100 * loaded // total
            if percent // 10 > shown[0] or loaded == total:
                shown[0] = percent // 10
                print(f"{url}: {loaded / 1e6:.1f} of {total / 1e6:.1f} MB ({percent}%)")
        elif loaded // (1 << 24) > shown[0]:
            shown[0] = loaded // (1 << 24)
            print(f"{url}: {loaded / 1e6:.1f} MB")

    return report


def _cached_size(found: Any) -> int:
    if isinstance(found, os.PathLike):
        return os.path.getsize(found)
    found.close()
    return int(found.size)


def download(
    url: str, *, progress: Progress = None, cache: str = DEFAULT_CACHE, refresh: bool = False
) -> int:
    """Fetch all of `url` into `cache` (the browser's Cache API; natively a directory, see
    hosts/http_native.py), so `open(url)`/`load(url)` later read it without the network. A URL
    already cached is not fetched again unless `refresh`. `progress`: a callable
    `(loaded_bytes, total_bytes_or_None)`, or True to print it. Returns the file's size."""
    host = sources.http_host()
    if not refresh:
        found = host.cache_lookup(cache, url)
        if found is not None:
            return _cached_size(found)
    return host.download(cache, url, _progress_callback(progress, url))


async def download_async(
    url: str, *, progress: Progress = None, cache: str = DEFAULT_CACHE, refresh: bool = False
) -> int:
    """`download` without blocking the page."""
    host = sources.http_host()
    if not refresh:
        found = await host.cache_lookup_async(cache, url)
        if found is not None:
            return _cached_size(found)
    return await host.download_async(cache, url, _progress_callback(progress, url))


def evict(url: str, *, cache: str = DEFAULT_CACHE) -> bool:
    """Drop `url` from `cache`; whether it was there."""
    return sources.http_host().evict(cache, url)


async def evict_async(url: str, *, cache: str = DEFAULT_CACHE) -> bool:
    return await sources.http_host().evict_async(cache, url)


# ---- saving -----------------------------------------------------------------------------------
def flatten(tree: Any) -> dict[str, Any]:
    """The leaves of `tree` by name: key paths joined with '.' (a flat dict keeps its keys)."""
    leaves, _ = tree_flatten_with_path(tree)
    out: dict[str, Any] = {}
    for path, leaf in leaves:
        name = keystr(path, simple=True, separator=".")
        if not name:
            raise ValueError("save needs named arrays: a dict or another pytree, not one array")
        if name in out:
            raise ValueError(f"two leaves are both named {name!r}: rename one")
        if name == METADATA_KEY:
            raise ValueError(f"{METADATA_KEY!r} names the header's metadata, not a tensor")
        out[name] = leaf
    return out


def unflatten(flat: dict[str, Any], like: Any = None) -> Any:
    """The nested dicts that '.'-joined names describe (`{"a.b": x}` -> `{"a": {"b": x}}`); or,
    given `like`, a pytree of its structure whose leaves are looked up by their names (the
    tensors of a file back into a model's parameters)."""
    if like is not None:
        return _fill_like(flat, like)
    out: dict[str, Any] = {}
    for name, value in flat.items():
        node = out
        *parents, leaf = name.split(".")
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ValueError(f"{name!r} nests under {part!r}, which is a tensor")
            node = child
        if leaf in node:
            raise ValueError(f"{name!r} is both a tensor and a prefix of other names")
        node[leaf] = value
    return out


def _fill_like(flat: dict[str, Any], like: Any) -> Any:
    leaves, tree = tree_flatten_with_path(like)
    names = [keystr(path, simple=True, separator=".") for path, _ in leaves]
    missing = [n for n in names if n not in flat]
    if missing:
        raise KeyError(f"no tensors named {missing[:5]} (of {len(missing)} missing)")
    extra = sorted(set(flat) - set(names))
    if extra:
        raise ValueError(f"tensors {extra[:5]} have no place in the given structure")
    for (_, leaf), name in zip(leaves, names, strict=True):
        want, got = getattr(leaf, "shape", None), getattr(flat[name], "shape", ())
        if want is not None and tuple(want) != tuple(got):
            raise ValueError(f"tensor {name!r} has shape {tuple(got)}, the structure {tuple(want)}")
    return tree_unflatten(tree, [flat[n] for n in names])


def save(
    tree: Any, path: str | os.PathLike[str] | None = None, *, metadata: dict[str, str] | None = None
) -> bytes | None:
    """Write the arrays of `tree` (webjax or NumPy arrays, or array-likes; a flat dict or a
    pytree, named by `flatten`) in the safetensors format: to `path` (returns None), or as bytes.
    `metadata` (str -> str) becomes the header's `__metadata__`."""
    meta = check_metadata(metadata)
    entries: list[tuple[str, FileDType, tuple[int, ...]]] = []
    datas: list[bytes] = []
    for name, leaf in flatten(tree).items():
        dtype, shape, data = convert.tensor_bytes(name, leaf)
        entries.append((name, dtype, shape))
        datas.append(data)
    head, order = write_header(entries, meta)
    if path is None:
        return b"".join([head, *(datas[i] for i in order)])  # one copy
    with builtins.open(path, "wb") as f:
        f.write(head)
        for i in order:
            f.write(datas[i])
    return None


__all__ = [
    "DEFAULT_CACHE",
    "SafeOpen",
    "SafetensorError",
    "TensorInfo",
    "TensorSlice",
    "download",
    "download_async",
    "evict",
    "evict_async",
    "flatten",
    "load",
    "load_async",
    "load_url",
    "open",
    "open_async",
    "open_url",
    "safe_open",
    "save",
    "unflatten",
]
