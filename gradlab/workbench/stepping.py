"""Stepping through backpropagation one statement at a time: the current backward line and the
forward line it differentiates side by side, and every variable with its gradient so far.

``gradlab.step(df, *args)`` runs the generated code once under :func:`gradlab.trace`, keeping
the values, then walks its backward steps; nothing is recomputed while stepping.
"""
from __future__ import annotations

import html
import inspect
from dataclasses import dataclass
from typing import Any

from .display import highlight_html, widgets_available
from .tracing import Step, TraceReport, Value, trace


@dataclass
class Row:
    """A variable of the function and its gradient, as known at the current step."""

    name: str
    value: Value | None
    adjoint: Value | None


class Stepper:
    def __init__(self, df: Any, *args: Any) -> None:
        self.df = df
        self.report: TraceReport = trace(df, keep_values=True)(*args)
        self.forward_steps = [s for s in self.report.steps if s.section == "forward"]
        self.steps = self.report.backward()
        self.index = 0
        try:
            lines, first = inspect.getsourcelines(df.fn)
        except (OSError, TypeError):
            lines, first = [], 1
        self.user_lines = [line.rstrip("\n") for line in lines]
        self.user_first_line = first
        self.listeners: list[Any] = []
        self._widget: Any = None

    # --- moving -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.steps)

    def go(self, index: int) -> Step | None:
        if not self.steps:
            return None
        self.index = max(0, min(index, len(self.steps) - 1))
        for listener in self.listeners:
            listener()
        return self.current

    def next(self) -> Step | None:
        return self.go(self.index + 1)

    def previous(self) -> Step | None:
        return self.go(self.index - 1)

    @property
    def current(self) -> Step | None:
        return self.steps[self.index] if self.steps else None

    @property
    def forward_line(self) -> tuple[int, str]:
        """The user's line the current backward step differentiates (file line, text)."""
        step = self.current
        if step is None or not step.user_line:
            return 0, ""
        return step.user_line, step.user_text

    # --- what is known so far -----------------------------------------------------------------
    def rows(self) -> list[Row]:
        """Every forward value, with the gradient it has received up to the current step."""
        values: dict[str, Value] = {}
        for s in self.forward_steps:
            for v in s.values:
                values[v.name] = v
        adjoints: dict[str, Value] = {}
        for s in self.steps[:self.index + 1]:
            for v in s.values:
                adjoints[v.name] = v
        rows = []
        for name, value in values.items():
            adjoint = adjoints.get(f"d{name}")
            rows.append(Row(name, value, adjoint))
        for name in self.df.params:
            if name not in values:
                rows.insert(0, Row(name, None, adjoints.get(f"d{name}")))
        return rows

    def table(self) -> str:
        lines = [f"{'variable':14s} {'value':28s} {'gradient':28s}"]
        for r in self.rows():
            lines.append(f"{r.name:14s} {_cell(r.value):28s} {_cell(r.adjoint):28s}")
        return "\n".join(lines)

    def text(self) -> str:
        step = self.current
        if step is None:
            return "nothing to step through: no backward statements ran"
        line, code = self.forward_line
        return (f"step {self.index + 1} of {len(self.steps)}\n"
                f"backward line {step.line}: {step.code.strip()}\n"
                f"differentiates your line {line}: {code}\n\n{self.table()}")

    def __repr__(self) -> str:
        return self.text()

    # --- views --------------------------------------------------------------------------------
    def html(self) -> str:
        step = self.current
        user_source = "\n".join(self.user_lines)
        user_hl: tuple[int, ...] = ()
        code_hl: tuple[int, ...] = ()
        if step is not None:
            code_hl = (step.line,)
            if step.user_line:
                user_hl = (step.user_line - self.user_first_line + 1,)
        left = highlight_html(user_source, user_hl) if user_source else ""
        right = highlight_html(self.report.source, code_hl)
        header = html.escape(self.text().split("\n\n")[0]).replace("\n", "<br>")
        rows = "".join(
            f"<tr><td style='padding:0 8px'><code>{html.escape(r.name)}</code></td>"
            f"<td style='padding:0 8px'>{html.escape(_cell(r.value))}</td>"
            f"<td style='padding:0 8px'>{html.escape(_cell(r.adjoint))}</td></tr>"
            for r in self.rows())
        table = (f"<table style='border-collapse:collapse;font-size:12px'><tr>"
                 f"<th style='text-align:left;padding:0 8px'>variable</th>"
                 f"<th style='text-align:left;padding:0 8px'>value</th>"
                 f"<th style='text-align:left;padding:0 8px'>gradient so far</th></tr>"
                 f"{rows}</table>")
        return (f"<div class='gradlab-step'><div style='font-size:12px;margin:4px 0'>{header}"
                f"</div><div style='display:flex;gap:12px'><div style='flex:1;min-width:0'>"
                f"<b>your function</b>{left}</div><div style='flex:1;min-width:0'>"
                f"<b>backward pass</b>{right}</div></div>{table}</div>")

    @property
    def widget(self) -> Any:
        if self._widget is None:
            import ipywidgets as w
            self.slider = w.IntSlider(value=0, min=0, max=max(len(self.steps) - 1, 0),
                                      description="step", continuous_update=False)
            self.prev_button = w.Button(description="Previous")
            self.next_button = w.Button(description="Next")
            self.view = w.HTML(self.html())
            self.slider.observe(lambda change: self.go(change["new"]), names="value")
            self.prev_button.on_click(lambda _: self.previous())
            self.next_button.on_click(lambda _: self.next())
            self.listeners.append(self._refresh)
            self._widget = w.VBox([w.HBox([self.prev_button, self.next_button, self.slider]),
                                   self.view])
            self._widget.add_class("gradlab-stepper")
        return self._widget

    def _refresh(self) -> None:
        if self._widget is not None:
            if self.slider.value != self.index:
                self.slider.value = self.index
            self.view.value = self.html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        if widgets_available():
            bundle.update(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = self.text()
        bundle.setdefault("text/html", self.html())
        return bundle


def _cell(v: Value | None) -> str:
    if v is None:
        return "·"
    if v.shape in ((), (1,)) and v.finite:
        return f"{v.preview.strip('[]')}"
    flag = "" if v.finite else " NaN/Inf!"
    return f"{v.shape} |·|={v.norm:.4g}{flag}"


def step(df: Any, *args: Any) -> Stepper:
    """Step through ``df``'s backward pass on ``args`` (see :class:`Stepper`)."""
    return Stepper(df, *args)
