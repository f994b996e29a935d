"""einsum (rules: an einsum's adjoint is an einsum of the result's gradient with the other
operands): on every backend the value is the framework's einsum, and grad, jvp and hvp agree
with differences, for explicit and implicit outputs, the ellipsis, diagonals, letters one
operand sums alone, three operands and an operand that broadcasts."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabError
from gradlab.tensor import FRAMEWORKS
from tests.conftest import (assert_derivatives_are_differences, central_difference, require,
                            to_framework, to_numpy)

try:
    import torch
except ImportError:         # the torch spelling's test is skipped
    torch = None

S = np.array([[0.9, -0.3, 0.4, 0.7], [0.2, 1.1, -0.5, 0.35], [0.3, 0.1, 1.3, -0.8]])
W = np.array([[1.0, 0.5, -0.25], [0.3, -0.7, 0.2]])


def cube(x): return np.reshape(x[:2, :4], (2, 2, 2))                                # noqa: E704
def matrix_product(x): return np.sum(np.einsum('ij,kj->ik', x, x) ** 2)              # noqa: E704
def implicit_output(x): return np.sum(np.sin(np.einsum('ij,jk', x, x.T)))           # noqa: E704
def trace(x): return np.einsum('ii', x[:, :3]) ** 2 + np.einsum('ii->', x[:, 1:] ** 2)  # noqa: E704,E501
def diagonal(x): return np.sum(np.einsum('ii->i', x[:, :3]) ** 3)                   # noqa: E704
def sum_and_transpose(x): return np.einsum('ij->', x) ** 2 + np.sum(np.einsum('ij->ji', x) * x.T ** 2)  # noqa: E704,E501
def batched(x): return np.sum(np.einsum('bij,bjk->bik', cube(x), cube(x) ** 2) ** 2)  # noqa: E704,E501
def ellipsis(x): return np.sum(np.tanh(np.einsum('...ij,...jk->...ik', cube(x), x[1:, 2:])))  # noqa: E704,E501
def three_operands(x): return np.einsum('i,ij,j->', x[0, :3], x[:, :3] ** 2 + 1.0, x[1, :3])  # noqa: E704,E501
def outer(x): return np.sum(np.einsum('i,j->ij', x[0], x[1]) ** 2)                    # noqa: E704
def summed_alone(x): return np.sum(np.einsum('ij,jk->i', x[:, :2], x[:2, :3] ** 2) ** 2)  # noqa: E704,E501
def constant_first(x): return np.sum(np.einsum('ij,jk->ik', np.ones((2, 3)) * 0.5, x) ** 2)  # noqa: E704,E501
def same_array_twice(x): return np.einsum('i,i->', x[0], x[0]) * np.einsum('i,i', x[1], x[2])  # noqa: E704,E501
def capitals(x): return np.sum(np.einsum('aB', x) * x.T ** 2) + np.sum(np.einsum('Ab,bC->AC', x, x.T) ** 2)  # noqa: E704,E501
def implicit_ellipsis(x): return np.sum(np.einsum('...j,kj', x, x[:2]) ** 2)            # noqa: E704
def spaces_and_options(x): return np.sum(np.einsum(' ij , jk -> ik ', x, x.T, optimize=True) ** 2)  # noqa: E704,E501


CASES = [matrix_product, implicit_output, trace, diagonal, sum_and_transpose, batched,
         ellipsis, three_operands, outer, summed_alone, constant_first, same_array_twice,
         capitals, implicit_ellipsis, spaces_and_options]


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_einsum_and_its_derivatives(f, framework) -> None:
    require(framework)
    assert_derivatives_are_differences(f, S, framework)


def broadcast_axis(a, b): return np.sum(np.einsum('ij,jk->ik', a, b) ** 2)          # noqa: E704


@pytest.mark.parametrize("framework", ["numpy", "torch", "jax"])   # TensorFlow's refuses it
def test_an_axis_of_length_one_that_broadcasts_gets_its_summed_gradient(framework) -> None:
    require(framework)
    a, b = S[:, :1], W.T
    got = gradlab.grad(broadcast_axis, wrt=(0, 1))(to_framework(a, framework),
                                                    to_framework(b, framework))
    want = (central_difference(lambda u: broadcast_axis(u, b), a),
            central_difference(lambda u: broadcast_axis(a, u), b))
    for g, w in zip(got, want):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-6, atol=1e-8)


def torch_list_form(a, b):
    return torch.sum(torch.einsum('ij,jk->ik', [a, b]) ** 2) + torch.einsum('ii', a @ b)


def test_torchs_list_of_operands() -> None:
    require("torch")
    a, b = torch.tensor(S[:2, :3]), torch.tensor(W.T)
    got = gradlab.grad(torch_list_form, wrt=(0, 1))(a, b)
    want = torch.func.grad(torch_list_form, argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(to_numpy(g), to_numpy(w), rtol=1e-10)


def interleaved(x): return np.sum(np.einsum(x, [0, 1], x, [1, 0]))                  # noqa: E704
def interleaved_after_a_constant(x): return np.sum(np.einsum(np.eye(3), [0, 1], x, [1, 0]))  # noqa: E704,E501


def test_the_interleaved_form_is_refused() -> None:
    with pytest.raises(GradlabError, match="subscripts"):
        gradlab.grad(interleaved)(S[:, :3])
    with pytest.raises(GradlabError, match="subscripts as a string"):
        gradlab.grad(interleaved_after_a_constant)(S[:, :3])


def test_the_gradient_code_reads_as_an_einsum_adjoint() -> None:
    text = gradlab.grad(matrix_product).source_for(S)
    assert "gl.einsum('ij,kj->ik', parts)" in text
    assert "gl.einsum_adjoint(" in text
