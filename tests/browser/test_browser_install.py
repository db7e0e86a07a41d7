"""The webjax wheel installs in Pyodide both ways a user would install it."""

from __future__ import annotations

import zipfile

import pytest

pytestmark = pytest.mark.browser

INSTALLED = """
import importlib.util
from importlib.metadata import distribution

dist = distribution("webjax")
wasm = [f for f in dist.files if f.name.endswith(".wasm")]


def stale_bytecode(f):
    # the import system uses a .pyc at cache_from_source(path) whose magic is this
    # interpreter's and whose (checked) hash is the source's
    path = str(dist.locate_file(f))
    try:
        with open(importlib.util.cache_from_source(path), "rb") as pyc:
            head = pyc.read(16)
    except OSError:
        return True
    with open(path, "rb") as src:
        digest = importlib.util.source_hash(src.read())
    checked_hash = b"\\x03\\0\\0\\0"
    return head != importlib.util.MAGIC_NUMBER + checked_hash + digest


{
    "version": dist.version,
    "files": sorted(str(f) for f in dist.files if not str(f).startswith("webjax-")),
    "wasm_magic": [dist.locate_file(f).read_bytes()[:4].hex() for f in wasm],
    "modules": sum(str(f).endswith(".py") for f in dist.files),
    "stale_bytecode": [str(f) for f in dist.files if str(f).endswith(".py") and stale_bytecode(f)],
}
"""


def _wheel_files(site):
    (wheel,) = (site / "wheels").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        return wheel.name, sorted(n for n in zf.namelist() if not n.startswith("webjax-"))


def _check_installed(info, site):
    _, files = _wheel_files(site)
    assert info["version"] == "0.1.0"
    assert info["files"] == files
    assert "webjax/_src/wasm_kernels/memory.wasm" in info["files"]
    assert info["wasm_magic"] and set(info["wasm_magic"]) == {"0061736d"}  # b"\0asm"
    # build.py compiled every module with Pyodide's interpreter: imports skip the compiler
    assert info["modules"] > 100 and info["stale_bytecode"] == []


def test_wheel_installs_with_load_package(pyodide, site):
    pyodide.call_js("py => window.webjaxLoader.installWebjax(py)")
    _check_installed(pyodide.run_py(INSTALLED), site)


def test_wheel_installs_with_micropip_from_emfs(pyodide, site):
    wheel_name, _ = _wheel_files(site)
    # micropip is not in the npm Pyodide package; build.py serves it under its lock entry.
    pyodide.run_py(
        f"""
import pyodide_js
from pyodide.http import pyfetch

await pyodide_js.loadPackage("micropip")
import micropip

manifest = await (await pyfetch("manifest.json")).json()
path = "/tmp/{wheel_name}"
with open(path, "wb") as f:
    f.write(await (await pyfetch(manifest["wheel"])).bytes())
await micropip.install("emfs:" + path)
"""
    )
    _check_installed(pyodide.run_py(INSTALLED), site)
    assert pyodide.run_py('distribution("webjax").read_text("INSTALLER").strip()') == "micropip"
