"""HTML for what a panel says (gradlab.kernel_ext.views): plain functions of a session's
state, escaped, coloured by verdict."""
from __future__ import annotations

import re

import numpy as np

import gradlab
from gradlab.kernel_ext.views import (check_html, diff_html, header_html, pre, results_html,
                                      saved_html, status_html)
from gradlab.workbench.session import GradSession


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


W, X = np.full((3, 2), 0.1), np.ones((4, 3))


def session() -> GradSession:
    return GradSession(gradlab.grad(loss), (W, X))


def test_text_is_escaped() -> None:
    assert pre("a < b & c", "#b00020", "k") == \
        '<pre class="k" style="' + \
        'margin:2px 0;font-family:monospace;font-size:12px;white-space:pre;color:#b00020">' + \
        "a &lt; b &amp; c</pre>"
    assert "<code>x &lt;- y</code>" in header_html("x <- y")


def test_mismatch_rows_are_red():
    from gradlab.workbench.checking import CheckReport, CheckRow
    report = CheckReport([CheckRow("finite differences", "W", 1e-12, 1e-11),
                          CheckRow("torch.autograd", "W", 0.5, 0.5),
                          CheckRow("jax.grad", "W", None, None, "not applicable: why")])
    markup = check_html(report)
    rows = re.findall(r"<tr class='([^']+)' style='color:([^']+)'>", markup)
    assert rows == [("gradlab-check-row", "#1b5e20"), ("gradlab-mismatch", "#b00020"),
                    ("gradlab-check-row", "#757575")]
    assert "MISMATCH" in markup and "not applicable: why" in markup


def test_a_run_shows_its_result_and_a_hidden_one_nothing() -> None:
    s = session()
    s.run(repeats=1)
    markup = results_html(s)
    assert 'class="gradlab-run"' in markup and "#1b5e20" in markup
    assert results_html(s, hidden=True) == ""


def test_status_and_diff_after_an_edit_and_after_a_broken_one() -> None:
    s = session()
    assert status_html(s, "dloss") == "" and diff_html(s) == ""       # nothing edited yet
    edited = s.generated_source.replace("dW = ", "dW = 2.0 * ", 1)
    assert s.recompile(edited)
    ok = status_html(s, "dloss")
    assert "✓ compiled (" in ok and "dloss in your notebook is this version" in ok
    assert "panel.session.active is this version" in status_html(s, None)
    diff = diff_html(s)
    assert "against the generated code" in diff and 'style="color:#1b5e20">+' in diff
    assert not s.recompile(edited.replace("    return dW", "    return dW +"))
    broken = status_html(s, "dloss")
    assert broken.startswith('<pre class="gradlab-status-line"') and "✗ " in broken
    assert "still running: your previous edit (" in broken


def test_the_saved_values_table() -> None:
    from gradlab.examples import rnn_loss
    rng = np.random.default_rng(0)
    args = rng.normal(size=(3, 3)) * 0.3, rng.normal(size=(5, 3)), rng.normal(size=3)
    df = gradlab.grad(rnn_loss)
    plain = re.sub(r"<[^>]+>", " ", saved_html(df.saved))
    assert "h = np.tanh(W @ h + xs[t])" in plain and "Run to see" in plain
    measured = saved_html(df.saved_for(*args))
    assert measured.count("class='gradlab-saved-row'") == 1     # h only, for these shapes
    assert "total: 96 bytes" in measured                         # 4 steps of 3 float64


def test_a_gradient_that_saves_nothing_says_so() -> None:
    markup = saved_html(gradlab.grad(loss).saved)
    assert "saves nothing for its backward pass" in markup
