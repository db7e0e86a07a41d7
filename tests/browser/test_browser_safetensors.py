"""webjax.safetensors in Pyodide: a file written natively by the reference `safetensors` package,
served by build.py's server, opened by URL with range requests (through fetch with JSPI, and
through synchronous XMLHttpRequest under plain runPython), then downloaded into the Cache API
with progress and loaded again with the network gone (the file deleted and every request to it
aborted). And docs/examples/gpt2_kv_cache.py decoding in the page as natively."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import webjax

np = pytest.importorskip("numpy")
st_numpy = pytest.importorskip("safetensors.numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")

R = np.random.RandomState(1)
MODEL = {
    "embed": R.standard_normal((300, 64)).astype(np.float32),  # past the first 64 kB read
    "head.bias": R.standard_normal(64).astype(ml_dtypes.bfloat16),
    "head.kernel": R.standard_normal((64, 10)).astype(np.float16),
    "steps": np.arange(5, dtype=np.int32),
}


@pytest.fixture
def model_file(site: Path) -> Iterator[tuple[str, Path]]:
    folder = site / "safetensors-test"
    folder.mkdir(exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.safetensors"
    st_numpy.save_file(MODEL, path, metadata={"name": "tiny"})
    try:
        yield f"safetensors-test/{path.name}", path
    finally:
        path.unlink(missing_ok=True)
        if not any(folder.iterdir()):
            folder.rmdir()


def _as_float_lists(name: str) -> Any:
    return MODEL[name].astype(np.float64).tolist()


READ = """
import webjax.safetensors as wst
f = wst.open(URL, cache=None)
result = {
    "keys": f.keys(),
    "metadata": f.metadata(),
    "after_header": f.source.requests,
    "first_rows": f.get_slice("embed")[:2].tolist(),
    "after_first_rows": f.source.requests,
    "bias": f.get_tensor("head.bias").astype("float32").tolist(),
    "last_row": f.get_slice("embed")[299].tolist(),
    "requests": f.source.requests,
    "dtypes": [str(f.get_tensor(k).dtype) for k in f.keys()],
}
f.close()
result
"""


@pytest.mark.browser
def test_range_reads_then_the_cache_offline(
    fresh_page: Any, server_url: str, model_file: tuple[str, Path]
) -> None:
    relative, path = model_file
    url = server_url + relative
    page = fresh_page
    ranges: list[str | None] = []
    page.page.on(
        "request", lambda r: ranges.append(r.headers.get("range")) if relative in r.url else None
    )

    # 1. by URL, with range requests (fetch through JSPI)
    got = page.run_py(f"URL = {url!r}\n" + READ)
    assert got["keys"] == sorted(MODEL) and got["metadata"] == {"name": "tiny"}
    assert got["after_header"] == 1 and got["after_first_rows"] == 1  # inside the first 64 kB
    assert got["requests"] == 3  # the bias and the last row: one request each
    assert got["first_rows"] == _as_float_lists("embed")[:2]
    assert got["last_row"] == _as_float_lists("embed")[299]
    assert got["bias"] == _as_float_lists("head.bias")
    assert got["dtypes"] == ["float32", "bfloat16", "float16", "int32"]
    assert ranges[:3] == ["bytes=0-65535", *ranges[1:3]] and all(r for r in ranges[:3])

    # 2. the same through synchronous XMLHttpRequest (plain runPython: no JSPI)
    sync = page.run_py_sync(READ)
    assert sync == got
    with pytest.raises(Exception, match=r"SyncReadError|without JSPI"):
        page.run_py_sync("wst.download(URL)")
    nothing_started = (
        "import asyncio\nawait asyncio.sleep(0.5)\n"
        "from webjax._src.hosts import http_browser\n"
        "http_browser.cache_lookup(wst.DEFAULT_CACHE, URL) is None"
    )
    assert page.run_py(nothing_started) is True  # the refused download did not go on unseen

    # 3. everything at once: the header, then all the data in one request; a relative URL
    before = len(ranges)
    as_lists = "{k: v.astype('float32').tolist() for k, v in d.items()}"
    loaded = page.run_py(f"d = wst.load_url({relative!r})\n" + as_lists)
    assert len(ranges) - before == 2
    for name in MODEL:
        assert loaded[name] == _as_float_lists(name), name
    # and through Pyodide's file system: save, then load with positioned reads
    local = page.run_py(
        "import os\n"
        "wst.save(d, '/tmp/copy.safetensors', metadata={'from': 'page'})\n"
        "e = wst.load('/tmp/copy.safetensors')\n"
        "same = all(e[k].tolist() == d[k].tolist() for k in d)\n"
        "with wst.open('/tmp/copy.safetensors') as g:\n"
        "    meta = g.metadata()\n"
        "[same, hasattr(os, 'pread'), meta]"
    )
    assert local[0] is True and local[2] == {"from": "page"}

    # 4. the download helper: progress, the Cache API
    size = path.stat().st_size
    fetched = page.run_py(
        "events = []\n"
        "n = wst.download(URL, progress=lambda loaded, total: events.append([loaded, total]))\n"
        "[n, events[-1], len(events)]"
    )
    assert fetched[0] == size and fetched[1] == [size, size]
    printed = page.run_py(
        "import contextlib, io\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    wst.download(URL, progress=True, refresh=True)\n"
        "out.getvalue()"
    )
    assert "(100%)" in printed

    # 5. offline: the file is gone and every request to it fails; the cache still serves it
    path.unlink()
    page.page.route(f"**/{relative}", lambda route: route.abort())
    before = len(ranges)
    offline = page.run_py(
        "with wst.open(URL) as g:\n"
        "    where = g.source.description\n"
        "    kernel = g.get_tensor('head.kernel').astype('float32').tolist()\n"
        "    meta = g.metadata()\n"
        "d = await wst.load_async(URL)\n"
        f"rel = wst.load({relative!r})\n"  # relative to the page: the same cache entry
        "[where, kernel, meta, d['steps'].tolist(), wst.download(URL), rel['steps'].tolist()]"
    )
    assert "(cached)" in offline[0]
    assert offline[1] == _as_float_lists("head.kernel") and offline[2] == {"name": "tiny"}
    assert offline[3] == offline[5] == [0, 1, 2, 3, 4] and offline[4] == size
    assert len(ranges) == before  # no request reached the network
    with pytest.raises(Exception, match="OSError"):
        page.run_py("wst.open(URL, cache=None)")
    assert page.run_py("[wst.evict(URL), wst.evict(URL)]") == [True, False]


EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "gpt2_kv_cache.py"
DECODE = """
import sys, types
example = types.ModuleType("gpt2_kv_cache")
sys.modules["gpt2_kv_cache"] = example
exec(compile(SOURCE, "gpt2_kv_cache.py", "exec"), example.__dict__)
cfg = example.SIZES["tiny"]
params = example.load_or_make("/tmp/gpt2-tiny.safetensors", cfg, seed=2)
tokens, last = example.generate(params, cfg, [7, 1, 4], 3)
[str(webjax.devices()[0]), tokens, [v.tolist() for v in last]]
"""


@pytest.mark.browser
def test_kv_cache_example_in_pyodide(webjax_page: Any) -> None:
    """docs/examples/gpt2_kv_cache.py in the page: its weights through safetensors in Pyodide's
    file system, decoding with the jitted layer and the cache, as natively."""
    spec = importlib.util.spec_from_file_location("gpt2_kv_cache_native", EXAMPLE)
    assert spec is not None and spec.loader is not None
    native = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = native
    spec.loader.exec_module(native)
    cfg = native.SIZES["tiny"]
    params = native.init_params(webjax.random.key(2), cfg)
    want_tokens, want_last = native.generate(params, cfg, [7, 1, 4], 3)
    source = EXAMPLE.read_text()
    device, tokens, last = webjax_page.run_py(f"import webjax\nSOURCE = {source!r}\n" + DECODE)
    assert tokens == want_tokens, device
    np.testing.assert_allclose(
        np.asarray(last), np.asarray([np.asarray(v) for v in want_last]), rtol=1e-4, atol=1e-4
    )
