"""The webgl backend: kernels as GLSL ES 3.00 fragment shaders (codegen.glsl) on WebGL2 textures.

The context comes from a host module: OpenGL ES 3 through EGL natively (hosts/webgl_native.py),
a WebGL2 context on an OffscreenCanvas in Pyodide (hosts/webgl_browser.py); both expose the same
small API. A buffer is an R32UI texture holding its bytes, 4 per texel, rows of a
power-of-two width (`texture_shape`); freed textures go to a pool keyed by shape, since texture
creation is slow. A kernel draws its output texture's rows; a kernel that reads its own output
(GL forbids sampling the texture being drawn) draws into a fresh texture that then replaces the
output's. The GL queue keeps the order of draws, uploads and reads, so nothing waits but reads.
"""

from __future__ import annotations

import math
import random
import struct
from typing import Any

from .. import dtypes as dt
from .. import profiler
from ..codegen.glsl import kernel as glsl
from ..codegen.glsl.expr import supports_dtype
from ..dtypes import DType
from ..hosts import in_browser, webgl_browser, webgl_native
from ..ir import exp as E
from ..ir import scalar
from ..ir.kernel import Kernel, make_kernel
from ..ir.ops import Op
from .backend import Backend, register_backend

_POOL_BYTES = 256 << 20  # freed texture bytes kept for reuse
_MAX_WIDTH = 8192  # texels per row (a power of two; at most the context's MAX_TEXTURE_SIZE)
TEXEL_BYTES = 4  # one 32-bit word per texel (R32UI)


class WebGLBuffer:
    """A device buffer: a `width` x `height` R32UI texture (4 bytes per texel) holding
    `nbytes` bytes; or, as a tiled matmul's scratch (`rgba`), an RGBA32UI one (16 bytes per
    texel), with `layers` > 1 a texture array of as many layers."""

    __slots__ = ("tex", "nbytes", "width", "height", "rgba", "layers", "__weakref__")

    def __init__(
        self, tex: Any, nbytes: int, width: int, height: int, rgba: bool = False, layers: int = 1
    ) -> None:
        self.tex = tex
        self.nbytes = nbytes
        self.width = width
        self.height = height
        self.rgba = rgba
        self.layers = layers

    @property
    def size(self) -> int:
        """Bytes of texture memory held (whole texels, rows and layers)."""
        return self.width * self.height * TEXEL_BYTES * (4 if self.rgba else 1) * self.layers

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
    """(width, height) of the texture for `nbytes`: powers of two, the width up to `max_width`
    texels. (Power-of-two heights too: llvmpipe compiles a shader variant per combination of
    its textures' power-of-two-ness, which cost seconds per kernel when heights varied.)"""
    texels = max(1, -(-nbytes // TEXEL_BYTES))
    width = 1 << (texels - 1).bit_length()
    if width <= max_width:
        return width, 1
    rows = -(-texels // max_width)
    return max_width, 1 << (rows - 1).bit_length()


PROBE_COUNT = 2048


def _probe_operands() -> tuple[list[float], list[float]]:
    """Normal float32 operands whose quotients are normal too, squares and values halfway
    between neighbouring squares (sqrt's hard cases), and IEEE special cases."""
    rnd = random.Random(1202)
    inf, nan = math.inf, math.nan

    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    def normal(lo: int, hi: int) -> float:
        bits = (rnd.randrange(lo, hi) << 23) | rnd.getrandbits(23)
        return float(struct.unpack("<f", struct.pack("<I", bits))[0])

    pairs = [(inf, 3.0), (3.0, inf), (5.0, 0.0), (-5.0, 0.0), (0.0, 0.0), (-inf, inf),
             (nan, 2.0), (2.0, nan), (0.0, 7.0), (-0.0, 7.0), (-2.0, 3.0), (inf, -0.0),
             (1.0, -inf), (3e38, 1e-3)]  # fmt: skip
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    while len(a) < PROBE_COUNT:
        root = normal(70, 185)
        kind = len(a) % 3
        if kind == 0:
            a.append(f32(root * root))
        elif kind == 1:
            a.append(f32((root + math.ulp(f32(root)) * 2.0**28) ** 2))
        else:
            a.append(normal(1, 254))
        e = math.frexp(a[-1])[1]
        b.append(normal(max(2, e + 27), min(253, e + 227)))
    return a, b


def probe_exact(backend: WebGLBackend) -> dict[str, int]:
    """Which builtins (division, sqrt) the device rounds correctly on normal operands, IEEE
    special cases included: kernels then call them instead of the corrected f_div and m_sqrt,
    which cost an order of magnitude more code (and compile time) per use. {} when the probe
    cannot run: kernels keep the corrected versions."""
    a, b = _probe_operands()
    n = len(a)

    class Slot:
        dtype = dt.float32

    sa, sb = Slot(), Slot()
    i = E.idx(n)
    la, lb = E.load(sa, i, dt.float32), E.load(sb, i, dt.float32)
    verdict = {}
    for flag, exp, want in (
        (
            "exact_div",
            E.binary(Op.DIV, la, lb),
            [scalar.apply(Op.DIV, dt.float32, p) for p in zip(a, b)],
        ),
        ("exact_sqrt", E.unary(Op.SQRT, la), [scalar.apply(Op.SQRT, dt.float32, (x,)) for x in a]),
    ):
        kernel, bufs = make_kernel(exp, n)
        handles: list[WebGLBuffer] = []
        try:
            program = glsl.render(kernel, {flag: 1})
            for buf in bufs:
                h = backend.malloc(4 * n)
                backend.write(h, struct.pack(f"<{n}f", *(a if buf is sa else b)))
                handles.append(h)
            out = backend.malloc(4 * n)
            handles.append(out)
            handle = backend.host.create_program(glsl.VERTEX, program.passes[0].source)
            exe = WebGLExecutable(kernel, program, [handle])
            backend.dispatch(exe, handles[:-1], out)
            got = struct.unpack(f"<{n}f", backend.read(out, 4 * n))
            backend.host.delete_program(handle)
        except Exception:  # a device that cannot run the probe gets no shortcuts
            return {}
        finally:
            for h in handles:
                backend.free(h)
        ok = all(g == w or (g != g and w != w) for g, w in zip(got, want))
        ok = ok and all(
            math.copysign(1, g) == math.copysign(1, w) for g, w in zip(got, want) if g == 0
        )
        verdict[flag] = int(ok)
    return verdict


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
        self.max_buffer_bytes = self.max_width * size * TEXEL_BYTES
        self.limits: dict[str, int] = {
            "cpu": int(bool(getattr(self.host, "is_cpu", False))),
            # what the tiled matmul (codegen/glsl/matmul.py) sizes its textures and targets by
            "max_texture_size": min(size, self.max_width),
            "max_textures": int(self.host.max_texture_units),
            "max_draw_buffers": int(getattr(self.host, "max_draw_buffers", 4)),
        }
        self._cache: dict[Kernel, WebGLExecutable] = {}
        self._pool: dict[tuple[int, int, bool, int], list[Any]] = {}
        self._pool_bytes = 0
        self._in_use = self._peak = self._allocs = 0
        exact = getattr(self.host, "exact", None)
        if exact is None:
            exact = self.host.exact = probe_exact(self)
        self.limits.update(exact)  # exact_div, exact_sqrt: the device's builtins round right

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
        free = self._pool.get((w, h, False, 1))
        self._account(w * h * TEXEL_BYTES)
        if free:
            self._pool_bytes -= w * h * TEXEL_BYTES
            return WebGLBuffer(free.pop(), nbytes, w, h)
        return WebGLBuffer(self.host.create_texture(w, h), nbytes, w, h)

    def _account(self, size: int) -> None:
        self._in_use += size
        self._peak = max(self._peak, self._in_use)
        self._allocs += 1

    def memory_stats(self) -> dict[str, int]:
        return {
            "bytes_in_use": self._in_use,  # textures held (whole texels and rows)
            "peak_bytes_in_use": self._peak,
            "num_allocs": self._allocs,
            "pool_bytes": self._pool_bytes,  # free textures kept for reuse
            "largest_alloc_size": self.max_buffer_bytes,
        }

    def _malloc_rgba(self, spec: glsl.Rgba) -> WebGLBuffer:
        """An RGBA32UI scratch texture (array) of at least spec's texels (power-of-two
        sides)."""
        w = 1 << (max(1, spec.width) - 1).bit_length()
        h = 1 << (max(1, spec.height) - 1).bit_length()
        n = spec.layers
        free = self._pool.get((w, h, True, n))
        buf = WebGLBuffer(free.pop() if free else None, w * h * 16 * n, w, h, True, n)
        self._account(buf.size)
        if free is not None and buf.tex is not None:
            self._pool_bytes -= buf.size
        else:
            buf.tex = self.host.create_texture(w, h, rgba=True, layers=n)
        return buf

    def free(self, handle: WebGLBuffer) -> None:
        tex, handle.tex = handle.tex, None
        if tex is None:
            return
        size = handle.size
        self._in_use -= size
        if self._pool_bytes + size <= _POOL_BYTES:
            key = (handle.width, handle.height, handle.rgba, handle.layers)
            self._pool.setdefault(key, []).append(tex)
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
        rows = -(-n // (TEXEL_BYTES * handle.width))
        full = rows * handle.width * TEXEL_BYTES
        if n < full:
            data = bytes(data) + bytes(full - n)
        self.host.write_texture(handle.tex, handle.width, rows, data)

    def read(self, handle: WebGLBuffer, nbytes: int) -> bytes:
        if nbytes == 0:
            return b""
        rows = -(-nbytes // (TEXEL_BYTES * handle.width))
        return self.host.read_texture(handle.tex, handle.width, rows)[:nbytes]

    async def read_async(self, handle: WebGLBuffer, nbytes: int) -> bytes:
        if nbytes == 0:
            return b""
        rows = -(-nbytes // (TEXEL_BYTES * handle.width))
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
        scratch = [
            self._malloc_rgba(n) if isinstance(n, glsl.Rgba) else self.malloc(n)
            for n in prog.scratch
        ]
        # while the profiler records, a context with timer queries times the kernel's draws
        # (hosts/gl_timer.py; nothing waits); one without waits for them (the event's CPU time)
        events = profiler.open_events()
        timer: Any = getattr(self.host, "timer", None) if events is not None else None
        timed = timer.begin(events) if timer is not None else None
        try:
            for p, handle in zip(prog.passes, exe.handles, strict=True):
                bound = [inputs[k] if k >= 0 else scratch[-1 - k] for k in p.reads]
                dest = output if p.writes < 0 else scratch[p.writes]
                uniforms = {f"u_w{k}": h.shift for k, h in enumerate(bound)}
                uniforms["u_ow"] = dest.shift
                if p.grid is not None:
                    width, rows = p.grid
                else:
                    rows = -(-p.texels // dest.width)
                    width = dest.width if rows > 1 else p.texels
                self.host.draw(handle, [h.tex for h in bound], dest.tex, width, rows, uniforms)
        except BaseException:
            if timed is not None:
                timer.end(timed, ok=False)
            raise
        finally:
            for s in scratch:
                self.free(s)
        if timed is not None:
            timer.end(timed)
            profiler.before_stop(timer.settle)
        elif events is not None:
            self.host.finish()

    def synchronize(self) -> None:
        self.host.finish()
        timer = getattr(self.host, "timer", None)
        if timer is not None and timer.pending:
            timer.poll(wait=True)

    async def synchronize_async(self) -> None:
        wait = getattr(self.host, "wait_idle_async", None)
        if wait is None:
            self.host.finish()
        else:
            await wait()
        timer = getattr(self.host, "timer", None)
        if timer is not None and timer.pending:
            await timer.poll_async()

    def close(self) -> None:
        """Delete every texture in the pool and every compiled program."""
        self.trim()
        for exe in self._cache.values():
            for h in exe.handles:
                self.host.delete_program(h)
        self._cache.clear()


register_backend("webgl", WebGLBackend, priority=1)
