"""Functions defined inside the function (gradlab.codegen.nested): a helper that reads none of
the enclosing function's variables is differentiated as a subroutine; a closure is refused."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabSyntaxError
from gradlab.tensor import FRAMEWORKS
from tests.conftest import central_difference, require, to_framework, to_numpy


def iterated(a, n):
    def _fn(a, n):
        return a * n

    for _ in range(n):
        a = _fn(a, a)
    return a


def with_helpers(x, w):
    def layer(v, m):
        return np.tanh(v @ m)

    def scale(v, k=2.0):
        return np.sin(v) * k

    h = layer(x, w)
    return np.sum(scale(h) + scale(h, 3.0))


def test_a_helper_defined_inside_is_a_subroutine_of_the_generated_code() -> None:
    g = gradlab.grad(iterated)
    assert g(0.5, 3) == pytest.approx(8 * 0.5 ** 7)
    assert "\ndef _fn_vjp(a, n, dfn):" in g.source
    assert "def _fn(" not in g.source.split("\n\n")[0]     # not in the main function's body


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_helpers_defined_inside_in_every_mode(framework: str) -> None:
    require(framework)
    x = np.random.RandomState(0).randn(2, 3)
    w = np.random.RandomState(1).randn(3, 3)
    fx, fw = to_framework(x, framework), to_framework(w, framework)
    g = to_numpy(gradlab.grad(with_helpers)(fx, fw))
    np.testing.assert_allclose(g, central_difference(with_helpers, x, w), atol=1e-6)
    v = np.random.RandomState(2).randn(2, 3)
    _, tangent = gradlab.jvp(with_helpers)(fx, fw, to_framework(v, framework))
    assert float(to_numpy(tangent)) == pytest.approx(float(np.sum(g * v)), abs=1e-6)
    h = to_numpy(gradlab.hvp(with_helpers)(fx, fw, to_framework(v, framework)))
    fd = (to_numpy(gradlab.grad(with_helpers)(to_framework(x + 1e-6 * v, framework), fw))
          - to_numpy(gradlab.grad(with_helpers)(to_framework(x - 1e-6 * v, framework), fw)))
    np.testing.assert_allclose(h, fd / 2e-6, atol=1e-5)


def closure(x, w):
    def inner(v):
        return v * w
    return np.sum(inner(x))


def rebound(x):
    def h(v):
        return v * 2.0
    h = 3.0
    return np.sum(x * h)


def default_from_outside(x):
    k = 2.0

    def scale(v, factor=k):
        return v * factor
    return np.sum(scale(x))


def inside_a_loop(x):
    s = 0.0
    for i in range(2):
        def term(v):
            return v * 2.0
        s = s + np.sum(term(x))
    return s


@pytest.mark.parametrize(("fn", "says", "line"), [
    (closure, "reads its variables (w)", "def inner(v):"),
    (rebound, "also assigned", "h = 3.0"),
    (default_from_outside, "default values that are not literals", "def scale(v, factor=k):"),
    (inside_a_loop, "a function defined inside the function", "def term(v):"),
])
def test_what_is_refused_is_refused_at_its_line(fn, says: str, line: str) -> None:
    with pytest.raises(GradlabSyntaxError) as info:
        gradlab.grad(fn)(np.array([0.5, 1.0]), np.array([0.5, 1.0])) if fn is closure else (
            gradlab.grad(fn)(np.array([0.5, 1.0])))
    assert says in str(info.value)
    assert line in str(info.value)
