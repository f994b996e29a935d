// The %%grad panel's code editor: CodeMirror 6 as an anywidget view.
//
// The model's traits (gradlab/kernel_ext/editor.py): `value` (the code, synced both ways),
// `error_line` (1-based line the last Recompile or Check complained about, 0 for none),
// `error_message` (shown on that line's gutter marker) and `read_only`.
// Line numbers, Python highlighting in the colours of the panel's code tab, Tab and Shift-Tab
// indent (Escape then Tab leaves the editor, as CodeMirror documents), undo history, and the
// error line marked in red. Once the editor is on screen it marks its element
// `gradlab-cm-ready`, and the panel's CSS hides the plain Textarea kept beside it as the
// fallback for front ends that cannot load this module.

import { EditorState, StateEffect, StateField, RangeSet, Compartment } from "@codemirror/state";
import {
  EditorView, Decoration, GutterMarker, gutter, keymap, lineNumbers,
  highlightActiveLine, highlightActiveLineGutter, drawSelection,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { HighlightStyle, syntaxHighlighting, indentOnInput, bracketMatching, indentUnit }
  from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { tags as t } from "@lezer/highlight";

// The colours pygments' "default" style gives the code tab, so both views read alike.
const pygmentsLike = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword],
    color: "#008000", fontWeight: "bold" },
  { tag: [t.bool, t.null, t.self], color: "#008000" },
  { tag: [t.string, t.special(t.string)], color: "#BA2121" },
  { tag: t.comment, color: "#3D7B7B", fontStyle: "italic" },
  { tag: [t.number], color: "#666666" },
  { tag: [t.operator, t.arithmeticOperator, t.compareOperator], color: "#666666" },
  { tag: t.function(t.definition(t.variableName)), color: "#0000FF" },
  { tag: t.definition(t.className), color: "#0000FF", fontWeight: "bold" },
  { tag: t.standard(t.variableName), color: "#008000" },
]);

const setError = StateEffect.define();

class ErrorMarker extends GutterMarker {
  constructor(message) { super(); this.message = message; }
  eq(other) { return other.message === this.message; }
  toDOM() {
    const span = document.createElement("span");
    span.textContent = "●";
    span.title = this.message;
    span.className = "gradlab-cm-error-marker";
    return span;
  }
}

// The error line: a red background on the line and a marker in its own gutter.
const errorField = StateField.define({
  create: () => ({ line: 0, message: "" }),
  update(value, tr) {
    for (const e of tr.effects) if (e.is(setError)) return e.value;
    return value;
  },
  provide: (field) => [
    EditorView.decorations.from(field, (err) => (view) => lineDecoration(view, err)),
  ],
});

function validLine(state, line) {
  return line > 0 && line <= state.doc.lines;
}

function lineDecoration(view, err) {
  if (!validLine(view.state, err.line)) return Decoration.none;
  const from = view.state.doc.line(err.line).from;
  return Decoration.set([Decoration.line({ class: "gradlab-cm-error-line" }).range(from)]);
}

const errorGutter = gutter({
  class: "gradlab-cm-error-gutter",
  markers(view) {
    const err = view.state.field(errorField);
    if (!validLine(view.state, err.line)) return RangeSet.empty;
    const from = view.state.doc.line(err.line).from;
    return RangeSet.of([new ErrorMarker(err.message || "error").range(from)]);
  },
});

const theme = EditorView.theme({
  "&": {
    fontSize: "12px",
    border: "1px solid var(--jp-border-color1, #bdbdbd)",
    backgroundColor: "var(--jp-layout-color0, #fff)",
    color: "var(--jp-content-font-color1, #000)",
    maxHeight: "480px",
  },
  "&.cm-focused": { outline: "1px solid var(--jp-brand-color1, #1976d2)" },
  ".cm-scroller": { fontFamily: "monospace", lineHeight: "1.35", overflow: "auto" },
  ".cm-gutters": {
    backgroundColor: "var(--jp-layout-color2, #f5f5f5)",
    color: "var(--jp-ui-font-color2, #757575)",
    borderRight: "1px solid var(--jp-border-color2, #e0e0e0)",
  },
  ".gradlab-cm-error-line": { backgroundColor: "rgba(176, 0, 32, 0.12)" },
  ".gradlab-cm-error-marker": { color: "#b00020", cursor: "default", paddingLeft: "2px" },
  ".gradlab-cm-error-gutter": { minWidth: "12px" },
});

// Remote changes (from the kernel) are applied with this annotation-free marker so that they
// are not sent back.
let applyingRemote = false;

function render({ model, el }) {
  const readOnly = new Compartment();
  let pending = null;

  const flush = () => {
    if (pending === null) return;
    clearTimeout(pending);
    pending = null;
    const text = view.state.doc.toString();
    if (model.get("value") !== text) {
      model.set("value", text);
      model.save_changes();
    }
  };

  const view = new EditorView({
    parent: el,
    state: EditorState.create({
      doc: model.get("value") || "",
      extensions: [
        errorGutter,
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        python(),
        syntaxHighlighting(pygmentsLike),
        keymap.of([indentWithTab, ...defaultKeymap, ...historyKeymap]),
        readOnly.of(EditorState.readOnly.of(!!model.get("read_only"))),
        errorField,
        theme,
        EditorView.updateListener.of((update) => {
          if (!update.docChanged || applyingRemote) return;
          clearTimeout(pending);
          pending = setTimeout(flush, 150);
        }),
        EditorView.domEventHandlers({ blur: () => { flush(); return false; } }),
      ],
    }),
  });

  const showError = () => view.dispatch({
    effects: setError.of({ line: model.get("error_line") || 0,
                           message: model.get("error_message") || "" }),
  });
  const onValue = () => {
    const text = model.get("value") || "";
    if (text === view.state.doc.toString()) return;
    applyingRemote = true;
    try {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    } finally {
      applyingRemote = false;
    }
  };
  const onReadOnly = () => view.dispatch({
    effects: readOnly.reconfigure(EditorState.readOnly.of(!!model.get("read_only"))),
  });

  // A click on one of the panel's action buttons (Recompile, Check...) is sent from here, on
  // this widget's own channel, with the text it acts on. Sent as the button's own click and a
  // separate value update, the two could reach the kernel in either order: JupyterLab may give
  // each widget's messages their own kernel subshell (thread), so Check could read the code
  // from before the last edit. Only where this editor is on screen: the fallback Textarea's
  // panel keeps the buttons' own clicks.
  const onAction = (event) => {
    const button = event.target instanceof Element && event.target.closest("button.gradlab-action");
    const panel = el.closest(".gradlab-panel");
    if (!button || button.disabled || !panel || !panel.contains(button)) return;
    const action = [...button.classList].find((c) => c.startsWith("gradlab-action-"));
    if (!action) return;
    event.stopImmediatePropagation();
    event.preventDefault();
    if (pending !== null) { clearTimeout(pending); pending = null; }
    model.send({ action: action.slice("gradlab-action-".length),
                 text: view.state.doc.toString() });
  };
  document.addEventListener("click", onAction, true);

  model.on("change:value", onValue);
  model.on("change:error_line", showError);
  model.on("change:error_message", showError);
  model.on("change:read_only", onReadOnly);
  showError();
  el.classList.add("gradlab-cm-ready");

  return () => {
    document.removeEventListener("click", onAction, true);
    flush();
    model.off("change:value", onValue);
    model.off("change:error_line", showError);
    model.off("change:error_message", showError);
    model.off("change:read_only", onReadOnly);
    view.destroy();
  };
}

export default { render };
