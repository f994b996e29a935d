"""Early exits made explicit (gradlab.codegen.structure): a ``return`` becomes an assignment
to the result, the rest of a block moves under the branch that did not exit."""
from __future__ import annotations

import numpy as np

import gradlab
from gradlab.codegen import ir
from gradlab.codegen.structure import always, has
from tests.codegen.ir_text import normalized, text


def early_return(x):
    if np.sum(x) > 0:
        return np.sum(x * 2.0)
    y = np.sin(x)
    return np.sum(y)


def test_a_return_in_the_middle_moves_the_rest_under_else() -> None:
    assert text(early_return) == [
        "if np.sum(x) > 0:",
        "    x_times_2 = multiply(x, 2.0)",
        "    early_return = sum(x_times_2)",
        "else:",
        "    y = sin(x)",
        "    early_return = sum(y)",
    ]
    assert not has(normalized(early_return).ir.body, (ir.Return,), into_loops=True)


def break_in_loop(x):
    s = 0.0
    for i in range(4):
        if i == 2:
            break
        s = s + x[i]
    return s


def test_a_break_keeps_the_iterations_that_ran() -> None:
    body = normalized(break_in_loop).ir.body
    assert has(body, (ir.Break,), into_loops=True)
    assert not has(body, (ir.Break,))          # not at this level: inside the loop
    np.testing.assert_array_equal(gradlab.grad(break_in_loop)(np.ones(5)), [1, 1, 0, 0, 0])


def test_always_says_whether_every_path_exits() -> None:
    stop = ir.Break(None)
    both = ir.If(None, "c", [stop], [ir.Break(None)])
    one = ir.If(None, "c", [ir.Break(None)], [])
    assert always([both], (ir.Break,)) and always([stop], (ir.Break,))
    assert not always([one], (ir.Break,)) and not always([], (ir.Break,))


def return_in_loop(x):
    s = 0.0
    for i in range(4):
        s = s + x[i]
        if s > 1.5:
            return s * 2.0
    return s


def test_a_return_inside_a_loop_sets_a_flag_read_after_the_loop() -> None:
    lines = text(return_in_loop)
    assert lines[:2] == ["return_in_loop = copy(None)", "returned = copy(False)"]
    assert "        returned = copy(True)" in lines and "        break" in lines
    assert lines[-4:] == ["if not returned:", "    return_in_loop_1 = copy(s)", "else:",
                          "    return_in_loop_1 = copy(return_in_loop)"]
    np.testing.assert_array_equal(gradlab.grad(return_in_loop)(np.ones(5)), [2, 2, 0, 0, 0])
    np.testing.assert_array_equal(gradlab.grad(return_in_loop)(np.full(5, 0.1)), [1, 1, 1, 1, 0])
