"""webjax's WGSL float32 matmul and fused attention on a real GPU (natively through wgpu-py)
against cuBLAS SGEMM and PyTorch's scaled_dot_product_attention.

Run on the device machine (see the device README for the Vulkan loader and carried wheels):

    PYTHONPATH=/tmp/site:pkg python3 bench/webgpu_h200.py --out $OUT/webgpu_h200.json

The matmul kernel is the one the lowering of `x @ w` produces (REDUCE(ADD, MUL(x[(i // N) * K
+ r], w[r * N + i % N]), K)), compiled by the webgpu backend (codegen.wgsl -> wgsl_matmul).
It is timed at the backend level (dispatches queued back to back, one submit, wall clock until
the queue is idle) after the tiles of SWEEP are swept at the first size (at every size with
`--sweep-all`; `--no-sweep` for none); the tile the backend picks by itself from the adapter
limits is always measured too. At sizes up to 4096 every measured tile's output (NaN-poisoned
first) is checked against torch's. PyTorch runs float32 matmul with TF32
off (cuBLAS SGEMM), timed with CUDA events, in the same process. Where the adapter has timestamp
queries each tile is also timed on the GPU's clock (from the start of the first dispatch to the
end of the last, as CUDA events time torch), which leaves out the host's encoding of the
dispatches and the wait for the queue that the wall clock counts.

Attention (`--attention`, e.g. "1x12x512x64,8x16x2048x64" as BxNxTxH, T = S; `--causal` adds
causal runs) is the fused kernel `jax.nn.dot_product_attention` runs on webgpu
(ir/attention.py, codegen/wgsl/attention.py), timed the same way, against
`torch.nn.functional.scaled_dot_product_attention` on float32 (B, N, T, H) tensors (PyTorch
picks its kernel), checked against it; GFLOP/s count 4 B N T S H (causal: the same count).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from webjax._src import dtypes as dt
from webjax._src.codegen.wgsl import attention as wgsl_attention
from webjax._src.codegen.wgsl import matmul as wgsl_matmul
from webjax._src.ir import exp as E
from webjax._src.ir.attention import AttentionKernel
from webjax._src.ir.kernel import make_kernel
from webjax._src.ir.ops import Op
from webjax._src.runtime.webgpu import WebGPUBackend

T = wgsl_matmul.Tile
SWEEP = [
    None,  # the backend's own choice from the adapter limits
    T(128, 256, 16, 16, 16, 1, 8, 0, True),  # the big-limit tile (128 workgroups at 2048)
    T(128, 128, 16, 16, 16, 0, 8, 0, True),  # the default-limit tile
    # 128x128 tiles for more workgroups at small sizes (256 at 2048): 256 invocations of 8x8
    # outputs double-buffered, 128 invocations of 8x16 / 16x8 (the big tile's register tile)
    T(128, 128, 16, 16, 16, 1, 8, 0, True),
    T(128, 128, 16, 16, 8, 1, 8, 0, True),
    T(128, 128, 16, 16, 8, 1, 4, 0, True),
    T(128, 128, 16, 8, 16, 1, 8, 0, True),
    T(128, 128, 16, 16, 8, 2, 8, 0, True),
    T(128, 128, 8, 16, 8, 1, 8, 0, True),
    T(128, 128, 32, 16, 8, 0, 8, 0, True),
    # narrower tiles of the same 8x16 register tile: 256 / 512 workgroups at 2048
    T(64, 256, 16, 8, 16, 1, 8, 0, True),
    T(64, 128, 16, 8, 8, 1, 8, 0, True),
]


class _Buf:
    def __init__(self) -> None:
        self.dtype = dt.float32


def matmul_kernel(m: int, k: int, n: int) -> Any:
    a, b = _Buf(), _Buf()
    i, r = E.idx(m * n), E.ridx(k)
    x = E.load(a, E.add(E.mul(E.idiv(i, n), k), r), dt.float32)
    w = E.load(b, E.add(E.mul(r, n), E.mod(i, n)), dt.float32)
    kernel, _ = make_kernel(E.reduce(Op.ADD, E.binary(Op.MUL, x, w), k), m * n)
    return kernel


def time_webjax(gpu: WebGPUBackend, exe: Any, bufs: list[Any], out: Any, reps: int) -> float:
    # warm up for a quarter of a second: the first kernel timed in a process otherwise ran at
    # a third of its speed (the GPU's clocks still rising)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.25:
        for _ in range(2):
            gpu.dispatch(exe, bufs, out)
        gpu.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        gpu.dispatch(exe, bufs, out)
    gpu.synchronize()
    return (time.perf_counter() - t0) / reps


def time_webjax_gpu(gpu: WebGPUBackend, exe: Any, bufs: list[Any], out: Any, reps: int) -> Any:
    """Seconds per dispatch on the GPU's clock, from a timestamp at the start of the first of
    `reps` back-to-back dispatches to one at the end of the last (as CUDA events time torch:
    the gaps between dispatches count, the host's encoding and the wait for the queue don't);
    also the host's seconds to encode and submit them. None where the device has no timestamp
    queries or the program has several passes."""
    host = gpu.host
    if not getattr(host, "timestamps", False) or len(exe.program.passes) != 1:
        return None
    (p,), (pipeline,) = exe.program.passes, exe.pipelines
    bound = [*(h.buf for h in bufs), out.buf]
    queries = host.create_query_set(2)
    gpu.synchronize()
    for i in range(reps):
        stamps = (queries, 0 if i == 0 else None, 1 if i == reps - 1 else None)
        host.enqueue(
            pipeline, p.nbindings, *p.workgroups, bound, stamps if i in (0, reps - 1) else None
        )
    t0 = time.perf_counter()
    host.submit()
    submit_s = time.perf_counter() - t0
    host.wait_idle()
    begin, end = host.read_timestamps(queries, 2)
    queries.destroy()
    return (end - begin) / 1e9 / reps, submit_s


def time_torch(torch: Any, a: Any, b: Any, reps: int) -> float:
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / reps


def time_torch_sdpa(torch: Any, q: Any, k: Any, v: Any, causal: bool, reps: int) -> float:
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for _ in range(3):
        sdpa(q, k, v, is_causal=causal)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        sdpa(q, k, v, is_causal=causal)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / reps


def attention_rows(
    gpu: WebGPUBackend,
    torch: Any,
    shapes: str,
    causal_too: bool,
    bqs: list[int],
    variants: list[tuple[int | None, int | None]] | None = None,
) -> list[Any]:
    rng = np.random.default_rng(1)
    rows: list[dict[str, Any]] = []
    for shape in shapes.split(","):
        b, n, t, h = (int(x) for x in shape.split("x"))
        q, k, v = (rng.standard_normal((b, t, n, h), dtype=np.float32) for _ in range(3))
        hs = [gpu.malloc(x.nbytes) for x in (q, k, v)]
        for hb, x in zip(hs, (q, k, v), strict=True):
            gpu.write(hb, x.tobytes())
        out = gpu.malloc(q.nbytes)
        flops = 4.0 * b * n * t * t * h
        reps = max(3, min(50, int(2e12 / flops)))
        runs = [
            (c, q, v)
            for c in ([False, True] if causal_too else [False])
            for q in bqs
            for v in (variants or [(None, None)])
        ]
        for causal, bq, (parts, bk) in runs:
            kernel = AttentionKernel(b, t, t, n, n, h, 1.0 / h**0.5, causal, None, False, False)
            wgsl_attention.BQ, wgsl_attention.PARTS, wgsl_attention.BK = bq, parts, bk
            gpu._cache.clear()
            t0 = time.perf_counter()
            exe = gpu.prepare(kernel)  # type: ignore[arg-type]
            compile_s = time.perf_counter() - t0
            tw = time_webjax(gpu, exe, hs, out, reps)
            g = flops / tw / 1e9
            tref = err = None
            if torch is not None:
                tq, tk, tv = (
                    torch.from_numpy(x).to("cuda").transpose(1, 2).contiguous() for x in (q, k, v)
                )
                tt = time_torch_sdpa(torch, tq, tk, tv, causal, reps)
                tref = flops / tt / 1e9
                want = torch.nn.functional.scaled_dot_product_attention(
                    tq, tk, tv, is_causal=causal
                )
                want = want.transpose(1, 2).cpu().numpy()
                got = np.frombuffer(gpu.read(out, q.nbytes), np.float32).reshape(q.shape)
                err = float(np.max(np.abs(got - want)))
            row = {
                "shape": shape,
                "causal": causal,
                "note": exe.program.note,
                "webjax_ms": tw * 1e3,
                "webjax_gflops": g,
                "torch_gflops": tref,
                "ratio": g / tref if tref else None,
                "max_abs_err": err,
                "compile_s": compile_s,
            }
            rows.append(row)
            ratio = f"{g / tref:.3f}" if tref else "-"
            print(
                f"[attention {shape} causal={causal}] webjax {exe.program.note}: {tw * 1e3:.3f} ms "
                f"{g:.0f} GFLOP/s; torch sdpa {tref or 0:.0f} GFLOP/s; ratio {ratio}; "
                f"max|err| {err}",
                flush=True,
            )
        for hb in (*hs, out):
            gpu.free(hb)
        gpu.trim()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--attention", default="")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--bq", default="128", help="most query rows per workgroup (comma list to try)")
    ap.add_argument(
        "--variants",
        default="",
        help="attention invocations per row and keys per block to try, e.g. '2x16,4x16,4x32' "
        "(0 for the kernel's own choice)",
    )
    ap.add_argument("--out", default="")
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--sweep-all", action="store_true", help="sweep at every size, not the first")
    args = ap.parse_args()
    gpu = WebGPUBackend()
    print("adapter:", gpu.description)
    print("limits:", gpu.limits, "max buffer bytes:", gpu.max_buffer_bytes)
    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        tdev = torch.device("cuda")
        print("torch", torch.__version__, torch.cuda.get_device_name(0))
    except Exception as e:
        torch = None
        print("no torch:", e)
    att_rows = (
        attention_rows(
            gpu,
            torch,
            args.attention,
            args.causal,
            [int(x) for x in args.bq.split(",")],
            [
                (int(p) or None, int(k) or None)
                for p, k in (v.split("x") for v in args.variants.split(",") if v)
            ],
        )
        if args.attention
        else []
    )
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    best_tile = None
    for si, size in enumerate(int(s) for s in args.sizes.split(",") if s):
        m = k = n = size
        flops = 2.0 * m * n * k
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        ha, hb, hc = gpu.malloc(a.nbytes), gpu.malloc(b.nbytes), gpu.malloc(4 * m * n)
        gpu.write(ha, a.tobytes())
        gpu.write(hb, b.tobytes())
        kernel = matmul_kernel(m, k, n)
        reps = max(3, min(30, int(4e12 / flops)))  # ~ a few hundred ms of work per measurement
        tref = None
        if torch is not None:
            ta, tb = torch.from_numpy(a).to(tdev), torch.from_numpy(b).to(tdev)
            tt = time_torch(torch, ta, tb, reps)
            tref = flops / tt / 1e9
            print(f"[{size}] torch fp32 (TF32 off): {tt * 1e3:.3f} ms  {tref:.0f} GFLOP/s")
        sweep = not args.no_sweep and (si == 0 or args.sweep_all)
        tiles = SWEEP if sweep else [None, best_tile]
        want = scale = None
        if torch is not None and size <= 4096:
            want = (ta @ tb).cpu().numpy()
            scale = (torch.abs(ta) @ torch.abs(tb)).cpu().numpy()
        seen: set[str] = set()
        best = (0.0, None)
        for tile in tiles:
            wgsl_matmul.FORCE_TILE = tile
            gpu._cache.clear()
            try:
                t0 = time.perf_counter()
                exe = gpu.prepare(kernel)
                compile_s = time.perf_counter() - t0
            except Exception as e:
                print(f"[{size}] tile {tile}: failed: {str(e).splitlines()[0][:200]}")
                continue
            note = exe.program.note
            if note in seen:
                continue
            seen.add(note)
            tw = time_webjax(gpu, exe, [ha, hb], hc, reps)
            g = flops / tw / 1e9
            on_gpu = time_webjax_gpu(gpu, exe, [ha, hb], hc, reps)
            g_gpu = flops / on_gpu[0] / 1e9 if on_gpu else None
            ok = None
            if want is not None:  # every tile checked (poisoned output first)
                gpu.write(hc, np.full(m * n, np.nan, np.float32).tobytes())
                gpu.dispatch(exe, [ha, hb], hc)
                got = np.frombuffer(gpu.read(hc, 4 * m * n), np.float32).reshape(m, n)
                err = float(np.max(np.abs(got - want) / scale))
                ok = err < 1e-5
                print(f"[{size}] {note}: max |webjax - torch| / (|a||b|) = {err:.2e}")
            row = {
                "size": size,
                "tile": note,
                "auto": tile is None,
                "webjax_ms": tw * 1e3,
                "webjax_gflops": g,
                "torch_gflops": tref,
                "ratio": g / tref if tref else None,
                "gpu_clock_gflops": g_gpu,
                "gpu_clock_ratio": g_gpu / tref if tref and g_gpu else None,
                "submit_ms": on_gpu[1] * 1e3 if on_gpu else None,
                "compile_s": compile_s,
                "checked": ok,
            }
            rows.append(row)
            ratio = f"{g / tref:.3f}" if tref else "-"
            print(
                f"[{size}] webjax {'(auto) ' if tile is None else ''}{note}: "
                f"{tw * 1e3:.3f} ms  {g:.0f} GFLOP/s  ratio {ratio}  (compile {compile_s:.2f} s)"
            )
            if on_gpu:
                gratio = f"{g_gpu / tref:.3f}" if tref else "-"
                print(
                    f"[{size}]   on the GPU's clock: {on_gpu[0] * 1e3:.3f} ms  {g_gpu:.0f} GFLOP/s"
                    f"  ratio {gratio}; encoding and submitting {reps} dispatches took "
                    f"{on_gpu[1] * 1e3:.2f} ms"
                )
            if g > best[0]:
                best = (g, tile if tile is not None else None)
        if si == 0 and best_tile is None:
            best_tile = best[1]
        wgsl_matmul.FORCE_TILE = None
        for h in (ha, hb, hc):
            gpu.free(h)
        gpu.trim()
    print(
        "\n| size | tile | webjax GFLOP/s | cuBLAS SGEMM GFLOP/s | ratio "
        "| on the GPU's clock: GFLOP/s | ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        ratio = f"{r['ratio']:.3f}" if r["ratio"] else "-"
        tref = f"{r['torch_gflops']:.0f}" if r["torch_gflops"] else "-"
        auto = " (auto)" if r["auto"] else ""
        gg = f"{r['gpu_clock_gflops']:.0f}" if r["gpu_clock_gflops"] else "-"
        gr = f"{r['gpu_clock_ratio']:.3f}" if r["gpu_clock_ratio"] else "-"
        print(
            f"| {r['size']} | {r['tile']}{auto} | {r['webjax_gflops']:.0f} | {tref} | {ratio} "
            f"| {gg} | {gr} |"
        )
    if att_rows:
        print("\n| attention BxNxTxH | causal | webjax GFLOP/s | torch SDPA GFLOP/s | ratio |")
        print("| --- | --- | --- | --- | --- |")
        for r in att_rows:
            ratio = f"{r['ratio']:.3f}" if r["ratio"] else "-"
            ref_s = f"{r['torch_gflops']:.0f}" if r["torch_gflops"] else "-"
            print(
                f"| {r['shape']} {r['note']} | {r['causal']} | {r['webjax_gflops']:.0f} | {ref_s} "
                f"| {ratio} |"
            )
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {
                    "adapter": gpu.description,
                    "limits": gpu.limits,
                    "rows": rows,
                    "attention": att_rows,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
