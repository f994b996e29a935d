"""Which values surely share a shape (gradlab.codegen.shapes), found without knowing a shape."""
from __future__ import annotations

import numpy as np

import gradlab
from gradlab.codegen.shapes import SCALAR, shape_classes
from tests.codegen.ir_text import normalized


def shapes_of(x, W, n):
    h = np.tanh(x)
    c = h * 2.0
    k = np.sqrt(n)
    m = x @ W
    e = np.exp(W)
    t = c * k
    return np.sum(t) + np.sum(m) + np.sum(e)


def classes():
    return shape_classes(normalized(shapes_of).ir, {"n"})


def test_elementwise_results_share_their_operands_class() -> None:
    c = classes()
    assert c["h"] == c["c"] == c["t"] == c["x"] == "param:x"
    assert c["e"] == c["W"] == "param:W"


def test_numbers_and_full_reductions_are_scalars_and_a_product_is_its_own_class() -> None:
    c = classes()
    assert c["n"] == c["k"] == SCALAR == "()"
    assert c["sum_t"] == SCALAR
    assert c["m"] not in (c["x"], c["W"], SCALAR)


def loop_changes_shape(x, v):
    h = x
    for i in range(2):
        h = h * v                 # may broadcast to v's shape: not surely x's
    return np.sum(h)


def test_a_value_assigned_with_two_shapes_is_mixed() -> None:
    c = shape_classes(normalized(loop_changes_shape).ir, set())
    assert str(c["h"]).startswith("mixed:")


def broadcasts(x, v):
    h = np.tanh(x) * v
    return np.sum(h)


def test_what_shares_a_shape_needs_no_unbroadcast_and_what_may_not_gets_one() -> None:
    df = gradlab.grad(shapes_of)
    assert "    dh = 2.0 * dc\n" in df.source                  # c = h * 2.0: h's shape
    assert "dc = gl.unbroadcast(dt * k, c)" in df.source       # k may be an array here
    source = gradlab.grad(broadcasts).source
    assert "gl.unbroadcast(" in source.split("# ── backward ──")[1]
    x, v = np.full(1, 0.3), np.array([0.5, 2.0])
    np.testing.assert_allclose(gradlab.grad(broadcasts)(x, v),
                               [(1 - np.tanh(0.3) ** 2) * np.sum(v)], rtol=1e-14)
