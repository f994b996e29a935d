"""The reverse-mode templates (gradlab.codegen.rules.reverse), each run on its own and compared
with central differences: the elementwise ones, the binary ones with broadcasting, and the
reductions with and without an axis."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.codegen.rules import ADJOINTS, NONDIFFERENTIABLE
from gradlab.codegen.rules import reverse  # noqa: F401  (registers the templates)
from tests.codegen.rules.evaluate import BINARY, away_from_kinks, central, derivative_lines
from tests.tensor.test_conformance import UNARY

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("prim", sorted(UNARY))
def test_an_elementwise_adjoint_is_the_derivative(prim: str) -> None:
    if prim in NONDIFFERENTIABLE:
        assert prim not in ADJOINTS
        return
    lo, hi, f = UNARY[prim]
    x = away_from_kinks(prim, RNG.uniform(lo, hi, (3, 4)))
    y, dy = f(x), RNG.normal(size=(3, 4))
    got = derivative_lines(ADJOINTS[prim], {"y": y, "x": x, "dy": dy})
    if prim in ("imag", "angle"):
        # written for a complex argument (a gradient d stands for Re(d * dx), see reverse.py):
        # of a real one, an imaginary gradient, whose real part is the derivative (0); a real
        # input it reaches is refused (api.refuse_complex_gradient)
        got["x"] = np.real(got["x"])
    np.testing.assert_allclose(got["x"], central(lambda v: f(v) * dy, x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("prim", sorted(BINARY))
def test_a_binary_adjoint_sums_a_broadcast_operand_back(prim: str) -> None:
    lo, hi, f = BINARY[prim]
    a, b = RNG.uniform(lo, hi, (3, 4)), RNG.uniform(lo, hi, (4,))
    z, dz = f(a, b), RNG.normal(size=(3, 4))
    params = ADJOINTS[prim].params
    got = derivative_lines(ADJOINTS[prim], {params[0]: z, params[1]: a, params[2]: b,
                                            "d" + params[0]: dz})
    assert got[params[1]].shape == a.shape and got[params[2]].shape == b.shape
    np.testing.assert_allclose(got[params[1]], central(lambda v: f(v, b) * dz, a), rtol=1e-5)
    np.testing.assert_allclose(got[params[2]], central(lambda v: f(a, v) * dz, b), rtol=1e-5)


REDUCTIONS = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min}


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("prim", sorted(REDUCTIONS))
def test_a_reduction_adjoint_spreads_the_gradient_back(prim: str, axis) -> None:
    f = REDUCTIONS[prim]
    x = RNG.uniform(0.5, 2.0, (3, 4))
    y = f(x, axis=axis)
    dy = RNG.normal(size=np.shape(y))
    got = derivative_lines(ADJOINTS[prim], {"y": np.asarray(y), "x": x, "axis": axis,
                                            "keepdims": False, "dy": dy})
    np.testing.assert_allclose(got["x"], central(lambda v: f(v, axis=axis) * dy, x), rtol=1e-5)


def test_matmul_adjoint() -> None:
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    dz = RNG.normal(size=(3, 2))
    got = derivative_lines(ADJOINTS["matmul"], {"z": a @ b, "x": a, "y": b, "dz": dz})
    np.testing.assert_allclose(got["x"], dz @ b.T, rtol=1e-12)
    np.testing.assert_allclose(got["y"], a.T @ dz, rtol=1e-12)
