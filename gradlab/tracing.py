"""Running generated code step by step: ``gradlab.trace(df)(*args)`` records, for every
statement of the forward and backward pass, the values it assigned (shape, norm, NaN/Inf) and the
user's line it comes from — the tool for "where did my gradient blow up?".

The generated text is instrumented, not re-generated: after each assignment a call records the
assigned names, so what runs is the code the user reads, line for line.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .codegen.emit import compile_source

_RECORD = "__gradlab_record__"


@dataclass
class Value:
    """What a traced variable held after a step."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    norm: float
    finite: bool
    preview: str
    raw: Any = field(default=None, repr=False)

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


@dataclass
class TraceReport:
    source: str
    steps: list[Step]
    result: Any

    @property
    def first_nonfinite(self) -> Step | None:
        """The first step that produced a NaN or an Inf."""
        return next((s for s in self.steps if not s.finite), None)

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
        return "\n".join(rows)

    def explain(self) -> str:
        bad = self.first_nonfinite
        if bad is None:
            return "every value stayed finite"
        names = ", ".join(v.name for v in bad.values if not v.finite)
        where = f" (from your line {bad.user_line}: {bad.user_text})" if bad.user_line else ""
        return (f"first NaN/Inf at step {bad.index}, {bad.section} pass, generated line "
                f"{bad.line}: {bad.code.strip()} -> {names}{where}")


def summarize(name: str, value: Any, keep: bool) -> Value | None:
    from .checking import to_float64_numpy
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
        preview = np.array2string(a64.ravel()[:4], precision=4, separator=", ")
        return Value(name, tuple(arr.shape), str(arr.dtype), norm, finite, preview,
                     value if keep else None)
    except Exception:  # a value gradlab cannot summarize is simply not shown
        return None


class _Instrument(ast.NodeTransformer):
    """After each assignment, record the names it assigned (and the parameters on entry)."""

    def __init__(self, main: str) -> None:
        self.main = main

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self.generic_visit(node)
        if node.name == self.main:
            params = [a.arg for a in node.args.args]
            entry = self._record(node, params)[1]
            node.body.insert(0, entry)
        return node

    def _record(self, node: ast.stmt, names: list[str]) -> list[ast.stmt]:
        call = ast.Expr(ast.Call(
            func=ast.Name(_RECORD, ast.Load()),
            args=[ast.Constant(node.lineno),
                  ast.Dict(keys=[ast.Constant(n) for n in names],
                           values=[ast.Name(n, ast.Load()) for n in names])],
            keywords=[]))
        ast.copy_location(call, node)
        ast.fix_missing_locations(call)
        return [node, call]

    def visit_Assign(self, node: ast.Assign) -> Any:
        names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Store)]
        return self._record(node, names) if names else node

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        if isinstance(node.target, ast.Name):
            return self._record(node, [node.target.id])
        return node


def trace(df: Any, keep_values: bool = False) -> Any:
    """A function that runs ``df`` on some inputs step by step and returns a TraceReport."""
    def run(*args: Any, **kwargs: Any) -> TraceReport:
        from .tensor.detect import PYTHON, common_framework
        from .tensor.registry import backend
        fw = common_framework(args)
        scalars = df._scalars(args) if fw == PYTHON else frozenset()
        _, source, _, name, free, _ = df._transform.variant(scalars)
        text = source.text
        lines = text.splitlines()
        marker = next((i + 1 for i, line in enumerate(lines) if "── backward ──" in line), 0)
        steps: list[Step] = []

        def record(lineno: int, values: dict[str, Any]) -> None:
            summaries = [v for v in (summarize(k, x, keep_values) for k, x in values.items())
                         if v is not None]
            if not summaries:
                return
            code = lines[lineno - 1] if lineno - 1 < len(lines) else ""
            section = "backward" if marker and lineno > marker and _in_main(lines, lineno,
                                                                             name) else "forward"
            steps.append(Step(len(steps) + 1, lineno, code, section,
                              source.line_map.get(lineno, 0), source.line_text.get(lineno, ""),
                              summaries))

        def instrument(tree: ast.Module) -> None:
            _Instrument(name).visit(tree)
            ast.fix_missing_locations(tree)

        values = dict(free)
        values["gl"] = backend(fw)
        values[_RECORD] = record
        factory, _ = compile_source(text, name, df.fn.__globals__, values, f"trace:{name}",
                                    transform=instrument)
        fn = factory(**values)[name]
        seed = kwargs.pop("seed", None)
        if seed is not None:
            kwargs[df.seed_name] = seed
        result = fn(*args, **kwargs)
        return TraceReport(text, steps, result)
    return run


def _in_main(lines: list[str], lineno: int, name: str) -> bool:
    """Whether ``lineno`` lies inside ``def name`` (helpers after it are not the main pass)."""
    current = None
    for i, line in enumerate(lines[:lineno], start=1):
        if line.startswith("def "):
            current = line[4:].split("(")[0]
    return current == name
