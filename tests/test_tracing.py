"""trace runs generated code step by step and finds where a NaN first appears."""
import numpy as np

import gradlab


def log_loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(np.log(h ** 2))


def test_trace_records_every_step():
    W = np.array([[0.5, 0.1], [0.2, -0.3]])
    x = np.array([[1.0, 2.0]])
    df = gradlab.grad(log_loss)
    report = gradlab.trace(df)(W, x)
    np.testing.assert_allclose(report.result, df(W, x))
    names = [v.name for s in report.steps for v in s.values]
    assert names[:5] == ["W", "x", "dlog_loss", "xW", "h"]   # the parameters (seed too) first
    assert names[-1] == "dW"
    assert {s.section for s in report.steps} == {"forward", "backward"}
    assert report.first_nonfinite is None


def test_trace_finds_an_injected_nan_at_its_line():
    W = np.array([[0.0, 0.1], [0.0, -0.3]])   # h[:, 0] == 0: log(0) and 1/0 appear
    x = np.array([[1.0, 2.0]])
    df = gradlab.grad(log_loss)
    report = gradlab.trace(df)(W, x)
    bad = report.first_nonfinite
    assert bad is not None
    assert "log_h_pow2 = gl.log(h_pow2)" in bad.code
    assert bad.user_text == "return np.mean(np.log(h ** 2))"
    assert "first NaN/Inf" in report.explain()
    backward_bad = next(s for s in report.backward() if not s.finite)
    assert backward_bad.section == "backward"
