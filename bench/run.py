#!/usr/bin/env python3
"""The browser benchmark: webjax vs jax-js (and TF.js on webgl) in one Chromium, plus native
references.

    .venv/bin/python bench/run.py [--quick] [--out bench/results/latest.json]
                                  [--only SUBSTR ...] [--cases SUBSTR ...] [--no-native]
                                  [--no-browser] [--webgl-plain] [--tfjs-sync fence|data]

    e.g. only webgl:  .venv/bin/python bench/run.py --quick --no-native --only webgl
    webjax.onnx vs onnxruntime-web and jax-js's ONNX loader (a ResNet-50-shaped CNN, a
    transformer encoder layer; bench/onnx_vs_ort.py):
                      .venv/bin/python bench/run.py --onnx [--only wasm] [--onnx-models encoder]
                                                   [--onnx-libs webjax jaxjs]
    time to first result only, by phase, cold and warm:
                      .venv/bin/python bench/run.py --first-result-only [--only wasm] [--repeat 3]

In one run:
  1. builds dist/site/ (`python build.py`) when it is older than the sources; fetches jax-js
     (`npm pack @jax-js/jax@VERSION`) and TF.js (`npm pack @tensorflow/tfjs@VERSION`, which
     bundles its webgl backend) into .cache/ (once) and unpacks them to dist/site/bench/jax-js/
     and dist/site/bench/tfjs/ (of TF.js only its flat ES module, dist/tf.fesm.min.js); copies
     bench/page.html and the three suites (suite_webjax.py, suite_jaxjs.mjs, suite_tfjs.mjs)
     next to them;
  2. natively: NumPy (matmul, chain, sum) and webjax on wasm (wasmtime) as the CPU reference;
  3. in headless Chromium (the browser tests' flags: WebGPU on SwiftShader, WebGL2 on ANGLE's
     SwiftShader), for each of webjax (Pyodide) and jax-js on `wasm` and `webgpu`, served with
     and without COOP/COEP (cross-origin isolated or not), and for webjax, jax-js and TF.js on
     `webgl` (cross-origin isolated only, unless --webgl-plain): time to first result, then the
     suite, one case per call, alternating between the libraries' pages;
  4. prints one table and writes JSON to bench/results/<timestamp>.json and to --out.

The table: rows are the benchmarks; columns are configurations, grouped by device and isolation
(only those that ran: --only and --no-native drop columns):
  native            numpy, webjax on wasmtime
  wasm, webgpu      webjax, jax-js, ratio = webjax / jax-js of the metric
  webgl             webjax, jax-js, tf.js, w/jax-js = webjax / jax-js, w/tf.js = webjax / TF.js
For µs/op and s lower is better, for the rest higher (so a ratio > 1 favours webjax except on
those rows). TF.js has no jit: its "conv2d jit" runs the eager op again and its chain is five
kernels; its conv2d is NHWC with an HWIO filter (the same shapes, TF.js's layouts). On webgl
each timed call ends with a wait for the GPU: webjax's block_until_ready_async and TF.js poll
a WebGL fence, jax-js uses blockUntilReady (--tfjs-sync data:
`await t.data()` instead, the whole output read back).

Every case has a time budget (a share of the run's total, capped per case): the page stops
timing when it is spent, a warm-up longer than it is recorded as "timeout", a size predicted
(from the smaller size) to exceed it is skipped as "timeout", and a call that hangs past
2 x budget + 20 s is killed (its page is closed and reloaded for the next case).

Standard library + playwright (the tools venv has both); NumPy for the native reference.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import importlib.util
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SITE = ROOT / "dist" / "site"
SITE_BENCH = SITE / "bench"
CACHE = ROOT / ".cache"
RESULTS = BENCH / "results"
JAXJS_PACKAGE = "@jax-js/jax"
JAXJS_VERSION = "0.1.25"  # the version issue 5/6's anchors were measured with
TFJS_PACKAGE = "@tensorflow/tfjs"  # the union package: core + the cpu and webgl backends
TFJS_VERSION = "4.22.0"
TFJS_ENTRY = "dist/tf.fesm.min.js"  # the flat ES module bundle (no imports)
CHROMIUM = os.environ.get("WEBJAX_CHROMIUM", "/usr/bin/chromium")
# The same flags as tests/browser/conftest.py (DESIGN.md section 2): WebGPU on SwiftShader.
CHROMIUM_ARGS = [
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader",
    "--use-angle=swiftshader",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
PAGE_FILES = ("page.html", "suite_webjax.py", "suite_jaxjs.mjs", "suite_tfjs.mjs")
DEVICES = ("wasm", "webgpu", "webgl")
LIBS = {"wasm": ("webjax", "jaxjs"), "webgpu": ("webjax", "jaxjs"),
        "webgl": ("webjax", "jaxjs", "tfjs")}  # fmt: skip
# WebGL runs cross-origin isolated only: isolation gives wasm its threads; a WebGL context is
# the same either way. --webgl-plain adds the plain runs.
WEBGL_ISOLATION = (True,)
LOAD_TIMEOUT_S = 180
MLP = {"batch": 128, "d_in": 784, "hidden": 512, "d_out": 10, "lr": 0.01}
CONV = {"n": 8, "c": 32, "h": 64, "w": 64, "o": 32, "k": 3}


def log(message: str) -> None:
    print(f"[bench] {message}", flush=True)


# --- the suite --------------------------------------------------------------------------------


def suite(quick: bool) -> list[dict[str, Any]]:
    """The cases, in order: id, kind, params, the metric's unit and work per call, and `group`
    (cases of one group grow in size; a bigger one is skipped when the smaller one predicts it
    would not fit in its budget)."""
    cases: list[dict[str, Any]] = []
    for n in (256, 512, 1024) if quick else (256, 512, 1024, 2048):
        cases.append(
            {"id": f"matmul {n}", "kind": "matmul", "params": {"n": n}, "unit": "GFLOP/s",
             "work": 2 * n**3 / 1e9, "group": "matmul"}
        )  # fmt: skip
    for e in (20, 24):
        cases.append(
            {"id": f"chain 2^{e}", "kind": "chain", "params": {"n": 2**e}, "unit": "GB/s",
             "work": 12 * 2**e / 1e9, "group": "chain"}
        )  # fmt: skip
    cases.append(
        {"id": "sum 2^24", "kind": "sum", "params": {"n": 2**24}, "unit": "GB/s",
         "work": 4 * 2**24 / 1e9}
    )  # fmt: skip
    cases.append(
        {"id": "eager add x1000", "kind": "eager_add", "params": {"count": 1000, "size": 64},
         "unit": "µs/op", "work": 1000}
    )  # fmt: skip
    cases.append(
        {"id": "mlp sgd step", "kind": "mlp", "params": dict(MLP), "unit": "steps/s", "work": 1}
    )
    conv_flops = 2 * CONV["n"] * CONV["o"] * CONV["h"] * CONV["w"] * CONV["c"] * CONV["k"] ** 2
    for jit in (True, False):
        cases.append(
            {"id": f"conv2d {'jit' if jit else 'eager'}", "kind": "conv2d",
             "params": {**CONV, "jit": jit}, "unit": "GFLOP/s", "work": conv_flops / 1e9}
        )  # fmt: skip
    return cases


LOWER_IS_BETTER = {"µs/op", "s"}


def metric(case: dict[str, Any], seconds: float) -> float:
    """Median seconds per call -> the case's metric."""
    if case["unit"] == "µs/op":
        return seconds / case["work"] * 1e6
    if case["unit"] == "steps/s":
        return 1.0 / seconds
    return case["work"] / seconds  # GFLOP/s or GB/s (work in GFLOP or GB)


def finish(case: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    out = {"unit": case["unit"], **raw}
    if raw.get("status") == "ok" and raw.get("times"):
        med = statistics.median(raw["times"])
        out["median_s"] = med
        out["value"] = metric(case, med)
        out["best"] = metric(case, min(raw["times"]))
    return out


# --- building the site and fetching jax-js ----------------------------------------------------


def site_is_stale() -> list[str]:
    """Like tests/browser/conftest.py: the site is stale when a source is newer than its wheel."""
    wheels = list((SITE / "wheels").glob("*.whl"))
    if not (SITE / "manifest.json").exists() or len(wheels) != 1:
        return ["(not built)"]
    built = wheels[0].stat().st_mtime
    sources = [
        *(ROOT / "pkg" / "webjax").rglob("*.py"),
        *(ROOT / "wasm_kernels").glob("*.wat"),
        *(p for p in (ROOT / "web").rglob("*") if p.is_file()),
    ]
    return [str(p.relative_to(ROOT)) for p in sources if p.stat().st_mtime > built]


def ensure_site() -> None:
    stale = site_is_stale()
    if stale:
        log(f"dist/site is stale ({', '.join(stale[:3])}...): running build.py")
        subprocess.run([sys.executable, str(ROOT / "build.py")], cwd=ROOT, check=True)
        still = site_is_stale()
        if still:
            raise SystemExit(f"build.py left dist/site stale: {still[:3]}")


def npm_pack(package: str, version: str) -> Path:
    """`npm pack PACKAGE@VERSION` into .cache/ (once); returns the tarball."""
    CACHE.mkdir(exist_ok=True)
    tgz = CACHE / f"{package.removeprefix('@').replace('/', '-')}-{version}.tgz"
    if not tgz.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit(f"npm is needed to fetch {package} (apt-get install npm)")
        log(f"$ npm pack {package}@{version}")
        subprocess.run(
            [npm, "pack", f"{package}@{version}", "--pack-destination", str(CACHE)],
            cwd=CACHE, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        if not tgz.exists():
            raise SystemExit(f"npm pack did not produce {tgz}")
    return tgz


def unpack(tgz: Path, target: Path, keep: Any = None) -> None:
    """Unpack the npm tarball's package/ to `target` (once per tarball; `keep(path)` picks the
    files, all by default)."""
    stamp = target / ".webjax-stamp"
    stamp_text = f"{tgz.name} {tgz.stat().st_size}"
    if stamp.exists() and stamp.read_text() == stamp_text:
        return
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    with tarfile.open(tgz) as tf:
        for member in tf.getmembers():
            if not member.isfile() or not member.name.startswith("package/"):
                continue
            if ".." in Path(member.name).parts:
                raise SystemExit(f"unsafe path in {tgz.name}: {member.name}")
            name = member.name.removeprefix("package/")
            if keep is not None and not keep(name):
                continue
            dest = target / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            source = tf.extractfile(member)
            assert source is not None
            with source, open(dest, "wb") as f:
                shutil.copyfileobj(source, f)
    stamp.write_text(stamp_text)
    log(f"unpacked {tgz.name} -> {target.relative_to(ROOT)}/")


def fetch_jaxjs(version: str) -> tuple[str, str]:
    """npm pack jax-js into .cache/ (once), unpack it to dist/site/bench/jax-js/; returns
    (version, the ES module entry relative to dist/site/bench/)."""
    target = SITE_BENCH / "jax-js"
    unpack(npm_pack(JAXJS_PACKAGE, version), target)
    package = json.loads((target / "package.json").read_text())
    exports = package.get("exports", {})
    root_export = exports.get(".", exports) if isinstance(exports, dict) else exports
    if isinstance(root_export, dict):
        entry = root_export.get("import") or root_export.get("default")
        if isinstance(entry, dict):  # {"import": {"types": ..., "default": ...}}
            entry = entry.get("default")
    else:
        entry = root_export
    entry = entry or package.get("module") or package.get("main")
    if not isinstance(entry, str) or not (target / entry).is_file():
        raise SystemExit(f"cannot find jax-js's ES module entry in its package.json: {entry}")
    return package["version"], "jax-js/" + entry.removeprefix("./")


def fetch_tfjs(version: str) -> tuple[str, str]:
    """npm pack TF.js into .cache/ (once), unpack its self-contained ES module bundle (core,
    the cpu and webgl backends; 1 MB of the package's 150) to dist/site/bench/tfjs/; returns
    (version, the entry relative to dist/site/bench/)."""
    target = SITE_BENCH / "tfjs"
    unpack(
        npm_pack(TFJS_PACKAGE, version),
        target,
        keep=lambda n: n in (TFJS_ENTRY, "package.json", "LICENSE"),
    )
    package = json.loads((target / "package.json").read_text())
    if not (target / TFJS_ENTRY).is_file():
        raise SystemExit(f"{TFJS_PACKAGE}@{version} has no {TFJS_ENTRY}")
    return package["version"], "tfjs/" + TFJS_ENTRY


def layout_bench_pages() -> None:
    SITE_BENCH.mkdir(parents=True, exist_ok=True)
    for name in PAGE_FILES:
        shutil.copyfile(BENCH / name, SITE_BENCH / name)


def load_build_module() -> Any:
    # By path and under another name: `import build` would find PyPA's `build` in the venv.
    spec = importlib.util.spec_from_file_location("webjax_build_script", ROOT / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- budgets ----------------------------------------------------------------------------------


class Clock:
    """The run's deadline, shared out between the configurations still to run."""

    def __init__(self, total_s: float, cap_s: float, floor_s: float) -> None:
        self.deadline = time.monotonic() + total_s
        self.cap, self.floor = cap_s, floor_s

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def share(self, parts: float) -> float:
        return max(0.0, self.left()) / max(parts, 1.0)

    def budget(self, config_deadline: float, cases_left: int) -> float:
        left = config_deadline - time.monotonic()
        return max(self.floor, min(self.cap, left / max(cases_left, 1)))


def predicted_skip(
    case: dict[str, Any],
    done: dict[str, dict[str, Any]],
    cases: list[dict[str, Any]],
    budget: float,
) -> str | None:
    """A reason to skip `case` when the previous size of its group says it cannot fit."""
    group = case.get("group")
    if group is None:
        return None
    previous = [c for c in cases if c.get("group") == group and c["id"] in done]
    if not previous:
        return None
    prev = previous[-1]
    res = done[prev["id"]]
    if res.get("status") not in ("ok",):
        return f"timeout (skipped: {prev['id']} was {res.get('status')})"
    per_call = res["median_s"] * case["work"] / prev["work"]
    if per_call > budget:
        return f"timeout (predicted {per_call:.1f} s per call > budget {budget:.1f} s)"
    return None


# --- native references ------------------------------------------------------------------------


def numpy_reference(
    cases: list[dict[str, Any]], budget: float, timing: dict[str, Any]
) -> dict[str, Any]:
    try:
        import numpy as np
    except ImportError:
        return {"error": "numpy is not installed (use .venv/bin/python)"}

    def measure(fn: Any) -> dict[str, Any]:
        start = time.perf_counter()
        fn()
        warm = time.perf_counter() - start
        fn()
        times: list[float] = []
        while len(times) < timing["reps"]:
            t = time.perf_counter()
            fn()
            d = time.perf_counter() - t
            times.append(d)
            enough = len(times) >= 3 and sum(times) >= timing["target_s"]
            if enough or time.perf_counter() - start + d > budget:
                break
        return {"status": "ok", "warmup_s": warm, "times": times}

    rng = np.random.default_rng(0)
    out: dict[str, Any] = {}
    for case in cases:
        p = case["params"]
        if case["kind"] == "matmul":
            a = rng.random((p["n"], p["n"]), dtype=np.float32)
            b = rng.random((p["n"], p["n"]), dtype=np.float32)
            raw = measure(lambda a=a, b=b: a @ b)
        elif case["kind"] == "chain":
            x = rng.random(p["n"], dtype=np.float32)
            y = rng.random(p["n"], dtype=np.float32)
            raw = measure(lambda x=x, y=y: np.sqrt(x * x + y * y) * np.float32(0.5) + 1)
        elif case["kind"] == "sum":
            x = rng.random(p["n"], dtype=np.float32)
            raw = measure(lambda x=x: x.sum())
        else:
            continue
        out[case["id"]] = finish(case, raw)
    config: Any = np.show_config(mode="dicts") if hasattr(np, "show_config") else None
    blas = (config or {}).get("Build Dependencies", {}).get("blas", {}).get("name", "?")
    return {"lib": "numpy", "device": "cpu", "info": {"numpy": np.__version__, "blas": blas},
            "cases": out}  # fmt: skip


def webjax_native(
    cases: list[dict[str, Any]], clock: Clock, allowance: float, timing: dict[str, Any]
) -> dict[str, Any]:
    """webjax on wasm through wasmtime, one subprocess per case (killed past its hard limit)."""
    python = ROOT / ".venv" / "bin" / "python"
    python = python if python.exists() else Path(sys.executable)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "pkg"), "XDG_RUNTIME_DIR": "/tmp"}
    deadline = time.monotonic() + allowance
    done: dict[str, dict[str, Any]] = {}
    for i, case in enumerate(cases):
        budget = clock.budget(deadline, len(cases) - i)
        skip = predicted_skip(case, done, cases, budget)
        if skip:
            done[case["id"]] = {"unit": case["unit"], "status": "timeout", "note": skip}
            continue
        spec = [
            {k: case[k] for k in ("id", "kind", "params")}
            | {"budget_s": budget, "max_reps": timing["reps"], "target_s": timing["target_s"]}
        ]
        hard = 2 * budget + 20
        try:
            proc = subprocess.run(
                [str(python), str(BENCH / "suite_webjax.py"), "wasm", json.dumps(spec)],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=hard,
            )  # fmt: skip
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            raw = (
                json.loads(lines[-1])
                if lines
                else {"status": "error", "error": f"exit {proc.returncode}: {proc.stderr[-1500:]}"}
            )
        except subprocess.TimeoutExpired:
            raw = {"status": "timeout", "note": f"killed after {hard:.0f} s"}
        raw.pop("id", None)
        done[case["id"]] = finish(case, raw)
        log(f"  native webjax wasm  {case['id']:<18} {describe(done[case['id']])}")
    return {"lib": "webjax", "device": "wasm (wasmtime)", "cases": done}


# --- the browser ------------------------------------------------------------------------------


class Browser:
    def __init__(self, playwright: Any) -> None:
        self.playwright = playwright
        self.browser: Any = None
        self.generation = 0  # counts restarts: pages of an older generation are gone

    async def start(self) -> None:
        self.browser = await self.playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )

    async def restart(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.browser.close(), 20)
        self.generation += 1
        await self.start()


class BenchPage:
    """One page running one library on one device (a fresh browser context)."""

    def __init__(self, browser: Browser, url: str) -> None:
        self.browser, self.url = browser, url
        self.context: Any = None
        self.page: Any = None
        self.console: list[str] = []
        self.generation = -1

    def stale(self) -> bool:
        """Opened in a browser since restarted (by another page that would not close)."""
        return self.page is not None and self.generation != self.browser.generation

    async def open(self) -> dict[str, Any]:
        self.generation = self.browser.generation
        self.context = await self.browser.browser.new_context()
        self.page = await self.context.new_page()
        self.page.on("console", lambda m: self.console.append(f"[{m.type}] {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"[pageerror] {e}"))
        await self.page.goto(self.url)
        info = await asyncio.wait_for(
            self.page.evaluate("() => window.bench.ready"), LOAD_TIMEOUT_S
        )
        return info

    async def run_case(
        self, case: dict[str, Any], budget: float, timing: dict[str, Any]
    ) -> dict[str, Any]:
        hard = 2 * budget + 20
        try:
            return await asyncio.wait_for(
                self.page.evaluate(
                    "([k, p, b, r, t]) => window.bench.runCase(k, p, b, r, t)",
                    [case["kind"], case["params"], budget, timing["reps"], timing["target_s"]],
                ),
                hard,
            )
        except TimeoutError:
            await self.close()
            return {"status": "timeout", "note": f"killed after {hard:.0f} s", "dead": True}
        except Exception as e:  # a crashed page (out of memory, device lost, ...)
            await self.close()
            msg = str(e).splitlines()[0][:500]
            return {"status": "error", "error": f"page failed: {msg}", "dead": True,
                    "console": self.console[-15:]}  # fmt: skip

    async def close(self) -> None:
        if self.context is None:
            return
        try:
            await asyncio.wait_for(self.context.close(), 20)
        except Exception:  # a renderer that will not die: start a new browser
            log("  (context did not close: restarting the browser)")
            await self.browser.restart()
        self.context = self.page = None


async def run_group(
    browser: Browser, group: list[dict[str, Any]], cases: list[dict[str, Any]], clock: Clock,
    allowance: float, timing: dict[str, Any],
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Run the configurations of `group` (webjax and jax-js on one device and isolation) case
    by case, alternating between their pages, so that both see the same machine load."""
    deadline = time.monotonic() + allowance
    results: dict[str, dict[str, Any]] = {}
    pages: dict[str, BenchPage] = {}
    for config in group:  # loaded one after the other: time to first result alone
        name = config["name"]
        result = {k: config[k] for k in ("lib", "device", "isolated", "url")}
        results[name] = result
        page = BenchPage(browser, config["url"])
        t0 = time.monotonic()
        try:
            info = await page.open()
        except Exception as e:
            lines = str(e).strip().splitlines() or [type(e).__name__]
            # a Python traceback's first line says only that one came; its last line before
            # the JavaScript stack ("    at ...") says what
            python = [ln for ln in lines if ln.strip() and not ln.strip().startswith("at ")]
            msg = lines[0][:300] + (f" ... {python[-1][:500]}" if len(python) > 1 else "")
            log(f"  {name}: load FAILED: {msg}")
            result["error"] = f"load failed: {msg}"
            result["error_detail"] = str(e)[-4000:]
            result["console"] = page.console[-20:]
            result["cases"] = {}
            await page.close()
            continue
        result["info"] = info
        result["load_s"] = time.monotonic() - t0
        if info.get("crossOriginIsolated") != config["isolated"]:
            result["warning"] = f"crossOriginIsolated is {info.get('crossOriginIsolated')}"
        ttfr = {"unit": "s", "status": "ok", "value": info["ttfr_ms"] / 1000}
        result["cases"] = {"time to first result": ttfr}
        log(f"  {name:<20} {'first result':<18} {ttfr['value']:.2f} s after navigation start")
        pages[name] = page
    for i, case in enumerate(cases):
        for name, page in pages.items():
            done = results[name]["cases"]
            budget = clock.budget(deadline, (len(cases) - i) * len(pages))
            skip = predicted_skip(case, done, cases, budget)
            if skip:
                done[case["id"]] = {"unit": case["unit"], "status": "timeout", "note": skip}
                log(f"  {name:<20} {case['id']:<18} {skip}")
                continue
            if page.stale():
                page.context = page.page = None
            if page.page is None:  # killed by the previous case: a fresh page
                try:
                    await page.open()
                except Exception as e:
                    done[case["id"]] = {"unit": case["unit"], "status": "error",
                                        "error": f"reload failed: {str(e)[:300]}"}  # fmt: skip
                    continue
            raw = await page.run_case(case, budget, timing)
            raw["budget_s"] = round(budget, 2)
            done[case["id"]] = finish(case, raw)
            log(f"  {name:<20} {case['id']:<18} {describe(done[case['id']])}")
    for page in pages.values():
        await page.close()
    return results


async def browser_part(
    args: argparse.Namespace, cases: list[dict[str, Any]], entries: dict[str, str],
    clock: Clock, timing: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """`entries`: the page's query for each JS library (where its ES module is)."""
    from playwright.async_api import async_playwright

    build = load_build_module()
    servers = {}
    urls = {}
    for isolated in (True, False):
        server, url = build.start_server(SITE, isolated=isolated, quiet=True)
        servers[isolated], urls[isolated] = server, url
    groups = []
    webgl_isolation = (True, False) if args.webgl_plain else WEBGL_ISOLATION
    for isolated in (True, False):
        for device in DEVICES:
            if device == "webgl" and isolated not in webgl_isolation:
                continue
            group = []
            for lib in LIBS[device]:
                name = config_name(lib, device, isolated)
                if args.only and not any(s in name for s in args.only):
                    continue
                query = f"lib={lib}&device={device}" + entries.get(lib, "")
                url = f"{urls[isolated]}bench/page.html?{query}"
                group.append({"name": name, "lib": lib, "device": device,
                              "isolated": isolated, "url": url})  # fmt: skip
            if group:
                groups.append(group)
    results: dict[str, Any] = {}
    try:
        async with async_playwright() as playwright:
            browser = Browser(playwright)
            await browser.start()
            results["_browser"] = {"version": browser.browser.version, "args": CHROMIUM_ARGS}
            for i, group in enumerate(groups):
                allowance = clock.share(len(groups) - i)
                names = " + ".join(str(c["name"]) for c in group)
                log(f"{names}: {allowance:.0f} s")
                results.update(await run_group(browser, group, cases, clock, allowance, timing))
            await browser.browser.close()
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()
    return results


# --- time to first result, by phase ----------------------------------------------------------

# (label, start keys, end key) of the page's phases (ms after navigation start): a phase runs
# from the latest of its starts to its end; "page" is navigation to the page's script; webjax's
# "cache" is reading its memory snapshot from the Cache API (absent with --no-snapshot),
# "pyodide" starting Python or restoring the snapshot, its wheel download runs alongside.
PHASES = {
    "webjax": [("page", (), "start_ms"), ("manifest", ("start_ms",), "manifest_ms"),
               ("cache", ("manifest_ms",), "cache_ms"),
               ("pyodide", ("manifest_ms", "cache_ms"), "pyodide_ms"),
               ("wheel||", ("manifest_ms",), "wheel_ms"),
               ("unpack", ("pyodide_ms", "wheel_ms"), "unpack_ms"),
               ("import", ("unpack_ms",), "import_ms"), ("first", ("import_ms",), "first_ms")],
    "jaxjs": [("page", (), "start_ms"), ("import", ("start_ms",), "import_ms"),
              ("init", ("import_ms",), "init_ms"), ("first", ("init_ms",), "first_ms")],
}  # fmt: skip


async def first_result_part(args: argparse.Namespace, entries: dict[str, str]) -> dict[str, Any]:
    """Time to first result, by phase, of webjax and jax-js in one browser: for each, a fresh
    browser context (empty HTTP cache and Cache API: "cold") loads the page, then the same
    context loads it again `--repeat` times ("warm": the HTTP cache and, for webjax, the memory
    snapshot the cold load stored). The libraries alternate, repeat by repeat."""
    from playwright.async_api import async_playwright

    build = load_build_module()
    out: dict[str, Any] = {}
    servers = {}
    try:
        async with async_playwright() as playwright:
            browser = Browser(playwright)
            await browser.start()
            out["_browser"] = {"version": browser.browser.version, "args": CHROMIUM_ARGS}
            for isolated in (True, False):
                server, base = build.start_server(SITE, isolated=isolated, quiet=True)
                servers[isolated] = server
                for device in ("wasm", "webgpu"):
                    names = [config_name(lib, device, isolated) for lib in ("webjax", "jaxjs")]
                    if args.only and not any(s in n for n in names for s in args.only):
                        continue
                    for lib, name in zip(("webjax", "jaxjs"), names, strict=True):
                        query = f"lib={lib}&device={device}" + entries.get(lib, "")
                        url = f"{base}bench/page.html?{query}"
                        context = await browser.browser.new_context()
                        page = await context.new_page()
                        runs = []
                        for i in range(1 + args.repeat):
                            await page.goto(url)
                            info = await asyncio.wait_for(
                                page.evaluate("() => window.bench.ready"), LOAD_TIMEOUT_S
                            )
                            if lib == "webjax":  # the first load stores it in the background
                                await page.evaluate(
                                    "() => import('../webjax.mjs').then((m) => m.snapshotStored())"
                                )
                            runs.append({"kind": "cold" if i == 0 else "warm",
                                         "phases": info.get("phases", {}),
                                         "ttfr_ms": info["ttfr_ms"],
                                         "first_value": info.get("first_value")})  # fmt: skip
                            log(f"  {name:<20} {runs[-1]['kind']:<5} "
                                f"{info['ttfr_ms'] / 1000:.2f} s "
                                f"{runs[-1]['phases'].get('snapshot', '')}")  # fmt: skip
                        await context.close()
                        out[name] = {"lib": lib, "device": device, "isolated": isolated,
                                     "runs": runs}  # fmt: skip
            await browser.browser.close()
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()
    return out


def _is_ms(value: Any) -> bool:
    return isinstance(value, int | float)


def phase_table(results: dict[str, Any]) -> str:
    """One row per configuration and cold/warm (warm: the median of the warm loads): each
    phase's own duration (ms) and the time to first result."""
    lines = []
    for name, res in results.items():
        if name.startswith("_"):
            continue
        phases = PHASES[res["lib"]]
        head = f"{name:<20} {'load':<5} " + " ".join(f"{p:>8}" for p, _, _ in phases)
        lines += ["", head + f" {'ttfr':>8}  snapshot"]
        for kind in ("cold", "warm"):
            runs = [r for r in res["runs"] if r["kind"] == kind]
            if not runs:
                continue
            durations = []
            for _, starts, end in phases:
                values = []
                for r in runs:
                    ph = r["phases"]
                    begin = max((ph[k] for k in starts if _is_ms(ph.get(k))), default=0.0)
                    values.append(ph[end] - begin if _is_ms(ph.get(end)) else math.nan)
                durations.append(statistics.median(values))
            ttfr = statistics.median(r["ttfr_ms"] for r in runs)
            snap = runs[-1]["phases"].get("snapshot", "")
            cells = " ".join(f"{d:8.0f}" for d in durations)
            lines.append(f"{'':<20} {kind:<5} {cells} {ttfr:8.0f}  {snap}")
    return "\n".join(lines)


# --- the table --------------------------------------------------------------------------------


LIB_NAMES = {"webjax": "webjax", "jaxjs": "jax-js", "tfjs": "tf.js"}


def config_name(lib: str, device: str, isolated: bool) -> str:
    return f"{LIB_NAMES[lib]} {device} {'coi' if isolated else 'plain'}"


def describe(res: dict[str, Any]) -> str:
    if res.get("status") == "ok" and "value" in res:
        text = f"{fmt(res['value'])} {res['unit']}"
        if res.get("check_rel_err") is not None and res["check_rel_err"] > 1e-3:
            text += f" (CHECK FAILED: rel err {res['check_rel_err']:.2g})"
        return text
    note = res.get("note") or res.get("error", "")
    if not note and "warmup_s" in res:
        note = f"warm-up {res['warmup_s']:.1f} s > budget {res.get('budget_s', 0):.1f} s"
    return f"{res.get('status')}: {note}"[:200]


def fmt(v: float) -> str:
    if v == 0 or not math.isfinite(v):
        return str(v)
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def cell(res: dict[str, Any] | None) -> str:
    if res is None:
        return "-"
    status = res.get("status")
    if status == "ok" and "value" in res:
        bad = res.get("check_rel_err") is not None and res["check_rel_err"] > 1e-3
        return fmt(res["value"]) + ("!" if bad else "")
    if status == "timeout":
        return "timeout"
    if status == "n/a":
        return "n/a"
    return "error"


def table(results: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    """Rows: the cases; columns: the native references, then per isolation and device each
    library and webjax's ratio to each other library. Configurations that did not run (--only,
    --no-native) have no column."""
    row_ids = [c["id"] for c in cases] + ["time to first result"]
    units = {c["id"]: c["unit"] for c in cases} | {"time to first result": "s"}
    columns: list[tuple[str, str, str, Any]] = []  # (device, isolation, library, getter)

    def getter(config: str) -> Any:
        return lambda rid: (results.get(config, {}).get("cases") or {}).get(rid)

    if "numpy native" in results:
        columns.append(("native", "", "numpy", getter("numpy native")))
    if "webjax wasm native" in results:
        columns.append(("native", "wasmtime", "webjax", getter("webjax wasm native")))
    for isolated in (True, False):
        for device in DEVICES:
            names = {lib: config_name(lib, device, isolated) for lib in LIBS[device]}
            if not any(n in results for n in names.values()):
                continue
            iso = "coi" if isolated else "plain"
            for lib, name in names.items():
                columns.append((device, iso, LIB_NAMES[lib], getter(name)))
            w = names["webjax"]
            others = [lib for lib in LIBS[device] if lib != "webjax"]
            for lib in others:

                def ratio(rid: str, w: str = w, j: str = names[lib]) -> dict[str, Any] | None:
                    a, b = getter(w)(rid), getter(j)(rid)
                    if not (a and b and "value" in a and "value" in b and b["value"]):
                        return None
                    return {"status": "ok", "value": a["value"] / b["value"]}

                label = "ratio" if len(others) == 1 else f"w/{LIB_NAMES[lib]}"
                columns.append((device, iso, label, ratio))
    label_width = max(len(f"{r} [{units[r]}]") for r in row_ids) + 1
    width = 9
    heads = [
        " " * label_width + "".join(f"{c[0]:>{width}}" for c in columns),
        " " * label_width + "".join(f"{c[1]:>{width}}" for c in columns),
        f"{'benchmark [unit]':<{label_width}}" + "".join(f"{c[2]:>{width}}" for c in columns),
    ]
    lines = [*heads, "-" * len(heads[-1])]
    for rid in row_ids:
        label = f"{rid} [{units[rid]}]"
        cells = []
        for _, _, lib, get in columns:
            res = get(rid)
            text = cell(res)
            if (lib == "ratio" or lib.startswith("w/")) and res is not None:
                text = f"{res['value']:.2f}x"
            cells.append(f"{text:>{width}}")
        lines.append(f"{label:<{label_width}}" + "".join(cells))
    lines.append(
        "ratio = webjax / jax-js of the metric (same device and isolation); on webgl w/jax-js "
        "= webjax / jax-js and w/tf.js = webjax / TF.js. For µs/op and s lower is better, for "
        "the rest higher. coi = cross-origin isolated (COOP/COEP; wasm threads for jax-js), "
        "plain = without. '!' = the result's spot check failed. webgpu and webgl are "
        "SwiftShader (a CPU emulation): only their ratios mean anything. TF.js has no jit: "
        "its 'conv2d jit' is the eager op again, its chain five kernels."
    )
    return "\n".join(lines)


# --- main -------------------------------------------------------------------------------------


def ensure_tools_python(argv: list[str]) -> None:
    """Re-run under the tools venv's Python (it has playwright and numpy) when this one lacks
    playwright; build.py creates the venv when there is none."""
    if importlib.util.find_spec("playwright") is not None:
        return
    venv_python = ROOT / ".venv" / "bin" / "python"
    if not venv_python.exists():
        log("no tools venv: running build.py")
        subprocess.run([sys.executable, str(ROOT / "build.py")], cwd=ROOT, check=True)
    if Path(sys.prefix).resolve() == (ROOT / ".venv").resolve():
        raise SystemExit("playwright is missing from .venv (it is in the `test` extra)")
    log(f"re-running under {venv_python.relative_to(ROOT)}")
    os.execv(venv_python, [str(venv_python), str(Path(__file__).resolve()), *argv])


def onnx_part(args: argparse.Namespace, argv: list[str]) -> int:
    """`--onnx`: webjax.onnx vs onnxruntime-web and jax-js's ONNX loader (bench/onnx_vs_ort.py);
    a table and JSON in bench/results/onnx-<timestamp>.json. Exits 1 when webjax failed or an
    output compared with ORT's disagrees with it (a model jax-js cannot run is reported)."""
    ensure_tools_python(argv)
    ensure_site()
    import onnx_vs_ort

    version = onnx_vs_ort.fetch_ort(SITE_BENCH, npm_pack, unpack, args.ort_version)
    jaxjs_version, jaxjs_entry = fetch_jaxjs(args.jaxjs_version)
    onnx_version = args.jaxjs_onnx_version or onnx_vs_ort.JAXJS_ONNX_VERSION
    import_map = onnx_vs_ort.fetch_jaxjs_onnx(
        SITE_BENCH, npm_pack, unpack, onnx_version, jaxjs_entry
    )
    onnx_vs_ort.copy_pages(BENCH, SITE_BENCH, import_map)
    specs = onnx_vs_ort.write_models(SITE_BENCH, BENCH, args.onnx_models)
    devices = [d for d in onnx_vs_ort.DEVICES if not args.only or any(s in d for s in args.only)]
    libs = tuple(lib for lib in onnx_vs_ort.LIBS if lib in args.onnx_libs)
    server, url = load_build_module().start_server(SITE, isolated=True)
    load_before = os.getloadavg()
    started = time.monotonic()
    try:
        rows = asyncio.run(
            onnx_vs_ort.browser_runs(
                url, specs, devices, CHROMIUM, CHROMIUM_ARGS, args.onnx_reps, args.onnx_budget,
                libs,
            )
        )  # fmt: skip
    finally:
        server.shutdown()
    text = onnx_vs_ort.table(rows)
    failed = onnx_vs_ort.failures(rows)
    print(
        f"\nwebjax.onnx (jit) vs onnxruntime-web {version} and jax-js {jaxjs_version} "
        f"(@jax-js/onnx {onnx_version}, jit) in Chromium, batch 1; ms per inference "
        "(median after the first call); ORT/webjax and jax-js/webjax > 1: webjax is faster; "
        "err = max|lib - ORT| / max|ORT| (*: against ORT on wasm), max|d| = max|jax-js - ORT|"
    )
    print(text)
    for line in failed:
        print(line)
    print(
        f"(total {(time.monotonic() - started) / 60:.1f} min; load average "
        f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs)"
    )
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    for row in rows:  # the outputs themselves stay out of the report
        for lib in onnx_vs_ort.LIBS:
            row.get(lib, {}).pop("output_b64", None)
    report = {
        "meta": {
            "timestamp": stamp,
            "ort": {"package": onnx_vs_ort.ORT_PACKAGE, "version": version},
            "jaxjs": {
                "package": JAXJS_PACKAGE,
                "version": jaxjs_version,
                "onnx": {
                    "package": onnx_vs_ort.JAXJS_ONNX_PACKAGE,
                    "version": onnx_version,
                    "deps": onnx_vs_ort.JAXJS_ONNX_DEPS,
                },
                "import_map": import_map,
            },
            "git": git_describe(),
            "command": " ".join(["bench/run.py", *argv]),
            "models": specs,
            "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(),
            "cpus": os.cpu_count(),
        },
        "rows": rows,
        "table": text.splitlines(),
        "failures": failed,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"onnx-{stamp}.json"
    path.write_text(json.dumps(report, indent=1, default=repr) + "\n")
    log(f"wrote {path}")
    return 0 if onnx_vs_ort.all_agree(rows) else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and reps, < 8 minutes")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json")
    parser.add_argument("--only", nargs="*", default=[], help="browser configs whose name has")
    parser.add_argument("--cases", nargs="*", default=[], help="only cases whose id has")
    parser.add_argument("--no-native", action="store_true")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--total-minutes", type=float, help="the run's time target")
    parser.add_argument("--case-budget", type=float, help="the cap of one case's budget (s)")
    parser.add_argument("--jaxjs-version", default=JAXJS_VERSION)
    parser.add_argument("--tfjs-version", default=TFJS_VERSION)
    parser.add_argument(
        "--tfjs-sync", choices=("fence", "data"), default="fence",
        help="how a TF.js call ends: a WebGL fence (no read-back) or `await t.data()`",
    )  # fmt: skip
    parser.add_argument(
        "--webgl-plain", action="store_true", help="webgl also without cross-origin isolation"
    )
    parser.add_argument(
        "--first-result-only", action="store_true",
        help="only the time to first result, by phase, cold and warm (webjax vs jax-js)",
    )  # fmt: skip
    parser.add_argument("--repeat", type=int, default=2, help="warm loads per configuration")
    parser.add_argument(
        "--no-snapshot", action="store_true",
        help="webjax without its memory snapshot (the page's ?snapshot=0)",
    )  # fmt: skip
    parser.add_argument(
        "--onnx",
        action="store_true",
        help="only webjax.onnx vs onnxruntime-web and jax-js on ONNX models (bench/onnx_vs_ort.py)",
    )
    parser.add_argument(
        "--onnx-models",
        nargs="*",
        default=["resnet50", "encoder", "resnet50-folded", "encoder-static"],
        help="bench/onnx_models.py's ids (the -folded/-static forms are those jax-js can load)",
    )
    parser.add_argument(
        "--onnx-libs", nargs="*", default=["webjax", "ort", "jaxjs"], help="which libraries"
    )
    parser.add_argument(
        "--onnx-reps", type=int, default=10, help="timed calls (at least 3, 1 past 2 x budget)"
    )
    parser.add_argument("--onnx-budget", type=float, default=30.0, help="s of timed calls")
    parser.add_argument("--ort-version", default="1.30.0")
    parser.add_argument("--jaxjs-onnx-version", help="@jax-js/onnx's (bench/onnx_vs_ort.py's)")
    args = parser.parse_args(argv)
    if args.onnx:
        return onnx_part(args, argv)
    if args.first_result_only:
        ensure_tools_python(argv)
        ensure_site()
        _, entry = fetch_jaxjs(args.jaxjs_version)
        layout_bench_pages()
        entries = {"jaxjs": f"&entry={entry}", "webjax": "&snapshot=0" if args.no_snapshot else ""}
        results = asyncio.run(first_result_part(args, entries))
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"first-result-{stamp}.json"
        report = {"git": git_describe(), "loadavg": os.getloadavg(), "results": results}
        path.write_text(json.dumps(report, indent=1, default=repr) + "\n")
        text = phase_table(results)
        print("time to first result by phase (ms; each phase's own duration; ttfr from "
              "navigation start; warm = median of the warm loads)")  # fmt: skip
        print(text)
        log(f"wrote {path}")
        return 0
    if not args.no_browser:
        ensure_tools_python(argv)
    started = time.monotonic()
    total = 60 * (args.total_minutes or (6.5 if args.quick else 22))
    cap = args.case_budget or (10.0 if args.quick else 60.0)
    timing = {"reps": 15, "target_s": 1.0} if args.quick else {"reps": 30, "target_s": 3.0}
    clock = Clock(total, cap, floor_s=1.0)
    load_before = os.getloadavg()

    ensure_site()
    jaxjs_version, entry = fetch_jaxjs(args.jaxjs_version)
    tfjs_version, tfjs_entry = fetch_tfjs(args.tfjs_version)
    entries = {"jaxjs": f"&entry={entry}", "tfjs": f"&tfjs={tfjs_entry}&tfsync={args.tfjs_sync}"}
    layout_bench_pages()
    cases = suite(args.quick)
    if args.cases:
        cases = [c for c in cases if any(s in c["id"] for s in args.cases)]
    results: dict[str, Any] = {}
    if not args.no_native:
        log("native: NumPy")
        results["numpy native"] = numpy_reference(cases, min(cap, 5.0), timing)
        log("native: webjax on wasm (wasmtime)")
        native_share = clock.left() * (0.08 if not args.no_browser else 1.0)
        results["webjax wasm native"] = webjax_native(cases, clock, native_share, timing)
    if not args.no_browser:
        results.update(asyncio.run(browser_part(args, cases, entries, clock, timing)))
    browser_info = results.pop("_browser", None)
    text = table(results, cases)
    print()
    print(text)
    elapsed = time.monotonic() - started
    load_after = os.getloadavg()
    print(f"\n(total {elapsed / 60:.1f} min; load average {load_before[0]:.1f} before, "
          f"{load_after[0]:.1f} after, on {os.cpu_count()} CPUs)")  # fmt: skip
    if max(load_before[0], load_after[0]) > (os.cpu_count() or 1):
        print(
            "WARNING: the machine was busy with other work: absolute numbers are noisy; "
            "webjax and jax-js ran case by case in alternation, so ratios are fairer."
        )
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    report = {
        "meta": {
            "timestamp": stamp,
            "quick": args.quick,
            "elapsed_s": elapsed,
            "jaxjs": {"package": JAXJS_PACKAGE, "version": jaxjs_version, "entry": entry},
            "tfjs": {
                "package": TFJS_PACKAGE,
                "version": tfjs_version,
                "entry": tfjs_entry,
                "sync": args.tfjs_sync,
            },
            "browser": browser_info,
            "host": {
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "python": sys.version,
            },
            "git": git_describe(),
            "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(),
            "timing": timing,
            "case_budget_cap_s": cap,
            "cases": cases,
        },
        "results": results,
        "table": text.splitlines(),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    paths = [RESULTS / f"{stamp}.json", args.out]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1, default=repr) + "\n")
    log("wrote " + ", ".join(str(p) for p in paths))
    return 0


def git_describe() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        return head + ("+dirty" if dirty else "")
    except OSError:
        return "?"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
