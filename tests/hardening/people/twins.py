"""Twins of a program that its framework's autodiff can follow through ``math`` and ``float``.

``math.acos(v[1])`` or ``float(t)`` of a traced value stops JAX's and TensorFlow's autodiff (and
torch's follows it as a constant), so the oracle has no autodiff answer for such a program. A
NaN in gradlab's result there (0 * inf past ``sqrt(0)``) cannot be told from a wrong answer.
The twin runs the same code with ``math`` bound to the framework's own functions and ``float``
to the identity on arrays, which is how gradlab reads both (``float(v)`` carries v's gradient):
its autodiff says where the convention gives NaN. Used only to judge NaNs and near misses,
never as the reference value itself.
"""
from __future__ import annotations

import builtins
import copy
import math
import types
from typing import Any

#: ``math`` names whose NumPy-style spelling differs.
_NUMPY_NAMES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "atan2": "arctan2",
                "acosh": "arccosh", "asinh": "arcsinh", "atanh": "arctanh", "fabs": "abs",
                "pow": "power"}


def _array_module(dialect: str) -> tuple[Any, ...]:
    """Where the dialect's functions are found, in order."""
    if dialect == "autograd":
        import autograd.numpy as anp
        import autograd.scipy.special as special
        return anp, special
    if dialect == "jax":
        import jax.numpy as jnp
        import jax.scipy.special as special
        return jnp, special
    if dialect == "torch":
        import torch
        return (torch,)
    if dialect == "tensorflow":
        import tensorflow as tf
        return tf.experimental.numpy, tf.math
    return ()


class _Math(types.ModuleType):
    """``math`` whose functions of arrays are the framework's (numbers stay with ``math``)."""

    def __init__(self, modules: tuple[Any, ...]) -> None:
        super().__init__("math")
        self._modules = modules

    def __getattr__(self, name: str) -> Any:
        real = getattr(math, name)
        if not callable(real):
            return real
        for module in self._modules:
            for spelling in (_NUMPY_NAMES.get(name, name), name):
                fn = getattr(module, spelling, None)
                if callable(fn):
                    return _on_arrays(fn, real, name)
        return real


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") or type(value).__name__ == "ArrayBox"


def _on_arrays(fn: Any, real: Any, name: str) -> Any:
    def call(*args: Any) -> Any:
        like = next((a for a in args if _is_array(a)), None)
        if like is None:
            return real(*args)
        if name == "log" and len(args) == 2:
            return fn(args[0]) / real(args[1])
        if type(like).__module__.startswith("torch"):   # torch.arctan2 takes no number
            import torch
            args = tuple(a if _is_array(a) else torch.as_tensor(a, dtype=like.dtype)
                         for a in args)
        return fn(*args)
    return call


def _float(value: Any = 0.0) -> Any:
    """``float(v)``: v itself where it is an array (its gradient flows on, as gradlab reads
    it), a Python float otherwise."""
    if _is_array(value):
        return value
    return builtins.float(value)


def with_traceable_math(ref: Any, dialect: str | None = None,
                        names: dict[str, Any] | None = None) -> Any:
    """A copy of the reference whose program binds ``math`` and ``float`` as above (and any
    other ``names``), differentiated by ``dialect``'s autodiff (default: the program's)."""
    dialect = dialect or ref.dialect
    bound = {"math": _Math(_array_module(dialect)), "float": _float, **(names or {})}
    twin = copy.copy(ref)
    twin.f = types.FunctionType(ref.f.__code__, {**ref.f.__globals__, **bound},
                                ref.f.__name__, ref.f.__defaults__, ref.f.__closure__)
    twin.dialect = dialect
    twin._cache = {}
    return twin


def uses_untraceable(ref: Any) -> bool:
    """Whether the program reads ``math`` or ``float``, which a twin can trace."""
    return bool({"math", "float"} & set(ref.f.__code__.co_names))
