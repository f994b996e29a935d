"""Gradients through each framework's *own* autodiff: the reference gradlab checks itself against.

``f`` takes raw values and returns a raw scalar. Each backend object says how its framework
differentiates (:meth:`Backend.value_and_grad`); NumPy has no autodiff of its own, so NumPy values
go through HIPS autograd when it is installed (:func:`.swap.with_module_swapped`).
"""
from __future__ import annotations

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
