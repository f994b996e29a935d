"""Partials and lambdas bound to names in the function (gradlab/codegen/callables.py): each call
is read as what it stands for, with Python's evaluation order; what cannot be read so is refused
at its line. (Gradients on every backend: tests/hardening/test_known_bugs.py.)"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabError
from tests.conftest import central_difference

X = np.array([0.4, -0.3, 0.9])


def _scaled_tanh(x, a, b=0.0):
    return np.sum(np.tanh(a * x + b))


def partial_with_bound_and_keyword_values(x):
    g = functools.partial(_scaled_tanh, a=2.0)
    h = functools.partial(_scaled_tanh, x * 0.5)      # binds the value of x * 0.5 now
    return g(x) + g(x, b=1.0) + h(3.0)


def lambda_with_a_default_and_an_outer_name(x):
    shift = 0.5
    f = lambda u, p=2.0: np.sum((u - shift) ** p)  # noqa: E731
    shift = x[0]            # read when f is called
    return f(x) + f(x, p=3.0)


@pytest.mark.parametrize("f", [partial_with_bound_and_keyword_values,
                               lambda_with_a_default_and_an_outer_name])
def test_a_call_is_read_as_what_it_stands_for(f) -> None:
    np.testing.assert_allclose(gradlab.grad(f)(X), central_difference(f, X), rtol=1e-6,
                               atol=1e-8)


def test_the_generated_code_calls_the_partials_function() -> None:
    text = gradlab.grad(partial_with_bound_and_keyword_values).source_for(X)
    assert "_scaled_tanh(x, 2.0" in text and "def _scaled_tanh(" in text


def recursive_lambda(x):
    f = lambda u: f(u) * 2  # noqa: E731
    return np.sum(f(x))


def lambda_with_a_computed_default(x):
    k = 2.0
    f = lambda u, c=k: np.sum(u * c)  # noqa: E731
    return f(x)


def lambda_called_with_a_wrong_arity(x):
    f = lambda u: np.sum(u)  # noqa: E731
    return f(x, x)


def partial_passed_on(x):
    g = functools.partial(_scaled_tanh, a=2.0)
    return sum(map(g, [x]))


@pytest.mark.parametrize("f, says", [
    (recursive_lambda, "calls itself"),
    (lambda_with_a_computed_default, "default that is not a literal"),
    (lambda_called_with_a_wrong_arity, "the call does not match"),
    (partial_passed_on, "used here as a value|no derivative rule for map")])
def test_what_cannot_be_read_is_refused_at_its_line(f, says) -> None:
    with pytest.raises(GradlabError, match=says) as e:
        gradlab.grad(f)(X)
    assert "line" in str(e.value)
