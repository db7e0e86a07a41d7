"""The webgl backend: kernels as GLSL ES 3.00 fragment shaders (codegen.glsl) on WebGL2 textures.

The context comes from a host module: OpenGL ES 3 through EGL natively (hosts/webgl_native.py),
a WebGL2 context on an OffscreenCanvas in Pyodide (hosts/webgl_browser.py); both expose the same
small API. A buffer is an RGBA32UI texture holding its bytes, 16 per texel, rows of a
power-of-two width (`texture_shape`); freed textures go to a pool keyed by shape, since texture
creation is slow. A kernel draws its output texture's rows; a kernel that reads its own output
(GL forbids sampling the texture being drawn) draws into a fresh texture that then replaces the
output's. The GL queue keeps the order of draws, uploads and reads, so nothing waits but reads.
"""

from __future__ import annotations

from typing import Any

from .. import profiler
from ..codegen.glsl import kernel as glsl
from ..codegen.glsl.expr import supports_dtype
from ..dtypes import DType
from ..hosts import in_browser, webgl_browser, webgl_native
from ..ir.kernel import Kernel
from .backend import Backend, register_backend

_POOL_BYTES = 256 << 20  # freed texture bytes kept for reuse
_MAX_WIDTH = 4096  # texels per row (a power of two; at most the context's MAX_TEXTURE_SIZE)


class WebGLBuffer:
    """A device buffer: a `width` x `height` RGBA32UI texture (16 bytes per texel) holding
    `nbytes` bytes."""

    __slots__ = ("tex", "nbytes", "width", "height", "__weakref__")

    def __init__(self, tex: Any, nbytes: int, width: int, height: int) -> None:
        self.tex = tex
        self.nbytes = nbytes
        self.width = width
        self.height = height

    @property
    def shift(self) -> int:
        return self.width.bit_length() - 1

    def __repr__(self) -> str:
        return f"WebGLBuffer({self.nbytes} bytes, {self.width}x{self.height})"


class WebGLExecutable:
    def __init__(self, kernel: Kernel, program: glsl.GlslProgram, handles: list[Any]) -> None:
        self.kernel = kernel
        self.program = program
        self.handles = handles  # one GL program per pass
        self.source = program.source


def texture_shape(nbytes: int, max_width: int) -> tuple[int, int]:
    """(width, height) of the texture for `nbytes`: a power-of-two width up to `max_width`
    texels, as many rows as needed."""
    texels = max(1, -(-nbytes // 16))
    width = 1 << (texels - 1).bit_length()
    if width > max_width:
        width = max_width
    return width, -(-texels // width)


def _open_host() -> Any:
    if in_browser():
        return webgl_browser.open_device()
    return webgl_native.open_device()


class WebGLBackend(Backend):
    platform = "webgl"

    def __init__(self, host: Any = None) -> None:
        self.host = host if host is not None else _open_host()
        self.description: str = getattr(self.host, "description", "webgl")
        # samplers per fragment shader, less one for the partials of split reductions
        self.max_args = int(self.host.max_texture_units) - 1
        size = int(self.host.max_texture_size)
        self.max_width = min(_MAX_WIDTH, 1 << (size.bit_length() - 1))
        self.max_height = size
        self.max_buffer_bytes = self.max_width * size * 16
        self.limits: dict[str, int] = {"cpu": int(bool(getattr(self.host, "is_cpu", False)))}
        self._cache: dict[Kernel, WebGLExecutable] = {}
        self._pool: dict[tuple[int, int], list[Any]] = {}
        self._pool_bytes = 0

    def supports_dtype(self, dtype: DType) -> bool:
        return supports_dtype(dtype)

    # -- memory -------------------------------------------------------------------------------
    def malloc(self, nbytes: int) -> WebGLBuffer:
        w, h = texture_shape(nbytes, self.max_width)
        if h > self.max_height:
            raise MemoryError(
                f"webgl: {nbytes} bytes need a {w}x{h} texture, beyond this context's "
                f"MAX_TEXTURE_SIZE ({self.max_height}); the device holds at most "
                f"{self.max_buffer_bytes} bytes per array"
            )
        free = self._pool.get((w, h))
        if free:
            self._pool_bytes -= w * h * 16
            return WebGLBuffer(free.pop(), nbytes, w, h)
        return WebGLBuffer(self.host.create_texture(w, h), nbytes, w, h)

    def free(self, handle: WebGLBuffer) -> None:
        tex, handle.tex = handle.tex, None
        if tex is None:
            return
        size = handle.width * handle.height * 16
        if self._pool_bytes + size <= _POOL_BYTES:
            self._pool.setdefault((handle.width, handle.height), []).append(tex)
            self._pool_bytes += size
        else:
            self.host.delete_texture(tex)

    def trim(self) -> None:
        """Delete the pooled (free) textures."""
        for texs in self._pool.values():
            for t in texs:
                self.host.delete_texture(t)
        self._pool.clear()
        self._pool_bytes = 0

    def write(self, handle: WebGLBuffer, data: bytes | bytearray | memoryview) -> None:
        n = len(data) if not isinstance(data, memoryview) else data.nbytes
        if not n:
            return
        rows = -(-n // (16 * handle.width))
        full = rows * handle.width * 16
        if n < full:
            data = bytes(data) + bytes(full - n)
        self.host.write_texture(handle.tex, handle.width, rows, data)

    def read(self, handle: WebGLBuffer, nbytes: int) -> bytes:
        if nbytes == 0:
            return b""
        rows = -(-nbytes // (16 * handle.width))
        return self.host.read_texture(handle.tex, handle.width, rows)[:nbytes]

    async def read_async(self, handle: WebGLBuffer, nbytes: int) -> bytes:
        if nbytes == 0:
            return b""
        rows = -(-nbytes // (16 * handle.width))
        read = getattr(self.host, "read_texture_async", None)
        if read is None:
            return self.read(handle, nbytes)
        return (await read(handle.tex, handle.width, rows))[:nbytes]

    # -- kernels ------------------------------------------------------------------------------
    def prepare(self, kernel: Kernel) -> WebGLExecutable:
        exe = self._cache.get(kernel)
        if exe is None:
            program = glsl.render(kernel, self.limits)
            handles = []
            try:
                for p in program.passes:
                    handles.append(self.host.create_program(glsl.VERTEX, p.source))
            except Exception as e:
                for h in handles:
                    self.host.delete_program(h)
                source = program.passes[len(handles)].source
                numbered = "\n".join(
                    f"{i + 1:4d}  {line}" for i, line in enumerate(source.splitlines())
                )
                raise RuntimeError(f"webgl: shader compilation failed: {e}\n{numbered}") from e
            exe = self._cache[kernel] = WebGLExecutable(kernel, program, handles)
        return exe

    def dispatch(self, exe: WebGLExecutable, inputs: list[Any], output: Any) -> None:
        prog = exe.program
        if len(inputs) != prog.nargs:
            raise ValueError(f"webgl: kernel takes {prog.nargs} inputs, got {len(inputs)}")
        if prog.passes[-1].texels == 0:
            return
        if any(h is output for h in inputs):
            # GL forbids sampling the texture being drawn: draw a fresh one, then swap it in
            tmp = self.malloc(output.nbytes)
            self.dispatch(exe, inputs, tmp)
            output.tex, tmp.tex = tmp.tex, output.tex
            self.free(tmp)
            return
        scratch = [self.malloc(n) for n in prog.scratch]
        try:
            for p, handle in zip(prog.passes, exe.handles, strict=True):
                bound = [inputs[k] if k >= 0 else scratch[-1 - k] for k in p.reads]
                dest = output if p.writes < 0 else scratch[p.writes]
                uniforms = {f"u_w{k}": h.shift for k, h in enumerate(bound)}
                uniforms["u_ow"] = dest.shift
                rows = -(-p.texels // dest.width)
                width = dest.width if rows > 1 else p.texels
                self.host.draw(handle, [h.tex for h in bound], dest.tex, width, rows, uniforms)
        finally:
            for s in scratch:
                self.free(s)
        if profiler.open_events() is not None:
            self.host.flush()

    def synchronize(self) -> None:
        self.host.finish()

    def close(self) -> None:
        """Delete every texture in the pool and every compiled program."""
        self.trim()
        for exe in self._cache.values():
            for h in exe.handles:
                self.host.delete_program(h)
        self._cache.clear()


register_backend("webgl", WebGLBackend, priority=1)
