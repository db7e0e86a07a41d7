#!/usr/bin/env python3
"""Build, serve and test webjax. Standard library only, so it runs on a fresh clone.

    python build.py [build]          tools venv, wasm kernels, wheel, Pyodide, dist/site/
    python build.py serve [--port N] [--no-isolation]
                                     build, then serve dist/site/ (COOP/COEP headers)
    python build.py lite [--serve [--port N]]
                                     build, then a JupyterLite site in dist/lite/ (its Pyodide
                                     kernel on the site's Pyodide, webjax in its piplite index)
    python build.py lint             the quality gates: ruff check/format, mypy, lint-imports
    python build.py test [--no-gates] [pytest args...]
    python build.py bench [--quick] [--out PATH]   build, then the benchmarks (bench/run.py)
                                     system packages, build, gates, pytest over tests/
    python build.py fuzz --budget SECONDS [--device D] [--report PATH]
                                     differential fuzzing against JAX (tests/fuzz/), 32- then
                                     64-bit, until the budget is spent; a JSON report
    python build.py soak [--steps N] [--ops N] [--report PATH]
                                     build, then the browser soaks at full length (10,000
                                     training steps, 100,000 eager ops per device); the series

Everything the build makes lands in git-ignored places: .venv/ (the tools venv), .cache/ (npm
and pip downloads), dist/ (wheel and site) and pkg/webjax/_src/wasm_kernels/*.wasm.
"""

from __future__ import annotations

import argparse
import functools
import glob
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
CACHE = ROOT / ".cache"
DIST = ROOT / "dist"
SITE = DIST / "site"
WEB = ROOT / "web"
KERNEL_SOURCES = ROOT / "wasm_kernels"
KERNEL_OUT = ROOT / "pkg" / "webjax" / "_src" / "wasm_kernels"
WHEEL_KERNEL_DIR = "webjax/_src/wasm_kernels"

PYODIDE_VERSION = "314.0.7"
# Packages that the npm Pyodide build lists in its lock file but does not ship; we fetch the
# pure-Python wheels and make the lock's hashes match them.
PYODIDE_EXTRA_PACKAGES = ("micropip",)
# Deno for the Node.js/Deno tier (tests/browser/test_node_deno.py): the npm package of its
# Linux x86-64 binary, fetched like Pyodide (npm pack, cached in .cache/), never installed.
DENO_PACKAGE = "@deno/linux-x64-glibc"
DENO_VERSION = "2.9.6"
# Firefox ESR's tier (tests/browser/test_firefox.py): Debian's firefox-esr, shown on an Xvfb
# display (headless Firefox has no WebGL), driven over WebDriver BiDi by puppeteer-core (its 24.x
# line still runs on Debian's Node.js 20), npm-installed into .cache/firefox-driver/.
FIREFOX_DRIVER_PACKAGE = "puppeteer-core"
FIREFOX_DRIVER_VERSION = "24.43.1"
FIREFOX_DRIVER_DIR = CACHE / "firefox-driver"
# The REPL's editor: web/editor/ holds its entry module and a package.json pinning CodeMirror 6,
# its dependencies and esbuild; the build npm-installs them into .cache/editor/ and bundles the
# entry into dist/site/editor.mjs (web/editor/ itself is not copied to the site).
EDITOR_SOURCES = WEB / "editor"
# The PyScript page (web/pyscript/index.html): @pyscript/core's dist/ from npm (npm pack, cached
# in .cache/) goes to dist/site/pyscript/core/, and a config.json pointing PyScript at the site's
# Pyodide and the webjax wheel next to the page. 0.7.31 is built for Pyodide 314.0.2, the same
# series as PYODIDE_VERSION.
PYSCRIPT_VERSION = "0.7.31"
# `python build.py lite`: a JupyterLite site in dist/lite/ from docs/lite/ (jupyter-lite.json and
# the demo notebook), built by jupyterlite-core with the Pyodide kernel in a venv of its own
# (.cache/lite-venv/, apart from the tools venv). The kernel 0.8.6 is made for Pyodide 314.0.6
# and would fetch it from a CDN; the build gives it the site's Pyodide (static/pyodide/) and the
# webjax wheel in its piplite index (pypi/), and turns PyPI fallback off: it runs offline.
LITE = DIST / "lite"
LITE_SOURCES = ROOT / "docs" / "lite"
LITE_VENV = CACHE / "lite-venv"
LITE_REQUIREMENTS = [
    "jupyterlite-core==0.8.6",
    "jupyterlite-pyodide-kernel==0.8.6",
    "jupyter-server==2.21.1",  # jupyterlite-core needs it to add contents (the notebooks)
]
# What the kernel installs as it starts (ipykernel, comm, pyodide-kernel, jedi, ipython): the
# extension ships ipykernel and pyodide-kernel; ipython and jedi (with their dependencies) are in
# the Pyodide lock but not in npm's Pyodide, so the build adds them to dist/lite's copy of
# Pyodide; comm is in neither and goes to the piplite index.
LITE_PYODIDE_PACKAGES = ("micropip", "ipython", "jedi")
LITE_INDEX_WHEELS = ("comm==0.2.3",)
# The digits demo's data: the 8x8 handwritten digits (1797 images, 64 pixels 0-16 and a label
# per CSV row) that scikit-learn's wheel ships; the build pip-downloads this pinned wheel into
# .cache/ once and copies that one file to dist/site/demos/ (the data is never committed).
DIGITS_WHEEL = "scikit-learn==1.5.2"
DIGITS_MEMBER = "sklearn/datasets/data/digits.csv.gz"
# Bump to force the tools venv to be rebuilt even when pyproject.toml did not change.
VENV_EPOCH = "1"
SYSTEM_PACKAGES = {  # apt package -> a glob that matches once it is installed
    "chromium": "/usr/bin/chromium",
    "firefox-esr": "/usr/bin/firefox-esr",
    "xvfb": "/usr/bin/Xvfb",  # the display Firefox renders WebGL on
    "mesa-vulkan-drivers": "/usr/share/vulkan/icd.d/lvp_icd.*.json",  # lavapipe, for wgpu
    # OpenGL ES through EGL on llvmpipe (the webgl backend's native host)
    "libegl1": "/usr/lib/*/libEGL.so.1",
    "libegl-mesa0": "/usr/lib/*/libEGL_mesa.so.0",
    "libgles2": "/usr/lib/*/libGLESv2.so.2",
    "libgl1-mesa-dri": "/usr/lib/*/dri/swrast_dri.so",
}
NATIVE_GPU_PACKAGES = {
    "mesa-vulkan-drivers",
    "libegl1",
    "libegl-mesa0",
    "libgles2",
    "libgl1-mesa-dri",
}


def log(message: str) -> None:
    print(f"[build.py] {message}", flush=True)


class BuildError(RuntimeError):
    pass


def run(cmd: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    log("$ " + " ".join("<script>" if "\n" in str(c) else str(c) for c in cmd))
    result = subprocess.run(cmd, cwd=cwd, env=env)
    if result.returncode != 0:
        raise BuildError(f"command failed with exit status {result.returncode}: {cmd[0]} ...")


def project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def wheel_name() -> str:
    meta = project()
    return f"{meta['name']}-{meta['version']}-py3-none-any.whl"


# --- the tools venv ---------------------------------------------------------------------------


def venv_python() -> Path:
    if os.name == "nt":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def venv_tool(name: str) -> Path:
    return venv_python().parent / name


def venv_requirements() -> list[str]:
    extras = project()["optional-dependencies"]
    return [*extras["test"], *extras["oracle"], *extras["ecosystem"], "hatchling", "build"]


# The JAX libraries that tests/ecosystem runs over webjax, pinned. They go in without their
# declared dependencies (jaxlib builds, Orbax, TensorStore); the `ecosystem` extra lists the
# pure-Python ones they need.
ECOSYSTEM_LIBRARIES = [
    "optax==0.2.8",
    "chex==0.1.92",
    "flax==0.12.8",
    "equinox==0.13.8",
    "jaxtyping==0.3.11",
    "wadler_lindig==0.1.8",
]
# The ones that import without NumPy (which Pyodide has only from its own CDN, not from a
# registry): the site serves their wheels so the browser tier installs them offline.
BROWSER_ECOSYSTEM_LIBRARIES = ["jaxtyping==0.3.11", "wadler_lindig==0.1.8"]


def ensure_venv() -> Path:
    """Create .venv with the test, oracle and ecosystem extras, the ecosystem's libraries,
    hatchling and build; reuse it if current."""
    requirements = venv_requirements()
    stamp_text = json.dumps([VENV_EPOCH, sys.version, requirements, ECOSYSTEM_LIBRARIES])
    stamp_hash = hashlib.sha256(stamp_text.encode()).hexdigest()
    stamp = VENV / ".webjax-stamp"
    python = venv_python()
    if python.exists() and stamp.exists() and stamp.read_text().strip() == stamp_hash:
        return python
    if not python.exists():
        log(f"creating the tools venv in {VENV.relative_to(ROOT)}/")
        run([sys.executable, "-m", "venv", str(VENV)])
    log("installing tools into the venv (test + oracle extras, hatchling, build)")
    run([str(python), "-m", "pip", "install", "--quiet", *requirements])
    log("installing the JAX libraries of the ecosystem tier (without their dependencies)")
    run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", *ECOSYSTEM_LIBRARIES])
    stamp.write_text(stamp_hash + "\n")
    return python


# --- wasm kernels -----------------------------------------------------------------------------

_ASSEMBLE = """
import sys, wasmtime
from pathlib import Path
out = Path(sys.argv[1])
for src in map(Path, sys.argv[2:]):
    data = wasmtime.wat2wasm(src.read_text())
    dst = out / (src.stem + ".wasm")
    if not dst.exists() or dst.read_bytes() != data:
        dst.write_bytes(data)
        print(f"[build.py] assembled {src.name} -> {dst} ({len(data)} bytes)")
"""


def assemble_kernels(python: Path) -> list[Path]:
    """wasm_kernels/*.wat -> pkg/webjax/_src/wasm_kernels/*.wasm (package data)."""
    sources = sorted(KERNEL_SOURCES.glob("*.wat"))
    KERNEL_OUT.mkdir(parents=True, exist_ok=True)
    wanted = {src.stem + ".wasm" for src in sources}
    for stale in KERNEL_OUT.glob("*.wasm"):
        if stale.name not in wanted:
            stale.unlink()
    if sources:
        run([str(python), "-c", _ASSEMBLE, str(KERNEL_OUT), *map(str, sources)])
    return [KERNEL_OUT / name for name in sorted(wanted)]


# --- the wheel --------------------------------------------------------------------------------


def build_wheel(python: Path, kernels: list[Path]) -> Path:
    DIST.mkdir(exist_ok=True)
    for old in DIST.glob("*.whl"):
        old.unlink()
    # cwd=DIST: `python -m build` from the repository root would import this file as `build`.
    run(
        [str(python), "-m", "build", "--wheel", "--no-isolation", "--outdir", str(DIST), str(ROOT)],
        cwd=DIST,
    )
    wheel = DIST / wheel_name()
    if not wheel.exists():
        found = [p.name for p in DIST.glob("*.whl")]
        raise BuildError(f"expected {wheel.name} in dist/, found {found}")
    check_wheel(wheel, kernels)
    return wheel


def check_wheel(wheel: Path, kernels: list[Path]) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = f"{wheel.name.removesuffix('.whl').split('-py3')[0]}.dist-info"
        meta = zf.read(f"{info}/WHEEL").decode()
        if "Tag: py3-none-any" not in meta or "Root-Is-Purelib: true" not in meta:
            raise BuildError(f"{wheel.name} is not a pure py3-none-any wheel:\n{meta}")
        for kernel in kernels:
            member = f"{WHEEL_KERNEL_DIR}/{kernel.name}"
            if member not in names:
                raise BuildError(f"{wheel.name} lacks {member} (hatch artifacts setting?)")
            if zf.read(member) != kernel.read_bytes():
                raise BuildError(f"{member} in {wheel.name} differs from {kernel}")
        if "webjax/__init__.py" not in names:
            log("WARNING: the wheel has no webjax/__init__.py yet (package incomplete)")
    log(f"wheel ok: dist/{wheel.name} ({len(names)} files, {len(kernels)} wasm kernels)")


# --- Pyodide and the site ---------------------------------------------------------------------


def fetch_pyodide() -> Path:
    """npm pack pyodide@VERSION into .cache/ (once) and unpack it to dist/site/pyodide/."""
    CACHE.mkdir(exist_ok=True)
    tgz = CACHE / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError("npm is needed to fetch Pyodide (apt-get install npm, or Node.js)")
        run([npm, "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", str(CACHE)])
    target = SITE / "pyodide"
    stamp = target / ".webjax-stamp"
    stamp_text = f"{tgz.name} {tgz.stat().st_size}"
    if stamp.exists() and stamp.read_text() == stamp_text:
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    with tarfile.open(tgz) as tf:
        for member in tf.getmembers():
            if not member.isfile() or not member.name.startswith("package/"):
                continue
            dest = target / member.name.removeprefix("package/")
            if ".." in Path(member.name).parts:
                raise BuildError(f"unsafe path in {tgz.name}: {member.name}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            source = tf.extractfile(member)
            assert source is not None
            with source, open(dest, "wb") as out:
                shutil.copyfileobj(source, out)
    stamp.write_text(stamp_text)
    log(f"unpacked {tgz.name} -> {target.relative_to(ROOT)}/")
    return target


def fetch_deno() -> Path:
    """npm pack DENO_PACKAGE@DENO_VERSION into .cache/ (once); returns its unpacked `deno`."""
    CACHE.mkdir(exist_ok=True)
    binary = CACHE / f"deno-{DENO_VERSION}" / "deno"
    if binary.exists():
        return binary
    tgz = CACHE / f"deno-linux-x64-glibc-{DENO_VERSION}.tgz"
    if not tgz.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError("npm is needed to fetch Deno (apt-get install npm, or Node.js)")
        run([npm, "pack", f"{DENO_PACKAGE}@{DENO_VERSION}", "--pack-destination", str(CACHE)])
    with tarfile.open(tgz) as tf:
        source = tf.extractfile("package/deno")
        if source is None:
            raise BuildError(f"{tgz.name} has no package/deno")
        binary.parent.mkdir(exist_ok=True)
        partial = binary.with_suffix(".part")
        with source, open(partial, "wb") as out:
            shutil.copyfileobj(source, out)
    partial.chmod(0o755)
    partial.rename(binary)
    log(f"unpacked {tgz.name} -> {binary.relative_to(ROOT)}")
    return binary


def fetch_firefox_driver() -> Path:
    """npm install FIREFOX_DRIVER_PACKAGE@FIREFOX_DRIVER_VERSION (and its npm dependencies) into
    FIREFOX_DRIVER_DIR, again only when the pin changes; returns that folder."""
    work = FIREFOX_DRIVER_DIR
    entry = work / "node_modules" / FIREFOX_DRIVER_PACKAGE / "package.json"
    package = json.dumps(
        {
            "name": "webjax-firefox-driver",
            "private": True,
            "dependencies": {FIREFOX_DRIVER_PACKAGE: FIREFOX_DRIVER_VERSION},
        },
        indent=2,
    )
    stamp = work / ".webjax-stamp"
    if entry.exists() and stamp.exists() and stamp.read_text() == package:
        return work
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("npm is needed to fetch the Firefox tier's driver (apt-get install npm)")
    work.mkdir(parents=True, exist_ok=True)
    (work / "package.json").write_text(package)
    run([npm, "install", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=work)
    stamp.write_text(package)
    log(f"installed {FIREFOX_DRIVER_PACKAGE}@{FIREFOX_DRIVER_VERSION} -> {work.relative_to(ROOT)}/")
    return work


def add_pyodide_packages(
    python: Path, pyodide_dir: Path, names: tuple[str, ...] = PYODIDE_EXTRA_PACKAGES
) -> dict[str, str]:
    """Put the lock's pure wheels that npm leaves out (`names`, and their dependencies in the
    lock: micropip for the site) next to the lock file.

    The lock pins sha256 hashes of Pyodide's own builds; the same version's wheel from the
    package index has another hash, so the entries are rewritten to the files we serve.
    `pyodide.loadPackage("micropip")` then works as on the CDN. Returns name -> site path.
    """
    lock_path = pyodide_dir / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text())
    py_version = ".".join(lock["info"]["python"].split(".")[:2])
    wanted: list[str] = []
    todo = list(names)
    while todo:  # the extras and their dependencies in the lock
        name = todo.pop().lower().replace("_", "-")  # the lock's keys are normalized names
        if name not in wanted:
            wanted.append(name)
            todo.extend(lock["packages"][name]["depends"])
    wheel_cache = CACHE / "pyodide-wheels"
    wheel_cache.mkdir(parents=True, exist_ok=True)
    served = {}
    for name in wanted:
        entry = lock["packages"][name]
        file_name = entry["file_name"]
        if not file_name.endswith(("-py3-none-any.whl", "-py2.py3-none-any.whl")):
            raise BuildError(f"{name} in the Pyodide lock is not a pure wheel: {file_name}")
        cached = wheel_cache / file_name
        if not cached.exists():
            run(
                [
                    str(python), "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--python-version", py_version,
                    "--dest", str(wheel_cache), f"{name}=={entry['version']}",
                ]
            )  # fmt: skip
        if not cached.exists():
            raise BuildError(f"pip download did not produce {file_name}")
        shutil.copyfile(cached, pyodide_dir / file_name)
        entry["sha256"] = hashlib.sha256(cached.read_bytes()).hexdigest()
        served[name] = f"pyodide/{file_name}"
    lock_path.write_text(json.dumps(lock, separators=(",", ":")))
    return served


# Runs in Node.js: Pyodide's own CPython compiles the wheel's modules, so the bytecode matches
# the interpreter that imports it (magic number and cache tag). argv: pyodide dir, wheel in, out.
_COMPILE_JS = r"""
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [pyodideDir, wheelIn, wheelOut] = process.argv.slice(-3);
const { loadPyodide } = await import(pathToFileURL(`${pyodideDir}/pyodide.mjs`).href);
const pyodide = await loadPyodide({ indexURL: `${pyodideDir}/` });
pyodide.FS.writeFile("/tmp/in.whl", readFileSync(wheelIn));
pyodide.runPython(process.env.WEBJAX_COMPILE_PY);
writeFileSync(wheelOut, pyodide.FS.readFile("/tmp/out.whl"));
"""

_COMPILE_PY = r"""
import base64, hashlib, importlib.util, posixpath, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

def digest(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

tag = sys.implementation.cache_tag
with zipfile.ZipFile("/tmp/in.whl") as src, zipfile.ZipFile("/tmp/out.whl", "w") as out:
    record = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
    rows = []
    for info in src.infolist():
        if info.filename == record:
            continue
        data = src.read(info)
        out.writestr(info, data, zipfile.ZIP_DEFLATED)
        rows.append(f"{info.filename},sha256={digest(data)},{len(data)}")
        if info.filename.endswith(".py"):
            code = compile(data, info.filename, "exec", dont_inherit=True)
            pyc = _code_to_hash_pyc(code, importlib.util.source_hash(data), checked=True)
            folder, name = posixpath.split(info.filename)
            path = posixpath.join(folder, "__pycache__", f"{name[:-3]}.{tag}.pyc")
            out.writestr(path, pyc, zipfile.ZIP_DEFLATED)
            rows.append(f"{path},sha256={digest(pyc)},{len(pyc)}")
    rows.append(f"{record},,")
    out.writestr(record, "\n".join(rows) + "\n", zipfile.ZIP_DEFLATED)
"""


def compile_for_pyodide(wheel: Path, pyodide_dir: Path) -> Path:
    """The site's copy of the wheel, with bytecode: Pyodide does not write .pyc files, so an
    import otherwise compiles every module from source (0.6 s of `import webjax` in Chromium).
    The .pyc files are checked-hash (a changed source is recompiled) and made by Pyodide's own
    interpreter under Node.js. Without Node.js the site gets the plain wheel (and says so)."""
    out = DIST / "pyodide" / wheel.name
    out.parent.mkdir(exist_ok=True)
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        log("WARNING: no Node.js: the site's wheel has no bytecode (slower first import)")
        shutil.copyfile(wheel, out)
        return out
    env = {**os.environ, "WEBJAX_COMPILE_PY": _COMPILE_PY}
    cmd = [node, "--input-type=module", "-e", _COMPILE_JS, "--",
           str(pyodide_dir.resolve()), str(wheel.resolve()), str(out.resolve())]  # fmt: skip
    try:
        subprocess.run(cmd, check=True, env=env, capture_output=True, text=True, timeout=300)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        detail = getattr(e, "stderr", "") or ""
        raise BuildError(f"compiling the wheel in Pyodide failed: {e}\n{detail[-2000:]}") from None
    with zipfile.ZipFile(out) as zf:
        pycs = sum(n.endswith(".pyc") for n in zf.namelist())
    log(f"bytecode for Pyodide: {out.relative_to(ROOT)} ({pycs} .pyc files)")
    return out


def fetch_ecosystem_wheels(python: Path) -> list[Path]:
    """The pure wheels of BROWSER_ECOSYSTEM_LIBRARIES, downloaded once into .cache/."""
    cache = CACHE / "ecosystem-wheels"
    cache.mkdir(parents=True, exist_ok=True)
    found = []
    for requirement in BROWSER_ECOSYSTEM_LIBRARIES:
        name, version = requirement.split("==")
        pattern = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        if not list(cache.glob(pattern)):
            run(
                [
                    str(python), "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--dest", str(cache), requirement,
                ]
            )  # fmt: skip
        wheels = list(cache.glob(pattern))
        if not wheels:
            raise BuildError(f"pip download of {requirement} gave no {pattern}")
        found.append(wheels[0])
    return found


def fetch_digits(python: Path) -> Path:
    """.cache/digits.csv.gz, read out of DIGITS_WHEEL (downloaded once); copied to the site."""
    out = CACHE / "digits.csv.gz"
    if not out.exists():
        cache = CACHE / "digits-wheel"
        cache.mkdir(parents=True, exist_ok=True)
        name, version = DIGITS_WHEEL.split("==")
        pattern = f"{name.replace('-', '_')}-{version}-*.whl"
        if not list(cache.glob(pattern)):
            run(
                [
                    str(python), "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--dest", str(cache), DIGITS_WHEEL,
                ]
            )  # fmt: skip
        wheels = list(cache.glob(pattern))
        if not wheels:
            raise BuildError(f"pip download of {DIGITS_WHEEL} gave no {pattern}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            data = wheel.read(DIGITS_MEMBER)
        out.write_bytes(data)
    dest = SITE / "demos" / "digits.csv.gz"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(out, dest)
    return dest


def make_digits_onnx(python: Path, digits: Path) -> Path:
    """dist/site/demos/digits.onnx, the ONNX demo's model: web/demos/models/ (its own folder:
    run as a script, web/demos/ would put the page's onnx.py before the onnx package)
    trains a small CNN on the digits with webjax natively (some 20 s), writes it with onnx;
    cached in .cache/ until that script or the digits demo's data handling changes."""
    sources = [WEB / "demos" / "models" / "train_digits_onnx.py", WEB / "demos" / "digits.py"]
    key = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    out = CACHE / f"digits-{key}.onnx"
    if not out.exists():
        log("training the ONNX demo's digits CNN (web/demos/models/train_digits_onnx.py)")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "pkg")}
        run([str(python), str(sources[0]), str(digits), str(out)], env=env)
    dest = SITE / "demos" / "digits.onnx"
    shutil.copyfile(out, dest)
    return dest


def bundle_editor() -> Path:
    """npm install web/editor/package.json's pinned packages into .cache/editor/ (again only
    when package.json changes) and bundle web/editor/index.mjs with esbuild into
    dist/site/editor.mjs (one ES module, minified)."""
    work = CACHE / "editor"
    work.mkdir(parents=True, exist_ok=True)
    package = (EDITOR_SOURCES / "package.json").read_text()
    stamp = work / ".webjax-stamp"
    if not stamp.exists() or stamp.read_text() != package:
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError("npm is needed to fetch the REPL's editor (apt-get install npm)")
        (work / "package.json").write_text(package)
        run([npm, "install", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=work)
        stamp.write_text(package)
    shutil.copyfile(EDITOR_SOURCES / "index.mjs", work / "index.mjs")
    out = SITE / "editor.mjs"
    out.parent.mkdir(parents=True, exist_ok=True)
    node = shutil.which("node")
    if node is None:
        raise BuildError("node is needed to run esbuild for the REPL's editor")
    esbuild = work / "node_modules" / "esbuild" / "bin" / "esbuild"
    flags = ["--bundle", "--format=esm", "--minify", "--log-level=warning", f"--outfile={out}"]
    run([node, str(esbuild), "index.mjs", *flags], cwd=work)
    log(f"editor bundled: {out.relative_to(ROOT)} ({out.stat().st_size // 1024} KiB)")
    return out


def fetch_pyscript(wheel_url: str) -> Path:
    """npm pack @pyscript/core@PYSCRIPT_VERSION into .cache/ (once), its dist/ to
    dist/site/pyscript/core/, and dist/site/pyscript/config.json: the interpreter is the site's
    own Pyodide and `packages` holds the webjax wheel, both as URLs relative to the page, so the
    page loads nothing from outside the site."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tgz = CACHE / f"pyscript-core-{PYSCRIPT_VERSION}.tgz"
    if not tgz.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError("npm is needed to fetch PyScript (apt-get install npm, or Node.js)")
        spec = f"@pyscript/core@{PYSCRIPT_VERSION}"
        run([npm, "pack", spec, "--pack-destination", str(CACHE)])
    out = SITE / "pyscript" / "core"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tarfile.open(tgz) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("package/dist/")
            if member.isfile() and name != member.name and not name.endswith(".map"):
                dest = out / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                assert source is not None
                dest.write_bytes(source.read())
    config = {"interpreter": "../pyodide/pyodide.mjs", "packages": [f"../{wheel_url}"]}
    (SITE / "pyscript" / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    log(f"PyScript {PYSCRIPT_VERSION} laid out: {out.relative_to(ROOT)}/ and config.json")
    return out


def layout_site(wheel: Path, extra_packages: dict[str, str], ecosystem: list[Path]) -> None:
    """web/* -> dist/site/, the wheel -> dist/site/wheels/ (the ecosystem's browser wheels in
    wheels/ecosystem/), and manifest.json for the loader."""
    for src in sorted(WEB.rglob("*")):
        if src.is_relative_to(EDITOR_SOURCES):
            continue  # bundled into editor.mjs by bundle_editor
        if src.is_file() and "__pycache__" not in src.parts:
            dest = SITE / src.relative_to(WEB)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    wheels = SITE / "wheels"
    if wheels.exists():
        shutil.rmtree(wheels)
    wheels.mkdir()
    shutil.copyfile(wheel, wheels / wheel.name)
    (wheels / "ecosystem").mkdir()
    for lib in ecosystem:
        shutil.copyfile(lib, wheels / "ecosystem" / lib.name)
    meta = project()
    manifest = {
        "name": meta["name"],
        "version": meta["version"],
        "wheel": f"wheels/{wheel.name}",
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),  # the loader checks it
        "pyodide": {"version": PYODIDE_VERSION, "indexURL": "pyodide/"},
        "packages": extra_packages,
        "ecosystem": [f"wheels/ecosystem/{lib.name}" for lib in ecosystem],
    }
    (SITE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    log(f"site ready: {SITE.relative_to(ROOT)}/ (manifest.json -> {manifest['wheel']})")


def build() -> Path:
    python = ensure_venv()
    kernels = assemble_kernels(python)
    wheel = build_wheel(python, kernels)
    pyodide_dir = fetch_pyodide()
    extra = add_pyodide_packages(python, pyodide_dir)
    layout_site(compile_for_pyodide(wheel, pyodide_dir), extra, fetch_ecosystem_wheels(python))
    bundle_editor()
    make_digits_onnx(python, fetch_digits(python))
    fetch_pyscript(json.loads((SITE / "manifest.json").read_text())["wheel"])
    return python


def ensure_lite_venv() -> Path:
    """.cache/lite-venv/ with LITE_REQUIREMENTS (reused while they are unchanged); returns
    its `jupyter`."""
    bindir = "Scripts" if os.name == "nt" else "bin"
    jupyter = LITE_VENV / bindir / ("jupyter.exe" if os.name == "nt" else "jupyter")
    stamp = LITE_VENV / ".webjax-stamp"
    wanted = json.dumps([sys.version, LITE_REQUIREMENTS])
    if jupyter.exists() and stamp.exists() and stamp.read_text() == wanted:
        return jupyter
    if not (LITE_VENV / bindir).exists():
        log(f"creating the JupyterLite venv in {LITE_VENV.relative_to(ROOT)}/")
        run([sys.executable, "-m", "venv", str(LITE_VENV)])
    python = LITE_VENV / bindir / ("python.exe" if os.name == "nt" else "python")
    run([str(python), "-m", "pip", "install", "--quiet", *LITE_REQUIREMENTS])
    stamp.write_text(wanted)
    return jupyter


def build_lite() -> Path:
    """dist/lite/: JupyterLite with the Pyodide kernel on the site's own Pyodide, the webjax
    wheel in the kernel's piplite index (`%pip install webjax` finds it there) and
    docs/lite/'s notebooks as its files. Builds dist/site/ first when it is missing; call
    after `build()` to pick up a new wheel."""
    if not (SITE / "manifest.json").exists():
        build()
    jupyter = ensure_lite_venv()
    manifest = json.loads((SITE / "manifest.json").read_text())
    stage = CACHE / "lite-stage"  # the lite_dir: config plus the Pyodide to copy
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "static").mkdir(parents=True)
    shutil.copyfile(LITE_SOURCES / "jupyter-lite.json", stage / "jupyter-lite.json")
    shutil.copytree(SITE / "pyodide", stage / "static" / "pyodide")
    tools_python = ensure_venv()
    add_pyodide_packages(tools_python, stage / "static" / "pyodide", LITE_PYODIDE_PACKAGES)
    index_wheels = [SITE / manifest["wheel"]]
    wheel_cache = CACHE / "lite-wheels"
    wheel_cache.mkdir(parents=True, exist_ok=True)
    for requirement in LITE_INDEX_WHEELS:
        name, version = requirement.split("==")
        pattern = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        if not list(wheel_cache.glob(pattern)):
            run(
                [
                    str(tools_python), "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--dest", str(wheel_cache), requirement,
                ]
            )  # fmt: skip
        found = list(wheel_cache.glob(pattern))
        if not found:
            raise BuildError(f"pip download of {requirement} gave no {pattern}")
        index_wheels.append(found[0])
    if LITE.exists():
        shutil.rmtree(LITE)
    cmd = [
        str(jupyter), "lite", "build", "--lite-dir", str(stage), "--output-dir", str(LITE),
        *(arg for wheel in index_wheels for arg in ("--piplite-wheels", str(wheel))),
        *(arg for nb in sorted(LITE_SOURCES.glob("*.ipynb")) for arg in ("--contents", str(nb))),
    ]  # fmt: skip
    run(cmd, cwd=stage)
    settings = json.loads((LITE / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = settings["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    if not kernel.get("pyodideUrl", "").startswith("./static/pyodide/"):
        raise BuildError(f"dist/lite's kernel is not on the local Pyodide: {kernel}")
    log(f"JupyterLite ready: {LITE.relative_to(ROOT)}/ (kernel Pyodide {kernel['pyodideUrl']})")
    return LITE


# --- the server -------------------------------------------------------------------------------

MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".map": "application/json",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".tar": "application/x-tar",
    ".py": "text/x-python; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".ts": "text/plain; charset=utf-8",
}


def parse_byte_range(header: str, size: int) -> tuple[int, int] | str | None:
    """A `Range:` header's one byte range over a file of `size` bytes, as [start, end); None
    where the header should be ignored (not bytes, several ranges, malformed: the whole file
    is served); "unsatisfiable" where it starts at or past the end."""
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, dash, last = (part.strip() for part in spec.partition("-"))
    if not dash or not (first or last) or not all(p.isdigit() for p in (first, last) if p):
        return None
    if not first:  # the last N bytes
        n = int(last)
        return (max(0, size - n), size) if n else "unsatisfiable"
    start = int(first)
    if last and int(last) < start:
        return None
    if start >= size:
        return "unsatisfiable"
    return start, min(size, int(last) + 1) if last else size


class _FileWindow:
    """Bytes [start, end) of an open file, read the way `copyfile` reads a whole file."""

    def __init__(self, f: object, start: int, end: int) -> None:
        self.f, self.left = f, end - start
        f.seek(start)  # type: ignore[attr-defined]

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.f.read(n) if n else b""  # type: ignore[attr-defined]
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.f.close()  # type: ignore[attr-defined]


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files; COOP/COEP/CORP headers when `isolated`; single byte ranges (`Range:
    bytes=a-b`, answered 206 with Content-Range), which model loaders use to read one tensor of
    a file.

    Caching: a URL that names its content's hash (a `sha256=` query, as the loader asks for the
    wheel) is `immutable`; everything else is `no-cache` with an ETag (the file's mtime and
    size), so a browser keeps it but asks each time and gets a 304 while it is unchanged: a
    rebuilt site is never served stale, and a warm load reads Pyodide from the HTTP cache.

    Cross-origin isolation (COOP same-origin + COEP require-corp) is what gives a page
    SharedArrayBuffer, which wasm threads need.
    """

    isolated = True
    quiet = False
    etag: str | None = None  # the requested file's, set by send_head
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def send_head(self):  # type: ignore[no-untyped-def]
        wanted = self.headers.get("Range")
        path = self.translate_path(self.path)
        self.etag = None
        if os.path.isfile(path):
            st = os.stat(path)
            self.etag = f'"{st.st_mtime_ns:x}-{st.st_size:x}"'
            match = self.headers.get("If-None-Match", "")
            if wanted is None and self.etag in (t.strip() for t in match.split(",")):
                self.send_response(304)
                self.end_headers()
                return None
        if wanted is None or self.path.split("?")[0].endswith("/") or not os.path.isfile(path):
            return super().send_head()
        f = open(path, "rb")  # noqa: SIM115  (copyfile reads and closes it)
        size = os.fstat(f.fileno()).st_size
        span = parse_byte_range(wanted, size)
        if span is None:
            f.close()
            return super().send_head()
        if span == "unsatisfiable":
            f.close()
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        assert isinstance(span, tuple)
        start, end = span
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        return _FileWindow(f, start, end)

    def end_headers(self) -> None:
        self.send_header("Accept-Ranges", "bytes")
        hashed = "sha256=" in self.path.partition("?")[2]
        self.send_header("Cache-Control", "max-age=31536000, immutable" if hashed else "no-cache")
        if getattr(self, "etag", None):
            self.send_header("ETag", self.etag)
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        if not self.quiet:
            super().log_message(format, *args)


class SiteServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        # A browser that drops a connection mid-response (navigation, aborted fetch) is normal.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def make_server(
    root: Path | str = SITE,
    port: int = 0,
    *,
    isolated: bool = True,
    host: str = "127.0.0.1",
    quiet: bool = False,
) -> http.server.ThreadingHTTPServer:
    """An HTTP server for `root` (port 0: a free port; see `server.server_address`)."""
    handler_class = type("Handler", (SiteHandler,), {"isolated": isolated, "quiet": quiet})
    handler = functools.partial(handler_class, directory=str(root))
    server = SiteServer((host, port), handler)
    server.daemon_threads = True
    return server


def start_server(
    root: Path | str = SITE,
    port: int = 0,
    *,
    isolated: bool = True,
    host: str = "127.0.0.1",
    quiet: bool = True,
) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve `root` from a daemon thread; returns (server, base URL ending in '/')."""
    server = make_server(root, port, isolated=isolated, host=host, quiet=quiet)
    threading.Thread(target=server.serve_forever, name="webjax-site", daemon=True).start()
    return server, f"http://{host}:{server.server_port}/"


def serve(port: int, isolated: bool, host: str, root: Path = SITE) -> None:
    """Serve `root` (built by the caller) until Ctrl-C."""
    server = make_server(root, port, isolated=isolated, host=host)
    bound_port = server.server_port
    shown = "localhost" if host in ("127.0.0.1", "localhost") else host
    mode = "cross-origin isolated" if isolated else "no COOP/COEP headers"
    log(f"serving {root.relative_to(ROOT)}/ at http://{shown}:{bound_port}/ ({mode}); Ctrl-C stops")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


# --- tests ------------------------------------------------------------------------------------


def ensure_system_packages(need_browser: bool) -> None:
    browsers = {"chromium", "firefox-esr", "xvfb"}
    wanted = NATIVE_GPU_PACKAGES | (browsers if need_browser else set())
    missing = sorted(pkg for pkg in wanted if not glob.glob(SYSTEM_PACKAGES[pkg]))
    if not missing:
        return
    can_apt = shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0
    if not can_apt:
        raise BuildError(
            f"missing system packages: {' '.join(missing)}. Install them with\n"
            f"    sudo apt-get install -y {' '.join(missing)}\n"
            "(chromium and firefox-esr on xvfb run the browser tests; "
            "mesa-vulkan-drivers gives wgpu a Vulkan device, "
            "the EGL/GLES packages give the webgl backend OpenGL ES). "
            "WEBJAX_SKIP_BROWSER=1 skips the browser tier."
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "update", "-qq"], env=env)
    run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], env=env)


def gates(python: Path) -> list[tuple[str, bool]]:
    """The quality gates; returns (name, passed) for each."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "pkg")}
    checks = [
        ("ruff check", [str(python), "-m", "ruff", "check", "."]),
        ("ruff format", [str(python), "-m", "ruff", "format", "--check", "."]),
        ("mypy", [str(python), "-m", "mypy"]),
        ("lint-imports", [str(venv_tool("lint-imports"))]),
    ]
    results = []
    for name, cmd in checks:
        log(f"gate: {name}")
        passed = subprocess.run(cmd, cwd=ROOT, env=env).returncode == 0
        results.append((name, passed))
    return results


# The whole suite compiles some 20,000 distinct wasm kernels natively; wasmtime maps each
# module's code separately (about 3 memory mappings each), and one process past Linux's
# vm.max_map_count (65,530) fails wherever the next mapping is wanted (XLA, wgpu, wasmtime).
# So a plain `test` runs the native files in several processes, NATIVE_GROUPS of them, as many at
# once as the machine has cores (WEBJAX_TEST_JOBS overrides): the native tests are mostly
# single-threaded Python, so two cores take them in about half the time of one process after
# another.
NATIVE_GROUPS = 6


def pytest_runs(
    pytest_args: list[str],
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    """(name, pytest arguments) of each pytest process, as (those run alone, one after another;
    those run side by side): the given arguments in one process, or with none, the browser tier
    alone (Chromium's processes and its timeouts want the cores), then side by side the
    ecosystem tier and NATIVE_GROUPS groups of the native test files."""
    if pytest_args:
        return [("pytest", pytest_args)], []
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py"))
    size = -(-len(files) // NATIVE_GROUPS)
    groups = [files[i : i + size] for i in range(0, len(files), size)]
    side_by_side = [("pytest tests/ecosystem", ["tests/ecosystem"])]
    for k, group in enumerate(groups, 1):
        side_by_side.append((f"pytest native {k}/{len(groups)} ({group[0]} .. {group[-1]})", group))
    return [("pytest tests/browser", ["tests/browser"])], side_by_side


def test_jobs() -> int:
    """How many pytest processes run side by side: WEBJAX_TEST_JOBS, else the usable cores."""
    if os.environ.get("WEBJAX_TEST_JOBS"):
        return max(1, int(os.environ["WEBJAX_TEST_JOBS"]))
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def run_side_by_side(
    python: Path, runs: list[tuple[str, list[str]]], jobs: int
) -> list[tuple[str, bool]]:
    """Each run's pytest in its own process, `jobs` at a time; a process's output goes to a log
    file under dist/test-logs/ and is printed whole when it ends, so the logs do not interleave."""
    import concurrent.futures
    import time

    logs = DIST / "test-logs"
    logs.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()

    def one(index: int, name: str, args: list[str]) -> bool:
        log_path = logs / f"run{index}.log"
        start = time.monotonic()
        with log_path.open("w") as out:
            code = subprocess.run(
                [str(python), "-m", "pytest", *args], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
            ).returncode
        minutes, seconds = divmod(int(time.monotonic() - start), 60)
        with lock:
            log(f"$ pytest {' '.join(args)}  [{name}: exit {code}, {minutes}:{seconds:02d}]")
            sys.stdout.write(log_path.read_text())
            sys.stdout.flush()
        return code == 0

    log(f"{len(runs)} pytest processes, {jobs} at a time (logs in {logs.relative_to(ROOT)}/)")
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(one, i, name, args) for i, (name, args) in enumerate(runs, 1)]
        return [(name, f.result()) for (name, _), f in zip(runs, futures)]


def test(pytest_args: list[str], run_gates: bool) -> int:
    skip_browser = os.environ.get("WEBJAX_SKIP_BROWSER") == "1"
    if skip_browser:
        log("WARNING: WEBJAX_SKIP_BROWSER=1: the browser tier will be SKIPPED")
    ensure_system_packages(need_browser=not skip_browser)
    python = build()
    if not skip_browser:
        fetch_deno()  # the Node.js/Deno tier's Deno
        fetch_firefox_driver()  # the Firefox tier's WebDriver BiDi client
        ensure_lite_venv()  # JupyterLite's builder (test_pyscript_lite.py builds dist/lite/)
    results = gates(python) if run_gates else []
    alone, side_by_side = pytest_runs(pytest_args)
    for name, args in alone:
        log("$ pytest " + " ".join(args))
        code = subprocess.run([str(python), "-m", "pytest", *args], cwd=ROOT).returncode
        results.append((name, code == 0))
    if side_by_side:
        results += run_side_by_side(python, side_by_side, test_jobs())
    print()
    for name, passed in results:
        log(f"{'PASS' if passed else 'FAIL'}  {name}")
    return 0 if all(passed for _, passed in results) else 1


def fuzz(budget: float, devices: list[str], report: Path | None, seed: int) -> int:
    """tests/fuzz/runner.py in 32-bit mode (3/4 of the budget) and in 64-bit mode (a second
    process: jax_enable_x64 holds process-wide), the reports merged into one; fails when any
    case failed."""
    python = ensure_venv()
    assemble_kernels(python)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "pkg")}
    parts = []
    for x64, share in ((False, 0.75), (True, 0.25)):
        out = (report or ROOT / "dist" / "fuzz.json").with_suffix(f".x{64 if x64 else 32}.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            str(python),
            str(ROOT / "tests" / "fuzz" / "runner.py"),
            "--budget",
            str(budget * share),
        ]
        cmd += ["--seed", str(seed), "--report", str(out), *["--x64"] * x64]
        for d in devices:
            cmd += ["--device", d]
        log("$ " + " ".join(cmd[1:]))
        if subprocess.run(cmd, cwd=ROOT, env=env).returncode != 0:
            return 1
        parts.append(json.loads(out.read_text()))
        out.unlink()
    merged = {"budget_s": budget, "seed": seed, "runs": parts}
    merged["failures"] = sum(len(p["failures"]) for p in parts)
    merged["cases"] = {
        ("x64 " if p["x64"] else "") + d: v["cases"] for p in parts for d, v in p["devices"].items()
    }
    target = report or ROOT / "dist" / "fuzz.json"
    target.write_text(json.dumps(merged, indent=1) + "\n")
    log(f"fuzz: {merged['cases']}, {merged['failures']} failures; report: {target}")
    return 1 if merged["failures"] else 0


# The Array API standard's test suite (data-apis/array-api-tests, not on the package
# registries), pinned with its spec submodule; run by `build.py array-api`, not by the tests.
ARRAY_API_TESTS = "https://github.com/data-apis/array-api-tests"
ARRAY_API_TESTS_COMMIT = "55fcc60179efa2680ddd6cd926ddf17b83530e2b"  # 2026-04-03
ARRAY_API_SPEC = "https://github.com/data-apis/array-api"
ARRAY_API_SPEC_COMMIT = "5f847a3858875c682ae901aa22b0413bf24be9da"  # its submodule there
ARRAY_API_REQUIREMENTS = ["hypothesis>=6.151.0", "ndindex>=1.8", "pytest-json-report>=1.5"]


def _git_checkout(source: str, commit: str, dest: Path) -> None:
    if not (dest / ".git").exists():
        if dest.exists():
            shutil.rmtree(dest)
        run(["git", "clone", "--quiet", source, str(dest)])
    if subprocess.run(["git", "-C", str(dest), "cat-file", "-e", commit + "^{commit}"]).returncode:
        run(["git", "-C", str(dest), "fetch", "--quiet", source])
    run(["git", "-C", str(dest), "checkout", "--quiet", "--force", commit])


def array_api(
    module: str, max_examples: int, report: Path | None, source: str, spec: str, rest: list[str]
) -> int:
    """array-api-tests against `module` (webjax.numpy, or jax.numpy for the oracle's figure)
    with 64-bit types on, no deadline (a slow example is not a wrong one) and no shrinking
    (tests/array_api_plugin.py); the counts go to `report` (default
    dist/array-api.<module>.json)."""
    python = ensure_venv()
    assemble_kernels(python)
    checkout = CACHE / "array-api-tests"
    _git_checkout(source, ARRAY_API_TESTS_COMMIT, checkout)
    _git_checkout(spec, ARRAY_API_SPEC_COMMIT, checkout / "array-api")
    run([str(python), "-m", "pip", "install", "--quiet", *ARRAY_API_REQUIREMENTS])
    target = report or ROOT / "dist" / f"array-api.{module}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "pkg"), str(ROOT / "tests")]),
        "ARRAY_API_TESTS_MODULE": module,
        "JAX_ENABLE_X64": "1",
    }
    cmd = [str(python), "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider"]
    cmd += ["-p", "array_api_plugin", "-p", "no:randomly"]
    cmd += [f"--max-examples={max_examples}", "--disable-deadline", "--disable-warnings"]
    cmd += ["--json-report"]
    cmd += [f"--json-report-file={target}", "--json-report-omit", "log", "streams", *rest]
    log("$ " + " ".join(cmd[1:]))
    subprocess.run(cmd, cwd=checkout, env=env)
    summary = json.loads(target.read_text())["summary"]
    log(f"array-api ({module}, --max-examples={max_examples}): {summary}; report: {target}")
    return 0 if summary.get("failed", 0) == 0 else 1


def soak(steps: int, ops: int, report: Path | None) -> int:
    """tests/browser/test_soak_browser.py at full length on every browser device; the sampled
    series go to `report` (default dist/soak.json)."""
    build()
    python = ensure_venv()
    target = report or ROOT / "dist" / "soak.json"
    env = {
        **os.environ,
        "WEBJAX_SOAK_STEPS": str(steps),
        "WEBJAX_SOAK_OPS": str(ops),
        "WEBJAX_SOAK_REPORT": str(target),
    }
    cmd = [str(python), "-m", "pytest", "tests/browser/test_soak_browser.py", "-q"]
    code = subprocess.run(cmd, cwd=ROOT, env=env).returncode
    log(f"soak: the series are in {target}")
    return code


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="build.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("build", help="build the wheel and dist/site/ (the default)")
    serve_parser = sub.add_parser("serve", help="build, then serve dist/site/")
    serve_parser.add_argument("--port", type=int, default=8000)
    serve_parser.add_argument("--host", default="127.0.0.1")
    serve_parser.add_argument(
        "--no-isolation", action="store_true", help="leave out the COOP/COEP headers"
    )
    lite_parser = sub.add_parser("lite", help="build, then the JupyterLite site dist/lite/")
    lite_parser.add_argument("--serve", action="store_true", help="then serve dist/lite/")
    lite_parser.add_argument("--port", type=int, default=8001)
    lite_parser.add_argument("--host", default="127.0.0.1")
    lite_parser.add_argument(
        "--no-isolation", action="store_true", help="leave out the COOP/COEP headers"
    )
    sub.add_parser("lint", help="run the quality gates only")
    layers_parser = sub.add_parser(
        "layers", help="report files, import cycles and upward imports per layer"
    )
    layers_parser.add_argument(
        "--write-docs", action="store_true", help="rewrite the size table in docs/ARCHITECTURE.md"
    )
    test_parser = sub.add_parser(
        "test", help="set up, build, run the gates and pytest", allow_abbrev=False
    )
    test_parser.add_argument("--no-gates", action="store_true", help="skip ruff/mypy/lint-imports")
    sub.add_parser("bench", help="build, then bench/run.py (its arguments pass on)", add_help=False)
    fuzz_parser = sub.add_parser("fuzz", help="differential fuzzing against JAX, a JSON report")
    fuzz_parser.add_argument("--budget", type=float, default=600.0, help="seconds in all")
    fuzz_parser.add_argument(
        "--device", action="append", default=[], help="cpu, wasm, webgpu, webgl (default: all)"
    )
    fuzz_parser.add_argument("--report", type=Path, default=None, help="default dist/fuzz.json")
    fuzz_parser.add_argument("--seed", type=int, default=0)
    soak_parser = sub.add_parser("soak", help="the browser soaks at full length, the series")
    soak_parser.add_argument("--steps", type=int, default=10_000, help="training steps")
    soak_parser.add_argument("--ops", type=int, default=100_000, help="eager ops")
    soak_parser.add_argument("--report", type=Path, default=None, help="default dist/soak.json")
    aat_parser = sub.add_parser(
        "array-api", help="the Array API test suite (array-api-tests), counts in a JSON report"
    )
    aat_parser.add_argument("--module", default="webjax.numpy", help="or jax.numpy, the oracle")
    aat_parser.add_argument("--max-examples", type=int, default=20)
    aat_parser.add_argument("--report", type=Path, default=None)
    aat_parser.add_argument("--source", default=ARRAY_API_TESTS, help="a git URL or a clone")
    aat_parser.add_argument("--spec-source", default=ARRAY_API_SPEC, help="its spec submodule's")
    args, rest = parser.parse_known_args(argv)
    if rest and args.command not in ("test", "bench", "array-api"):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        if args.command in (None, "build"):
            build()
        elif args.command == "serve":
            build()
            serve(args.port, not args.no_isolation, args.host)
        elif args.command == "lite":
            build()
            build_lite()
            if args.serve:
                serve(args.port, not args.no_isolation, args.host, LITE)
        elif args.command == "lint":
            results = gates(ensure_venv())
            return 0 if all(passed for _, passed in results) else 1
        elif args.command == "layers":
            report = [str(sys.executable), str(ROOT / "tests" / "import_graph.py")]
            return subprocess.run(report + ["--write-docs"] * args.write_docs, cwd=ROOT).returncode
        elif args.command == "test":
            return test(rest, run_gates=not args.no_gates)
        elif args.command == "fuzz":
            return fuzz(args.budget, args.device, args.report, args.seed)
        elif args.command == "soak":
            return soak(args.steps, args.ops, args.report)
        elif args.command == "array-api":
            return array_api(
                args.module, args.max_examples, args.report, args.source, args.spec_source, rest
            )
        elif args.command == "bench":
            build()
            python = ensure_venv()
            bench = [str(python), str(ROOT / "bench" / "run.py"), *rest]
            return subprocess.run(bench, cwd=ROOT).returncode
    except BuildError as e:
        log(f"ERROR: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
