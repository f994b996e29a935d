"""The ``%%grad`` panel: highlighted backward code, an editor, Recompile, backend and device,
Run, and where it ran and how long it took.

A :class:`GradPanel` is a view of a :class:`gradlab.workbench.session.GradSession`. Its methods
(``recompile``, ``run``) and state (``editor_text``, ``error``, ``result_line``...) work without
any front end, so tests drive it headless; ``.widget`` builds the ipywidgets lazily, and the
text rendering serves terminal IPython and front ends without widgets.
"""
from __future__ import annotations

import html
import itertools
import sys
from typing import Any

from ..workbench.display import highlight_html, highlight_terminal, widgets_available
from ..workbench.session import GradSession, RunResult
from ..tensor import available_devices, installed_frameworks

_ids = itertools.count(1)
#: Inline style for text blocks: JupyterLab's own CSS would otherwise set a proportional font.
MONO = "margin:2px 0;font-family:monospace;font-size:12px;white-space:pre"


class GradPanel:
    def __init__(self, session: GradSession, backend: str = "numpy", device: str = "cpu",
                 check: bool = False, exercise: Any = None) -> None:
        self.session = session
        self.backend = backend
        self.device = device
        self.check = check
        self.exercise = exercise            # an Exercise: the generated code stays hidden
        self.verdict: Any = None
        self.stale = False                  # results shown are from a previous version
        self.stepper: Any = None
        self.editor_text = exercise.starter if exercise is not None else session.source
        self._widget: Any = None
        self._page: EditPage | None = None
        self._id = next(_ids)
        session.listeners.append(self._refresh)

    # --- what the panel does (usable without widgets) -------------------------------------------
    def recompile(self, text: str | None = None) -> bool:
        """Build the edited code; on failure the previous version stays and ``error`` says why."""
        if text is not None:
            self.editor_text = text
            if self._page is not None:
                self._page.editor.value = text
        ok = self.session.recompile(self.editor_text)
        if ok and self.session.results:
            self.stale = True
            self._refresh()
        return ok

    def run(self, backend: str | None = None, device: str | None = None) -> list[RunResult]:
        if backend is not None:
            self.backend = backend
        if device is not None:
            self.device = device
        self.stale = False
        self.stepper = None
        return self.session.run(self.backend, self.device, check=self.check)

    # --- classroom: exercises, step-through, graph --------------------------------------------
    def check_exercise(self, text: str | None = None) -> Any:
        """Check the student's backward pass (exercise mode); the answer stays hidden."""
        if self.exercise is None:
            raise ValueError("this panel is not an exercise (use %%grad --exercise)")
        if text is not None:
            self.editor_text = text
            if self._page is not None:
                self._page.editor.value = text
        self.verdict = self.exercise.check(self.editor_text)
        if self.verdict.ok:
            self.session.recompile(self.editor_text)
        self._refresh()
        return self.verdict

    def show_solution(self) -> str:
        if self.exercise is None:
            return self.session.generated_source
        solution = self.exercise.solution()
        self._refresh()
        return solution

    def step_through(self) -> Any:
        """A :class:`gradlab.step.Stepper` over the current version on the panel's inputs."""
        if self.session.args is None:
            raise ValueError("no inputs to step through: give them with --run")
        if self.stepper is None:
            from ..workbench.stepping import Stepper
            self.stepper = Stepper(self.session.active, *self.session.args)
        return self.stepper

    def graph_html(self) -> str:
        from ..workbench.graphs import graph
        try:
            args = self.session.args or ()
            return graph(self.session.active, *args).html()
        except Exception as e:  # a graph is a bonus: never let it break the panel
            return f"<pre>{html.escape(f'no graph: {type(e).__name__}: {e}')}</pre>"

    def reset(self) -> None:
        self.editor_text = self.session.generated_source
        if self._page is not None:
            self._page.editor.value = self.editor_text
        self.session.reset()

    @property
    def error(self) -> str:
        return self.session.error

    @property
    def result_line(self) -> str:
        """``torch · cuda:0 · NVIDIA H200 · 0.41 ms (median of 20) · first call 12 ms``"""
        return "\n".join(r.line for r in self.session.results)

    @property
    def results(self) -> list[RunResult]:
        return self.session.results

    # --- text rendering -----------------------------------------------------------------------
    def text(self, color: str = "auto") -> str:
        if self.exercise is not None and not self.exercise.revealed:
            parts = [highlight_terminal(self.editor_text, color).rstrip("\n")]
            if self.verdict is not None:
                parts.append(self.verdict.message)
            return "\n\n".join(parts)
        parts = [highlight_terminal(self.session.source, color).rstrip("\n")]
        if self.session.diff_text:
            parts.append(self.session.diff_text.rstrip("\n"))
        for r in self.session.results:
            parts.append(r.summary())
            if r.check is not None:
                parts.append(r.check.table())
        if self.session.error and not self.session.results:
            parts.append(f"error: {self.session.error}")
        return "\n\n".join(parts)

    def __repr__(self) -> str:
        return self.text(color="never")

    def html(self) -> str:
        """A static view (code, edits, results, checks): what a notebook shows where widgets
        cannot run, e.g. on a code-hosting site."""
        hidden = self.exercise is not None and not self.exercise.revealed
        parts = [highlight_html(self.editor_text if hidden else self.session.source)]
        if self.verdict is not None:
            color = "#1b5e20" if self.verdict.ok else "#b00020"
            parts.append(f'<pre style="{MONO};color:{color}">{html.escape(self.verdict.message)}'
                         f'</pre>')
        if self.session.error and not self.session.results:
            parts.append(f'<pre style="{MONO};color:#b00020">{html.escape(self.session.error)}'
                         f'</pre>')
        if self.session.diff_text and not hidden:
            parts.append(f'<pre style="{MONO}">{_diff_html(self.session.diff_text)}</pre>')
        for r in self.session.results:
            parts.append(f'<pre class="gradlab-run" style="{MONO}">{html.escape(r.summary())}'
                         f'</pre>')
            if r.check is not None:
                parts.append(f'<pre style="{MONO}">{html.escape(r.check.table())}</pre>')
        return f'<div class="gradlab-panel-static">{"".join(parts)}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        if widgets_available():
            bundle.update(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = self.text(color="always" if _terminal() else "never")
        bundle["text/html"] = self.html()
        return bundle

    # --- widgets ------------------------------------------------------------------------------
    @property
    def widget(self) -> Any:
        if self._widget is None:
            self._build()
        return self._widget

    def _build(self) -> None:
        import ipywidgets as w
        from ipywidgets.widgets.widget_description import DescriptionStyle
        from ipywidgets.widgets.widget_string import HTMLStyle
        klass = f"gradlab-panel-{self._id}"
        # Every widget, layout and style is a model the front end creates before it draws
        # anything. Widgets with no layout or style of their own share one of each, and the
        # tabs other than the code are built when first opened: 57 models became 17.
        self._plain, self._html_style = w.Layout(), HTMLStyle()
        self._button_style = w.ButtonStyle()
        label_style = DescriptionStyle()
        self.code = self._html(layout=w.Layout(width="100%"))
        options = self.backend_options()
        self.backend_select = w.Dropdown(options=options, value=self.backend
                                         if self.backend in options else options[0],
                                         description="backend", layout=w.Layout(width="200px"),
                                         style=label_style)
        devices = self.device_options(self.backend_select.value)
        self.device_select = w.Dropdown(options=devices, value=_pick(self.device, devices),
                                        description="device", layout=w.Layout(width="180px"),
                                        style=label_style)
        self.backend_select.observe(self._on_backend, names="value")
        self.run_button = self._button(lambda: self.run(self.backend_select.value,
                                                        self.device_select.value),
                                       description="Run", icon="play", button_style="primary")
        self.result = self._html()
        self.result.add_class("gradlab-result")
        style = self._html(f"<style>.{klass} .gradlab-editor textarea {{font-family: "
                           f"monospace; font-size: 12px;}}</style>")
        not_yet = self._html()      # each tab but the code's, until it is first opened
        titles = ["code", "exercise" if self.exercise else "edit", "step through", "graph"]
        self.tabs = w.Tab(children=[self.code, not_yet, not_yet, not_yet], titles=titles,
                          layout=self._plain)
        self.tabs.observe(self._on_tab, names="selected_index")
        controls = w.HBox([self.backend_select, self.device_select, self.run_button],
                          layout=self._plain)
        self._widget = w.VBox([style, self.tabs, controls, self.result], layout=self._plain)
        self._widget.add_class(klass)
        self._widget.add_class("gradlab-panel")
        if self.exercise is not None:
            self.tabs.selected_index = 1
        self._refresh()

    def backend_options(self) -> list[str]:
        """The menu of frameworks: those installed here (from the backend registry), then
        'all'."""
        return installed_frameworks() + ["all"]

    def device_options(self, backend: str) -> list[str]:
        """The menu of devices for ``backend``: those present here, CPU first ('all': the CPU,
        and 'gpu' where an installed framework has a GPU)."""
        if backend != "all":
            return _present_devices(backend)
        gpu = any(d != "cpu" for fw in installed_frameworks() for d in _present_devices(fw))
        return ["cpu", "gpu"] if gpu else ["cpu"]

    def _on_backend(self, change: dict[str, Any]) -> None:
        devices = self.device_options(change["new"])
        self.device_select.options = devices
        self.device_select.value = _pick(self.device_select.value, devices)

    def _html(self, value: str = "", layout: Any = None) -> Any:
        import ipywidgets as w
        return w.HTML(value, layout=layout or self._plain, style=self._html_style)

    def _button(self, on_click: Any, **options: Any) -> Any:
        import ipywidgets as w
        b = w.Button(layout=self._plain, style=self._button_style, **options)
        b.on_click(lambda _: on_click())
        return b

    def _set_page(self, index: int, page: Any) -> None:
        children = list(self.tabs.children)
        children[index] = page
        self.tabs.children = children

    # --- the editor tab, built when first opened (or first used from Python) --------------------
    def _edit_page(self) -> EditPage:
        if self._widget is None:
            self._build()
        if self._page is None:     # (building the widget may have built it)
            self._page = EditPage(self)
            self._set_page(1, self._page.box)
            self._refresh()
        return self._page

    @property
    def editor(self) -> Any:
        return self._edit_page().editor

    @property
    def status(self) -> Any:
        return self._edit_page().status

    @property
    def diff(self) -> Any:
        return self._edit_page().diff

    @property
    def recompile_button(self) -> Any:
        return self._edit_page().buttons["Recompile"]

    @property
    def reset_button(self) -> Any:
        return self._edit_page().buttons["Reset"]

    @property
    def check_button(self) -> Any:
        return self._edit_page().buttons["Check"]

    @property
    def solution_button(self) -> Any:
        return self._edit_page().buttons["Show solution"]

    def _on_tab(self, change: dict[str, Any]) -> None:
        index = change["new"]
        if index == 1:
            self._edit_page()
        elif index == 2:
            import ipywidgets as w
            if self.session.args is None:
                page = self._html("<i>give inputs (%%grad --run, or gradlab.show(df, *args)) "
                                  "to step through the backward pass</i>")
            else:
                try:
                    page = self.step_through().widget
                except Exception as e:  # show why instead of failing the widget callback
                    page = self._html(f"<pre>{html.escape(str(e))}</pre>")
            box = w.VBox([page], layout=self._plain)
            box.add_class("gradlab-step-box")
            self._set_page(2, box)
        elif index == 3:
            view = self._html(self.graph_html())
            view.add_class("gradlab-graph-view")
            self._set_page(3, view)

    def _on_edit(self, change: dict[str, Any]) -> None:
        self.editor_text = change["new"]

    def _refresh(self) -> None:
        if self._widget is None:
            return
        s = self.session
        hidden = self.exercise is not None and not self.exercise.revealed
        if hidden:
            self.code.value = ("<i>the generated code is hidden in an exercise: write the "
                               "backward pass in the exercise tab, then Check</i>")
        else:
            self.code.value = highlight_html(s.source)
        if self._page is None and (s.error or self.verdict is not None):
            self._edit_page()     # something to say in the editor tab: it calls back here
            return
        if self._page is not None:
            self._page.show(s, self.verdict, hidden)
        rows = []
        if self.stale:
            rows.append('<div style="color:#8a6d3b;font-style:italic">these results are from '
                        'the previous version: click Run</div>')
        for r in s.results:
            color = "#b00020" if r.error or r.diagnosis else "#1b5e20"
            body = html.escape(r.summary())
            rows.append(f'<pre class="gradlab-run" style="{MONO};color:{color}">{body}</pre>')
            if r.check is not None:
                rows.append(f'<pre style="{MONO}">{html.escape(r.check.table())}</pre>')
        self.result.value = "".join(rows)


class EditPage:
    """The editor tab: the code to edit, Recompile and Reset (Check and Show solution in an
    exercise), and what the last recompile said, with its diff against the generated code."""

    def __init__(self, panel: GradPanel) -> None:
        import ipywidgets as w
        self.editor = w.Textarea(value=panel.editor_text,
                                 layout=w.Layout(width="100%", height="320px"))
        self.editor.add_class("gradlab-editor")
        self.editor.observe(panel._on_edit, names="value")
        if panel.exercise is not None:
            self.buttons = {
                "Check": panel._button(panel.check_exercise, description="Check", icon="check",
                                       button_style="success",
                                       tooltip="compare your backward pass with gradlab's"),
                "Show solution": panel._button(panel.show_solution,
                                               description="Show solution", icon="eye")}
        else:
            self.buttons = {
                "Recompile": panel._button(panel.recompile, description="Recompile",
                                           icon="refresh", tooltip="build the edited code"),
                "Reset": panel._button(panel.reset, description="Reset",
                                       tooltip="back to the generated code")}
        self.status = panel._html()
        self.status.add_class("gradlab-status")
        self.diff = panel._html()
        self.diff.add_class("gradlab-diff")
        self.box = w.VBox([self.editor, w.HBox(list(self.buttons.values()), layout=panel._plain),
                           self.status, self.diff], layout=panel._plain)

    def show(self, s: GradSession, verdict: Any, hidden: bool) -> None:
        if verdict is not None:
            color = "#1b5e20" if verdict.ok else "#b00020"
            self.status.value = (f'<pre style="{MONO};color:{color}">'
                                 f'{html.escape(verdict.message)}</pre>')
        elif s.error:
            line = f" (line {s.error_line})" if s.error_line else ""
            self.status.value = (f'<pre style="{MONO};color:#b00020">'
                                 f'{html.escape(s.error)}{line}</pre>')
        else:
            self.status.value = ""
        show_diff = s.diff_text and not hidden   # a diff would give an exercise away
        self.diff.value = (f'<pre style="{MONO}">{_diff_html(s.diff_text)}</pre>'
                           if show_diff else "")


def _present_devices(framework: str) -> list[str]:
    """The devices ``framework`` has here; just the CPU when it cannot be asked (not
    installed, or failing to start)."""
    try:
        return available_devices(framework)
    except Exception:  # a menu must not break the panel: running says what is wrong
        return ["cpu"]


def _pick(wanted: str, devices: list[str]) -> str:
    """``wanted`` if the menu has it, else the first GPU for 'cuda'/'gpu', else the CPU."""
    if wanted in devices:
        return wanted
    gpus = [d for d in devices if d != "cpu"]
    if gpus and wanted.partition(":")[0] in ("cuda", "gpu"):
        return gpus[0]
    return "cpu"


def _diff_html(text: str) -> str:
    out = []
    for line in text.splitlines():
        header = line.startswith(("+++", "---", "@@"))
        color = "#757575" if header else "#1b5e20" if line.startswith("+") else (
            "#b00020" if line.startswith("-") else "")
        style = f' style="color:{color}"' if color else ""
        out.append(f"<span{style}>{html.escape(line)}</span>")
    return "\n".join(out)


def _terminal() -> bool:
    return "ipykernel" not in sys.modules


def show(df: Any, *args: Any, backend: str = "numpy", device: str = "cpu",
         check: bool = False, exercise: bool = False) -> GradPanel:
    """The ``%%grad`` panel for a generated function, from plain Python (optionally run on
    ``args`` right away; ``exercise=True`` hides the code and lets a student write it)."""
    session = GradSession(df, args or None)
    task = None
    if exercise:
        from ..workbench.exercises import Exercise
        task = Exercise(df, *args)
    panel = GradPanel(session, backend=backend, device=device, check=check, exercise=task)
    if args and not exercise:
        panel.run()
    return panel
