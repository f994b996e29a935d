"""A function's generated program made once and specialized per kind of inputs
(gradlab.transforms): variants for Python numbers and for a framework's dialect, and a
function with several outputs."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.codegen.test_inplace import loop_over_rows as state_cost


def returns_a_pair(x):
    return np.sum(x), np.sum(x * 2.0)


def test_a_function_returning_a_tuple_needs_a_seed_for_each_output():
    df = gradlab.grad(returns_a_pair)
    for _ in range(2):      # (the second call would take a fast path, if one were left)
        with pytest.raises(gradlab.GradlabSyntaxError, match="returns a tuple of 2 outputs") \
                as info:
            df(np.ones(3))
        assert info.value.line == "return np.sum(x), np.sum(x * 2.0)"
    np.testing.assert_allclose(df(np.ones(3), seed=(1.0, 1.0)), [3.0, 3.0, 3.0])
    with pytest.raises(gradlab.GradlabSyntaxError, match="returns a tuple"):
        df(np.ones(3))


def sin_times(x, y):
    return np.sum(np.sin(x) * y)


def test_python_numbers_get_a_variant_without_broadcasting():
    df = gradlab.grad(sin_times)
    for_numbers = df.variant_source(0.3, 2.0)
    for_arrays = df.variant_source(np.full(3, 0.3), np.full(3, 2.0))
    array_and_number = df.variant_source(np.full(3, 0.3), 2.0)
    assert "unbroadcast" in for_arrays and "unbroadcast" not in for_numbers
    assert "unbroadcast" not in array_and_number   # y is a Python number: a scalar
    assert df.source == for_arrays       # the source shown is the one for arrays
    g = df(0.3, 2.0)
    assert type(g) is float and g == pytest.approx(2.0 * np.cos(0.3), rel=1e-15)
    np.testing.assert_allclose(df(np.full(3, 0.3), 2.0), np.full(3, 2.0 * np.cos(0.3)),
                               rtol=1e-15)


def variance(x):
    return x.var()


def test_a_method_torch_reads_otherwise_gets_a_torch_variant():
    """``x.var()`` names no framework: NumPy's is biased, torch's unbiased by default."""
    torch = pytest.importorskip("torch")
    x = np.array([1.0, 2.0, 4.0])
    df = gradlab.grad(variance)
    np.testing.assert_allclose(df(x), 2 * (x - x.mean()) / x.size, rtol=1e-14)
    assert "ddof=1" in df.variant_source(torch.tensor(x))
    assert "ddof" not in df.variant_source(x)
    t = torch.tensor(x, requires_grad=True)
    t.var().backward()
    got = df(torch.tensor(x))
    assert isinstance(got, torch.Tensor)
    np.testing.assert_allclose(got.numpy(), t.grad.numpy(), rtol=1e-14)


def vector_when_positive(x):
    if x[0] > 0:
        return x * 2.0
    return np.sum(x * 2.0)


def test_a_checked_grad_call_runs_without_the_value_where_it_is_surely_a_scalar():
    """The lean twin: the loop's cost ``c`` is left out of the code a later call runs (the
    first call's value went through the guard); the gradient is the same, bit for bit."""
    df = gradlab.grad(state_cost)
    u = np.random.default_rng(1).normal(size=50)
    first = df(u, 20.0)
    lean = df._transform.lean_factory(frozenset({"T0", "u:ndim=1"}), state_cost)
    assert lean is not None
    impl, _ = df._select((u, 20.0))
    assert df._lean_of(impl) is not impl
    np.testing.assert_array_equal(df(u, 20.0), first)
    value, again = gradlab.value_and_grad(state_cost)(u, 20.0)   # the value, when asked for
    assert value == pytest.approx(state_cost(u, 20.0), rel=1e-12)
    np.testing.assert_array_equal(again, first)


def test_an_output_whose_shape_depends_on_the_data_is_checked_on_every_call():
    df = gradlab.grad(vector_when_positive)
    np.testing.assert_allclose(df(np.array([-1.0, 2.0])), [2.0, 2.0])
    impl, _ = df._select((np.array([-1.0, 2.0]),))
    assert df._lean_of(impl) is impl          # not sure to be a scalar: no lean twin
    with pytest.raises(gradlab.GradlabError, match="not a scalar"):
        df(np.array([1.0, 2.0]))


def test_forward_mode_knows_an_entry_of_a_vector_is_a_number(framework: str) -> None:
    """jvp, as grad, has a variant for 1-d arrays read at an integer index (``u[t]``): it
    knows the entries are numbers, so it spreads no tangent with ``broadcast_like`` (W6's
    jvp: 3.0x the forward function with them, 2.0x without). A 2-d ``u`` (rows) runs the
    generic code; both agree with the hand-written derivative."""
    from tests.conftest import require, to_framework, to_numpy
    require(framework)
    jv = gradlab.jvp(state_cost)
    rng = np.random.default_rng(3)
    for shape in ((30,), (30, 2)):
        u, du = rng.normal(size=shape), rng.normal(size=shape)
        eps = 1e-6
        want = (state_cost(u + eps * du, 20.0) - state_cost(u - eps * du, 20.0)) / (2 * eps)
        value, got = jv(to_framework(u, framework), 20.0, to_framework(du, framework))
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6)
        np.testing.assert_allclose(to_numpy(value), state_cost(u, 20.0), rtol=1e-12)
        shown = jv.source_for(to_framework(u, framework), 20.0, to_framework(du, framework))
        assert ("broadcast_like" in shown) == (len(shape) == 2), shown
