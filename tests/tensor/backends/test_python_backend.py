"""The backend of plain Python numbers (gradlab.tensor.backends.python_backend): ``math`` on
numbers, NumPy's functions on anything else, results that stay Python numbers."""
from __future__ import annotations

import math

import numpy as np

from gradlab.tensor import registry
from gradlab.tensor.backends import python_backend
from gradlab.tensor.backends.numpy_backend import NumPyBackend


def test_numbers_stay_python_numbers() -> None:
    gl = registry.get("python").namespace()
    assert type(gl.sin(0.5)) is float and gl.sin(0.5) == math.sin(0.5)
    assert python_backend.zeros_like(2.5) == 0.0 and type(python_backend.zeros_like(3)) is float
    assert python_backend.ones_like(2.5) == 1.0 and type(python_backend.ones_like(3)) is float


def test_arrays_go_to_numpy() -> None:
    x = np.array([1.0, 2.0])
    z = python_backend.zeros_like(x)
    assert isinstance(z, np.ndarray) and z.tolist() == [0.0, 0.0]
    assert python_backend.ones_like(x, np.float32).dtype == np.float32


def test_it_is_numpys_backend_answering_numbers() -> None:
    b = registry.get("python")
    assert isinstance(b, NumPyBackend) and b is python_backend.BACKEND
    assert b.wraps_python_numbers and b.name == "python"
