// Keeps a gradlab panel readable after the kernel is gone.
//
// A panel's output is a live widget, and beside it (its "static twin", another output the
// kernel keeps current) the panel's static HTML view. While the widget is on screen the panel's
// CSS hides the twin. Saved and reopened without the kernel, the widget's model is gone and
// JupyterLab would write "Error displaying widget: model not found" in its place: so when the
// notebook is saved, this module writes into the notebook's widget state, for each panel's
// root model, an empty HTML model (`placeholder`) marked `gradlab-saved-panel`. Reopened, the
// widget output is that empty model and the static twin, no longer hidden, shows the panel.
// Where JupyterLab saves the full widget state itself (the "Save Widget State Automatically"
// setting), the full state is left as it is.
//
// Model traits (gradlab/kernel_ext/reopen.py): `root` (the panel's root model id) and
// `placeholder` (the HTML the saved model shows, empty by default).

const STATE = "application/vnd.jupyter.widget-state+json";
const VIEW = "application/vnd.jupyter.widget-view+json";
const MARK = "gradlab-saved-panel";

// document context -> (keeper model -> number of its views on screen)
const keepers = new Map();

function placeholderState(html) {
  return {
    model_name: "HTMLModel",
    model_module: "@jupyter-widgets/controls",
    model_module_version: "2.0.0",
    state: { value: html || "", _dom_classes: [MARK] },
  };
}

function isPlaceholder(entry) {
  const classes = entry && entry.state && entry.state._dom_classes;
  return Array.isArray(classes) && classes.includes(MARK);
}

// The widget model ids the notebook's outputs display.
function displayedModels(notebook) {
  const ids = new Set();
  const cells = (notebook.toJSON && notebook.toJSON().cells) || [];
  for (const cell of cells) {
    for (const output of cell.outputs || []) {
      const view = output.data && output.data[VIEW];
      if (view && view.model_id) ids.add(view.model_id);
    }
  }
  return ids;
}

function save(context) {
  const notebook = context.model;
  if (!notebook || !notebook.getMetadata || !notebook.setMetadata) return;
  const current = notebook.getMetadata("widgets");
  const widgets = current ? JSON.parse(JSON.stringify(current)) : {};
  const saved = widgets[STATE] || { version_major: 2, version_minor: 0, state: {} };
  saved.state = saved.state || {};
  const shown = displayedModels(notebook);
  for (const [id, entry] of Object.entries(saved.state)) {
    if (isPlaceholder(entry) && !shown.has(id)) delete saved.state[id];
  }
  for (const model of (keepers.get(context) || new Map()).keys()) {
    const root = model.get("root");
    if (!root || !shown.has(root)) continue;
    if (saved.state[root] && !isPlaceholder(saved.state[root])) continue;   // full state
    saved.state[root] = placeholderState(model.get("placeholder"));
  }
  if (Object.keys(saved.state).length === 0 && !current) return;
  widgets[STATE] = saved;
  notebook.setMetadata("widgets", widgets);
}

function render({ model, el }) {
  el.style.display = "none";
  const manager = model.widget_manager;
  const context = manager && manager.context;
  if (!context || !context.saveState || typeof context.saveState.connect !== "function") {
    return () => {};   // not a notebook document (a console, another front end): nothing to do
  }
  let views = keepers.get(context);
  if (!views) {
    views = new Map();
    keepers.set(context, views);
    context.saveState.connect((_, state) => {
      if (state === "started") {
        try {
          save(context);
        } catch (e) {
          console.warn("gradlab: could not save the panels' placeholders", e);
        }
      }
    });
    if (context.disposed) context.disposed.connect(() => keepers.delete(context));
  }
  views.set(model, (views.get(model) || 0) + 1);
  return () => {
    const n = (views.get(model) || 1) - 1;
    if (n > 0) views.set(model, n);
    else views.delete(model);
  };
}

export default { render };
