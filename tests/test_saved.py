"""``df.saved`` and ``df.saved_for(*args)``: what a gradient saves for its backward pass, where
it comes from, what reads it, and (after a run) how much of it there is."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.examples import rnn_loss


def rnn_inputs(steps: int = 10, hidden: int = 4) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    return (rng.normal(size=(hidden, hidden)) * 0.3, rng.normal(size=(steps, hidden)),
            rng.normal(size=hidden))


def test_saved_names_each_value_its_line_and_its_readers() -> None:
    df = gradlab.grad(rnn_loss)
    saved = df.saved
    assert "h" in saved.names
    h = next(v for v in saved if v.name == "h")
    assert h.user_text == "h = np.tanh(W @ h + xs[t])"
    lines = df.source.splitlines()
    assert lines[h.push_line - 1].strip() == f"{h.stack}.append(h)"
    assert h.read_by, "the backward pass reads the hidden state"
    for number, text in h.read_by:
        assert lines[number - 1].strip() == text and "h" in text
    assert not saved.measured and saved.total_bytes is None
    assert "h = np.tanh(W @ h + xs[t])" in repr(saved)


def test_saved_for_counts_steps_shapes_and_bytes() -> None:
    W, xs, h0 = rnn_inputs(steps=10, hidden=4)
    df = gradlab.grad(rnn_loss)
    report = df.saved_for(W, xs, h0)
    h = next(v for v in report if v.name == "h")
    # rnn_loss skips every 5th step: 8 of 10 steps update h
    assert (h.steps, h.shape, h.dtype) == (8, (4,), "float64")
    assert h.bytes_per_step == 32 and h.total_bytes == 8 * 32
    assert report.measured and report.total_bytes == sum(v.total_bytes for v in report)
    assert "total bytes" in repr(report)
    # measuring runs the same code: the gradient is unchanged by it
    np.testing.assert_allclose(df(W, xs, h0), gradlab.grad(rnn_loss)(W, xs, h0))


def test_a_function_without_loops_saves_nothing() -> None:
    def f(x):
        return np.sum(np.tanh(x) ** 2)

    df = gradlab.grad(f)
    assert len(df.saved) == 0
    assert "saves nothing" in repr(df.saved_for(np.ones(3)))


def test_saved_for_python_numbers_and_torch() -> None:
    torch = pytest.importorskip("torch")

    def f(u, k):
        s = 0.0
        for t in range(u.shape[0]):
            s = s + np.sin(u[t] * k)
        return s

    df = gradlab.grad(f)
    u = np.linspace(0.0, 1.0, 6)
    report = df.saved_for(u, 2.0)
    assert report.measured and all(v.steps == 6 for v in report)
    tensor_report = df.saved_for(torch.tensor(u), 2.0)
    assert [v.steps for v in tensor_report] == [v.steps for v in report]
    assert all(v.dtype == "torch.float64" or v.dtype.startswith("Python")
               for v in tensor_report)


def test_the_rnn_saves_its_hidden_states_only() -> None:
    """Issue 16's target on bench W3 (rnn_loss, 50 steps, hidden 64): the bytes saved are the
    hidden states', as in the hand-written gradient (which keeps h0 and every new h; gradlab
    keeps the last one in ``h`` itself, so one state fewer is on a stack). ``saved_for``
    measures the code the call runs: specialised for these shapes, it needs no shape of
    ``W @ h`` either."""
    rng = np.random.default_rng(1)
    W = rng.normal(size=(64, 64)) * (0.9 / 8)
    xs, h0 = rng.normal(size=(50, 64)) * 0.5, rng.normal(size=64) * 0.1
    df = gradlab.grad(rnn_loss)
    report = df.saved_for(W, xs, h0)
    taken = sum(1 for t in range(50) if t % 5 != 0)
    assert report.names == ["h"]
    assert report.total_bytes == taken * h0.nbytes
    assert report.total_bytes <= (taken + 1) * h0.nbytes      # the hand-written gradient's
    # the generic code (shapes unknown) saves the shape of W @ h, not the array
    assert df.saved.names == ["gl.shape(Wh)", "h"]


def test_a_saved_shape_is_measured_as_a_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradlab import api
    W, xs, h0 = rnn_inputs(steps=10, hidden=4)
    df = gradlab.grad(rnn_loss)
    monkeypatch.setattr(api, "_SPECIALISING", False)    # the generic code runs
    generic = gradlab.grad(rnn_loss)
    report = generic.saved_for(W, xs, h0)
    shape = next(v for v in report if v.name == "gl.shape(Wh)")
    assert (shape.steps, shape.shape, shape.dtype) == (8, (1,), "shape")
    np.testing.assert_allclose(generic(W, xs, h0), df(W, xs, h0))
