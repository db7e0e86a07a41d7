// The REPL page (index.html): loads webjax, fills the device picker, runs the editor's code.
import { loadWebjax } from "./webjax.mjs";

const $ = (id) => document.getElementById(id);
const code = $("code");
const run = $("run");
const device = $("device");
const output = $("output");
const status = $("status");

function append(text, className) {
  const span = document.createElement("span");
  span.textContent = text + "\n";
  if (className) span.className = className;
  output.append(span);
}

async function main() {
  const t0 = performance.now();
  const pyodide = await loadWebjax();
  pyodide.setStdout({ batched: (text) => append(text) });
  pyodide.setStderr({ batched: (text) => append(text, "err") });
  const source = await (await fetch(new URL("repl.py", import.meta.url))).text();
  pyodide.FS.mkdirTree("/home/pyodide/.webjax");
  pyodide.FS.writeFile("/home/pyodide/.webjax/webjax_repl.py", source);
  const choices = pyodide.runPython(
    "import sys\nsys.path.insert(0, '/home/pyodide/.webjax')\n" +
      "import webjax_repl\nwebjax_repl.device_choices()",
  );
  device.replaceChildren(
    ...choices.toJs().map(([value, label]) => new Option(label, value)),
  );
  choices.destroy();
  device.disabled = false;
  run.disabled = false;
  status.textContent = "ready";
  console.log(`webjax REPL ready in ${Math.round(performance.now() - t0)} ms`);

  async function runCode() {
    if (run.disabled) return;
    run.disabled = true;
    status.textContent = "running…";
    output.replaceChildren();
    const globals = pyodide.toPy({ source: code.value, choice: device.value });
    try {
      await pyodide.runPythonAsync(
        "import webjax_repl\nawait webjax_repl.run(source, choice)",
        { globals },
      );
    } catch (error) {
      append(String(error.message ?? error), "err"); // a failure of the REPL itself
    } finally {
      globals.destroy();
      run.disabled = false;
      status.textContent = "ready";
      document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
    }
  }
  run.addEventListener("click", runCode);
  code.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      runCode();
    } else if (event.key === "Tab" && !event.shiftKey) {
      event.preventDefault();
      code.setRangeText("    ", code.selectionStart, code.selectionEnd, "end");
    }
  });
}

main().catch((error) => {
  status.textContent = "error";
  append(`webjax failed to load: ${error.message ?? error}`, "err");
  console.error(error);
});
