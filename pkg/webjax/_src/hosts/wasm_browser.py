"""Browser WebAssembly host (Pyodide): generated modules run through the page's `WebAssembly`.

One `WebAssembly.Memory` shared by every kernel instance (imported as ("env", "memory")). Bytes
move with `JsBuffer.assign` / `to_bytes` on `Uint8Array` views (memcpy-speed, see DESIGN.md
section 2), never with `to_js` of large buffers. Growing an unshared memory detaches every view
of the old ArrayBuffer; a shared one keeps them at the old length. Either way the cached
whole-memory view is rebuilt after each grow.

Threads: where the page is cross-origin isolated (`crossOriginIsolated`, `SharedArrayBuffer`),
the memory is shared (maximum 4 GiB) and a pool of Web Workers (started from a Blob URL of the
JS below, so no file has to be served) instantiates the kernels that are worth splitting against
it. Under Node.js (>= 20.16, for `process.getBuiltinModule`) and Deno, which have no page to
isolate, the pool is `node:worker_threads` workers (the same JS, evaluated, behind a small
prelude that turns `parentPort` messages into `self.onmessage`), unref'd so they never keep the
process alive; an older Node runs single-threaded.
`run(kid, *args)` of the helper splits a call's output range [lo, hi) into the kernel's cut
points: it publishes the job in a control block (an Int32Array over its own SharedArrayBuffer),
wakes the workers (Atomics.notify on a futex word they Atomics.wait on, after a short spin), and
every thread, the calling one included, claims chunks with a compare-exchange until none is
left; the caller then spins (the main thread may not Atomics.wait) until the chunks that workers
claimed are done. So a dispatch returns with its work complete: results stay ordered, reads
never wait, and a worker that has not started yet (or is still compiling) only means the caller
runs more chunks itself. When two split calls of a kernel in a row took longer than the caller
alone would have taken (its time per chunk times the chunks), though every worker had started
and held the kernel (the OS gives the workers little CPU on a busy machine, or the kernel is too
short to share), that kernel's next BACKOFF calls run on the calling thread alone (twice as many
after each further such call, up to 64 x BACKOFF; a split call that pays resets it). Every
other page (and CPython, hosts/wasm_native.py) runs single-threaded on an unshared memory.

Chromium refuses synchronous `new WebAssembly.Module(bytes)` of large modules on the main
thread; then `instantiate` compiles asynchronously through JSPI (`run_sync`) when it can, and
`instantiate_async` is always available.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

PAGE = 65536
MAX_PAGES = 65536  # 4 GiB
MAX_THREADS = 8  # threads per pool, the calling one included
# A worker polls this long for the next job before it sleeps in Atomics.wait. Long enough to
# span the Python between back-to-back dispatches: waking a sleeping worker (Atomics.notify)
# on a 2-core machine let the woken worker preempt the caller, so one thread ran the whole
# split (matmul 256: 0.70 ms per call at 0.05 ms, 0.33 ms at 0.3 ms; single thread 0.61 ms).
SPIN_MS = 0.3
MAX_ARGS = 512  # i32 arguments of one kernel call (1 + 2 * inputs + 3)
# A kernel's calls run on the calling thread alone after its split calls did not pay. Short: on a
# quiet machine a worker the OS preempted once fires it too, and each call of the back-off runs
# at half speed (16 cost a 2^20 fused chain ~13% of its mean time at one back-off per 100 calls).
BACKOFF = 4
# A split kernel's first calls run on the calling thread alone until their time settles: while
# V8 compiles a new module's optimized code on a background thread, two busy threads on two
# cores made those calls slower than one (matmul 512: 5-16 ms per call, 4.5 ms on one thread).
WARM_CALLS = 3
# A split call whose workers have not finished their chunks this long after the calling thread
# finished its own has lost a worker (terminated, crashed): it raises, and the pool runs every
# later call on the calling thread (webjax.clear_backends() starts a fresh pool).
STALL_MS = 5000

# Control block (i32 words). SEQ: job number, the futex word workers wait on. CLAIM: the job's
# number << 8 | chunks left (workers and caller take chunk `left - 1` by compare-exchange).
# DONE: chunks finished. POSTED: messages posted to every worker (modules); a worker that has
# received fewer goes back to its event loop for them. READY: workers started. WORKED: chunks
# run by workers (introspection). ERROR: a worker's kernel threw. SLEEPING: workers in (or
# about to enter) Atomics.wait; the caller skips Atomics.notify when there are none (checked
# after SEQ is stored, while a worker counts itself before waiting: seq-cst, so no lost wake).
# FAULT: fault injection for tests (the next worker to claim a chunk stops there, as a worker
# the browser killed would). RECEIVED + w: messages worker w has handled (a call made before
# every worker has its module says nothing about their CPU time). ARGS: the call's arguments.
_LAYOUT = {
    "SEQ": 0, "CLAIM": 1, "DONE": 2, "POSTED": 3, "READY": 4, "WORKED": 5, "ERROR": 6,
    "SLEEPING": 7, "KID": 8, "NARGS": 9, "FAULT": 10, "RECEIVED": 16, "ARGS": 16 + MAX_THREADS,
}  # fmt: skip

_WORKER_JS = r"""
let ctl = null, imports = null, spinMs = 0, received = 0, seen = 0, index = 0;
const plans = new Map();  // kid -> [fn, cuts, lo, stride]

function take(s) {
  const plan = plans.get(Atomics.load(ctl, KID));
  if (plan === undefined) return;
  const [fn, cuts, lo, stride] = plan;
  let args = null, base = 0;
  for (;;) {
    const c = Atomics.load(ctl, CLAIM);
    if ((c >>> 8) !== s || (c & 255) === 0) return;
    if (Atomics.compareExchange(ctl, CLAIM, c, c - 1) !== c) continue;
    // job s holds until this chunk is done: its fields (and KID read above) are current
    const j = (c & 255) - 1;
    if (Atomics.exchange(ctl, FAULT, 0) === 1) {  // fault injection: die holding chunk j
      self.close();
      throw new Error("webjax wasm worker: stopped by fault injection");
    }
    if (args === null) {
      const n = Atomics.load(ctl, NARGS);
      args = new Array(n);
      for (let i = 0; i < n; i++) args[i] = Atomics.load(ctl, ARGS + i);
      if (stride) base = args[lo + 2];
    }
    args[lo] = cuts[j];
    args[lo + 1] = cuts[j + 1];
    if (stride) args[lo + 2] = base + j * stride;
    try {
      fn(...args);
    } catch (e) {
      Atomics.store(ctl, ERROR, 1);
      console.error("webjax wasm worker:", e);
    }
    Atomics.add(ctl, WORKED, 1);
    Atomics.add(ctl, DONE, 1);
  }
}

function loop() {
  for (;;) {
    if (received < Atomics.load(ctl, POSTED)) return;  // messages first (onmessage resumes)
    let s = Atomics.load(ctl, SEQ);
    if (s === seen && spinMs > 0) {
      const t0 = performance.now();
      while (s === seen && performance.now() - t0 < spinMs) s = Atomics.load(ctl, SEQ);
    }
    if (s === seen) {
      Atomics.add(ctl, SLEEPING, 1);
      Atomics.wait(ctl, SEQ, seen);
      Atomics.sub(ctl, SLEEPING, 1);
      continue;
    }
    seen = s;
    take(s);
  }
}

self.onmessage = (e) => {
  const m = e.data;
  received++;
  if (m.ctl !== undefined) {
    ctl = new Int32Array(m.ctl);
    imports = {env: {memory: m.memory}};
    spinMs = m.spinMs;
    index = m.index;
    Atomics.add(ctl, READY, 1);
  } else {
    const [kid, module, cuts, lo, stride] = m.kernel;
    const instance = new WebAssembly.Instance(module, imports);
    plans.set(kid, [instance.exports.kernel, cuts, lo, stride]);
  }
  Atomics.store(ctl, RECEIVED + index, received);
  if (received >= Atomics.load(ctl, POSTED)) loop();
};
"""

_HELPER_JS = r"""
((workerSource, layout, BACKOFF, WARM_CALLS, STALL_MS) => {
  const {SEQ, CLAIM, DONE, POSTED, WORKED, ERROR, SLEEPING, KID, NARGS, RECEIVED, ARGS} = layout;
  const {READY, FAULT} = layout;
  const header = '"use strict";\n'
    + Object.entries(layout).map(([k, v]) => `const ${k} = ${v};\n`).join("");
  let url = null;
  // Node.js and Deno (no page, so no cross-origin isolation to ask for): node:worker_threads,
  // whose workers can be unref'd so that they never keep the process alive
  const nodeThreads = (() => {
    const proc = globalThis.process;
    if (!proc || !proc.versions || !proc.versions.node) return null;
    if (typeof proc.getBuiltinModule !== "function") return null;  // Node < 20.16
    try { return proc.getBuiltinModule("node:worker_threads"); } catch (e) { return null; }
  })();
  const nodePrelude = 'const {parentPort} = require("node:worker_threads");\n'
    + "globalThis.self = globalThis;\n"
    + 'parentPort.on("message", (data) => self.onmessage({data}));\n';
  return {
    threadsAvailable() {
      if (typeof SharedArrayBuffer !== "function" || typeof Atomics !== "object") return false;
      if (nodeThreads) return true;
      return Boolean(globalThis.crossOriginIsolated && typeof Worker === "function");
    },
    hardwareConcurrency() {
      const n = globalThis.navigator && navigator.hardwareConcurrency;
      if (n) return n;
      // Node.js 20 has no navigator
      return nodeThreads ? process.getBuiltinModule("node:os").availableParallelism() : 1;
    },
    sharedMemory(initial, maximum) {
      return new WebAssembly.Memory({initial, maximum, shared: true});
    },
    pool(memory, workers, spinMs, maxArgs) {
      const ctl = new Int32Array(new SharedArrayBuffer(4 * (ARGS + maxArgs)));
      if (url === null && !nodeThreads) {
        url = URL.createObjectURL(new Blob([header + workerSource], {type: "text/javascript"}));
      }
      const ws = [];
      for (let i = 0; i < workers; i++) {
        const name = `webjax-wasm-${i + 1}`;
        const fail = (e) => console.error("webjax wasm worker failed:", e.message || e);
        let w;
        if (nodeThreads) {
          w = new nodeThreads.Worker(header + nodePrelude + workerSource, {eval: true, name});
          w.on("error", fail);
          w.unref();  // an idle pool must not keep Node/Deno running after the script ends
        } else {
          w = new Worker(url, {name});
          w.onerror = fail;
        }
        ws.push(w);
      }
      function broadcast(message) {
        Atomics.add(ctl, POSTED, 1);
        ws.forEach((w, index) => w.postMessage(message.ctl ? {...message, index} : message));
        Atomics.notify(ctl, SEQ);  // sleeping workers wake, see POSTED and go read it
      }
      function allCurrent() {  // every worker started and holds every module posted
        const posted = Atomics.load(ctl, POSTED);
        for (let w = 0; w < workers; w++) {
          if (Atomics.load(ctl, RECEIVED + w) < posted) return false;
        }
        return true;
      }
      broadcast({ctl: ctl.buffer, memory, spinMs});
      const plans = new Map();
      let seq = 0, backoffs = 0, lost = "";
      return {
        threads: workers + 1,
        ready() { return Atomics.load(ctl, READY); },
        worked() { return Atomics.load(ctl, WORKED); },
        backoffs() { return backoffs; },
        lost() { return lost; },  // why the pool stopped splitting calls ("" while it works)
        failNextChunk() { Atomics.store(ctl, FAULT, 1); },
        add(kid, module, fn, cuts, lo, stride) {
          const c = Int32Array.from(cuts);
          plans.set(kid, [fn, c, lo, stride,
            {calls: 0, last: 0, single: 0, warm: true, backoff: 0, streak: 0, strikes: 0}]);
          broadcast({kernel: [kid, module, c, lo, stride]});
        },
        run(kid, ...args) {
          const [fn, cuts, lo, stride, state] = plans.get(kid);
          const n = cuts.length - 1;
          if (state.warm) {
            // A new kernel runs here alone until its time per call settles (at least
            // WARM_CALLS calls, at most 8 x WARM_CALLS): V8 compiles its optimized code on a
            // background thread meanwhile, and that thread needs the other core.
            args[lo] = cuts[0];
            args[lo + 1] = cuts[n];
            const t = performance.now();
            fn(...args);
            const dt = performance.now() - t;
            state.calls++;
            const settled = state.calls >= WARM_CALLS && Math.abs(dt - state.last) <= 0.1 * dt;
            if (settled || state.calls >= 8 * WARM_CALLS) state.warm = false;
            state.last = state.single = dt;
            return;
          }
          if (state.backoff > 0 || lost) {  // its split calls did not pay lately, or a
            // worker was lost: the whole range on this thread
            if (state.backoff > 0) state.backoff--;
            args[lo] = cuts[0];
            args[lo + 1] = cuts[n];
            const t = performance.now();
            fn(...args);
            state.single = performance.now() - t;  // what a split call has to beat now
            return;
          }
          // (from here: waking a sleeping worker may hand this thread's core to it)
          const t0 = performance.now();
          const current = allCurrent();
          seq = seq >= 0x7fffff ? 1 : seq + 1;
          const tag = seq << 8;
          Atomics.store(ctl, CLAIM, tag);  // closed: stragglers of the last job claim nothing
          Atomics.store(ctl, KID, kid);
          Atomics.store(ctl, NARGS, args.length);
          for (let i = 0; i < args.length; i++) Atomics.store(ctl, ARGS + i, args[i]);
          Atomics.store(ctl, DONE, 0);
          Atomics.store(ctl, CLAIM, tag | n);
          Atomics.store(ctl, SEQ, seq);
          if (Atomics.load(ctl, SLEEPING) > 0) Atomics.notify(ctl, SEQ, n - 1);
          const base = stride ? args[lo + 2] : 0;
          let error = null, mine = 0;
          const tc = performance.now();
          for (;;) {
            const c = Atomics.load(ctl, CLAIM);
            if ((c & 255) === 0) break;
            if (Atomics.compareExchange(ctl, CLAIM, c, c - 1) !== c) continue;
            const j = (c & 255) - 1;
            args[lo] = cuts[j];
            args[lo + 1] = cuts[j + 1];
            if (stride) args[lo + 2] = base + j * stride;
            try {
              fn(...args);
            } catch (e) {
              if (error === null) error = e;
            }
            Atomics.add(ctl, DONE, 1);
            mine++;
          }
          const t1 = performance.now();
          for (let spins = 1; Atomics.load(ctl, DONE) < n; spins++) {  // chunks workers took
            if ((spins & 4095) === 0 && performance.now() - t1 > STALL_MS) {
              const left = n - Atomics.load(ctl, DONE);
              lost = `${left} of ${n} chunks of a kernel call were never finished by the ` +
                `worker threads that took them (a worker was terminated or crashed)`;
              throw new Error(`webjax: wasm: ${lost}; this call's output is lost, and later ` +
                "calls run on one thread (webjax.clear_backends() starts a fresh pool)");
            }
          }
          // The split should beat this thread alone: its last measured time for the kernel
          // (warm-up and back-off calls measure it; else this call's time per chunk times the
          // chunks, which overestimates it when the threads share memory bandwidth). When two
          // calls in a row were slower though every worker was ready for them (the OS gives
          // the workers little CPU: a busy machine), run the next BACKOFF split calls here
          // alone. (One slow call also fired on a quiet machine when a worker woke late
          // once.) Failing again doubles the backoff (up to 64 x BACKOFF); a success resets it.
          // Each kernel keeps its own count: one that does not pay (a short memory-bound pass
          // whose threads share the bandwidth) no longer sends the products that do pay to one
          // thread (with one count, 25 back-offs in 20 calls of an encoder layer ran every
          // call at one thread's speed, 62 ms against 34 ms).
          const t2 = performance.now(), took = t2 - t0;
          const alone = state.single > 0 ? state.single : mine > 0 ? (t1 - tc) / mine * n : took;
          // (not 10% faster than alone: not worth a second core; a caller that ran no chunk
          // was itself preempted, which only a measured time can judge)
          const slow = took > 0.1 && took > 0.9 * alone;
          if (slow && current && ++state.strikes >= 2) {
            state.backoff = BACKOFF << state.streak;
            state.streak = Math.min(state.streak + 1, 6);
            state.strikes = 0;
            backoffs++;
          } else if (!slow) {
            state.streak = 0;
            state.strikes = 0;
          }
          const workerFailed = Atomics.exchange(ctl, ERROR, 0);
          if (error !== null) throw error;
          if (workerFailed) {
            throw new Error("webjax: a wasm kernel failed in a worker thread (see the console)");
          }
        },
      };
    },
  };
})
"""

_HELPER: Any = None


def _helper() -> Any:
    global _HELPER
    if _HELPER is None:
        from pyodide.code import run_js

        _HELPER = run_js(_HELPER_JS)(_WORKER_JS, _obj(**_LAYOUT), BACKOFF, WARM_CALLS, STALL_MS)
    return _HELPER


def _obj(**items: Any) -> Any:
    import js
    from pyodide.ffi import to_js

    return js.Object.fromEntries(to_js(list(items.items())))


class BrowserWasmHost:
    """`threads`: the pool's size (the calling thread included); None picks
    min(navigator.hardwareConcurrency, MAX_THREADS) where the page allows threads, 1 elsewhere."""

    name = "browser"

    def __init__(self, threads: int | None = None) -> None:
        import js

        self._js = js
        helper = _helper()
        n = 1
        if bool(helper.threadsAvailable()):
            n = int(helper.hardwareConcurrency()) if threads is None else threads
            n = max(1, min(n, MAX_THREADS))
        self.memory: Any = None
        self.max_pages = MAX_PAGES
        if n > 1:
            # a shared memory reserves its maximum up front: ask for less where 4 GiB is refused
            for pages in (MAX_PAGES, MAX_PAGES // 4, MAX_PAGES // 16):
                try:
                    self.memory = helper.sharedMemory(1, pages)
                    self.max_pages = pages
                    break
                except Exception:
                    continue
        self.shared = self.memory is not None
        if self.memory is None:
            n = 1
            self.memory = js.WebAssembly.Memory.new(_obj(initial=1, maximum=MAX_PAGES))
        self._imports = _obj(env=_obj(memory=self.memory))
        self._pool = helper.pool(self.memory, n - 1, SPIN_MS, MAX_ARGS) if n > 1 else None
        self.threads = n
        self._refresh()

    def _refresh(self) -> None:
        self._u8 = self._js.Uint8Array.new(self.memory.buffer)
        self.nbytes = int(self._u8.length)

    # -- memory -----------------------------------------------------------------------------
    def grow_to(self, nbytes: int) -> None:
        if nbytes <= self.nbytes:
            return
        pages = -(-nbytes // PAGE)
        if pages > self.max_pages:
            raise MemoryError(
                f"wasm memory limit ({self.max_pages * PAGE} bytes) exceeded: "
                f"{nbytes} bytes requested"
            )
        try:
            self.memory.grow(pages - self.nbytes // PAGE)
        except Exception as e:  # a RangeError when the browser refuses the allocation
            raise MemoryError(
                f"the browser refused to grow wasm memory to {nbytes} bytes: {e}"
            ) from None
        self._refresh()

    def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        mv = memoryview(data)
        if mv.nbytes == 0:
            return
        if not mv.c_contiguous or mv.format not in ("B", "b", "c"):
            mv = memoryview(mv.tobytes())
        self._u8.subarray(offset, offset + mv.nbytes).assign(mv)

    def read(self, offset: int, n: int) -> bytes:
        if n == 0:
            return b""
        out: bytes = self._u8.subarray(offset, offset + n).to_bytes()
        return out

    def fill(self, offset: int, byte: int, n: int) -> None:
        if n:
            self._u8.fill(byte, offset, offset + n)

    # -- threads ------------------------------------------------------------------------------
    def workers_ready(self) -> int:
        """How many of the pool's workers have started (they join jobs from then on)."""
        return 0 if self._pool is None else int(self._pool.ready())

    def worker_chunks(self) -> int:
        """Chunks of kernel calls that workers have run so far."""
        return 0 if self._pool is None else int(self._pool.worked())

    def lost_worker(self) -> str | None:
        """Why the pool stopped splitting calls (a worker never finished its chunk), or None."""
        return None if self._pool is None else (str(self._pool.lost()) or None)

    def fail_next_chunk(self) -> None:
        """Fault injection for tests: the next worker to claim a chunk dies holding it."""
        if self._pool is None:
            raise RuntimeError("this wasm host has no worker pool (threads == 1)")
        self._pool.failNextChunk()

    def backoffs(self) -> int:
        """How often a kernel's split calls were no faster than the calling thread alone (its
        next BACKOFF calls, or more, then ran on the calling thread alone)."""
        return 0 if self._pool is None else int(self._pool.backoffs())

    async def wait_ready(self, timeout_s: float = 30.0) -> bool:
        """Wait (yielding to the event loop) until every worker has started."""
        import asyncio
        import time

        deadline = time.monotonic() + timeout_s
        while self.workers_ready() < self.threads - 1:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    # -- code ---------------------------------------------------------------------------------
    def _bytes(self, wasm: bytes) -> Any:
        u8 = self._js.Uint8Array.new(len(wasm))
        u8.assign(wasm)
        return u8

    def _export(self, module: Any, export: str) -> Callable[..., Any]:
        instance = self._js.WebAssembly.Instance.new(module, self._imports)
        fn: Callable[..., Any] = getattr(instance.exports, export)
        return fn

    def validate(self, wasm: bytes) -> bool:
        """Whether this engine accepts `wasm` (feature probes: relaxed SIMD)."""
        try:
            return bool(self._js.WebAssembly.validate(self._bytes(wasm)))
        except Exception:
            return False

    def _compile(self, wasm: bytes) -> Any:
        WebAssembly = self._js.WebAssembly
        data = self._bytes(wasm)
        try:
            return WebAssembly.Module.new(data)
        except Exception as e:
            if "RangeError" not in str(type(e)) + str(e):
                raise
            # too large for a synchronous compile on the main thread: compile asynchronously
            from pyodide.ffi import run_sync

            return run_sync(WebAssembly.compile(data))

    def instantiate(self, wasm: bytes, export: str) -> Callable[..., Any]:
        return self._export(self._compile(wasm), export)

    async def instantiate_async(self, wasm: bytes, export: str) -> Callable[..., Any]:
        module = await self._js.WebAssembly.compile(self._bytes(wasm))
        return self._export(module, export)

    def _share(
        self, module: Any, export: str, kid: int, cuts: Sequence[int], lo: int, stride: int
    ) -> tuple[Callable[..., Any], Callable[..., Any]]:
        if self._pool is None:
            raise RuntimeError("this wasm host has no worker pool (threads == 1)")
        if not 2 <= len(cuts) <= 256:  # chunks left live in the low byte of the claim word
            raise ValueError(f"a split call takes 1 to 255 chunks, got {len(cuts) - 1}")
        from pyodide.ffi import to_js

        fn = self._export(module, export)
        pool = self._pool
        pool.add(kid, module, fn, to_js(list(cuts)), lo, stride)

        def run(*args: Any) -> None:
            try:
                pool.run(kid, *args)
            except Exception as e:  # a JS Error: a trapping chunk, or a lost worker
                message = str(getattr(e, "message", e))
                raise RuntimeError(message if "wasm" in message else f"wasm: {message}") from None

        return fn, run

    def instantiate_parallel(
        self, wasm: bytes, export: str, kid: int, cuts: Sequence[int], lo: int, stride: int
    ) -> tuple[Callable[..., Any], Callable[..., Any]]:
        """(fn, run): `fn` calls the kernel on this thread; `run(*args)` (the same arguments)
        splits the call's range at `cuts` over the pool. `lo`: the index of the `lo` argument
        (`hi` follows it, then the scratch offset when `stride` > 0: chunk j gets
        scratch + j * stride). `kid` names the kernel in the pool (unique per host)."""
        return self._share(self._compile(wasm), export, kid, cuts, lo, stride)

    async def instantiate_parallel_async(
        self, wasm: bytes, export: str, kid: int, cuts: Sequence[int], lo: int, stride: int
    ) -> tuple[Callable[..., Any], Callable[..., Any]]:
        module = await self._js.WebAssembly.compile(self._bytes(wasm))
        return self._share(module, export, kid, cuts, lo, stride)


def available() -> str | None:
    try:
        import js
    except ImportError:
        return "not running in a browser (no `js` module)"
    if not hasattr(js, "WebAssembly"):
        return "this JavaScript engine has no WebAssembly"
    return None
