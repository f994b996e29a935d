"""Symbolic shapes from a call's signature (codegen/ranks.py): what is inferred is sure, and
what is not sure stays unknown."""
from __future__ import annotations

import numpy as np

from gradlab.codegen.program import REVERSE, Program, normalize_function
from gradlab.codegen.ranks import broadcast, matmul_shape, signature_of, infer_shapes, sum_axes


def test_a_signature_names_equal_sizes_alike_and_keeps_ones_apart() -> None:
    sig = signature_of(["x", "W", "b", "n"], (np.ones((8, 3)), np.ones((3, 8)), np.ones((1, 8)),
                                            2.0), strict_dtypes=False, transpose_method=True)
    assert sig is not None
    assert sig.shapes == (("n0", "n1"), ("n1", "n0"), (1, "n0"), None)
    assert sig.describe() == "x: 2-d, W: 2-d, b: 2-d"
    # sizes differ, signature too; the same pattern with other sizes, the same signature
    other = signature_of(["x", "W", "b", "n"], (np.ones((5, 2)), np.ones((2, 5)),
                                              np.ones((1, 5)), 1.0), False, True)
    assert other == sig


def test_no_signature_for_mixed_array_types_or_strict_mixed_dtypes() -> None:
    assert signature_of(["a"], (1.0,), False, True) is None
    f32, f64 = np.ones(3, np.float32), np.ones(3)
    assert signature_of(["a", "b"], (f32, f64), True, True) is None
    assert signature_of(["a", "b"], (f32, f64), False, True) is not None
    assert signature_of(["a", "b"], (np.float64(1.0), f64), False, True) is None


def test_broadcasting_rules() -> None:
    assert broadcast(("n0", "n1"), ("n1",)) == ("n0", "n1")
    assert broadcast(("n0", 1), (1, "n1")) == ("n0", "n1")
    assert broadcast(("n0",), ("n1",)) is None          # sizes not known equal
    assert matmul_shape(("n0", "n1"), ("n1",)) == ("n0",)
    assert matmul_shape(("n1",), ("n1",)) == ()
    assert matmul_shape(("n0", "n1"), ("n2", "n1")) is None
    assert matmul_shape(("n0", "n1", "n2"), ("n2", "n1")) is None   # batched: generic
    assert sum_axes(("n0", "n1"), ("n1",)) == ((0,), ())
    assert sum_axes(("n0", "n1"), ("n0", 1)) == ((), (1,))
    assert sum_axes(("n0", "n1"), (1, "n1")) == ((), (0,))
    assert sum_axes(("n0", "n1"), ("n2",)) is None


def _shapes(fn, *args):
    unit = normalize_function(fn)
    program = Program(unit)
    prepared = program.derivative(unit, REVERSE, [unit.ir.params[0]])
    return infer_shapes(prepared.fn, signature_of(unit.ir.params, args, False, True))


def layer(W, x, b):
    z = x @ W + b
    s = np.sum(np.tanh(z), axis=1, keepdims=True)
    return np.mean(z * s)


def test_shapes_follow_products_broadcasts_and_reductions() -> None:
    shapes = _shapes(layer, np.ones((3, 4)), np.ones((5, 3)), np.ones(4))
    assert shapes["z"] == ("n2", "n1") and shapes["s"] == ("n2", 1)   # W: n0 x n1, x: n2 x n0
    assert shapes["layer"] == ()


def changes_shape(W, h):
    for _ in range(2):
        h = W @ h            # (3,3)@(3,) keeps h's shape; (2,3)@(3,) would not
    return np.sum(h)


def test_a_value_whose_shape_changes_in_a_loop_is_unknown() -> None:
    assert _shapes(changes_shape, np.ones((3, 3)), np.ones(3))["h"] == ("n0",)
    assert "h" not in _shapes(changes_shape, np.ones((2, 3)), np.ones(3))


def from_outside(W, x):
    return np.sum(x @ OUTSIDE @ W)


OUTSIDE = np.ones((3, 3))


def test_a_value_from_outside_the_function_is_unknown() -> None:
    shapes = _shapes(from_outside, np.ones((3, 2)), np.ones((4, 3)))
    assert all(name in ("W", "x") for name, s in shapes.items() if len(s) > 0)


def _ir(fn):
    return normalize_function(fn, "numpy").ir


def state_loop(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        T = T + 0.2 * u[t]
        c = c + (T - 21.0) ** 2
    return c


def masked(x):
    return x[x > 0][0] + x[0]


def w1_tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def branchy(x):
    if x[0] > 0:
        return x * 2.0
    return np.sum(x)


def test_a_scalar_result_is_proved_from_numbers_and_vectors() -> None:
    from gradlab.codegen.ranks import scalar_result
    assert scalar_result(_ir(state_loop), None, {"T0"}, {"u"})
    assert not scalar_result(_ir(state_loop), None, set(), {"u"})   # T0 could be an array
    sig = signature_of(["x"], (np.ones(3),), False, True)
    assert not scalar_result(_ir(masked), sig, set(), set())        # x[x > 0]: not sure
    assert scalar_result(_ir(w1_tanh_sq), None, set(), set())       # a full sum: 0-d
    assert not scalar_result(_ir(branchy), sig, set(), set())       # one branch a vector
