"""The user's function run again on copies of the arguments (gradlab.rerun)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from gradlab.rerun import call_quietly, copied, run_original
from tests.conftest import require


class Ran:
    """What :func:`run_original` reads of a gradient function: the user's function."""

    def __init__(self, fn):
        self.fn = fn


def scale_in_place(x, factors):
    x *= 2.0
    factors["k"] = 0.0
    return float(np.sum(x))


def test_the_original_runs_on_copies_and_leaves_the_callers_values_alone() -> None:
    x, factors = np.ones(3), {"k": 3.0}
    original = run_original(Ran(scale_in_place), (x, factors), {})
    assert original.ran and original.value == 6.0 and original.why_not == ""
    np.testing.assert_array_equal(x, np.ones(3))
    assert factors == {"k": 3.0}


def test_copied_copies_what_can_change_and_shares_what_cannot() -> None:
    a = np.zeros(2)
    nested = copied([a, (a, 1.5), {"a": a}])
    assert nested[0] is not a and nested[1][0] is not a and nested[2]["a"] is not a
    np.testing.assert_array_equal(nested[0], a)
    assert copied(1.5) == 1.5 and copied("s") == "s" and copied(None) is None


def test_a_torch_tensor_is_copied_without_its_graph() -> None:
    require("torch")
    import torch
    t = torch.ones(2, requires_grad=True)
    c = copied(t)
    assert not c.requires_grad and c.data_ptr() != t.data_ptr()


def test_a_function_that_cannot_run_on_the_inputs_runs_on_numpy_copies() -> None:
    require("torch")
    import torch

    def refuses_torch(x):
        if isinstance(x, torch.Tensor):
            raise TypeError("only NumPy")
        return float(np.sum(x))
    original = run_original(Ran(refuses_torch), (torch.ones(3, dtype=torch.float32),), {})
    assert original.ran and original.value == 3.0


def test_a_function_that_cannot_run_at_all_says_why() -> None:
    def broken(x):
        raise ValueError("no luck")
    original = run_original(Ran(broken), (np.ones(2),), {})
    assert not original.ran and original.value is None
    assert "does not run on these inputs (ValueError: no luck)" in original.why_not
    assert "broken" in original.why_not


def test_call_quietly_silences_warnings_only_inside() -> None:
    def warns(x):
        warnings.warn("noisy", RuntimeWarning)
        return x + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert call_quietly(warns, (1,), {}) == 2
        with pytest.raises(RuntimeWarning):
            warns(1)
