"""Light algebra on instantiated templates: ``x ** 1`` -> ``x``, ``1.0 * e`` -> ``e``,
``2 - 1`` -> ``1``, ``gl.log(2.0)`` -> ``0.693...``, ``gl.sum(0.0)`` -> ``0.0``; keeps generated
lines as short as the maths."""
from __future__ import annotations

import math
from typing import Any, Callable

import gast

from ...tensor.spec import TABLE
from ..primitives import signature


def constant(value: Any) -> gast.expr:
    return gast.Constant(value=value, kind=None)


def fold(expr: gast.expr) -> gast.expr:
    """``expr`` with its literal arithmetic done and its neutral terms dropped."""
    return _Folder().visit(expr)


def literal_value(node: gast.AST) -> Any:
    """A number, or a tuple of numbers (``axes`` written ``(1, 0)``), written literally."""
    if isinstance(node, (gast.Tuple, gast.List)):
        items = [literal_value(e) for e in node.elts]
        return tuple(items) if all(i is not None for i in items) else None
    return number(node)


def number(node: gast.AST) -> Any:
    """A number written literally (``-2.0`` too, and infinity as normalize writes it,
    ``float('inf')``), else None."""
    if isinstance(node, gast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
            node.value, bool):
        return node.value
    if is_infinity(node):
        return math.inf
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and (
            isinstance(node.operand, gast.Constant)
            and isinstance(node.operand.value, (int, float)) or is_infinity(node.operand)):
        return -number(node.operand)
    return None


def is_infinity(node: gast.AST) -> bool:
    """``float('inf')``, as normalize writes an option that is infinity."""
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == "float" and len(node.args) == 1 and not node.keywords
            and isinstance(node.args[0], gast.Constant) and node.args[0].value == "inf")


#: Functions linear in the arguments at these positions: a zero there makes the result zero.
LINEAR: dict[str, tuple[int, ...]] = {p.name: p.linear for p in TABLE if p.linear}

_MATH: dict[str, Callable[[Any], Any]] = {"log": math.log, "exp": math.exp, "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos,
         "tan": math.tan, "tanh": math.tanh, "log1p": math.log1p, "expm1": math.expm1,
         "log2": math.log2, "log10": math.log10, "sinh": math.sinh, "cosh": math.cosh, "abs": abs,
         "or_one": lambda v: v if v != 0 else 1.0}

_ARITH = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
          gast.Mult: lambda a, b: a * b, gast.Div: lambda a, b: a / b,
          gast.Pow: lambda a, b: a ** b}


class _Folder(gast.NodeTransformer):
    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        a, b = number(node.left), number(node.right)
        op = node.op
        if a is not None and b is not None and type(op) in _ARITH:
            try:
                value = _ARITH[type(op)](a, b)
            except Exception:
                return node
            if isinstance(value, complex):
                return node
            return constant(value) if value >= 0 else gast.UnaryOp(gast.USub(), constant(-value))
        if isinstance(op, gast.Mult) and (a == 0 or b == 0):
            return constant(0.0)
        if isinstance(op, gast.Div) and a == 0:
            return constant(0.0)
        if isinstance(op, gast.Sub) and a == 0 and b is None:
            return gast.UnaryOp(gast.USub(), node.right)
        if isinstance(op, gast.Pow) and b == 1:
            return node.left
        if isinstance(op, gast.Mult):
            if a == 1:
                return node.right
            if b == 1:
                return node.left
        if isinstance(op, gast.Div) and b == 1:
            return node.left
        if isinstance(op, gast.Add):
            if a == 0:
                return node.right
            if b == 0:
                return node.left
        if isinstance(op, gast.Sub) and b == 0:
            return node.left
        return node

    def visit_Call(self, node: gast.Call) -> gast.expr:
        """``gl.log(2.0)`` -> ``0.693...``: a framework function cannot take a bare number;
        ``gl.sum(0.0)`` -> ``0.0``: a linear function of a zero tangent is zero."""
        self.generic_visit(node)
        _drop_default_keywords(node)
        if isinstance(node.func, gast.Attribute) and node.func.attr in LINEAR:
            slots = LINEAR[node.func.attr]
            if any(i < len(node.args) and number(node.args[i]) == 0 for i in slots):
                return constant(0.0)
        if (isinstance(node.func, gast.Attribute) and node.func.attr in _MATH
                and len(node.args) == 1 and not node.keywords and number(node.args[0]) is not None):
            fold = _MATH[node.func.attr]
            try:
                value = fold(number(node.args[0]))
            except (ValueError, OverflowError):
                return node
            return constant(value) if value >= 0 else gast.UnaryOp(gast.USub(), constant(-value))
        return node

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.expr:
        self.generic_visit(node)
        if (isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp)
                and isinstance(node.operand.op, gast.USub)):
            return node.operand.operand
        return node


def _drop_default_keywords(node: gast.Call) -> None:
    """``gl.sum(x, axis=None, keepdims=False)`` reads better as ``gl.sum(x)``."""
    if not (isinstance(node.func, gast.Attribute) and isinstance(node.func.value, gast.Name)
            and node.func.value.id == "gl" and node.keywords):
        return
    params = signature(node.func.attr).parameters
    kept = []
    for kw in node.keywords:
        param = params.get(kw.arg or "")
        if (param is not None and isinstance(kw.value, gast.Constant)
                and param.default is not param.empty and type(kw.value.value) is type(
                    param.default) and kw.value.value == param.default):
            continue
        kept.append(kw)
    node.keywords = kept
