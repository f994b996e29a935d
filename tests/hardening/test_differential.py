"""The differential harness itself: a branch that only round-off decides is recognised as
unstable (another backend, summing in another order, may take the other branch), and a
stable program is not."""
from __future__ import annotations

import numpy as np

from tests.hardening.differential import decided_by_round_off, reference


def tie(x, y):
    # sum(a - mean(a)) is zero but for round-off: its sign depends on the summation order.
    # It depends on y only, and the gradient is taken w.r.t. x, so finite differences in x
    # see one branch: this is the case the check exists for (found by the fuzzer on JAX).
    a = y * np.ones((3, 1))
    if np.sum(a - np.mean(a, axis=0, keepdims=True)) < 0.0:
        return np.sum(np.sin(x))
    return np.sum(np.sin(x)) + 1.0


def clear(x, y):
    if np.sum(y) > 0.0:
        return np.sum(np.sin(x))
    return np.sum(x)


ARGS = [np.array([0.3, -1.7, 2.9, 0.11]), np.array([0.3, -1.7, 2.9, 0.11])]


def test_a_branch_decided_by_round_off_is_unstable():
    assert decided_by_round_off(reference(tie, ARGS, (0,), seed=0))


def test_a_clear_branch_is_stable():
    assert not decided_by_round_off(reference(clear, ARGS, (0,), seed=0))
