"""The hand-written kernels in wasm_kernels/, assembled by build.py, run natively in wasmtime."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "wasm_kernels"
ASSEMBLED = ROOT / "pkg" / "webjax" / "_src" / "wasm_kernels"
PAGE = 65536

wasmtime = pytest.importorskip(
    "wasmtime", reason="wasmtime is not installed (test extra): the wasm kernels are not run"
)


def test_every_kernel_is_assembled():
    for source in sorted(SOURCES.glob("*.wat")):
        wasm = ASSEMBLED / f"{source.stem}.wasm"
        assert wasm.exists(), f"{wasm} missing: run `python build.py` (build.py test does it)"
        assert wasm.read_bytes() == wasmtime.wat2wasm(source.read_text())


class Memory:
    """memory.wasm instantiated against a fresh 1-page memory, with a bytearray mirror."""

    def __init__(self) -> None:
        path = ASSEMBLED / "memory.wasm"
        if not path.exists():
            pytest.fail(f"{path} missing: run `python build.py` (build.py test does it)")
        self.store = wasmtime.Store()
        self.memory = wasmtime.Memory(self.store, wasmtime.MemoryType(wasmtime.Limits(1, None)))
        module = wasmtime.Module.from_file(self.store.engine, str(path))
        instance = wasmtime.Instance(self.store, module, [self.memory])
        self.exports = instance.exports(self.store)
        self.write(0, bytes(random.Random(0).randrange(256) for _ in range(PAGE)))

    def call(self, name: str, *args: int) -> None:
        self.exports[name](self.store, *args)

    def read(self) -> bytes:
        return bytes(self.memory.read(self.store, 0, PAGE))

    def write(self, offset: int, data: bytes) -> None:
        self.memory.write(self.store, data, offset)


@pytest.fixture
def mem() -> Memory:
    return Memory()


@pytest.mark.parametrize("value", [0, -1, 0x01010101, 0x3F800000, 0x12345678, -2])
@pytest.mark.parametrize(("dst", "count"), [(0, 0), (0, 1), (4, 3), (3, 4), (16, 64), (1, 37)])
def test_fill32(mem, dst, value, count):
    expected = bytearray(mem.read())
    expected[dst : dst + 4 * count] = struct.pack("<i", value) * count
    mem.call("fill32", dst, value, count)
    assert mem.read() == expected


def test_fill32_to_the_end_of_memory(mem):
    expected = bytearray(mem.read())
    expected[PAGE - 40 :] = struct.pack("<i", 7) * 10
    mem.call("fill32", PAGE - 40, 7, 10)
    assert mem.read() == expected


def test_fill32_out_of_bounds_traps(mem):
    with pytest.raises(wasmtime.Trap):
        mem.call("fill32", PAGE - 8, 0x12345678, 3)


@pytest.mark.parametrize(("dst", "byte", "nbytes"), [(0, 0, 0), (5, 0xAB, 11), (100, 255, 1000)])
def test_fill8(mem, dst, byte, nbytes):
    expected = bytearray(mem.read())
    expected[dst : dst + nbytes] = bytes([byte]) * nbytes
    mem.call("fill8", dst, byte, nbytes)
    assert mem.read() == expected


@pytest.mark.parametrize(
    ("dst", "src", "nbytes"),
    [(0, 100, 0), (1000, 0, 333), (0, 1000, 333), (10, 0, 100), (0, 10, 100), (7, 7, 50)],
)
def test_copy_is_memmove(mem, dst, src, nbytes):
    expected = bytearray(mem.read())
    expected[dst : dst + nbytes] = expected[src : src + nbytes]
    mem.call("copy", dst, src, nbytes)
    assert mem.read() == expected


def test_random_fills_and_copies(mem):
    rng = random.Random(1)
    expected = bytearray(mem.read())
    for _ in range(200):
        if rng.random() < 0.5:
            count = rng.randrange(0, 300)
            dst = rng.randrange(0, PAGE - 4 * count)
            value = rng.choice([0, -1, rng.randrange(-(2**31), 2**31)])
            expected[dst : dst + 4 * count] = struct.pack("<i", value) * count
            mem.call("fill32", dst, value, count)
        else:
            nbytes = rng.randrange(0, 2000)
            dst, src = rng.randrange(0, PAGE - nbytes), rng.randrange(0, PAGE - nbytes)
            expected[dst : dst + nbytes] = expected[src : src + nbytes]
            mem.call("copy", dst, src, nbytes)
    assert mem.read() == expected
