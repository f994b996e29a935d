"""How a backend's namespace is made: from its file and the templates, without changing either,
each function bound so that its names mean this namespace's primitives."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.tensor import backend
from gradlab.tensor.backends import adjoint_helpers, common, numpy_backend
from gradlab.tensor.backends.namespace import bind
from gradlab.tensor.registry import get
from tests.conftest import require


def test_making_a_namespace_changes_neither_the_file_nor_the_templates():
    ops = backend("numpy")
    assert "softmax" not in vars(numpy_backend) and "unbroadcast" not in vars(numpy_backend)
    assert "gl" not in vars(common) and "gl" not in vars(adjoint_helpers)
    assert numpy_backend.zeros_like(np.ones(2)).shape == (2,)      # the file's own, untouched
    assert ops.zeros_like([np.ones(2), np.ones(3)])[1].shape == (3,)   # the namespace's


def test_precedence_own_then_formulas_then_helpers():
    ops = backend("numpy")
    assert ops.tanh is np.tanh                       # the framework's function, bound directly
    assert ops.logsumexp.__code__ is numpy_backend.logsumexp.__code__      # own beats formula
    assert ops.softmax.__code__ is common.softmax.__code__                 # the formula fills in
    assert ops.broadcast_like.__code__ is numpy_backend.broadcast_like.__code__
    assert ops.generic_broadcast_like.__code__ is adjoint_helpers.broadcast_like.__code__
    assert ops.native_zeros_like.__code__ is numpy_backend.zeros_like.__code__
    assert ops.zeros_like.__code__ is adjoint_helpers.zeros_like.__code__
    assert ops.softmax.__globals__["gl"] is ops and ops.sum.__globals__ is vars(ops)


def test_inside_the_namespace_primitives_call_the_tensor_versions():
    """Where Python numbers are wrapped (the Python backend here), ``gl`` outside answers a
    number with a number while the templates inside call the functions without that check."""
    ops = backend("python")
    assert ops.sqrt(4.0) == 2.0 and type(ops.sqrt(4.0)) is float
    assert ops.TENSOR_ONLY["sum"] is not ops.sum
    inner = ops.sum_to.__globals__["gl"]
    assert inner is not ops and inner.sum is ops.TENSOR_ONLY["sum"]
    assert ops.zeros_like(2.0) == 0.0 and ops.native_zeros_like(2.0) == 0.0


def test_bind_reads_globals_from_the_given_namespace():
    def f(x):
        return scale * x  # noqa: F821  (a global of the namespace it is bound to)
    assert bind(f, {"scale": 3})(2) == 6 and bind(f, {"scale": 5})(2) == 10


def test_a_device_namespace_puts_new_tensors_on_its_device():
    """PyTorch's creation functions read the namespace's ``DEVICE``; 'meta' is a device every
    torch build has."""
    require("torch")
    import torch
    torch_backend = get("torch")
    assert backend("torch", "cpu") is backend("torch")
    assert torch_backend.device_key("cuda") == "cuda:0"
    meta = backend("torch", "meta")
    assert meta is not backend("torch") and meta.DEVICE == torch.device("meta")
    assert meta.zeros(3).device.type == "meta" and meta.arange(4).device.type == "meta"
    assert backend("torch").zeros(3).device.type == "cpu"
    assert meta.TENSOR_ONLY["sum"] is not backend("torch").TENSOR_ONLY["sum"]   # its own copies


@pytest.mark.parametrize("name", ["numpy", "torch", "tensorflow", "jax"])
def test_each_backend_object_says_what_its_file_is(name):
    require(name)
    obj = get(name)
    assert obj.name == name and obj.namespace() is backend(name)
    assert obj.modules()[-1].__name__ == f"gradlab.tensor.backends.{name}_backend"
    assert obj.devices()[0] == "cpu" and obj.reference
