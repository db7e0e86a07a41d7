// demo.mjs: the demo pages' loader. A page calls `runDemo("digits")`: it reads ?device= (and
// the demo's own parameters) from the URL, loads Pyodide and webjax through ../webjax.mjs,
// puts demo_page.py and <name>.py into Python's path and runs `<name>.main(page)` on that
// device (demo_page.run). `runDemo(name, ["digits.py"])` also puts those demos' modules there
// (the ONNX demo imports digits.py's data parsing). <html data-demo> says "loading", "running", "done" or "error";
// window.demoResult holds the demo's numbers as JSON, window.demoError the error's text.
import { loadWebjax } from "../webjax.mjs";

const DIR = "/webjax_demos";

function showError(text) {
  const pre = document.createElement("pre");
  pre.className = "webjax-error";
  pre.textContent = text;
  document.querySelector("main")?.prepend(pre) ?? document.body.prepend(pre);
}

/** Keep `name`'s <select> in the URL: picking a value reloads the page with it. */
export function bindParam(name, fallback) {
  const params = new URLSearchParams(location.search);
  const select = document.getElementById(name);
  const value = params.get(name) ?? fallback;
  if (select) {
    select.value = value;
    select.addEventListener("change", () => {
      params.set(name, select.value);
      location.search = params.toString();
    });
  }
  return value;
}

export async function runDemo(name, modules = []) {
  const root = document.documentElement;
  const status = document.getElementById("status");
  root.dataset.demo = "loading";
  const device = bindParam("device", "wasm");
  // every other picker (size, n, ...) starts at its `selected` option, the demo's default
  for (const select of document.querySelectorAll("select[id]")) {
    if (select.id !== "device") bindParam(select.id, select.value);
  }
  const t0 = performance.now();
  try {
    status.textContent = "loading Pyodide and webjax…";
    // no memory snapshot: a Python started to be snapshotted cannot call into the page's DOM
    // (its JS proxies raise "Illegal invocation"), and the demos write into it
    const pyodide = await loadWebjax({ snapshot: false });
    const sources = await Promise.all(["demo_page.py", ...modules, `${name}.py`].map(async (file) => {
      const response = await fetch(new URL(file, import.meta.url));
      if (!response.ok) throw new Error(`${file} answered HTTP ${response.status}`);
      return [file, await response.text()];
    }));
    pyodide.FS.mkdirTree(DIR);
    for (const [file, text] of sources) pyodide.FS.writeFile(`${DIR}/${file}`, text);
    status.textContent = `loaded in ${Math.round(performance.now() - t0)} ms; running on ${device}…`;
    root.dataset.demo = "running";
    const globals = pyodide.toPy({ device });
    try {
      await pyodide.runPythonAsync(
        `import sys\nif ${JSON.stringify(DIR)} not in sys.path: sys.path.insert(0, ${JSON.stringify(DIR)})\n` +
        `import demo_page, ${name}\nawait demo_page.run(${name}.main, device)`,
        { globals, filename: `<${name} demo>` },
      );
    } finally {
      globals.destroy();
    }
    root.dataset.demo = "done";
  } catch (error) {
    const text = String(error.message ?? error);
    console.error(`demo ${name}:`, error);
    globalThis.demoError = text;
    showError(text);
    status.textContent = "failed (see the error above)";
    root.dataset.demo = "error";
  }
}
