"""Reverse-mode details that the corpus does not pin down by numbers alone."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.conftest import to_framework, to_numpy


def power_in_loop(a):
    x = a
    for i in range(3):
        x = x * a
    return x


def collected(x):
    ys = []
    for i in range(3):
        ys.append(x * (i + 1.0))
    return np.sum(np.stack(ys) ** 2)


def test_value_of_a_result_the_backward_pass_restores(framework):
    """The backward pass pops the loop's earlier values into ``x``: the value returned by
    value_and_grad (and checked to be a scalar) is kept before that, under the function's name
    (it came back as ``a``, the first iteration's value)."""
    a = to_framework(np.array(1.5), framework)
    value, derivative = gradlab.value_and_grad(power_in_loop)(a)
    assert float(to_numpy(value)) == pytest.approx(1.5 ** 4, rel=1e-12)
    assert float(to_numpy(derivative)) == pytest.approx(4 * 1.5 ** 3, rel=1e-12)
    assert gradlab.value_and_grad(power_in_loop)(1.5) == pytest.approx((1.5 ** 4, 4 * 1.5 ** 3))
    source = gradlab.grad(power_in_loop).source
    assert "# the value, kept: the backward pass restores x\n    power_in_loop = x\n" in source


def test_value_not_restored_is_not_copied():
    assert "the value, kept" not in gradlab.grad(collected).source
    value, _ = gradlab.value_and_grad(collected)(np.ones(2))
    assert value == pytest.approx(28.0)


def drops_the_last(x):
    xs = [x, x * 2.0]
    xs.pop()
    return np.sum(xs[-1] * x)


def test_a_pop_on_its_own_line_is_refused():
    """Reverse mode cannot follow a list that shrinks (it crashed with IndexError)."""
    with pytest.raises(gradlab.GradlabSyntaxError, match="changing a list that carries a "
                                                         "gradient") as info:
        gradlab.grad(drops_the_last)
    assert "xs.pop()" in str(info.value)
