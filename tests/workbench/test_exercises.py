"""Exercises: write the backward pass yourself and have it checked (gradlab.workbench.exercises)."""
from __future__ import annotations

import numpy as np

import gradlab
from tests.workbench.functions import loss, W, X


def _attempt(ex, dxW_line):
    head, sep, tail = ex.starter.partition("# ── backward ──")
    tail = tail.replace("    # return np.mean(h ** 2)\n",
                        "    # return np.mean(h ** 2)\n    dh = 2 * h * (seed / gl.size(h_pow2))\n")
    tail = tail.replace("    # h = np.tanh(x @ W)\n",
                        f"    # h = np.tanh(x @ W)\n    {dxW_line}\n"
                        f"    dW = gl.matmul_grad_y(dxW, x, W)\n")
    return head + sep + tail


def test_exercise_starter_hides_the_answer():
    ex = gradlab.exercise(loss, W, X)
    assert "dxW" not in ex.starter and "# h = np.tanh(x @ W)" in ex.starter
    assert ex.starter.rstrip().endswith("return dW")
    assert "# (start from seed, the gradient flowing into the output)" in ex.starter
    assert not ex.revealed
    assert "dxW = (1.0 - h * h) * dh" in ex.solution() and ex.revealed


def test_exercise_check_names_the_first_wrong_gradient():
    ex = gradlab.exercise(loss, W, X)
    wrong = _attempt(ex, "dxW = (1.0 - h) * dh")
    verdict = ex.check(wrong)
    assert not verdict.ok and verdict.name == "dxW"
    assert wrong.splitlines()[verdict.line - 1].strip() == "dxW = (1.0 - h) * dh"
    assert verdict.difference > 0
    assert "(1.0 - h * h)" not in verdict.message      # the answer is not given away
    assert ex.check(_attempt(ex, "dxW = (1.0 - h * h) * dh")).ok


def test_exercise_reports_broken_code():
    ex = gradlab.exercise(loss, W, X)
    verdict = ex.check(ex.starter)          # dW never computed
    assert not verdict.ok and "dW" in verdict.message
    verdict = ex.check(ex.starter.replace("return dW", "return dW +"))
    assert not verdict.ok and "does not compile" in verdict.message


def test_an_answer_that_ignores_the_seed_fails_and_is_told_why():
    ex = gradlab.exercise(loss, W, X)
    ignoring = _attempt(ex, "dxW = (1.0 - h * h) * dh").replace("(seed /", "(1.0 /")
    verdict = ex.check(ignoring)
    assert not verdict.ok and verdict.name == "dh"
    assert verdict.message.startswith("your gradients are right when the seed is 1 but not "
                                      "when it is")
    assert "must start from the seed `seed`" in verdict.message


def test_a_wrong_gradient_names_the_local_derivative_to_look_at():
    ex = gradlab.exercise(loss, W, X)
    verdict = ex.check(_attempt(ex, "dxW = (1.0 - h) * dh"))
    assert ("dxW gathers the gradient flowing back through it: check the local derivative "
            "∂h/∂xW (from `h = gl.tanh(xW)`)") in verdict.message
    from gradlab.workbench.exercises import consumers
    assert consumers(ex.df.source, ex.df.name, "h") == [("h_pow2", "h_pow2 = h ** 2")]


def test_an_exercise_on_a_params_dict_is_written_and_checked_on_its_leaves():
    import numpy as np

    def of_dict(params, x):
        return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)
    params, x = {"W": np.full((3, 2), 0.1), "b": np.zeros(2)}, np.ones((4, 3))
    ex = gradlab.exercise(of_dict, params, x)
    assert "def dof_dict_dparams(params_W, params_b, x, *, seed=1.0):" in ex.starter
    assert ex.starter.rstrip().endswith("#   dparams = {'W': dparams_W, 'b': dparams_b}")
    assert "dparams_W = " not in ex.starter
    solution = ex.solution()
    assert ex.check(solution).ok
    verdict = ex.check(solution.replace("dparams_W = x.T @ dtotal", "dparams_W = x.T @ dtotal * 2"))
    assert not verdict.ok and verdict.name == "dparams_W"


def test_an_answer_checked_on_no_inputs_is_refused():
    """trials=0 said 'correct' about any answer."""
    import pytest
    ex = gradlab.exercise(_exercise_square, np.array([0.5, -1.0]))
    with pytest.raises(gradlab.GradlabError, match="trials="):
        ex.check(ex.solution(), trials=0)


def _exercise_square(x):
    return np.sum(x ** 2)
