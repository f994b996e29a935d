"""Custom rules for the user's own primitives, and their validation at registration."""
import numpy as np
import pytest

import gradlab


def softsign(x):
    return x / (1.0 + np.abs(x))


@gradlab.adjoint(softsign)
def softsign_adjoint(y, x):
    dx = dy / (1.0 + gl.abs(x)) ** 2  # noqa: F821


@gradlab.tangent_rule(softsign)
def softsign_tangent(y, x):
    y_dot = x_dot / (1.0 + gl.abs(x)) ** 2  # noqa: F821


def noisy_round(x):
    return np.round(x)


gradlab.nondifferentiable(noisy_round)


def uses_softsign(x):
    return np.sum(softsign(x) ** 2)


def test_custom_adjoint_and_tangent():
    x = np.array([0.5, -1.0, 2.0])
    s = softsign(x)
    expected = 2 * s / (1 + np.abs(x)) ** 2
    np.testing.assert_allclose(gradlab.grad(uses_softsign)(x), expected)
    _, t = gradlab.jvp(uses_softsign)(x, np.ones(3))
    assert t == pytest.approx(expected.sum())
    assert "softsign(x)" in gradlab.grad(uses_softsign).source


def test_nondifferentiable():
    def f(x):
        return np.sum(x * noisy_round(x))
    x = np.array([0.4, 1.6])
    np.testing.assert_allclose(gradlab.grad(f)(x), np.round(x))


def test_wrong_signature_is_refused():
    with pytest.raises(gradlab.GradlabError, match="does not match softsign"):
        @gradlab.adjoint(softsign)
        def bad(y, z):
            dz = dy  # noqa: F821


def test_template_may_not_assign_the_result_adjoint():
    with pytest.raises(gradlab.GradlabError, match="result's adjoint"):
        @gradlab.adjoint(softsign)
        def bad(y, x):
            dy = dx  # noqa: F821
