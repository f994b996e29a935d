"""The forward-mode templates (gradlab.codegen.rules.forward), each run on its own and compared
with central differences along a direction."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.codegen.rules import NONDIFFERENTIABLE, TANGENTS
from gradlab.codegen.rules import forward  # noqa: F401  (registers the templates)
from tests.codegen.rules.evaluate import BINARY, away_from_kinks, derivative_lines
from tests.tensor.test_conformance import UNARY

RNG = np.random.default_rng(8)
EPS = 1e-6


def along(f, args, directions):
    """The derivative of ``f`` at ``args`` along ``directions``, entry by entry."""
    up = f(*[a + EPS * d for a, d in zip(args, directions)])
    down = f(*[a - EPS * d for a, d in zip(args, directions)])
    return (up - down) / (2 * EPS)


@pytest.mark.parametrize("prim", sorted(UNARY))
def test_an_elementwise_tangent_is_the_derivative_along_the_direction(prim: str) -> None:
    if prim in NONDIFFERENTIABLE:
        assert prim not in TANGENTS
        return
    lo, hi, f = UNARY[prim]
    x = away_from_kinks(prim, RNG.uniform(lo, hi, (3, 4)))
    dx = RNG.normal(size=(3, 4))
    got = derivative_lines(TANGENTS[prim], {"y": f(x), "x": x, "dx": dx})
    np.testing.assert_allclose(got["y"], along(f, [x], [dx]), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("prim", sorted(BINARY))
def test_a_binary_tangent_adds_both_operands_directions(prim: str) -> None:
    lo, hi, f = BINARY[prim]
    a, b = RNG.uniform(lo, hi, (3, 4)), RNG.uniform(lo, hi, (4,))
    da, db = RNG.normal(size=(3, 4)), RNG.normal(size=(4,))
    params = TANGENTS[prim].params
    got = derivative_lines(TANGENTS[prim], {params[0]: f(a, b), params[1]: a, params[2]: b,
                                            "d" + params[1]: da, "d" + params[2]: db})
    np.testing.assert_allclose(got[params[0]], along(f, [a, b], [da, db]), rtol=1e-5)


REDUCTIONS = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min}


@pytest.mark.parametrize("axis", [None, 1])
@pytest.mark.parametrize("prim", sorted(REDUCTIONS))
def test_a_reduction_tangent(prim: str, axis) -> None:
    f = REDUCTIONS[prim]
    x, dx = RNG.uniform(0.5, 2.0, (3, 4)), RNG.normal(size=(3, 4))
    got = derivative_lines(TANGENTS[prim], {"y": np.asarray(f(x, axis=axis)), "x": x,
                                            "axis": axis, "keepdims": False, "dx": dx})
    np.testing.assert_allclose(got["y"], along(lambda v: f(v, axis=axis), [x], [dx]), rtol=1e-5)
