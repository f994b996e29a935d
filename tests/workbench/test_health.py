"""Gradient norms through the backward pass (gradlab.workbench.health)."""
from __future__ import annotations

import gradlab
from tests.workbench.functions import rnn, W3, XS, H0


def test_gradient_norms_show_vanishing_gradients():
    report = gradlab.trace(gradlab.grad(rnn))(W3 * 0.3, XS, H0)
    norms = gradlab.gradient_norms(report, ["dh"])["dh"]
    assert len(norms) == XS.shape[0] + 1
    assert norms[-1] < norms[0]             # smaller as they flow back in time
    fig = gradlab.plot_gradient_norms(report, ["dh"])
    assert fig.axes[0].get_yscale() == "log"


def test_the_norm_of_each_parameters_gradient_named_as_the_model_names_it():
    import math
    from collections import namedtuple

    import numpy as np
    from gradlab.workbench.health import is_parameter_tree, named_leaves
    Pair = namedtuple("Pair", ["W", "b"])
    grads = {"layers": [Pair(np.full((2, 2), 1.0), np.zeros(2)), Pair(np.array([3.0, 4.0]),
                                                                      np.array([np.nan]))],
             "scale": 2.0, "name": "not a number"}
    assert [n for n, _ in named_leaves(grads)] == [
        "layers.0.W", "layers.0.b", "layers.1.W", "layers.1.b", "scale", "name"]
    norms = gradlab.parameter_norms(grads)
    assert list(norms) == ["layers.0.W", "layers.0.b", "layers.1.W", "layers.1.b", "scale"]
    assert norms["layers.0.W"] == 2.0 and norms["layers.1.W"] == 5.0 and norms["scale"] == 2.0
    assert norms["layers.0.b"] == 0.0 and math.isnan(norms["layers.1.b"])
    assert gradlab.parameter_norms(np.array([3.0, 4.0])) == {"gradient": 5.0}
    assert is_parameter_tree(grads) and is_parameter_tree(Pair(1.0, 2.0))
    assert not is_parameter_tree([np.zeros(2)]) and not is_parameter_tree(np.zeros(2))
    assert not is_parameter_tree(lambda g: g)
    import matplotlib
    matplotlib.use("Agg")
    fig = gradlab.plot_parameter_norms(grads)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and len(ax.patches) == 5
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "layers.0.W"   # first on top
    assert sorted(t.get_text().strip() for t in ax.texts) == ["0.0", "nan"]
