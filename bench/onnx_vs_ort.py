"""The ONNX part of the browser benchmark (`bench/run.py --onnx`): webjax.onnx (a jitted
`ONNXModel.run`) against onnxruntime-web and jax-js's ONNX loader (@jax-js/onnx, a jitted
`ONNXModel.run` on @jax-js/jax) on the same ONNX files in one headless Chromium, on wasm (ORT's
wasm execution provider and jax-js's wasm backend with threads, the page cross-origin isolated),
webgpu (SwiftShader here) and webgl (ORT's webgl provider). The models (bench/onnx_models.py,
random weights): a ResNet-50-shaped CNN at 224x224 batch 1 and a transformer encoder layer
(d=768, 12 heads, seq 128), each also in the form jax-js's loader accepts (the same function
and weights). Per model and device: median ms per inference (after the first call, which is
timed apart), the ratios ORT / webjax and jax-js / webjax (> 1: webjax is faster), and the
largest differences of webjax's and jax-js's outputs from ORT's (relative to the output's
largest magnitude, checked against a tolerance; jax-js's also absolute). A library that cannot
run a model (an unsupported operator, out of memory, a timeout) has its error recorded."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import statistics
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np

ORT_PACKAGE = "onnxruntime-web"
ORT_VERSION = "1.30.0"
ORT_ENTRY = "dist/ort.webgpu.min.mjs"  # the ES module with the wasm and webgpu providers
ORT_WEBGL_ENTRY = "dist/ort.webgl.min.mjs"  # the ES module with the webgl provider only
# jax-js's ONNX loader and what it imports (@jax-js/jax itself is bench/run.py's JAXJS_VERSION)
JAXJS_ONNX_PACKAGE = "@jax-js/onnx"
JAXJS_ONNX_VERSION = "0.1.2"
JAXJS_ONNX_DEPS = {"onnx-buf": "1.20.0-1", "@bufbuild/protobuf": "2.10.2"}
PAGE = "onnx_page.html"
PAGE_FILES = (PAGE, "onnx_webjax.py")
IMPORT_MAP_MARK = '<script type="importmap">{"imports": {}}</script>'
DEVICES = ("wasm", "webgpu", "webgl")
LIBS = ("webjax", "ort", "jaxjs")
LIB_NAMES = {"webjax": "webjax", "ort": "ORT", "jaxjs": "jax-js"}
# outputs agree when max|lib - ort| <= TOLERANCE * max|ort| (float32, different kernels)
TOLERANCE = {"wasm": 1e-4, "webgpu": 1e-3, "webgl": 1e-3}
PAGE_TIMEOUT_S = 600


def log(message: str) -> None:
    print(f"[bench onnx] {message}", flush=True)


def fetch_ort(site_bench: Path, npm_pack: Any, unpack: Any, version: str) -> str:
    """onnxruntime-web's ES modules (wasm + webgpu, webgl) and its wasm files to
    dist/site/bench/ort/; its version."""
    target = site_bench / "ort"

    def keep(name: str) -> bool:
        return name in (ORT_ENTRY, ORT_WEBGL_ENTRY, "package.json", "LICENSE") or (
            name.startswith("dist/ort-wasm-") and name.endswith((".mjs", ".wasm"))
        )

    tgz = npm_pack(ORT_PACKAGE, version)
    unpack(tgz, target, keep=keep)
    if not (target / ORT_WEBGL_ENTRY).is_file():  # unpacked before the webgl module was kept
        (target / ".webjax-stamp").unlink(missing_ok=True)
        unpack(tgz, target, keep=keep)
    for entry in (ORT_ENTRY, ORT_WEBGL_ENTRY):
        if not (target / entry).is_file():
            raise SystemExit(f"{ORT_PACKAGE}@{version} has no {entry}")
    return str(json.loads((target / "package.json").read_text())["version"])


def _esm_entry(package_dir: Path, subpath: str) -> str:
    """The ES module file of `subpath` ("." or "./codegenv2") of an unpacked npm package, from
    its package.json's exports (or module/main), relative to the package's folder."""
    meta = json.loads((package_dir / "package.json").read_text())
    exports = meta.get("exports")
    entry: Any = None
    if isinstance(exports, dict):
        conditional = not any(k.startswith(".") for k in exports)
        entry = exports if conditional and subpath == "." else exports.get(subpath)
        while isinstance(entry, dict):
            entry = entry.get("import") or entry.get("default")
    elif isinstance(exports, str) and subpath == ".":
        entry = exports
    if entry is None and subpath == ".":
        entry = meta.get("module") or meta.get("main")
    if not isinstance(entry, str) or not (package_dir / entry).is_file():
        raise SystemExit(f"{meta.get('name')}: no ES module for {subpath!r} ({entry})")
    return entry.removeprefix("./")


def fetch_jaxjs_onnx(
    site_bench: Path, npm_pack: Any, unpack: Any, version: str, jaxjs_entry: str
) -> dict[str, str]:
    """@jax-js/onnx and its dependencies (onnx-buf, @bufbuild/protobuf) to
    dist/site/bench/npm/<package>/, and the benchmark page's import map for them and
    @jax-js/jax (`jaxjs_entry`, relative to dist/site/bench/, fetched by bench/run.py). The map
    holds every bare specifier the packages import (found in their ES modules), each resolved
    through its package.json; one without a package here stops the run. Returns the map."""
    packages = {JAXJS_ONNX_PACKAGE: version, **JAXJS_ONNX_DEPS}
    dirs = {}
    for name, pinned in packages.items():
        dirs[name] = site_bench / "npm" / name
        unpack(
            npm_pack(name, pinned),
            dirs[name],
            keep=lambda n: (
                n in ("package.json", "LICENSE")
                or (n.startswith("dist/") and n.endswith(".js") and "/cjs/" not in n)
            ),
        )
    imports = {"@jax-js/jax": "./" + jaxjs_entry}
    specifier = re.compile(r"""(?:\bfrom|\bimport)\s*\(?\s*["']([^"'./][^"']*)["']""")
    pending = [JAXJS_ONNX_PACKAGE]
    while pending:
        spec = pending.pop()
        if spec in imports:
            continue
        name = next((p for p in packages if spec == p or spec.startswith(p + "/")), None)
        if name is None:
            raise SystemExit(f"{JAXJS_ONNX_PACKAGE}'s modules import {spec!r}: no such package")
        entry = _esm_entry(dirs[name], "." + spec.removeprefix(name))
        imports[spec] = f"./npm/{name}/{entry}"
        for module in (dirs[name] / entry).parent.rglob("*.js"):
            pending += specifier.findall(module.read_text(encoding="utf-8"))
    return imports


def write_models(site_bench: Path, bench: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """The models and their random inputs in dist/site/bench/onnx/ (written again only when
    bench/onnx_models.py changes)."""
    import onnx_models

    out = site_bench / "onnx"
    out.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256((bench / "onnx_models.py").read_bytes()).hexdigest()[:12]
    specs = {}
    for name in names:
        build, input_name, shape, output_name = onnx_models.MODELS[name]
        model, data = out / f"{name}-{key}.onnx", out / f"{name}-{key}.input.bin"
        if not model.exists():
            log(f"writing {model.relative_to(site_bench.parent.parent.parent)}")
            model.write_bytes(build())
            x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
            data.write_bytes(x.tobytes())
        specs[name] = {
            "model": f"onnx/{model.name}",
            "input": f"onnx/{data.name}",
            "input_name": input_name,
            "output_name": output_name,
            "shape": ",".join(map(str, shape)),
            "mb": model.stat().st_size / 1e6,
        }
    return specs


async def measure(browser: Any, url: str) -> dict[str, Any]:
    context = await browser.new_context()
    console: list[str] = []
    try:
        page = await context.new_page()
        page.on("console", lambda m: console.append(f"[{m.type}] {m.text}"))
        page.on("pageerror", lambda e: console.append(f"[pageerror] {e}"))
        await page.goto(url)
        return await asyncio.wait_for(page.evaluate("() => window.onnxResult"), PAGE_TIMEOUT_S)
    except TimeoutError:
        return {"error": f"timeout: no result after {PAGE_TIMEOUT_S} s", "console": console[-10:]}
    except Exception as e:
        text = str(e).removeprefix("Page.evaluate: ")
        lines = [ln for ln in text.splitlines() if ln.strip()] or [type(e).__name__]
        return {"error": lines[0][:500], "console": console[-10:]}
    finally:
        await context.close()


def _output(res: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(res["output_b64"]), np.float32)


def compare(a: dict[str, Any], b: dict[str, Any]) -> float:
    """max|a - b| / max|b| of two results' outputs."""
    x, y = _output(a), _output(b)
    if x.shape != y.shape:
        return float("inf")
    return float(np.max(np.abs(x - y)) / max(float(np.max(np.abs(y))), 1e-30))


def max_abs_diff(a: dict[str, Any], b: dict[str, Any]) -> float:
    """max|a - b| of two results' outputs."""
    x, y = _output(a), _output(b)
    return float(np.max(np.abs(x - y))) if x.shape == y.shape else float("inf")


def check(
    row: dict[str, Any], lib: str, reference: dict[str, Any], reference_name: str
) -> dict[str, Any]:
    """How far `lib`'s output in `row` is from the reference result (ORT's)."""
    rel_err = compare(row[lib], reference)
    return {
        "reference": reference_name,
        "rel_err": rel_err,
        "max_abs": max_abs_diff(row[lib], reference),
        "agree": rel_err <= TOLERANCE[row["device"]],
    }


def query_for(
    spec: dict[str, Any], lib: str, device: str, reps: int, budget_s: float
) -> dict[str, Any]:
    query = {k: v for k, v in spec.items() if k != "mb"}
    query |= {"lib": lib, "device": device, "reps": reps, "budget_s": budget_s}
    if lib == "ort" and device == "webgl":
        query["ort"] = "ort/" + ORT_WEBGL_ENTRY
    return query


async def browser_runs(
    base_url: str,
    specs: dict[str, dict[str, Any]],
    devices: list[str],
    chromium: str,
    chromium_args: list[str],
    reps: int,
    budget_s: float,
    libs: tuple[str, ...] = LIBS,
) -> list[dict[str, Any]]:
    """One row per model and device: each library's result (or error) and `checks`, each other
    library's output against ORT's on the same device (or, where ORT did not run there, against
    ORT's on wasm)."""
    from playwright.async_api import async_playwright

    rows = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=chromium, headless=True, args=chromium_args
        )
        try:
            for name, spec in specs.items():
                ort_wasm: dict[str, Any] | None = None
                for device in devices:
                    row: dict[str, Any] = {"model": name, "device": device, "checks": {}}
                    for lib in libs:
                        query = query_for(spec, lib, device, reps, budget_s)
                        log(f"{name} on {device}: {LIB_NAMES[lib]}")
                        res = await measure(browser, f"{base_url}bench/{PAGE}?" + urlencode(query))
                        if "times_ms" in res:
                            res["median_ms"] = statistics.median(res["times_ms"])
                            log(
                                f"  first {res['first_ms']:.0f} ms, median "
                                f"{res['median_ms']:.1f} ms of {len(res['times_ms'])}"
                            )
                        else:
                            log(f"  failed: {res.get('error')} {res.get('console')}")
                        row[lib] = res
                    ort = row.get("ort", {})
                    if device == "wasm" and "output_b64" in ort:
                        ort_wasm = ort
                    reference, reference_name = (
                        (ort, "ORT") if "output_b64" in ort else (ort_wasm, "ORT wasm")
                    )
                    for lib in libs:
                        if lib != "ort" and reference and "output_b64" in row[lib]:
                            row["checks"][lib] = check(row, lib, reference, reference_name)
                    rows.append(row)
        finally:
            await browser.close()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """ms per inference (median after the first call), the ratios to webjax's (> 1: webjax is
    faster), first calls, and webjax's and jax-js's differences from ORT: rel err (max|d| /
    max|ORT|; "*": against ORT on wasm, which ran where ORT did not) and jax-js's max|d|."""
    head = (
        "model",
        "device",
        "webjax ms",
        "ORT ms",
        "jax-js ms",
        "ORT/webjax",
        "jax-js/webjax",
        "webjax 1st",
        "ORT 1st",
        "jax-js 1st",
        "webjax err",
        "jax-js err",
        "jax-js max|d|",
    )
    lines = [head]

    def ms(res: dict[str, Any], key: str) -> str:
        if key in res:
            return f"{res[key]:.1f}"
        return "failed" if "error" in res else "-"

    def ratio(res: dict[str, Any], base: dict[str, Any]) -> str:
        if "median_ms" in res and "median_ms" in base:
            return f"{res['median_ms'] / base['median_ms']:.2f}"
        return "-"

    def err(c: dict[str, Any] | None) -> str:
        if c is None:
            return "-"
        star = "*" if c["reference"] != "ORT" else ""
        return f"{c['rel_err']:.1e}{star}" + ("" if c["agree"] else " MISMATCH")

    for r in rows:
        w, o, j = (r.get(lib, {}) for lib in LIBS)
        checks = r.get("checks", {})
        jc = checks.get("jaxjs")
        lines.append(
            (
                r["model"],
                r["device"],
                ms(w, "median_ms"),
                ms(o, "median_ms"),
                ms(j, "median_ms"),
                ratio(o, w),
                ratio(j, w),
                ms(w, "first_ms"),
                ms(o, "first_ms"),
                ms(j, "first_ms"),
                err(checks.get("webjax")),
                err(jc),
                f"{jc['max_abs']:.1e}" if jc else "-",
            )
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            str(c).ljust(wd) if i < 2 else str(c).rjust(wd)
            for i, (c, wd) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    )


def failures(rows: list[dict[str, Any]]) -> list[str]:
    """One line per library and error: which models and devices it failed on, and why."""
    seen: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for lib in LIBS:
            error = r.get(lib, {}).get("error")
            if error:
                seen.setdefault((lib, error), []).append(f"{r['model']} {r['device']}")
    return [
        f"{LIB_NAMES[lib]} failed on {', '.join(where)}: {error}"
        for (lib, error), where in seen.items()
    ]


def all_agree(rows: list[dict[str, Any]]) -> bool:
    """webjax ran everywhere, and every output compared with ORT's agrees with it."""
    return all(
        "times_ms" in r.get("webjax", {}) and all(c["agree"] for c in r["checks"].values())
        for r in rows
    )


def copy_pages(bench: Path, site_bench: Path, import_map: dict[str, str]) -> None:
    """The page (with jax-js's import map written into it) and webjax's side next to it."""
    site_bench.mkdir(parents=True, exist_ok=True)
    for name in PAGE_FILES:
        text = (bench / name).read_text(encoding="utf-8")
        if name == PAGE:
            if IMPORT_MAP_MARK not in text:
                raise SystemExit(f"bench/{PAGE} has no {IMPORT_MAP_MARK}")
            mapped = json.dumps({"imports": import_map}, indent=2)
            text = text.replace(IMPORT_MAP_MARK, f'<script type="importmap">\n{mapped}\n</script>')
        (site_bench / name).write_text(text, encoding="utf-8")
