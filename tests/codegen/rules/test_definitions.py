"""NumPy functions written out as Python (gradlab/codegen/rules/definitions.py): on every
backend, the value is NumPy's own function's, and grad, jvp and hvp agree with differences of
it, for the options each definition takes; an option it does not take is refused."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.codegen.rules.definitions import DEFINITIONS
from gradlab.errors import GradlabError
from gradlab.tensor import FRAMEWORKS
from tests.conftest import (assert_derivatives_are_differences, central_difference, require,
                            to_framework, to_numpy)

try:
    import torch
except ImportError:         # the torch spellings' test is skipped
    torch = None

S = np.array([[0.9, -0.3, 0.4, 0.7], [0.2, 1.1, -0.5, 0.35], [0.3, 0.1, 1.3, -0.8]])   # no ties
T = np.array([[[0.5, -0.2], [0.1, 0.4]], [[-0.3, 0.8], [0.6, 0.2]]])


def trace_square(x): return np.trace(x[:, :3] @ x[:, :3]) ** 2           # noqa: E704
def trace_offset(x): return np.sin(np.trace(x, 1)) + np.trace(x, -1) ** 2  # noqa: E704
def trace_of_3d(x): return np.sum(np.trace(x) ** 2)                       # noqa: E704
def diagonal_offsets(x): return np.sum(np.diagonal(x, 2) ** 3) + np.sum(np.diagonal(x) * 2)  # noqa: E704,E501
def diag_of_a_vector(x): return np.sum(np.diag(x[0]) @ x[:, :4].T ** 2) + np.sum(np.diag(x[1], -1) ** 2)  # noqa: E704,E501
def diag_of_a_matrix(x): return np.sum(np.tanh(np.diag(x, 1)))          # noqa: E704
def triangles(x): return np.sum(np.tril(x) ** 2) + np.sum(np.sin(np.triu(x, 1)) * x)  # noqa: E704,E501
def triangle_offsets(x): return np.sum(np.tril(x, -1) * x) + np.sum(np.triu(x, -1) ** 2)  # noqa: E704,E501
def diffs(x): return np.sum(np.diff(x) ** 2) + np.sum(np.diff(x, 2, axis=0) ** 2)  # noqa: E704,E501
def trapezoids(x): return np.trapezoid(x[0] ** 2) + np.trapezoid(x[1], dx=0.5) + np.trapezoid(x[2], x[0] * 3)  # noqa: E704,E501
def ranges(x): return np.ptp(x) ** 2 + np.sum(np.ptp(x, axis=0) ** 2)   # noqa: E704
def cumulative_products(x): return np.sum(np.cumprod(x, axis=1)) + np.sum(np.cumprod(x[0]))  # noqa: E704,E501
def polynomial(x): return np.sum(np.polyval([1.0, -2.0, 0.5], x) ** 2)    # noqa: E704
def polynomial_of_values(x): return np.sum(np.polyval(x[0], x[1]))       # noqa: E704
def stacks(x): return np.sum(np.vstack([x[0], x[1] * 2]) ** 2) + np.sum(np.hstack([x, x ** 2]) ** 3)  # noqa: E704,E501
def column_stacks(x): return np.sum(np.column_stack([x[:, 0], x[:, 1] ** 2, x[:, :2]]) ** 2)  # noqa: E704,E501
def rolls(x): return np.sum(np.roll(x, 1, axis=0) * x) + np.sum(np.roll(x, -5) * x ** 2)  # noqa: E704,E501
def cross_products(x): return np.sum(np.cross(x[:, :3], x[:, 1:]) ** 2)  # noqa: E704
def kronecker(x): return np.sum(np.kron(x[:2, :2], x[1:, 2:]) ** 2) + np.sum(np.kron(x[0], x[1]))  # noqa: E704,E501
def angles(x): return np.sum(np.sin(np.deg2rad(x * 90)) + np.rad2deg(x) ** 2 / 1000.0)  # noqa: E704,E501
def powers_of_two(x): return np.sum(np.exp2(x) ** 2)                      # noqa: E704
def averages(x): return np.average(x ** 2) + np.sum(np.average(x, axis=1, weights=np.array([1.0, 2.0, 3.0, 4.0])) ** 2)  # noqa: E704,E501

def sorts(x): return np.sum(np.sort(x) * S) + np.sum(np.sort(x, axis=0) ** 2 * S) + np.sum(np.sort(x, axis=None) * np.arange(12.0))  # noqa: E704,E501
def medians(x): return np.median(x) ** 2 + np.sum(np.median(x, axis=1) ** 2) + np.sum(np.median(x, axis=0))  # noqa: E704,E501
def inner_products(x): return np.sum(np.inner(x, x) ** 2) + np.inner(x[0], x[1]) + np.sum(np.inner(x, x[2]))  # noqa: E704,E501
def matrix_powers(x): return np.sum(np.linalg.matrix_power(x[:, :3], 3)) + np.sum(np.linalg.matrix_power(x[:, 1:] + 2 * np.eye(3), -2)) + np.sum(np.linalg.matrix_power(x[:, :3], 0) * x[:, :3])  # noqa: E704,E501

def quantiles(x): return np.percentile(x, 30) ** 2 + np.sum(np.quantile(x, 0.75, axis=1) ** 2) + np.sum(np.percentile(x, 100, axis=0))  # noqa: E704,E501
def covariances(x): return np.sum(np.cov(x) ** 2) + np.sum(np.cov(x, rowvar=False) * 2) + np.cov(x[0]) + np.sum(np.cov(x, bias=True))  # noqa: E704,E501
def ufunc_reductions(x): return np.sum(np.add.reduce(x ** 2) + np.multiply.reduce(x, axis=1).sum() + np.maximum.reduce(x) * np.minimum.reduce(x, 1).sum())  # noqa: E704,E501

def log_determinants(x): return np.linalg.slogdet(x[:, :3] + 2 * np.eye(3))[1] ** 2 + np.prod(np.linalg.slogdet(x[:, 1:] - np.eye(3)))  # noqa: E704,E501


CASES = [(trace_square, S), (trace_offset, S), (trace_of_3d, T), (diagonal_offsets, S),
         (diag_of_a_vector, S), (diag_of_a_matrix, S), (triangles, S), (triangle_offsets, S),
         (diffs, S), (trapezoids, S), (ranges, S), (cumulative_products, S), (polynomial, S),
         (polynomial_of_values, S), (stacks, S), (column_stacks, S), (rolls, S),
         (cross_products, S), (kronecker, S), (angles, S), (powers_of_two, S), (averages, S),
         (sorts, S), (medians, S), (inner_products, S), (matrix_powers, S), (quantiles, S),
         (covariances, S), (ufunc_reductions, S), (log_determinants, S)]


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("f, x", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_definition_is_numpys_function_and_its_derivatives(f, x, framework) -> None:
    require(framework)
    assert_derivatives_are_differences(f, x, framework)


def torch_spellings(x):
    return (torch.trace(x[:, :3]) ** 2 + torch.sum(torch.tril(x, 1) ** 2)
            + torch.sum(torch.diff(x, 1, 0) ** 2) + torch.sum(torch.roll(x, 2, 1) * x)
            + torch.sum(torch.diag(x[0]) ** 2) + torch.sum(torch.vstack([x, x]) ** 3))


def test_torch_spellings_of_definitions() -> None:
    require("torch")
    x = torch.tensor(S)
    want = central_difference(lambda u: torch_spellings(torch.tensor(u)), S)
    np.testing.assert_allclose(to_numpy(gradlab.grad(torch_spellings)(x)), want, rtol=1e-5,
                               atol=1e-6)


def trace_of_other_axes(x): return np.trace(x, axis1=0, axis2=2)        # noqa: E704


def kron_of_3d(x): return np.sum(np.kron(x, x))                           # noqa: E704
def triangle_of_a_vector(x): return np.sum(np.tril(x[0]))                  # noqa: E704


def test_an_option_a_definition_does_not_take_is_refused() -> None:
    with pytest.raises(GradlabError, match="axis1") as e:
        gradlab.grad(trace_of_other_axes)(T)
    assert "line" in str(e.value)


@pytest.mark.parametrize("f, x, says", [(kron_of_3d, T, "two 1-d or two 2-d arrays"),
                                        (triangle_of_a_vector, S, "fewer than two axes")])
def test_an_argument_a_definition_does_not_implement_is_refused(f, x, says) -> None:
    with pytest.raises(GradlabError, match=says):
        gradlab.grad(f)(x)


def test_each_definition_is_spelled_in_numpy_and_jax() -> None:
    names = {path.split(".", 1)[1] for path in DEFINITIONS if path.startswith("numpy.")}
    assert {"trace", "diag", "tril", "triu", "diff", "vstack", "hstack", "roll"} <= names
    for name in names:
        assert DEFINITIONS[f"jax.numpy.{name}"] is DEFINITIONS[f"numpy.{name}"]


def test_the_gradient_code_shows_the_definition_as_a_helper() -> None:
    text = gradlab.grad(trace_square).source_for(S)
    assert "np_trace(" in text and "def np_trace(a, offset=0):" in text
    assert "def np_diagonal(" in text


def differences_of_a_mask(x): return np.sum(np.diff(x > 0.25) * x[:, 1:]) + np.sum(np.diff(x, axis=0) ** 2)  # noqa: E704,E501


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_diff_of_truth_values_says_where_neighbours_differ(framework) -> None:
    """np.diff of a mask is not_equal, as NumPy's (torch refused bool - bool: fuzz seed 50505)."""
    require(framework)
    if framework == "tensorflow":    # TensorFlow's mask * x is a mask: refused at the line
        with pytest.raises(GradlabError, match="TensorFlow"):
            gradlab.grad(differences_of_a_mask)(to_framework(S, framework))
        return
    got = gradlab.grad(differences_of_a_mask)(to_framework(S, framework))
    np.testing.assert_allclose(to_numpy(got), central_difference(differences_of_a_mask, S),
                               rtol=1e-6, atol=1e-8)


def reductions_of_a_number(x):
    v = np.arcsin(np.clip(x[0, 0], -0.5, 0.5))
    return np.polyval([1.0, -2.0, 0.5], np.maximum.reduce(v)) + np.add.reduce(v) * np.multiply.reduce(v) - np.minimum.reduce(v)  # noqa: E501


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_ufunc_reduction_of_a_0d_value_is_the_value(framework) -> None:
    """NumPy's reduce of a 0-d value gives the value; gradlab's sum over axis 0 made it
    (1,), and the gradient with it (fuzz seed 13131)."""
    require(framework)
    x = S[:1, :1].copy()
    got = gradlab.grad(reductions_of_a_number)(to_framework(x, framework))
    assert tuple(np.shape(to_numpy(got))) == (1, 1)
    np.testing.assert_allclose(to_numpy(got), central_difference(reductions_of_a_number, x),
                               rtol=1e-6, atol=1e-8)
