"""The ONNX part of the browser benchmark (`bench/run.py --onnx`): webjax.onnx (a jitted
`ONNXModel.run`) against onnxruntime-web on the same ONNX files in one headless Chromium, on
wasm (ORT's wasm execution provider with threads, the page cross-origin isolated) and webgpu
(ORT's webgpu provider; SwiftShader here). The models (bench/onnx_models.py, random weights): a
ResNet-50-shaped CNN at 224x224 batch 1 and a transformer encoder layer (d=768, 12 heads,
seq 128). Per model and device: median ms per inference (after the first call, which is timed
apart), the ratio ORT / webjax (> 1: webjax is faster), and the largest difference between the
two outputs relative to the output's largest magnitude (checked against a tolerance)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import shutil
import statistics
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np

ORT_PACKAGE = "onnxruntime-web"
ORT_VERSION = "1.30.0"
ORT_ENTRY = "dist/ort.webgpu.min.mjs"  # the ES module with the wasm and webgpu providers
PAGE_FILES = ("onnx_page.html", "onnx_webjax.py")
DEVICES = ("wasm", "webgpu")
# outputs agree when max|webjax - ort| <= TOLERANCE * max|ort| (float32, different kernels)
TOLERANCE = {"wasm": 1e-4, "webgpu": 1e-3}
PAGE_TIMEOUT_S = 600


def log(message: str) -> None:
    print(f"[bench onnx] {message}", flush=True)


def fetch_ort(site_bench: Path, npm_pack: Any, unpack: Any, version: str) -> str:
    """onnxruntime-web's ES module and its wasm files to dist/site/bench/ort/; its version."""
    target = site_bench / "ort"

    def keep(name: str) -> bool:
        return name in (ORT_ENTRY, "package.json", "LICENSE") or (
            name.startswith("dist/ort-wasm-") and name.endswith((".mjs", ".wasm"))
        )

    unpack(npm_pack(ORT_PACKAGE, version), target, keep=keep)
    if not (target / ORT_ENTRY).is_file():
        raise SystemExit(f"{ORT_PACKAGE}@{version} has no {ORT_ENTRY}")
    return str(json.loads((target / "package.json").read_text())["version"])


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
    except Exception as e:
        return {"error": str(e).splitlines()[0][:500], "console": console[-10:]}
    finally:
        await context.close()


def compare(a: dict[str, Any], b: dict[str, Any]) -> float:
    """max|a - b| / max|b| of two results' outputs."""
    x = np.frombuffer(base64.b64decode(a["output_b64"]), np.float32)
    y = np.frombuffer(base64.b64decode(b["output_b64"]), np.float32)
    if x.shape != y.shape:
        return float("inf")
    return float(np.max(np.abs(x - y)) / max(float(np.max(np.abs(y))), 1e-30))


async def browser_runs(
    base_url: str,
    specs: dict[str, dict[str, Any]],
    devices: list[str],
    chromium: str,
    chromium_args: list[str],
    reps: int,
    budget_s: float,
) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    rows = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=chromium, headless=True, args=chromium_args
        )
        try:
            for name, spec in specs.items():
                for device in devices:
                    row: dict[str, Any] = {"model": name, "device": device}
                    for lib in ("webjax", "ort"):
                        query = {k: v for k, v in spec.items() if k != "mb"}
                        query |= {"lib": lib, "device": device, "reps": reps, "budget_s": budget_s}
                        log(f"{name} on {device}: {lib}")
                        res = await measure(
                            browser, f"{base_url}bench/onnx_page.html?" + urlencode(query)
                        )
                        if "times_ms" in res:
                            res["median_ms"] = statistics.median(res["times_ms"])
                            log(
                                f"  first {res['first_ms']:.0f} ms, median "
                                f"{res['median_ms']:.1f} ms of {len(res['times_ms'])}"
                            )
                        else:
                            log(f"  failed: {res.get('error')} {res.get('console')}")
                        row[lib] = res
                    if "times_ms" in row["webjax"] and "times_ms" in row["ort"]:
                        row["rel_err"] = compare(row["webjax"], row["ort"])
                        row["agree"] = row["rel_err"] <= TOLERANCE[device]
                    rows.append(row)
        finally:
            await browser.close()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "model",
        "device",
        "webjax ms",
        "ORT ms",
        "ORT/webjax",
        "webjax 1st ms",
        "ORT 1st ms",
        "rel err",
    )
    lines = [head]
    for r in rows:
        w, o = r.get("webjax", {}), r.get("ort", {})

        def ms(res: dict[str, Any], key: str) -> str:
            return f"{res[key]:.1f}" if key in res else "failed"

        ratio = (
            f"{o['median_ms'] / w['median_ms']:.2f}"
            if "median_ms" in w and "median_ms" in o
            else "-"
        )
        err = (
            "-"
            if "rel_err" not in r
            else (f"{r['rel_err']:.1e}" + ("" if r["agree"] else " MISMATCH"))
        )
        lines.append(
            (
                r["model"],
                r["device"],
                ms(w, "median_ms"),
                ms(o, "median_ms"),
                ratio,
                ms(w, "first_ms"),
                ms(o, "first_ms"),
                err,
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


def copy_pages(bench: Path, site_bench: Path) -> None:
    site_bench.mkdir(parents=True, exist_ok=True)
    for name in PAGE_FILES:
        shutil.copyfile(bench / name, site_bench / name)
