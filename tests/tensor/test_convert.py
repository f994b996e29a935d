"""Moving values between frameworks on request (gradlab.tensor.convert)."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab.tensor as gt

from tests.conftest import FRAMEWORKS, require, to_framework, to_numpy


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("target", FRAMEWORKS)
def test_convert(framework: str, target: str, dtype: str) -> None:
    require(target)
    x = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
    value = to_framework(x, framework)
    out = gt.convert(value, target)
    assert gt.framework_of(out) == target
    got = to_numpy(out)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got, x)
    if target == framework:
        assert out is value


def test_convert_python_values(framework: str) -> None:
    out = gt.convert([1.5, 2.5], framework)
    assert gt.framework_of(out) == framework
    np.testing.assert_array_equal(to_numpy(out), [1.5, 2.5])


def test_convert_torch_tensor_that_requires_grad() -> None:
    require("torch")
    import torch
    x = torch.ones(2, requires_grad=True)
    assert isinstance(gt.convert(x, "numpy"), np.ndarray)
    if gt.is_installed("jax"):
        require("jax")
        assert gt.framework_of(gt.convert(x, "jax")) == "jax"
