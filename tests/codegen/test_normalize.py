"""Normalization (gradlab.codegen.normalize): one operation per statement, every ``for`` over
a range, tuple unpacking, augmented assignment and conditional expressions made explicit."""
from __future__ import annotations

import gast
import numpy as np

import gradlab
from gradlab.codegen.normalize import assigned_names, value_params
from tests.codegen.ir_text import normalized, text


def many_forms(x, W, ws):
    a, b = x[0] * 2.0, x[1:]
    a += 1.0
    for w in ws:
        b = b * w
    t = (x @ W).T
    y = -t if a > 0 else t
    return np.sum(b) + np.sum(y[::2])


def test_every_form_becomes_one_operation_per_statement() -> None:
    assert text(many_forms) == [
        "x_0 = getitem(x, 0)",
        "x_0_times_2 = multiply(x_0, 2.0)",
        "x_part = getitem(x, 1:)",
        "a, b = tuple(x_0_times_2, x_part)",
        "a_1 = add(a, 1.0)",                      # a += 1.0: a new value outside loops
        "for i in range(len(ws)):",               # a for over a list: over its indices
        "    w = getitem(ws, i)",
        "    b = multiply(b, w)",
        "xW = matmul(x, W)",
        "t = transpose(xW)",
        "if a_1 > 0:",                            # a conditional expression: an if
        "    choice = negative(t)",
        "else:",
        "    choice = copy(t)",
        "y = copy(choice)",
        "sum_b = sum(b)",
        "y_part = getitem(y, ::2)",
        "sum_y_part = sum(y_part)",
        "many_forms = add(sum_b, sum_y_part)",
    ]


def test_the_normalized_program_computes_the_users_gradient() -> None:
    rng = np.random.default_rng(0)
    x, W = rng.normal(size=4), rng.normal(size=(4, 3))
    ws = [np.float64(0.5), np.float64(-2.0)]
    eps = 1e-6
    numeric = np.zeros_like(W)
    for k in np.ndindex(W.shape):
        up, down = W.copy(), W.copy()
        up[k] += eps
        down[k] -= eps
        numeric[k] = (many_forms(x, up, ws) - many_forms(x, down, ws)) / (2 * eps)
    np.testing.assert_allclose(gradlab.grad(many_forms, wrt="W")(x, W, ws), numeric, rtol=1e-6)


def test_the_user_names_and_their_parameters_are_known() -> None:
    node = normalized(many_forms).parsed.node
    assert assigned_names(node) == {"x", "W", "ws", "a", "b", "w", "t", "y"}
    assert isinstance(node, gast.FunctionDef)


def test_value_parameters_are_flattened_and_options_are_not() -> None:
    assert value_params("add") == ("x", "y")
    assert "axis" not in value_params("sum") and "x" in value_params("sum")
    assert value_params("not_a_primitive") == ()
