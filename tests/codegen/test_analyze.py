"""The activity analysis (gradlab.codegen.analyze): which values carry a gradient (varied and
useful) and which are arrays of the inputs' framework."""
from __future__ import annotations

import numpy as np

import gradlab
from gradlab.codegen.analyze import analyze, number_params
from tests.codegen.ir_text import normalized


def mixed(x, W, n):
    h = np.tanh(x)
    k = np.sqrt(n)
    idx = np.argmax(W)
    c = h * 2.0
    m = x @ W
    unused = np.exp(W)
    s = np.sum(c * k) + np.sum(m) + idx
    return s


def activity(wrt, arrays=("x", "W")):
    return analyze(normalized(mixed).ir, wrt, arrays=set(arrays))


def test_a_value_is_active_when_it_depends_on_an_input_and_the_result_on_it() -> None:
    a = activity(["x"])
    assert {n for n in ("h", "c", "m", "s", "x") if a.active(n)} == {"h", "c", "m", "s", "x"}
    assert not a.active("k")          # from n alone: not varied
    assert not a.active("unused")     # varied by nothing we differentiate, and never read
    assert not a.active("idx")        # argmax: no gradient flows through an index
    assert not a.active("W") and not a.active(None)


def test_the_gradient_with_respect_to_another_input_changes_what_is_varied() -> None:
    a = activity(["W"])
    assert a.active("m") and a.active("W")
    assert not a.active("h") and not a.active("idx")
    assert "unused" in a.varied and "unused" not in a.useful


def test_what_is_an_array_follows_from_the_parameters_that_are() -> None:
    a = activity(["x"])
    assert {"x", "W", "h", "m", "idx", "unused"} <= a.arrays
    assert "k" not in a.arrays and "n" not in a.arrays       # np.sqrt of a Python number
    assert "k" in activity(["x"], arrays=("x", "W", "n")).arrays
    assert number_params(["x", "W", "n"], {"x", "W"}) == {"n"}
    assert number_params(["x", "n"], None) == set()


def test_inactive_statements_get_no_backward_code() -> None:
    source = gradlab.grad(mixed).source
    backward = source.split("# ── backward ──")[1]
    assert "dunused" not in backward and "didx" not in backward and "dk " not in backward
    x, W = np.array([[0.1, 0.2]]), np.array([[1.0], [2.0]])
    eps = 1e-6
    numeric = [(mixed(x + eps * e.reshape(1, 2), W, 4.0) -
                mixed(x - eps * e.reshape(1, 2), W, 4.0)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(gradlab.grad(mixed)(x, W, 4.0).ravel(), numeric, rtol=1e-6)
