"""List comprehensions and generator expressions are differentiated as the loops they stand for
(gradlab/codegen/comprehensions.py): gradients, tangents and Hessian-vector products against
finite differences on every backend, the loop in the generated code, the variables kept local,
and the refusals where a loop before the statement would compute something else."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabSyntaxError
from tests.conftest import central_difference, require, to_framework, to_numpy


def squares(x):
    ys = [v ** 2 for v in x]
    return sum(ys)


def neighbours(x):
    return sum(x[i] * x[i + 1] for i in range(len(x) - 1))


def filtered_layer(x):
    hs = [np.tanh(0.7 * v) for v in x if v > 0]
    return np.sum(np.stack(hs))


def matrix_of_products(m):
    p = np.array([[m[i, j] * m[j, i] for j in range(3)] for i in range(3)])
    return np.sum(p ** 2)


def rebinds_its_input(x):
    x = [x[i] * 2.0 for i in range(3)]
    return sum([v * v for v in x])


def over_zip(x):
    v = 3.0
    s = sum(v * t for v, t in zip(x, [1.0, 2.0, 3.0]))   # this v is not the one outside
    return s * v


def over_enumerate(x):
    terms = [i * xi for i, xi in enumerate(x)]
    return np.sum(np.array(terms) ** 2)


def condition_on_all(x):
    if all(v > -10 for v in x):
        return np.sum(np.array([np.sin(v) for v in x]))
    return 0.0


def indexed_inner_list(x):
    return sum([[x[i] * j for j in range(2)][1] for i in range(3)])


def same_name_as_parameter(x):
    return sum([x * x for x in [2.0, 3.0]]) * np.sum(x)


CASES = [squares, neighbours, filtered_layer, rebinds_its_input, over_zip, over_enumerate,
         condition_on_all, indexed_inner_list, same_name_as_parameter]
X = np.array([0.5, -1.2, 2.0])
M = np.arange(9.0).reshape(3, 3) / 5 + 0.1


def cases():
    return [pytest.param(f, X, id=f.__name__) for f in CASES] + [
        pytest.param(matrix_of_products, M, id="matrix_of_products")]


@pytest.mark.parametrize("f, x", cases())
def test_grad_and_jvp_on_every_backend(f, x, framework):
    require(framework)
    expected = central_difference(f, x)
    g = gradlab.grad(f)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(g), expected, rtol=1e-6, atol=1e-6)
    v = np.linspace(0.2, 1.0, x.size).reshape(x.shape)
    _, tangent = gradlab.jvp(f)(to_framework(x, framework), to_framework(v, framework))
    assert float(to_numpy(tangent)) == pytest.approx(np.sum(expected * v), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("f, x", [pytest.param(squares, X, id="squares"),
                                  pytest.param(matrix_of_products, M, id="matrix_of_products"),
                                  pytest.param(neighbours, X, id="neighbours")])
def test_hvp_on_every_backend(f, x, framework):
    require(framework)
    grad = gradlab.grad(f)
    v = np.linspace(0.2, 1.0, x.size).reshape(x.shape)
    expected = (grad(x + 1e-6 * v) - grad(x - 1e-6 * v)) / 2e-6
    hv = gradlab.hvp(f)(to_framework(x, framework), to_framework(v, framework))
    np.testing.assert_allclose(to_numpy(hv), expected, rtol=1e-5, atol=1e-5)


def test_the_generated_code_shows_the_loop():
    source = gradlab.grad(squares).source
    assert "ys = []" in source
    assert "for v in x" in source or "v = x[" in source
    assert "ys.append(" in source
    assert "[v ** 2 for v in x]" in source       # the user's line, as a comment


def test_a_variable_used_outside_gets_its_own_name_in_the_loop():
    source = gradlab.grad(over_zip).source
    loop_names = [line for line in source.splitlines() if line.strip().startswith("v_")]
    assert loop_names, source
    assert float(gradlab.grad(over_zip)(X) @ np.ones(3)) == pytest.approx(3.0 * 6.0)


def in_a_branch(x):
    y = [v * 2 for v in x] if x[0] > 0 else [v for v in x]
    return sum(y)


def after_and(x):
    return x[0] > 0 and sum([v for v in x]) > 0


def generator_into_numpy(x):
    return np.sum(v ** 2 for v in x)


@pytest.mark.parametrize("f, words", [
    (in_a_branch, "in a branch of a conditional expression"),
    (after_and, "in the right side of and/or"),
    (generator_into_numpy, "write a list comprehension [...] here instead"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refused_where_a_loop_before_the_line_would_differ(f, words):
    """(A comprehension in a while condition: tests/codegen/test_errors.py, with its line.)"""
    with pytest.raises(GradlabSyntaxError) as info:
        gradlab.grad(f)(X)
    assert words in str(info.value)
    assert "on a line of its own" in str(info.value) or "list comprehension" in str(info.value)
