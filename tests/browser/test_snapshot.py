"""The loader's fast path (web/webjax.mjs): the first load of a page stores a memory snapshot of
Python with webjax imported in the Cache API; a second load in the same browser context restores
it (loadTimings().snapshot says which happened) and computes the same numbers as a fresh start;
another wheel hash in the manifest (a rebuilt wheel) misses the stored snapshot, starts afresh
and replaces it. No timings are asserted: `bench/run.py --first-result-only` measures them."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.browser

LOAD_TIMEOUT_MS = 180_000

# the page: load webjax (the snapshot path), compute, and say how Python started
LOAD = """async () => {
  const { loadWebjax, loadTimings, snapshotStored } = await import("./webjax.mjs");
  const pyodide = await loadWebjax();
  const out = await pyodide.runPythonAsync(`
import json, webjax, webjax.numpy as jnp
x = jnp.linspace(0.0, 1.0, 7, dtype=jnp.float32)
f = webjax.jit(lambda v: jnp.sum(jnp.sin(v) * v))
g = webjax.grad(lambda v: jnp.sum(jnp.sin(v) * v))(x)
import webjax.scipy.special as sp  # a module imported after the restore: read from the files
json.dumps({"y": float(f(x)), "g": [float(t) for t in g], "erf": float(sp.erf(0.5)),
            "dist": webjax.__file__})
`);
  const before = loadTimings().snapshot;
  await snapshotStored();
  const keys = (await (await caches.open("webjax-snapshot")).keys()).map((r) => r.url);
  return { ...JSON.parse(out), timings: { ...loadTimings(), before }, keys };
}"""


def _expected() -> dict[str, Any]:
    x = np.linspace(0.0, 1.0, 7, dtype=np.float32).astype(np.float64)
    return {"y": float(np.sum(np.sin(x) * x)), "g": list(np.sin(x) + x * np.cos(x))}


def _check(got: dict[str, Any]) -> None:
    want = _expected()
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5)
    np.testing.assert_allclose(got["g"], want["g"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["erf"], 0.5204998778130465, rtol=1e-6)


def _load(page: Any, url: str) -> dict[str, Any]:
    page.goto(url)
    return page.evaluate(LOAD)


def test_second_load_restores_the_snapshot(browser: Any, server_url: str, site: Any) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        first = _load(page, server_url + "test.html")
        assert first["timings"]["snapshot"] == "stored", first["timings"]
        sha = json.loads((site / "manifest.json").read_text())["wheel_sha256"]
        assert len(first["keys"]) == 1 and sha in first["keys"][0], first["keys"]
        _check(first)
        second = _load(page, server_url + "test.html")
        assert second["timings"]["snapshot"] == "restored", second["timings"]
        _check(second)
        assert second["y"] == first["y"] and second["g"] == first["g"]
        for name in ("manifest", "pyodide", "wheel", "unpack", "import"):
            assert second["timings"][name] > 0, (name, second["timings"])
    finally:
        context.close()


def test_another_wheel_hash_misses_the_snapshot(browser: Any, server_url: str, site: Any) -> None:
    """A rebuilt wheel (other bytes, and the manifest naming their SHA-256) must not restore the
    snapshot taken with the old one."""
    manifest = json.loads((site / "manifest.json").read_text())
    context = browser.new_context()
    try:
        page = context.new_page()
        assert _load(page, server_url + "test.html")["timings"]["snapshot"] == "stored"
        # other bytes that install the same files: a comment added to the zip's end record
        wheel = (site / manifest["wheel"]).read_bytes()
        rebuilt = wheel[:-2] + len(b"rebuilt").to_bytes(2, "little") + b"rebuilt"
        other = {**manifest, "wheel_sha256": hashlib.sha256(rebuilt).hexdigest()}
        manifest_body = json.dumps(other)
        wheel_pattern = re.compile(re.escape(server_url + manifest["wheel"]) + r"\?.*")
        page.route(
            server_url + "manifest.json",
            lambda route: route.fulfill(body=manifest_body, content_type="application/json"),
        )
        page.route(
            wheel_pattern,
            lambda route: route.fulfill(body=rebuilt, content_type="application/zip"),
        )
        got = _load(page, server_url + "test.html")
        assert got["timings"]["snapshot"] == "stored", got["timings"]
        assert len(got["keys"]) == 1 and other["wheel_sha256"] in got["keys"][0], got["keys"]
        _check(got)
    finally:
        context.close()
