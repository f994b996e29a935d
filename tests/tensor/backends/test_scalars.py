"""Primitives answering Python numbers with Python numbers (gradlab.tensor.backends.scalars)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab.tensor as gt
from gradlab.tensor.backends.scalars import SCALAR_BINARY, SCALAR_FUNCTIONS, SCALAR_REDUCTIONS

from tests.conftest import require, to_framework, to_numpy


# --- Python numbers into unary primitives ---------------------------------------------------------
# The pure-Python backend, torch and TensorFlow answer a Python number with a Python float (torch
# would raise; TensorFlow would make float32), so framework weak typing picks the dtype later.
SCALAR_BACKENDS = ["python", "torch", "tensorflow"]


@pytest.mark.parametrize("framework", SCALAR_BACKENDS)
@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_unary_primitive_of_a_python_number(framework: str, name: str) -> None:
    if framework != "python":
        require(framework)
    ops, npops = gt.backend(framework), gt.backend("numpy")
    positive_only = name in ("sqrt", "log", "log1p", "log2", "log10", "arccosh")
    inputs = (1.3, 2.0, 3) if name == "arccosh" else (
        (0.3, 2.0, 0.7, 1) if positive_only else (0.3, -2.0, -0.7, 0.0, 1))
    if name in ("arcsin", "arccos", "arctanh"):
        inputs = (0.3, -0.7, 0.0)
    if name == "reciprocal":
        inputs = (0.3, -2.0, 1)
    inputs += (np.float64(inputs[0]),)   # NumPy kept as written on constants gives these
    for x in inputs:
        got = getattr(ops, name)(x)
        want = bool if name in ("any", "all") else float      # NumPy's truth value
        assert type(got) is want, f"{framework} {name}({x!r}) gave {type(got)}"
        assert got == pytest.approx(float(getattr(npops, name)(np.float64(x))), rel=1e-12)
    arr = np.array([0.5, 0.25])
    expected = getattr(npops, name)(arr)
    np.testing.assert_allclose(to_numpy(getattr(ops, name)(to_framework(arr, framework)
                                                          if framework != "python" else arr)),
                               expected, rtol=1e-12)


@pytest.mark.parametrize("framework", SCALAR_BACKENDS)
@pytest.mark.parametrize("name", sorted(SCALAR_REDUCTIONS))
def test_reduction_of_a_python_number(framework: str, name: str) -> None:
    if framework != "python":
        require(framework)
    ops = gt.backend(framework)
    for x in (0.5, -2.0, 3):
        got = getattr(ops, name)(x)
        assert float(got) == pytest.approx(float(getattr(np, name if name != "logsumexp" else
                                                         "sum")(np.float64(x))))
        want = bool if name in ("any", "all") else float      # NumPy's truth value
        assert type(got) is want, f"{framework} {name}({x!r}) gave {type(got)}"
    arr = np.array([[0.5, 0.25], [1.0, 2.0]])
    t = to_framework(arr, framework) if framework != "python" else arr
    np.testing.assert_allclose(to_numpy(getattr(ops, name)(t, axis=0)),
                               to_numpy(getattr(gt.backend("numpy"), name)(arr, axis=0)),
                               rtol=1e-12)


@pytest.mark.parametrize("framework", SCALAR_BACKENDS)
@pytest.mark.parametrize("name", sorted(SCALAR_BINARY))
def test_binary_primitive_of_two_python_numbers(framework: str, name: str) -> None:
    """``np.maximum(v, v)`` while ``v`` is still the number 0.5 (found by the fuzzer: on
    TensorFlow it made a float32 tensor that then met the user's float64)."""
    if framework != "python":
        require(framework)
    ops = gt.backend(framework)
    pairs = [(0.5, 0.5), (-2.0, 3), (3, -2.0), (np.float64(0.25), 1.0), (math.nan, 1.0),
             (1.0, math.nan)]
    for x, y in pairs:
        got = getattr(ops, name)(x, y)
        assert type(got) is float, f"{framework} {name}({x!r}, {y!r}) gave {type(got)}"
        want = float(getattr(np, name)(np.float64(x), np.float64(y)))
        assert got == pytest.approx(want, rel=1e-15, nan_ok=True), (x, y, got, want)
    if name not in ("arctan2", "hypot", "logaddexp"):   # two ints (counters) stay an int
        assert getattr(ops, name)(3, 4) == int(getattr(np, name)(3, 4))
        assert type(getattr(ops, name)(3, 4)) is int
    a, b = np.array([0.5, -1.0]), np.array([0.25, 2.0])
    t = (lambda v: v) if framework == "python" else (lambda v: to_framework(v, framework))
    np.testing.assert_allclose(to_numpy(getattr(ops, name)(t(a), t(b))),
                               getattr(np, name)(a, b), rtol=1e-12)


@pytest.mark.parametrize("framework", SCALAR_BACKENDS)
def test_unary_primitive_outside_domain_matches_numpy(framework: str) -> None:
    if framework != "python":
        require(framework)
    ops = gt.backend(framework)
    with np.errstate(all="ignore"):
        assert math.isnan(ops.sqrt(-1.0)) and math.isnan(ops.log(-1.0))
        assert ops.exp(1000.0) == math.inf
        assert ops.log(0.0) == -math.inf
        assert ops.reciprocal(0.0) == math.inf
        assert math.isnan(ops.sign(math.nan))
    assert ops.softplus(1000.0) == 1000.0 and ops.sigmoid(-1000.0) == 0.0
