"""A function's generated program made once and specialized per kind of inputs
(gradlab.transforms): variants for Python numbers and for a framework's dialect, and a
function with several outputs."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab


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
