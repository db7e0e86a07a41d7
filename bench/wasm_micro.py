"""Native micro-benchmark of the wasm backend (wasmtime, single thread).

    python bench/wasm_micro.py [--quick] [--json out.json]

Prints GFLOP/s for jitted float32 matmul (N = 256, 512, 1024; also x @ w.T at 1024), GB/s for
`sum` of 2^24 float32 and for the fused chain `sqrt(x*x + y*y) * 0.5 + 1` on 2^20, GFLOP/s for a
conv2d NCHW 8x32x64x64 with 32 3x3 filters, the engine's SIMD limit (a generated kernel of
independent f32x4 multiply-adds: mul+add, and relaxed_madd where the engine validates it) and
NumPy's matmul as the native reference. Every timing is the best of several runs after a
warm-up, each ending in `block_until_ready`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

import numpy as np

import webjax
import webjax.numpy as jnp
from webjax import lax


def best(fn: Any, reps: int, min_time: float = 0.2) -> float:
    """Best wall time of one call to fn (which blocks), over `reps` runs (at least min_time)."""
    fn()  # warm-up (compile)
    times = []
    t_end = time.perf_counter() + min_time
    while len(times) < reps or time.perf_counter() < t_end:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if len(times) > 200:
            break
    return min(times)


def simd_limit(relaxed: bool, accs: int = 12, iters: int = 2_000_000) -> float | None:
    """GFLOP/s of a kernel of `accs` independent f32x4 multiply-adds (the per-thread limit)."""
    from webjax._src.codegen.wasm.asm import I32, V128, Func, module
    from webjax._src.runtime.wasm import WasmBackend

    be = WasmBackend()
    host = be.host
    if relaxed and not be.relaxed_simd:
        return None
    f = Func([I32] * 4, [])  # (out, n, unused, unused)
    acc = [f.local(V128) for _ in range(accs)]
    a, b, k = f.local(V128), f.local(V128), f.local(I32)
    f.f32(1.0000001)
    f.op("f32x4.splat")
    f.set(a)
    f.f32(1e-7)
    f.op("f32x4.splat")
    f.set(b)
    for j, loc in enumerate(acc):
        f.f32(float(j))
        f.op("f32x4.splat")
        f.set(loc)
    f.get(1)
    f.set(k)
    f.block("loop")
    for loc in acc:
        if relaxed:
            f.get(loc)
            f.get(a)
            f.get(b)
            f.op("f32x4.relaxed_madd")
        else:
            f.get(loc)
            f.get(a)
            f.op("f32x4.mul")
            f.get(b)
            f.op("f32x4.add")
        f.set(loc)
    f.get(k)
    f.i32(1)
    f.op("i32.sub")
    f.tee(k)
    f.br_if(0)
    f.end()
    # keep the accumulators alive: out[0:4] = sum of all
    f.get(0)
    f.get(acc[0])
    for loc in acc[1:]:
        f.get(loc)
        f.op("f32x4.add")
    f.simd_mem("v128.store")
    wasm = module([f], {"kernel": 0})
    fn = host.instantiate(wasm, "kernel")
    out = be.malloc(16)
    ptr = out.ptr
    t = best(lambda: fn(ptr, iters, 0, 0), 3)
    return accs * 4 * 2 * iters / t / 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer sizes")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument(
        "--generic",
        action="store_true",
        help="disable the reduction/matmul fast paths (the scalar baseline)",
    )
    args = ap.parse_args()
    if args.generic:
        from webjax._src.codegen.wasm import reduce as wasm_reduce

        wasm_reduce.ENABLED = False
    dev = webjax.devices("wasm")[0]
    rng = np.random.default_rng(0)
    res: dict[str, float | None] = {}

    def put(a: np.ndarray) -> Any:
        return webjax.device_put(a, dev)

    mm = webjax.jit(lambda a, b: a @ b)
    mmt = webjax.jit(lambda a, b: a @ b.T)
    sizes = [256, 512] if args.quick else [256, 512, 1024]
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        xa, xb = put(a), put(b)
        got = np.asarray(mm(xa, xb))
        err = float(np.abs(got - a @ b).max())
        assert err < 1e-2 * np.sqrt(n), err
        t = best(lambda xa=xa, xb=xb: mm(xa, xb).block_until_ready(), 3)
        res[f"matmul_{n}_gflops"] = 2 * n**3 / t / 1e9
    n = sizes[-1]
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    xa, xb = put(a), put(b)
    err = float(np.abs(np.asarray(mmt(xa, xb)) - a @ b.T).max())
    assert err < 1e-2 * np.sqrt(n), err
    t = best(lambda: mmt(xa, xb).block_until_ready(), 3)
    res[f"matmul_abt_{n}_gflops"] = 2 * n**3 / t / 1e9

    # sum of 2^24
    x = rng.standard_normal(1 << 24, dtype=np.float32)
    xs = put(x)
    sm = webjax.jit(lambda v: jnp.sum(v))
    got = float(sm(xs))
    assert abs(got - float(x.astype(np.float64).sum())) < 1.0, got
    t = best(lambda: sm(xs).block_until_ready(), 5)
    res["sum_2^24_gbps"] = x.nbytes / t / 1e9

    # fused chain on 2^20
    y = rng.standard_normal(1 << 20, dtype=np.float32)
    z = rng.standard_normal(1 << 20, dtype=np.float32)
    ys, zs = put(y), put(z)
    ch = webjax.jit(lambda p, q: jnp.sqrt(p * p + q * q) * 0.5 + 1)
    t = best(lambda: ch(ys, zs).block_until_ready(), 5)
    res["chain_2^20_gbps"] = 3 * y.nbytes / t / 1e9

    # conv2d NCHW 8x32x64x64, 32 3x3 filters, SAME
    if not args.quick:
        xc = put(rng.standard_normal((8, 32, 64, 64), dtype=np.float32))
        wc = put(rng.standard_normal((32, 32, 3, 3), dtype=np.float32))
        cv = webjax.jit(lambda p, q: lax.conv_general_dilated(p, q, (1, 1), "SAME"))
        t = best(lambda: cv(xc, wc).block_until_ready(), 2)
        res["conv2d_gflops"] = 2 * 8 * 32 * 64 * 64 * 32 * 9 / t / 1e9

    res["simd_limit_muladd_gflops"] = simd_limit(False)
    res["simd_limit_relaxed_madd_gflops"] = simd_limit(True)

    # NumPy last: OpenBLAS worker threads keep spinning after a call and would steal cores
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        tn = best(lambda a=a, b=b: a @ b, 5)
        res[f"numpy_matmul_{n}_gflops"] = 2 * n**3 / tn / 1e9

    w = max(len(k) for k in res)
    for k, v in res.items():
        print(f"{k:<{w}}  {'n/a' if v is None else f'{v:8.2f}'}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
