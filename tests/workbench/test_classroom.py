"""Step-through, the graph, exercises and gradient-norm plots."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import gradlab


def rnn(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


RNG = np.random.default_rng(0)
W3, XS, H0 = RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(6, 3)), RNG.normal(size=3)
W, X = np.full((3, 2), 0.1), np.ones((4, 3))


def test_step_through_walks_the_backward_pass():
    s = gradlab.step(gradlab.grad(rnn), W3, XS, H0)
    assert len(s) > 6          # one block per iteration
    first = s.current
    assert first.section == "backward" and "sum" in first.user_text
    s.next()
    assert s.index == 1
    s.go(10 ** 6)
    assert s.index == len(s) - 1
    assert any(v.name == "dW" for step in s.steps for v in step.values)
    s.go(3)
    line, text = s.forward_line
    assert text == "h = np.tanh(W @ h + xs[t])" and line > 0
    names = [r.name for r in s.rows()]
    assert "h" in names and "W" in names
    html = s.html()
    assert "your function" in html and "backward pass" in html and "<table" in html


def test_step_through_widget_buttons():
    s = gradlab.step(gradlab.grad(loss), W, X)
    w = s.widget
    s.next_button.click()
    assert s.index == 1 and s.slider.value == 2          # the slider counts as the text does
    s.prev_button.click()
    assert s.index == 0
    s.slider.value = 3
    assert s.index == 2 and "step 3 of" in s.view.value
    del w


def long_chain(x):
    a = np.sin(x)
    b = np.cos(a)
    c = np.tanh(b)
    d = np.exp(c)
    e = np.log(d + 1.0)
    f = e * e
    g = np.sqrt(f + 1.0)
    h = np.sin(g)
    i = np.cos(h)
    j = i * x
    return np.sum(j)


def test_long_code_is_shown_around_the_current_line():
    """An HTML view cannot scroll itself: the step-through shows long backward code around
    the current line, numbered, saying how many lines are left out."""
    import html
    import re

    from gradlab.workbench.stepping import AROUND
    s = gradlab.step(gradlab.grad(long_chain), np.linspace(0.1, 0.5, 3))
    assert len(s.report.source.split("\n")) > 2 * AROUND + 1
    for index in (0, len(s) - 1):
        s.go(index)
        step = s.current
        right = s.html().split("<b>backward pass</b>")[1].split("<table")[0]
        assert re.search(rf">\s*{step.line}\s*</span>", right), right     # its number
        code = re.sub(r"<[^>]+>", "", right.split("<pre")[1])
        assert html.unescape(step.code.strip()) in html.unescape(code)
        assert code.count("\n") <= 2 * AROUND + 2
        assert re.search(r"… \d+ lines (above|below)", right)
    short = gradlab.step(gradlab.grad(loss), W, X).html()
    assert "lines above" not in short and "lines below" not in short


def test_graph_draws_loops_once():
    g = gradlab.graph(gradlab.grad(rnn), W3, XS, H0, highlight="h")
    source = g.dot().source
    assert source.count("cluster_loop") == 1
    assert "next iteration" in source and source.count("next iteration") == 1   # h only
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="apt-get install graphviz"):
            g.svg()
    else:
        assert g.svg().lstrip().startswith("<?xml")


def test_graph_without_dot_says_how_to_install(monkeypatch):
    import gradlab.workbench.graphs as graph_module
    monkeypatch.setattr(graph_module.shutil, "which", lambda name: None)
    g = gradlab.graph(loss)
    bundle = g._repr_mimebundle_()
    assert "apt-get install graphviz" in bundle["text/plain"]


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


def test_gradient_norms_show_vanishing_gradients():
    report = gradlab.trace(gradlab.grad(rnn))(W3 * 0.3, XS, H0)
    norms = gradlab.gradient_norms(report, ["dh"])["dh"]
    assert len(norms) == XS.shape[0] + 1
    assert norms[-1] < norms[0]             # smaller as they flow back in time
    fig = gradlab.plot_gradient_norms(report, ["dh"])
    assert fig.axes[0].get_yscale() == "log"


# --- the stepper as a teaching tool -----------------------------------------------------------
def test_steps_count_from_one_and_the_seed_is_the_outputs_gradient():
    s = gradlab.step(gradlab.grad(loss), W, X)
    assert s.number == 1 and s.text().startswith("step 1 of 3")
    rows = {r.name: r for r in s.rows()}
    assert "seed" not in rows                                    # not a variable of yours
    assert rows["loss"].seed and rows["loss"].adjoint is not None
    assert "1  (the seed)" in s.table()
    w = s.widget
    assert (s.slider.min, s.slider.max, s.slider.value) == (1, 3, 1)
    s.slider.value = 3
    assert s.index == 2 and "step 3 of 3" in s.view.value
    del w


def test_small_arrays_show_their_entries_and_what_the_step_changed():
    s = gradlab.step(gradlab.grad(loss), W, X)
    s.go(1)                                                      # dxW = (1.0 - h * h) * dh
    row = next(r for r in s.rows() if r.name == "xW")
    assert row.current and "dxW" in s.current_names
    assert "(4, 2) [0.3, 0.3," in s.table()                       # 8 entries: all shown
    assert "background:#fff176" in s.html() and "the seed" in s.html()
    big = gradlab.step(gradlab.grad(loss), np.full((5, 4), 0.1), np.ones((6, 5)))
    assert "(6, 5) |·|=5.477" in big.table()                      # 30 entries: shape and norm
    assert "|·|=0.51 is an array of shape (3, 2) whose norm" in big.table()


def test_the_graph_reads_top_to_bottom_shows_constants_and_hides_gradients_when_asked():
    g = gradlab.graph(gradlab.grad(loss), W, X, id_prefix="p-")
    source = g.dot().source
    assert "rankdir=TB" in source and '"** 2"' in source
    assert 'id="p-v_xW"' in source and "grad |·|=" in source
    hidden = gradlab.graph(gradlab.grad(loss), W, X, show_gradients=False)
    assert "grad " not in hidden.dot().source and "|·|=" in hidden.dot().source
    if shutil.which("dot") is not None:
        markup = g.html()
        assert "<svg" in markup and "<?xml" not in markup
        assert 'style="max-width:100%;height:auto;' in markup
    from gradlab.workbench.graphs import highlight_css
    assert "#p-v_xW ellipse" in highlight_css("p-", "xW")


# --- exercises ---------------------------------------------------------------------------------
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
