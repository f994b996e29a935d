"""NumPy's backend (gradlab.tensor.backends.numpy_backend)."""
from __future__ import annotations

import numpy as np

from gradlab.tensor.backends.numpy_backend import BACKEND
from tests.conftest import require
from tests.tensor.backends.contract import check_contract


def test_the_backend_contract() -> None:
    assert check_contract("numpy") is BACKEND


def test_numpy_takes_python_numbers_so_the_seed_is_a_plain_one() -> None:
    assert not BACKEND.typed_seed
    assert BACKEND.reference == "HIPS autograd"


def test_values_of_another_backend_and_python_lists_become_arrays() -> None:
    from gradlab.tensor import registry
    out = BACKEND.from_value([1.5, 2.5], registry.get("python"))
    assert isinstance(out, np.ndarray) and out.tolist() == [1.5, 2.5]


def test_broadcast_like_another_frameworks_value() -> None:
    """A value of TensorFlow's (``tf.nn.elu`` kept as written) in code a Python number runs:
    its NumPy copy's shape and dtype (TensorFlow's dtype has no ``kind``: a crash)."""
    require("tensorflow")
    import tensorflow as tf
    from gradlab.tensor import backend
    out = backend("numpy").broadcast_like(1.0, tf.constant([1.0, 2.0], tf.float64))
    assert out.shape == (2,) and out.dtype == np.float64
