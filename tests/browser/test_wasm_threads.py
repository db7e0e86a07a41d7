"""Threads of the wasm backend: a Web Worker pool sharing the memory splits each large kernel.

On the cross-origin isolated page the wasm device's memory is shared and its worker pool runs
chunks of large kernels (the test sees workers' chunks counted). Large kernels give bit for bit
the single-threaded results (the same code runs per output: the pool cuts tiled matmuls at tile
rows) and match a Python oracle at sample points: elementwise, a row reduction, register-tiled
matmuls (512 x 512, with an epilogue, batched with a row remainder), a convolution (im2col +
matmul), memory grown after the pool started, and async compilation. Without COOP/COEP the same
code runs single-threaded on an unshared memory.
"""

from __future__ import annotations

import pytest
from browser_harness import PyodidePage

pytestmark = pytest.mark.browser

_SETUP = r"""
import asyncio, math, random, struct, time
import js
import webjax
import webjax.numpy as jnp
from webjax._src import dtypes as dt
from webjax._src.hosts.wasm_browser import BrowserWasmHost
from webjax._src.ir import exp as E
from webjax._src.ir.kernel import Kernel
from webjax._src.ir.ops import Op
from webjax._src.runtime.wasm import WasmBackend

F32 = dt.float32
DEV = webjax.devices("wasm")[0].backend
WB = WasmBackend(BrowserWasmHost(threads=3))  # main thread + 2 workers, on any machine

def rand(n, seed):
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(n)]

def f32s(vals):
    return struct.pack(f"<{len(vals)}f", *vals)

def both(kernel, inputs):
    # (threaded result, single-threaded result, chunks workers ran); retried until a worker
    # took part (on a busy machine a sleeping worker may wake after the calling thread took
    # every chunk)
    hs = []
    for raw in inputs:
        h = WB.malloc(len(raw)); WB.write(h, raw); hs.append(h)
    n = kernel.size * kernel.out_dtype.itemsize
    exe = WB.prepare(kernel)
    assert exe.run is not None and exe.chunks >= 3, (exe.run, exe.chunks)
    worked = 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        out = WB.malloc(n)
        before = WB.host.worker_chunks()
        WB.dispatch(exe, hs, out)
        worked = WB.host.worker_chunks() - before
        got = WB.read(out, n)
        WB.free(out)
        if worked:
            break
    WB.parallel = False
    out = WB.malloc(n)
    WB.dispatch(exe, hs, out)
    single = WB.read(out, n)
    WB.parallel = True
    for h in hs + [out]:
        WB.free(h)
    return got, single, worked

def unpack(raw):
    return struct.unpack(f"<{len(raw) // 4}f", raw)

def matmul(m, k, n, batch=1):
    i = E.idx(batch * m * n); r = E.ridx(k)
    b_ = E.idiv(i, m * n)
    row, col = E.mod(E.idiv(i, n), m), E.mod(i, n)
    a = E.load(0, E.add(E.add(E.mul(b_, m * k), E.mul(row, k)), r), F32)
    b = E.load(1, E.add(E.add(E.mul(b_, k * n), E.mul(r, n)), col), F32)
    return Kernel(E.reduce(Op.ADD, E.binary(Op.MUL, a, b), k), batch * m * n, (F32, F32))
"""


@pytest.fixture(scope="module")
def page(webjax_page):
    webjax_page.run_py(_SETUP)
    assert webjax_page.run_py("await WB.host.wait_ready(60)") is True
    return webjax_page


def test_the_wasm_device_runs_threads(page):
    out = page.run_py(
        "[bool(js.crossOriginIsolated), int(js.navigator.hardwareConcurrency), DEV.threads,\n"
        " DEV.shared_memory, WB.threads, WB.shared_memory,\n"
        " js.Object.prototype.toString.call(WB.host.memory.buffer)]"
    )
    coi, cores, threads, shared, threads3, shared3, buffer_type = out
    assert coi is True
    assert threads == min(cores, 8) and shared == (threads > 1)
    assert threads3 == 3 and shared3 is True
    assert buffer_type == "[object SharedArrayBuffer]"


def test_elementwise_and_reduction_split_over_workers(page):
    out = page.run_py(
        "n = 1 << 20\n"
        "i = E.idx(n)\n"
        "x, y = E.load(0, i, F32), E.load(1, i, F32)\n"
        "chain = Kernel(E.binary(Op.ADD, E.unary(Op.SQRT, E.binary(Op.ADD,\n"
        "    E.binary(Op.MUL, x, x), E.binary(Op.MUL, y, y))), E.const(1.0, F32)), n, (F32, F32))\n"
        "xs, ys = rand(n, 1), rand(n, 2)\n"
        "got, single, w1 = both(chain, [f32s(xs), f32s(ys)])\n"
        "vals = unpack(got)\n"
        "bad1 = [j for j in range(0, n, 9973)\n"
        "        if abs(vals[j] - (math.sqrt(xs[j]**2 + ys[j]**2) + 1)) > 1e-5]\n"
        "rows, k = 1024, 1000\n"
        "i = E.idx(rows); r = E.ridx(k)\n"
        "red = Kernel(E.reduce(Op.ADD, E.load(0, E.add(E.mul(i, k), r), F32), k), rows, (F32,))\n"
        "data = rand(rows * k, 3)\n"
        "got2, single2, w2 = both(red, [f32s(data)])\n"
        "sums = unpack(got2)\n"
        "bad2 = [j for j in range(0, rows, 37) if abs(sums[j] - sum(data[j*k:(j+1)*k])) > 1e-3]\n"
        "[got == single, bad1, w1, got2 == single2, bad2, w2]"
    )
    assert out[0] is True and out[1] == [] and out[2] > 0
    assert out[3] is True and out[4] == [] and out[5] > 0


def test_tiled_matmuls_split_at_tile_rows(page):
    out = page.run_py(
        "res = []\n"
        "for (m, k, n, batch) in [(512, 512, 512, 1), (301, 64, 96, 3)]:\n"
        "    kern = matmul(m, k, n, batch)\n"
        "    a, b = rand(batch * m * k, 4), rand(batch * k * n, 5)\n"
        "    got, single, w = both(kern, [f32s(a), f32s(b)])\n"
        "    v = unpack(got)\n"
        "    bad = []\n"
        "    for (bt, row, col) in [(0, 0, 0), (batch - 1, m - 1, n - 1), (0, m // 2, 7),\n"
        "                           (batch - 1, m // 3 + 1, n // 2)]:\n"
        "        want = sum(a[bt*m*k + row*k + t] * b[bt*k*n + t*n + col] for t in range(k))\n"
        "        if abs(v[bt*m*n + row*n + col] - want) > 1e-3: bad.append((bt, row, col))\n"
        "    res.append([got == single, bad, w])\n"
        "# an epilogue (bias + relu) reads the tiles' sums back in each range\n"
        "m = k = n = 512\n"
        "base = matmul(m, k, n)\n"
        "i = E.idx(m * n)\n"
        "epi = E.binary(Op.MAX, E.binary(Op.ADD, base.exp, E.load(2, E.mod(i, n), F32)),\n"
        "               E.const(0.0, F32))\n"
        "kern = Kernel(epi, m * n, (F32, F32, F32))\n"
        "a, b, bias = rand(m * k, 6), rand(k * n, 7), rand(n, 8)\n"
        "got, single, w = both(kern, [f32s(a), f32s(b), f32s(bias)])\n"
        "v = unpack(got)\n"
        "want = max(sum(a[300*k + t] * b[t*n + 5] for t in range(k)) + bias[5], 0.0)\n"
        "res.append([got == single, abs(v[300*n + 5] - want) <= 1e-3, w])\n"
        "res"
    )
    for same, bad, worked in out[:2]:
        assert same is True and bad == [] and worked > 0
    assert out[2] == [True, True, out[2][2]] and out[2][2] > 0


def test_conv2d_on_threads_matches_single_thread_and_python(page):
    out = page.run_py(
        "n, c, h, w, o, k = 2, 16, 32, 32, 24, 3\n"
        "lhs = jnp.asarray([[[[math.sin(0.1 * (a + 2*b + 3*y + 5*x)) for x in range(w)]\n"
        "                     for y in range(h)] for b in range(c)] for a in range(n)],\n"
        "                  dtype=jnp.float32)\n"
        "rhs = jnp.asarray([[[[math.cos(0.2 * (a + b + y + 2*x)) for x in range(k)]\n"
        "                     for y in range(k)] for b in range(c)] for a in range(o)],\n"
        "                  dtype=jnp.float32)\n"
        "conv = lambda l, r: webjax.lax.conv_general_dilated(l, r, (1, 1), 'SAME')\n"
        "w0 = DEV.host.worker_chunks()\n"
        "threaded, deadline = None, time.monotonic() + 30\n"
        "while time.monotonic() < deadline:  # until workers took part (see both())\n"
        "    threaded = conv(lhs, rhs).tolist()\n"
        "    if DEV.host.worker_chunks() > w0: break\n"
        "    await asyncio.sleep(0.01)\n"
        "worked = DEV.host.worker_chunks() - w0\n"
        "DEV.parallel = False\n"
        "single = conv(lhs, rhs).tolist()\n"
        "DEV.parallel = True\n"
        "L, R = lhs.tolist(), rhs.tolist()\n"
        "def ref(a, oc, y, x):\n"
        "    s = 0.0\n"
        "    for b in range(c):\n"
        "        for dy in range(k):\n"
        "            for dx in range(k):\n"
        "                yy, xx = y + dy - 1, x + dx - 1\n"
        "                if 0 <= yy < h and 0 <= xx < w: s += L[a][b][yy][xx] * R[oc][b][dy][dx]\n"
        "    return s\n"
        "pts = [(0, 0, 0, 0), (1, 23, 31, 31), (0, 5, 16, 0), (1, 11, 7, 20)]\n"
        "bad = [p for p in pts if abs(threaded[p[0]][p[1]][p[2]][p[3]] - ref(*p)) > 1e-3]\n"
        "[DEV.threads, worked, threaded == single, bad]"
    )
    threads, worked, same, bad = out
    assert same is True and bad == []
    if threads > 1:  # the default device splits over hardwareConcurrency threads
        assert worked > 0


def test_memory_grown_after_the_pool_started(page):
    out = page.run_py(
        "before = WB.host.nbytes\n"
        "pad = WB.malloc(96 << 20)  # grows the shared memory; the workers' views follow\n"
        "n = 1 << 21\n"
        "i = E.idx(n)\n"
        "kern = Kernel(E.binary(Op.MUL, E.load(0, i, F32), E.const(3.0, F32)), n, (F32,))\n"
        "src = [float(j % 1000) for j in range(n)]\n"
        "got, single, w = both(kern, [f32s(src)])\n"
        "WB.free(pad)\n"
        "v = unpack(got)\n"
        "[WB.host.nbytes > before + (96 << 20), got == single,\n"
        " all(v[j] == 3.0 * src[j] for j in range(0, n, 4099)), v[n - 1] == 3.0 * src[n - 1], w]"
    )
    assert out[:4] == [True, True, True, True] and out[4] > 0


def test_async_prepare_shares_the_kernel_with_workers(page):
    out = page.run_py(
        "n = 1 << 21\n"
        "i = E.idx(n)\n"
        "kern = Kernel(E.binary(Op.SUB, E.load(0, i, F32), E.const(0.5, F32)), n, (F32,))\n"
        "exe = await WB.prepare_async(kern)\n"
        "src = rand(n, 9)\n"
        "got, single, w = both(kern, [f32s(src)])\n"
        "v = unpack(got)\n"
        "x = unpack(f32s([src[12345]]))[0]\n"
        "[exe.run is not None, got == single, v[12345] == unpack(f32s([x - 0.5]))[0], w]"
    )
    assert out[:3] == [True, True, True] and out[3] > 0


def test_a_trapping_chunk_raises_and_the_pool_recovers(page):
    # the output pointer 2**32 - 2n bytes: the first half of the outputs lies past the memory's
    # end (a trap), the second half wraps to the bottom of this throwaway memory. Every call
    # raises (whichever thread trapped); later calls run normally, workers included.
    out = page.run_py(
        "T = WasmBackend(BrowserWasmHost(threads=2))\n"
        "assert await T.host.wait_ready(60)\n"
        "n = 1 << 21\n"
        "room = T.malloc(4 * n)  # the wrapped half writes below 2n bytes: inside the memory\n"
        "exe = T.prepare(Kernel(E.cast(E.idx(n), F32), n, ()))\n"
        "raised = []\n"
        "for _ in range(6):\n"
        "    try:\n"
        "        exe.run(-(2 * n), 0, n)\n"
        "        raised.append(None)\n"
        "    except Exception as e:\n"
        "        raised.append(type(e).__name__)\n"
        "    await asyncio.sleep(0.01)\n"
        "ok, worked, deadline = True, 0, time.monotonic() + 30\n"
        "while not worked and time.monotonic() < deadline:\n"
        "    w0 = T.host.worker_chunks()\n"
        "    o = T.malloc(4 * n)\n"
        "    T.dispatch(exe, [], o)\n"
        "    worked = T.host.worker_chunks() - w0\n"
        "    v = unpack(T.read(o, 4 * n))\n"
        "    T.free(o)\n"
        "    ok = ok and all(v[j] == float(j) for j in range(0, n, 1021)) and v[n - 1] == n - 1\n"
        "[raised, ok, worked]"
    )
    raised, ok, worked = out
    assert None not in raised, raised
    assert ok is True and worked > 0


def test_small_kernels_stay_on_the_calling_thread(page):
    out = page.run_py(
        "i = E.idx(4096)\n"
        "small = WB.prepare(Kernel(E.binary(Op.ADD, E.load(0, i, F32), E.const(1.0, F32)),\n"
        "                          4096, (F32,)))\n"
        "tiny_mm = WB.prepare(matmul(32, 32, 32))\n"
        "[small.run, small.chunks, tiny_mm.run, tiny_mm.chunks]"
    )
    assert out == [None, 1, None, 1]


def test_plain_page_runs_single_threaded(new_page, plain_server_url):
    page = PyodidePage(new_page()).load(plain_server_url + "test.html", with_webjax=True)
    out = page.run_py(
        "import js, webjax, webjax.numpy as jnp\n"
        "dev = webjax.devices('wasm')[0].backend\n"
        "a = jnp.arange(256 * 256, dtype=jnp.float32).reshape(256, 256) / 65536\n"
        "c = (a @ a.T).tolist()\n"
        "r = a.tolist()\n"
        "want = sum(x * y for x, y in zip(r[3], r[200]))\n"
        "[bool(js.crossOriginIsolated), dev.threads, dev.shared_memory,\n"
        " js.Object.prototype.toString.call(dev.host.memory.buffer),\n"
        " abs(c[3][200] - want) <= 1e-4 * abs(want), dev.host.worker_chunks()]"
    )
    assert out == [False, 1, False, "[object ArrayBuffer]", True, 0]


def test_new_split_kernel_warms_up_on_the_calling_thread(page):
    # A new kernel's first WARM_CALLS calls run on the calling thread alone (V8 compiles its
    # optimized code meanwhile); later calls are split over the pool, with the same results.
    out = page.run_py(
        "from webjax._src.hosts.wasm_browser import WARM_CALLS\n"
        "n = 1 << 20\n"
        "i = E.idx(n)\n"
        "kern = Kernel(E.mul(E.cast(i, F32), E.const(0.25, F32)), n, ())\n"
        "exe = WB.prepare(kern)\n"
        "assert exe.run is not None\n"
        "counts, results = [], set()\n"
        "out = WB.malloc(4 * n)\n"
        "for _ in range(WARM_CALLS):\n"
        "    before = WB.host.worker_chunks()\n"
        "    WB.dispatch(exe, [], out)\n"
        "    counts.append(WB.host.worker_chunks() - before)\n"
        "    results.add(WB.read(out, 4 * n))\n"
        "worked, deadline = 0, time.monotonic() + 30\n"
        "while not worked and time.monotonic() < deadline:\n"
        "    before = WB.host.worker_chunks()\n"
        "    WB.dispatch(exe, [], out)\n"
        "    worked = WB.host.worker_chunks() - before\n"
        "results.add(WB.read(out, 4 * n))\n"
        "WB.free(out)\n"
        "[WARM_CALLS, counts, worked, len(results)]"
    )
    warm, counts, worked, distinct = out
    assert warm >= 1 and counts == [0] * warm
    assert worked > 0 and distinct == 1


def test_a_worker_lost_mid_call_raises_and_later_calls_run_on_one_thread(page):
    # A worker dies holding a chunk (fault injection: as the browser killing it would): that
    # call raises after the stall deadline, naming the loss, never hangs; later calls run on
    # the calling thread and are right; a fresh pool works again.
    out = page.run_py(
        "L = WasmBackend(BrowserWasmHost(threads=2))\n"
        "assert await L.host.wait_ready(60)\n"
        "n = 1 << 21\n"
        "exe = L.prepare(Kernel(E.cast(E.idx(n), F32), n, ()))\n"
        "L.host.fail_next_chunk()\n"
        "err, deadline = None, time.monotonic() + 60\n"
        "while err is None and time.monotonic() < deadline:\n"
        "    o = L.malloc(4 * n)\n"
        "    try:\n"
        "        L.dispatch(exe, [], o)\n"
        "    except RuntimeError as e:\n"
        "        err = str(e)\n"
        "    L.free(o)\n"
        "    await asyncio.sleep(0.01)\n"
        "o = L.malloc(4 * n)\n"
        "w0 = L.host.worker_chunks()\n"
        "L.dispatch(exe, [], o)\n"
        "v = unpack(L.read(o, 4 * n))\n"
        "ok = all(v[j] == float(j) for j in range(0, n, 1021)) and v[n - 1] == n - 1\n"
        "F = WasmBackend(BrowserWasmHost(threads=2))\n"
        "assert await F.host.wait_ready(60)\n"
        "fexe = F.prepare(Kernel(E.cast(E.idx(n), F32), n, ()))\n"
        "fworked, deadline = 0, time.monotonic() + 30\n"
        "while not fworked and time.monotonic() < deadline:\n"
        "    f0 = F.host.worker_chunks()\n"
        "    fo = F.malloc(4 * n)\n"
        "    F.dispatch(fexe, [], fo)\n"
        "    fworked = F.host.worker_chunks() - f0\n"
        "    fv = unpack(F.read(fo, 4 * n))\n"
        "    F.free(fo)\n"
        "[err, L.host.lost_worker(), ok, L.host.worker_chunks() - w0, fworked, fv[n - 1]]"
    )
    err, lost, ok, worked_after, fresh_worked, last = out
    assert err is not None and "wasm" in err and "never finished" in err, out
    assert "clear_backends" in err and lost, out
    assert ok is True and worked_after == 0, out
    assert fresh_worked > 0 and last == float((1 << 21) - 1), out
