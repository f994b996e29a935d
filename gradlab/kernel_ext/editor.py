"""The panel's code editor: CodeMirror 6 (line numbers, Python highlighting, Tab indents, the
error line marked) as an anywidget whose JavaScript ships with gradlab (``static/editor.js``,
built from ``js/src/editor.js``; nothing is fetched at run time), and a plain Textarea beside it.

The Textarea is the fallback: it is the only editor where anywidget is not installed, and where
it is but the front end cannot load the module (a kernel whose environment has anywidget,
served by a JupyterLab without its extension), it stays visible under the error ipywidgets
shows. Once CodeMirror is on screen it marks itself ``gradlab-cm-ready`` and :data:`CSS` hides
the Textarea. Both hold the same text.

The page's buttons (Recompile, Check...) are the editor's actions: where CodeMirror is on
screen it sends their clicks itself, each with the code it acts on, because a click and a
separate value update may reach the kernel in either order (JupyterLab 4 can give each
widget's messages their own kernel subshell, that is, thread).
"""
from __future__ import annotations

from typing import Any

from .reopen import STATIC, anywidget_available

#: Hides the fallback once CodeMirror is on screen; monospace for the Textarea otherwise.
CSS = (".gradlab-panel:has(.gradlab-cm-ready) .gradlab-editor-fallback {display: none;} "
       ".gradlab-editor-fallback textarea {font-family: monospace; font-size: 12px;}")

_editor_class: Any = None


def editor_class() -> Any:
    """The CodeMirror widget class (made on first use: it needs anywidget)."""
    global _editor_class
    if _editor_class is None:
        import anywidget
        import traitlets

        class CodeEditor(anywidget.AnyWidget):  # type: ignore[misc]
            """CodeMirror 6 on the text ``value``; ``error_line`` (1-based, 0: none) is marked
            in red with ``error_message`` on its gutter marker."""

            _esm = STATIC / "editor.js"
            value = traitlets.Unicode("").tag(sync=True)
            error_line = traitlets.Int(0).tag(sync=True)
            error_message = traitlets.Unicode("").tag(sync=True)
            read_only = traitlets.Bool(False).tag(sync=True)

        _editor_class = CodeEditor
    return _editor_class


class Editor:
    """The code editor of a panel tab: ``widget`` to place, ``value`` to read and write,
    ``mark_error(line, message)``. ``code`` is the CodeMirror widget (None without anywidget),
    ``fallback`` the Textarea."""

    def __init__(self, value: str, on_change: Any, layout: Any = None) -> None:
        import ipywidgets as w
        self._on_change = on_change
        self.fallback = w.Textarea(value=value, layout=w.Layout(width="100%", height="320px"))
        self.fallback.add_class("gradlab-editor")
        self.fallback.add_class("gradlab-editor-fallback")
        self.fallback.observe(self._changed, names="value")
        self.code: Any = None
        parts = [self.fallback]
        if anywidget_available():
            self.code = editor_class()(value=value, layout=w.Layout(width="100%"))
            self.code.add_class("gradlab-editor")
            self.code.add_class("gradlab-code-editor")
            self.code.observe(self._changed, names="value")
            parts = [self.code, self.fallback]
        self.widget = w.VBox(parts, layout=layout or w.Layout(width="100%"))
        #: the page's buttons by action name; see :meth:`action_button`
        self.actions: dict[str, Any] = {}
        if self.code is not None:
            self.code.on_msg(self._message)

    def action_button(self, name: str, button: Any, action: Any) -> Any:
        """Make ``button`` an action of this editor: where CodeMirror is on screen, its click is
        sent by the editor with the code it acts on (one message, so the action cannot run on
        the code from before the last keystrokes, as it could if the text and the click came
        separately: JupyterLab may hand each widget's messages to its own kernel thread); in
        the fallback the button's own click runs ``action``."""
        button.add_class("gradlab-action")
        button.add_class(f"gradlab-action-{name}")
        self.actions[name] = action
        return button

    def _message(self, _widget: Any, content: Any, _buffers: Any = None) -> None:
        if not isinstance(content, dict) or content.get("action") not in self.actions:
            return
        text = content.get("text")
        if isinstance(text, str):
            self.value = text
            self._on_change(text)
        self.actions[content["action"]]()

    @property
    def value(self) -> str:
        return self.fallback.value  # type: ignore[no-any-return]

    @value.setter
    def value(self, text: str) -> None:
        for widget in (self.code, self.fallback):
            if widget is not None and widget.value != text:
                widget.value = text

    def _changed(self, change: dict[str, Any]) -> None:
        text = change["new"]
        self.value = text            # the other editor follows
        self._on_change(text)

    def mark_error(self, line: int | None, message: str = "") -> None:
        if self.code is not None:
            self.code.error_message = message
            self.code.error_line = line or 0

    def set_read_only(self, read_only: bool) -> None:
        if self.code is not None:
            self.code.read_only = read_only
        self.fallback.disabled = read_only
