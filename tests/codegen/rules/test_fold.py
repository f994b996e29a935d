"""Simplifying instantiated rules (gradlab.codegen.rules.fold): literal arithmetic done,
neutral terms dropped, default keywords left out."""
from __future__ import annotations

import ast

import gast
import pytest

from gradlab.codegen.rules.fold import LINEAR, fold, literal_value, number


def folded(text: str) -> str:
    node = gast.parse(text).body[0].value
    return ast.unparse(gast.gast_to_ast(fold(node)))


@pytest.mark.parametrize("written, shown", [
    ("2.0 * 3.0", "6.0"), ("1.0 - 3.0", "-2.0"), ("x * 1.0", "x"), ("1 * x", "x"),
    ("x / 1", "x"), ("x ** 1", "x"), ("0.0 + x", "x"), ("x - 0", "x"), ("0 - x", "-x"),
    ("x * 0.0", "0.0"), ("0.0 / x", "0.0"), ("-(-x)", "x"), ("(1.0 - 0.0) * dy", "dy"),
    ("2 ** 0.5 * x", f"{2 ** 0.5} * x"), ("x * y", "x * y"),
    ("(-1.0) ** 0.5", "(-1.0) ** 0.5"),                      # complex: left as written
    ("1 / 0", "1 / 0"),                                      # raises: left as written
])
def test_literal_arithmetic_and_neutral_terms(written, shown) -> None:
    assert folded(written) == shown


@pytest.mark.parametrize("written, shown", [
    ("gl.log(1.0)", "0.0"), ("gl.exp(0)", "1.0"), ("gl.cos(0.0) * dy", "dy"),
    ("gl.sqrt(-1.0)", "gl.sqrt(-1.0)"), ("gl.tanh(x)", "gl.tanh(x)")])
def test_a_framework_function_of_a_number_is_computed(written, shown) -> None:
    assert folded(written) == shown


def test_a_linear_function_of_a_zero_is_zero_and_defaults_are_left_out() -> None:
    assert "sum" in LINEAR and 0 in LINEAR["sum"]
    assert folded("gl.sum(0.0, axis=1)") == "0.0"
    assert folded("gl.sum(x, axis=None, keepdims=False)") == "gl.sum(x)"
    assert folded("gl.sum(x, axis=1, keepdims=False)") == "gl.sum(x, axis=1)"
    assert folded("np.sum(x, axis=None)") == "np.sum(x, axis=None)"   # only gl's own calls


def test_literal_values() -> None:
    def node(text):
        return gast.parse(text).body[0].value
    assert number(node("-2.5")) == -2.5 and number(node("True")) is None
    assert number(node("x")) is None
    assert literal_value(node("(1, 0)")) == (1, 0) and literal_value(node("[1, x]")) is None
    # infinity, as normalize writes an option that is one (np.inf, -math.inf...)
    assert number(node("float('inf')")) == float("inf")
    assert number(node("-float('inf')")) == -float("inf")
    assert number(node("float('nan')")) is None and number(node("float(x)")) is None
