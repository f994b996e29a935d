"""Plain Python numbers: ``math`` for scalars (a NumPy call on a float costs ten times more),
NumPy for anything else. Chosen when every input of a generated function is a Python number,
so results stay Python numbers, as the user's own ``math`` code would give."""
from __future__ import annotations

from typing import Any

from . import numpy_backend as _np_ops
from .numpy_backend import *  # noqa: F401,F403  (everything not overridden below)
from .numpy_backend import native_dtype  # noqa: F401
from .scalars import (SCALAR_BINARY, SCALAR_FUNCTIONS, SCALAR_REDUCTIONS, binary_first,
                      reduction_first, scalar_first)

NAME = "python"

for _name in SCALAR_FUNCTIONS:
    globals()[_name] = scalar_first(_name, getattr(_np_ops, _name))
for _name in SCALAR_REDUCTIONS:
    globals()[_name] = reduction_first(_name, getattr(_np_ops, _name))
for _name in SCALAR_BINARY:
    globals()[_name] = binary_first(_name, getattr(_np_ops, _name))
del _name


def zeros_like(x: Any, dtype: Any = None) -> Any:  # type: ignore[no-redef]
    if type(x) is float or type(x) is int:
        return 0.0
    return _np_ops.zeros_like(x, dtype)


def ones_like(x: Any, dtype: Any = None) -> Any:  # type: ignore[no-redef]
    if type(x) is float or type(x) is int:
        return 1.0
    return _np_ops.ones_like(x, dtype)
