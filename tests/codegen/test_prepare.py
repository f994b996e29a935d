"""The function as one derivative needs it (gradlab.codegen.prepare): ``y = f(y)`` split where
the mode's rule needs the old and the new ``y``, loop invariants hoisted when asked."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import gradlab
from gradlab.codegen.forward import tangent_reads_old
from gradlab.codegen.prepare import prepare, split_self_updates
from gradlab.codegen.reverse import keeps_old_and_new
from tests.codegen.ir_text import lines, normalized


def self_updates(x, W):
    for i in range(2):
        c = np.cos(W)
        x = np.tanh(x)          # the adjoint of tanh reads the result: reverse mode splits it
        x = x * c               # the adjoint of a product reads the operands only
    return np.sum(x)


def test_reverse_mode_gives_a_new_value_its_own_name_where_its_adjoint_reads_it() -> None:
    unit = normalized(self_updates)
    fn = copy.deepcopy(unit.ir)
    split_self_updates(fn.body, unit.names, keeps_old_and_new)
    assert lines(fn.body) == [
        "for i in range(2):",
        "    c = cos(W)",
        "    x_new = tanh(x)",
        "    x = copy(x_new)",
        "    x = multiply(x, c)",
        "self_updates = sum(x)",
    ]


def test_forward_mode_splits_where_the_tangent_reads_the_old_value() -> None:
    unit = normalized(self_updates)
    fn = copy.deepcopy(unit.ir)
    split_self_updates(fn.body, unit.names, tangent_reads_old)
    assert lines(fn.body)[2:5] == ["    x = tanh(x)", "    x_new = multiply(x, c)",
                                   "    x = copy(x_new)"]


def test_prepare_hoists_only_when_asked() -> None:
    unit = normalized(self_updates)
    kept, hoisted = copy.deepcopy(unit.ir), copy.deepcopy(unit.ir)
    prepare(kept, copy.deepcopy(unit.names), keeps_old_and_new, hoisting=False)
    prepare(hoisted, copy.deepcopy(unit.names), keeps_old_and_new, hoisting=True)
    assert lines(kept.body)[1] == "    c = cos(W)"
    assert lines(hoisted.body)[:2] == ["c = cos(W)", "for i in range(2):"]


def test_both_modes_differentiate_the_self_updates_right() -> None:
    x, W = np.array([0.4, -0.3]), np.array([0.2, 1.1])
    def f(v):
        return self_updates(v, W)
    eps = 1e-6
    numeric = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(gradlab.grad(self_updates)(x, W), numeric, rtol=1e-6)
    _, tangent = gradlab.jvp(self_updates)(x, W, np.array([1.0, 0.0]))
    assert tangent == pytest.approx(numeric[0], rel=1e-6)
