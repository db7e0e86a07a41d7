"""The cpu backend: the reference executor. Buffers are bytearrays.

Kernels run through the NumPy evaluator (codegen.numpy_ref: vectorized, bit-identical to the
reference) where `import numpy` works, else as generated pure Python (codegen.pyref, e.g. in
Pyodide without NumPy). NumPy is imported lazily, at the first kernel: never at import time.
`WEBJAX_CPU_NUMPY=0` forces the pure-Python path.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, cast

from ..codegen import pyref
from ..ir.kernel import Kernel
from .backend import Backend, register_backend

_numpy_ref: Any = None  # the codegen.numpy_ref module once imported; False when unavailable


def _numpy_evaluator() -> Any:
    global _numpy_ref
    if _numpy_ref is None:
        if os.environ.get("WEBJAX_CPU_NUMPY", "1") in ("0", "false", "False", "off"):
            _numpy_ref = False
        else:
            try:
                from ..codegen import numpy_ref
            except ImportError:  # no NumPy on this host (Pyodide without the package)
                _numpy_ref = False
            else:
                _numpy_ref = numpy_ref
    return _numpy_ref


class CpuExecutable:
    def __init__(self, kernel: Kernel, fn: Callable[..., None], vectorized: bool = False) -> None:
        self.kernel = kernel
        self.fn = fn
        self.vectorized = vectorized  # fn(output, inputs) over raw buffers (numpy_ref)
        self.source: str = getattr(fn, "source", "")


class CpuBackend(Backend):
    platform = "cpu"
    kernels_may_alias = True  # each output element is written after its inputs are read

    def __init__(self, use_numpy: bool | None = None) -> None:
        self._cache: dict[Kernel, CpuExecutable] = {}
        self._use_numpy = use_numpy  # None: NumPy when importable

    def malloc(self, nbytes: int) -> bytearray:
        try:
            return bytearray(nbytes)
        except MemoryError:
            raise MemoryError(f"cpu: cannot allocate {nbytes} bytes") from None

    def free(self, handle: Any) -> None:
        pass  # garbage collected

    def write(self, handle: bytearray, data: bytes | bytearray | memoryview) -> None:
        handle[: len(data)] = data

    def read(self, handle: bytearray, nbytes: int) -> bytes:
        return bytes(handle[:nbytes])

    def prepare(self, kernel: Kernel) -> CpuExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            exe = self._cache[kernel] = self._compile(kernel)
        return exe

    def _compile(self, kernel: Kernel) -> CpuExecutable:
        npr: Any = _numpy_evaluator() if self._use_numpy is not False else False
        if npr:
            try:
                return CpuExecutable(kernel, npr.compile_kernel(kernel), vectorized=True)
            except npr.Unsupported:
                pass
        return CpuExecutable(kernel, pyref.compile_kernel(kernel))

    def dispatch(self, exe: CpuExecutable, inputs: list[Any], output: Any) -> None:
        if exe.vectorized:
            exe.fn(output, inputs)
            return
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
