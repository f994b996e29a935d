"""with_module_swapped: a copy of a function whose NumPy is another module."""
from __future__ import annotations

import math
import types

import numpy as np

from gradlab.tensor.swap import with_module_swapped


def uses_numpy(x, *, scale=1.0):
    return scale * (np.sum(x) + math.floor(2.5))


class _CountingNumPy(types.ModuleType):
    """A module that adds ten to every sum, to tell which one a function called."""

    def sum(self, x):
        return float(np.sum(x)) + 10.0


def test_only_the_named_module_is_replaced() -> None:
    swapped = with_module_swapped(uses_numpy, "numpy", _CountingNumPy("counting"))
    assert swapped([1.0, 2.0]) == 15.0            # 3 + 10 from the swap, + floor(2.5): math kept
    assert uses_numpy([1.0, 2.0]) == 5.0          # the original still calls NumPy
    assert swapped([1.0], scale=2.0) == 26.0      # keyword defaults carried over


def test_a_builtin_is_returned_as_it_is() -> None:
    assert with_module_swapped(len, "numpy", _CountingNumPy("counting")) is len
