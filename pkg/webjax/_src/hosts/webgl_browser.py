"""WebGL2 in the browser (Pyodide): a context on an OffscreenCanvas, driven through a JS helper.

OffscreenCanvas exists in pages and Web Workers alike, so the webgl device works in both. The
helper (JS source below, evaluated once) keeps each draw to one FFI crossing: it binds the
program, the input textures and the uniforms, attaches the output and draws. Reads are
synchronous (`readPixels` waits for the GPU), so no JSPI is needed; `read_texture_async`
copies into a pixel-pack buffer, waits on a fence without blocking the page, then reads it.
A lost context (`webglcontextlost`) makes every later call raise, naming the loss; each context
has a helper of its own, so after `webjax.clear_backends()` `open_device()` makes a fresh
context while the lost one's arrays keep raising. Kernel GPU times for the profiler come from
`EXT_disjoint_timer_query_webgl2` where the context has it (hosts/gl_timer.py).
"""

from __future__ import annotations

from typing import Any

from . import BackendUnavailable, js_runtime
from .gl_timer import KernelTimer

_HELPER_JS = r"""
() => {
  let gl = null, fbo = null, attached = null, current = null, lost = null, redReads = null;
  let timerExt = null;
  const locations = new Map();
  const layersOf = new WeakMap();  // texture arrays: their layers
  const rgbaTextures = new WeakSet();  // RGBA32UI ones (read as RGBA_INTEGER)
  function check(what) {
    if (lost) {
      throw new Error("webgl: the WebGL context was lost (" + lost + "); arrays on it are " +
                      "gone: webjax.clear_backends() makes a fresh context on next use");
    }
    const e = gl.getError();
    if (e === gl.OUT_OF_MEMORY) throw new Error("webgl: out of memory (" + what + ")");
    if (e) throw new Error("webgl: GL error 0x" + e.toString(16) + " in " + what);
  }
  function attach(tex) {
    if (attached !== tex) {
      gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, tex, 0);
      attached = tex;
    }
  }
  function loc(prog, name) {
    let m = locations.get(prog);
    if (!m) { m = new Map(); locations.set(prog, m); }
    let l = m.get(name);
    if (l === undefined) { l = gl.getUniformLocation(prog, name); m.set(name, l); }
    return l;
  }
  // A pause of about 1 ms between polls of a fence or query (whose status changes only between
  // tasks). setTimeout(0) chained from timer tasks is clamped to 4 ms after five levels, which
  // added ~2 ms to every wait (a 256^2 matmul is ~15 ms); a timer set from a message task is
  // not nested, so each pause is a message, then a 1 ms timer (no busy polling either). The
  // channel is made at the first pause: a listening port keeps Node.js and Deno from exiting.
  let wakeups = null;
  const sleepers = [];
  function pause() {
    if (wakeups === null) {
      wakeups = new MessageChannel();
      wakeups.port1.onmessage = () => { const r = sleepers.shift(); if (r) setTimeout(r, 1); };
      if (wakeups.port1.unref) wakeups.port1.unref();
    }
    return new Promise((r) => { sleepers.push(r); wakeups.port2.postMessage(null); });
  }
  // wait, without blocking the page, until the GPU has run every command issued so far
  async function fence() {
    const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
    gl.flush();
    for (;;) {
      const s = gl.clientWaitSync(sync, 0, 0);
      if (s === gl.ALREADY_SIGNALED || s === gl.CONDITION_SATISFIED) break;
      if (s === gl.WAIT_FAILED || lost) break;
      await pause();
    }
    gl.deleteSync(sync);
  }
  function shader(kind, source) {
    const s = gl.createShader(kind);
    gl.shaderSource(s, source);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) {
      const log = gl.getShaderInfoLog(s) || "shader compilation failed";
      gl.deleteShader(s);
      throw new Error(log);
    }
    return s;
  }
  return {
    init() {
      if (typeof OffscreenCanvas === "undefined") return "OffscreenCanvas is missing";
      const canvas = new OffscreenCanvas(1, 1);
      gl = canvas.getContext("webgl2", {antialias: false, depth: false, stencil: false,
                                        preserveDrawingBuffer: false,
                                        powerPreference: "high-performance"});
      if (!gl) return "this browser cannot make a WebGL2 context (disabled or blocklisted)";
      canvas.addEventListener("webglcontextlost", (e) => {
        lost = "webglcontextlost"; e.preventDefault();
      });
      gl.disable(gl.DITHER);
      gl.pixelStorei(gl.PACK_ALIGNMENT, 4);
      gl.pixelStorei(gl.UNPACK_ALIGNMENT, 4);
      fbo = gl.createFramebuffer();
      gl.bindFramebuffer(gl.FRAMEBUFFER, fbo);
      gl.bindVertexArray(gl.createVertexArray());
      timerExt = gl.getExtension("EXT_disjoint_timer_query_webgl2");
      const ext = timerExt;
      if (ext && !(gl.getQuery(ext.TIME_ELAPSED_EXT, ext.QUERY_COUNTER_BITS_EXT) > 0)) {
        timerExt = null;  // the extension without a TIME_ELAPSED counter
      }
      const dbg = gl.getExtension("WEBGL_debug_renderer_info");
      const renderer = String(dbg ? gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL)
                                  : gl.getParameter(gl.RENDERER));
      return {
        description: renderer + " (" + gl.getParameter(gl.VERSION) + ")",
        isCpu: /swiftshader|llvmpipe|softpipe/i.test(renderer),
        maxTextureSize: gl.getParameter(gl.MAX_TEXTURE_SIZE),
        maxTextureUnits: gl.getParameter(gl.MAX_TEXTURE_IMAGE_UNITS),
        maxDrawBuffers: gl.getParameter(gl.MAX_DRAW_BUFFERS),
        timerQueries: timerExt !== null,
      };
    },
    // TIME_ELAPSED queries (hosts/gl_timer.py); a lost context reads as disjoint
    beginQuery() {
      const q = gl.createQuery();
      gl.beginQuery(timerExt.TIME_ELAPSED_EXT, q);
      return q;
    },
    endQuery() { if (!lost) gl.endQuery(timerExt.TIME_ELAPSED_EXT); },
    queryReady(q) { return lost ? true : !!gl.getQueryParameter(q, gl.QUERY_RESULT_AVAILABLE); },
    queryNs(q) { return Number(gl.getQueryParameter(q, gl.QUERY_RESULT)); },
    disjoint() { return !!lost || !!gl.getParameter(timerExt.GPU_DISJOINT_EXT); },
    deleteQuery(q) { if (!lost) gl.deleteQuery(q); },
    // results show only after the event loop turns: wait turns (about 4 s at most) until q's
    // is there
    async waitQuery(q) {
      gl.flush();
      for (let k = 0; k < 4000 && !lost; k++) {
        if (gl.getQueryParameter(q, gl.QUERY_RESULT_AVAILABLE)) break;
        await pause();
      }
    },
    lost() { return lost || ""; },
    loseContext() {  // fault injection for tests (WEBGL_lose_context)
      const ext = gl.getExtension("WEBGL_lose_context");
      if (!ext) return false;
      ext.loseContext();
      if (!lost) lost = "WEBGL_lose_context";
      return true;
    },
    // an R32UI texture (RGBA32UI with rgba); with layers > 1 a texture array, which draw()
    // samples as such and draws as that many render targets
    createTexture(w, h, rgba, layers) {
      if (lost) check("createTexture");
      const t = gl.createTexture();
      const target = layers > 1 ? gl.TEXTURE_2D_ARRAY : gl.TEXTURE_2D;
      const fmt = rgba ? gl.RGBA32UI : gl.R32UI;
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(target, t);
      gl.texParameteri(target, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(target, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      if (rgba) rgbaTextures.add(t);
      if (layers > 1) {
        gl.texStorage3D(target, 1, fmt, w, h, layers);
        layersOf.set(t, layers);
      } else {
        gl.texStorage2D(target, 1, fmt, w, h);
      }
      gl.bindTexture(target, null);
      check("a " + w + "x" + h + (rgba ? " RGBA32UI" : " R32UI") +
            (layers > 1 ? " x" + layers + " layers" : "") + " texture");
      return t;
    },
    deleteTexture(t) {
      if (attached === t) attach(null);
      gl.deleteTexture(t);
    },
    write(t, w, rows, u8) {
      if (lost) check("texture upload");
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, t);
      const u32 = new Uint32Array(u8.buffer, u8.byteOffset, u8.byteLength >> 2);
      gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, w, rows, gl.RED_INTEGER, gl.UNSIGNED_INT, u32);
      gl.bindTexture(gl.TEXTURE_2D, null);
      check("texture upload");
    },
    // R32UI reads: RED_INTEGER where the context offers it (asked once), else RGBA_INTEGER
    // (what every context reads), keeping the red words
    readFormat() {
      if (redReads === null) {
        redReads = gl.getParameter(gl.IMPLEMENTATION_COLOR_READ_FORMAT) === gl.RED_INTEGER &&
                   gl.getParameter(gl.IMPLEMENTATION_COLOR_READ_TYPE) === gl.UNSIGNED_INT;
      }
      return redReads ? gl.RED_INTEGER : gl.RGBA_INTEGER;
    },
    red(out, n) {
      if (redReads) return new Uint8Array(out.buffer, 0, 4 * n);
      const words = new Uint32Array(n);
      for (let k = 0; k < n; k++) words[k] = out[4 * k];
      return new Uint8Array(words.buffer);
    },
    read(t, w, rows) {
      if (lost) check("readPixels");
      attach(t);
      const fmt = this.readFormat();
      const out = new Uint32Array(w * rows * (redReads ? 1 : 4));
      gl.readPixels(0, 0, w, rows, fmt, gl.UNSIGNED_INT, out);
      check("readPixels");
      return this.red(out, w * rows);
    },
    async readAsync(t, w, rows) {
      if (lost) check("readPixels (async)");
      attach(t);
      const fmt = this.readFormat();
      const n = w * rows * (redReads ? 4 : 16);
      const pbo = gl.createBuffer();
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, pbo);
      gl.bufferData(gl.PIXEL_PACK_BUFFER, n, gl.STREAM_READ);
      gl.readPixels(0, 0, w, rows, fmt, gl.UNSIGNED_INT, 0);
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, null);
      await fence();
      const out = new Uint32Array(n >> 2);
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, pbo);
      gl.getBufferSubData(gl.PIXEL_PACK_BUFFER, 0, out);
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, null);
      gl.deleteBuffer(pbo);
      check("readPixels (async)");
      return this.red(out, w * rows);
    },
    program(vs, fs) {
      if (lost) check("shader compilation");
      const v = shader(gl.VERTEX_SHADER, vs);
      let f;
      try { f = shader(gl.FRAGMENT_SHADER, fs); } catch (e) { gl.deleteShader(v); throw e; }
      const p = gl.createProgram();
      gl.attachShader(p, v);
      gl.attachShader(p, f);
      gl.linkProgram(p);
      gl.deleteShader(v);
      gl.deleteShader(f);
      if (!gl.getProgramParameter(p, gl.LINK_STATUS)) {
        const log = gl.getProgramInfoLog(p) || "program link failed";
        gl.deleteProgram(p);
        throw new Error(log);
      }
      return p;
    },
    deleteProgram(p) {
      if (current === p) current = null;
      locations.delete(p);
      gl.deleteProgram(p);
    },
    // names and values: alternating uniform names and ints, then the input textures
    draw(prog, out, w, rows, nuniforms, ...rest) {
      if (lost) check("draw");
      if (current !== prog) {
        gl.useProgram(prog);
        current = prog;
        for (let k = 0; k < rest.length - 2 * nuniforms; k++) {
          const l = loc(prog, "in" + k);
          if (l) gl.uniform1i(l, k);
        }
      }
      for (let j = 0; j < nuniforms; j++) {
        const l = loc(prog, rest[2 * j]);
        if (l) gl.uniform1i(l, rest[2 * j + 1]);
      }
      const ntex = rest.length - 2 * nuniforms;
      const kinds = [];
      for (let k = 0; k < ntex; k++) {
        const t = rest[2 * nuniforms + k];
        kinds.push(layersOf.has(t) ? gl.TEXTURE_2D_ARRAY : gl.TEXTURE_2D);
        gl.activeTexture(gl.TEXTURE0 + k);
        gl.bindTexture(kinds[k], t);
      }
      const layers = layersOf.get(out) || 1;  // a texture array: a render target per layer
      if (layers > 1) {
        for (let j = 0; j < layers; j++) {
          gl.framebufferTextureLayer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0 + j, out, 0, j);
        }
        const bufs = [];
        for (let j = 0; j < layers; j++) bufs.push(gl.COLOR_ATTACHMENT0 + j);
        gl.drawBuffers(bufs);
      } else {
        attach(out);
      }
      gl.viewport(0, 0, w, rows);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
      if (layers > 1) {  // back to one target, nothing attached
        for (let j = 0; j < layers; j++) {
          gl.framebufferTextureLayer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0 + j, null, 0, 0);
        }
        gl.drawBuffers([gl.COLOR_ATTACHMENT0]);
        attached = null;
      }
      for (let k = 0; k < ntex; k++) {
        gl.activeTexture(gl.TEXTURE0 + k);
        gl.bindTexture(kinds[k], null);
      }
    },
    flush() { gl.flush(); },
    // Chromium's gl.finish() does not wait: a one-texel read of the last texture drawn does
    // (GL runs commands in order, and readPixels returns the finished value)
    finish() {
      if (lost) check("finish");
      if (attached === null) return;
      const out = new Uint32Array(4);
      const fmt = rgbaTextures.has(attached) ? gl.RGBA_INTEGER : this.readFormat();
      gl.readPixels(0, 0, 1, 1, fmt, gl.UNSIGNED_INT, out);
      check("finish");
    },
    async idle() {
      if (lost) check("wait");
      await fence();
      check("wait");
    },
  };
}
"""

_HELPER: Any = None


def _new_helper() -> Any:
    """A helper of its own for a new context (the JS function that makes one is evaluated
    once)."""
    global _HELPER
    if _HELPER is None:
        from pyodide.code import run_js

        _HELPER = run_js(_HELPER_JS)
    return _HELPER()


def _error(e: Exception) -> Exception:
    """A JS exception from the helper as the Python error it stands for."""
    text = str(e)
    if "out of memory" in text:
        return MemoryError(text.split("Error: ", 1)[-1])
    return RuntimeError(text.split("Error: ", 1)[-1])


class BrowserWebGL:
    """The page's (or worker's) WebGL2 context behind the host API runtime/webgl.py uses."""

    query_blocks = False  # WebGL never waits for a query result

    def __init__(self, helper: Any, info: Any) -> None:
        self.h = helper
        self.description = str(info.description) or "WebGL2"
        self.is_cpu = bool(info.isCpu)
        self.max_texture_size = int(info.maxTextureSize)
        self.max_texture_units = int(info.maxTextureUnits)
        self.max_draw_buffers = int(info.maxDrawBuffers)
        self.timer = KernelTimer(self) if info.timerQueries else None

    @property
    def lost(self) -> str | None:
        """Why the context was lost, or None while it works."""
        return str(self.h.lost()) or None

    # -- timer queries (hosts/gl_timer.py) -------------------------------------------------------
    def begin_time_query(self) -> Any:
        return self.h.beginQuery()

    def end_time_query(self) -> None:
        self.h.endQuery()

    def query_ready(self, query: Any) -> bool:
        return bool(self.h.queryReady(query))

    def query_ns(self, query: Any) -> int:
        return int(self.h.queryNs(query))

    def gpu_disjoint(self) -> bool:
        return bool(self.h.disjoint())

    def delete_query(self, query: Any) -> None:
        self.h.deleteQuery(query)

    async def wait_query_async(self, query: Any) -> None:
        await self.h.waitQuery(query)

    def create_texture(self, width: int, height: int, rgba: bool = False, layers: int = 1) -> Any:
        """An R32UI texture (RGBA32UI with `rgba`: the tiled matmul's scratch); with `layers`
        > 1 a texture array, which `draw` samples as such and draws as that many render
        targets."""
        try:
            return self.h.createTexture(width, height, rgba, layers)
        except Exception as e:
            raise _error(e) from None

    def lose_context(self) -> bool:
        """Lose the context on purpose (WEBGL_lose_context), as a driver reset would: every
        later call raises, naming the loss. False where the extension is missing."""
        return bool(self.h.loseContext())

    def delete_texture(self, tex: Any) -> None:
        self.h.deleteTexture(tex)

    def write_texture(self, tex: Any, width: int, rows: int, data: bytes | bytearray) -> None:
        import js

        u8 = js.Uint8Array.new(len(data))
        u8.assign(data)  # one memcpy into JS memory
        try:
            self.h.write(tex, width, rows, u8)
        except Exception as e:
            raise _error(e) from None

    def read_texture(self, tex: Any, width: int, rows: int) -> bytes:
        try:
            return bytes(self.h.read(tex, width, rows).to_bytes())
        except Exception as e:
            raise _error(e) from None

    async def read_texture_async(self, tex: Any, width: int, rows: int) -> bytes:
        try:
            return bytes((await self.h.readAsync(tex, width, rows)).to_bytes())
        except Exception as e:
            raise _error(e) from None

    def create_program(self, vertex: str, fragment: str) -> Any:
        try:
            return self.h.program(vertex, fragment)
        except Exception as e:
            raise RuntimeError(str(e).split("Error: ", 1)[-1]) from None

    def delete_program(self, prog: Any) -> None:
        self.h.deleteProgram(prog)

    def draw(
        self,
        prog: Any,
        inputs: list[Any],
        output: Any,
        width: int,
        rows: int,
        uniforms: dict[str, int],
    ) -> None:
        """A texture array as the output is drawn as render targets 0.., a layer each (MRT)."""
        flat: list[Any] = []
        for name, value in uniforms.items():
            flat += [name, value]
        try:
            self.h.draw(prog, output, width, rows, len(uniforms), *flat, *inputs)
        except Exception as e:
            raise _error(e) from None

    def flush(self) -> None:
        self.h.flush()

    def finish(self) -> None:
        """Wait until every draw so far is done (a one-texel read: Chromium's finish() does
        not wait)."""
        try:
            self.h.finish()
        except Exception as e:
            raise _error(e) from None

    async def wait_idle_async(self) -> None:
        """Wait on a fence without blocking the page."""
        try:
            await self.h.idle()
        except Exception as e:
            raise _error(e) from None


_DEVICE: BrowserWebGL | None = None


def open_device() -> BrowserWebGL:
    """The context for the backend factory (a fresh one once the last was lost), or a clear
    error naming what is missing."""
    global _DEVICE
    if _DEVICE is not None and _DEVICE.lost is None:
        return _DEVICE
    helper = _new_helper()
    info = helper.init()
    if isinstance(info, str):
        runtime = js_runtime()  # Node.js has no OffscreenCanvas, Deno's makes no WebGL2 context
        if runtime is not None:
            what = "OffscreenCanvas" if "OffscreenCanvas" in info else "WebGL2 (OffscreenCanvas)"
            info = f"{runtime} has no {what}: the webgl device needs a browser (page or worker)"
        raise BackendUnavailable(info)
    _DEVICE = BrowserWebGL(helper, info)
    return _DEVICE
