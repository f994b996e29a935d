"""A rule run on its own: instantiated for ``y = prim(x, ...)`` and evaluated with NumPy's
backend as ``gl``, so each template can be checked against central differences without the
rest of the pipeline."""
from __future__ import annotations

import ast
from typing import Any, Callable

import gast
import numpy as np

from gradlab.codegen.build import const, name
from gradlab.codegen.rules import Contribution, Rule, instantiate
from gradlab.tensor import backend

BINARY: dict[str, tuple[float, float, Callable[[Any, Any], Any]]] = {
    "add": (-2, 2, np.add), "subtract": (-2, 2, np.subtract), "multiply": (-2, 2, np.multiply),
    "divide": (0.5, 2, np.divide), "power": (0.5, 2, np.power),
    "maximum": (-2, 2, np.maximum), "minimum": (-2, 2, np.minimum),
    "arctan2": (0.5, 2, np.arctan2), "hypot": (0.5, 2, np.hypot),
    "logaddexp": (-2, 2, np.logaddexp),
    "squared_difference": (-2, 2, lambda x, y: (x - y) ** 2),
}


def derivative_lines(rule: Rule, values: dict[str, Any]) -> dict[str, Any]:
    """Each contribution of ``rule`` evaluated: template parameter -> its value. ``values``
    holds every parameter (arrays bound by name, options as literals) and the derivative
    arriving (``d<param>``)."""
    bindings = {}
    env: dict[str, Any] = {"gl": backend("numpy")}
    for p in rule.params:
        if p in values and isinstance(values[p], np.ndarray):
            bindings[p] = name(p)
            env[p] = values[p]
        elif p in values:
            bindings[p] = const(values[p])
    env.update({k: v for k, v in values.items() if k.startswith("d")})
    counter = iter(range(1000))
    instance = instantiate(rule, bindings, lambda n: "d" + n, lambda h: f"{h}_{next(counter)}",
                           lambda e: isinstance(e, gast.Name) and e.id != rule.params[0]
                           if rule.kind == "adjoint" else isinstance(e, gast.Name))
    out: dict[str, Any] = {}
    for step in instance.steps:
        node = gast.gast_to_ast(step.expr if isinstance(step, Contribution) else step.stmt)
        ast.fix_missing_locations(node)
        if isinstance(step, Contribution):
            value = eval(compile(ast.Expression(node), "<rule>", "eval"), env)
            out[step.target] = out.get(step.target, 0) + value
        else:
            exec(compile(ast.Module([node], []), "<rule>", "exec"), env)
    return out


def central(f: Callable[[np.ndarray], Any], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d sum(f(x)) / dx, one entry at a time."""
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += eps
        down[k] -= eps
        g[k] = (np.sum(f(up)) - np.sum(f(down))) / (2 * eps)
    return g


def away_from_kinks(name: str, x: np.ndarray) -> np.ndarray:
    """Inputs where the primitive is smooth: off zero for abs/relu/maximum, off the integers
    and half-integers for the rounding ones."""
    shifted = np.where(np.abs(x) < 0.1, x + 0.3, x)
    if name in ("floor", "ceil", "round"):
        shifted = np.floor(shifted) + 0.3
    return shifted
