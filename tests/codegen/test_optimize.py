"""The optimizer (codegen/optimize.py) on the generated code a person reads: what it folds
and what it leaves. Values are checked by the corpus on every backend; here, the text."""
from __future__ import annotations

import numpy as np

import gradlab


def spring(k, x, v, c):
    a = -k * x - c * v
    v = v + 0.1 * a
    return v * v


def negated_twice(x, y):
    d = x - y
    return np.sum(d * d) + np.sum(np.exp(-d))


def test_a_negated_term_folds_into_a_subtraction() -> None:
    source = gradlab.grad(spring, wrt="v").variant_source(2.0, 0.5, 0.3, 0.1)
    assert "dc_times_v" not in source
    assert "dv = dv - c * da" in source
    kept = gradlab.grad(spring, wrt="v", optimized=False).variant_source(2.0, 0.5, 0.3, 0.1)
    assert "dc_times_v = -" in kept


def test_the_folded_code_computes_the_same_gradient() -> None:
    args = (2.0, 0.5, 0.3, 0.1)
    for wrt in range(4):
        folded = gradlab.grad(spring, wrt=wrt)(*args)
        kept = gradlab.grad(spring, wrt=wrt, optimized=False)(*args)
        assert folded == kept


def test_a_negation_used_otherwise_keeps_its_line() -> None:
    """``-d`` inside exp, and ``dy = -...`` of the subtraction read by an unbroadcast."""
    df = gradlab.grad(negated_twice)
    x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    d = x - y
    np.testing.assert_allclose(df(x, y), 2 * d - np.exp(-d))
    assert "neg_d = -d" in df.source
