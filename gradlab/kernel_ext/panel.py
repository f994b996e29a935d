"""The ``%%grad`` panel: highlighted backward code, an editor, Recompile, backend and device,
Run, and where it ran and how long it took.

A :class:`GradPanel` is a view of a :class:`gradlab.session.GradSession`. Its methods
(``recompile``, ``run``) and state (``editor_text``, ``error``, ``result_line``...) work without
any front end, so tests drive it headless; ``.widget`` builds the ipywidgets lazily, and the
text rendering serves terminal IPython and front ends without widgets.
"""
from __future__ import annotations

import html
import itertools
import sys
from typing import Any

from ..display import highlight_html, highlight_terminal
from ..session import GradSession, RunResult

_ids = itertools.count(1)


class GradPanel:
    def __init__(self, session: GradSession, backend: str = "numpy", device: str = "cpu",
                 check: bool = False) -> None:
        self.session = session
        self.backend = backend
        self.device = device
        self.check = check
        self.editor_text = session.source
        self._widget: Any = None
        self._id = next(_ids)
        session.listeners.append(self._refresh)

    # --- what the panel does (usable without widgets) -------------------------------------------
    def recompile(self, text: str | None = None) -> bool:
        """Build the edited code; on failure the previous version stays and ``error`` says why."""
        if text is not None:
            self.editor_text = text
            if self._widget is not None:
                self.editor.value = text
        return self.session.recompile(self.editor_text)

    def run(self, backend: str | None = None, device: str | None = None) -> list[RunResult]:
        if backend is not None:
            self.backend = backend
        if device is not None:
            self.device = device
        return self.session.run(self.backend, self.device, check=self.check)

    def reset(self) -> None:
        self.editor_text = self.session.generated_source
        if self._widget is not None:
            self.editor.value = self.editor_text
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

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        if _widgets_available():
            bundle.update(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = self.text(color="always" if _terminal() else "never")
        return bundle

    # --- widgets ------------------------------------------------------------------------------
    @property
    def widget(self) -> Any:
        if self._widget is None:
            self._build()
        return self._widget

    def _build(self) -> None:
        import ipywidgets as w
        klass = f"gradlab-panel-{self._id}"
        self.code = w.HTML(layout=w.Layout(width="100%"))
        self.editor = w.Textarea(value=self.editor_text,
                                 layout=w.Layout(width="100%", height="320px"))
        self.editor.add_class("gradlab-editor")
        self.editor.observe(self._on_edit, names="value")
        self.recompile_button = w.Button(description="Recompile", icon="refresh",
                                         tooltip="build the edited code")
        self.reset_button = w.Button(description="Reset", tooltip="back to the generated code")
        self.recompile_button.on_click(lambda _: self.recompile())
        self.reset_button.on_click(lambda _: self.reset())
        options = ["numpy", "torch", "tensorflow", "jax", "all"]
        self.backend_select = w.Dropdown(options=options, value=self.backend
                                         if self.backend in options else "numpy",
                                         description="backend", layout=w.Layout(width="200px"))
        self.device_select = w.Dropdown(options=["cpu", "cuda", "gpu"], value=self.device
                                        if self.device in ("cpu", "cuda", "gpu") else "cpu",
                                        description="device", layout=w.Layout(width="180px"))
        self.run_button = w.Button(description="Run", icon="play", button_style="primary")
        self.run_button.on_click(lambda _: self.run(self.backend_select.value,
                                                    self.device_select.value))
        self.status = w.HTML()
        self.diff = w.HTML()
        self.result = w.HTML()
        self.result.add_class("gradlab-result")
        style = w.HTML(f"<style>.{klass} .gradlab-editor textarea {{font-family: monospace; "
                       f"font-size: 12px;}}</style>")
        editor_box = w.VBox([self.editor, w.HBox([self.recompile_button, self.reset_button]),
                             self.status, self.diff])
        tabs = w.Tab(children=[self.code, editor_box])
        tabs.set_title(0, "generated code")
        tabs.set_title(1, "edit")
        controls = w.HBox([self.backend_select, self.device_select, self.run_button])
        self._widget = w.VBox([style, tabs, controls, self.result])
        self._widget.add_class(klass)
        self._widget.add_class("gradlab-panel")
        self._refresh()

    def _on_edit(self, change: dict[str, Any]) -> None:
        self.editor_text = change["new"]

    def _refresh(self) -> None:
        if self._widget is None:
            return
        s = self.session
        self.code.value = highlight_html(s.source)
        if s.error:
            line = f" (line {s.error_line})" if s.error_line else ""
            self.status.value = (f'<pre style="color:#b00020;margin:4px 0">'
                                 f'{html.escape(s.error)}{line}</pre>')
        else:
            self.status.value = ""
        self.diff.value = (f'<pre style="margin:4px 0;font-size:12px">'
                           f'{_diff_html(s.diff_text)}</pre>' if s.diff_text else "")
        rows = []
        for r in s.results:
            color = "#b00020" if r.error else "#1b5e20"
            body = html.escape(r.summary())
            rows.append(f'<pre class="gradlab-run" style="margin:2px 0;color:{color}">{body}'
                        f'</pre>')
            if r.check is not None:
                rows.append(f'<pre style="margin:2px 0">{html.escape(r.check.table())}</pre>')
        self.result.value = "".join(rows)


def _diff_html(text: str) -> str:
    out = []
    for line in text.splitlines():
        color = "#1b5e20" if line.startswith("+") else "#b00020" if line.startswith("-") else ""
        style = f' style="color:{color}"' if color else ""
        out.append(f"<span{style}>{html.escape(line)}</span>")
    return "\n".join(out)


def _widgets_available() -> bool:
    """Widgets render only in a kernel with a front end (not in terminal IPython)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _terminal() -> bool:
    return "ipykernel" not in sys.modules


def show(df: Any, *args: Any, backend: str = "numpy", device: str = "cpu",
         check: bool = False) -> GradPanel:
    """The ``%%grad`` panel for a generated function, from plain Python (optionally run on
    ``args`` right away)."""
    session = GradSession(df, args or None)
    panel = GradPanel(session, backend=backend, device=device, check=check)
    if args:
        panel.run()
    return panel
