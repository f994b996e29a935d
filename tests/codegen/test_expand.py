"""Primitives written out as their definition (codegen/expand.py): logsumexp's backward pass
reuses the forward's exponentials, and the written-out form computes what gl.logsumexp does,
infinities and empty arrays included. Gradients are checked on every backend by the corpus
(r_logsumexp, r_logsumexp_keepdims, r_logsumexp_by_rule)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import gradlab
from gradlab.tensor import backend
from tests.codegen import corpus


def _backward(source: str) -> str:
    return source.split("# ── backward ──", 1)[1]


def whole(x):
    return scipy.special.logsumexp(x)


def rows(x):
    return np.sum(scipy.special.logsumexp(x, axis=1))


def kept(x):
    return np.sum(scipy.special.logsumexp(x, axis=1, keepdims=True))


@pytest.mark.parametrize("fn", [whole, rows, kept])
def test_the_backward_pass_reuses_the_forward_exponentials(fn) -> None:
    df = gradlab.grad(fn)
    assert "gl.logsumexp(" not in df.source
    assert df.source.count("gl.exp(") == 1
    assert "gl.exp(" not in _backward(df.source)
    assert "shift = gl.logsumexp_shift(x" in df.source
    assert "dshift" not in df.source   # the shift carries no gradient


def test_the_whole_array_form_reads_as_the_max_shifted_formula() -> None:
    lines = [line.strip() for line in gradlab.grad(whole).source.splitlines()]
    start = lines.index("shift = gl.logsumexp_shift(x)")
    assert lines[start:start + 6] == [
        "shift = gl.logsumexp_shift(x)",
        "x_minus_shift = x - shift",
        "exp_x_minus_shift = gl.exp(x_minus_shift)",
        "sum_exp_x_minus_shift = gl.sum(exp_x_minus_shift)",
        "log_sum_exp_x_minus_shift = gl.log(sum_exp_x_minus_shift)",
        "whole = shift + log_sum_exp_x_minus_shift"]


def test_a_keepdims_that_is_not_a_literal_keeps_the_primitive_and_its_rule() -> None:
    source = gradlab.grad(corpus.r_logsumexp_by_rule).source
    assert "gl.logsumexp(x, keepdims=keep)" in source
    assert "gl.exp(" in _backward(source)


@pytest.mark.parametrize("rows_", [
    [[1000.0, 1000.0], [-1000.0, -1000.0]],      # exp would overflow and underflow unshifted
    [[-np.inf, 0.0], [-np.inf, -np.inf]],       # a row of -inf is -inf, not nan
    [[np.inf, 0.0], [1.0, 2.0]],                # an inf entry is inf
])
def test_values_match_the_primitive_for_large_and_infinite_inputs(rows_) -> None:
    x = np.array(rows_)
    with np.errstate(divide="ignore", invalid="ignore"):   # log(0) and inf - inf, as NumPy's
        value, _ = gradlab.value_and_grad(rows)(x)
        assert value == np.sum(backend("numpy").logsumexp(x, axis=1))
        assert value == np.sum(scipy.special.logsumexp(x, axis=1))


def test_gradient_of_a_row_with_minus_infinity_is_the_softmax() -> None:
    x = np.array([[-np.inf, 0.0, np.log(3.0)]])
    np.testing.assert_allclose(gradlab.grad(rows)(x), [[0.0, 0.25, 0.75]])
    with np.errstate(divide="ignore", invalid="ignore"):   # its gradient is 0 * inf
        assert gradlab.value_and_grad(rows)(np.array([[-np.inf, -np.inf]]))[0] == -np.inf


def test_an_empty_array() -> None:
    with np.errstate(divide="ignore"):
        value, g = gradlab.value_and_grad(whole)(np.zeros((0, 3)))
    assert value == -np.inf and g.shape == (0, 3)


@pytest.mark.parametrize("fn", [whole, rows, kept])
def test_forward_mode_through_the_written_out_form(fn) -> None:
    x = np.random.default_rng(0).normal(size=(3, 4))
    v = np.random.default_rng(1).normal(size=(3, 4))
    value, tangent = gradlab.jvp(fn)(x, v)
    np.testing.assert_allclose(value, fn(x))
    np.testing.assert_allclose(tangent, np.sum(gradlab.grad(fn)(x) * v))


def named_shift(x):
    shift = x * 2.0
    return scipy.special.logsumexp(shift) + np.sum(shift)


def test_a_user_variable_called_shift_keeps_its_name() -> None:
    df = gradlab.grad(named_shift)
    assert "shift_2 = gl.logsumexp_shift(shift)" in df.source
    assert "shift_minus_shift_2 = shift - shift_2" in df.source
    x = np.random.default_rng(2).normal(size=(2, 3))
    e = np.exp(2.0 * x - np.max(2.0 * x))
    np.testing.assert_allclose(df(x), 2.0 * (e / e.sum() + 1.0))
