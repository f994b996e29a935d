"""The gradient of a Python list or tuple: a list whose ``+`` adds item by item.

Generated code adds gradients with ``+`` and ``+=``, as a person writes it: ``dW = dW + dW_2``,
``dparams[0] += dparams_0``. For arrays that is the sum; for Python lists it would join them
(``[dW1, db1] + [dW2, db2]`` is four arrays, and ``+=`` extends in place), and the gradient of
a list of ``(W, b)`` pairs, or of a list passed to two functions (a loss and its
regularizer), would come back with twice its items. The gradient code cannot tell from the
text whether a value is a list (an argument may be either), so the gradients of lists say it
themselves: every helper that makes one (``gl.zeros_like`` of a list, ``gl.index_add`` into
one, ...) makes a :class:`GradList`, whose ``+`` and ``+=`` mean "add the gradients". gradlab
hands plain lists back to the caller (``gradlab.api.conform_gradients``).
"""
from __future__ import annotations

import sys
from typing import Any

from ..errors import GradlabError


class GradList(list):  # type: ignore[type-arg]
    """A list of gradients, one per item of the list (or tuple) it is the gradient of; adding
    another gradient of the same list adds item by item. Adding the number 0 (a gradient not
    yet reached, written ``0.0``) leaves it as it is."""

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        if isinstance(other, (list, tuple)):
            return GradList(added(a, b) for a, b in zip(self, _same_length(self, other)))
        if _is_zero(other):
            return GradList(self)
        if _is_array(other):        # rows of an array read as a list (*rest = x)
            return _stacked(self, other) + other
        return NotImplemented

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, (list, tuple)):
            return GradList(added(a, b) for a, b in zip(_same_length(self, other), self))
        if _is_zero(other):
            return GradList(self)
        if _is_array(other):
            return other + _stacked(self, other)
        return NotImplemented

    def __iadd__(self, other: Any) -> Any:  # type: ignore[override,misc]
        if isinstance(other, (list, tuple)):
            for i, b in enumerate(_same_length(self, other)):
                self[i] = added(self[i], b)
            return self
        if _is_zero(other):
            return self
        return NotImplemented

    def __getitem__(self, index: Any) -> Any:
        """A slice of a list's gradient is the gradient of the slice (``dxs[1:] = dxs[1:] +
        dpart`` adds item by item)."""
        item = list.__getitem__(self, index)
        return GradList(item) if isinstance(index, slice) else item

    def __neg__(self) -> GradList:
        return GradList(-GradList(a) if isinstance(a, (list, tuple)) else -a for a in self)

    def __sub__(self, other: Any) -> Any:
        if isinstance(other, (list, tuple)):
            return self + -GradList(other)
        return GradList(self) if _is_zero(other) else NotImplemented

    def __mul__(self, other: Any) -> Any:
        """A list's ``*`` repeats it: a gradient multiplied so is the adjoint of a list
        repeated (``vs * 2`` in a function gradlab read as arithmetic), which has no meaning
        item by item."""
        raise GradlabError("a Python list repeated with * (vs * 2) is not differentiated: "
                           "build the longer list item by item, or stack the list first "
                           "(np.stack(vs)) for arithmetic")

    __rmul__ = __mul__
    __imul__ = __mul__  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GradList({list.__repr__(self)})"


def added(a: Any, b: Any) -> Any:
    """``a + b`` of two gradients, item by item where both are lists or tuples."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return GradList(added(u, v) for u, v in zip(a, _same_length(a, b)))
    return a + b


def _same_length(a: Any, b: Any) -> Any:
    """``b``, where it has ``a``'s length: gradients of one list do (lists joined or cut in
    code gradlab read as arithmetic would not: refused, not added up to the shorter)."""
    if len(a) != len(b):
        raise GradlabError(f"gradients of lists of {len(a)} and {len(b)} items met: a list "
                           f"was joined, repeated or cut in a way gradlab does not "
                           f"differentiate; build the new list item by item")
    return b


def _is_zero(x: Any) -> bool:
    return (type(x) is float or type(x) is int) and x == 0


def _is_array(x: Any) -> bool:
    return not isinstance(x, (list, tuple)) and hasattr(x, "shape") and hasattr(x, "dtype")


#: The namespace whose ``stack`` makes an array of a framework's rows, by the array type's
#: root module (already imported: the rows are its arrays).
_STACKS = {"torch": "torch", "jax": "jax.numpy", "jaxlib": "jax.numpy",
           "tensorflow": "tensorflow"}


def _stacked(rows: GradList, like: Any) -> Any:
    """The gradients of an array's rows, read as a list (``first, *rest = x``), as one array
    of ``like``'s framework, to be added to the array's gradient. (The tensor layer's
    namespaces import this module: the framework's own stack is looked up, not imported.)"""
    root = type(like).__module__.split(".")[0]
    return sys.modules[_STACKS.get(root, "numpy")].stack(list(rows))
