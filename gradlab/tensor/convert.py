"""Moving values between frameworks, only when asked: gradlab never converts on its own."""
from __future__ import annotations

from typing import Any

import numpy as np

from .detect import PYTHON, common_framework, require_framework
from .registry import canonical_name, get


def convert(x: Any, backend: str, device: Any = None) -> Any:
    """``x`` as a value of framework ``backend`` (on ``device`` if given).

    Zero-copy through DLPack where both sides support it, a copy through NumPy otherwise.
    Python numbers and lists become arrays of the target framework.
    """
    target = canonical_name(backend)
    source = PYTHON if isinstance(x, (list, tuple)) else require_framework(x)
    if source == target and device is None:
        return x
    return get(target).from_value(x, get(source), device)


def to_float64_numpy(value: Any) -> Any:
    """A value (or a list or tuple of them) as NumPy, floats as float64: what gradlab's checks
    compare, whatever framework computed it."""
    if isinstance(value, (int, float)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(to_float64_numpy(v) for v in value)
    arr = convert(value, "numpy") if common_framework([value]) != PYTHON else value
    arr = np.asarray(arr)
    return arr.astype(np.float64) if arr.dtype.kind == "f" else arr
