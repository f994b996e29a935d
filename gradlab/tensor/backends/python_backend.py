"""Plain Python numbers: ``math`` for scalars (a NumPy call on a float costs ten times more),
NumPy for anything else. Chosen when every input of a generated function is a Python number,
so results stay Python numbers, as the user's own ``math`` code would give.

The namespace starts from NumPy's file (:class:`PythonBackend` derives from NumPy's backend),
overrides the two functions below, and answers a Python number with one in every unary function,
reduction and binary function (:attr:`Backend.wraps_python_numbers`, see :mod:`.scalars`)."""
from __future__ import annotations

from typing import Any

from . import numpy_backend as _np_ops
from .numpy_backend import NumPyBackend


def zeros_like(x: Any, dtype: Any = None) -> Any:
    if type(x) is float or type(x) is int:
        return 0.0
    return _np_ops.zeros_like(x, dtype)


def ones_like(x: Any, dtype: Any = None) -> Any:
    if type(x) is float or type(x) is int:
        return 1.0
    return _np_ops.ones_like(x, dtype)


class PythonBackend(NumPyBackend):
    name, title = "python", "Python"
    wraps_python_numbers = True


BACKEND = PythonBackend()
