"""Moving values between frameworks, only when asked: gradlab never converts on its own."""
from __future__ import annotations

from typing import Any

from .detect import PYTHON, require_framework
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
