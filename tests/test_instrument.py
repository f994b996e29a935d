"""Generated code run with a hook after each assignment (gradlab.instrument)."""
from __future__ import annotations

import numpy as np

import gradlab
from gradlab.instrument import instrumented, main_lines


def tanh_sum(x):
    h = np.tanh(x)
    return np.sum(h * 2.0)


def test_every_assignment_is_recorded_with_the_line_the_user_reads() -> None:
    df = gradlab.grad(tanh_sum)
    x = np.array([0.1, -0.4])
    seen = []
    fn, source, name = instrumented(df, (x,), lambda line, values: seen.append((line, values)))
    assert name == "dtanh_sum_dx"
    np.testing.assert_allclose(fn(x), df(x), rtol=1e-15)
    lines = source.text.splitlines()
    first_line, params = seen[0]
    assert params["x"] is x                          # the parameters on entry, at the def
    assert lines[first_line - 1].startswith("def dtanh_sum_dx(x")
    for line, values in seen[1:]:
        written = lines[line - 1].strip()
        assert written.split(" = ")[0] == ", ".join(values), (line, written)
    recorded = {n: v for _, values in seen for n, v in values.items()}
    np.testing.assert_allclose(recorded["h"], np.tanh(x))
    np.testing.assert_allclose(recorded["dx"], df(x))
    assert "record" not in df.source            # the code shown is left as it was


def test_main_lines_are_those_of_the_named_function_only() -> None:
    lines = ["def df(x):", "    a = 1", "    return a", "", "def helper(y):", "    return y"]
    assert main_lines(lines, "df") == {2, 3, 4}
    assert main_lines(lines, "helper") == {6}
    assert main_lines(lines, "missing") == set()


def test_the_code_watched_is_the_code_these_inputs_run() -> None:
    """A call whose shapes have code of their own (dW = x.T @ dxW) is watched in that code,
    the code the panel shows after a run, not in the generic code."""
    def layer(W, x):
        return np.sum(np.tanh(x @ W) ** 2)
    df = gradlab.grad(layer)
    W, x = np.full((3, 2), 0.1), np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    seen = []
    fn, source, _ = instrumented(df, (W, x), lambda line, values: seen.append(line))
    assert source.text == df.source_for(W, x) != df.source
    assert "dW = x.T @ dxW" in source.text
    np.testing.assert_allclose(fn(W, x), df(W, x), rtol=1e-15)
    assert source.text.splitlines()[seen[-1] - 1].strip().startswith("dW = x.T @ dxW")
