"""Gradient health: how big gradients are as they flow back through loop iterations or layers
(vanishing and exploding gradients made visible), from a :func:`gradlab.trace` report; and, for
a gradient with respect to a model's parameters or a ``params`` dict, the norm of each
parameter's gradient (:func:`parameter_norms`: which layer's gradient vanishes, which one
clipping would cut).
"""
from __future__ import annotations

import dataclasses
import functools
import math
import sys
import types
from typing import Any

import numpy as np

from ..tensor.convert import to_float64_numpy


def gradient_norms(report: Any, names: list[str] | None = None) -> dict[str, list[float]]:
    """For each gradient variable, its norm every time the backward pass assigned it, in the
    order they happened (a loop-carried ``dh`` gives one number per iteration)."""
    out: dict[str, list[float]] = {}
    for step in report.backward():
        for v in step.values:
            if not v.name.startswith("d"):
                continue
            if names is not None and v.name not in names:
                continue
            out.setdefault(v.name, []).append(v.norm)
    return out


def plot_gradient_norms(report: Any, names: list[str] | None = None, ax: Any = None,
                        title: str = "gradient norms through the backward pass") -> Any:
    """A matplotlib figure of :func:`gradient_norms` (log scale); returns the figure."""
    import matplotlib
    if ax is None:
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 3.2))
    else:
        fig = ax.figure
    norms = gradient_norms(report, names)
    if names is None:   # the most interesting ones: assigned most often (loop-carried)
        norms = dict(sorted(norms.items(), key=lambda kv: -len(kv[1]))[:4])
    for name, values in norms.items():
        ax.plot(range(1, len(values) + 1), values, marker="o", markersize=3, label=name)
    ax.set_yscale("log")
    ax.set_xlabel("backward step (later iterations first)")
    ax.set_ylabel("norm")
    ax.set_title(title)
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    del matplotlib
    return fig


# --- per parameter -------------------------------------------------------------------------------
def is_parameter_tree(value: Any) -> bool:
    """A structure of arrays named by keys or fields: a dict (a ``named_parameters()``
    gradient, a ``params`` dict), a namedtuple, a dataclass, or a JAX pytree of another type
    (an Equinox module's gradient). Lists of arrays and arrays are not; functions are not."""
    if isinstance(value, dict) or (isinstance(value, tuple) and hasattr(type(value), "_fields")):
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return True
    return _jax_children(value) is not None


def _jax_children(value: Any) -> list[tuple[str, Any]] | None:
    """The named leaves of a JAX pytree of a type of its own, or None for anything else (JAX
    not imported: then there is none)."""
    jax = sys.modules.get("jax")
    if jax is None or isinstance(value, (int, float, str, list, tuple, dict, type(None),
                                         types.FunctionType, functools.partial)) or hasattr(
            value, "shape") or not hasattr(jax, "tree_util"):
        return None
    try:
        pairs, _ = jax.tree_util.tree_flatten_with_path(value)
    except Exception:     # not a pytree JAX knows: a leaf
        return None
    if len(pairs) == 1 and pairs[0][1] is value:
        return None
    return [(jax.tree_util.keystr(path).strip(".").replace("'", "").replace("[", ".")
             .replace("]", "").strip("."), leaf) for path, leaf in pairs]


def named_leaves(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """The arrays of a gradient with their names, as a model names its parameters: a dict's
    keys (``0.weight``), fields, list positions, joined by dots (``layers.0.W``)."""
    if isinstance(value, dict):
        parts: list[tuple[str, Any]] = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, tuple) and hasattr(type(value), "_fields"):
        parts = list(zip(getattr(type(value), "_fields"), value))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    elif isinstance(value, (list, tuple)):
        parts = [(str(i), v) for i, v in enumerate(value)]
    else:
        children = _jax_children(value)
        if children is None:
            return [(prefix, value)]
        return [(f"{prefix}.{name}" if prefix else name, leaf) for name, leaf in children]
    return [leaf for name, v in parts
            for leaf in named_leaves(v, f"{prefix}.{name}" if prefix else name)]


def parameter_norms(grads: Any, model: Any = None) -> dict[str, float]:
    """The norm (√Σ g²) of each parameter's gradient, by its name (:func:`named_leaves`), for
    a gradient with respect to a model (``grad(loss, wrt="model")``) or a ``params`` dict; a
    NaN or Inf in a gradient makes its norm NaN or Inf. Entries that are no numbers (None, a
    string) are left out. A Keras model's gradient is a list, in the order of its
    ``trainable_variables``: given the ``model``, they are named by their paths
    (``sequential/dense/kernel``)."""
    out: dict[str, float] = {}
    for name, leaf in _named_like(grads, model):
        if isinstance(leaf, bool) or not (isinstance(leaf, (int, float)) or hasattr(
                leaf, "shape")):
            continue
        a = np.asarray(to_float64_numpy(leaf))
        if a.dtype.kind not in "fiuc":
            continue
        a = a.astype(np.float64)
        out[name or "gradient"] = float(np.sqrt(np.sum(a * a)))
    return out


def _named_like(grads: Any, model: Any) -> list[tuple[str, Any]]:
    """:func:`named_leaves`, a list gradient's entries named after the model's trainable
    variables (their ``path``, else ``name``) where it has as many."""
    leaves = named_leaves(grads)
    variables = list(getattr(model, "trainable_variables", None) or [])
    if not isinstance(grads, list) or len(variables) != len(leaves):
        return leaves
    return [(str(getattr(v, "path", None) or getattr(v, "name", i)), leaf)
            for i, (v, (_, leaf)) in enumerate(zip(variables, leaves))]


def plot_parameter_norms(grads: Any, ax: Any = None, model: Any = None,
                         title: str = "gradient norm per parameter") -> Any:
    """A matplotlib bar chart of :func:`parameter_norms` (log scale, one bar per parameter, in
    the model's order: the first layer at the top); returns the figure. A NaN/Inf norm is
    drawn as a red bar at the largest finite norm, labelled. ``model``: see
    :func:`parameter_norms`."""
    norms = parameter_norms(grads, model)
    if ax is None:
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 0.35 * len(norms) + 1.2))
    else:
        fig = ax.figure
    positive = [n for n in norms.values() if math.isfinite(n) and n > 0]
    top, bottom = max(positive, default=1.0), min(positive, default=1.0) / 10
    names = list(norms)[::-1]          # barh draws the first name at the bottom
    heights = [norms[n] if math.isfinite(norms[n]) and norms[n] > 0 else
               top if not math.isfinite(norms[n]) else bottom for n in names]
    colors = ["#1e88e5" if math.isfinite(norms[n]) else "#c62828" for n in names]
    ax.barh(names, heights, color=colors)
    for i, n in enumerate(names):
        if not math.isfinite(norms[n]) or norms[n] == 0:     # no bar length says these
            ax.text(heights[i], i, f" {norms[n]}", va="center", color=colors[i])
    ax.set_xscale("log")
    ax.set_xlabel("norm of the gradient")
    ax.set_title(title)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    return fig
