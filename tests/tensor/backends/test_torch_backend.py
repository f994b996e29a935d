"""PyTorch's backend (gradlab.tensor.backends.torch_backend)."""
from __future__ import annotations

import numpy as np

from tests.conftest import require
from tests.tensor.backends.contract import check_contract


def test_the_backend_contract() -> None:
    check_contract("torch")


def test_devices_are_spelled_as_torch_spells_them() -> None:
    b = check_contract("torch")
    assert b.spell_device("gpu:1") == "cuda:1" and b.spell_device("cpu") == "cpu"
    assert b.device_key("cpu") is None and b.device_key("cuda") == "cuda:0"
    assert b.device_key("cuda:1") == "cuda:1"
    assert str(b.native_device("cpu")) == "cpu"


def test_a_call_binds_the_device_of_its_first_tensor() -> None:
    import torch
    b = check_contract("torch")
    assert b.binds_device
    assert b.call_device((1.0, torch.zeros(2), "x")) is None          # on the CPU
    assert b.call_device((1.0, 2.0)) is None


def test_a_tensor_that_requires_grad_converts_without_its_graph() -> None:
    import torch
    b = check_contract("torch")
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    np.testing.assert_array_equal(b.to_numpy(x * 2), [2.0, 2.0, 2.0])
    one = b.one(torch.zeros(2, dtype=torch.float32))
    assert one.dtype == torch.float32 and one.item() == 1.0


def test_python_numbers_are_answered_with_python_numbers() -> None:
    b = check_contract("torch")
    assert b.wraps_python_numbers
    assert type(b.namespace().sin(0.5)) is float


def test_values_numpy_computed_meet_functions_of_tensors() -> None:
    """``np.average`` kept as written gives a Python float, ``np.where`` of Python bools a
    NumPy array: ``argmax`` of the one and the tangent ``zeros_like`` of the other crashed
    (people fuzzer, seed 202); they are tensors of NumPy's dtype there."""
    require("torch")
    from gradlab.tensor import backend
    import torch
    gl = backend("torch")
    assert int(gl.argmax(3.5)) == 0 and int(gl.argmin(np.array([2.0, 1.0]))) == 1
    mask = torch.tensor([[False, True], [True, True]])
    assert gl.argmax(mask, axis=1).tolist() == [1, 0] and gl.argmin(mask).item() == 0
    zeros = gl.zeros_like(np.array(0.5))
    assert isinstance(zeros, torch.Tensor) and zeros.dtype == torch.float64
