"""The cpu backend: the reference executor. Buffers are bytearrays; kernels run as generated
Python (codegen.pyref). Slow by design; it defines the right answers on every host.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ..codegen import pyref
from ..ir.kernel import Kernel
from .backend import Backend, register_backend


class CpuExecutable:
    def __init__(self, kernel: Kernel, fn: Callable[..., None]) -> None:
        self.kernel = kernel
        self.fn = fn
        self.source: str = getattr(fn, "source", "")


class CpuBackend(Backend):
    platform = "cpu"

    def __init__(self) -> None:
        self._cache: dict[Kernel, CpuExecutable] = {}

    def malloc(self, nbytes: int) -> bytearray:
        return bytearray(nbytes)

    def free(self, handle: Any) -> None:
        pass  # garbage collected

    def write(self, handle: bytearray, data: bytes | bytearray | memoryview) -> None:
        handle[: len(data)] = data

    def read(self, handle: bytearray, nbytes: int) -> bytes:
        return bytes(handle[:nbytes])

    def prepare(self, kernel: Kernel) -> CpuExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            exe = self._cache[kernel] = CpuExecutable(kernel, pyref.compile_kernel(kernel))
        return exe

    def dispatch(self, exe: CpuExecutable, inputs: list[Any], output: Any) -> None:
        k = exe.kernel
        views = [
            cast(Any, memoryview(buf)).cast(pyref.fmt(d))[: _count(buf, d)]
            for buf, d in zip(inputs, k.arg_dtypes, strict=True)
        ]
        out = cast(Any, memoryview(output)).cast(pyref.fmt(k.out_dtype))
        exe.fn(out, *views)


def _count(buf: bytearray, dtype: Any) -> int:
    return len(buf) // dtype.itemsize


register_backend("cpu", CpuBackend, priority=0)
