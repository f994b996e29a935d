"""Stepping through backpropagation one statement at a time: the current backward line and the
forward line it differentiates side by side, and every variable with its gradient so far.

``gradlab.step(df, *args)`` runs the generated code once under :func:`gradlab.trace`, keeping
the values, then walks its backward steps; nothing is recomputed while stepping. Steps count
from 1, as the text says ("step 1 of 3"). The output's gradient is the seed from the start (it
is where backpropagation begins); arrays of up to :data:`SMALL` entries show their entries, the
entries the current step changed marked, larger ones their shape and norm (``|·|``, explained
by :data:`LEGEND`).
"""
from __future__ import annotations

import html
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from .display import highlight_html, widgets_available
from .leafcalls import leaf_call
from .tracing import Step, TraceReport, Value, require_generated, trace

#: Arrays with at most this many entries show them all.
SMALL = 12
LEGEND = ("(3, 2) |·|=0.51 is an array of shape (3, 2) whose norm √(Σ x²) is 0.51; "
          "arrays of up to 12 entries show them, those the current step changed marked")
_CHANGED = "background:#fff176;font-weight:bold"
#: Code longer than 2 * AROUND + 1 lines is shown around the current line: an HTML view
#: cannot scroll itself to it, and a code box shows ~29 lines.
AROUND = 13


@dataclass
class Row:
    """A variable of the function and its gradient, as known at the current step."""

    name: str
    value: Value | None
    adjoint: Value | None
    #: the gradient's previous value (before the current step), to mark what changed
    before: Value | None = None
    #: the gradient is the seed: the output's gradient, where backpropagation starts
    seed: bool = False
    #: the current step assigned this row's gradient
    current: bool = False


class Stepper:
    def __init__(self, df: Any, *args: Any, **kwargs: Any) -> None:
        self.df = df
        require_generated(df, "step")
        leaves = leaf_call(df, args, {k: v for k, v in kwargs.items() if k != "seed"})
        #: the code that runs: for container arguments, the code taking their leaves, whose
        #: parameters, seed and value are the rows' names
        self.code = leaves.df if leaves is not None else df
        self.report: TraceReport = trace(df, keep_values=True)(*args, **kwargs)
        self.forward_steps = [s for s in self.report.steps if s.section == "forward"]
        self.steps = self.report.backward()
        self.index = 0
        try:
            lines, first = inspect.getsourcelines(df.fn)
        except (OSError, TypeError):
            lines, first = [], 1
        self.user_lines = [line.rstrip("\n") for line in lines]
        self.user_first_line = first
        self.seed_name: str | None = getattr(self.code, "seed_name", None)
        self.output_name: str | None = getattr(self.code, "value_name", None)
        self.listeners: list[Any] = []
        self._widget: Any = None

    # --- moving (``index`` is 0-based; what is shown counts from 1) -----------------------------
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
    def number(self) -> int:
        """The current step, counted from 1 (as shown)."""
        return self.index + 1

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

    @property
    def current_names(self) -> list[str]:
        """The gradients the current step assigns (``dxW``)."""
        step = self.current
        return [v.name for v in step.values] if step is not None else []

    # --- what is known so far -----------------------------------------------------------------
    def rows(self) -> list[Row]:
        """Every forward value, with the gradient it has received up to the current step; the
        output's gradient is the seed from the first step on."""
        values: dict[str, Value] = {}
        seed_value = None
        for s in self.forward_steps:
            for v in s.values:
                if v.name == self.seed_name:
                    seed_value = v
                else:
                    values[v.name] = v
        adjoints: dict[str, Value] = {}
        before: dict[str, Value] = {}
        if seed_value is not None and self.seed_name:
            adjoints[self.seed_name] = seed_value
        for s in self.steps[:self.index + 1]:
            for v in s.values:
                if v.name in adjoints:
                    before[v.name] = adjoints[v.name]
                adjoints[v.name] = v
        current = set(self.current_names)
        rows = []
        params = list(self.code.params)
        for name in params + [n for n in values if n not in params]:
            if name == self.seed_name:
                continue
            key = self._adjoint_name(name)
            adjoint = adjoints.get(key)
            is_seed = key == self.seed_name and adjoint is seed_value and adjoint is not None
            rows.append(Row(name, values.get(name), adjoint,
                            before.get(key) if key in current else None, is_seed,
                            key in current))
        return rows

    def _adjoint_name(self, name: str) -> str:
        if name == self.output_name and self.seed_name:
            return self.seed_name
        return f"d{name}"

    def table(self) -> str:
        lines = [f"{'variable':14s} {'value':32s} {'gradient so far':32s}"]
        for r in self.rows():
            gradient = _text(r.adjoint) + ("  (the seed)" if r.seed else "") + (
                "  ← this step" if r.current else "")
            lines.append(f"{r.name:14s} {_text(r.value):32s} {gradient}")
        return "\n".join(lines) + f"\n\n{LEGEND}"

    def text(self) -> str:
        step = self.current
        if step is None:
            return "nothing to step through: no backward statements ran"
        line, code = self.forward_line
        return (f"step {self.number} of {len(self.steps)}\n"
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
        left = code_around(user_source, user_hl, self.user_first_line) if user_source else ""
        right = code_around(self.report.source, code_hl)
        header = html.escape(self.text().split("\n\n")[0]).replace("\n", "<br>")
        cell = "padding:1px 8px;vertical-align:top;font-family:monospace"
        rows = []
        for r in self.rows():
            note = " <i style='color:#5c6bc0'>(the seed)</i>" if r.seed else ""
            style = " style='background:#fffde7'" if r.current else ""
            rows.append(f"<tr{style}><td style='{cell}'>{html.escape(r.name)}</td>"
                        f"<td style='{cell}'>{_html(r.value)}</td>"
                        f"<td style='{cell}'>{_html(r.adjoint, r.before, r.current)}{note}</td>"
                        f"</tr>")
        # (its own line height: an ipywidgets HTML's 28 px would spread each wrapped row)
        table = (f"<table class='gradlab-step-table' style='border-collapse:collapse;"
                 f"font-size:12px;margin-top:6px;line-height:1.35'><tr>"
                 f"<th style='text-align:left;{cell}'>variable</th>"
                 f"<th style='text-align:left;{cell}'>value</th>"
                 f"<th style='text-align:left;{cell}'>gradient so far</th></tr>"
                 f"{''.join(rows)}</table>"
                 f"<div class='gradlab-legend' style='font-size:11px;color:#616161;margin:4px 0'>"
                 f"{html.escape(LEGEND)}</div>")
        return (f"<div class='gradlab-step'><div style='font-size:12px;margin:4px 0'>{header}"
                f"</div><div style='display:flex;gap:12px'><div style='flex:1;min-width:0'>"
                f"<b>your function</b>{left}</div><div style='flex:1;min-width:0'>"
                f"<b>backward pass</b>{right}</div></div>{table}</div>")

    @property
    def widget(self) -> Any:
        if self._widget is None:
            import ipywidgets as w
            n = max(len(self.steps), 1)
            self.slider = w.IntSlider(value=self.number, min=1, max=n, description="step",
                                      continuous_update=False, readout=True)
            self.prev_button = w.Button(description="Previous", icon="step-backward")
            self.next_button = w.Button(description="Next", icon="step-forward")
            self.view = w.HTML(self.html())
            self.slider.observe(lambda change: self.go(change["new"] - 1), names="value")
            self.prev_button.on_click(lambda _: self.previous())
            self.next_button.on_click(lambda _: self.next())
            self.listeners.append(self._refresh)
            self._widget = w.VBox([w.HBox([self.prev_button, self.next_button, self.slider]),
                                   self.view])
            self._widget.add_class("gradlab-stepper")
        return self._widget

    def _refresh(self) -> None:
        if self._widget is not None:
            if self.slider.value != self.number:
                self.slider.value = self.number
            self.view.value = self.html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if widgets_available():
            from ..kernel_ext.reopen import live_bundle
            return live_bundle(self.widget, self._static_bundle, self)
        return self._static_bundle()

    def _static_bundle(self) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": self.html()}


def code_around(source: str, lit: tuple[int, ...], first_number: int = 1) -> str:
    """``source`` highlighted with its line ``lit`` lit up; when it is long, only the lines
    around that one, numbered (from ``first_number`` for the source's first line), with how
    many lines are left out above and below."""
    lines = source.split("\n")
    if not lit or len(lines) <= 2 * AROUND + 1:
        return highlight_html(source, lit)
    first = max(1, min(lit[0] - AROUND, len(lines) - 2 * AROUND))
    last = first + 2 * AROUND
    part = highlight_html("\n".join(lines[first - 1:last]), (lit[0] - first + 1,),
                          first + first_number - 1)
    return _left_out(first - 1, "above") + part + _left_out(len(lines) - last, "below")


def _left_out(count: int, where: str) -> str:
    if count <= 0:
        return ""
    return (f"<div class='gradlab-left-out' style='font-size:11px;color:#757575'>… {count} "
            f"line{'s' if count != 1 else ''} {where}</div>")


def _entries(v: Value) -> np.ndarray | None:
    """The entries of a small array (float64, flattened), or None for a large or odd one."""
    if v.raw is None or not v.finite or v.dtype in ("list", "dict"):
        return None
    size = int(np.prod(v.shape)) if v.shape else 1
    if size > SMALL:
        return None
    from ..tensor.convert import to_float64_numpy
    try:
        return np.asarray(to_float64_numpy(v.raw), dtype=np.float64).ravel()
    except Exception:  # a value that does not convert is shown by shape and norm
        return None


def _number(x: float) -> str:
    return f"{x:.4g}"


def _text(v: Value | None) -> str:
    if v is None:
        return "·"
    if v.dtype in ("dict", "list"):     # a model's parameters' gradient: their count, norm
        return f"{v.head} |·|={v.norm:.4g}" + ("" if v.finite else " NaN/Inf!")
    if v.shape in ((), (1,)) and v.finite:
        entries = _entries(v)
        return _number(float(entries[0])) if entries is not None and entries.size else (
            v.preview.strip("[]"))
    entries = _entries(v)
    if entries is not None:
        return f"{v.shape} [{', '.join(_number(x) for x in entries)}]"
    flag = "" if v.finite else " NaN/Inf!"
    return f"{v.shape} |·|={v.norm:.4g}{flag}"


def _html(v: Value | None, before: Value | None = None, current: bool = False) -> str:
    """A value as HTML: entries of a small array, those the current step changed marked."""
    if v is None:
        return "·"
    entries = _entries(v)
    if entries is None or v.shape in ((), (1,)):
        text = html.escape(_text(v))
        return f"<span style='{_CHANGED}'>{text}</span>" if current else text
    old = _entries(before) if before is not None else None
    if old is not None and old.shape != entries.shape:
        old = None
    parts = []
    for i, x in enumerate(entries):
        changed = current and (old is None or bool(old[i] != x))
        text = html.escape(_number(x))
        parts.append(f"<span style='{_CHANGED}'>{text}</span>" if changed else text)
    return f"{html.escape(str(v.shape))} [{', '.join(parts)}]"


def step(df: Any, *args: Any, **kwargs: Any) -> Stepper:
    """Step through ``df``'s backward pass on ``args`` (keyword arguments and ``seed=`` as a
    call of ``df`` takes them; see :class:`Stepper`)."""
    return Stepper(df, *args, **kwargs)
