"""Gradient health: how big gradients are as they flow back through loop iterations or layers
(vanishing and exploding gradients made visible), from a :func:`gradlab.trace` report."""
from __future__ import annotations

from typing import Any


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
