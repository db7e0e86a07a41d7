// The REPL page (index.html): the editor (editor.mjs, CodeMirror bundled by build.py), the
// worker that runs Python (repl_worker.mjs), and what the worker sends back: streamed output,
// HTML reprs, and webjax.display's pictures and tables.
import { createEditor } from "./editor.mjs";
import { EXAMPLES } from "./repl_examples.mjs";

const $ = (id) => document.getElementById(id);
const runButton = $("run");
const stopButton = $("stop");
const device = $("device");
const examples = $("examples");
const output = $("output");
const status = $("status");

const DEFAULT_CODE = `import webjax.numpy as jnp
print((jnp.arange(6).reshape(2, 3) * 2).sum())
`;

// --- the code in the address: #code=<base64url of UTF-8> ------------------------------------

function encodeCode(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function decodeCode(encoded) {
  const base64 = encoded.replaceAll("-", "+").replaceAll("_", "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

function codeFromAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.has("code")) return null;
  try {
    return decodeCode(params.get("code"));
  } catch {
    return null;
  }
}

let addressTimer = 0;
function keepInAddress(text) {
  clearTimeout(addressTimer);
  addressTimer = setTimeout(() => {
    const params = new URLSearchParams(location.hash.slice(1));
    params.set("code", encodeCode(text));
    history.replaceState(null, "", "#" + params.toString());
  }, 250);
}

function keepDeviceInAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (device.value === "default") params.delete("device");
  else params.set("device", device.value);
  history.replaceState(null, "", "#" + params.toString());
}

// --- output --------------------------------------------------------------------------------

let textBlock = null; // the <pre> that consecutive text lines go into

function appendText(text, className) {
  if (!textBlock || textBlock.dataset.kind !== (className ?? "out")) {
    textBlock = document.createElement("pre");
    textBlock.dataset.kind = className ?? "out";
    if (className) textBlock.className = className;
    output.append(textBlock);
  }
  textBlock.append(text + "\n");
  output.scrollTop = output.scrollHeight;
}

function appendBlock(element) {
  textBlock = null;
  output.append(element);
  output.scrollTop = output.scrollHeight;
}

// HTML reprs come from Python code the user ran; keep only the tags webjax's reprs use, with
// their class attributes, so a repr cannot script the page.
const SAFE_TAGS = new Set([
  "DIV", "SPAN", "PRE", "CODE", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "CAPTION", "B",
  "I", "SMALL", "DETAILS", "SUMMARY", "BR",
]);

function sanitized(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  const clean = (node) => {
    for (const child of [...node.childNodes]) {
      if (child.nodeType === Node.TEXT_NODE) continue;
      if (child.nodeType !== Node.ELEMENT_NODE || !SAFE_TAGS.has(child.tagName)) {
        child.replaceWith(document.createTextNode(child.textContent ?? ""));
        continue;
      }
      for (const attr of [...child.attributes]) {
        if (attr.name !== "class" && attr.name !== "title") child.removeAttribute(attr.name);
      }
      clean(child);
    }
  };
  clean(template.content);
  return template.content;
}

function showDisplay(message) {
  const figure = document.createElement("figure");
  figure.className = "webjax-display";
  if (message.kind === "image") {
    const canvas = document.createElement("canvas");
    canvas.width = message.bitmap.width;
    canvas.height = message.bitmap.height;
    canvas.style.width = `${message.width}px`;
    canvas.style.height = `${message.height}px`;
    canvas.getContext("2d").drawImage(message.bitmap, 0, 0);
    message.bitmap.close();
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", message.alt ?? message.title ?? "a picture");
    figure.append(canvas);
  } else if (message.kind === "table") {
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    for (const name of message.columns) {
      const th = document.createElement("th");
      th.textContent = name;
      head.append(th);
    }
    const body = table.createTBody();
    for (const row of message.rows) {
      const tr = body.insertRow();
      for (const cell of row) tr.insertCell().textContent = cell;
    }
    figure.append(table);
  }
  if (message.title) {
    const caption = document.createElement("figcaption");
    caption.textContent = message.title;
    figure.append(caption);
  }
  appendBlock(figure);
}

// --- the worker ----------------------------------------------------------------------------

let worker = null;
let interrupt = null; // Int32Array over a SharedArrayBuffer, where the page is isolated
let state = "loading";
const phases = []; // [phase, ms since navigation when it began], for the console and tests

function setState(next, text) {
  state = next;
  document.body.dataset.state = next;
  status.textContent = text ?? next;
  runButton.disabled = next !== "ready";
  stopButton.disabled = next !== "running";
  device.disabled = next === "loading" || next === "error";
}

function finishRun() {
  setState("ready");
  document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
}

function showDevices({ devices, interruptible }) {
  const chosen = new URLSearchParams(location.hash.slice(1)).get("device") ?? device.value;
  device.replaceChildren(...devices.choices.map(([value, label]) => new Option(label, value)));
  if ([...device.options].some((o) => o.value === chosen)) device.value = chosen;
  for (const [platform, why] of devices.missing) {
    const option = new Option(`${platform}: unavailable`, "");
    option.disabled = true;
    option.title = why;
    device.append(option);
  }
  const badge = $("isolation");
  badge.textContent = devices.isolated
    ? `cross-origin isolated: wasm threads ${devices.threads}`
    : "not cross-origin isolated: 1 wasm thread";
  badge.dataset.isolated = String(devices.isolated);
  badge.title += interruptible ? "" : " (without it, Stop restarts Python)";
}

function onMessage({ data: message }) {
  switch (message.type) {
    case "phase":
      phases.push([message.name, Math.round(performance.now())]);
      $("progress").max = message.steps;
      $("progress").value = message.step;
      $("phase").textContent = message.name + "…";
      status.textContent = message.name + "…";
      document.body.dataset.phase = message.name;
      break;
    case "ready":
      $("loading").hidden = true;
      showDevices(message);
      setState("ready");
      phases.push(["ready", Math.round(performance.now())]);
      console.log(`webjax REPL ready: ${phases.map(([name, ms]) => `${name} at ${ms} ms`).join(", ")}`);
      break;
    case "stdout":
      appendText(message.text);
      break;
    case "stderr":
      appendText(message.text, "err");
      break;
    case "html": {
      const block = document.createElement("div");
      block.className = "html-repr";
      block.title = message.text;
      block.append(sanitized(message.html));
      appendBlock(block);
      break;
    }
    case "webjax-display":
      showDisplay(message);
      break;
    case "done":
      finishRun();
      break;
    case "failed":
      appendText(message.message, "err"); // a failure of the REPL itself, not of user code
      if (state === "running") finishRun();
      else setState("error", "error");
      break;
  }
}

function startWorker() {
  worker = new Worker(new URL("repl_worker.mjs", import.meta.url), { type: "module", name: "webjax-repl" });
  worker.onmessage = onMessage;
  worker.onerror = (event) => {
    appendText(`the REPL's worker failed: ${event.message}`, "err");
    setState("error", "error");
  };
  interrupt = globalThis.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
  $("loading").hidden = false;
  setState("loading", "loading…");
  worker.postMessage({
    type: "start",
    interruptBuffer: interrupt?.buffer ?? null,
    devicePixelRatio: globalThis.devicePixelRatio ?? 1,
  });
}

function run() {
  if (state !== "ready") return;
  output.replaceChildren();
  textBlock = null;
  setState("running", "running…");
  worker.postMessage({
    type: "run",
    code: editor.getText(),
    device: device.value || "default",
    profile: $("profile").checked,
  });
}

function stop() {
  if (state !== "running") return;
  if (interrupt) {
    interrupt[0] = 2; // SIGINT: KeyboardInterrupt in the running code
    status.textContent = "stopping…";
    return;
  }
  // Not isolated: no shared memory to signal through, so the worker is replaced.
  worker.terminate();
  appendText("Stopped: Python was restarted (this page is not cross-origin isolated, so the "
    + "running code could not be interrupted); its variables are gone.", "err");
  document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
  startWorker();
}

// --- the page ------------------------------------------------------------------------------

const editor = createEditor($("editor"), {
  doc: codeFromAddress() ?? DEFAULT_CODE,
  onRun: run,
  onChange: keepInAddress,
});
globalThis.webjaxRepl = { editor, phases }; // for the browser tests and the console

for (const [i, example] of EXAMPLES.entries()) examples.append(new Option(example.name, String(i)));
examples.addEventListener("change", () => {
  if (examples.value === "") return;
  editor.setText(EXAMPLES[Number(examples.value)].code);
  examples.value = "";
  editor.focus();
});
device.addEventListener("change", keepDeviceInAddress);
runButton.addEventListener("click", run);
stopButton.addEventListener("click", stop);
startWorker();
