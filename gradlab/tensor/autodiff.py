"""Gradients through each framework's *own* autodiff: the reference gradlab checks itself against.

``f`` takes raw values and returns a raw scalar. Each backend object says how its framework
differentiates (:meth:`Backend.value_and_grad`); NumPy has no autodiff of its own, so NumPy values
go through HIPS autograd when it is installed, with :func:`with_module_swapped`.
"""
from __future__ import annotations

import types
from typing import Any, Callable

from .detect import common_framework
from .registry import get


def value_and_grad(f: Callable[..., Any], *args: Any, wrt: int | tuple[int, ...] = 0
                   ) -> tuple[Any, Any]:
    """``(f(*args), df/dargs[wrt])`` by the inputs' framework; ``wrt`` a tuple gives a tuple."""
    many = isinstance(wrt, tuple)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    value, grads = get(common_framework(args)).value_and_grad(f, args, indices)
    return value, (tuple(grads) if many else grads[0])


def with_module_swapped(f: Callable[..., Any], module_name: str, replacement: Any
                        ) -> Callable[..., Any]:
    """A copy of ``f`` whose global names bound to module ``module_name`` (``np``, ``numpy``)
    refer to ``replacement`` instead; other functions are left alone."""
    if not isinstance(f, types.FunctionType):
        return f
    glb = dict(f.__globals__)
    for name, value in f.__globals__.items():
        if isinstance(value, types.ModuleType) and value.__name__ == module_name:
            glb[name] = replacement
    g = types.FunctionType(f.__code__, glb, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    return g
