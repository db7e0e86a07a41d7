"""The wasm backend inside Pyodide: the same generated modules through `js.WebAssembly`.

Kernels are built in the page from ir.exp builders and run on the browser wasm host; the oracle
is the reference codegen (pyref) run in the same page. Also checks memory growth (views of the
old ArrayBuffer detach), async compilation and a large module.
"""

from __future__ import annotations

import pytest

_SETUP = r"""
import math, random, struct
from webjax._src import dtypes as dt
from webjax._src.codegen import pyref
from webjax._src.ir import exp as E
from webjax._src.ir import scalar
from webjax._src.ir.kernel import Kernel
from webjax._src.ir.ops import Op
from webjax._src.runtime.wasm import WasmBackend

WB = WasmBackend()

def _fmt(d):
    # value format: pyref stores float16 as raw bits ('H'), values are halves ('e')
    return "e" if d.name == "float16" else pyref.fmt(d)

def _run(kernel, inputs):
    hs = []
    for raw in inputs:
        h = WB.malloc(len(raw)); WB.write(h, raw); hs.append(h)
    nbytes = kernel.size * kernel.out_dtype.itemsize
    out = WB.malloc(nbytes)
    WB.dispatch(WB.prepare(kernel), hs, out)
    got = WB.read(out, nbytes)
    for h in hs + [out]:
        WB.free(h)
    return got

def _ref(kernel, inputs):
    fn = pyref.compile_kernel(kernel)
    ins = [list(struct.unpack(f"<{len(r) // d.itemsize}{pyref.fmt(d)}", r))
           for d, r in zip(kernel.arg_dtypes, inputs)]
    out = [0] * kernel.size
    fn(out, *ins)
    return struct.pack(f"<{kernel.size}{pyref.fmt(kernel.out_dtype)}", *out)

def _check(kernel, inputs, tol=0):
    d = kernel.out_dtype
    n = kernel.size
    got = struct.unpack(f"<{n}{_fmt(d)}", _run(kernel, inputs))
    want = struct.unpack(f"<{n}{_fmt(d)}", _ref(kernel, inputs))
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(g, float):
            if (g != g) and (w != w):
                continue
            if tol == 0:
                ok = g == w and math.copysign(1, g) == math.copysign(1, w)
            else:
                ok = g == w or abs(g - w) <= tol * abs(w)
        else:
            ok = g == w
        if not ok:
            bad.append((i, g, w))
    return bad[:5]

def _pack(d, vals):
    return struct.pack(f"<{len(vals)}{_fmt(d)}", *vals)

def _binary(op, d, a, b):
    m, n = len(a), len(b)
    i = E.idx(m * n)
    k = Kernel(E.binary(op, E.load(0, E.idiv(i, n), d), E.load(1, E.mod(i, n), d)), m * n, (d, d))
    return k, [_pack(d, a), _pack(d, b)]
"""


@pytest.fixture(scope="module")
def page(webjax_page):
    webjax_page.run_py(_SETUP)
    return webjax_page


@pytest.mark.browser
def test_engine_is_browser(page):
    assert page.run_py("WB.host.name") == "browser"


@pytest.mark.browser
def test_exact_int_ops(page):
    bad = page.run_py(
        "vals = [0, 1, -1, 2, 7, -7, 100, 2**31 - 1, -2**31, 12345, -65536]\n"
        "res = {}\n"
        "for op in [Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.MAX, Op.SHL, Op.SHR, Op.SHRL,\n"
        "           Op.CMPLT, Op.XOR]:\n"
        "    for d in [dt.int32, dt.uint8, dt.int16, dt.uint32]:\n"
        "        vs = [scalar.normalize(d, v) for v in vals]\n"
        "        b = _check(*_binary(op, d, vs, vs))\n"
        "        if b: res[f'{op.value}-{d}'] = b\n"
        "res"
    )
    assert bad == {}


@pytest.mark.browser
def test_float_ops_and_transcendentals(page):
    bad = page.run_py(
        "vals = [0.0, -0.0, 1.0, -1.5, 2.5, 1e-3, 3.0e38, math.inf, -math.inf, math.nan, 0.1]\n"
        "res = {}\n"
        "for d in [dt.float32, dt.float64, dt.float16]:\n"
        "    vs = [scalar.normalize(d, v) for v in vals]\n"
        "    for op in [Op.ADD, Op.DIV, Op.MOD, Op.MAX, Op.MIN, Op.CMPLE]:\n"
        "        b = _check(*_binary(op, d, vs, vs))\n"
        "        if b: res[f'{op.value}-{d}'] = b\n"
        "    for op in [Op.EXP, Op.LOG, Op.SIN, Op.TANH, Op.LOGISTIC, Op.ERF]:\n"
        "        i = E.idx(len(vs))\n"
        "        k = Kernel(E.unary(op, E.load(0, i, d)), len(vs), (d,))\n"
        "        b = _check(k, [_pack(d, vs)], tol=1e-6 if d is dt.float32 else 1e-14)\n"
        "        if b and d is not dt.float16: res[f'{op.value}-{d}'] = b\n"
        "res"
    )
    assert bad == {}


@pytest.mark.browser
def test_reduction_and_masked_loads(page):
    bad = page.run_py(
        "rows, k = 8, 300\n"
        "i = E.idx(rows); r = E.ridx(k)\n"
        "body = E.load(0, E.add(E.mul(i, k), r), dt.float32)\n"
        "kern = Kernel(E.reduce(Op.ADD, body, k), rows, (dt.float32,))\n"
        "data = [float(j % 17) - 8.25 for j in range(rows * k)]\n"
        "b1 = _check(kern, [_pack(dt.float32, data)])\n"
        "j = E.idx(20)\n"
        "w = E.where(E.binary(Op.CMPLT, j, E.i32(10)), E.load(0, j, dt.int32),\n"
        "            E.load(1, E.add(j, -10), dt.int32))\n"
        "kern2 = Kernel(w, 20, (dt.int32, dt.int32))\n"
        "ins = [_pack(dt.int32, list(range(10))), _pack(dt.int32, list(range(50, 60)))]\n"
        "b2 = _check(kern2, ins)\n"
        "[b1, b2]"
    )
    assert bad == [[], []]


@pytest.mark.browser
def test_memory_growth_refreshes_views(page):
    out = page.run_py(
        "before = WB.host.nbytes\n"
        "big = WB.malloc(64 << 20)\n"
        "WB.write(big, b'\\x05' * 32)\n"
        "i = E.idx(16)\n"
        "e = E.binary(Op.ADD, E.load(0, i, dt.uint8), E.const(1, dt.uint8))\n"
        "kern = Kernel(e, 16, (dt.uint8,))\n"
        "o = WB.malloc(16)\n"
        "WB.dispatch(WB.prepare(kern), [big], o)\n"
        "res = [before < WB.host.nbytes, list(WB.read(o, 16)), list(WB.read(big, 4))]\n"
        "WB.free(big); WB.free(o)\n"
        "res"
    )
    assert out == [True, [6] * 16, [5] * 4]


@pytest.mark.browser
def test_async_prepare_and_large_module(page):
    # a big expression makes a module well past the main thread's sync-compile size limit
    out = page.run_py(
        "i = E.idx(64)\n"
        "x = E.load(0, i, dt.float32)\n"
        "e = x\n"
        "for j in range(400):\n"
        "    e = E.binary(Op.ADD, E.binary(Op.MUL, e, E.const(0.5 + j * 1e-3, dt.float32)), x)\n"
        "kern = Kernel(E.unary(Op.SIN, e), 64, (dt.float32,))\n"
        "exe = await WB.prepare_async(kern)\n"
        "data = [j / 64 for j in range(64)]\n"
        "bad = _check(kern, [_pack(dt.float32, data)], tol=1e-6)\n"
        "kern2 = Kernel(E.unary(Op.COS, e), 64, (dt.float32,))\n"
        "exe2 = WB.prepare(kern2)\n"
        "[len(exe.wasm), bad, _check(kern2, [_pack(dt.float32, data)], tol=1e-6)]"
    )
    assert out[0] > 4096 and out[1] == [] and out[2] == []
