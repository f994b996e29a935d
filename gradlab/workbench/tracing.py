"""Running generated code step by step: ``gradlab.trace(df)(*args)`` records, for every
statement of the forward and backward pass, the values it assigned (shape, norm, NaN/Inf) and the
user's line it comes from — the tool for "where did my gradient blow up?".

The generated text is instrumented, not re-generated: after each assignment a call records the
assigned names, so what runs is the code the user reads, line for line.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..calls import require_call, require_scalar_value, require_seed_shape, shape_of
from ..errors import GradlabError
from ..instrument import instrumented, main_lines
from .health import is_parameter_tree, parameter_norms
from .leafcalls import leaf_call



@dataclass
class Value:
    """What a traced variable held after a step."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    norm: float
    finite: bool
    #: the first values (float64), or a description such as "list of 3"
    head: Any = field(repr=False)
    raw: Any = field(default=None, repr=False)

    @property
    def preview(self) -> str:
        """The first values, as text (formatted when asked: formatting costs more than the
        rest of a step's summary)."""
        if isinstance(self.head, str):
            return self.head
        return np.array2string(self.head, precision=4, separator=", ")

    @property
    def is_adjoint(self) -> bool:
        return self.name.startswith("d") and len(self.name) > 1


@dataclass
class Step:
    index: int
    line: int                 # line in the generated source
    code: str                 # that line
    section: str              # 'forward' | 'backward'
    user_line: int            # the user's line this step comes from (0: none)
    user_text: str
    values: list[Value]

    @property
    def finite(self) -> bool:
        return all(v.finite for v in self.values)


#: Steps a trace records in full (shapes, norms, a preview): enough for any function one reads
#: step by step. A long loop runs on past it; its later steps are counted per line and watched
#: for the first NaN/Inf only, so a 100,000-step loop gives a report of this size, not 100,000
#: steps' worth.
LIMIT = 5000


@dataclass
class TraceReport:
    source: str
    steps: list[Step]
    result: Any
    #: every step the run made (``len(steps)`` of them are recorded in full)
    total: int = 0
    #: generated line -> how many of its steps ran after the first ``limit`` (not recorded)
    omitted: dict[int, int] = field(default_factory=dict)
    #: the first step that produced a NaN or an Inf, when it came after the recorded ones
    late_nonfinite: Step | None = None
    #: why the run was stopped before its end ("" when it ran to the end)
    stopped: str = ""
    #: the function whose derivative ran (for container arguments, the one taking their
    #: leaves): what a graph of the steps draws
    fn: Any = None

    @property
    def first_nonfinite(self) -> Step | None:
        """The first step that produced a NaN or an Inf (found exactly, recorded or not)."""
        return next((s for s in self.steps if not s.finite), None) or self.late_nonfinite

    def backward(self) -> list[Step]:
        return [s for s in self.steps if s.section == "backward"]

    def table(self, section: str | None = None, limit: int = 200) -> str:
        rows = [f"{'step':>4} {'line':>4}  {'variable':16s} {'shape':14s} {'norm':>11s}  code"]
        for s in self.steps[:limit]:
            if section and s.section != section:
                continue
            for v in s.values:
                flag = "" if v.finite else "  <- NaN/Inf"
                rows.append(f"{s.index:4d} {s.line:4d}  {v.name:16s} {str(v.shape):14s} "
                            f"{v.norm:11.4g}  {s.code.strip()}{flag}")
        if len(self.steps) > limit or self.omitted:
            rows.append(f"... {self.total - min(limit, len(self.steps)):,} more steps "
                        f"({self._omitted_text()})")
        return "\n".join(rows)

    def _omitted_text(self) -> str:
        busiest = sorted(self.omitted.items(), key=lambda kv: -kv[1])[:3]
        lines = ", ".join(f"line {line} ×{count:,}" for line, count in busiest)
        return f"not recorded: {lines}" if lines else "recorded"

    def explain(self) -> str:
        bad = self.first_nonfinite
        if bad is None:
            if self.stopped:
                return f"no NaN/Inf in the steps traced: {self.stopped}"
            return "every value stayed finite"
        names = ", ".join(v.name for v in bad.values if not v.finite)
        where = f" (from your line {bad.user_line}: {bad.user_text})" if bad.user_line else ""
        return (f"first NaN/Inf at step {bad.index}, {bad.section} pass, generated line "
                f"{bad.line}: {bad.code.strip()} -> {names}{where}")

    def __repr__(self) -> str:
        kept = f"{len(self.steps):,} recorded" + (
            f" of {self.total:,}" if self.total > len(self.steps) else "")
        stopped = f", stopped: {self.stopped}" if self.stopped else ""
        return f"<TraceReport: {kept} steps; {self.explain()}{stopped}>"


def summarize(name: str, value: Any, keep: bool) -> Value | None:
    from ..tensor.convert import to_float64_numpy
    if is_parameter_tree(value):
        return _summarize_tree(name, value, keep)
    try:
        if isinstance(value, (list, tuple)):
            if not value or not all(hasattr(v, "shape") or isinstance(v, (int, float))
                                    for v in value):
                return None
            arrays = [np.asarray(to_float64_numpy(v), dtype=np.float64) for v in value]
            norm = math.sqrt(sum(float(np.sum(a * a)) for a in arrays))
            finite = all(bool(np.all(np.isfinite(a))) for a in arrays)
            return Value(name, (len(value),), "list", norm, finite, f"list of {len(value)}",
                         value if keep else None)
        if isinstance(value, bool) or not (isinstance(value, (int, float)) or hasattr(
                value, "shape")):
            return None
        arr = np.asarray(to_float64_numpy(value))
        if arr.dtype.kind not in "fiuc":
            return None
        a64 = arr.astype(np.float64)
        finite = bool(np.all(np.isfinite(a64)))
        norm = float(np.sqrt(np.sum(a64 * a64))) if finite else float("nan")
        return Value(name, tuple(arr.shape), str(arr.dtype), norm, finite, a64.ravel()[:4].copy(),
                     value if keep else None)
    except Exception:  # a value gradlab cannot summarize is simply not shown
        return None


def _summarize_tree(name: str, value: Any, keep: bool) -> Value | None:
    """A gradient with respect to a model's parameters (a dict keyed like
    ``named_parameters()``, a pytree): one value whose norm is that of all its arrays, finite
    when they all are, described by its parameters' count; its norm per parameter is
    :func:`gradlab.parameter_norms`'s."""
    norms = parameter_norms(value)
    if not norms:
        return None
    total = math.sqrt(sum(n * n for n in norms.values()))
    finite = all(math.isfinite(n) for n in norms.values())
    return Value(name, (len(norms),), "dict", total if finite else float("nan"), finite,
                 f"{len(norms)} parameters", value if keep else None)


def all_finite(values: Any) -> bool:
    """Whether every number in ``values`` (a dict of them, arrays, lists) is finite: the one
    question asked of steps past the recorded ones, so it is answered without a summary."""
    for v in values.values() if isinstance(values, dict) else values:
        if isinstance(v, float):
            if not math.isfinite(v):
                return False
        elif isinstance(v, np.ndarray):
            # a finite sum has only finite terms; a sum that overflowed is looked at closely
            if v.dtype.kind in "fc" and not math.isfinite(abs(np.add.reduce(v, axis=None))) \
                    and not bool(np.isfinite(v).all()):
                return False
        elif isinstance(v, (list, tuple)):
            if not all_finite(v):
                return False
        elif is_parameter_tree(v):
            if not all(math.isfinite(n) for n in parameter_norms(v).values()):
                return False
        elif hasattr(v, "shape") and not isinstance(v, (bool, int)):
            summary = summarize("", v, False)
            if summary is not None and not summary.finite:
                return False
    return True


def split_tangents(df: Any, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A jvp's (an hvp's) call ``df(*args, tangent)`` as the function's arguments and the
    tangents (a tuple with several ``wrt``), which its code takes as keywords; other calls have
    no tangents."""
    if getattr(df, "mode", "") not in ("jvp", "hvp") or not args:
        return tuple(args), ()
    tangent = args[-1]
    return tuple(args[:-1]), tuple(tangent) if df.many else (tangent,)


def tangent_names(fn: Any, df: Any) -> tuple[str, ...]:
    """The keyword-only parameters of a jvp's code, the seed left out: its tangents' names."""
    code = fn.__code__
    names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    return tuple(n for n in names if n != getattr(df, "seed_name", None))


def require_generated(df: Any, tool: str) -> None:
    """The tools run gradlab's code, shown next to the user's: a plain function has none."""
    from ..api import GeneratedFunction
    from ..pytrees import ForContainersOnly
    if not isinstance(df, (GeneratedFunction, ForContainersOnly)):
        what = getattr(df, "__qualname__", None) or type(df).__name__
        raise GradlabError(f"gradlab.{tool} runs the code gradlab made: pass gradlab.grad(f) "
                           f"(or value_and_grad, jvp, hvp), not {what!r}")


class _Stop(Exception):
    """Raised from the recording hook to stop a run past its step budget."""


def trace(df: Any, keep_values: bool = False, limit: int = LIMIT,
          max_steps: int | None = None) -> Any:
    """A function that runs ``df`` on some inputs step by step and returns a TraceReport.

    The first ``limit`` steps are recorded in full; later ones are counted by line and only
    checked for NaN/Inf (the first one is still recorded exactly). With ``max_steps`` the run
    stops after that many steps (the report says so): a bound on the time a trace can take."""
    require_generated(df, "trace")

    def run(*args: Any, **kwargs: Any) -> TraceReport:
        seed = kwargs.pop("seed", None)
        leaves = leaf_call(df, args, kwargs)
        if leaves is not None:     # container arguments: the code for their leaves runs
            return trace(leaves.df, keep_values, limit, max_steps)(*leaves.args, seed=seed)
        require_call(df, args, kwargs)
        args, tangents = split_tangents(df, args)
        steps: list[Step] = []
        omitted: dict[int, int] = {}
        state: dict[str, Any] = {"count": 0, "late": None, "value": None}
        value_name = getattr(df, "value_name", None)
        fn, source, name = instrumented(df, args + tangents, lambda lineno, values: record(
            lineno, values))
        kwargs.update(zip(tangent_names(fn, df), tangents))
        text = source.text  # (record, defined below, needs the source's lines)
        lines = text.splitlines()
        marker = next((i + 1 for i, line in enumerate(lines) if "── backward ──" in line), 0)
        main = main_lines(lines, name)

        def step(lineno: int, values: dict[str, Any]) -> Step | None:
            summaries = [v for v in (summarize(k, x, keep_values) for k, x in values.items())
                         if v is not None]
            if not summaries:
                return None
            code = lines[lineno - 1] if lineno - 1 < len(lines) else ""
            section = "backward" if marker and lineno > marker and lineno in main else "forward"
            return Step(state["count"], lineno, code, section, source.line_map.get(lineno, 0),
                        source.line_text.get(lineno, ""), summaries)

        def record(lineno: int, values: dict[str, Any]) -> None:
            state["count"] += 1
            if value_name in values:
                state["value"] = values[value_name]
            if len(steps) < limit:
                made = step(lineno, values)
                if made is not None:
                    steps.append(made)
            else:
                omitted[lineno] = omitted.get(lineno, 0) + 1
                if state["late"] is None and not all_finite(values):
                    state["late"] = step(lineno, values)
            if max_steps is not None and state["count"] >= max_steps:
                raise _Stop

        if seed is not None:
            kwargs[df.seed_name] = seed
        result, stopped = None, ""
        try:
            result = fn(*args, **kwargs)
        except _Stop:
            stopped = f"stopped after {max_steps:,} steps (max_steps)"
        except Exception:
            if seed is not None and state["value"] is not None:   # a seed of another shape
                require_seed_shape(df, seed, shape_of(state["value"]))
            raise
        if seed is None and getattr(df, "mode", "") != "jvp" and not stopped:
            require_scalar_value(df, state["value"])
        late = state["late"] if not any(not s.finite for s in steps) else None
        return TraceReport(text, steps, result, state["count"], omitted, late, stopped,
                           getattr(df, "fn", None))
    return run
