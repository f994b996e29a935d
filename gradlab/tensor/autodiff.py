"""Gradients through each framework's *own* autodiff: the reference gradlab checks itself against.

``f`` takes raw values and returns a raw scalar. NumPy has no autodiff of its own, so NumPy values
go through HIPS autograd when it is installed: ``f``'s references to the ``numpy`` module are
pointed at ``autograd.numpy`` for the duration of the call.
"""
from __future__ import annotations

import types
from typing import Any, Callable

from ..errors import GradlabError
from .detect import common_framework


def value_and_grad(f: Callable[..., Any], *args: Any, wrt: int | tuple[int, ...] = 0
                   ) -> tuple[Any, Any]:
    """``(f(*args), df/dargs[wrt])`` by the inputs' framework; ``wrt`` a tuple gives a tuple."""
    many = isinstance(wrt, tuple)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    fw = common_framework(args)
    if fw == "torch":
        value, grads = _torch(f, args, indices)
    elif fw == "tensorflow":
        value, grads = _tensorflow(f, args, indices)
    elif fw == "jax":
        import jax
        value, grads = jax.value_and_grad(f, argnums=indices)(*args)
    else:
        value, grads = _autograd(f, args, indices)
    return value, (tuple(grads) if many else grads[0])


def _torch(f: Callable[..., Any], args: tuple[Any, ...], indices: tuple[int, ...]
           ) -> tuple[Any, tuple[Any, ...]]:
    import torch
    args_ = list(args)
    for i in indices:
        args_[i] = args[i].detach().clone().requires_grad_(True)
    with torch.enable_grad():
        value = f(*args_)
        grads = torch.autograd.grad(value, [args_[i] for i in indices], allow_unused=True)
    grads = tuple(torch.zeros_like(args[i]) if g is None else g for i, g in zip(indices, grads))
    return value.detach(), grads


def _tensorflow(f: Callable[..., Any], args: tuple[Any, ...], indices: tuple[int, ...]
                ) -> tuple[Any, tuple[Any, ...]]:
    import tensorflow as tf
    with tf.GradientTape() as tape:
        for i in indices:
            tape.watch(args[i])
        value = f(*args)
    grads = tape.gradient(value, [args[i] for i in indices],
                          unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return value, tuple(grads)


def _autograd(f: Callable[..., Any], args: tuple[Any, ...], indices: tuple[int, ...]
              ) -> tuple[Any, tuple[Any, ...]]:
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        raise GradlabError("NumPy has no autodiff of its own; install HIPS autograd "
                           "(`pip install autograd`) for reference gradients") from None
    traced = with_module_swapped(f, "numpy", anp)
    return autograd.value_and_grad(traced, indices)(*args)  # type: ignore[no-any-return]


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
