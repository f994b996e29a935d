"""Each value its own name outside loops (gradlab.codegen.rename), names kept inside them, and
one name after an ``if`` whichever branch ran."""
from __future__ import annotations

import numpy as np

import gradlab
from tests.codegen.ir_text import text


def twice_then_loop(x, W):
    x = np.sin(x)
    x = np.sin(x)
    h = x
    for i in range(3):
        h = np.tanh(h * W)
    return np.sum(h ** 2)


def test_a_value_overwritten_outside_loops_gets_a_new_name_and_a_loop_keeps_its_own() -> None:
    assert text(twice_then_loop) == [
        "x_1 = sin(x)",
        "x_2 = sin(x_1)",
        "h = copy(x_2)",
        "for i in range(3):",
        "    h_times_W = multiply(h, W)",
        "    h = tanh(h_times_W)",           # loop-carried: the same variable every iteration
        "h_pow2 = power(h, 2)",
        "twice_then_loop = sum(h_pow2)",
    ]


def doubled_if(x, flag):
    if flag:
        x = x * 2.0
    else:
        y = 1.0
    return np.sum(x)


def test_the_branch_that_did_not_assign_copies_the_other_ones_version_in() -> None:
    assert text(doubled_if) == [
        "if flag:",
        "    x_1 = multiply(x, 2.0)",
        "else:",
        "    y = copy(1.0)",
        "    x_1 = copy(x)",
        "doubled_if = sum(x_1)",
    ]


def test_renamed_code_computes_what_the_user_wrote() -> None:
    """The generated gradient reads the earlier versions (x, x_1) without saving them."""
    x, W = np.array([0.3, -0.2]), np.array([0.5, 1.5])
    dx = gradlab.grad(twice_then_loop)(x, W)
    eps = 1e-6
    numeric = [(twice_then_loop(x + eps * e, W) - twice_then_loop(x - eps * e, W)) / (2 * eps)
               for e in np.eye(2)]
    np.testing.assert_allclose(dx, numeric, rtol=1e-6)
    assert np.sum(gradlab.grad(doubled_if)(x, True)) == 4.0
    assert np.sum(gradlab.grad(doubled_if)(x, False)) == 2.0
