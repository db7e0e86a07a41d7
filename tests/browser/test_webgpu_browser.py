"""The webgpu backend inside Pyodide in Chromium (WebGPU on SwiftShader).

The same WGSL that the native tests check on lavapipe runs through `navigator.gpu` here. Under
`runPythonAsync` reads block through JSPI; under plain `runPython` they cannot, and the backend
must say which async call to use instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from browser_harness import PyodideError, PyodidePage

pytestmark = pytest.mark.browser

# Builds a kernel mixing the slice's ops: casts, index math, compares, WHERE, a REDUCE with an
# epilogue, packed bool/int8 outputs; `expect_*` come from the cpu reference in the same page.
SETUP = """
import struct
from webjax._src import dtypes as dt
from webjax._src.ir import exp as E
from webjax._src.ir.kernel import make_kernel
from webjax._src.ir.ops import Op
from webjax._src.runtime.webgpu import WebGPUBackend


class Buf:
    def __init__(self, d):
        self.dtype = d


A, B = Buf(dt.int32), Buf(dt.float32)
N, R = 10, 6
i, r = E.idx(N), E.ridx(R)
a = E.load(A, i, dt.int32)
row = E.reduce(Op.ADD, E.load(B, E.add(E.mul(E.mod(i, 3), R), r), dt.float32), R)
val = E.binary(Op.MUL, E.cast(E.binary(Op.SUB, a, E.i32(4)), dt.float32), row)
small = E.binary(Op.CMPLT, E.cast(a, dt.float32), E.const(3.5, dt.float32))
KERNELS = {
    "f32": make_kernel(E.where(small, val, E.unary(Op.NEG, val)), N)[0],
    "bool": make_kernel(small, N)[0],
    "i8": make_kernel(E.cast(E.binary(Op.DIV, a, E.i32(-3)), dt.int8), N)[0],
}
A_BYTES = struct.pack(f"<{N}i", *range(N))
B_BYTES = struct.pack(f"<{3 * R}f", *[0.25 * k - 1 for k in range(3 * R)])


def run(backend, name):
    k = KERNELS[name]
    ha, hb = backend.malloc(len(A_BYTES)), backend.malloc(len(B_BYTES))
    backend.write(ha, A_BYTES)
    backend.write(hb, B_BYTES)
    out = backend.malloc(N * k.out_dtype.itemsize)
    backend.dispatch(backend.prepare(k), [ha, hb][: k.nargs], out)
    return out, N * k.out_dtype.itemsize


from webjax._src.runtime.cpu import CpuBackend

cpu = CpuBackend()
expect = {name: cpu.read(*run(cpu, name)).hex() for name in KERNELS}
"""


@pytest.fixture
def fresh_page(new_page: Callable[[], Any], server_url: str) -> PyodidePage:
    return PyodidePage(new_page()).load(server_url + "test.html", with_webjax=True)


def test_kernels_match_cpu_under_run_python_async(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP)
    got = webjax_page.run_py(
        """
gpu = WebGPUBackend()
got = {name: gpu.read(*run(gpu, name)).hex() for name in KERNELS}
[got == expect, got, expect, gpu.description, gpu.max_args]
"""
    )
    assert got[0], got
    assert got[4] >= 7


def test_sync_read_under_plain_run_python_names_the_async_call(webjax_page: PyodidePage) -> None:
    webjax_page.run_py(SETUP + "\ngpu = WebGPUBackend()\n")
    with pytest.raises(PyodideError) as info:
        webjax_page.run_py_sync("gpu.read(*run(gpu, 'f32'))")
    assert info.value.type_name == "SyncReadError"
    assert "block_until_ready_async" in info.value.message
    assert "read_async" in info.value.message
    # the async read works from the same (plain) entry point's queued work
    got = webjax_page.run_py("h, n = run(gpu, 'f32')\n(await gpu.read_async(h, n)).hex()")
    assert got == webjax_page.run_py("expect['f32']")


def test_device_init_under_plain_run_python(fresh_page: PyodidePage) -> None:
    fresh_page.run_py_sync(SETUP)
    with pytest.raises(PyodideError) as info:
        fresh_page.run_py_sync("WebGPUBackend()")
    assert info.value.type_name == "SyncReadError"
    assert "init_webgpu_async" in info.value.message
    fresh_page.run_py(
        "from webjax._src.hosts.webgpu_browser import init_webgpu_async\n"
        "await init_webgpu_async()\n"
    )
    # with the device open, the factory and dispatches work from plain runPython too
    fresh_page.run_py_sync("gpu = WebGPUBackend()\nh, n = run(gpu, 'bool')")
    got = fresh_page.run_py("(await gpu.read_async(h, n)).hex()")
    assert got == fresh_page.run_py("expect['bool']")
