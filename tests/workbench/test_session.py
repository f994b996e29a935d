"""The panel's engine, without a notebook: what a run shows, and a bounded NaN search."""
from __future__ import annotations

import numpy as np

import gradlab
from gradlab.workbench import session as session_module
from gradlab.workbench.session import GradSession


def elementwise(x):
    return np.tanh(x) * 2.0


def test_a_non_scalar_output_is_said_to_show_the_gradient_of_its_sum():
    s = GradSession(gradlab.grad(elementwise), (np.array([0.1, 0.2, 0.3]),))
    (result,) = s.run()
    assert not result.error
    assert "returns shape (3,), not a scalar" in result.summary()
    assert "sum(elementwise(...))" in result.note
    np.testing.assert_allclose(result.gradients, 2.0 * (1 - np.tanh([0.1, 0.2, 0.3]) ** 2))


def sliding(x, n):
    h = x
    for i in range(n):
        h = h - 0.001
        s = np.sqrt(h)
    return np.sum(s)


def test_the_automatic_nan_search_is_bounded_and_a_full_one_can_be_asked(monkeypatch):
    monkeypatch.setattr(session_module, "NAN_HUNT_STEPS", 300)
    s = GradSession(gradlab.grad(sliding, check=False), (np.array([1.0005, 2.0]), 1500))
    (result,) = s.run(repeats=1)
    assert "stopped after 300 steps" in result.diagnosis
    assert "session.diagnose()" in result.diagnosis
    found = s.diagnose()
    assert found.startswith("first NaN/Inf at step") and "np.sqrt(h)" in found


def test_a_run_is_checked_by_the_semantic_guard(monkeypatch):
    from gradlab.tensor import backend
    ops = backend("numpy")
    right = ops.tanh
    monkeypatch.setattr(ops, "tanh", lambda x: 2.0 * right(x))
    s = GradSession(gradlab.grad(squashed), (np.array([0.1, 0.2]),))
    (result,) = s.run(repeats=1)
    assert "different forward value" in result.error


def squashed(x):
    return np.sum(np.tanh(x))
