"""The user's function run again, on copies of the arguments: what the semantic guard compares
the generated code's forward value with, and what tells a seed's expected shape when a call
with a seed fails.

The copies keep the caller's values unchanged whatever the function does to its arguments; a
function that cannot run on the inputs it was given (a NumPy function given torch tensors on
a GPU) runs once more on NumPy copies of them.
"""
from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tensor.convert import to_float64_numpy


@dataclass
class Original:
    """The original function's value on copies of the arguments, or why there is none."""

    value: Any = None
    ran: bool = False
    why_not: str = ""



def copied(value: Any) -> Any:
    """A copy of ``value`` the original function may change without changing the caller's."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return value
    if isinstance(value, np.ndarray):
        return value.copy()
    root = type(value).__module__.split(".")[0]
    if root == "torch":
        return value.detach().clone()
    if root in ("jax", "jaxlib", "tensorflow"):
        return value     # immutable
    if type(value) in (list, tuple):
        return type(value)(copied(v) for v in value)
    if type(value) is dict:
        return {k: copied(v) for k, v in value.items()}
    return copy.deepcopy(value)


def run_original(df: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Original:
    """``df.fn`` on copies of the arguments (warnings silenced: the generated code has just
    shown them). When it cannot run on these inputs (a NumPy function given torch tensors on
    a GPU), once more on NumPy copies of them."""
    try:
        a, k = copied(args), copied(kwargs)
    except Exception as e:
        return Original(why_not=f"not checked: the arguments cannot be copied ({e})")
    try:
        return Original(call_quietly(df.fn, a, k), True)
    except Exception as first:
        failure = f"{type(first).__name__}: {first}"
    try:
        a = tuple(_numpy_like(v, to_float64_numpy) for v in args)
        k = {n: _numpy_like(v, to_float64_numpy) for n, v in kwargs.items()}
        return Original(call_quietly(df.fn, a, k), True)
    except Exception:
        return Original(why_not=f"not checked: {getattr(df.fn, '__qualname__', 'the function')} "
                                f"does not run on these inputs ({failure[:200]})")


def _numpy_like(value: Any, to_numpy: Any) -> Any:
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_numpy_like(v, to_numpy) for v in value)
    if hasattr(value, "shape"):
        dtype = getattr(value, "dtype", None)
        out = np.array(to_numpy(value))
        name = str(dtype).rpartition(".")[2] if dtype is not None else ""
        return out.astype(np.float32) if name == "float32" else out
    return copy.deepcopy(value)


def call_quietly(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` with warnings silenced (the generated code has shown them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)
