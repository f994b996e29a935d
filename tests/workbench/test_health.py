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
