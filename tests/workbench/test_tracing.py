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
    assert names[:5] == ["W", "x", "seed", "xW", "h"]   # the parameters (seed too) first
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


def long_loop(x, n):
    h = x
    for i in range(n):
        h = h - 0.001
        s = np.sqrt(h)       # NaN once h < 0, at iteration 1001
    return np.sum(s)


def test_a_long_loop_is_summarised_and_its_first_nan_kept_exactly():
    import tracemalloc
    df = gradlab.grad(long_loop)
    x = np.array([1.0005, 2.0])
    full = gradlab.trace(df, limit=10 ** 9)(x, 1500)
    exact = full.first_nonfinite
    assert exact is not None and "gl.sqrt" in exact.code
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        short = gradlab.trace(df, limit=100)(x, 20_000)
        kept = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert len(short.steps) == 100 and short.total > 40_000
    assert sum(short.omitted.values()) > 99_000    # counted by line, not recorded
    bad = short.first_nonfinite
    assert bad is not None and (bad.index, bad.line) == (exact.index, exact.line)
    assert kept < 2_000_000, kept          # 20,000 iterations' steps would be far more
    assert len(repr(short)) < 400 and "first NaN/Inf" in repr(short)
    assert "more steps" in short.table()


def test_a_step_budget_stops_the_run_and_says_so():
    df = gradlab.grad(long_loop)
    report = gradlab.trace(df, limit=50, max_steps=500)(np.array([1.0005, 2.0]), 20_000)
    assert report.total == 500 and report.result is None
    assert report.first_nonfinite is None
    assert "stopped after 500 steps" in report.explain()


def test_forward_mode_and_hvp_are_traced_with_their_tangent_last():
    import numpy as np

    def f(W, x):
        return np.sum(np.tanh(x @ W) ** 2)
    W, x, v = np.full((3, 2), 0.1), np.ones((4, 3)), np.ones((3, 2))
    report = gradlab.trace(gradlab.jvp(f))(W, x, v)
    value, tangent = gradlab.jvp(f)(W, x, v)
    assert report.first_nonfinite is None
    assert float(np.asarray(report.result[1])) == float(tangent)
    hv = gradlab.trace(gradlab.hvp(f))(W, x, v)
    assert hv.steps and hv.first_nonfinite is None
    params = {"W": W}

    def g(params, x):
        return np.sum(np.tanh(x @ params["W"]) ** 2)
    traced = gradlab.trace(gradlab.jvp(g, "params"))(params, x, {"W": v})
    assert float(np.asarray(traced.result[1])) == float(tangent)


def _squares(x):
    return np.sum(x ** 2)


def _squared(x):
    return x ** 2


def test_trace_and_step_check_their_call_as_the_gradient_does():
    """A plain function, a wrong number of arguments, a non-scalar output without a seed and
    a seed of another shape: each said in the user's terms (they raised from inside)."""
    import pytest
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(gradlab.GradlabError, match="runs the code gradlab made"):
        gradlab.trace(_squares)
    with pytest.raises(gradlab.GradlabError, match="takes the arguments of _squares"):
        gradlab.trace(gradlab.grad(_squares))(x, x)
    with pytest.raises(gradlab.GradlabError, match="not a\\s+scalar"):
        gradlab.trace(gradlab.grad(_squared))(x)
    with pytest.raises(gradlab.GradlabError, match="seed= has shape"):
        gradlab.trace(gradlab.grad(_squared))(x, seed=np.ones(5))
    with pytest.raises(gradlab.GradlabError, match="then the tangent"):
        gradlab.trace(gradlab.jvp(_squares))(x)
    with pytest.raises(gradlab.GradlabError, match="runs the code gradlab made"):
        gradlab.step(_squares, x)
    stepper = gradlab.step(gradlab.grad(_squared), x, seed=np.ones(3))
    assert stepper.steps
