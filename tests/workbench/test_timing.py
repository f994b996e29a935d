"""Honest timings (gradlab.workbench.timing): the first call apart, a median of repeats."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.workbench.timing import Timing, first_array, format_ms, measure


@pytest.mark.parametrize("ms, text", [(1234.4, "1234 ms"), (100.0, "100 ms"), (12.345, "12.35 ms"),
                                      (1.0, "1.00 ms"), (0.41234, "0.412 ms")])
def test_format_ms_keeps_the_digits_that_matter(ms, text) -> None:
    assert format_ms(ms) == text


def test_first_array_looks_into_lists_in_order() -> None:
    a, b = np.zeros(2), np.ones(3)
    assert first_array([1.0, [None, (a,)], b]) is a
    assert first_array([1.0, "x"]) is None


def test_measure_times_the_first_call_apart_and_repeats_the_rest() -> None:
    calls = []

    def fn(x):
        calls.append(1)
        return x * 2.0
    x = np.arange(3.0)
    result, timing = measure(fn, (x,), repeats=5, budget_s=10.0)
    np.testing.assert_array_equal(result, x * 2.0)
    assert len(calls) == 6 and timing.repeats == 5
    assert (timing.framework, timing.device) == ("numpy", "cpu")
    assert timing.median_ms >= 0 and timing.first_ms >= 0


def test_measure_stops_repeating_when_the_budget_is_spent() -> None:
    _, timing = measure(lambda x: x, (np.zeros(1),), repeats=1000, budget_s=0.0)
    assert timing.repeats == 1


def test_a_timing_line_names_framework_device_median_and_first_call() -> None:
    line = Timing("torch", "cuda:0 · NVIDIA H200", 0.41, 12.0, 20).line()
    assert line == "torch · cuda:0 · NVIDIA H200 · 0.410 ms (median of 20) · first call 12.00 ms"
