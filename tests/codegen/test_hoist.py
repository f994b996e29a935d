"""Loop-invariant code motion (gradlab.codegen.hoist): what a loop never changes runs once,
before it."""
from __future__ import annotations

import numpy as np

import gradlab
from gradlab.codegen.hoist import hoist
from tests.codegen.ir_text import lines, normalized


def invariant_in_loop(h, W):
    for i in range(3):
        c = np.tanh(W) * 2.0
        h = np.tanh(h * c)
    return np.sum(h)


def test_what_the_loop_never_changes_moves_before_it_in_order() -> None:
    fn = normalized(invariant_in_loop).ir
    hoist(fn.body)
    assert lines(fn.body) == [
        "tanh_W = tanh(W)",
        "c = multiply(tanh_W, 2.0)",
        "for i in range(3):",
        "    h_times_c = multiply(h, c)",
        "    h = tanh(h_times_c)",
        "invariant_in_loop = sum(h)",
    ]


def counter_and_random(h, W):
    for i in range(3):
        k = W * i                                      # reads the loop's counter
        noise = np.random.normal(size=3)               # a new draw every iteration
        h = h * k + noise * 0.0
    return np.sum(h)


def test_what_reads_the_counter_or_draws_random_numbers_stays() -> None:
    fn = normalized(counter_and_random).ir
    before = lines(fn.body)
    hoist(fn.body)
    assert lines(fn.body) == before


def test_hoisting_keeps_the_gradient_and_saves_less() -> None:
    h, W = np.array([0.2, -0.1]), np.array([0.7, 0.3])
    plain = gradlab.grad(invariant_in_loop, wrt="W", optimized=False)
    hoisted = gradlab.grad(invariant_in_loop, wrt="W", optimized=True)
    np.testing.assert_allclose(hoisted(h, W), plain(h, W), rtol=1e-14)
    assert "c_stack" in plain.source and "c_stack" not in hoisted.source
