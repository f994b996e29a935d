"""Normalization (gradlab.codegen.normalize): one operation per statement, every ``for`` over
a range, tuple unpacking, augmented assignment and conditional expressions made explicit."""
from __future__ import annotations

import gast
import numpy as np
import pytest

import gradlab
from gradlab.codegen.normalize import assigned_names, value_params
from gradlab.tensor import FRAMEWORKS
from tests.codegen.ir_text import normalized, text
from tests.conftest import central_difference, require, to_framework, to_numpy


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


# --- options given as variables: the code branches on them --------------------------------------
try:
    import tensorflow as tf    # tf.matmul's flags are what the next tests read
except ImportError:            # pragma: no cover - the suite requires every framework
    tf = None


def product_with_flags(a, b, ta, tb):
    return tf.reduce_sum(tf.matmul(a, b, transpose_a=ta, transpose_b=tb) ** 2)


def mean_with_flag(x, keep):
    return np.sum(np.mean(x, axis=0, keepdims=keep) * x)


def test_a_flag_given_as_a_variable_becomes_an_if() -> None:
    lines = text(mean_with_flag)
    assert "if keep:" in lines
    assert "    mean_x = mean(x, axis=0, keepdims=True)" in lines
    assert "    mean_x = mean(x, axis=0, keepdims=False)" in lines


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("flags", [(True, True), (True, False), (False, True), (False, False)])
def test_matmul_transpose_flags_read_at_run_time(framework: str, flags: tuple[bool, bool]) -> None:
    require(framework)
    require("tensorflow")
    a, b = np.random.RandomState(0).randn(3, 3), np.random.RandomState(1).randn(3, 3)
    fa, fb = to_framework(a, framework), to_framework(b, framework)
    g = to_numpy(gradlab.grad(product_with_flags)(fa, fb, *flags))
    np.testing.assert_allclose(g, central_difference(product_with_flags, a, b, *flags),
                               atol=1e-6)
    v = np.ones_like(a)
    _, tangent = gradlab.jvp(product_with_flags)(fa, fb, *flags, to_framework(v, framework))
    assert float(to_numpy(tangent)) == pytest.approx(float(np.sum(g * v)), abs=1e-6)
    h = to_numpy(gradlab.hvp(product_with_flags)(fa, fb, *flags, to_framework(v, framework)))
    shifted = gradlab.grad(product_with_flags)
    fd = (to_numpy(shifted(to_framework(a + 1e-6 * v, framework), fb, *flags))
          - to_numpy(shifted(to_framework(a - 1e-6 * v, framework), fb, *flags))) / 2e-6
    np.testing.assert_allclose(h, fd, atol=1e-5)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("keep", [True, False])
def test_keepdims_read_at_run_time(framework: str, keep: bool) -> None:
    require(framework)
    x = np.random.RandomState(2).randn(3, 4)
    g = to_numpy(gradlab.grad(mean_with_flag)(to_framework(x, framework), keep))
    np.testing.assert_allclose(g, central_difference(mean_with_flag, x, keep), atol=1e-6)
    v = to_framework(np.ones_like(x), framework)
    _, tangent = gradlab.jvp(mean_with_flag)(to_framework(x, framework), keep, v)
    assert float(to_numpy(tangent)) == pytest.approx(float(np.sum(g)), abs=1e-6)
    h = to_numpy(gradlab.hvp(mean_with_flag)(to_framework(x, framework), keep, v))
    np.testing.assert_allclose(h, np.full_like(x, 2.0), atol=1e-9)   # 3 rows of 2/3
