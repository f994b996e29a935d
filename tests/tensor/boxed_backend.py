"""A fifth backend made for the tests: NumPy arrays in a box of another type.

It proves that a backend is one file plus one registration line, nothing else: its values are
:class:`Boxed` (not ndarrays, and NumPy does not look inside them), its primitives are NumPy's
own functions with the boxes taken off the arguments and put on the results, and everything
else (the generic formulas, the adjoint helpers, detection, conversion, the default seed, the
reference gradients) comes from gradlab's backend machinery. tests/tensor/test_registry.py
registers it with one line.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from gradlab.tensor.backends import numpy_backend
from gradlab.tensor.backends.base import Backend
from gradlab.tensor.spec import SIGNATURES


class Boxed:
    """A NumPy array in a box: arithmetic works on it, NumPy's functions do not."""

    __slots__ = ("array",)
    __array_ufunc__ = None      # NumPy defers to our reflected operators, and never unboxes

    def __init__(self, array: Any) -> None:
        self.array = np.asarray(array)

    def __repr__(self) -> str:
        return f"Boxed({self.array!r})"

    dtype = property(lambda self: self.array.dtype)
    shape = property(lambda self: self.array.shape)
    ndim = property(lambda self: self.array.ndim)
    size = property(lambda self: self.array.size)

    def __len__(self) -> int:
        return len(self.array)

    def __iter__(self) -> Any:
        return (box(row) for row in self.array)

    def __getitem__(self, index: Any) -> Any:
        return box(self.array[unbox(index)])

    def __bool__(self) -> bool:
        return bool(self.array)

    def __float__(self) -> float:
        return float(self.array)

    def __int__(self) -> int:
        return int(self.array)

    def item(self) -> Any:
        return self.array.item()

    def __neg__(self) -> Boxed:
        return Boxed(-self.array)

    def __pos__(self) -> Boxed:
        return self

    def __abs__(self) -> Boxed:
        return Boxed(abs(self.array))


def _binary(fn: Callable[[Any, Any], Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def forward(self: Boxed, other: Any) -> Any:
        return box(fn(self.array, unbox(other)))

    def reflected(self: Boxed, other: Any) -> Any:
        return box(fn(unbox(other), self.array))
    return forward, reflected


for _name, _fn in dict(add=operator.add, sub=operator.sub, mul=operator.mul,
                       truediv=operator.truediv, floordiv=operator.floordiv, mod=operator.mod,
                       pow=operator.pow, matmul=operator.matmul).items():
    _forward, _reflected = _binary(_fn)
    setattr(Boxed, f"__{_name}__", _forward)
    setattr(Boxed, f"__r{_name}__", _reflected)
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Boxed, f"__{_name}__", _binary(getattr(operator, _name))[0])


def box(value: Any) -> Any:
    """NumPy arrays and scalars boxed, inside lists and tuples too."""
    if isinstance(value, (np.ndarray, np.generic)):
        return Boxed(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):      # slogdet's named tuple
        return type(value)(*(box(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(box(v) for v in value)
    return value


def unbox(value: Any) -> Any:
    if isinstance(value, Boxed):
        return value.array
    if isinstance(value, (list, tuple)):
        return type(value)(unbox(v) for v in value)
    return value


def boxed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` on the arrays inside the boxes, its results boxed."""
    def op(*args: Any, **kwargs: Any) -> Any:
        return box(fn(*unbox(args), **{k: unbox(v) for k, v in kwargs.items()}))
    op.__name__ = getattr(fn, "__name__", "op")
    return op


#: NumPy's own primitives (not the formulas and helpers gradlab adds to every namespace: this
#: backend gets those from the templates, like a real one), on boxes
PRIMITIVES = {name: boxed(getattr(numpy_backend, name)) for name in SIGNATURES
              if name in vars(numpy_backend)}
PRIMITIVES["to_numpy"] = unbox


class BoxedBackend(Backend):
    name, title, reference = "boxed", "Boxed", "HIPS autograd (unboxed)"
    wraps_python_numbers = True     # its functions box Python numbers, as torch's make tensors

    def primitives(self) -> dict[str, Any]:
        return {**super().primitives(), **PRIMITIVES}

    def to_numpy(self, x: Any) -> Any:
        return np.asarray(unbox(x))

    def from_numpy(self, array: Any) -> Any:
        return Boxed(array)

    def value_and_grad(self, f: Callable[..., Any], args: tuple[Any, ...],
                       indices: tuple[int, ...]) -> tuple[Any, tuple[Any, ...]]:
        value, grads = numpy_backend.BACKEND.value_and_grad(f, unbox(args), indices)
        return box(value), tuple(box(g) for g in grads)


BACKEND = BoxedBackend()
