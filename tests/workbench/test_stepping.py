"""Stepping through the backward pass (gradlab.workbench.stepping)."""
from __future__ import annotations

import numpy as np

import gradlab
from tests.workbench.functions import rnn, loss, W3, XS, H0, W, X


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
