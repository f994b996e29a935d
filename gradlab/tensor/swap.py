"""A function run against another module: ``f``'s ``np`` pointed at ``autograd.numpy`` (the
NumPy backend's reference gradient) or at ``jax.numpy`` (the tests' references).

A module of its own so that the NumPy backend can use it without importing
:mod:`.autodiff`, which asks the registry, which loads the backends (an import cycle).
"""
from __future__ import annotations

import types
from typing import Any, Callable


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
