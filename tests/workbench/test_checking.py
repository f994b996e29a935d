"""Gradient checks: what 'not applicable' means, and gradients shaped unlike their parameter."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.workbench.checking import check_gradient


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


W, X = np.full((3, 2), 0.1), np.ones((4, 3))


def test_a_numpy_function_under_another_framework_says_why_it_is_not_applicable():
    torch = pytest.importorskip("torch")
    report = check_gradient(loss, gradlab.grad(loss), (torch.tensor(W), torch.tensor(X)))
    row = next(r for r in report.rows if r.reference == "torch.autograd")
    assert row.note == ("not applicable: your function calls NumPy (np.tanh, np.mean); "
                        "torch.autograd cannot trace it (the finite differences above still "
                        "check the gradient)")
    assert report.ok


def test_a_wrongly_shaped_gradient_is_refused_before_any_comparison():
    """An edit returning a gradient of another shape than its input is refused when it runs
    (it was 'not compared' here; elsewhere it was broadcast into a plausible array)."""
    import pytest
    df = gradlab.grad(loss)
    transposed = gradlab.recompile(df.source.replace("return dW", "return dW.T"), like=df)
    with pytest.raises(gradlab.GradlabError, match=r"shape \(2, 3\) for W, whose shape is"):
        check_gradient(loss, transposed, (W, X))


def test_a_value_and_grad_function_is_checked_on_its_gradient():
    import numpy as np

    import gradlab
    from gradlab.workbench.checking import check_gradient

    def f(x):
        return np.sum(np.sin(x) * x)
    x = np.array([0.3, -1.2, 2.0])
    report = check_gradient(f, gradlab.value_and_grad(f), (x,))
    assert report.ok, report.table()
