"""Gradient checks: the generated gradient against central finite differences (float64) and,
where the function can run under it, against the framework's own autodiff."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..tensor.autodiff import value_and_grad
from ..tensor.convert import convert, to_float64_numpy
from ..tensor.detect import PYTHON, common_framework
from ..tensor.registry import get as get_backend


@dataclass
class CheckRow:
    reference: str
    parameter: str
    max_abs_error: float | None
    max_rel_error: float | None
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.max_rel_error is not None and self.max_rel_error < 1e-4


@dataclass
class CheckReport:
    rows: list[CheckRow] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok or r.max_abs_error is None for r in self.rows) and any(
            r.ok for r in self.rows)

    def table(self) -> str:
        lines = [f"{'reference':22s} {'wrt':8s} {'max abs err':>12s} {'max rel err':>12s}"]
        for r in self.rows:
            if r.max_abs_error is None:
                lines.append(f"{r.reference:22s} {r.parameter:8s} {'n/a':>12s} {'':>12s}  {r.note}")
            else:
                lines.append(f"{r.reference:22s} {r.parameter:8s} {r.max_abs_error:12.2e} "
                             f"{r.max_rel_error:12.2e}  {'ok' if r.ok else 'MISMATCH'}")
        return "\n".join(lines)


def finite_differences(f: Callable[..., Any], args: list[Any], position: int,
                       eps: float = 1e-6, max_entries: int = 200) -> np.ndarray:
    """Central differences of ``f`` in float64 along (at most ``max_entries``) coordinates of
    argument ``position``; coordinates not probed are NaN."""
    x = args[position]
    scalar = isinstance(x, (int, float))
    base = np.asarray(x, dtype=np.float64)
    grad = np.full(base.shape, np.nan)
    indices = list(np.ndindex(base.shape))
    if len(indices) > max_entries:
        rng = np.random.default_rng(0)
        indices = [indices[i] for i in rng.choice(len(indices), max_entries, replace=False)]
    for idx in indices:
        plus, minus = base.copy(), base.copy()
        plus[idx] += eps
        minus[idx] -= eps
        a, b = list(args), list(args)
        a[position] = float(plus) if scalar else plus
        b[position] = float(minus) if scalar else minus
        grad[idx] = (float(np.asarray(f(*a))) - float(np.asarray(f(*b)))) / (2 * eps)
    return grad


def _errors(got: Any, expected: np.ndarray) -> tuple[float, float]:
    got = np.asarray(to_float64_numpy(got), dtype=np.float64)
    mask = ~np.isnan(expected)
    if not mask.any():
        return 0.0, 0.0
    diff = np.abs(got[mask] - expected[mask])
    scale = np.maximum(np.abs(expected[mask]), 1e-3)
    return float(diff.max()), float((diff / scale).max())


def check_gradient(f: Callable[..., Any], df: Any, args: tuple[Any, ...]) -> CheckReport:
    """Compare ``df(*args)`` (a gradlab gradient of ``f``) with finite differences of ``f`` in
    float64 NumPy and with the inputs' framework's own autodiff."""
    report = CheckReport()
    grads = df(*args)
    if getattr(df, "mode", "grad") == "value_and_grad":    # (the code a container call
        grads = grads[1]                                     # runs, see leafcalls, is one)
    grads = grads if df.many else (grads,)
    params = df.params
    positions = [params.index(w) for w in df.wrt]
    numpy_args = [to_float64_numpy(a) for a in args]
    for w, position, g in zip(df.wrt, positions, grads):
        want, got = np.shape(numpy_args[position]), np.shape(to_float64_numpy(g))
        if want != got:
            report.rows.append(CheckRow("finite differences", w, None, None,
                                        f"not compared: the gradient has shape {got}, {w} has "
                                        f"shape {want}"))
            continue
        try:
            expected = finite_differences(f, numpy_args, position)
            abs_err, rel_err = _errors(g, expected)
            report.rows.append(CheckRow("finite differences", w, abs_err, rel_err))
        except Exception as e:  # the function may not run on NumPy float64 inputs
            report.rows.append(CheckRow("finite differences", w, None, None,
                                        f"{type(e).__name__}: {e}"))
    fw = common_framework(args)
    label = get_backend(fw).reference or fw
    try:
        _, reference = value_and_grad(f, *args, wrt=tuple(positions))
        for w, g, r in zip(df.wrt, grads, reference):
            diff = np.abs(np.asarray(to_float64_numpy(g)) - np.asarray(to_float64_numpy(r)))
            scale = np.maximum(np.abs(np.asarray(to_float64_numpy(r))), 1e-3)
            report.rows.append(CheckRow(label, w, float(diff.max(initial=0.0)),
                                        float((diff / scale).max(initial=0.0))))
    except Exception as e:  # e.g. NumPy code cannot run under torch.autograd
        report.rows.append(CheckRow(label, ",".join(df.wrt), None, None,
                                    "not applicable: " + _why_not(f, fw, label, e)))
    return report


def _why_not(f: Callable[..., Any], framework: str, label: str, error: Exception) -> str:
    """Why the framework's own autodiff could not differentiate ``f``, in words: most often
    the function calls NumPy, which no other framework's autodiff can trace."""
    called = _numpy_calls(f)
    if called and framework not in ("numpy", PYTHON):
        shown = ", ".join(called[:3]) + (", ..." if len(called) > 3 else "")
        return (f"your function calls NumPy ({shown}); {label} cannot trace it "
                f"(the finite differences above still check the gradient)")
    first = (str(error).strip().splitlines() or [""])[0]
    if len(first) > 120:
        first = first[:117] + "..."
    return f"{label} could not run your function: {type(error).__name__}: {first}"


def _numpy_calls(f: Callable[..., Any]) -> list[str]:
    """The ``np.xxx`` names ``f``'s code uses, for a module alias bound to NumPy."""
    import ast
    import inspect
    import textwrap
    import types
    aliases = {name for name, value in getattr(f, "__globals__", {}).items()
               if isinstance(value, types.ModuleType) and value.__name__ == "numpy"}
    if not aliases:
        return []
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(f)))
    except (OSError, TypeError, SyntaxError):
        return sorted(aliases)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                node.value.id in aliases):
            name = f"{node.value.id}.{node.attr}"
            if name not in found:
                found.append(name)
    return found
