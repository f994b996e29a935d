"""The panel's editor tabs, built when first opened.

:class:`EditPage`: the code to edit, *Recompile*, *Recompile & Run* and *Reset*, one status
line (what failed and which version still runs, or which version runs now and where the
notebook finds it) and the diff of the running version against the generated code.

:class:`ExercisePage`: the student's code, *Check* and *Show solution*; the verdict, and once
revealed the solution beside the student's code.
"""
from __future__ import annotations

from typing import Any

from ..workbench.display import highlight_html
from . import views
from .editor import Editor


class EditPage:
    def __init__(self, panel: Any) -> None:
        import ipywidgets as w
        self.panel = panel
        self.editor = Editor(panel.editor_text, panel._on_edit)
        self.buttons = {
            "Recompile": panel._button(panel.recompile, description="Recompile",
                                       icon="refresh", tooltip="build the edited code"),
            "Recompile & Run": panel._button(
                panel._on_recompile_run_click, description="Recompile & Run", icon="play",
                tooltip="build the edited code, then run it",
                layout=w.Layout(width="auto")),
            "Reset": panel._button(panel.reset, description="Reset", icon="undo",
                                   tooltip="back to the generated code and its results")}
        _actions(self.editor, self.buttons, {"Recompile": panel.recompile,
                                             "Recompile & Run": panel._on_recompile_run_click,
                                             "Reset": panel.reset})
        self.status = panel._html()
        self.status.add_class("gradlab-status")
        self.diff = panel._html()
        self.diff.add_class("gradlab-diff")
        self.box = w.VBox([self.editor.widget,
                           w.HBox(list(self.buttons.values()), layout=panel._plain),
                           self.status, self.diff], layout=panel._plain)
        self.box.add_class("gradlab-edit-page")

    def show(self) -> None:
        s = self.panel.session
        self.status.value = views.status_html(s, self.panel.name)
        self.diff.value = views.diff_html(s)
        self.editor.mark_error(s.error_line, s.error_message)
        busy = bool(s.running)
        for button in self.buttons.values():
            button.disabled = busy


class ExercisePage:
    def __init__(self, panel: Any) -> None:
        import ipywidgets as w
        self.panel = panel
        self.editor = Editor(panel.editor_text, panel._on_edit,
                             layout=w.Layout(width="100%", flex="1 1 0", min_width="0"))
        self.solution = panel._html(layout=w.Layout(flex="1 1 0", min_width="0",
                                                    margin="0 0 0 12px"))
        self.solution.add_class("gradlab-solution")
        self.buttons = {
            "Check": panel._button(panel.check_exercise, description="Check", icon="check",
                                   button_style="success",
                                   tooltip="compare your backward pass with gradlab's"),
            "Show solution": panel._button(panel.show_solution, description="Show solution",
                                           icon="eye", tooltip="show gradlab's backward pass "
                                                               "beside yours")}
        _actions(self.editor, self.buttons, {"Check": panel.check_exercise,
                                             "Show solution": panel.show_solution})
        self.status = panel._html()
        self.status.add_class("gradlab-status")
        self.diff = self.status          # (an exercise shows no diff: it would be the answer)
        self.columns = w.HBox([self.editor.widget], layout=w.Layout(width="100%"))
        self.box = w.VBox([self.columns,
                           w.HBox(list(self.buttons.values()), layout=panel._plain),
                           self.status], layout=panel._plain)
        self.box.add_class("gradlab-exercise-page")

    def show(self) -> None:
        panel = self.panel
        verdict = panel.verdict
        if verdict is not None:
            color = views.GREEN if verdict.ok else views.RED
            self.status.value = views.pre(verdict.message, color, "gradlab-verdict",
                                          views.WRAP)
            self.editor.mark_error(None if verdict.ok else verdict.line,
                                   "" if verdict.ok else verdict.message)
        else:
            self.status.value = ""
            self.editor.mark_error(None)
        if panel.exercise.revealed and len(self.columns.children) == 1:
            self.solution.value = ("<div style='font-size:12px;margin:0 0 2px 0'><b>the "
                                   "solution</b> (gradlab's backward pass)</div>"
                                   + highlight_html(panel.session.generated_source))
            self.columns.children = (self.editor.widget, self.solution)


def _actions(editor: Editor, buttons: dict[str, Any], actions: dict[str, Any]) -> None:
    """The page's buttons as the editor's actions (named after their labels: "Recompile & Run"
    is ``recompile-run``), so that each click carries the code it acts on."""
    for label, action in actions.items():
        name = "-".join(part.lower() for part in label.replace("&", " ").split())
        editor.action_button(name, buttons[label], action)
