"""Drawing webjax.display's scenes and tables in the browser, through a small JS helper.

Where there is a document (a page running Pyodide), a figure element with a canvas (or a table)
is appended to the element with id `webjax-display`, else to the body. In a Web Worker that set
`globalThis.webjaxDisplay = "postMessage"` (the REPL's worker does), the scene is drawn on an
OffscreenCanvas and posted to the page as `{type: "webjax-display", kind: "image", bitmap,
width, height, title, alt}` (the ImageBitmap transferred; `kind: "table"` posts `columns` and
`rows` of strings); the page draws it. Anywhere else (Node.js, Deno, a worker that did not ask)
nothing is drawn and the functions return False.
"""

from __future__ import annotations

from typing import Any

_HELPER_JS = r"""
(() => {
  const BASELINE = {top: "top", middle: "middle", bottom: "bottom"};
  function draw(ctx, scene, dpr) {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    for (const it of scene.items) {
      if (it.op === "rect") {
        if (it.fill) { ctx.fillStyle = it.fill; ctx.fillRect(it.x, it.y, it.w, it.h); }
        if (it.stroke) {
          ctx.strokeStyle = it.stroke; ctx.lineWidth = 1;
          ctx.strokeRect(it.x + 0.5, it.y + 0.5, it.w - 1, it.h - 1);
        }
      } else if (it.op === "path") {
        const p = it.points;
        ctx.beginPath(); ctx.moveTo(p[0], p[1]);
        for (let i = 2; i < p.length; i += 2) ctx.lineTo(p[i], p[i + 1]);
        ctx.strokeStyle = it.stroke; ctx.lineWidth = it.width; ctx.lineJoin = "round";
        ctx.stroke();
      } else if (it.op === "dots") {
        const p = it.points;
        ctx.fillStyle = it.fill; ctx.beginPath();
        for (let i = 0; i < p.length; i += 2) {
          ctx.moveTo(p[i] + it.r, p[i + 1]); ctx.arc(p[i], p[i + 1], it.r, 0, 2 * Math.PI);
        }
        ctx.fill();
      } else if (it.op === "text") {
        ctx.save(); ctx.translate(it.x, it.y);
        if (it.rotate) ctx.rotate(it.rotate * Math.PI / 180);
        ctx.font = `${it.size}px system-ui, sans-serif`; ctx.fillStyle = it.fill;
        ctx.textAlign = it.anchor === "middle" ? "center" : it.anchor === "end" ? "right" : "left";
        ctx.textBaseline = BASELINE[it.baseline];
        ctx.fillText(it.text, 0, 0); ctx.restore();
      } else if (it.op === "image") {
        const pixels = new OffscreenCanvas(it.iw, it.ih);
        pixels.getContext("2d").putImageData(
          new ImageData(new Uint8ClampedArray(it.rgba), it.iw, it.ih), 0, 0);
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(pixels, it.x, it.y, it.w, it.h);
      }
    }
  }
  function target() {
    return document.getElementById("webjax-display") ?? document.body;
  }
  function figure(child, title) {
    const fig = document.createElement("figure");
    fig.className = "webjax-display";
    fig.append(child);
    if (title) {
      const caption = document.createElement("figcaption");
      caption.textContent = title;
      fig.append(caption);
    }
    target().append(fig);
  }
  const hasDocument = () => typeof document !== "undefined" && !!document.body;
  const posts = () => globalThis.webjaxDisplay === "postMessage" &&
    typeof postMessage === "function" && typeof OffscreenCanvas !== "undefined";
  return {
    showScene(scene) {
      const dpr = globalThis.devicePixelRatio || 1;
      const w = Math.ceil(scene.width * dpr), h = Math.ceil(scene.height * dpr);
      if (hasDocument()) {
        const canvas = document.createElement("canvas");
        canvas.width = w; canvas.height = h;
        canvas.style.width = `${scene.width}px`; canvas.style.height = `${scene.height}px`;
        canvas.setAttribute("role", "img"); canvas.setAttribute("aria-label", scene.alt);
        draw(canvas.getContext("2d"), scene, dpr);
        figure(canvas, "");
        return true;
      }
      if (!posts()) return false;
      const canvas = new OffscreenCanvas(w, h);
      draw(canvas.getContext("2d"), scene, dpr);
      const bitmap = canvas.transferToImageBitmap();
      postMessage({type: "webjax-display", kind: "image", bitmap, width: scene.width,
                   height: scene.height, title: "", alt: scene.alt}, [bitmap]);
      return true;
    },
    showTable(columns, rows, title) {
      if (hasDocument()) {
        const table = document.createElement("table");
        const head = table.createTHead().insertRow();
        for (const name of columns) {
          const th = document.createElement("th"); th.textContent = name; head.append(th);
        }
        const body = table.createTBody();
        for (const row of rows) {
          const tr = body.insertRow();
          for (const cell of row) tr.insertCell().textContent = cell;
        }
        figure(table, title);
        return true;
      }
      if (!posts()) return false;
      postMessage({type: "webjax-display", kind: "table", columns, rows, title});
      return true;
    },
  };
})()
"""

_HELPER: Any = None


def _helper() -> Any:
    global _HELPER
    if _HELPER is None:
        from pyodide.code import run_js

        _HELPER = run_js(_HELPER_JS)
    return _HELPER


def show_scene(scene: dict[str, Any]) -> bool:
    """Draw a display scene on the page (see the module docstring); False where there is none."""
    import js
    from pyodide.ffi import to_js

    return bool(_helper().showScene(to_js(scene, dict_converter=js.Object.fromEntries)))


def show_table(columns: list[str], rows: list[list[str]], title: str) -> bool:
    """Show a table of strings on the page; False where there is none."""
    from pyodide.ffi import to_js

    return bool(_helper().showTable(to_js(columns), to_js(rows), title))
