// The REPL's Web Worker: Pyodide and webjax run here, so a long computation never freezes the
// page. Messages from the page:
//   {type: "start", interruptBuffer, devicePixelRatio}   load everything, then post "ready"
//   {type: "run", code, device, profile}                 run code (traced, its kernels drawn
//                                                        on a timeline, with profile), "done"
// Messages to the page:
//   {type: "phase", name, step, steps}   loading progress (the phase's name, for the bar)
//   {type: "ready", devices: {choices, missing, isolated, threads}, interruptible}
//   {type: "stdout" | "stderr", text}    streamed as printed, a line at a time
//   {type: "html", html, text}           a final expression's HTML repr (webjax arrays)
//   {type: "webjax-display", ...}        a picture or table from webjax.display (see
//                                        hosts/display_browser.py); the page draws it
//   {type: "done", ok} / {type: "failed", message}
// Stop: the page writes 2 (SIGINT) into the shared interrupt buffer; Pyodide raises
// KeyboardInterrupt in the running code at its next check.
import { installWebjax, loadManifest, loadPyodideRuntime } from "./webjax.mjs";

const STEPS = 5;
let pyodide = null;
let interruptBuffer = null;
let queue = Promise.resolve();
globalThis.webjaxDisplay = "postMessage"; // webjax.display posts its pictures to the page

function phase(name, step) {
  postMessage({ type: "phase", name, step, steps: STEPS });
}

async function start({ interruptBuffer: buffer, devicePixelRatio }) {
  globalThis.devicePixelRatio ??= devicePixelRatio ?? 1; // workers have none; canvases use it
  phase("downloading Pyodide", 0);
  const manifest = await loadManifest();
  const indexURL = new URL(manifest.pyodide.indexURL, new URL("./", import.meta.url)).href;
  await import(new URL("pyodide.mjs", indexURL).href);
  phase("starting Python", 1);
  pyodide = await loadPyodideRuntime({ indexURL });
  if (buffer) {
    interruptBuffer = new Int32Array(buffer);
    pyodide.setInterruptBuffer(interruptBuffer);
  }
  // repl.py's SIGINT handler defers a Stop that lands in asyncio's or Pyodide's own code.
  globalThis.webjaxRearmInterrupt = () => {
    if (interruptBuffer) Atomics.store(interruptBuffer, 0, 2);
  };
  phase("installing webjax", 2);
  await installWebjax(pyodide);
  phase("importing webjax", 3);
  const source = await (await fetch(new URL("repl.py", import.meta.url))).text();
  pyodide.FS.mkdirTree("/home/pyodide/.webjax");
  pyodide.FS.writeFile("/home/pyodide/.webjax/webjax_repl.py", source);
  await pyodide.runPythonAsync(
    "import sys\nsys.path.insert(0, '/home/pyodide/.webjax')\nimport webjax, webjax_repl",
  );
  // From here on Python's output goes to the page (loadPackage's "Loading webjax" did not).
  pyodide.setStdout({ batched: (text) => postMessage({ type: "stdout", text }) });
  pyodide.setStderr({ batched: (text) => postMessage({ type: "stderr", text }) });
  phase("finding devices", 4);
  const devices = await pyodide.runPythonAsync("await webjax_repl.device_choices()");
  postMessage({
    type: "ready",
    devices: devices.toJs({ dict_converter: Object.fromEntries }),
    interruptible: interruptBuffer !== null,
  });
  devices.destroy();
}

async function runCode({ code, device, profile }) {
  if (interruptBuffer) interruptBuffer[0] = 0; // a Stop pressed between runs is forgotten
  const globals = pyodide.toPy({ source: code, choice: device, profile: Boolean(profile) });
  try {
    const ok = await pyodide.runPythonAsync(
      "import webjax_repl\nawait webjax_repl.run(source, choice, profile)",
      { globals },
    );
    postMessage({ type: "done", ok });
  } finally {
    globals.destroy();
  }
}

onmessage = (event) => {
  const message = event.data;
  const task = message.type === "start" ? start : message.type === "run" ? runCode : null;
  if (task === null) return;
  queue = queue.then(() => task(message)).catch((error) => {
    postMessage({ type: "failed", message: String(error?.message ?? error) });
  });
};
