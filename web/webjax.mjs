// webjax.mjs: load Pyodide and the webjax wheel from the site this module is served from.
//
//   import { loadWebjax } from "./webjax.mjs";
//   const pyodide = await loadWebjax();          // Pyodide with `import webjax` done
//   pyodide.runPythonAsync("import webjax.numpy as jnp; print(jnp.arange(3))");
//
// A page that has <script type="text/x-python"> blocks gets them run in order, after loading,
// through runPythonAsync (so synchronous reads of GPU arrays work). Each block gets
// data-webjax="done" or "error"; <html data-webjax> says "loading", "done" or "error"; errors go
// to the console and into a <pre class="webjax-error"> after the block; a "webjax:done" event
// fires on document. Set `globalThis.webjaxAutoRun = false` before this module runs to opt out.
// Settings for those blocks: `data-config='{"jax_enable_x64": true, "jax_platforms": "webgl"}'`
// (JSON of jax.config options) on any script tag, the x-python blocks' or this module's.
//
// The site layout comes from build.py: manifest.json names the wheel, pyodide/ holds the npm
// Pyodide package (plus micropip).

const siteURL = new URL("./", import.meta.url);

let manifestPromise = null;
let webjaxPromise = null;

const REBUILD = "build the site with `python build.py` and serve dist/site/ (`python build.py serve`)";

/** The build manifest (wheel file name and SHA-256, Pyodide version, extra packages). */
export function loadManifest() {
  const url = new URL("manifest.json", siteURL);
  manifestPromise ??= fetch(url).then((response) => {
    if (!response.ok) {
      throw new Error(`webjax: ${url} answered HTTP ${response.status}: ${REBUILD}, and load ` +
        "webjax.mjs from that site");
    }
    return response.json();
  });
  manifestPromise.catch(() => {
    manifestPromise = null;
  });
  return manifestPromise;
}

/** Why this JavaScript engine cannot run webjax, or null. */
function missingEngineFeature() {
  if (typeof WebAssembly !== "object" || typeof WebAssembly.instantiate !== "function") {
    return "webjax: this browser has no WebAssembly (it may be turned off: a policy, a " +
      "hardened or lockdown mode, or a JIT-less setting); Pyodide needs it: turn it on or use " +
      "another browser";
  }
  return null;
}

/** A fresh Pyodide instance (nothing installed), loaded from this site. */
export async function loadPyodideRuntime({ indexURL, ...options } = {}) {
  const missing = missingEngineFeature();
  if (missing) throw new Error(missing);
  if (indexURL === undefined) {
    const manifest = await loadManifest();
    indexURL = new URL(manifest.pyodide.indexURL, siteURL).href;
  }
  if (!indexURL.endsWith("/")) indexURL += "/";
  let loadPyodide;
  try {
    ({ loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href));
  } catch (error) {
    throw new Error(`webjax: Pyodide was not found at ${indexURL} (${error.message ?? error}): ` +
      "indexURL must be the folder holding pyodide.mjs (leave it out to use the site's own: " +
      `${REBUILD})`);
  }
  return loadPyodide({ indexURL, ...options });
}

async function sha256(bytes) {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The webjax wheel's bytes, fetched and checked: its SHA-256 must match the manifest's (a stale
 * or altered wheel is refused, never installed).
 */
export async function fetchWheel() {
  const manifest = await loadManifest();
  const url = new URL(manifest.wheel, siteURL);
  // the hash in the query names the content: the server may let the browser keep it for good
  url.searchParams.set("sha256", manifest.wheel_sha256);
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`webjax: the wheel ${url} answered HTTP ${response.status}: ${REBUILD}`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (globalThis.crypto && crypto.subtle) {
    const got = await sha256(bytes);
    if (got !== manifest.wheel_sha256) {
      throw new Error(`webjax: refusing ${url}: its SHA-256 is ${got}, the manifest says ` +
        `${manifest.wheel_sha256} (a stale or altered file): ${REBUILD}`);
    }
  } else {  // no Web Crypto outside secure contexts (http to a host other than localhost)
    console.warn("webjax: no crypto.subtle on this (insecure) page: the wheel's hash is not " +
      "checked; serve the site over https or from localhost");
  }
  return bytes;
}

/**
 * Install the webjax wheel into `pyodide` (loadPackage; no micropip needed). `wheel`: its
 * bytes from fetchWheel() (fetched here when left out).
 */
export async function installWebjax(pyodide, wheel) {
  const bytes = await (wheel ?? fetchWheel());
  // the bytes just checked (not a second fetch) into site-packages, with their .dist-info
  pyodide.unpackArchive(bytes.buffer, "wheel");
}

// --- the first result's phases and the memory snapshot ---------------------------------------
//
// loadWebjax marks each phase (performance.mark("webjax:NAME"), and loadTimings() gives their
// performance.now() times): manifest, cache (the snapshot's Cache API read), pyodide (Python running: downloaded, compiled and
// started, or restored from the snapshot), wheel (fetched and its hash checked, in parallel
// with Pyodide), unpack, import.
//
// The snapshot: on a page with the Cache API, once the first load is done and the page idle, a
// second Pyodide (started with `_makeSnapshot`) imports webjax and its memory (Python with
// webjax imported) is stored in the cache "webjax-snapshot" under a key naming the wheel's
// SHA-256 and Pyodide's version (snapshotStored() resolves then); later loads restore it
// instead of starting Python and importing webjax. Another wheel or
// Pyodide gives another key (older entries are deleted when a new one is stored); a snapshot
// Pyodide refuses is deleted and the load starts afresh. The wheel is still unpacked after a
// restore (the file system is not in the memory: modules imported later read their files).
// `loadWebjax({ snapshot: false })` or `globalThis.webjaxSnapshot = false` turns it off.

const SNAPSHOT_CACHE = "webjax-snapshot";
const timings = {};
let snapshotState = "off";

function mark(name) {
  timings[name] = performance.now();
  performance.mark?.(`webjax:${name}`);
}

/**
 * When each phase of loadWebjax ended (performance.now() milliseconds, from navigation start
 * in a page), and `snapshot`: "restored", "none stored yet", "storing" (in the background),
 * "stored", "off" or why not ("unavailable: ...").
 */
export function loadTimings() {
  return { ...timings, snapshot: snapshotState };
}

function snapshotKey(manifest) {
  const name = `${manifest.wheel_sha256}-pyodide-${manifest.pyodide.version}.bin`;
  return new URL(`webjax-snapshot/${name}`, siteURL).href;
}

async function readSnapshot(key) {
  const cache = await caches.open(SNAPSHOT_CACHE);
  const response = await cache.match(key);
  return response ? new Uint8Array(await response.arrayBuffer()) : null;
}

async function storeSnapshot(key, bytes) {
  const cache = await caches.open(SNAPSHOT_CACHE);
  for (const request of await cache.keys()) {
    if (request.url !== key) await cache.delete(request);
  }
  await cache.put(key, new Response(bytes, {
    headers: { "Content-Type": "application/octet-stream" },
  }));
}

/** Forget the stored snapshots (the next load starts Python afresh and stores a new one). */
export async function clearSnapshot() {
  if (globalThis.caches) await caches.delete(SNAPSHOT_CACHE);
}

// Pyodide sizes the restored memory from the module's own initial size; a snapshot taken after
// `import webjax` is larger, so the heap is grown (Emscripten's resize, which also renews
// the heap's views) before the snapshot's bytes are copied in.
async function growingModule(indexURL, size) {
  const create = (await import(new URL("pyodide.asm.mjs", indexURL).href)).default;
  return async (settings) => {
    const module = await create(settings);
    if (module.HEAP8.length < size && !module._emscripten_resize_heap(size)) {
      throw new Error(`webjax: could not grow Pyodide's memory to ${size} bytes for the snapshot`);
    }
    return module;
  };
}

async function bootPython({ indexURL, snapshot }) {
  const manifest = await loadManifest();
  indexURL ??= new URL(manifest.pyodide.indexURL, siteURL).href;
  if (!indexURL.endsWith("/")) indexURL += "/";
  const usable = snapshot && globalThis.webjaxSnapshot !== false && globalThis.caches;
  if (!usable) {
    snapshotState = snapshot ? "unavailable: no Cache API here" : "off";
    return { pyodide: await loadPyodideRuntime({ indexURL }), restored: false };
  }
  const key = snapshotKey(manifest);
  let bytes = null;
  try {
    bytes = await readSnapshot(key);
  } catch (error) {
    snapshotState = `unavailable: ${error.message ?? error}`;
  }
  mark("cache");
  if (bytes) {
    try {
      const createPyodideModule = await growingModule(indexURL, bytes.length);
      const pyodide = await loadPyodideRuntime({ indexURL, _loadSnapshot: bytes,
                                                 createPyodideModule });
      snapshotState = "restored";
      return { pyodide, restored: true };
    } catch (error) {
      console.warn("webjax: the stored snapshot was refused, starting afresh:", error);
      await caches.delete(SNAPSHOT_CACHE).catch(() => {});
    }
  }
  if (!bytes) snapshotState = "none stored yet";
  return { pyodide: await loadPyodideRuntime({ indexURL }), restored: false, key, indexURL };
}

// The snapshot is taken by a second, throwaway Pyodide once the page's own is ready: one
// started with `_makeSnapshot` wraps the JS globals (to record what Python holds of them),
// and a wrapped getter such as `navigator` then fails ("Illegal invocation"), so the page's
// instance must not be that one.
let snapshotPromise = Promise.resolve();

async function takeSnapshot(indexURL, key, wheel) {
  snapshotState = "storing";
  try {
    const maker = await loadPyodideRuntime({ indexURL, _makeSnapshot: true });
    maker.unpackArchive((await wheel).slice().buffer, "wheel");
    await maker.runPythonAsync("import webjax");
    await storeSnapshot(key, maker.makeMemorySnapshot());
    snapshotState = "stored";
  } catch (error) {
    snapshotState = `unavailable: ${error.message ?? error}`;
    console.warn("webjax: no memory snapshot stored:", error);
  }
}

/** Resolves when the snapshot the first load takes (in the background) is stored or given up. */
export function snapshotStored() {
  return snapshotPromise;
}

// Applies loadWebjax's `config` as `jax.config.update` calls (JAX's errors for unknown names and
// bad values), starts WebGPU when the settings ask for it (its start is asynchronous in a
// page), and picks the default device now, so an unknown or unavailable platform fails here.
const APPLY_CONFIG = `
import webjax
for name, value in dict(config).items():
    webjax.config.update(name, value)
if "webgpu" in f"{webjax.config.jax_platforms} {webjax.config.jax_default_device}":
    try:
        await webjax.init_webgpu_async()
    except Exception:
        pass  # webjax.devices() below raises JAX's error naming the platform
webjax.devices()
`;

/**
 * Pyodide with webjax installed and imported. Loads once per page: later calls return the same
 * instance (their options are ignored). `packages`: extra names or wheel URLs for loadPackage.
 * `installAsJax`: also make `import jax` give webjax. `config`: jax.config options set before
 * any user code runs, e.g. `{ jax_enable_x64: true, jax_platforms: "webgl" }` (the names and
 * values of `jax.config.update`; `JAX_*` environment variables natively). `snapshot`: restore
 * (or store) the memory snapshot of Python with webjax imported (see above; loadTimings()).
 */
export function loadWebjax({
  indexURL, packages = [], installAsJax = false, config = {}, snapshot = true,
} = {}) {
  webjaxPromise ??= (async () => {
    mark("start");
    await loadManifest();
    mark("manifest");
    const wheel = fetchWheel();  // in parallel with Pyodide's download and start
    wheel.then(() => mark("wheel"), () => {});
    const { pyodide, restored, key, indexURL: url } = await bootPython({ indexURL, snapshot });
    mark("pyodide");
    await installWebjax(pyodide, wheel);
    mark("unpack");
    if (!restored) await pyodide.runPythonAsync("import webjax");
    mark("import");
    if (key) {
      // after the page's first result, when the main thread is idle
      snapshotPromise = new Promise((resolve) => (globalThis.requestIdleCallback
        ? requestIdleCallback(resolve, { timeout: 5000 }) : setTimeout(resolve, 1000)))
        .then(() => takeSnapshot(url, key, wheel));
    }
    if (packages.length) await pyodide.loadPackage(packages);
    if (installAsJax) await pyodide.runPythonAsync("import webjax\nwebjax.install_as_jax()");
    if (Object.keys(config).length) {
      const globals = pyodide.toPy({ config });
      try {
        await pyodide.runPythonAsync(APPLY_CONFIG, { globals, filename: "<webjax config>" });
      } finally {
        globals.destroy();
      }
    }
    mark("ready");
    return pyodide;
  })();
  webjaxPromise.catch(() => {
    webjaxPromise = null; // let a later call retry
  });
  return webjaxPromise;
}

function dedent(text) {
  const lines = text.replace(/^\s*\n/, "").replace(/\s+$/, "").split("\n");
  const indents = lines.filter((l) => l.trim()).map((l) => l.match(/^[ \t]*/)[0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => l.slice(cut)).join("\n") + "\n";
}

// Pyodide's traceback starts in its own eval machinery; show the user's frames only.
function userTraceback(message, filename) {
  const at = message.indexOf(`  File "${filename}"`);
  if (!message.startsWith("Traceback") || at < 0) return message;
  return "Traceback (most recent call last):\n" + message.slice(at);
}

/**
 * Run `scripts` (default: every <script type="text/x-python"> in the document, in order) with
 * runPythonAsync in `pyodide`'s globals. `src=` blocks are fetched. Returns the errors.
 */
export async function runPythonScripts(pyodide, scripts) {
  scripts ??= document.querySelectorAll('script[type="text/x-python"]');
  const errors = [];
  for (const [i, script] of [...scripts].entries()) {
    const filename = script.src || script.id || `<script ${i}>`;
    try {
      const code = script.src
        ? await (await fetch(script.src)).text()
        : dedent(script.textContent);
      await pyodide.runPythonAsync(code, { filename });
      script.dataset.webjax = "done";
    } catch (error) {
      script.dataset.webjax = "error";
      errors.push(error);
      console.error(`webjax: error in ${filename}:`, error);
      const pre = document.createElement("pre");
      pre.className = "webjax-error";
      pre.textContent = userTraceback(String(error.message ?? error), filename);
      script.after(pre);
    }
  }
  return errors;
}

async function autoRun() {
  const root = document.documentElement;
  root.dataset.webjax = "loading";
  let errors;
  try {
    const installAsJax = document.querySelector(
      'script[type="text/x-python"][data-install-as-jax]',
    ) !== null;
    const config = {};
    for (const script of document.querySelectorAll("script[data-config]")) {
      try {
        Object.assign(config, JSON.parse(script.dataset.config));
      } catch (error) {
        throw new Error(`data-config is not a JSON object: ${error.message}`);
      }
    }
    errors = await runPythonScripts(await loadWebjax({ installAsJax, config }));
  } catch (error) {
    console.error("webjax: loading failed:", error);
    const pre = document.createElement("pre");
    pre.className = "webjax-error";
    pre.textContent = `webjax failed to load: ${error.message ?? error}`;
    document.body.prepend(pre);
    errors = [error];
  }
  if (!errors.length && typeof SharedArrayBuffer === "undefined") {
    // not an error: webjax runs, on one thread; say how to get the worker pool
    const note = document.createElement("p");
    note.className = "webjax-note";
    note.textContent = "webjax runs single-threaded here: this page is not cross-origin " +
      "isolated, so there is no SharedArrayBuffer for wasm threads. Serve it with the headers " +
      "Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp " +
      "(`python build.py serve` sends them).";
    document.body.prepend(note);
  }
  root.dataset.webjax = errors.length ? "error" : "done";
  document.dispatchEvent(new CustomEvent("webjax:done", { detail: { errors } }));
}

function maybeAutoRun() {
  if (globalThis.webjaxAutoRun !== false && document.querySelector('script[type="text/x-python"]')) {
    autoRun();
  }
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", maybeAutoRun);
  } else {
    maybeAutoRun();
  }
}
