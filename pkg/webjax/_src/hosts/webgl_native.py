"""WebGL2's native twin: OpenGL ES 3 through EGL, headless (Mesa's surfaceless platform).

The host API shared with webgl_browser.py: R32UI textures (4 bytes per texel; RGBA32UI for
the tiled matmul's scratch), programs built from a vertex and a fragment shader, draws of a
full-screen triangle into one texture attached to a framebuffer (or several, as render targets),
and reads through `glReadPixels`. The same GLSL ES 3.00 text runs
here and in browsers (`#version 300 es`). Bound with ctypes to libEGL and libGLESv2, so nothing
outside the standard library is needed; the libraries are opened lazily (import webjax works
without them) and a host without them, or without an ES 3 context, gets BackendUnavailable.

Kernel GPU times for the profiler come from GL_EXT_disjoint_timer_query (Mesa's llvmpipe has
it) through hosts/gl_timer.py. Native contexts are not lost, but `lose_context()` simulates a
loss for tests (the context is destroyed and every later call raises, naming the loss, as in a
browser); `open_device()` then makes a fresh context.
"""

from __future__ import annotations

import ctypes as C
import ctypes.util
import os
from typing import Any

from . import BackendUnavailable
from .gl_timer import KernelTimer

# EGL
_EGL_PLATFORM_SURFACELESS_MESA = 0x31DD
_EGL_OPENGL_ES_API = 0x30A0
_EGL_CONTEXT_MAJOR_VERSION = 0x3098
_EGL_NONE = 0x3038
# GL ES 3
_TEXTURE_2D = 0x0DE1
_TEXTURE_2D_ARRAY = 0x8C1A
_TEXTURE0 = 0x84C0
_TEXTURE_MIN_FILTER = 0x2801
_TEXTURE_MAG_FILTER = 0x2800
_NEAREST = 0x2600
_R32UI = 0x8236
_RGBA32UI = 0x8D70
_MAX_DRAW_BUFFERS = 0x8824
_RED_INTEGER = 0x8D94
_RGBA_INTEGER = 0x8D99
_IMPLEMENTATION_COLOR_READ_TYPE = 0x8B9A
_IMPLEMENTATION_COLOR_READ_FORMAT = 0x8B9B
_UNSIGNED_INT = 0x1405
_FRAMEBUFFER = 0x8D40
_READ_FRAMEBUFFER = 0x8CA8
_COLOR_ATTACHMENT0 = 0x8CE0
_FRAMEBUFFER_COMPLETE = 0x8CD5
_FRAGMENT_SHADER = 0x8B30
_VERTEX_SHADER = 0x8B31
_COMPILE_STATUS = 0x8B81
_LINK_STATUS = 0x8B82
_INFO_LOG_LENGTH = 0x8B84
_TRIANGLES = 0x0004
_PACK_ALIGNMENT = 0x0D05
_UNPACK_ALIGNMENT = 0x0CF5
_MAX_TEXTURE_SIZE = 0x0D33
_MAX_TEXTURE_IMAGE_UNITS = 0x8872
_VENDOR, _RENDERER, _VERSION = 0x1F00, 0x1F01, 0x1F02
_EXTENSIONS = 0x1F03
_NUM_EXTENSIONS = 0x821D
_DITHER = 0x0BD0
# GL_EXT_disjoint_timer_query
_QUERY_COUNTER_BITS_EXT = 0x8864
_QUERY_RESULT_EXT = 0x8866
_QUERY_RESULT_AVAILABLE_EXT = 0x8867
_TIME_ELAPSED_EXT = 0x88BF
_GPU_DISJOINT_EXT = 0x8FBB

# Function signatures: name -> (restype, argtypes)
_u, _i, _p, _s = C.c_uint, C.c_int, C.c_void_p, C.c_char_p
_GL_FUNCS: dict[str, tuple[Any, list[Any]]] = {
    "glGetError": (_u, []),
    "glGetString": (_s, [_u]),
    "glGetStringi": (_s, [_u, _u]),
    "glGetIntegerv": (None, [_u, _p]),
    "glDisable": (None, [_u]),
    "glPixelStorei": (None, [_u, _i]),
    "glGenTextures": (None, [_i, _p]),
    "glDeleteTextures": (None, [_i, _p]),
    "glBindTexture": (None, [_u, _u]),
    "glActiveTexture": (None, [_u]),
    "glTexParameteri": (None, [_u, _u, _i]),
    "glTexStorage2D": (None, [_u, _i, _u, _i, _i]),
    "glTexStorage3D": (None, [_u, _i, _u, _i, _i, _i]),
    "glTexSubImage2D": (None, [_u, _i, _i, _i, _i, _i, _u, _u, _p]),
    "glGenFramebuffers": (None, [_i, _p]),
    "glBindFramebuffer": (None, [_u, _u]),
    "glFramebufferTexture2D": (None, [_u, _u, _u, _u, _i]),
    "glFramebufferTextureLayer": (None, [_u, _u, _u, _i, _i]),
    "glCheckFramebufferStatus": (_u, [_u]),
    "glReadPixels": (None, [_i, _i, _i, _i, _u, _u, _p]),
    "glCreateShader": (_u, [_u]),
    "glDeleteShader": (None, [_u]),
    "glShaderSource": (None, [_u, _i, _p, _p]),
    "glCompileShader": (None, [_u]),
    "glGetShaderiv": (None, [_u, _u, _p]),
    "glGetShaderInfoLog": (None, [_u, _i, _p, _p]),
    "glCreateProgram": (_u, []),
    "glDeleteProgram": (None, [_u]),
    "glAttachShader": (None, [_u, _u]),
    "glLinkProgram": (None, [_u]),
    "glGetProgramiv": (None, [_u, _u, _p]),
    "glGetProgramInfoLog": (None, [_u, _i, _p, _p]),
    "glUseProgram": (None, [_u]),
    "glGetUniformLocation": (_i, [_u, _s]),
    "glUniform1i": (None, [_i, _i]),
    "glUniform1ui": (None, [_i, _u]),
    "glViewport": (None, [_i, _i, _i, _i]),
    "glDrawArrays": (None, [_u, _i, _i]),
    "glDrawBuffers": (None, [_i, _p]),
    "glGenVertexArrays": (None, [_i, _p]),
    "glBindVertexArray": (None, [_u]),
    "glFlush": (None, []),
    "glFinish": (None, []),
}


def _open(names: tuple[str, ...]) -> Any:
    for name in names:
        try:
            return C.CDLL(name)
        except OSError:
            continue
    found = ctypes.util.find_library(names[0].split(".")[0].removeprefix("lib"))
    if found:
        return C.CDLL(found)
    raise BackendUnavailable(
        f"{names[0]} not found (Debian: apt-get install libegl1 libgles2 libegl-mesa0 "
        "libgl1-mesa-dri)"
    )


class _GL:
    """The GL ES entry points as typed ctypes functions (attributes named without `gl`)."""

    def __init__(self, lib: Any) -> None:
        for name, (res, args) in _GL_FUNCS.items():
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
            setattr(self, name[2:], f)

    def __getattr__(self, name: str) -> Any:  # the entry points are set in __init__
        raise AttributeError(f"no GL entry point gl{name}")


class NativeWebGL:
    """One OpenGL ES 3 context (current on this thread), with a framebuffer and a vertex array
    kept bound for every draw."""

    def __init__(self) -> None:
        egl = _open(("libEGL.so.1", "libEGL.so"))
        self._egl = egl
        self.gl = gl = _GL(_open(("libGLESv2.so.2", "libGLESv2.so")))
        egl.eglGetProcAddress.restype = C.c_void_p
        egl.eglGetProcAddress.argtypes = [C.c_char_p]
        get_display = egl.eglGetProcAddress(b"eglGetPlatformDisplayEXT")
        if not get_display:
            raise BackendUnavailable("EGL has no eglGetPlatformDisplayEXT")
        get_platform_display = C.CFUNCTYPE(C.c_void_p, C.c_uint, C.c_void_p, C.c_void_p)(
            get_display
        )
        dpy = get_platform_display(_EGL_PLATFORM_SURFACELESS_MESA, None, None)
        egl.eglInitialize.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p]
        if not dpy or not egl.eglInitialize(C.c_void_p(dpy), None, None):
            raise BackendUnavailable("EGL: no surfaceless display (Mesa's EGL is needed)")
        self._dpy = C.c_void_p(dpy)
        egl.eglBindAPI.argtypes = [C.c_uint]
        egl.eglBindAPI(_EGL_OPENGL_ES_API)
        egl.eglCreateContext.restype = C.c_void_p
        egl.eglCreateContext.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p]
        attrs = (C.c_int * 3)(_EGL_CONTEXT_MAJOR_VERSION, 3, _EGL_NONE)
        ctx = egl.eglCreateContext(self._dpy, None, None, attrs)  # EGL_KHR_no_config_context
        if not ctx:
            raise BackendUnavailable("EGL: cannot create an OpenGL ES 3 context")
        self._ctx = C.c_void_p(ctx)
        egl.eglMakeCurrent.argtypes = [C.c_void_p] * 4
        egl.eglGetCurrentContext.restype = C.c_void_p
        if not egl.eglMakeCurrent(self._dpy, None, None, self._ctx):
            raise BackendUnavailable("EGL: cannot make the ES 3 context current")
        self._pid = os.getpid()
        self.extensions = self._extensions()
        renderer = (gl.GetString(_RENDERER) or b"?").decode()
        version = (gl.GetString(_VERSION) or b"?").decode()
        self.description = f"{renderer} ({version})"
        self.is_cpu = any(n in renderer.lower() for n in ("llvmpipe", "softpipe", "swiftshader"))
        self.max_texture_size = self._int(_MAX_TEXTURE_SIZE)
        self.max_texture_units = self._int(_MAX_TEXTURE_IMAGE_UNITS)
        self.max_draw_buffers = self._int(_MAX_DRAW_BUFFERS)
        gl.Disable(_DITHER)
        gl.PixelStorei(_PACK_ALIGNMENT, 4)
        gl.PixelStorei(_UNPACK_ALIGNMENT, 4)
        ids = (C.c_uint * 1)()
        gl.GenFramebuffers(1, ids)
        self._fbo = ids[0]
        gl.BindFramebuffer(_FRAMEBUFFER, self._fbo)
        gl.GenVertexArrays(1, ids)
        gl.BindVertexArray(ids[0])
        self._attached = 0
        self._layers: dict[int, int] = {}  # the texture arrays made here, by id: their layers
        self._red_reads: bool | None = None  # readPixels(RED_INTEGER) works (asked once)
        self._program = 0
        self._locations: dict[int, dict[str, int]] = {}  # by program: its uniforms' locations
        self.lost: str | None = None
        self._queries = self._timer_entry_points()
        self.timer = KernelTimer(self) if self._queries is not None else None

    def _timer_entry_points(self) -> dict[str, Any] | None:
        """GL_EXT_disjoint_timer_query's functions, or None where the context lacks it (or its
        TIME_ELAPSED counter has no bits)."""
        if "GL_EXT_disjoint_timer_query" not in self.extensions:
            return None
        sigs: dict[str, tuple[Any, list[Any]]] = {
            "glGenQueriesEXT": (None, [_i, _p]),
            "glDeleteQueriesEXT": (None, [_i, _p]),
            "glBeginQueryEXT": (None, [_u, _u]),
            "glEndQueryEXT": (None, [_u]),
            "glGetQueryivEXT": (None, [_u, _u, _p]),
            "glGetQueryObjectuivEXT": (None, [_u, _u, _p]),
            "glGetQueryObjectui64vEXT": (None, [_u, _u, _p]),
        }
        funcs: dict[str, Any] = {}
        for name, (res, args) in sigs.items():
            addr = self._egl.eglGetProcAddress(name.encode())
            if not addr:
                return None
            funcs[name[2:-3]] = C.CFUNCTYPE(res, *args)(addr)
        bits = C.c_int()
        funcs["GetQueryiv"](_TIME_ELAPSED_EXT, _QUERY_COUNTER_BITS_EXT, C.byref(bits))
        self.gl.GetError()
        return funcs if bits.value > 0 else None

    # -- timer queries (hosts/gl_timer.py) -------------------------------------------------------
    query_blocks = True  # glGetQueryObjectui64vEXT(QUERY_RESULT) waits for the result

    def begin_time_query(self) -> int:
        self._use()
        assert self._queries is not None
        ids = (C.c_uint * 1)()
        self._queries["GenQueries"](1, ids)
        self._queries["BeginQuery"](_TIME_ELAPSED_EXT, ids[0])
        return int(ids[0])

    def end_time_query(self) -> None:
        if self.lost is None:
            assert self._queries is not None
            self._queries["EndQuery"](_TIME_ELAPSED_EXT)

    def query_ready(self, query: int) -> bool:
        if self.lost is not None:
            return True
        assert self._queries is not None
        v = C.c_uint()
        self._queries["GetQueryObjectuiv"](query, _QUERY_RESULT_AVAILABLE_EXT, C.byref(v))
        return bool(v.value)

    def query_ns(self, query: int) -> int:
        assert self._queries is not None
        v = C.c_uint64()
        self._queries["GetQueryObjectui64v"](query, _QUERY_RESULT_EXT, C.byref(v))
        return int(v.value)

    def gpu_disjoint(self) -> bool:
        """Whether a disjoint operation voided the queries in flight (a lost context did)."""
        return self.lost is not None or bool(self._int(_GPU_DISJOINT_EXT))

    def delete_query(self, query: int) -> None:
        if self.lost is None:
            assert self._queries is not None
            self._queries["DeleteQueries"](1, (C.c_uint * 1)(query))

    # -- loss ------------------------------------------------------------------------------------
    def lose_context(self) -> bool:
        """Simulate a lost context (tests; native contexts are not lost): the EGL context is
        destroyed and every later call raises, naming the loss."""
        if self.lost is None:
            self._egl.eglMakeCurrent(self._dpy, None, None, None)
            self._egl.eglDestroyContext.argtypes = [C.c_void_p, C.c_void_p]
            self._egl.eglDestroyContext(self._dpy, self._ctx)
            self.lost = "lose_context()"
        return True

    def _use(self) -> None:
        """Make our context current again if something else took the thread's EGL binding
        (wgpu-py's adapter enumeration does: it probes a GL backend through EGL)."""
        if self.lost is not None:
            raise RuntimeError(
                f"webgl: the GL ES context was lost ({self.lost}); arrays on it are gone: "
                "webjax.clear_backends() makes a fresh context on next use"
            )
        egl = self._egl
        if egl.eglGetCurrentContext() != self._ctx.value and not egl.eglMakeCurrent(
            self._dpy, None, None, self._ctx
        ):
            raise RuntimeError("webgl: EGL could not make the GL ES context current again")

    def _int(self, pname: int) -> int:
        v = C.c_int()
        self.gl.GetIntegerv(pname, C.byref(v))
        return int(v.value)

    def _extensions(self) -> set[str]:
        n = self._int(_NUM_EXTENSIONS)
        return {(self.gl.GetStringi(_EXTENSIONS, i) or b"").decode() for i in range(n)}

    def _check(self, what: str) -> None:
        err = self.gl.GetError()
        if err:
            if err == 0x0505:
                raise MemoryError(f"webgl: out of memory ({what})")
            raise RuntimeError(f"webgl: GL error 0x{err:04x} in {what}")

    # -- textures ------------------------------------------------------------------------------
    def create_texture(self, width: int, height: int, rgba: bool = False, layers: int = 1) -> int:
        """An R32UI texture (RGBA32UI with `rgba`: the tiled matmul's scratch); with `layers`
        > 1 a texture array, which `draw` samples as such and draws as that many render
        targets."""
        self._use()
        gl = self.gl
        ids = (C.c_uint * 1)()
        gl.GenTextures(1, ids)
        tex = int(ids[0])
        target = _TEXTURE_2D_ARRAY if layers > 1 else _TEXTURE_2D
        fmt = _RGBA32UI if rgba else _R32UI
        gl.ActiveTexture(_TEXTURE0)
        gl.BindTexture(target, tex)
        gl.TexParameteri(target, _TEXTURE_MIN_FILTER, _NEAREST)
        gl.TexParameteri(target, _TEXTURE_MAG_FILTER, _NEAREST)
        if layers > 1:
            gl.TexStorage3D(target, 1, fmt, width, height, layers)
            self._layers[tex] = layers
        else:
            gl.TexStorage2D(target, 1, fmt, width, height)
        gl.BindTexture(target, 0)
        kind = f"{'RGBA32UI' if rgba else 'R32UI'}{f' x{layers} layers' if layers > 1 else ''}"
        self._check(f"a {width}x{height} {kind} texture")
        return tex

    def delete_texture(self, tex: int) -> None:
        if self.lost is not None:
            return  # the lost context took its textures with it
        self._use()
        if self._attached == tex:
            self._attach(0)
        self._layers.pop(tex, None)
        self.gl.DeleteTextures(1, (C.c_uint * 1)(tex))

    def write_texture(self, tex: int, width: int, rows: int, data: bytes | bytearray) -> None:
        """Rows 0..rows-1 of the texture from `data` (exactly rows * width * 4 bytes)."""
        self._use()
        gl = self.gl
        gl.ActiveTexture(_TEXTURE0)
        gl.BindTexture(_TEXTURE_2D, tex)
        buf = (C.c_char * len(data)).from_buffer_copy(data)
        gl.TexSubImage2D(_TEXTURE_2D, 0, 0, 0, width, rows, _RED_INTEGER, _UNSIGNED_INT, buf)
        self._check("texture upload")

    def _attach(self, tex: int) -> None:
        if self._attached != tex:
            self.gl.FramebufferTexture2D(_FRAMEBUFFER, _COLOR_ATTACHMENT0, _TEXTURE_2D, tex, 0)
            self._attached = tex

    def read_texture(self, tex: int, width: int, rows: int) -> bytes:
        """Rows 0..rows-1 (rows * width * 4 bytes); waits for the draws that write them. Read as
        RED_INTEGER where the context offers it for R32UI, else as RGBA_INTEGER (the format
        every ES 3 context reads), keeping the red words."""
        self._use()
        self._attach(tex)
        if self._red_reads is None:
            fmt = self._int(_IMPLEMENTATION_COLOR_READ_FORMAT)
            typ = self._int(_IMPLEMENTATION_COLOR_READ_TYPE)
            self._red_reads = fmt == _RED_INTEGER and typ == _UNSIGNED_INT
        n = rows * width
        if self._red_reads:
            out = C.create_string_buffer(4 * n)
            self.gl.ReadPixels(0, 0, width, rows, _RED_INTEGER, _UNSIGNED_INT, out)
            self._check("readPixels")
            return out.raw
        out = C.create_string_buffer(16 * n)
        self.gl.ReadPixels(0, 0, width, rows, _RGBA_INTEGER, _UNSIGNED_INT, out)
        self._check("readPixels")
        words = memoryview(out.raw).cast("I")[::4]
        return words.tobytes()

    # -- programs ------------------------------------------------------------------------------
    def _shader(self, kind: int, source: str) -> int:
        gl = self.gl
        sh = gl.CreateShader(kind)
        text = C.c_char_p(source.encode())
        gl.ShaderSource(sh, 1, C.byref(text), None)
        gl.CompileShader(sh)
        ok = C.c_int()
        gl.GetShaderiv(sh, _COMPILE_STATUS, C.byref(ok))
        if not ok.value:
            log = self._log(gl.GetShaderiv, gl.GetShaderInfoLog, sh)
            gl.DeleteShader(sh)
            raise RuntimeError(log or "shader compilation failed")
        return int(sh)

    def _log(self, getiv: Any, getlog: Any, obj: int) -> str:
        n = C.c_int()
        getiv(obj, _INFO_LOG_LENGTH, C.byref(n))
        buf = C.create_string_buffer(max(1, n.value))
        getlog(obj, len(buf), None, buf)
        return buf.value.decode(errors="replace").strip()

    def create_program(self, vertex: str, fragment: str) -> int:
        self._use()
        gl = self.gl
        vs = self._shader(_VERTEX_SHADER, vertex)
        try:
            fs = self._shader(_FRAGMENT_SHADER, fragment)
        except RuntimeError:
            gl.DeleteShader(vs)
            raise
        prog = gl.CreateProgram()
        gl.AttachShader(prog, vs)
        gl.AttachShader(prog, fs)
        gl.LinkProgram(prog)
        gl.DeleteShader(vs)
        gl.DeleteShader(fs)
        ok = C.c_int()
        gl.GetProgramiv(prog, _LINK_STATUS, C.byref(ok))
        if not ok.value:
            log = self._log(gl.GetProgramiv, gl.GetProgramInfoLog, prog)
            gl.DeleteProgram(prog)
            raise RuntimeError(log or "program link failed")
        return int(prog)

    def delete_program(self, prog: int) -> None:
        if self.lost is not None:
            return
        self._use()
        if self._program == prog:
            self._program = 0
        # GL reuses a deleted program's name (NVIDIA's driver at once): its cached uniform
        # locations would set the next program's uniforms wrongly (GL_INVALID_OPERATION, and
        # the uniform keeps its old value)
        self._locations.pop(prog, None)
        self.gl.DeleteProgram(prog)

    def _location(self, prog: int, name: str) -> int:
        known = self._locations.setdefault(prog, {})
        loc = known.get(name)
        if loc is None:
            loc = known[name] = int(self.gl.GetUniformLocation(prog, name.encode()))
        return loc

    def draw(
        self,
        prog: int,
        inputs: list[int],
        output: int,
        width: int,
        rows: int,
        uniforms: dict[str, int],
    ) -> None:
        """Run `prog` over rows 0..rows-1 of `output` (`width` texels wide), with input
        textures on units 0.. (sampler `in<k>` on unit k) and integer uniforms set by name.
        A texture array as the output is drawn as render targets 0.., a layer each (MRT)."""
        self._use()
        gl = self.gl
        if self._program != prog:
            gl.UseProgram(prog)
            self._program = prog
            for k in range(len(inputs)):
                loc = self._location(prog, f"in{k}")
                if loc >= 0:
                    gl.Uniform1i(loc, k)
        for name, value in uniforms.items():
            loc = self._location(prog, name)
            if loc >= 0:
                gl.Uniform1i(loc, value)
        kinds = [_TEXTURE_2D_ARRAY if tex in self._layers else _TEXTURE_2D for tex in inputs]
        for k, (tex, kind) in enumerate(zip(inputs, kinds, strict=True)):
            gl.ActiveTexture(_TEXTURE0 + k)
            gl.BindTexture(kind, tex)
        layers = self._layers.get(output, 1)
        if layers > 1:
            for j in range(layers):
                gl.FramebufferTextureLayer(_FRAMEBUFFER, _COLOR_ATTACHMENT0 + j, output, 0, j)
            bufs = range(_COLOR_ATTACHMENT0, _COLOR_ATTACHMENT0 + layers)
            gl.DrawBuffers(layers, (C.c_uint * layers)(*bufs))
        else:
            self._attach(output)
        gl.Viewport(0, 0, width, rows)
        gl.DrawArrays(_TRIANGLES, 0, 3)
        if layers > 1:  # back to one target, nothing attached
            for j in range(layers):
                gl.FramebufferTextureLayer(_FRAMEBUFFER, _COLOR_ATTACHMENT0 + j, 0, 0, 0)
            gl.DrawBuffers(1, (C.c_uint * 1)(_COLOR_ATTACHMENT0))
            self._attached = 0
        for k, kind in enumerate(kinds):  # unbind: an input may be the next draw's output
            gl.ActiveTexture(_TEXTURE0 + k)
            gl.BindTexture(kind, 0)

    def flush(self) -> None:
        self._use()
        self.gl.Flush()

    def finish(self) -> None:
        self._use()
        self.gl.Finish()


_HOST: NativeWebGL | None = None


def open_device() -> NativeWebGL:
    """The process's GL ES context (made once, and again after a loss; EGL contexts are per
    thread, and webjax runs its backends on the thread that first used them)."""
    global _HOST
    if _HOST is not None and _HOST._pid == os.getpid() and _HOST.lost is None:
        return _HOST
    if os.environ.get("WEBJAX_NO_NATIVE_WEBGL"):
        raise BackendUnavailable("disabled by WEBJAX_NO_NATIVE_WEBGL")
    _HOST = NativeWebGL()
    return _HOST
