"""The webgpu backend's workgroup-tiled matmul (codegen/wgsl_matmul.py), natively on wgpu-py.

Tiled products sum each output in k order with fused multiply-adds, so they are compared with
the cpu reference within a bound relative to sum_k |a||b| (not bit for bit).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from webjax._src import dtypes as dt
from webjax._src.codegen.wgsl import kernel as wgsl
from webjax._src.codegen.wgsl import matmul as wgsl_matmul
from webjax._src.ir import exp as E
from webjax._src.ir.kernel import make_kernel
from webjax._src.ir.ops import Op
from webjax._src.runtime.backend import BackendUnavailable

try:
    from webjax._src.runtime import webgpu  # noqa: F401  (registers the platform)
    from webjax._src.runtime.backend import get_backend

    GPU: Any = get_backend("webgpu")  # the instance webjax.numpy dispatches to
    SKIP = ""
except BackendUnavailable as e:  # pragma: no cover - depends on the host
    GPU, SKIP = None, f"webgpu backend unavailable: {e}"

gpu_only = pytest.mark.skipif(GPU is None, reason=SKIP)


@pytest.fixture
def tiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Tile every product (even tiny ones) and record the tiles used."""
    monkeypatch.setattr(wgsl_matmul, "MIN_MACS", 0)
    monkeypatch.setattr(wgsl_matmul, "MIN_DIM", 1)
    used: list[str] = []
    real = wgsl_matmul.render

    def spy(kernel: Any, plan: Any, limits: Any) -> Any:
        out = real(kernel, plan, limits)
        if out is not None:
            used.append(str(out[1]))
        return out

    monkeypatch.setattr(wgsl_matmul, "render", spy)
    if GPU is not None:
        GPU._cache.clear()
    yield used
    if GPU is not None:
        GPU._cache.clear()


@pytest.fixture(params=[1, 0], ids=["cpu", "gpu"])
def device_class(request: pytest.FixtureRequest) -> Any:
    """Products as on a CPU implementation (register tiles, no shared memory) or a GPU."""
    if GPU is None:
        yield request.param
        return
    saved = GPU.limits.get("cpu", 0)
    GPU.limits["cpu"] = request.param
    GPU._cache.clear()
    yield request.param
    GPU.limits["cpu"] = saved
    GPU._cache.clear()


def _run(platform: str, fn: Any, *arrays: np.ndarray) -> np.ndarray:
    import webjax
    import webjax.numpy as jnp

    with webjax.default_device(webjax.devices(platform)[0]):
        return np.asarray(fn(jnp, *[jnp.asarray(a) for a in arrays]))


def _check(fn: Any, ref_abs: np.ndarray, k: int, *arrays: np.ndarray) -> None:
    got = _run("webgpu", fn, *arrays)
    want = _run("cpu", fn, *arrays)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 2.0 * (k + 2) * 2.0**-24 * ref_abs + 1e-30
    bad = np.abs(got.astype(np.float64) - want.astype(np.float64)) > tol
    assert not bad.any(), (np.argwhere(bad)[:5], got[bad][:5], want[bad][:5])


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


SHAPES = [
    (1, 1, 1), (2, 3, 4), (16, 16, 16), (17, 5, 33), (64, 64, 64), (65, 63, 130),
    (128, 32, 128), (129, 65, 127), (256, 8, 256), (3, 300, 200), (200, 1, 3),
]  # fmt: skip


@gpu_only
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matmul_shapes(tiled: list[str], device_class: int, m: int, k: int, n: int) -> None:
    a, b = _rand(m, k), _rand(k, n, seed=1)
    _check(lambda jnp, x, w: x @ w, np.abs(a) @ np.abs(b), k, a, b)
    if m > 1 and n > 1:
        assert tiled, "the tiled matmul was not used"
        assert all(("no shared memory" in t) == bool(device_class) for t in tiled), tiled


# Variants of the shared-memory tile beyond TILES: double-buffered slices, 32-invocation
# patches of 8x4 and 4x8, 16x8 and 8x16 outputs per invocation, k steps in a loop, shared rows.
VARIANTS = (
    wgsl_matmul.Tile(64, 64, 8, 8, 8, True),
    wgsl_matmul.Tile(64, 64, 8, 8, 8, False, 8),
    wgsl_matmul.Tile(128, 128, 8, 16, 16, True, 4),
    wgsl_matmul.Tile(128, 128, 16, 8, 16, True, 8),
    wgsl_matmul.Tile(256, 128, 8, 16, 16, True, 8),
    wgsl_matmul.Tile(64, 64, 16, 8, 8, 2, 0, 4),
    wgsl_matmul.Tile(128, 128, 16, 16, 16, 1, 8, 8),
    wgsl_matmul.Tile(64, 64, 8, 8, 8),
    wgsl_matmul.Tile(128, 128, 16, 16, 16, 1, 8, 4, True),
    wgsl_matmul.Tile(64, 64, 16, 8, 8, 2, 0, 0, True),
)


@gpu_only
@pytest.mark.parametrize("tile", wgsl_matmul.TILES + VARIANTS, ids=str)
@pytest.mark.parametrize("m,k,n", [(128, 64, 128), (100, 37, 200), (260, 24, 136)])
def test_every_tile(
    tiled: list[str], monkeypatch: pytest.MonkeyPatch, tile: Any, m: int, k: int, n: int
) -> None:
    limits = GPU.limits
    if tile.smem > limits["max_workgroup_storage"] or tile.threads > limits["max_invocations"]:
        pytest.skip("tile over this adapter's limits")
    monkeypatch.setattr(wgsl_matmul, "FORCE_TILE", tile)
    a, b = _rand(m, k), _rand(k, n, seed=2)
    _check(lambda jnp, x, w: x @ w, np.abs(a) @ np.abs(b), k, a, b)
    # transposed operands: the other load modes (vec4 along the free dim, scalar)
    _check(lambda jnp, x, w: x.T @ w.T, np.abs(a) @ np.abs(b), k, a.T.copy(), b.T.copy())
    assert tiled and set(tiled) == {str(tile)}


@gpu_only
@pytest.mark.parametrize("tile", wgsl_matmul.REG_TILES, ids=str)
@pytest.mark.parametrize("m,k,n", [(128, 64, 128), (100, 37, 200), (36, 12, 20)])
def test_every_register_tile(
    tiled: list[str], monkeypatch: pytest.MonkeyPatch, tile: Any, m: int, k: int, n: int
) -> None:
    monkeypatch.setitem(GPU.limits, "cpu", 1)  # (the tiled fixture clears the cache after)
    monkeypatch.setattr(wgsl_matmul, "FORCE_REGS", tile)
    a, b = _rand(m, k), _rand(k, n, seed=2)
    _check(lambda jnp, x, w: x @ w, np.abs(a) @ np.abs(b), k, a, b)
    _check(lambda jnp, x, w: x.T @ w.T, np.abs(a) @ np.abs(b), k, a.T.copy(), b.T.copy())
    assert tiled and set(tiled) == {str(tile)}


def test_register_tile_choice() -> None:
    assert wgsl_matmul.choose_regs(1024, 1024) == wgsl_matmul.REG_TILES[0]
    small = wgsl_matmul.choose_regs(32, 32)  # enough invocations for the cores
    assert -(-32 // small.rm) * -(-32 // small.rn) >= wgsl_matmul.MIN_REG_INVOCATIONS or (
        small == wgsl_matmul.REG_TILES[-1]
    )
    prog = wgsl.render(_dot(512, 64, 512), 8, {"cpu": 1})
    assert "var<workgroup>" not in prog.source and "no shared memory" in prog.note


@gpu_only
@pytest.mark.parametrize("m,k,n", [(64, 32, 128), (33, 17, 65)])
def test_transposed_layouts(tiled: list[str], device_class: int, m: int, k: int, n: int) -> None:
    at, bt = _rand(k, m), _rand(n, k, seed=3)  # stored transposed
    a, b = at.T, bt.T
    ref = np.abs(a) @ np.abs(b)
    _check(lambda jnp, x, w: x.T @ w, ref, k, at, b.copy())
    _check(lambda jnp, x, w: x @ w.T, ref, k, a.copy(), bt)
    _check(lambda jnp, x, w: x.T @ w.T, ref, k, at, bt)
    _check(lambda jnp, x, w: (x @ w).T, ref.T, k, a.copy(), b.copy())
    assert len(tiled) >= 3


@gpu_only
def test_epilogues(tiled: list[str], device_class: int) -> None:
    m, k, n = 96, 48, 80
    a, b, bias = _rand(m, k), _rand(k, n, seed=4), _rand(n, seed=5)
    ref = np.abs(a) @ np.abs(b) + np.abs(bias)
    _check(lambda jnp, x, w, c: jnp.maximum(x @ w + c, 0.0), ref, k + 1, a, b, bias)
    _check(lambda jnp, x, w, c: jnp.tanh(x @ w + c) * 2.0, 4 * ref + 1e-6, k + 1, a, b, bias)
    # jit fuses epilogues into the product: a branchy one (tanh) into plain and transposed
    # outputs (register tiles run such an epilogue in a loop, not inlined per output)
    import webjax
    import webjax.numpy as wnp

    for fn, r in (
        (lambda x, w, c: wnp.tanh(x @ w + c), ref),
        (lambda x, w, c: wnp.tanh(x @ w + c).T, ref.T),
    ):
        _check(lambda jnp, x, w, c, fn=fn: webjax.jit(fn)(x, w, c), 4 * r + 1e-6, k + 1, a, b, bias)
    if device_class:
        assert any("res[" in e.source for e in GPU._cache.values())
    _check(lambda jnp, x, w: (x @ w).astype(jnp.int32), ref, k, a, b)
    assert tiled


@gpu_only
def test_batched(tiled: list[str], device_class: int) -> None:
    bsz, m, k, n = 3, 40, 24, 72
    a, b = _rand(bsz, m, k), _rand(bsz, k, n, seed=6)
    ref = np.einsum("bmk,bkn->bmn", np.abs(a), np.abs(b))
    _check(lambda jnp, x, w: jnp.matmul(x, w), ref, k, a, b)
    w2 = _rand(k, n, seed=7)
    ref2 = np.abs(a) @ np.abs(w2)
    _check(lambda jnp, x, w: jnp.matmul(x, w), ref2, k, a, w2)
    assert tiled


@gpu_only
def test_nan_and_inf_propagate(tiled: list[str], device_class: int) -> None:
    a, b = _rand(32, 16), _rand(16, 32, seed=8)
    a[3, 5] = np.nan
    b[2, 7] = np.inf
    got = _run("webgpu", lambda jnp, x, w: x @ w, a, b)
    want = _run("cpu", lambda jnp, x, w: x @ w, a, b)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))


@gpu_only
def test_small_products_stay_exact() -> None:
    """Below the size threshold products keep the generic kernels: bit-identical to cpu."""
    GPU._cache.clear()
    a, b = _rand(8, 8), _rand(8, 8, seed=9)
    got = _run("webgpu", lambda jnp, x, w: x @ w, a, b)
    want = _run("cpu", lambda jnp, x, w: x @ w, a, b)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


# ---- recognition (no GPU needed) -----------------------------------------------------------------
class _Buf:
    def __init__(self, d: dt.DType = dt.float32) -> None:
        self.dtype = d


def _dot(m: int, k: int, n: int, d: dt.DType = dt.float32, trans_b: bool = False) -> Any:
    i, r = E.idx(m * n), E.ridx(k)
    x = E.load(_Buf(d), E.add(E.mul(E.idiv(i, n), k), r), d)
    wi = E.add(E.mul(E.mod(i, n), k), r) if trans_b else E.add(E.mul(r, n), E.mod(i, n))
    w = E.load(_Buf(d), wi, d)
    return make_kernel(E.reduce(Op.ADD, E.binary(Op.MUL, x, w), k), m * n)[0]


def test_match_plain_and_transposed() -> None:
    p = wgsl_matmul.match(_dot(256, 128, 512))
    assert p is not None and (p.m, p.n, p.k) == (256, 512, 128)
    assert (p.a.s_mn, p.a.s_k, p.b.s_mn, p.b.s_k, p.so_m, p.so_n) == (128, 1, 1, 512, 512, 1)
    q = wgsl_matmul.match(_dot(256, 128, 512, trans_b=True))
    assert q is not None and (q.b.s_mn, q.b.s_k) == (128, 1)


def test_match_refuses_other_kernels() -> None:
    assert wgsl_matmul.match(_dot(256, 128, 512, d=dt.int32)) is None
    assert wgsl_matmul.match(_dot(4, 4, 4)) is None  # small: generic path
    assert wgsl_matmul.match(_dot(4, 4, 4), force=True) is not None
    # a sum of squares (one operand twice) is not a product of two matrices
    i, r = E.idx(64), E.ridx(4096)
    x = E.load(_Buf(), E.add(E.mul(i, 4096), r), dt.float32)
    k = make_kernel(E.reduce(Op.ADD, E.binary(Op.MUL, x, x), 4096), 64)[0]
    assert wgsl_matmul.match(k, force=True) is None


def test_tile_follows_limits() -> None:
    small = {"max_workgroup_storage": 8192, "max_invocations": 64}
    t = wgsl_matmul.choose_tile(4096, 4096, small)
    assert t.smem <= 8192 and t.threads <= 64
    big = wgsl_matmul.choose_tile(
        4096, 4096, {"max_workgroup_storage": 16384, "max_invocations": 256}
    )
    assert (big.tm, big.tn) == (128, 128)
    # an adapter with a GPU's larger limits (an H200's Vulkan: 49152 B, 1024 invocations) gets
    # the double-buffered 128x256 tile, unless the product is too small to fill the GPU with it
    h200 = {"max_workgroup_storage": 49152, "max_invocations": 1024}
    t = wgsl_matmul.choose_tile(4096, 4096, h200)
    assert (t.tm, t.tn, t.bk, t.db, t.rows) == (128, 256, 16, 1, True) and t.smem <= 49152
    assert wgsl_matmul.choose_tile(512, 4096, h200).tn == 128
    prog = wgsl.render(
        _dot(512, 64, 512), 8, {"max_workgroup_storage": 16384, "max_invocations": 256}
    )
    assert "var<workgroup>" in prog.source and "128x128" in prog.note
