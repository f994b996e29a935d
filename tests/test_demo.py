"""``make demo`` (gradlab.demo): the gradient's code, then one checked line per framework."""
from __future__ import annotations

import gradlab.tensor
from gradlab import demo


def test_the_demo_prints_the_code_and_a_checked_line_per_framework(monkeypatch, capsys) -> None:
    # NumPy only: the other frameworks' lines are the same code path, and the demo turns on
    # JAX's float64 for the whole process, which the other tests must not inherit.
    monkeypatch.setattr(gradlab.tensor, "installed_frameworks", lambda: ["numpy"])
    monkeypatch.setattr(demo, "_quietly_import_frameworks", lambda: None)
    assert demo.main() == 0
    out = capsys.readouterr().out
    assert out.startswith("gradlab demo: the gradient of a one-hidden-layer network's loss")
    assert "def dmlp_loss_dW1_dW2(W1, b1, W2, b2, X, Y, *, seed=1.0):" in out
    numpy_line = next(line for line in out.splitlines() if line.startswith("numpy "))
    assert numpy_line.rstrip().endswith(" ok") and "median of" in numpy_line
    assert "MISMATCH" not in out and "failed" not in out
