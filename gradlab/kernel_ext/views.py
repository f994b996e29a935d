"""HTML for what a panel says: its header, a run's results, a check table, the comparison of
several frameworks, an edit's status and diff, what a gradient saves for its backward pass.
Plain functions of a session's state, shared by the live widget and the static view a saved
notebook keeps; no widgets here."""
from __future__ import annotations

import html
from typing import Any

from ..workbench.session import GradSession, RunResult
from ..workbench.timing import format_ms

#: Inline style for text blocks: JupyterLab's own CSS would otherwise set a proportional font.
MONO = "margin:2px 0;font-family:monospace;font-size:12px;white-space:pre"
#: For messages: wrapped at spaces, never inside a word
WRAP = ";white-space:pre-wrap;word-break:normal;overflow-wrap:break-word"
RED, GREEN, AMBER, GREY = "#b00020", "#1b5e20", "#8a6d3b", "#757575"
#: For tables: their own line height (an ipywidgets HTML sets one of 28 px, the height of a
#: button, which spreads each wrapped row over three lines)
TABLE = "border-collapse:collapse;line-height:1.35"


def pre(text: str, color: str = "", css_class: str = "", extra: str = "") -> str:
    style = f"{MONO};color:{color}" if color else MONO
    klass = f' class="{css_class}"' if css_class else ""
    return f'<pre{klass} style="{style}{extra}">{html.escape(text)}</pre>'


def header_html(text: str) -> str:
    return (f'<div class="gradlab-header" style="font-size:12px;margin:2px 0 4px 0">'
            f'<code>{html.escape(text)}</code></div>')


def results_html(session: GradSession, hidden: bool = False) -> str:
    """The last run: one block, or one table for several frameworks; a note when the results
    come from another version than the active one."""
    if session.running:
        return (f'<div class="gradlab-busy" style="color:{GREY};font-style:italic">running '
                f'{html.escape(session.running)}…</div>')
    if hidden:
        return ""
    rows = []
    if session.stale:
        version = "the generated code" if session.results_of is session.df else "an edit"
        rows.append(f'<div class="gradlab-stale" style="color:{AMBER};font-style:italic">these '
                    f'results come from {version}, not the version now active: Run</div>')
    results = session.results
    if len(results) > 1:
        rows.append(comparison_html(session))
    else:
        for r in results:
            rows.append(run_html(r))
    for r in results:
        if r.check is not None:
            rows.append(check_html(r.check))
    return "".join(rows)


def run_html(r: RunResult) -> str:
    if r.error:
        return pre(r.line, RED, "gradlab-run")
    body = "\n".join(r.value_lines() + [r.line])
    parts = [pre(body, GREEN if r.ok or r.check is not None else RED, "gradlab-run")]
    problems = r.shape_problems + ([r.diagnosis] if r.diagnosis else [])
    if problems:
        parts.append(pre("\n".join(problems), RED, "gradlab-warning"))
    if r.note:
        parts.append(pre(f"note: {r.note}", GREY, "gradlab-note"))
    return "".join(parts)


def comparison_html(session: GradSession) -> str:
    """Several frameworks: the value and gradient once, then one row per framework."""
    results = session.results
    first = next((r for r in results if not r.error), None)
    parts = []
    if first is not None:
        parts.append(pre("\n".join(first.value_lines()) + f"   (from {first.framework})",
                         css_class="gradlab-run-values"))
    cell = "padding:1px 10px 1px 0;text-align:left;font-family:monospace;font-size:12px"
    head = "".join(f"<th style='{cell}'>{html.escape(h)}</th>" for h in (
        "framework", "device", "median", "first call",
        f"max |Δ| vs {results[0].framework}", ""))
    rows = []
    for r in results:
        if r.error:
            cells = [r.framework, r.device, "", "", "", "error: " + r.error]
            color = RED
        else:
            t = r.timing
            status = "; ".join(r.shape_problems) or ("NaN/Inf" if r.diagnosis else "ok")
            cells = [r.framework, r.device, format_ms(t.median_ms) if t else "",
                     format_ms(t.first_ms) if t else "",
                     "—" if r.difference is None else f"{r.difference:.2e}", status]
            color = GREEN if status == "ok" else RED
        rows.append(f"<tr class='gradlab-run' style='color:{color}'>" + "".join(
            f"<td style='{cell}'>{html.escape(c)}</td>" for c in cells) + "</tr>")
    parts.append(f"<table class='gradlab-comparison' style='{TABLE}'>"
                 f"<tr>{head}</tr>{''.join(rows)}</table>")
    return "".join(parts)




def check_html(report: Any) -> str:
    """The check table, each row green (ok), red (MISMATCH) or grey (not compared, and why).
    Names and numbers stay on one line; only the reason wraps."""
    cell = "padding:1px 10px 1px 0;text-align:left;font-family:monospace;font-size:12px"
    head = "".join(f"<th style='{cell};white-space:nowrap'>{h}</th>" for h in (
        "reference", "wrt", "max abs err", "max rel err", ""))
    rows = []
    for row in report.rows:
        if row.max_abs_error is None:
            cells, color = [row.reference, row.parameter, "n/a", "", row.note], GREY
        else:
            verdict = "ok" if row.ok else "MISMATCH"
            cells = [row.reference, row.parameter, f"{row.max_abs_error:.2e}",
                     f"{row.max_rel_error:.2e}", verdict]
            color = GREEN if row.ok else RED
        klass = "gradlab-mismatch" if color == RED else "gradlab-check-row"
        rows.append(f"<tr class='{klass}' style='color:{color}'>" + "".join(
            f"<td style='{cell};white-space:{'normal' if last else 'nowrap'}'>"
            f"{html.escape(c)}</td>" for last, c in zip((0, 0, 0, 0, 1), cells)) + "</tr>")
    return (f"<table class='gradlab-check' style='{TABLE};margin-top:4px'>"
            f"<tr>{head}</tr>{''.join(rows)}</table>")


def saved_html(report: Any) -> str:
    """What a gradient saves for its backward pass (a :class:`gradlab.saved.SavedReport`): one
    row per saved value, with the line of the user's code that computes it and the backward
    lines that read it; once measured on a run's inputs, its shape, dtype, bytes per step,
    steps and bytes, and the total."""
    if not report.values:
        return pre(f"{report.function} saves nothing for its backward pass", GREY,
                   "gradlab-saved-none")
    cell = "padding:1px 10px 1px 0;text-align:left;vertical-align:top;font-family:monospace;" \
           "font-size:12px"
    heads = ["saved", "computed at (your line)", "read by (backward lines)", "shape", "dtype",
             "bytes/step", "steps", "bytes"]
    head = "".join(f"<th style='{cell};white-space:nowrap'>{h}</th>" for h in heads)
    rows = []
    for v in report.values:
        where = f"{v.user_line}: {v.user_text}" if v.user_line else "-"
        reads = "<br>".join(html.escape(f"{n}: {t}") for n, t in v.read_by) or "-"
        if report.measured:
            sizes = [str(v.shape), str(v.dtype), "-" if v.bytes_per_step is None
                     else f"{v.bytes_per_step:g}", str(v.steps), str(v.total_bytes)]
        else:
            sizes = ["", "", "", "", ""]
        cells = [html.escape(v.name), html.escape(where), reads] + [
            html.escape(c) for c in sizes]
        rows.append("<tr class='gradlab-saved-row'>" + "".join(
            f"<td style='{cell};white-space:{'normal' if i == 2 else 'nowrap'}'>{c}</td>"
            for i, c in enumerate(cells)) + "</tr>")
    if report.measured:
        foot = pre(f"total: {report.total_bytes} bytes saved for the backward pass",
                   css_class="gradlab-saved-total")
    else:
        foot = pre("Run to see each value's shape, dtype and bytes, and the total", GREY,
                   "gradlab-saved-total")
    return (f"<table class='gradlab-saved' style='{TABLE}'><tr>{head}</tr>{''.join(rows)}"
            f"</table>{foot}")


def status_html(session: GradSession, bound_name: str | None) -> str:
    """One line after Recompile: what went wrong and which version still runs, or which one
    now runs and where the notebook finds it."""
    if session.error_line is not None or session.error_message:
        where = f"line {session.error_line}: " if session.error_line else ""
        running = ("your previous edit (" + session.version() + ")" if session.edited
                   else "the generated code")
        return pre(f"✗ {where}{session.error_message or session.error} · still running: "
                   f"{running}", RED, "gradlab-status-line", WRAP)
    if session.edited:
        where = f" · {bound_name} in your notebook is this version" if bound_name else (
            " · panel.session.active is this version")
        return pre(f"✓ compiled ({session.version()}){where}", GREEN, "gradlab-status-line",
                   WRAP)
    return ""


def diff_html(session: GradSession) -> str:
    if not session.diff_text:
        return ""
    lines = []
    for line in session.diff_text.splitlines():
        head = line.startswith(("+++", "---", "@@"))
        color = GREY if head else GREEN if line.startswith("+") else (
            RED if line.startswith("-") else "")
        style = f' style="color:{color}"' if color else ""
        lines.append(f"<span{style}>{html.escape(line)}</span>")
    return (f'<div style="font-size:12px;color:{GREY};margin-top:4px">the version running '
            f'now, against the generated code:</div><pre style="{MONO}">' + "\n".join(lines)
            + "</pre>")
