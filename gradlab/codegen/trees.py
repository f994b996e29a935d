"""Walking and copying gast trees, fast.

The transform walks and copies small trees thousands of times per function (every rule
template is copied where it is used; the optimizer indexes every name). ``ast.walk`` and
``copy.deepcopy`` are general and slow; these two know the shape of a node (its ``_fields``
and attribute dictionary) and take a half and a third of the time. ``walk`` visits nodes in
the order ``ast.walk`` does, so results that depend on the order are unchanged.
"""
from __future__ import annotations

import ast
import copy
from collections import deque
from typing import Any, Iterator, TypeVar

import gast

_AST = ast.AST
T = TypeVar("T")


def walk(node: Any) -> Iterator[Any]:
    """Every node under ``node`` (itself first), breadth first like ``ast.walk``."""
    todo: deque[Any] = deque((node,))
    pop, push, extend = todo.popleft, todo.append, todo.extend
    while todo:
        n = pop()
        for field in n._fields:
            value = getattr(n, field, None)
            if value.__class__ is list:
                extend([c for c in value if isinstance(c, _AST)])
            elif isinstance(value, _AST):
                push(value)
        yield n


def clone(node: T) -> T:
    """A deep copy of a tree (or a list of trees): new nodes, the same leaf values
    (identifiers, constants), which are immutable. Anything else goes to ``copy.deepcopy``."""
    if not isinstance(node, _AST):
        if node.__class__ is not list:
            return copy.deepcopy(node)
        return [clone(c) if isinstance(c, _AST) else c for c in node]  # type: ignore[attr-defined, return-value]
    cls = node.__class__
    new = cls.__new__(cls)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if isinstance(value, _AST):
            value = clone(value)
        elif value.__class__ is list:
            value = [clone(c) if isinstance(c, _AST) else c for c in value]
        fields[key] = value
    return new


def outside_inner_loops(node: gast.AST) -> list[gast.AST]:
    """``node`` and what it holds, except the bodies of inner loops and functions (where a
    ``break`` or ``return`` belongs to them, not to the loop being read)."""
    out = [node]
    if isinstance(node, (gast.For, gast.While, gast.FunctionDef, gast.Lambda)):
        return out
    for child in gast.iter_child_nodes(node):
        out.extend(outside_inner_loops(child))
    return out
