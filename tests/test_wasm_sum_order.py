"""A float32 sum on the wasm backend is bit-identical however it is compiled.

The vector path (codegen/wasm/reduce.py) sums element r into lane r % 4 of accumulator
(r // 4) % u; whether it runs depends on fusion (a producer the lanes cannot compute, such as
sin, sends the reduction down the scalar loop), on SIMD support and on a run-time bounds check.
The scalar loop sums in the same lane order, so `jit(f)(x) == f(x)` and a fused sum equals the
sum of the materialized producer, bit for bit. Checked here against a NumPy model of that order
at sizes around the lane count (4) and the unroll (4 * u = 8 or 16), and end to end through jnp.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from webjax._src import dtypes as dt
from webjax._src.codegen.wasm import kernel as wasm_codegen
from webjax._src.codegen.wasm import reduce as wasm_reduce
from webjax._src.ir import exp as E
from webjax._src.ir.kernel import Kernel
from webjax._src.ir.ops import Op
from webjax._src.runtime.backend import BackendUnavailable

try:
    from webjax._src.runtime.wasm import WasmBackend

    WASM: Any = WasmBackend()
    SKIP = ""
except BackendUnavailable as e:  # pragma: no cover - depends on the host
    WASM, SKIP = None, f"wasm backend unavailable: {e}"

pytestmark = pytest.mark.skipif(WASM is None, reason=SKIP)

from test_wasm_backend import lane_order_sum as _lane_order_sum  # noqa: E402

F32 = dt.float32
SIZES = [8, 9, 12, 15, 16, 17, 31, 32, 33, 47, 48, 63, 67, 100, 1001]


def lane_order_sum(v: Any) -> np.float32:
    return np.float32(_lane_order_sum([float(x) for x in np.asarray(v, np.float32)]))


def _run(kernel: Kernel, inputs: list[bytes], *, simd: bool = True, short: int = 0) -> Any:
    """Run kernel as generated with or without SIMD; `short`: the input buffer's length is
    declared that many elements shorter (the vector path's bounds check fails)."""
    mod = wasm_codegen.generate_module(kernel, simd=simd)
    fn = WASM.host.instantiate(mod.wasm, wasm_codegen.EXPORT)
    handles = []
    for data in inputs:
        h = WASM.malloc(len(data))
        WASM.write(h, data)
        handles.append(h)
    out = WASM.malloc(4 * kernel.size)
    WASM.write(out, bytes(4 * kernel.size))  # (a reused block is zeroed on first use)
    args = [out.ptr, *(h.ptr for h in handles)]
    args += [h.nbytes // 4 - short for h in handles]
    args += [0, kernel.size]
    scratch = None
    if mod.scratch:
        scratch = WASM.malloc(mod.scratch)
        args.append(scratch.ptr)
    fn(*args)
    got = np.frombuffer(WASM.read(out, 4 * kernel.size), np.float32).copy()
    for h in [*handles, out, *([scratch] if scratch else [])]:
        WASM.free(h)
    return got


def _rows_kernel(rows: int, k: int, body: Any) -> tuple[Kernel, Any]:
    i, r = E.idx(rows), E.ridx(k)
    x = E.load(0, E.add(E.mul(i, k), r), F32)
    red = E.reduce(Op.ADD, body(x), k)
    return Kernel(red, rows, (F32,)), red


def _pack(a: Any) -> bytes:
    return struct.pack(f"<{a.size}f", *a.ravel().tolist())


@pytest.mark.parametrize("k", SIZES)
def test_every_path_sums_in_lane_order(k: int) -> None:
    rows = 3
    x = np.random.default_rng(k).standard_normal((rows, k)).astype(np.float32)
    want = np.array([lane_order_sum(row) for row in x], np.float32)
    kernel, red = _rows_kernel(rows, k, lambda v: v)
    dep_r = {id(n) for n in kernel.exp.toposort() if n is not red and n.op is not Op.IDX}
    assert wasm_reduce.plan_reduce(red, dep_r) is not None  # the vector path exists
    for simd, short in ((True, 0), (False, 0), (True, 1)):
        got = _run(kernel, [_pack(x)], simd=simd, short=short)
        if short:  # the last element of the buffer now reads as 0
            xs = x.copy()
            xs[-1, -1] = 0
            want_s = np.array([lane_order_sum(row) for row in xs], np.float32)
            np.testing.assert_array_equal(got, want_s)
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"simd={simd}")
    # a body the lanes cannot compute (sin: a float64 helper) takes the scalar loop
    sin_kernel = Kernel(E.unary(Op.SIN, E.load(0, E.idx(rows * k), F32)), rows * k, (F32,))
    sines = _run(sin_kernel, [_pack(x)]).reshape(rows, k)
    fused, _ = _rows_kernel(rows, k, lambda v: E.unary(Op.SIN, v))
    np.testing.assert_array_equal(
        _run(fused, [_pack(x)]), np.array([lane_order_sum(s) for s in sines], np.float32)
    )


@pytest.mark.parametrize("n", [9, 17, 33, 100, 4097])
def test_fused_unfused_and_jit_sums_are_bit_identical(n: int) -> None:
    import webjax
    import webjax.numpy as jnp

    dev = webjax.devices("wasm")[0]
    x = webjax.device_put(np.random.default_rng(n).standard_normal(n).astype(np.float32), dev)
    m = webjax.device_put(np.random.default_rng(n + 1).standard_normal((5, n), np.float32), dev)

    def materialize(a: Any) -> Any:
        return webjax.device_put(np.asarray(a), dev)

    for prod in (jnp.sin, lambda v: v * 1.5 + 0.25, jnp.exp):
        for a, axis in ((x, None), (m, -1), (m, 0)):

            def f(v: Any, prod: Any = prod, axis: Any = axis) -> Any:
                return jnp.sum(prod(v), axis=axis)

            fused = np.asarray(f(a))
            unfused = np.asarray(jnp.sum(materialize(prod(a)), axis=axis))
            jitted = np.asarray(webjax.jit(f)(a))
            np.testing.assert_array_equal(fused, unfused)
            np.testing.assert_array_equal(jitted, unfused)
    # the sum of squares Optax's MultiSteps test compares across lazy and computed parameters
    sq = np.asarray(jnp.sum(jnp.sin(x) ** 2))
    assert sq.tobytes() == np.asarray(jnp.sum(materialize(jnp.sin(x)) ** 2)).tobytes()
