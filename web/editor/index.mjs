// The REPL's code editor: CodeMirror 6 with Python highlighting and indentation. build.py bundles
// this file (with esbuild, from the npm packages pinned in package.json) into dist/site/editor.mjs;
// the page imports that bundle, so nothing is fetched from elsewhere at run time.
import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState, Prec } from "@codemirror/state";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit } from "@codemirror/language";
import { python } from "@codemirror/lang-python";

/**
 * An editor in `parent` holding `doc`. `onRun()` is called on Ctrl+Enter / Cmd+Enter (and
 * Shift+Enter); `onChange(text)` after every edit. Returns {view, getText, setText, focus}.
 */
export function createEditor(parent, { doc = "", onRun = () => {}, onChange = () => {} } = {}) {
  const run = () => {
    onRun();
    return true;
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        Prec.highest(keymap.of([
          { key: "Mod-Enter", run },
          { key: "Shift-Enter", run },
        ])),
        basicSetup,
        keymap.of([indentWithTab]),
        indentUnit.of("    "),
        python(),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": "Python code" }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
  };
}
