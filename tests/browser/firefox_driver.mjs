// Drives Firefox ESR over WebDriver BiDi (puppeteer-core) for tests/browser/test_firefox.py.
//
//   node firefox_driver.mjs <puppeteer-core dir> <firefox> <page url> <program.py>
//
// Opens the page (web/test.html on the build's server), loads Pyodide + webjax through the
// page's loader, runs program.py with runPythonAsync and prints one line "RESULT <json>": what
// the page reports of itself (user agent, crossOriginIsolated, SharedArrayBuffer, navigator.gpu,
// a WebGL2 context) and the program's last expression (a JSON string). The browser's console
// is echoed on stderr, prefixed "[console]", so a failure shows what the page said.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const [driverDir, firefox, url, programPath] = process.argv.slice(2);
const require = createRequire(join(resolve(driverDir), "package.json"));
const puppeteer = require("puppeteer-core");

const LOAD_TIMEOUT_MS = 240_000;
const RUN_TIMEOUT_MS = 300_000;

const browser = await puppeteer.launch({
  browser: "firefox",
  protocol: "webDriverBiDi",
  executablePath: firefox,
  // Headless Firefox makes no WebGL context (its headless widget has no GL); under a display
  // (Xvfb in the test) it runs headful and renders WebGL2 on Mesa llvmpipe.
  headless: !process.env.DISPLAY,
  // Preferences: nothing outside the machine is asked for (updates, telemetry, safe browsing).
  extraPrefsFirefox: {
    "app.update.enabled": false,
    "browser.safebrowsing.malware.enabled": false,
    "browser.safebrowsing.phishing.enabled": false,
    "datareporting.policy.dataSubmissionEnabled": false,
    "toolkit.telemetry.enabled": false,
    "network.captive-portal-service.enabled": false,
    "network.connectivity-service.enabled": false,
    "webgl.force-enabled": true,
    "dom.webgpu.enabled": true,
    "gfx.webgpu.ignore-blocklist": true,
    ...JSON.parse(process.env.WEBJAX_FIREFOX_PREFS || "{}"),
  },
});
let code = 0;
try {
  const page = await browser.newPage();
  page.on("console", (msg) => process.stderr.write(`[console] ${msg.type()} ${msg.text()}\n`));
  page.on("pageerror", (err) => process.stderr.write(`[console] pageerror ${err}\n`));
  page.setDefaultTimeout(LOAD_TIMEOUT_MS);
  await page.goto(url, { waitUntil: "load" });
  await page.waitForFunction(() => window.webjaxLoader !== undefined);
  const pageInfo = await page.evaluate(async () => {
    const canvas = document.createElement("canvas");
    let glError = null;
    canvas.addEventListener("webglcontextcreationerror", (e) => {
      glError = e.statusMessage || "(no status message)";
    });
    const gl = canvas.getContext("webgl2");
    let adapter = null;
    if (navigator.gpu) {
      try {
        adapter = (await navigator.gpu.requestAdapter()) !== null;
      } catch (e) {
        adapter = `requestAdapter threw: ${e}`;
      }
    }
    return {
      userAgent: navigator.userAgent,
      crossOriginIsolated: globalThis.crossOriginIsolated === true,
      sharedArrayBuffer: typeof SharedArrayBuffer === "function",
      hardwareConcurrency: navigator.hardwareConcurrency,
      gpu: "gpu" in navigator && navigator.gpu !== undefined,
      gpuAdapter: adapter,
      webgl2: gl !== null,
      webgl2Renderer: gl ? gl.getParameter(gl.RENDERER) : null,
      webgl2Error: glError,
    };
  });
  const t0 = Date.now();
  await page.evaluate(async () => {
    window.__webjaxPyodide = await window.webjaxLoader.loadWebjax();
  });
  const loadSeconds = (Date.now() - t0) / 1000;
  const program = readFileSync(programPath, "utf8");
  const t1 = Date.now();
  const raw = await page.evaluate(
    (src, timeoutMs) => {
      const py = window.__webjaxPyodide;
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      });
      return Promise.race([py.runPythonAsync(src), timeout]).finally(() => clearTimeout(timer));
    },
    program,
    RUN_TIMEOUT_MS,
  );
  const runSeconds = (Date.now() - t1) / 1000;
  const out = { page: pageInfo, loadSeconds, runSeconds, program: JSON.parse(raw) };
  process.stdout.write(`RESULT ${JSON.stringify(out)}\n`);
} catch (e) {
  process.stderr.write(`firefox driver: ${e && e.stack ? e.stack : e}\n`);
  code = 1;
} finally {
  await browser.close();
}
process.exit(code);
